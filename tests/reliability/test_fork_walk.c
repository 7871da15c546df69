/*
 * fork() while another thread walks its stack inside libunwind.
 *
 * libunwind 1.6 takes a process-wide mutex on a thread's first walk (its
 * memory pool). A thread holding it at the moment another thread forks
 * leaves it held in the child, whose first stack capture in a new thread
 * then waits forever. livetrack's walk gate makes fork() wait for walks
 * in flight (layer/core/walk_gate.h).
 *
 * The window is a few instructions wide, so this test holds it open
 * (tests/mutex_holder.h): the first lock libunwind takes keeps its mutex for
 * 300 ms.
 * The main thread forks at that moment. With the gate, fork() returns
 * after the walk; without it, the child hangs in its first capture and
 * the alarm kills it.
 */
#include <pthread.h>

#include "livetrack/livetrack.h"
#include "mutex_holder.h"
#include "rel_util.h"

static void create_one(uint64_t handle)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .handle = handle, .call = "fork_walk_create"};
    livetrack_create(&object);
    livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, NULL, "fork_walk_release");
}

/* A new thread: its first capture is its first walk. */
static void *walk_once(void *handle)
{
    create_one((uint64_t)(uintptr_t)handle);
    return NULL;
}

int main(void)
{
    mutex_holder_arm("libunwind", 300);
    pthread_t walker;
    CHECK(pthread_create(&walker, NULL, walk_once, (void *)(uintptr_t)0x1000) == 0);
    CHECK(mutex_holder_wait(10000)); /* else the test does not reach what it tests */
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        alarm(5); /* an inherited held mutex: the capture below never returns */
        pthread_t thread;
        if (pthread_create(&thread, NULL, walk_once, (void *)(uintptr_t)0x2000) != 0)
            _exit(3);
        pthread_join(thread, NULL);
        _exit(0);
    }
    CHECK(mutex_holder_child_ok(child, "its first stack capture"));
    pthread_join(walker, NULL);
    return check_summary("reliability.fork_walk");
}
