/*
 * The registry under concurrency:
 *
 *  1. shared parents: worker threads create, retain and release their own
 *     objects, children of shared parents (one of them only kept alive by
 *     an anchor child), with a small exact model of their own objects,
 *     while other threads take snapshots and statistics. At the end the
 *     counts are exact.
 *  2. racing parent: children of one parent are created and released
 *     while another thread releases the parent.
 *  3. handle reuse: threads create the same handles over and over (stale
 *     replacement racing with releases and with children dying) while
 *     another takes snapshots, each of which must hold every parent of
 *     its objects (a replaced one its children keep, told from the newer
 *     object at its handle by its creation number); at the end no hold
 *     on the shared parent is left over.
 *  4. releasing objects from inside a snapshot walk.
 *  5. type names declared again and again (three sets in turn) while
 *     other threads read them: every name read is one of a set's, at its
 *     own index.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "livetrack/livetrack.h"

enum { T_CTX, T_OBJ, T_CHILD, T_EVENT, T_COUNT };
static const char *const type_names[T_COUNT] = {"thr_ctx", "thr_obj", "thr_child", "thr_event"};

#define WORKERS 4
#define SNAPSHOTTERS 2
#define SHARED 4
#define OWN_MAX 24
#define ITERATIONS 100000

/* check.h's counters are plain ints: threads record failures here and
 * the main thread reports them. */
