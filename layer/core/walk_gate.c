/*
 * The walk gate: a count of walks in flight and a flag set while a fork
 * waits or runs. Writer first, so a steady stream of walks cannot hold a
 * fork off; walks are rare (the stack memo answers repeated stacks), so
 * two atomics each cost nothing that shows. Not a pthread rwlock: the
 * child must unlock what the parent's thread locked, and glibc tells a
 * write unlock from a read unlock by the owner's thread id, which the
 * child no longer has.
 */
#include <sched.h>
#include <stdatomic.h>

#include "core_internal.h"
#include "spinlock.h"
#include "walk_gate.h"

static atomic_uint walks_in_flight;
static atomic_int fork_waiting;

void lt_walk_enter(void)
{
    for (;;) {
        while (atomic_load(&fork_waiting))
            sched_yield();
        atomic_fetch_add(&walks_in_flight, 1);
        /* Sequentially consistent with the fork's store and load below:
         * either the fork sees this walk, or this walk sees the fork. */
        if (!atomic_load(&fork_waiting))
            return;
        atomic_fetch_sub(&walks_in_flight, 1);
    }
}

void lt_walk_leave(void) { atomic_fetch_sub(&walks_in_flight, 1); }

/* Taken last before fork() (every other livetrack lock is held then, so
 * two forks never share the flag), dropped first after it. */
void lt_walks_block(void)
{
    atomic_store(&fork_waiting, 1);
    for (unsigned spins = 0; atomic_load(&walks_in_flight); spins++) {
        if (spins < 64)
            LT_CPU_RELAX();
        else
            sched_yield();
    }
}

void lt_walks_unblock(void) { atomic_store(&fork_waiting, 0); }

/* In the child only its forking thread exists, walking nothing. A walker
 * that had counted itself in and was about to back out (it saw the flag
 * after the fork's check) left its count in the copy: without this the
 * child's own next fork() would wait for it forever. */
void lt_walks_unblock_in_child(void)
{
    atomic_store(&walks_in_flight, 0);
    atomic_store(&fork_waiting, 0);
}
