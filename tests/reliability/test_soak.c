/*
 * Load: N lifecycle events (create, retain, release) across T threads,
 * with bounded memory and exact final counts.
 *
 *   test_soak [events] [threads]      (default 10^6 events, 8 threads)
 *
 * Each thread owns a context and cycles children through it: create a
 * child (sometimes with a second parent, sometimes through another child
 * to the context), retain it, release it twice; a ring of children per
 * thread stays live and is replaced as the thread goes (a released ring
 * child that another one names as second parent stays, kept alive, and
 * chains form), and every cycle also retains and releases one shared
 * object, so the threads meet there too. Meanwhile a reader takes
 * snapshots and stats.
 *
 * At the end each thread releases its ring, which must free every child
 * it made; then live objects, holders and the creation count are exactly
 * what the threads did, and resident memory after the first tenth of the
 * run grew by less than a bound (released objects leave nothing behind).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "livetrack/livetrack.h"
#include "rel_util.h"

#define RING 16
#define WARM_FRACTION 10
/* Resident memory may grow this much after warm-up (allocator noise,
 * thread stacks touched deeper); a leak of even 8 bytes per event would
 * pass it within the first 10^6 events. */
#define RSS_GROWTH_LIMIT_KB (8 * 1024)

enum { T_CTX, T_CHILD, T_SHARED, T_COUNT };
static const char *const type_names[T_COUNT] = {"soak_ctx", "soak_child", "soak_shared"};

static uint64_t events_per_thread;
static unsigned thread_count;
static const uint64_t shared_handle = 0x5eed0000;
static atomic_int failures;
static atomic_int running;
static atomic_ullong events_done;
static atomic_long warm_rss_kb = -1;
static atomic_int warm_threads;

#define FAIL(...)                                  \
    do {                                           \
        if (atomic_fetch_add(&failures, 1) < 10)   \
            fprintf(stderr, __VA_ARGS__);          \
    } while (0)

typedef struct soaker {
    pthread_t thread;
    unsigned id;
    uint64_t creates, events;
    uint64_t ring[RING]; /* live children kept, 0: empty */
} soaker;

static uint64_t ctx_of(unsigned id) { return 0x1000000000ull * (id + 1); }

static int create(uint64_t handle, unsigned type, uint64_t parent, uint64_t second, unsigned flags)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = 32,
                                   .parent = parent, .second_parent = second, .flags = flags, .call = "soak_create"};
    return livetrack_create(&object) == LIVETRACK_OK;
}

static int release(uint64_t handle, unsigned type, uint32_t expect_left)
{
    uint32_t left = 0xffffffff;
    livetrack_status status = livetrack_release(LIVETRACK_DOMAIN_USER, type, handle, &left, "soak_release");
    return status == LIVETRACK_OK && left == expect_left;
}

static void *soak_main(void *arg)
{
    soaker *s = arg;
    uint64_t ctx = ctx_of(s->id), next = ctx + 0x40, state = 0x9e37 + s->id;
    uint64_t warm_at = events_per_thread / WARM_FRACTION;
    int warm_noted = 0;
    if (!create(ctx, T_CTX, 0, 0, 0))
        FAIL("thread %u: context not created\n", s->id);
    s->creates++;
    s->events++;
    while (s->events < events_per_thread) {
        uint64_t child = next;
        next += 0x40;
        uint64_t r = rel_rnd(&state);
        unsigned slot = (unsigned)(r % RING);
        /* a second parent from the ring, or through a ring child to the context */
        uint64_t second = (r >> 8) % 4 == 0 ? s->ring[slot] : 0;
        int via = (r >> 16) % 8 == 0 && s->ring[slot];
        if (!create(child, T_CHILD, via ? s->ring[slot] : ctx, second, via ? LIVETRACK_PARENT_VIA_FIRST_PARENT : 0))
            FAIL("thread %u: create failed\n", s->id);
        if (livetrack_retain(LIVETRACK_DOMAIN_USER, T_CHILD, child, "soak_retain") != LIVETRACK_OK)
            FAIL("thread %u: retain failed\n", s->id);
        if (livetrack_retain(LIVETRACK_DOMAIN_USER, T_SHARED, shared_handle, "soak_retain") != LIVETRACK_OK)
            FAIL("thread %u: retain of the shared object failed\n", s->id);
        if (livetrack_release(LIVETRACK_DOMAIN_USER, T_SHARED, shared_handle, NULL, "soak_release") != LIVETRACK_OK)
            FAIL("thread %u: release of the shared object failed\n", s->id);
        if (!release(child, T_CHILD, 1))
            FAIL("thread %u: first release\n", s->id);
        s->creates++;
        s->events += 5;
        if ((r >> 24) % 4 == 0) {
            /* keep it in the ring; the one it replaces goes */
            if (s->ring[slot]) {
                if (!release(s->ring[slot], T_CHILD, 0))
                    FAIL("thread %u: ring release\n", s->id);
                s->events++;
            }
            s->ring[slot] = child;
        } else {
            if (!release(child, T_CHILD, 0))
                FAIL("thread %u: second release\n", s->id);
            s->events++;
        }
        if (!warm_noted && s->events >= warm_at) {
            /* measured once all threads are past their first tenth */
            warm_noted = 1;
            /* the last thread to warm up measures */
            if (atomic_fetch_add(&warm_threads, 1) + 1 == (int)thread_count)
                atomic_store(&warm_rss_kb, rel_status_kb("VmRSS:"));
        }
    }
    /* the ring goes, and with it every child still kept alive */
    for (unsigned i = 0; i < RING; i++) {
        if (s->ring[i] && !release(s->ring[i], T_CHILD, 0))
            FAIL("thread %u: final ring release\n", s->id);
        s->events += s->ring[i] != 0;
        s->ring[i] = 0;
    }
    atomic_fetch_add(&events_done, s->events);
    atomic_fetch_sub(&running, 1);
    return NULL;
}