static atomic_int thread_failures;
static atomic_int thread_checks;
#define TCHECK(expr)                                                                           \
    do {                                                                                       \
        atomic_fetch_add_explicit(&thread_checks, 1, memory_order_relaxed);                    \
        if (!(expr)) {                                                                         \
            if (atomic_fetch_add(&thread_failures, 1) < 20)                                    \
                fprintf(stderr, "%s:%d: CHECK failed (thread): %s\n", __FILE__, __LINE__, #expr); \
        }                                                                                      \
    } while (0)

static void flush_thread_checks(void)
{
    int failures = atomic_exchange(&thread_failures, 0);
    int checks = atomic_exchange(&thread_checks, 0);
    check_passed += checks - failures;
    check_failed += failures;
}

static uint64_t rnd(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static livetrack_status create_obj(uint64_t handle, unsigned type, uint64_t parent, uint64_t second, unsigned flags)
{
    livetrack_new_object request;
    memset(&request, 0, sizeof request);
    request.domain = LIVETRACK_DOMAIN_USER;
    request.type = type;
    request.handle = handle;
    request.bytes = 16;
    request.parent = parent;
    request.second_parent = second;
    request.flags = flags;
    return livetrack_create(&request);
}

static livetrack_status release(uint64_t handle, uint32_t *left)
{
    return livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, left, NULL);
}

static uint64_t live_objects(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.live_objects;
}

/* ---- 1. shared parents --------------------------------------------------------- */

static uint64_t shared[SHARED]; /* refs 1 throughout */
static uint64_t kept;           /* refs 0, kept alive by `anchor` throughout */
static uint64_t anchor;
static atomic_int workers_running;

/* A worker's exact model of its own objects (only it touches them). */
typedef struct own_object {
    uint64_t handle;
    int used;
    uint32_t refs, holders;
    int parent_kind;   /* 0..SHARED-1: shared[i]; SHARED: kept; -1: none */
    int second_shared; /* shared index held as second parent, -1 */
    int own_parent;    /* index of an own object it holds, -1 */
} own_object;

typedef struct worker {
    pthread_t thread;
    int id;
    own_object own[OWN_MAX];
    uint64_t created;
    uint64_t next_handle;
} worker;

static worker workers[WORKERS];

static void own_die(worker *w, int i)
{
    while (i >= 0) {
        own_object *o = &w->own[i];
        o->used = 0;
        int parent = o->own_parent;
        i = -1;
        if (parent >= 0) {
            w->own[parent].holders--;
            if (w->own[parent].refs + w->own[parent].holders == 0)
                i = parent;
        }
    }
}

static void own_check(worker *w, int i)
{
    own_object *o = &w->own[i];
    livetrack_object got;
    livetrack_status status = livetrack_lookup(LIVETRACK_DOMAIN_USER, o->handle, &got);
    TCHECK(status == (o->used ? LIVETRACK_OK : LIVETRACK_UNKNOWN));
    if (status != LIVETRACK_OK || !o->used)
        return;
    TCHECK(got.refs == o->refs);
    TCHECK(got.holders == o->holders);
    uint64_t parent = o->parent_kind < 0 ? 0 : o->parent_kind == SHARED ? kept : shared[o->parent_kind];
    if (o->own_parent >= 0)
        parent = w->own[o->own_parent].handle;
    TCHECK(got.parents[0] == parent);
    TCHECK(got.parents[1] == (o->second_shared < 0 ? 0 : shared[o->second_shared]));
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    uint64_t state = 0x1234567ull * (uint64_t)(w->id + 1);
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        int i = (int)(rnd(&state) % OWN_MAX);
        own_object *o = &w->own[i];
        unsigned r = (unsigned)(rnd(&state) % 100);
        if (!o->used) {
            /* create: child of a shared parent, of `kept`, of an own
             * object, or through an own object to its first parent */
            memset(o, 0, sizeof *o);
            o->handle = w->next_handle;
            w->next_handle += 0x48;
            o->used = 1;
            o->refs = 1;
            o->parent_kind = -1;
            o->second_shared = -1;
            o->own_parent = -1;
            uint64_t parent = 0, second = 0;
            unsigned flags = 0;
            int j = (int)(rnd(&state) % OWN_MAX);
            if (r < 15 && j != i && w->own[j].used) {
                o->own_parent = j;
                w->own[j].holders++;
                parent = w->own[j].handle;
            } else if (r < 30 && j != i && w->own[j].used && w->own[j].own_parent < 0 &&
                       w->own[j].parent_kind >= 0) {
                o->parent_kind = w->own[j].parent_kind; /* via j to its parent */
                parent = w->own[j].handle;
                flags = LIVETRACK_PARENT_VIA_FIRST_PARENT;
            } else if (r < 45) {
                o->parent_kind = SHARED;
                parent = kept;
            } else {
                o->parent_kind = (int)(rnd(&state) % SHARED);
                parent = shared[o->parent_kind];
            }
            if (rnd(&state) % 4 == 0) {
                o->second_shared = (int)(rnd(&state) % SHARED);
                second = shared[o->second_shared];
            }
            TCHECK(create_obj(o->handle, T_CHILD, parent, second, flags) == LIVETRACK_OK);
            w->created++;
        } else if (r < 30) {
            TCHECK(livetrack_retain(LIVETRACK_DOMAIN_USER, T_CHILD, o->handle, NULL) == LIVETRACK_OK);
            o->refs++;
        } else if (r < 35) {
            TCHECK(livetrack_retain(LIVETRACK_DOMAIN_USER, T_CTX, o->handle, NULL) == LIVETRACK_WRONG_TYPE);
        } else if (o->refs == 0) {
            TCHECK(release(o->handle, NULL) == LIVETRACK_NOT_OWNED);
        } else if (r < 90) {
            uint32_t left = 999;
            TCHECK(release(o->handle, &left) == LIVETRACK_OK);
            o->refs--;
            TCHECK(left == o->refs);
            if (o->refs + o->holders == 0)
                own_die(w, i);
        } else if (r < 95) {
            /* A destroy the API refused: put back as it was, holding the
             * parents the front end kept meanwhile (one may die with it
             * otherwise), while other threads create in the same shards:
             * the snapshots check it lands in creation order. */
            livetrack_object before;
            TCHECK(livetrack_lookup(LIVETRACK_DOMAIN_USER, o->handle, &before) == LIVETRACK_OK);
            livetrack_keeper *keepers[2];
            TCHECK(livetrack_keep_parents(&before, keepers) == LIVETRACK_OK);
            TCHECK(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_CHILD, o->handle, NULL) == LIVETRACK_OK);
            TCHECK(livetrack_restore(&before, before.refs, keepers, NULL) == LIVETRACK_OK);
            livetrack_let_go(keepers[0]);
            livetrack_let_go(keepers[1]);
        } else {
            TCHECK(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_CHILD, o->handle, NULL) == LIVETRACK_OK);
            o->refs = 0;
            if (o->holders == 0)
                own_die(w, i);
        }
        own_check(w, i);
    }
    atomic_fetch_sub(&workers_running, 1);
    return NULL;
}

static atomic_long snapshots_taken;

