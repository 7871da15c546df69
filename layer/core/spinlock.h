/*
 * A small test-and-test-and-set lock for the registry shards.
 *
 * Why not pthread_mutex: an uncontended mutex costs two atomic
 * read-modify-writes (lock and unlock); this costs one (the unlock is a
 * plain release store), and shard critical sections are a few dozen
 * instructions. Under contention it yields the CPU after a short spin so
 * an oversubscribed machine does not burn its quantum.
 * A zero-filled lock is unlocked, so static shards need no initialisation.
 */
#ifndef LIVETRACK_SPINLOCK_H
#define LIVETRACK_SPINLOCK_H

#include <sched.h>
#include <stdatomic.h>

typedef struct lt_spinlock {
    atomic_int held;
} lt_spinlock;

#if defined(__x86_64__) || defined(__i386__)
#define LT_CPU_RELAX() __builtin_ia32_pause()
#else
#define LT_CPU_RELAX() ((void)0)
#endif

static inline void lt_spin_lock(lt_spinlock *lock)
{
    for (;;) {
        if (!atomic_exchange_explicit(&lock->held, 1, memory_order_acquire))
            return;
        for (unsigned spins = 0; atomic_load_explicit(&lock->held, memory_order_relaxed); spins++) {
            if (spins < 64)
                LT_CPU_RELAX();
            else
                sched_yield();
        }
    }
}

/* One attempt at lt_spin_lock's exchange, same acquire order: 1 when the
 * lock is now held. For a hot path that makes no call while the lock is
 * free and leaves the waiting (sched_yield) to an out-of-line path. */
static inline int lt_spin_trylock(lt_spinlock *lock)
{
    return !atomic_exchange_explicit(&lock->held, 1, memory_order_acquire);
}

static inline void lt_spin_unlock(lt_spinlock *lock)
{
    atomic_store_explicit(&lock->held, 0, memory_order_release);
}

#endif