static atomic_ulong snapshots;

static void *reader_main(void *arg)
{
    (void)arg;
    while (atomic_load(&running) > 0) {
        livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
        size_t count = livetrack_snapshot_count(snapshot);
        uint64_t previous = UINT64_MAX;
        for (size_t i = 0; i < count; i++) {
            const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
            if (object->seq >= previous || object->refs + object->holders == 0)
                FAIL("snapshot out of order or with a dead object\n");
            previous = object->seq;
        }
        livetrack_snapshot_free(snapshot);
        livetrack_stats stats;
        livetrack_get_stats(&stats);
        atomic_fetch_add(&snapshots, 1);
        struct timespec nap = {0, 20 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    thread_count = argc > 2 ? (unsigned)atoi(argv[2]) : 8;
    if (!thread_count || thread_count > 64)
        return 2;
    events_per_thread = events / thread_count;
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "soak", type_names, T_COUNT);
    livetrack_stats before;
    livetrack_get_stats(&before);
    long rss_start = rel_status_kb("VmRSS:");
    CHECK(create(shared_handle, T_SHARED, 0, 0, 0));

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    soaker *soakers = calloc(thread_count, sizeof *soakers);
    atomic_store(&running, (int)thread_count);
    for (unsigned t = 0; t < thread_count; t++) {
        soakers[t].id = t;
        CHECK(pthread_create(&soakers[t].thread, NULL, soak_main, &soakers[t]) == 0);
    }
    pthread_t reader;
    CHECK(pthread_create(&reader, NULL, reader_main, NULL) == 0);
    for (unsigned t = 0; t < thread_count; t++)
        pthread_join(soakers[t].thread, NULL);
    pthread_join(reader, NULL);
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;

    /* exact counts */
    uint64_t creates = 1;
    for (unsigned t = 0; t < thread_count; t++)
        creates += soakers[t].creates;
    livetrack_stats after;
    livetrack_get_stats(&after);
    CHECK_EQ_INT(atomic_load(&failures), 0);
    CHECK_EQ_INT(after.created - before.created, creates);
    CHECK_EQ_INT(after.live_objects - before.live_objects, 1 + thread_count);
    CHECK_EQ_INT(after.misuse, before.misuse);
    CHECK_EQ_INT(after.incomplete, 0);
    livetrack_object object;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, shared_handle, &object), LIVETRACK_OK);
    CHECK_EQ_INT(object.refs, 1);
    /* no hold on a context is left over */
    for (unsigned t = 0; t < thread_count; t++) {
        CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, ctx_of(t), &object), LIVETRACK_OK);
        CHECK_EQ_INT(object.refs, 1);
        CHECK_EQ_INT(object.holders, 0);
    }

    /* memory: bounded by the live set, not by the events */
    long rss_end = rel_status_kb("VmRSS:"), peak = rel_status_kb("VmHWM:"), warm = atomic_load(&warm_rss_kb);
    CHECK(warm > 0);
    CHECK(rss_end - warm < RSS_GROWTH_LIMIT_KB);
    CHECK(after.node_bytes < 4u << 20);

    uint64_t done = atomic_load(&events_done);
    CHECK(done >= events - thread_count * 8);
    printf("soak: %llu lifecycle events (%llu creates) in %.2f s by %u threads (%.0f ns per event), %lu snapshots "
           "meanwhile\n",
           (unsigned long long)done, (unsigned long long)creates, seconds, thread_count, seconds * 1e9 / (double)done,
           atomic_load(&snapshots));
    printf("soak: RSS %ld kB at start, %ld kB after the first tenth, %ld kB at the end, peak %ld kB; registry nodes "
           "%llu bytes, peak %llu live objects, %llu unique stacks\n",
           rss_start, warm, rss_end, peak, (unsigned long long)after.node_bytes,
           (unsigned long long)after.peak_objects, (unsigned long long)after.unique_stacks);
    free(soakers);
    return check_summary("reliability.soak");
}