static void *snapshotter_main(void *arg)
{
    uint64_t state = (uint64_t)(uintptr_t)arg;
    do { /* at least once, however the threads get scheduled */
        livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
        TCHECK(snapshot != NULL);
        size_t count = livetrack_snapshot_count(snapshot);
        uint64_t previous = UINT64_MAX;
        int saw_shared = 0, saw_kept = 0;
        for (size_t i = 0; i < count; i++) {
            const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
            TCHECK(object->seq < previous);
            previous = object->seq;
            TCHECK(object->refs + object->holders > 0);
            TCHECK(object->domain == LIVETRACK_DOMAIN_USER);
            if (object->type == T_CTX) {
                if (object->handle == kept) {
                    saw_kept++;
                    TCHECK(object->refs == 0 && object->holders >= 1);
                } else {
                    saw_shared++;
                    TCHECK(object->refs == 1);
                }
            } else if (object->type == T_CHILD) {
                TCHECK(object->parents[0] != 0);
                TCHECK(object->refs < 1000000);
            }
            if (rnd(&state) % 16 == 0)
                livetrack_still_live(object); /* either answer is right */
        }
        TCHECK(saw_shared == SHARED);
        TCHECK(saw_kept == 1);
        livetrack_snapshot_free(snapshot);
        livetrack_stats stats;
        livetrack_get_stats(&stats);
        TCHECK(stats.live_objects >= SHARED + 2);
        atomic_fetch_add(&snapshots_taken, 1);
        sched_yield();
    } while (atomic_load(&workers_running) > 0);
    return NULL;
}

/* How many holds the workers' objects have on a shared parent (or kept). */
static uint32_t expected_holders(int kind)
{
    uint32_t holders = 0;
    for (int t = 0; t < WORKERS; t++) {
        for (int i = 0; i < OWN_MAX; i++) {
            const own_object *o = &workers[t].own[i];
            if (!o->used)
                continue;
            if (o->own_parent < 0 && o->parent_kind == kind)
                holders++;
            if (o->second_shared == kind && kind < SHARED)
                holders++;
        }
    }
    return holders;
}

static void check_parent(uint64_t handle, uint32_t refs, uint32_t holders)
{
    livetrack_object object;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, &object), LIVETRACK_OK);
    CHECK_EQ_INT(object.refs, refs);
    CHECK_EQ_INT(object.holders, holders);
}

static void test_shared_parents(void)
{
    uint64_t base = live_objects();
    livetrack_stats before;
    livetrack_get_stats(&before);
    for (int i = 0; i < SHARED; i++) {
        shared[i] = 0xc0000000ull + (uint64_t)i * 0x100;
        CHECK_EQ_INT(create_obj(shared[i], T_CTX, 0, 0, 0), LIVETRACK_OK);
    }
    kept = 0xc0010000ull;
    anchor = 0xc0020000ull;
    CHECK_EQ_INT(create_obj(kept, T_CTX, 0, 0, 0), LIVETRACK_OK);
    CHECK_EQ_INT(create_obj(anchor, T_OBJ, kept, 0, 0), LIVETRACK_OK);
    CHECK_EQ_INT(release(kept, NULL), LIVETRACK_OK);
    check_parent(kept, 0, 1);

    atomic_store(&workers_running, WORKERS);
    pthread_t snapshotters[SNAPSHOTTERS];
    for (int t = 0; t < WORKERS; t++) {
        memset(&workers[t], 0, sizeof workers[t]);
        workers[t].id = t;
        workers[t].next_handle = 0x100000000000ull * (uint64_t)(t + 1);
        CHECK(pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]) == 0);
    }
    for (int t = 0; t < SNAPSHOTTERS; t++)
        CHECK(pthread_create(&snapshotters[t], NULL, snapshotter_main, (void *)(uintptr_t)(t + 1)) == 0);
    for (int t = 0; t < WORKERS; t++)
        pthread_join(workers[t].thread, NULL);
    for (int t = 0; t < SNAPSHOTTERS; t++)
        pthread_join(snapshotters[t], NULL);
    flush_thread_checks();
    CHECK(atomic_load(&snapshots_taken) > 0);

    /* exact counts */
    uint64_t leftovers = 0, created = 0;
    for (int t = 0; t < WORKERS; t++) {
        created += workers[t].created;
        for (int i = 0; i < OWN_MAX; i++)
            leftovers += workers[t].own[i].used;
    }
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.live_objects, base + SHARED + 2 + leftovers);
    CHECK_EQ_INT(stats.created, before.created + SHARED + 2 + created);
    CHECK_EQ_INT(stats.replaced, before.replaced);
    for (int i = 0; i < SHARED; i++)
        check_parent(shared[i], 1, expected_holders(i));
    check_parent(kept, 0, 1 + expected_holders(SHARED));
    for (int t = 0; t < WORKERS; t++)
        for (int i = 0; i < OWN_MAX; i++)
            own_check(&workers[t], i);
    flush_thread_checks();

    /* release the leftovers: the shared parents keep no holders */
    for (int t = 0; t < WORKERS; t++) {
        for (int i = 0; i < OWN_MAX; i++) {
            own_object *o = &workers[t].own[i];
            if (o->used && o->refs) {
                CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_CHILD, o->handle, NULL), LIVETRACK_OK);
                o->refs = 0;
                if (o->holders == 0)
                    own_die(&workers[t], i);
            }
        }
    }
    for (int t = 0; t < WORKERS; t++)
        for (int i = 0; i < OWN_MAX; i++)
            CHECK(!workers[t].own[i].used);
    for (int i = 0; i < SHARED; i++)
        check_parent(shared[i], 1, 0);
    check_parent(kept, 0, 1);
    CHECK_EQ_INT(live_objects(), base + SHARED + 2);
    CHECK_EQ_INT(release(anchor, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, kept, NULL), LIVETRACK_UNKNOWN);
    for (int i = 0; i < SHARED; i++)
        CHECK_EQ_INT(release(shared[i], NULL), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);
    printf("shared parents: %llu objects created by %d threads, %ld snapshots taken meanwhile\n",
           (unsigned long long)created, WORKERS, atomic_load(&snapshots_taken));
}

