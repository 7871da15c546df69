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
 *   bits and each shard's numbers only rise (see below).
 *
 * The clock is read without a fence (a fence cost ~10 ns a create), so a
 * create may read it a little before the load that ordered it after
 * another thread's create has completed: two creates in different threads
 * less than a cache-line transfer apart (~100 ns) may be numbered either
 * way round, as their creation times may. Marks are exact all the same: a
 * mark reads the clock behind a fence and publishes its number as a floor
 * that every create reads (a line no create writes; marks do:
 * livetrack_mark, misuse records, and the Level Zero hook before each
 * destroy it wraps); a create whose reading is not above the floor, its
 * shard's last number or its parents' numbers reads the clock again, in
 * order, under the shard's lock. So no number is ahead of the moment it
 * was linked, a child's is above its parents', and a mark's reading is
 * above every number given out before it.
 *
 * Numbers are not consecutive in clock mode; the created count is kept per
 * shard in either mode.
 *
 * A clock-mode number holds the ticks in its upper 58 bits, which a
 * process fills after about 3.5 years at 2.6 GHz. Before that, at
 * LT_ORDER_TICK_LIMIT ticks (half way), numbers stop following the clock
 * and count creates instead, from one atomic counter above every tick
 * given out (what the counter mode does, at its cost). Order, uniqueness
 * and marks stay as they were; creation times still come from the clock.
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
/* Ticks when liblivetrack was loaded, before any create could read the
 * clock: clock-mode numbers count from there. */
extern uint64_t lt_order_base_ticks;
/* Counter mode: the next number to give out. */
extern _Atomic uint64_t lt_order_next;
/* Clock mode: the highest mark (or misuse record) number given out; every
 * create numbers above it. */
extern _Atomic uint64_t lt_order_floor;

/* Clock mode: the most ticks since the base that a number follows the
 * clock for (1.7 years at 2.6 GHz); the other 2^57 ticks that fit in a
 * number are left for the creates after it, one each. A test may make it
 * small. */
#ifndef LT_ORDER_TICK_LIMIT
#define LT_ORDER_TICK_LIMIT ((uint64_t)1 << 57)
#endif
/* Clock mode past the limit: the tick of the next number (from
 * LT_ORDER_TICK_LIMIT up). */
extern _Atomic uint64_t lt_order_late_next;

/* Reads LIVETRACK_CREATION_ORDER (the first time) and answers the mode. */
int lt_choose_creation_order(void);

static inline int lt_creation_order(void)
{
    int mode = atomic_load_explicit(&lt_order_mode, memory_order_acquire);
    return __builtin_expect(mode != LT_ORDER_UNDECIDED, 1) ? mode : lt_choose_creation_order();
}

#if defined(__x86_64__)
/* rdtsc after every earlier instruction has completed, so after the loads
 * that ordered this moment after another thread's (an lfence costs ~10 ns:
 * only marks and the rare case below pay it). */
static inline uint64_t lt_ticks_in_order(void)
{
    __builtin_ia32_lfence();
    return __builtin_ia32_rdtsc();
}
#else
static inline uint64_t lt_ticks_in_order(void) { return lt_ticks(); }
#endif

/* Ticks of a counter reading since the base, +1 so that no number is 0;
 * a reading below the base (a core behind the one that chose the mode)
 * counts as the base. */
static inline uint64_t lt_order_since(uint64_t ticks)
{
    return (ticks > lt_order_base_ticks ? ticks - lt_order_base_ticks : 0) + 1;
}

/* The clock-mode tick of a creation's reading: lt_order_since, but 1 past
 * the limit, as at the base. No create takes tick 1 as it is (every
 * number is above it): the rare path below numbers it. */
static inline uint64_t lt_order_ticks(uint64_t ticks)
{
    uint64_t since = lt_order_since(ticks);
    return since < LT_ORDER_TICK_LIMIT ? since : 1;
}

/* The creation's reading is not above `above` (the tick of the shard's
 * last number, of the last mark, or of a parent; at least 1): it was
 * taken before another create took the shard's lock, before the load that
 * ordered it after a mark completed, before the parent was made, or on a
 * core whose counter is behind the base. Read again, in
 * order, under the lock: by now the clock has passed them all (a lock
 * hand-over or a chain from a mark or a parent's create to this one
 * takes many ticks), and that reading is also the creation time. Only
 * where it has not (cores whose counters disagree) is the number made up:
 * the next tick. Past the limit, the number counts creates: every number
 * given out before is below the counter (ticks below the limit, or taken
 * from it), and every one after above. Out of line: rare. */
