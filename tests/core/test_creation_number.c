/*
 * lt_creation_number (layer/core/creation_order.h) on numbers chosen to
 * hit each of its cases, which threads only reach by chance: a reading
 * below the shard's last number (two creates that read the clock in one
 * order and took the shard's lock in the other), below the last mark (a
 * create that read the clock before the load that ordered it after the
 * mark completed), below a parent's (made while the create ran), below
 * the base (a core behind), a clock that has not passed the last number
 * even when read again (cores that disagree), the counter, and which
 * numbers a shard can have given out (what livetrack_restore accepts),
 * and numbers and marks past the limit of ticks a number can follow. The
 * header's state is defined here: the test runs the inline function
 * alone, not liblivetrack's copy of that state.
 */
#include <stdatomic.h>
#include <stdint.h>

/* The limit of ticks a number follows, made small below so that the
 * clock itself is past it. */
static uint64_t test_tick_limit = (uint64_t)1 << 57;
#define LT_ORDER_TICK_LIMIT test_tick_limit

#include "check.h"
#include "creation_order.h"

_Atomic int lt_order_mode;
uint64_t lt_order_base_ticks;
_Atomic uint64_t lt_order_next = 1;
_Atomic uint64_t lt_order_floor;
_Atomic uint64_t lt_order_late_next;
int lt_choose_creation_order(void) { return LT_ORDER_BY_CLOCK; }

#define SHARD(n) ((uint64_t)(n) & (LT_SHARD_COUNT - 1))
#define TICK(n) ((uint64_t)(n) >> LT_SHARD_BITS)
#define NUMBER(tick, shard) (((uint64_t)(tick) << LT_SHARD_BITS) | (shard))

static uint64_t read_ticks; /* the creation time the last number() left */

/* lt_creation_number for a create that read `ticks`, holding a parent
 * numbered `parent_seq` (0: none). */
static uint64_t number(int by_clock, uint64_t ticks, unsigned shard, uint64_t last, uint64_t parent_seq)
{
    lt_node parent = {0};
    atomic_store(&parent.seq, parent_seq);
    lt_node *const parents[2] = {parent_seq ? &parent : NULL, NULL};
    read_ticks = ticks;
    return lt_creation_number(by_clock, &read_ticks, shard, last, parents);
}