/* ---- 2. racing parent -------------------------------------------------------------- */

#define RACE_ROUNDS 1500
#define RACE_CHILDREN 6

static pthread_barrier_t race_barrier;
static uint64_t race_parent;
static atomic_long race_children_holding;

static void *race_main(void *arg)
{
    int id = (int)(uintptr_t)arg;
    uint64_t state = 99 + (uint64_t)id;
    for (int round = 0; round < RACE_ROUNDS; round++) {
        pthread_barrier_wait(&race_barrier);
        uint64_t children[RACE_CHILDREN];
        int release_parent_at = id == 0 ? (int)(rnd(&state) % RACE_CHILDREN) : -1;
        for (int c = 0; c < RACE_CHILDREN; c++) {
            if (c == release_parent_at) {
                uint32_t left = 7;
                TCHECK(release(race_parent, &left) == LIVETRACK_OK);
                TCHECK(left == 0);
            }
            children[c] = 0x200000000000ull + ((uint64_t)round << 20) + ((uint64_t)id << 12) + (uint64_t)c * 0x40;
            TCHECK(create_obj(children[c], T_CHILD, race_parent, 0, rnd(&state) % 2 ? LIVETRACK_PARENT_VIA_FIRST_PARENT : 0) ==
                   LIVETRACK_OK);
            livetrack_object object;
            TCHECK(livetrack_lookup(LIVETRACK_DOMAIN_USER, children[c], &object) == LIVETRACK_OK);
            /* the parent (or, via it, its context), or nothing if it
             * already died */
            TCHECK(object.parents[0] == 0 || object.parents[0] == race_parent ||
                   object.parents[0] == 0xd0000000ull);
            if (object.parents[0])
                atomic_fetch_add(&race_children_holding, 1);
            if (rnd(&state) % 2)
                TCHECK(release(children[c], NULL) == LIVETRACK_OK);
        }
        for (int c = 0; c < RACE_CHILDREN; c++) {
            livetrack_status status = release(children[c], NULL);
            TCHECK(status == LIVETRACK_OK || status == LIVETRACK_UNKNOWN);
        }
        pthread_barrier_wait(&race_barrier);
    }
    return NULL;
}

static void test_racing_parent(void)
{
    uint64_t base = live_objects();
    const uint64_t context = 0xd0000000ull;
    CHECK_EQ_INT(create_obj(context, T_CTX, 0, 0, 0), LIVETRACK_OK);
    pthread_barrier_init(&race_barrier, NULL, WORKERS + 1);
    pthread_t threads[WORKERS];
    for (int t = 0; t < WORKERS; t++)
        CHECK(pthread_create(&threads[t], NULL, race_main, (void *)(uintptr_t)t) == 0);
    for (int round = 0; round < RACE_ROUNDS; round++) {
        race_parent = 0xe0000000ull + (uint64_t)round * 0x40;
        CHECK_EQ_INT(create_obj(race_parent, T_OBJ, context, 0, 0), LIVETRACK_OK);
        pthread_barrier_wait(&race_barrier); /* go */
        pthread_barrier_wait(&race_barrier); /* round done */
        CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, race_parent, NULL), LIVETRACK_UNKNOWN);
        livetrack_object object;
        CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, context, &object), LIVETRACK_OK);
        CHECK_EQ_INT(object.holders, 0);
        CHECK_EQ_INT(object.refs, 1);
        CHECK_EQ_INT(live_objects(), base + 1);
    }
    for (int t = 0; t < WORKERS; t++)
        pthread_join(threads[t], NULL);
    pthread_barrier_destroy(&race_barrier);
    flush_thread_checks();
    CHECK_EQ_INT(release(context, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);
    /* some children must have found the parent live, and some dead */
    long holding = atomic_load(&race_children_holding);
    CHECK(holding > 0 && holding < (long)RACE_ROUNDS * WORKERS * RACE_CHILDREN);
    printf("racing parent: %ld of %d children held the parent or its context\n", holding,
           RACE_ROUNDS * WORKERS * RACE_CHILDREN);
}

