/*
 * fork() while another thread is inside clSetEventCallback, in the layer's
 * list of pending callbacks (wrap_callbacks.c). The child must not
 * inherit that list's lock held: its own clSetEventCallback would wait
 * for a thread it does not have.
 *
 * The window is a few instructions wide, so the test holds it open
 * (mutex_holder.h): the first mutex the layer takes in the thread's
 * clSetEventCallback is kept for 300 ms, and the main thread forks then.
 * With the layer's fork handler, fork() waits for the list; without it
 * the child hangs and its alarm kills it.
 */
#include <pthread.h>

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

int main(void)
{
    ct_env env;
    ct_setup(&env);
    cl_int err = CL_SUCCESS;
    user_event = clCreateUserEvent(env.context, &err);
    CT_NEED(user_event, err);

    mutex_holder_arm("liblivetrack_cl", 300);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, set_callback, NULL) == 0);
    CHECK(mutex_holder_wait(10000)); /* else the test does not reach what it tests */
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        alarm(5); /* an inherited held lock: the call below never returns */
        cl_int status = clSetEventCallback(user_event, CL_COMPLETE, count_callback, NULL);
        _exit(status == CL_SUCCESS ? 0 : 3);
    }
    CHECK(mutex_holder_child_ok(child, "its clSetEventCallback"));
    pthread_join(thread, NULL);

    /* The parent's callback still runs. */
    CT_OK(clSetUserEventStatus(user_event, CL_COMPLETE));
    CT_OK(clReleaseEvent(user_event));
    ct_quiesce(&env);
    for (int waited_ms = 0; atomic_load(&callbacks_run) < 1 && waited_ms < 5000; waited_ms++)
        usleep(1000); /* pocl may run it on a thread of its own */
    CHECK_EQ_INT(atomic_load(&callbacks_run), 1);
    ct_teardown(&env);
    return check_summary("cl_fork_callback");
}
