/*
 * The callbacks a driver runs with an object of its own: clSetEventCallback
 * (the event) and clEnqueueSVMFree's free function (the queue). The
 * callback may use that object, and its context, even when the program
 * released them right after setting the callback: the driver holds them
 * for the callback's duration (a queue lives until its commands finish,
 * the free is its command, and an event holds its context). The registry
 * dropped them at the program's release, so while a callback runs, its
 * thread answers for them: checks of those handles pass, and a retain
 * there tracks the object again (ltcl_held_for_callback).
 *
 * Nothing is kept alive in the registry meanwhile: drivers differ in how
 * long they hold such an object (pocl frees a released user event whose
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
    void(CL_CALLBACK *event_notify)(cl_event, cl_int, void *); /* or: */
    ltcl_svm_free_fn svm_free;
    void *user_data;
    struct pending_callback *previous, *next;
} pending_callback;

static pending_callback pending_list = {NULL, NULL, NULL, &pending_list, &pending_list};
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

/* A record for the program's callback, listed; NULL without memory, and
 * the callback then goes to the driver as it is: it runs unmarked, which
 * only costs diagnostics inside it. */
static pending_callback *new_pending(void *user_data)
{
    pending_callback *pending = calloc(1, sizeof *pending);
    if (pending) {
        pending->user_data = user_data;
        list_pending(pending);
    }
    return pending;
}

static void drop_pending(pending_callback *pending)
{
    unlist_pending(pending);
    free(pending);
}

/* What the callbacks this thread is running were handed: a callback may
 * set a user event's status or free SVM memory, and so run another one
 * inside it, which saves and restores these. */
typedef struct held_objects {
    cl_event event;
    cl_command_queue queue;
} held_objects;
static _Thread_local held_objects held;

int ltcl_event_in_callback(const void *handle) { return handle && handle == (const void *)held.event; }

_Thread_local unsigned ltcl_callbacks_running;

/* The context of the held event or queue, as the driver says. */
static int held_context_is(const void *context)
{
    cl_context of_event = NULL, of_queue = NULL;
    if (held.event &&
        ltcl_next->clGetEventInfo(held.event, CL_EVENT_CONTEXT, sizeof of_event, &of_event, NULL) != CL_SUCCESS)
        of_event = NULL;
    if (held.queue &&
        ltcl_next->clGetCommandQueueInfo(held.queue, CL_QUEUE_CONTEXT, sizeof of_queue, &of_queue, NULL) != CL_SUCCESS)
        of_queue = NULL;
    return (of_event && context == (const void *)of_event) || (of_queue && context == (const void *)of_queue);
}

int ltcl_held_for_callback(ltcl_type type, const void *handle)
{
    if (!handle)
        return 0;
    switch (type) {
    case LTCL_EVENT:
        return handle == (const void *)held.event;
    case LTCL_QUEUE:
        return handle == (const void *)held.queue;
    case LTCL_CONTEXT:
        return (held.event || held.queue) && held_context_is(handle);
    default:
        return 0;
    }
}

static void CL_CALLBACK run_event_callback(cl_event event, cl_int status, void *data)
{
    pending_callback *pending = data;
    cl_event outer = held.event;
    held.event = event;
    ltcl_callbacks_running++;
    pending->event_notify(event, status, pending->user_data);
    ltcl_callbacks_running--;
    held.event = outer;
    drop_pending(pending);
}

cl_int CL_API_CALL clSetEventCallback_wrap(cl_event event, cl_int command_exec_callback_type,
                                           void(CL_CALLBACK *pfn_notify)(cl_event, cl_int, void *), void *user_data)
{
    /* A NULL callback is the driver's error to give. */
    pending_callback *pending = pfn_notify ? new_pending(user_data) : NULL;
    if (!pending)
        return ltcl_next->clSetEventCallback(event, command_exec_callback_type, pfn_notify, user_data);
    pending->event_notify = pfn_notify;
    cl_int result = ltcl_next->clSetEventCallback(event, command_exec_callback_type, run_event_callback, pending);
    if (result != CL_SUCCESS)
        drop_pending(pending);
    return result;
}

static void CL_CALLBACK run_svm_free(cl_command_queue queue, cl_uint count, void *pointers[], void *data)
{
    pending_callback *pending = data;
    cl_command_queue outer = held.queue;
    held.queue = queue;
    ltcl_callbacks_running++;
    pending->svm_free(queue, count, pointers, pending->user_data);
    ltcl_callbacks_running--;
    held.queue = outer;
    drop_pending(pending);
}

ltcl_svm_free_fn ltcl_svm_free_callback(ltcl_svm_free_fn free_fn, void *user_data, void **data)
{
    pending_callback *pending = free_fn ? new_pending(user_data) : NULL;
    if (!pending) {
        *data = user_data;
        return free_fn;
    }
    pending->svm_free = free_fn;
    *data = pending;
    return run_svm_free;
}

void ltcl_svm_free_callback_unused(ltcl_svm_free_fn given, void *data)
{
    if (given == run_svm_free)
        drop_pending(data);
}