/* ---- 3. handle reuse --------------------------------------------------------------- */

#define REUSE_HANDLES 3
#define REUSE_ITERATIONS 100000

static uint64_t reuse_parent;
static const uint64_t reuse_handles[REUSE_HANDLES] = {0xf0000040ull, 0xf0001080ull, 0xf00020c0ull};
static atomic_long reuse_status[6];
static atomic_long reuse_children;
static atomic_int reuse_running;
static long reuse_snapshots, reuse_replaced_seen;

/* The snapshot's index of the object (handle, seq), -1: none. Linear:
 * these snapshots hold a handful of objects. */
static long reuse_find(const livetrack_snapshot *snapshot, uint64_t handle, uint64_t seq)
{
    for (size_t i = 0; i < livetrack_snapshot_count(snapshot); i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        if (object->handle == handle && object->seq == seq)
            return (long)i;
    }
    return -1;
}

/* Snapshots while the handles are reused: every parent an object holds is
 * in the same snapshot (held, it cannot die), by handle and creation
 * number; of the objects at one handle, only the newest may still have
 * references (the older ones were replaced, and are there only while
 * their children keep them). */
static void *reuse_snapshot_main(void *arg)
{
    (void)arg;
    while (atomic_load_explicit(&reuse_running, memory_order_acquire)) {
        livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
        TCHECK(snapshot != NULL);
        size_t count = livetrack_snapshot_count(snapshot);
        int replaced = 0;
        for (size_t i = 0; i < count; i++) {
            const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
            uint64_t parent_seqs[2];
            TCHECK(livetrack_snapshot_parent_seqs(snapshot, i, parent_seqs) == LIVETRACK_OK);
            for (int k = 0; k < 2; k++) {
                TCHECK((object->parents[k] == 0) == (parent_seqs[k] == 0));
                if (object->parents[k]) {
                    long parent = reuse_find(snapshot, object->parents[k], parent_seqs[k]);
                    TCHECK(parent >= 0 && livetrack_snapshot_at(snapshot, (size_t)parent)->holders > 0);
                }
            }
            /* newest first: a later entry at this handle is older */
            for (size_t j = i + 1; j < count; j++) {
                const livetrack_object *older = livetrack_snapshot_at(snapshot, j);
                if (older->handle != object->handle)
                    continue;
                TCHECK(older->seq < object->seq && older->refs == 0 && older->holders > 0);
                replaced = 1;
            }
        }
        reuse_snapshots++;
        reuse_replaced_seen += replaced;
        livetrack_snapshot_free(snapshot);
        /* A snapshot takes every shard lock: back to back, they starved
         * the workers on two cores (seconds instead of a fraction). */
        nanosleep(&(struct timespec){0, 20000}, NULL);
    }
    return NULL;
}

static void *reuse_main(void *arg)
{
    int id = (int)(uintptr_t)arg;
    uint64_t state = 4242 + (uint64_t)id;
    uint64_t child = 0xf1000000ull + ((uint64_t)id << 16);
    for (int i = 0; i < REUSE_ITERATIONS; i++) {
        uint64_t handle = reuse_handles[rnd(&state) % REUSE_HANDLES];
        TCHECK(create_obj(handle, T_OBJ, reuse_parent, 0, 0) == LIVETRACK_OK);
        int with_child = rnd(&state) % 2;
        if (with_child) {
            TCHECK(create_obj(child, T_CHILD, handle, 0, 0) == LIVETRACK_OK);
            atomic_fetch_add_explicit(&reuse_children, 1, memory_order_relaxed);
        }
        livetrack_status status = release(handle, NULL);
        TCHECK(status == LIVETRACK_OK || status == LIVETRACK_UNKNOWN || status == LIVETRACK_NOT_OWNED);
        atomic_fetch_add_explicit(&reuse_status[status], 1, memory_order_relaxed);
        if (with_child) {
            if (rnd(&state) % 4 == 0)
                sched_yield();
            TCHECK(release(child, NULL) == LIVETRACK_OK); /* only this thread has it */
        }
    }
    return NULL;
}

