/*
 * clSetEventCallback. The driver keeps an event until the callbacks set
 * on it have run, so a program may release its event right after setting
 * a callback and still use the event inside the callback (read its
 * status, its profiling times). The registry sees the same: each pending
 * callback keeps the event alive (livetrack_keep_alive), as a child would,
 * until it has run.
 */
#include <stdlib.h>

#include "entry_points.h"

typedef struct pending_callback {
    void(CL_CALLBACK *notify)(cl_event, cl_int, void *);
    void *user_data;
    livetrack_keeper *keeper;
} pending_callback;

static void CL_CALLBACK run_pending_callback(cl_event event, cl_int status, void *data)
{
    pending_callback *pending = data;
    pending->notify(event, status, pending->user_data);
    livetrack_let_go(pending->keeper);
    free(pending);
}

cl_int CL_API_CALL clSetEventCallback_wrap(cl_event event, cl_int command_exec_callback_type,
                                           void(CL_CALLBACK *pfn_notify)(cl_event, cl_int, void *), void *user_data)
{
    /* Untracked events and a NULL callback (the driver's error to give)
     * go through as they are. */
    livetrack_keeper *keeper = pfn_notify ? livetrack_keep_alive(LIVETRACK_DOMAIN_OPENCL, ltcl_key(event)) : NULL;
    pending_callback *pending = keeper ? malloc(sizeof *pending) : NULL;
    if (!pending) {
        livetrack_let_go(keeper);
        return ltcl_next->clSetEventCallback(event, command_exec_callback_type, pfn_notify, user_data);
    }
    *pending = (pending_callback){pfn_notify, user_data, keeper};
    cl_int result = ltcl_next->clSetEventCallback(event, command_exec_callback_type, run_pending_callback, pending);
    if (result != CL_SUCCESS) {
        livetrack_let_go(keeper);
        free(pending);
    }
    return result;
}
