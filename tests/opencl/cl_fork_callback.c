/*
 * fork() while another thread is inside clSetEventCallback, in the layer's
 * list of pending callbacks (wrap_callbacks.c). The child must not
 * inherit that list's lock held: its own clSetEventCallback would wait
 * for a thread it does not have.
 *
 * The window is a few instructions wide, so the test holds it open
 * (mutex_holder.h): the first mutex the layer takes in the thread's
 * clSetEventCallback is kept for 600 ms, and the main thread forks then.
 * With the layer's fork handler, fork() waits for the list; without it
 * the child hangs and its alarm kills it.
 *
 * Before it forks, the main thread sets a callback of its own while that
 * mutex is held: the list is striped by thread, so it must not wait for
 * the other thread's stripe (a program setting a callback per command
 * from several threads would otherwise queue on one lock). And since the
 * child's main thread lists in a stripe of its own, the child sets
 * callbacks from a series of new threads as well: threads take stripes in
 * turn, so one of them lands on the stripe that was held at the fork.
 */
#include <pthread.h>
#include <time.h>

#include "cl_test_util.h"
#include "mutex_holder.h"

static cl_event user_event;
static atomic_int callbacks_run;

static void CL_CALLBACK count_callback(cl_event event, cl_int status, void *data)
{
    (void)event, (void)status, (void)data;
    atomic_fetch_add(&callbacks_run, 1);
}

static void *set_callback(void *unused)
{
    (void)unused;
    CT_OK(clSetEventCallback(user_event, CL_COMPLETE, count_callback, NULL));
    return NULL;
}

/* In the child: its status, or 0. */
static void *set_callback_in_child(void *status)
{
    *(cl_int *)status = clSetEventCallback(user_event, CL_COMPLETE, count_callback, NULL);
    return NULL;
}

enum { CHILD_THREADS = 64 }; /* several times the layer's stripes */

int main(void)
{
    ct_env env;
    ct_setup(&env);
    cl_int err = CL_SUCCESS;
    user_event = clCreateUserEvent(env.context, &err);
    CT_NEED(user_event, err);

    enum { HOLD_MS = 600 };
    mutex_holder_arm("liblivetrack_cl", HOLD_MS);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, set_callback, NULL) == 0);
    CHECK(mutex_holder_wait(10000)); /* else the test does not reach what it tests */

    struct timespec before, after;
    clock_gettime(CLOCK_MONOTONIC, &before);
    CT_OK(clSetEventCallback(user_event, CL_COMPLETE, count_callback, NULL));
    clock_gettime(CLOCK_MONOTONIC, &after);
    long waited_ms = (after.tv_sec - before.tv_sec) * 1000 + (after.tv_nsec - before.tv_nsec) / 1000000;
    if (waited_ms >= HOLD_MS / 2)
        fprintf(stderr, "the main thread's clSetEventCallback waited %ld ms for the other thread's lock\n", waited_ms);
    CHECK(waited_ms < HOLD_MS / 2);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        alarm(5); /* an inherited held lock: a call below never returns */
        cl_int status = clSetEventCallback(user_event, CL_COMPLETE, count_callback, NULL);
        for (int t = 0; t < CHILD_THREADS && status == CL_SUCCESS; t++) {
            pthread_t child_thread;
            if (pthread_create(&child_thread, NULL, set_callback_in_child, &status) != 0)
                _exit(4);
            pthread_join(child_thread, NULL);
        }
        _exit(status == CL_SUCCESS ? 0 : 3);
    }
    CHECK(mutex_holder_child_ok(child, "its clSetEventCallback"));
    pthread_join(thread, NULL);

    /* The parent's callbacks still run. */
    CT_OK(clSetUserEventStatus(user_event, CL_COMPLETE));
    CT_OK(clReleaseEvent(user_event));
    ct_quiesce(&env);
    for (int waited = 0; atomic_load(&callbacks_run) < 2 && waited < 5000; waited++)
        usleep(1000); /* pocl may run them on a thread of its own */
    CHECK_EQ_INT(atomic_load(&callbacks_run), 2);
    ct_teardown(&env);
    return check_summary("cl_fork_callback");
}
