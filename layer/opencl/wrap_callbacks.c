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
#include <stdatomic.h>
#include <stdlib.h>

#include "entry_points.h"

/* Each callback goes to the driver as a trampoline with a record of the
 * program's function and data. Records wait in a list until their
 * callback runs: a callback that never runs (its event freed first, see
 * above) leaves its record reachable, not leaked.
 *
 * A program may set a callback on every command it enqueues, from many
 * threads, while the driver's thread runs them. So the list is striped:
 * threads take stripes in turn and list their records in their own, and
 * a callback drops its record from the stripe it came from. A setter
 * thus shares its stripe's lock with the callbacks of its own records
 * (and, past PENDING_STRIPES threads, with a few other threads), not
 * with every thread's. A dropped record is kept for its stripe's next
 * callback (up to SPARES_PER_STRIPE), so that setting one costs no
 * malloc and running it no free; spares stay reachable as well. */
typedef struct pending_callback {
    void(CL_CALLBACK *event_notify)(cl_event, cl_int, void *); /* or: */
    ltcl_svm_free_fn svm_free;
    void *user_data;
    struct pending_callback *previous, *next; /* a spare: next only */
    unsigned stripe;
} pending_callback;

enum { PENDING_STRIPES = 16, SPARES_PER_STRIPE = 64 };

typedef struct pending_stripe {
    pthread_mutex_t lock;
    pending_callback listed; /* the list's head: previous is its last */
    pending_callback *spares;
    unsigned spare_count;
} __attribute__((aligned(64))) pending_stripe;

static pending_stripe stripes[PENDING_STRIPES];
static pthread_once_t stripes_ready = PTHREAD_ONCE_INIT;
static atomic_uint stripes_taken;
static _Thread_local unsigned thread_stripe_plus_one; /* 0: this thread has none yet */

/* A child forked while another thread was (un)listing a callback would
 * inherit that stripe's lock held by a thread it does not have, and hang
 * at its first clSetEventCallback: fork() waits for every stripe to be
 * whole. No other code holds two stripe locks, so the order is free. */
static void lock_stripes(void)
{
    for (unsigned i = 0; i < PENDING_STRIPES; i++)
        pthread_mutex_lock(&stripes[i].lock);
}

static void unlock_stripes(void)
{
    for (unsigned i = PENDING_STRIPES; i-- > 0;)
        pthread_mutex_unlock(&stripes[i].lock);
}

/* Before the first lock, so that fork() misses none. */
static void make_stripes(void)
{
    for (unsigned i = 0; i < PENDING_STRIPES; i++) {
        pthread_mutex_init(&stripes[i].lock, NULL);
        stripes[i].listed.previous = stripes[i].listed.next = &stripes[i].listed;
    }
    pthread_atfork(lock_stripes, unlock_stripes, unlock_stripes);
}

static unsigned this_thread_stripe(void)
{
    if (!thread_stripe_plus_one) {
        pthread_once(&stripes_ready, make_stripes);
        thread_stripe_plus_one = atomic_fetch_add_explicit(&stripes_taken, 1, memory_order_relaxed) %
                                     PENDING_STRIPES + 1;
    }
    return thread_stripe_plus_one - 1;
}

/* Under the stripe's lock. */
static void link_pending(pending_stripe *stripe, pending_callback *pending)
{
    pending->next = &stripe->listed;
    pending->previous = stripe->listed.previous;
    stripe->listed.previous->next = pending;
    stripe->listed.previous = pending;
}

/* A record for the program's callback, listed; NULL without memory, and
 * the callback then goes to the driver as it is: it runs unmarked, which
 * only costs diagnostics inside it. */
static pending_callback *new_pending(void *user_data)
{
    unsigned index = this_thread_stripe();
    pending_stripe *stripe = &stripes[index];
    pthread_mutex_lock(&stripe->lock);
    pending_callback *pending = stripe->spares;
    if (pending) {
        stripe->spares = pending->next;
        stripe->spare_count--;
        link_pending(stripe, pending);
    }
    pthread_mutex_unlock(&stripe->lock);
    if (!pending) { /* malloc outside the lock, which the driver's thread may be waiting for */
        pending = malloc(sizeof *pending);
        if (!pending)
            return NULL;
        pthread_mutex_lock(&stripe->lock);
        link_pending(stripe, pending);
        pthread_mutex_unlock(&stripe->lock);
    }
    /* Only this thread uses the fields until the driver has the record. */
    pending->event_notify = NULL;
    pending->svm_free = NULL;
    pending->user_data = user_data;
    pending->stripe = index;
    return pending;
}

/* On whichever thread the callback ran: the record goes back to its own stripe. */
static void drop_pending(pending_callback *pending)
{
    pending_stripe *stripe = &stripes[pending->stripe];
    pending_callback *to_free = NULL;
    pthread_mutex_lock(&stripe->lock);
    pending->previous->next = pending->next;
    pending->next->previous = pending->previous;
    if (stripe->spare_count < SPARES_PER_STRIPE) {
        pending->next = stripe->spares;
        stripe->spares = pending;
        stripe->spare_count++;
    } else {
        to_free = pending;
    }
    pthread_mutex_unlock(&stripe->lock);
    free(to_free);
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
