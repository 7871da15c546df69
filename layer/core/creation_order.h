/*
 * Creation numbers (livetrack_object.seq): unique, increasing, and in an
 * order across threads that agrees with the program's own synchronization.
 *
 * Two ways to make them, chosen once (LIVETRACK_CREATION_ORDER):
 *
 * - counter: one process-wide atomic counter, 1, 2, 3 ... Every create
 *   writes its cache line, so threads that create at once queue for it: on
 *   a 16-core host the registry did half the operations per second of the
 *   clock's with 16 threads.
 * - clock: the time-stamp counter reading every create already takes for
 *   its creation time, shifted left by the shard bits with the shard's
 *   index below. x86 keeps that counter synchronized across cores where
 *   the CPU says it is invariant and Linux chose it as clocksource (the
 *   kernel checked), so numbers made in different threads compare like the
 *   moments they were read. Unique because no two shards share the low
 *   bits and each shard's numbers only rise (under its lock, a number not
 *   above the shard's last one moves to the next tick).
 *
 * The clock is read without a fence (a fence cost ~10 ns a create), so a
 * create may read it a little before the load that ordered it after
 * another thread's create has completed: two creates in different threads
 * less than a cache-line transfer apart (~100 ns) may be numbered either
 * way round, as their creation times may. Marks are exact all the same:
 * a mark reads the clock behind a fence, takes the highest number of
 * every shard too, and publishes itself as a floor that every later
 * create reads (a line written only by marks) and numbers above.
 *
 * Numbers are not consecutive in clock mode; the created count is kept per
 * shard in either mode.
 */
#ifndef LIVETRACK_CREATION_ORDER_H
#define LIVETRACK_CREATION_ORDER_H

#include <stdatomic.h>
#include <stdint.h>

#include "clock.h"
#include "registry_internal.h"

/* LT_ORDER_UNDECIDED until the first create or mark asks, then fixed. */
enum { LT_ORDER_UNDECIDED, LT_ORDER_BY_COUNTER, LT_ORDER_BY_CLOCK };
extern _Atomic int lt_order_mode;
/* Ticks when the mode was chosen: clock-mode numbers count from there. */
extern uint64_t lt_order_base_ticks;
/* Counter mode: the next number to give out. */
extern _Atomic uint64_t lt_order_next;
/* Clock mode: the highest mark (or misuse record) number given out; every
 * create numbers above it. */
extern _Atomic uint64_t lt_order_floor;

/* Reads LIVETRACK_CREATION_ORDER (the first time) and answers the mode. */
int lt_choose_creation_order(void);

static inline int lt_creation_order(void)
{
    int mode = atomic_load_explicit(&lt_order_mode, memory_order_acquire);
    return __builtin_expect(mode != LT_ORDER_UNDECIDED, 1) ? mode : lt_choose_creation_order();
}

/* The number for an object created at `ticks` (lt_ticks) and linked now
 * into shard `shard_index`, whose last number was `last`; `by_clock` is
 * lt_creation_order() == LT_ORDER_BY_CLOCK. The caller holds that shard's
 * lock and keeps the answer as the shard's last. */
static inline uint64_t lt_creation_number(int by_clock, uint64_t ticks, unsigned shard_index, uint64_t last)
{
    if (!by_clock)
        return atomic_fetch_add_explicit(&lt_order_next, 1, memory_order_relaxed);
    /* In ticks since the base, +1 so that no number is 0; a counter below
     * the base (a core behind the one that chose the mode) reads as it. */
    uint64_t tick = (ticks > lt_order_base_ticks ? ticks - lt_order_base_ticks : 0) + 1;
    /* Above the shard's last number and the last mark, whose low bits may
     * be any: the next tick of the higher. */
    uint64_t floor = atomic_load_explicit(&lt_order_floor, memory_order_relaxed);
    uint64_t above = ((last > floor ? last : floor) >> LT_SHARD_BITS) + 1;
    return ((tick > above ? tick : above) << LT_SHARD_BITS) | shard_index;
}

/* A number at or above every one given out before this call (in the
 * program's order) and below every one given out after it: livetrack_mark,
 * and the place of a misuse record among creations. */
uint64_t lt_creation_number_now(void);

#endif