static __attribute__((noinline, unused)) uint64_t lt_order_ticks_again(uint64_t above, uint64_t *ticks)
{
    uint64_t again = lt_ticks_in_order();
    uint64_t now = lt_order_since(again);
    if (now >= LT_ORDER_TICK_LIMIT) {
        *ticks = again;
        /* Above `above` as well, should a number made up where cores
         * disagreed be ahead of the counter: the counter passes it too,
         * so that a later mark is above it. */
        uint64_t late = atomic_load_explicit(&lt_order_late_next, memory_order_relaxed), tick;
        do
            tick = late > above ? late : above + 1;
        while (!atomic_compare_exchange_weak_explicit(&lt_order_late_next, &late, tick + 1, memory_order_relaxed,
                                                      memory_order_relaxed));
        return tick;
    }
    if (now <= above)
        return above + 1;
    *ticks = again;
    return now;
}

/* The number for an object created at `*ticks` (lt_ticks, read without a
 * fence) and linked now into shard `shard_index`, whose last number was
 * `last`, holding `parents` (NULL where none); `by_clock` is
 * lt_creation_order() == LT_ORDER_BY_CLOCK. The caller holds that shard's
 * lock and keeps the answer as the shard's last, and *ticks (read again
 * when it was behind) as the creation time. In clock mode a number is
 * above its parents' and never past the moment it was linked (but where
 * cores disagree): what lets a mark be exact with one reading of the
 * clock. */
static inline uint64_t lt_creation_number(int by_clock, uint64_t *ticks, unsigned shard_index, uint64_t last,
                                          lt_node *const parents[2])
{
    if (!by_clock)
        return atomic_fetch_add_explicit(&lt_order_next, 1, memory_order_relaxed);
    uint64_t above = atomic_load_explicit(&lt_order_floor, memory_order_relaxed);
    if (above < last)
        above = last;
    for (int i = 0; i < 2; i++) {
        /* held, so linked with its number long since */
        uint64_t parent = parents[i] ? atomic_load_explicit(&parents[i]->seq, memory_order_relaxed) : 0;
        if (above < parent)
            above = parent;
    }
    /* Tick 1 is a reading at or below the base: a core behind. */
    uint64_t above_tick = above >> LT_SHARD_BITS ? above >> LT_SHARD_BITS : 1;
    uint64_t tick = lt_order_ticks(*ticks);
    if (__builtin_expect(tick <= above_tick, 0))
        tick = lt_order_ticks_again(above_tick, ticks);
    return (tick << LT_SHARD_BITS) | shard_index;
}

/* A number at or above every one given out before this call (in the
 * program's order) and below every one given out after it: livetrack_mark,
 * and the place of a misuse record among creations. In clock mode it
 * writes the floor every create reads. */
uint64_t lt_creation_number_now(void);

/* lt_creation_number_now's clock-mode number for a reading taken in order
 * (before the floor): every shard's number for that tick, and none of the
 * next tick's, since numbers given out before were linked before the
 * reading and are never ahead of their link (lt_creation_number). Past
 * the limit, the last tick the counter gave out (LT_ORDER_TICK_LIMIT - 1,
 * above every clock tick, when none yet): a create that completed before
 * this call took its tick from the counter earlier, one after will later. */
static inline uint64_t lt_mark_number(uint64_t ticks_in_order)
{
    uint64_t tick = lt_order_since(ticks_in_order);
    if (__builtin_expect(tick >= LT_ORDER_TICK_LIMIT, 0))
        tick = atomic_load_explicit(&lt_order_late_next, memory_order_relaxed) - 1;
    return (tick << LT_SHARD_BITS) | (LT_SHARD_COUNT - 1);
}

/* Whether shard `shard_index`, whose last number is `last`, can have given
 * out `seq` (livetrack_restore's check of a number it is handed; a
 * number from the same shard that is another object's passes). */
static inline int lt_creation_number_given(uint64_t seq, unsigned shard_index, uint64_t last)
{
    if (seq > last)
        return 0;
    return atomic_load_explicit(&lt_order_mode, memory_order_relaxed) != LT_ORDER_BY_CLOCK ||
           (seq & (LT_SHARD_COUNT - 1)) == shard_index;
}

#endif
