/*
 * Creation numbers across the clock's limit (creation_order.h). Linked to
 * a liblivetrack built with a small LT_ORDER_TICK_LIMIT (2^31 ticks: under
 * a second here, where the real one takes a process 1.7 years) and run in
 * clock mode, it makes objects before the limit, waits for the limit to
 * pass, and checks that:
 *  1. numbers made before it follow the clock (their tick is below the
 *     limit), those after it count creates, one tick each from the limit
 *     up, and the first of them is above every earlier number;
 *  2. a child made past the limit is numbered above its parent made
 *     before, and creation times still come from the clock;
 *  3. a mark taken on either side sits between the numbers around it, for
 *     livetrack_mark, livetrack_snapshot_since and livetrack_leaks_since;
 *  4. threads creating at once past the limit never share a number, and
 *     each thread's numbers rise;
 *  5. a snapshot lists the objects of both sides newest first, and a
 *     destroy undone past the limit keeps the number it had before.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "livetrack/livetrack.h"

#ifndef LT_ORDER_TICK_LIMIT
#error "LT_ORDER_TICK_LIMIT must be the late library's (set by CMake)"
#endif

/* A clock-mode number is its tick above the shard's index (6 bits). */
static uint64_t tick_of(uint64_t seq) { return seq >> 6; }

enum { T_OBJ, T_COUNT };
static const char *const type_names[T_COUNT] = {"late_obj"};

static livetrack_object create_child(uint64_t handle, uint64_t parent)
{
    livetrack_new_object object = {
        .domain = LIVETRACK_DOMAIN_USER, .type = T_OBJ, .handle = handle, .parent = parent, .call = "mk"};
    livetrack_object made = {0};
    CHECK_EQ_INT(livetrack_create(&object), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, &made), LIVETRACK_OK);
    return made;
}

static uint64_t create(uint64_t handle) { return create_child(handle, 0).seq; }

static void destroy(uint64_t handle)
{
    CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_OBJ, handle, "free"), LIVETRACK_OK);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { THREADS = 4, PER_THREAD = 20000 };
static uint64_t thread_seqs[THREADS][PER_THREAD];

static uint64_t thread_handle(uintptr_t t, uint64_t i) { return ((uint64_t)(t + 1) << 40) | (i + 1) << 4; }

