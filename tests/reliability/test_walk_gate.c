/*
 * The walk gate (layer/core/walk_gate.c), white-box: its file alone is
 * compiled in, and the test plays both the walkers and the fork handler.
 *
 *  - lt_walks_block waits for a walk in flight and returns when it ends;
 *    a walk that starts meanwhile waits for lt_walks_unblock.
 *  - In a forked child, a walk counted by a thread of the parent (one
 *    that had counted itself in and was about to back out when memory
 *    was copied) is forgotten by lt_walks_unblock_in_child: the child's
 *    own next fork does not wait for a thread it does not have.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "walk_gate.h"

void lt_walks_block(void);
void lt_walks_unblock(void);
void lt_walks_unblock_in_child(void);

static atomic_int walking, walk_done, second_walk_done;

static void pause_ms(long ms)
{
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

static void *walk_for_a_while(void *unused)
{
    (void)unused;
    lt_walk_enter();
    atomic_store(&walking, 1);
    pause_ms(200);
    atomic_store(&walk_done, 1);
    lt_walk_leave();
    return NULL;
}

static void *walk_once(void *unused)
{
    (void)unused;
    lt_walk_enter();
    atomic_store(&second_walk_done, 1);
    lt_walk_leave();
    return NULL;
}

/* Counts itself in and never leaves: the parent's thread the child lacks. */
static void *walk_forever(void *unused)
{
    (void)unused;
    lt_walk_enter();
    atomic_store(&walking, 1);
    for (;;)
        pause(); /* killed with the process */
    return NULL;
}

int main(void)
{
    pthread_t walker, second;
    CHECK(pthread_create(&walker, NULL, walk_for_a_while, NULL) == 0);
    while (!atomic_load(&walking))
        sched_yield();
    lt_walks_block();
    CHECK(atomic_load(&walk_done)); /* it waited for the walk */
    CHECK(pthread_create(&second, NULL, walk_once, NULL) == 0);
    pause_ms(100);
    CHECK(!atomic_load(&second_walk_done)); /* held while "forking" */
    lt_walks_unblock();
    pthread_join(second, NULL);
    CHECK(atomic_load(&second_walk_done));
    pthread_join(walker, NULL);

    atomic_store(&walking, 0);
    pthread_t stuck;
    CHECK(pthread_create(&stuck, NULL, walk_forever, NULL) == 0);
    while (!atomic_load(&walking))
        sched_yield();
    pid_t child = fork(); /* no handlers here: the count is copied as it is */
    if (child == 0) {
        alarm(5);
        lt_walks_unblock_in_child();
        lt_walks_block(); /* the child's next fork */
        lt_walks_unblock();
        _exit(0);
    }
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (!WIFEXITED(status))
        fprintf(stderr, "the child's fork waited for a walk of its parent's thread (signal %d)\n", WTERMSIG(status));
    return check_summary("reliability.walk_gate");
}
