/*
 * clSetEventCallback. A callback gets its event from the driver, and may
 * use it (read its status, its profiling times) even when the program
 * released the event right after setting the callback: the driver holds
 * it for the callback's duration. The registry dropped the event at that
 * release, so while a callback runs, its thread answers for its event:
 * checks of that handle pass (ltcl_event_in_callback).
 *
 * Nothing is kept alive in the registry meanwhile: drivers differ in how
 * long they hold such an event (pocl frees a released user event whose
 * status was never set, its callbacks with it), and a registry entry
 * outliving the driver's object would make reports query freed memory.
 */
#include <pthread.h>
#include <stdlib.h>

#include "entry_points.h"

/* Each callback goes to the driver as a trampoline with a record of the
 * program's function and data. Records wait in a list until their
 * callback runs: a callback that never runs (its event freed first, see
 * above) leaves its record reachable, not leaked. */
typedef struct pending_callback {
    void(CL_CALLBACK *notify)(cl_event, cl_int, void *);
    void *user_data;
    struct pending_callback *previous, *next;
} pending_callback;

static pending_callback pending_list = {NULL, NULL, &pending_list, &pending_list};
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pending_lock_forks = PTHREAD_ONCE_INIT;

/* A child forked while another thread was (un)listing a callback would
 * inherit the lock held by a thread it does not have, and hang at its
 * first clSetEventCallback: fork() waits for the list to be whole. */
static void lock_pending(void) { pthread_mutex_lock(&pending_lock); }
static void unlock_pending(void) { pthread_mutex_unlock(&pending_lock); }
static void watch_forks(void) { pthread_atfork(lock_pending, unlock_pending, unlock_pending); }

static void list_pending(pending_callback *pending)
{
    pthread_once(&pending_lock_forks, watch_forks); /* before the first lock, so none is missed */
    pthread_mutex_lock(&pending_lock);
    pending->next = &pending_list;
    pending->previous = pending_list.previous;
    pending_list.previous->next = pending;
    pending_list.previous = pending;
    pthread_mutex_unlock(&pending_lock);
}

static void unlist_pending(pending_callback *pending)
{
    pthread_mutex_lock(&pending_lock);
    pending->previous->next = pending->next;
    pending->next->previous = pending->previous;
    pthread_mutex_unlock(&pending_lock);
}

/* The event whose callback this thread is running, if any (a callback may
 * set a user event's status and so run another one inside it). */
static _Thread_local cl_event event_in_callback;

int ltcl_event_in_callback(const void *handle) { return handle && handle == (const void *)event_in_callback; }

static void CL_CALLBACK run_pending_callback(cl_event event, cl_int status, void *data)
{
    pending_callback *pending = data;
    cl_event outer = event_in_callback;
    event_in_callback = event;
    pending->notify(event, status, pending->user_data);
    event_in_callback = outer;
    unlist_pending(pending);
    free(pending);
}

cl_int CL_API_CALL clSetEventCallback_wrap(cl_event event, cl_int command_exec_callback_type,
                                           void(CL_CALLBACK *pfn_notify)(cl_event, cl_int, void *), void *user_data)
{
    /* A NULL callback is the driver's error to give. Without memory for
     * the record the callback goes to the driver as it is: it then runs
     * unmarked, which only costs diagnostics inside it. */
    pending_callback *pending = pfn_notify ? malloc(sizeof *pending) : NULL;
    if (!pending)
        return ltcl_next->clSetEventCallback(event, command_exec_callback_type, pfn_notify, user_data);
    pending->notify = pfn_notify;
    pending->user_data = user_data;
    list_pending(pending);
    cl_int result = ltcl_next->clSetEventCallback(event, command_exec_callback_type, run_pending_callback, pending);
    if (result != CL_SUCCESS) {
        unlist_pending(pending);
        free(pending);
    }
    return result;
}