static void *create_many(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    for (uint64_t i = 0; i < PER_THREAD; i++)
        thread_seqs[t][i] = create(thread_handle(t, i));
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* 4: past the limit, threads at once. Every number is above `floor`. */
static void check_threads_past_the_limit(uint64_t floor)
{
    pthread_t threads[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        CHECK_EQ_INT(pthread_create(&threads[t], NULL, create_many, (void *)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    static uint64_t all[THREADS * PER_THREAD];
    size_t n = 0, rising = 0, above = 0;
    for (int t = 0; t < THREADS; t++)
        for (size_t i = 0; i < PER_THREAD; i++) {
            uint64_t seq = thread_seqs[t][i];
            all[n++] = seq;
            rising += i == 0 || seq > thread_seqs[t][i - 1];
            above += seq > floor && tick_of(seq) >= LT_ORDER_TICK_LIMIT;
        }
    CHECK_EQ_INT(rising, n);
    CHECK_EQ_INT(above, n);
    qsort(all, n, sizeof all[0], by_value);
    size_t distinct = 1;
    for (size_t i = 1; i < n; i++)
        distinct += all[i] != all[i - 1];
    CHECK_EQ_INT(distinct, n);
    for (uintptr_t t = 0; t < THREADS; t++)
        for (uint64_t i = 0; i < PER_THREAD; i++)
            destroy(thread_handle(t, i));
}

int main(void)
{
    CHECK_EQ_INT(livetrack_declare_types(LIVETRACK_DOMAIN_USER, "late", type_names, T_COUNT), LIVETRACK_OK);

    /* Before the limit: a parent and an object, then a mark. */
    livetrack_object parent = create_child(0x100, 0);
    uint64_t early = create(0x200);
    uint64_t mark_before = livetrack_mark();
    if (tick_of(mark_before) >= LT_ORDER_TICK_LIMIT)
        fprintf(stderr, "the limit (%llu ticks) passed before main's first create: make it larger\n",
                (unsigned long long)LT_ORDER_TICK_LIMIT);
    CHECK(tick_of(parent.seq) < LT_ORDER_TICK_LIMIT && tick_of(mark_before) < LT_ORDER_TICK_LIMIT);
    CHECK(parent.seq < early && early <= mark_before);

    /* Until a create is past the limit: each number rises on the last. */
    uint64_t last = mark_before, first_late = 0;
    size_t probes = 0, rising = 0;
    double deadline = now_s() + 60;
    while (!first_late && now_s() < deadline) {
        uint64_t seq = create(0x300);
        destroy(0x300);
        probes++;
        rising += seq > last;
        last = seq;
        if (tick_of(seq) >= LT_ORDER_TICK_LIMIT)
            first_late = seq;
        else
            nanosleep(&(struct timespec){.tv_nsec = 200000}, NULL);
    }
    CHECK(first_late != 0);
    CHECK_EQ_INT(rising, probes);
    /* 1: the counter starts at the limit, above every clock tick. */
    CHECK_EQ_INT(tick_of(first_late), LT_ORDER_TICK_LIMIT);

    /* 1, 2: one tick a create; a child above its early parent; the
     * creation time is the clock's, after the early object's. */
    uint64_t a = create(0x400);
    livetrack_object child = create_child(0x500, 0x100);
    livetrack_object early_object;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, 0x200, &early_object), LIVETRACK_OK);
    CHECK_EQ_INT(tick_of(a), tick_of(first_late) + 1);
    CHECK_EQ_INT(tick_of(child.seq), tick_of(a) + 1);
    CHECK(child.seq > parent.seq && child.parents[0] == 0x100);
    CHECK(child.time_ns > early_object.time_ns);

    /* 3: a mark past the limit is at or above what came before it and
     * below what comes after, and both marks count what is newer. */
    uint64_t mark_after = livetrack_mark();
    uint64_t b = create(0x600);
    CHECK(mark_after >= child.seq && b > mark_after);
    CHECK_EQ_INT(livetrack_leaks_since(mark_before, NULL), 3); /* a, child, b */
    CHECK_EQ_INT(livetrack_leaks_since(mark_after, NULL), 1);  /* b */
    livetrack_snapshot *since = livetrack_snapshot_since(LIVETRACK_DOMAIN_USER, NULL, mark_after);
    CHECK_EQ_INT(livetrack_snapshot_count(since), 1);
    CHECK(livetrack_snapshot_count(since) == 1 && livetrack_snapshot_at(since, 0)->handle == 0x600);
    livetrack_snapshot_free(since);

    check_threads_past_the_limit(b);

    /* 5: newest first across the limit: b, child, a, early, parent. */
    const uint64_t newest_first[] = {0x600, 0x500, 0x400, 0x200, 0x100};
    livetrack_snapshot *all = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    size_t count = livetrack_snapshot_count(all), in_order = 0;
    for (size_t i = 0; i < count && i < 5; i++)
        in_order += livetrack_snapshot_at(all, i)->handle == newest_first[i];
    CHECK_EQ_INT(count, 5);
    CHECK_EQ_INT(in_order, 5);
    livetrack_snapshot_free(all);

    /* 5: the early object's destroy, undone past the limit, keeps its
     * early number, which its shard gave out. */
    destroy(0x200);
    CHECK_EQ_INT(livetrack_restore(&early_object, early_object.refs, NULL, "free"), LIVETRACK_OK);
    livetrack_object back;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, 0x200, &back), LIVETRACK_OK);
    CHECK_EQ_INT(back.seq, early);

    const uint64_t live[] = {0x600, 0x500, 0x400, 0x200, 0x100};
    for (size_t i = 0; i < 5; i++)
        destroy(live[i]);
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.live_objects, 0);
    return check_summary("test_tick_limit_crossing");
}