static void test_handle_reuse(void)
{
    uint64_t base = live_objects();
    livetrack_stats before, after;
    livetrack_get_stats(&before);
    reuse_parent = 0xf0f00000ull;
    CHECK_EQ_INT(create_obj(reuse_parent, T_CTX, 0, 0, 0), LIVETRACK_OK);
    pthread_t threads[WORKERS], snapshotter;
    atomic_store(&reuse_running, 1);
    CHECK(pthread_create(&snapshotter, NULL, reuse_snapshot_main, NULL) == 0);
    for (int t = 0; t < WORKERS; t++)
        CHECK(pthread_create(&threads[t], NULL, reuse_main, (void *)(uintptr_t)t) == 0);
    for (int t = 0; t < WORKERS; t++)
        pthread_join(threads[t], NULL);
    atomic_store(&reuse_running, 0);
    pthread_join(snapshotter, NULL);
    flush_thread_checks();

    /* what is left: at most one object per reused handle */
    int remaining = 0;
    for (int h = 0; h < REUSE_HANDLES; h++) {
        livetrack_object object;
        if (livetrack_lookup(LIVETRACK_DOMAIN_USER, reuse_handles[h], &object) != LIVETRACK_OK)
            continue;
        remaining++;
        CHECK_EQ_INT(object.holders, 0); /* every child was released */
        CHECK(object.refs > 0);
        CHECK_EQ_INT(object.parents[0], reuse_parent);
        CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_OBJ, reuse_handles[h], NULL), LIVETRACK_OK);
    }
    livetrack_get_stats(&after);
    CHECK_EQ_INT(after.live_objects, base + 1);
    /* no hold on the parent left behind by a replaced or dying object */
    livetrack_object parent;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, reuse_parent, &parent), LIVETRACK_OK);
    CHECK_EQ_INT(parent.refs, 1);
    CHECK_EQ_INT(parent.holders, 0);
    CHECK_EQ_INT(release(reuse_parent, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);
    CHECK(after.replaced > before.replaced);
    CHECK_EQ_INT(after.created - before.created,
                 1 + (uint64_t)WORKERS * REUSE_ITERATIONS + (uint64_t)atomic_load(&reuse_children));
    CHECK(remaining <= REUSE_HANDLES);
    CHECK(reuse_replaced_seen > 0); /* the snapshots did see the state in question */
    printf("handle reuse: %llu replacements; releases ok %ld, unknown %ld, not owned %ld; "
           "%ld snapshots, %ld with a replaced object kept alive\n",
           (unsigned long long)(after.replaced - before.replaced), atomic_load(&reuse_status[LIVETRACK_OK]),
           atomic_load(&reuse_status[LIVETRACK_UNKNOWN]), atomic_load(&reuse_status[LIVETRACK_NOT_OWNED]),
           reuse_snapshots, reuse_replaced_seen);
}

/* ---- 4. releasing inside a snapshot walk ----------------------------------------------- */

static void test_release_during_walk(void)
{
    uint64_t base = live_objects();
    enum { N = 200 };
    uint64_t handles[N];
    /* every fourth object is a child of the previous one, which is then
     * released (kept alive by the child) */
    for (int i = 0; i < N; i++) {
        handles[i] = 0xa0000000ull + (uint64_t)i * 0x1040;
        uint64_t parent = (i % 4 == 3) ? handles[i - 1] : 0;
        CHECK_EQ_INT(create_obj(handles[i], i % 4 == 3 ? T_CHILD : T_OBJ, parent, 0, 0), LIVETRACK_OK);
        if (i % 4 == 3)
            CHECK_EQ_INT(release(handles[i - 1], NULL), LIVETRACK_OK);
    }
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    size_t count = livetrack_snapshot_count(snapshot);
    CHECK_EQ_INT(count, base + N);
    livetrack_object *copy = malloc(sizeof *copy * (count ? count : 1));
    for (size_t i = 0; i < count; i++)
        copy[i] = *livetrack_snapshot_at(snapshot, i);

    /* walk newest first: children come before the parents they keep */
    size_t released = 0, created_meanwhile = 0;
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        if (object->handle < 0xa0000000ull || object->handle >= 0xa0000000ull + N * 0x1040)
            continue;
        if (object->refs == 0) {
            /* kept alive by the child walked just before: already gone */
            CHECK(!livetrack_still_live(object));
            CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, object->handle, NULL), LIVETRACK_UNKNOWN);
            continue;
        }
        CHECK(livetrack_still_live(object));
        CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, object->handle, NULL), LIVETRACK_OK);
        CHECK(!livetrack_still_live(object));
        released++;
        /* and create something new while walking */
        uint64_t fresh = 0xb0000000ull + (uint64_t)i * 0x40;
        CHECK_EQ_INT(create_obj(fresh, T_OBJ, 0, 0, 0), LIVETRACK_OK);
        created_meanwhile++;
    }
    CHECK_EQ_INT(released, N - N / 4);
    /* the snapshot did not change under the walk */
    CHECK_EQ_INT(livetrack_snapshot_count(snapshot), count);
    for (size_t i = 0; i < count; i++)
        CHECK(memcmp(&copy[i], livetrack_snapshot_at(snapshot, i), sizeof copy[i]) == 0);
    livetrack_snapshot_free(snapshot);
    free(copy);

    CHECK_EQ_INT(live_objects(), base + created_meanwhile);
    /* release the objects created during the walk */
    snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    for (size_t i = 0; i < livetrack_snapshot_count(snapshot); i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        if (object->handle >= 0xb0000000ull && object->handle < 0xc0000000ull)
            CHECK_EQ_INT(release(object->handle, NULL), LIVETRACK_OK);
    }
    livetrack_snapshot_free(snapshot);
    CHECK_EQ_INT(live_objects(), base);
}