int main(void)
{
    /* The base 10^10 ticks (seconds) back: readings are far above it. */
    uint64_t start = lt_ticks();
    lt_order_base_ticks = start - 10000000000ull;
    uint64_t now = lt_order_ticks(start);
    uint64_t base = lt_order_base_ticks;
    atomic_store(&lt_order_mode, LT_ORDER_BY_CLOCK);

    /* The reading alone: ticks since the base, plus one, above the shard;
     * the creation time stays the reading. */
    uint64_t n = number(1, base + 500, 5, 0, 0);
    CHECK_EQ_INT(TICK(n), 501);
    CHECK_EQ_INT(SHARD(n), 5);
    CHECK_EQ_INT(read_ticks, base + 500);

    /* A reading at or below the shard's last number: the clock is read
     * again, is past it, and is the creation time too. */
    uint64_t last = NUMBER(600, 5);
    n = number(1, base + 599, 5, last, 0); /* tick 600, the same as the last */
    CHECK(TICK(n) >= now);
    CHECK_EQ_INT(SHARD(n), 5);
    CHECK_EQ_INT(lt_order_ticks(read_ticks), TICK(n));
    n = number(1, base + 600, 5, last, 0); /* tick 601: above it already */
    CHECK_EQ_INT(TICK(n), 601);

    /* Below the last mark, whose low bits are all ones: read again, above
     * it, in this shard's low bits. */
    uint64_t mark = NUMBER(700, LT_SHARD_COUNT - 1);
    atomic_store(&lt_order_floor, mark);
    n = number(1, base + 650, 3, last, 0);
    CHECK(n > mark && TICK(n) >= now);
    CHECK_EQ_INT(SHARD(n), 3);
    n = number(1, base + 800, 3, last, 0); /* tick 801: past the mark */
    CHECK_EQ_INT(TICK(n), 801);
    atomic_store(&lt_order_floor, 0);

    /* Below a parent's number (the parent was made while this create ran):
     * read again, above it; a parent below the reading changes nothing. */
    n = number(1, base + 650, 4, 0, NUMBER(900, 2));
    CHECK(n > NUMBER(900, 2) && TICK(n) >= now);
    n = number(1, base + 950, 4, 0, NUMBER(900, 2));
    CHECK_EQ_INT(TICK(n), 951);

    /* A clock that even read again is not past the last number (the last
     * came from a core ahead): the next tick, and the reading is kept. */
    uint64_t ahead = NUMBER(now + 1000000000000ull, 9);
    n = number(1, base + 650, 9, ahead, 0);
    CHECK_EQ_INT(n, ahead + LT_SHARD_COUNT);
    CHECK_EQ_INT(read_ticks, base + 650);

    /* A reading below the base (a core behind): read again. */
    n = number(1, 10, 7, 0, 0);
    CHECK(TICK(n) >= now);
    CHECK_EQ_INT(SHARD(n), 7);

    /* Shards never share a number within a tick. */
    CHECK(number(1, start, 0, 0, 0) != number(1, start, 1, 0, 0));

    /* What a shard can have given out: up to its last number, and with
     * the clock only numbers in its own low bits. */
    CHECK(lt_creation_number_given(NUMBER(600, 5), 5, NUMBER(600, 5)));
    CHECK(lt_creation_number_given(NUMBER(500, 5), 5, NUMBER(600, 5)));
    CHECK(!lt_creation_number_given(NUMBER(601, 5), 5, NUMBER(600, 5)));
    CHECK(!lt_creation_number_given(NUMBER(500, 4), 5, NUMBER(600, 5)));
    atomic_store(&lt_order_mode, LT_ORDER_BY_COUNTER);
    CHECK(lt_creation_number_given(499, 5, 600));
    CHECK(!lt_creation_number_given(601, 5, 600));

    /* The counter: 1, 2, 3 ..., whatever the clock, the last or a parent say. */
    CHECK_EQ_INT(number(0, 5000, 9, 0, 0), 1);
    CHECK_EQ_INT(number(0, 1, 9, 1000, NUMBER(5000, 1)), 2);

    /* Past the limit (2^57 ticks, a process 1.7 years old at 2.6 GHz).
     * Here, with the base at 0, half the clock's reading now, so that the
     * clock read again is past it too. */
    atomic_store(&lt_order_mode, LT_ORDER_BY_CLOCK);
    lt_order_base_ticks = 0;
    test_tick_limit = lt_ticks() / 2;
    const uint64_t limit = test_tick_limit;
    atomic_store(&lt_order_late_next, limit);
    /* Below it, the clock as before, for creates and marks. */
    n = number(1, limit - 3, 6, 0, 0);
    CHECK_EQ_INT(n, NUMBER(limit - 2, 6));
    CHECK_EQ_INT(lt_mark_number(limit - 3), NUMBER(limit - 2, LT_SHARD_COUNT - 1));
    /* Past it, creates count up from the limit whatever their shard: a
     * later create in a quieter shard still numbers above an earlier one
     * elsewhere. The clock read again is the creation time. */
    uint64_t first = number(1, limit + 1000, 6, n, 0);
    CHECK_EQ_INT(first, NUMBER(limit, 6));
    CHECK(read_ticks >= 2 * limit);
    uint64_t other = number(1, limit + 5, 9, 0, 0);
    CHECK_EQ_INT(other, NUMBER(limit + 1, 9));
    /* A mark: above both, below the next create. */
    mark = lt_mark_number(limit + 100);
    CHECK_EQ_INT(mark, NUMBER(limit + 1, LT_SHARD_COUNT - 1));
    n = number(1, limit + 200, 3, 0, 0);
    CHECK(n > mark);
    CHECK_EQ_INT(n, NUMBER(limit + 2, 3));
    /* A reading from before the limit (taken before the load that ordered
     * this create after those): read again, and counted too. */
    n = number(1, limit - 10, 6, first, 0);
    CHECK_EQ_INT(n, NUMBER(limit + 3, 6));
    /* Above a parent, as the counter gives out numbers in order. */
    n = number(1, limit + 300, 4, 0, NUMBER(limit + 2, 3));
    CHECK_EQ_INT(n, NUMBER(limit + 4, 4));
    /* Above a number made up where cores disagreed, should the counter be
     * behind it. */
    n = number(1, limit + 400, 4, NUMBER(limit + 50, 4), 0);
    CHECK_EQ_INT(n, NUMBER(limit + 51, 4));
    /* ... which the counter then passes too: a mark is above it. */
    CHECK_EQ_INT(lt_mark_number(limit + 500), NUMBER(limit + 51, LT_SHARD_COUNT - 1));
    CHECK_EQ_INT(number(1, limit + 600, 2, 0, 0), NUMBER(limit + 52, 2));

    return check_summary("test_creation_number");
}