/* The same, with other threads churning the registry during the walk. */
static atomic_int churn_stop;
static void *churn_main(void *arg)
{
    uint64_t handle = 0x400000000000ull + ((uint64_t)(uintptr_t)arg << 32);
    while (!atomic_load(&churn_stop)) {
        for (int i = 0; i < 64; i++)
            TCHECK(create_obj(handle + (uint64_t)i * 0x40, T_EVENT, 0, 0, 0) == LIVETRACK_OK);
        for (int i = 0; i < 64; i++)
            TCHECK(release(handle + (uint64_t)i * 0x40, NULL) == LIVETRACK_OK);
    }
    return NULL;
}

static void test_walk_with_churn(void)
{
    uint64_t base = live_objects();
    enum { N = 500 };
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(create_obj(0xa8000000ull + (uint64_t)i * 0x40, T_OBJ, 0, 0, 0), LIVETRACK_OK);
    atomic_store(&churn_stop, 0);
    pthread_t threads[2];
    for (int t = 0; t < 2; t++)
        CHECK(pthread_create(&threads[t], NULL, churn_main, (void *)(uintptr_t)(t + 1)) == 0);
    for (int pass = 0; pass < 3; pass++) {
        livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
        size_t ours = 0;
        uint64_t previous = UINT64_MAX;
        for (size_t i = 0; i < livetrack_snapshot_count(snapshot); i++) {
            const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
            CHECK(object->seq < previous);
            previous = object->seq;
            if (object->type != T_OBJ)
                continue;
            ours++;
            if (pass < 2)
                continue;
            CHECK(livetrack_still_live(object));
            CHECK_EQ_INT(release(object->handle, NULL), LIVETRACK_OK);
            CHECK(!livetrack_still_live(object));
        }
        CHECK_EQ_INT(ours, N);
        livetrack_snapshot_free(snapshot);
    }
    atomic_store(&churn_stop, 1);
    for (int t = 0; t < 2; t++)
        pthread_join(threads[t], NULL);
    flush_thread_checks();
    CHECK_EQ_INT(live_objects(), base);
}

/* Set k names its types "set<k>_<index>" and has 2 + k of them. */
#define NAME_SETS 3
static const char *const name_sets[NAME_SETS][2 + NAME_SETS - 1] = {
    {"set0_0", "set0_1"}, {"set1_0", "set1_1", "set1_2"}, {"set2_0", "set2_1", "set2_2", "set2_3"}};
static const char *const set_api_names[NAME_SETS] = {"api0", "api1", "api2"};
static atomic_int declaring;

static void *declarer_main(void *arg)
{
    unsigned first = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; i < 3000; i++) {
        unsigned set = (first + i) % NAME_SETS;
        TCHECK(livetrack_declare_types(LIVETRACK_DOMAIN_LEVEL_ZERO, set_api_names[set], name_sets[set], 2 + set) ==
               LIVETRACK_OK);
    }
    atomic_fetch_sub(&declaring, 1);
    return NULL;
}

static void *name_reader_main(void *arg)
{
    (void)arg;
    char expected[16];
    while (atomic_load(&declaring) > 0) {
        for (unsigned type = 0; type < 2 + NAME_SETS; type++) {
            const char *name = livetrack_type_name(LIVETRACK_DOMAIN_LEVEL_ZERO, type);
            int matches = !strcmp(name, "object");
            for (unsigned set = 0; set < NAME_SETS && !matches; set++) {
                snprintf(expected, sizeof expected, "set%u_%u", set, type);
                matches = !strcmp(name, expected) && type < 2 + set;
            }
            TCHECK(matches);
        }
        const char *api = livetrack_domain_name(LIVETRACK_DOMAIN_LEVEL_ZERO);
        TCHECK(!strcmp(api, "api0") || !strcmp(api, "api1") || !strcmp(api, "api2") || !strcmp(api, "Level Zero"));
    }
    return NULL;
}

static void test_declarations_while_read(void)
{
    enum { DECLARERS = 2, READERS = 2 };
    pthread_t threads[DECLARERS + READERS];
    atomic_store(&declaring, DECLARERS);
    for (int t = 0; t < DECLARERS; t++)
        CHECK(pthread_create(&threads[t], NULL, declarer_main, (void *)(uintptr_t)t) == 0);
    for (int t = DECLARERS; t < DECLARERS + READERS; t++)
        CHECK(pthread_create(&threads[t], NULL, name_reader_main, NULL) == 0);
    for (int t = 0; t < DECLARERS + READERS; t++)
        pthread_join(threads[t], NULL);
    flush_thread_checks();
}

/* ---- a refused destroy while the last child goes ----------------------------- */

/* A parent the program destroyed lives on through its one child. Its
 * destroy is refused (put back) on one thread while the child is
 * released on another, so its last hold may go between the restore's
 * look and its update: whichever comes first, the parent must end up
 * live with the one reference given back. */
#define RESTORE_ROUNDS 4000

static pthread_barrier_t restore_barrier;
static uint64_t restore_child;

static void *release_child_main(void *arg)
{
    (void)arg;
    for (int round = 0; round < RESTORE_ROUNDS; round++) {
        pthread_barrier_wait(&restore_barrier);
        TCHECK(release(restore_child, NULL) == LIVETRACK_OK);
        pthread_barrier_wait(&restore_barrier);
    }
    return NULL;
}

static void test_restore_while_child_goes(void)
{
    uint64_t base = live_objects();
    pthread_barrier_init(&restore_barrier, NULL, 2);
    pthread_t releaser;
    CHECK(pthread_create(&releaser, NULL, release_child_main, NULL) == 0);
    int lost = 0;
    for (int round = 0; round < RESTORE_ROUNDS; round++) {
        uint64_t parent = 0xf1000000ull + (uint64_t)round * 0x40;
        restore_child = 0xf2000000ull + (uint64_t)round * 0x40;
        CHECK_EQ_INT(create_obj(parent, T_OBJ, 0, 0, 0), LIVETRACK_OK);
        CHECK_EQ_INT(create_obj(restore_child, T_CHILD, parent, 0, 0), LIVETRACK_OK);
        livetrack_object before;
        CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, parent, &before), LIVETRACK_OK);
        CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_OBJ, parent, NULL), LIVETRACK_OK);
        pthread_barrier_wait(&restore_barrier); /* the child's release starts */
        /* The other thread wakes a while after the barrier: a delay that
         * grows with the round sweeps the restore across its release. */
        for (volatile int spin = 0; spin < (round % 200) * 25; spin++)
            ;
        CHECK_EQ_INT(livetrack_restore(&before, 1, NULL, NULL), LIVETRACK_OK);
        pthread_barrier_wait(&restore_barrier);
        livetrack_object after;
        if (livetrack_lookup(LIVETRACK_DOMAIN_USER, parent, &after) != LIVETRACK_OK) {
            lost++;
            continue;
        }
        CHECK_EQ_INT(after.seq, before.seq);
        CHECK_EQ_INT(after.refs, 1);
        CHECK_EQ_INT(after.holders, 0);
        CHECK_EQ_INT(release(parent, NULL), LIVETRACK_OK);
    }
    pthread_join(releaser, NULL);
    pthread_barrier_destroy(&restore_barrier);
    flush_thread_checks();
    CHECK_EQ_INT(lost, 0);
    CHECK_EQ_INT(live_objects(), base);
}

int main(void)
{
    CHECK_EQ_INT(livetrack_declare_types(LIVETRACK_DOMAIN_USER, "threads", type_names, T_COUNT), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), 0);
    test_shared_parents();
    test_racing_parent();
    test_handle_reuse();
    test_release_during_walk();
    test_walk_with_churn();
    test_declarations_while_read();
    test_restore_while_child_goes();
    CHECK_EQ_INT(live_objects(), 0);
    return check_summary("test_registry_threads");
}
