/*
 * Interleavings of two threads that a scheduler hands out only once in a
 * long while, forced: the core under test is built with LT_TEST_HOOKS
 * (layer/core/test_hooks.h), and the registry calls lt_test_pause(),
 * defined below, at chosen points. Thread A, stopped there, has thread B
 * run a step and waits for it to finish.
 *
 * The parent cache's window. A create names a parent that its thread
 * looked up before (the cached node); meanwhile that parent died and its
 * node went to thread B's object Y. A must take no hold on Y, not even
 * for an instant: were A's hold on Y when B releases its last reference,
 * Y would stay in the table, "released but kept alive" by A, after its
 * driver freed it; a report in that window (livetrack_while_live) would
 * ask the driver about freed memory (ext/live_object_tracking.md).
 *
 * B therefore, while A is stopped before its hold on the cached node,
 * releases Y and creates it again in the same node (the worst case: the
 * node's counts are as they were), and, while A is stopped after it,
 * releases Y again: Y must be gone at once, for lookups, livetrack_while_live
 * and snapshots. A's child then holds the live parent of its handle.
 *
 * The same window when the cached parent is replaced at its handle. B,
 * while A is stopped before its hold, releases the parent (its first
 * child keeps it alive) and creates a new parent at the same handle (the
 * driver reusing the address): the old node is now replaced, kept by its
 * child, in snapshots but no longer the handle's object. A's cached hold
 * must fail (the replacement moved the node's incarnation) and A's child
 * hold the new parent, not the replaced one; while A is stopped after
 * the attempt, B releases the first child, and the replaced parent must
 * then be gone at once (no hold of A's keeps it, not even for an
 * instant).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "livetrack/livetrack.h"
#include "test_hooks.h"

enum { T_PARENT, T_CHILD, T_OTHER, T_COUNT };
static const char *const type_names[T_COUNT] = {"parent", "child", "other"};

#define PARENT_HANDLE 0x5000ull
#define FIRST_CHILD 0x900000ull
#define SECOND_CHILD 0x900010ull
#define FIRST_CANDIDATE 0x100000ull

/* ---- thread B runs steps for A ---------------------------------------- */

typedef void (*step_fn)(void);
static pthread_mutex_t step_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t step_changed = PTHREAD_COND_INITIALIZER;
static step_fn step_wanted; /* under step_lock: the step B is to run, NULL when done */
static int b_exit;

static void *thread_b(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&step_lock);
    for (;;) {
        while (!step_wanted && !b_exit)
            pthread_cond_wait(&step_changed, &step_lock);
        if (b_exit)
            break;
        step_fn step = step_wanted;
        pthread_mutex_unlock(&step_lock);
        step();
        pthread_mutex_lock(&step_lock);
        step_wanted = NULL;
        pthread_cond_broadcast(&step_changed);
    }
    pthread_mutex_unlock(&step_lock);
    return NULL;
}

/* Run `step` on thread B and wait until it has finished. */
static void run_on_b(step_fn step)
{
    pthread_mutex_lock(&step_lock);
    step_wanted = step;
    pthread_cond_broadcast(&step_changed);
    while (step_wanted)
        pthread_cond_wait(&step_changed, &step_lock);
    pthread_mutex_unlock(&step_lock);
}

/* ---- objects ----------------------------------------------------------- */

static livetrack_status create(uint64_t handle, unsigned type, uint64_t parent)
{
    /* the fields not named are zero: no owner, second parent, flags or call */
    livetrack_new_object request = {
        .domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = 16, .parent = parent};
    return livetrack_create(&request);
}

static livetrack_status release(uint64_t handle, unsigned type, uint32_t *refs_left)
{
    return livetrack_release(LIVETRACK_DOMAIN_USER, type, handle, refs_left, NULL);
}

/* The registry's node of a live object: a keeper is its node (registry.c),
 * which lets the test see which node an object got. */
static const void *node_of(uint64_t handle)
{
    livetrack_keeper *keeper = livetrack_keep_alive(LIVETRACK_DOMAIN_USER, handle);
    livetrack_let_go(keeper);
    return keeper;
}

static int in_snapshot(uint64_t handle)
{
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    int found = 0;
    for (size_t i = 0; snapshot && i < livetrack_snapshot_count(snapshot); i++)
        found |= livetrack_snapshot_at(snapshot, i)->handle == handle;
    livetrack_snapshot_free(snapshot);
    return found;
}

static const void *first_parent_node; /* the node the first parent had, A's cached one */
static uint64_t reused_handle;        /* B's object Y, made in that node */

/* B: make objects until one gets the first parent's node (the first one
 * made in that node's shard does: it heads the shard's free list). */
static void make_object_in_cached_node(void)
{
    for (uint64_t handle = FIRST_CANDIDATE; handle < FIRST_CANDIDATE + (16u << 16); handle += 16) {
        CHECK_EQ_INT(create(handle, T_OTHER, 0), LIVETRACK_OK);
        if (node_of(handle) == first_parent_node) {
            reused_handle = handle;
            return;
        }
        CHECK_EQ_INT(release(handle, T_OTHER, NULL), LIVETRACK_OK);
    }
}

/* Y is released by its only reference: gone at once. */
static void check_release_ends(uint64_t handle)
{
    livetrack_object before;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, &before), LIVETRACK_OK);
    CHECK_EQ_INT(before.holders, 0);
    uint32_t refs_left = 99;
    CHECK_EQ_INT(release(handle, T_OTHER, &refs_left), LIVETRACK_OK);
    CHECK_EQ_INT(refs_left, 0);
    livetrack_object after;
    livetrack_status found = livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, &after);
    CHECK_EQ_INT(found, LIVETRACK_UNKNOWN);
    if (found == LIVETRACK_OK)
        fprintf(stderr, "  released, yet live with refs %u, holders %u\n", after.refs, after.holders);
    CHECK(!livetrack_still_live(&before));
    CHECK(!in_snapshot(handle));
    livetrack_object released;
    CHECK_EQ_INT(livetrack_released(LIVETRACK_DOMAIN_USER, handle, &released), LIVETRACK_OK);
}

static int asked_about_freed; /* livetrack_while_live ran its function on a released object */
static void ask_driver(void *context)
{
    (void)context;
    asked_about_freed = 1;
}

/* B, A stopped before its hold on the cached node: Y released and made
 * again in the same node. */
static void replace_object_in_cached_node(void)
{
    check_release_ends(reused_handle);
    CHECK_EQ_INT(create(reused_handle, T_OTHER, 0), LIVETRACK_OK);
    CHECK(node_of(reused_handle) == first_parent_node);
}

/* B, A stopped after its hold on the cached node: Y released. A report
 * asking about Y now (the OpenCL extension's) must not find it live. */
static void release_object_in_cached_node(void)
{
    livetrack_object before;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, reused_handle, &before), LIVETRACK_OK);
    check_release_ends(reused_handle);
    CHECK(!livetrack_while_live(&before, ask_driver, NULL));
    CHECK(!asked_about_freed);
}

/* ---- the hook ------------------------------------------------------------- */

static pthread_t thread_a;
static atomic_int armed;     /* A's next create through its cache stops */
static atomic_int stops_seen; /* bit per point reached */
/* What B runs at each point: set by the test before it arms A. */
static step_fn step_at_read, step_at_tried;

/* Default visibility (the build hides symbols): the library calls it. */
__attribute__((visibility("default"))) void lt_test_pause(enum lt_test_point point)
{
    if (!atomic_load(&armed) || !pthread_equal(pthread_self(), thread_a))
        return;
    atomic_fetch_or(&stops_seen, 1 << point);
    if (point == LT_TEST_CACHED_PARENT_READ)
        run_on_b(step_at_read);
    else if (point == LT_TEST_CACHED_PARENT_TRIED)
        run_on_b(step_at_tried);
}

/* Thread A creates `child` of `parent` through its cache, B running
 * `at_read` where A has read the cached node and `at_tried` where A has
 * tried its hold; both points must be reached. */
static void create_through_window(uint64_t child, uint64_t parent, step_fn at_read, step_fn at_tried)
{
    step_at_read = at_read;
    step_at_tried = at_tried;
    atomic_store(&stops_seen, 0);
    atomic_store(&armed, 1);
    CHECK_EQ_INT(create(child, T_CHILD, parent), LIVETRACK_OK);
    atomic_store(&armed, 0);
    CHECK_EQ_INT(atomic_load(&stops_seen), (1 << LT_TEST_CACHED_PARENT_READ) | (1 << LT_TEST_CACHED_PARENT_TRIED));
}

static void test_cached_parent_node_reused(void)
{
    livetrack_type type;
    /* The first parent, and a child of it: A's cache now names its node. */
    CHECK_EQ_INT(create(PARENT_HANDLE, T_PARENT, 0), LIVETRACK_OK);
    first_parent_node = node_of(PARENT_HANDLE);
    CHECK_EQ_INT(livetrack_live_type(LIVETRACK_DOMAIN_USER, PARENT_HANDLE, &type), LIVETRACK_OK);
    CHECK_EQ_INT(create(FIRST_CHILD, T_CHILD, PARENT_HANDLE), LIVETRACK_OK);
    CHECK_EQ_INT(release(FIRST_CHILD, T_CHILD, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(release(PARENT_HANDLE, T_PARENT, NULL), LIVETRACK_OK);

    run_on_b(make_object_in_cached_node);
    CHECK(reused_handle != 0);
    if (!reused_handle)
        return;
    /* The per-thread check cache names the node too: not the parent's now. */
    CHECK_EQ_INT(livetrack_live_type(LIVETRACK_DOMAIN_USER, PARENT_HANDLE, &type), LIVETRACK_UNKNOWN);

    /* A second parent at the same handle (another node), and a child
     * named by that handle, made through the cache's window. */
    CHECK_EQ_INT(create(PARENT_HANDLE, T_PARENT, 0), LIVETRACK_OK);
    CHECK(node_of(PARENT_HANDLE) != first_parent_node);
    create_through_window(SECOND_CHILD, PARENT_HANDLE, replace_object_in_cached_node, release_object_in_cached_node);

    /* The child holds the second parent, and nothing else is held. */
    livetrack_object child, parent;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, SECOND_CHILD, &child), LIVETRACK_OK);
    CHECK_EQ_INT(child.parents[0], PARENT_HANDLE);
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, PARENT_HANDLE, &parent), LIVETRACK_OK);
    CHECK_EQ_INT(parent.holders, 1);
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, reused_handle, NULL), LIVETRACK_UNKNOWN);
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.live_objects, 2);

    CHECK_EQ_INT(release(SECOND_CHILD, T_CHILD, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(release(PARENT_HANDLE, T_PARENT, NULL), LIVETRACK_OK);
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.live_objects, 0);
}

/* ---- a cached parent replaced at its handle ------------------------------ */

#define REPLACED_PARENT 0x7000ull
#define KEEPING_CHILD 0x970000ull
#define LATER_CHILD 0x970010ull

static uint64_t old_parent_seq, new_parent_seq;

/* The snapshot's object with this creation number, NULL: none; its
 * parents' creation numbers in parent_seqs. */
static const livetrack_object *snapshot_find_seq(const livetrack_snapshot *snapshot, uint64_t seq,
                                                 uint64_t parent_seqs[2])
{
    for (size_t i = 0; i < livetrack_snapshot_count(snapshot); i++) {
        if (livetrack_snapshot_at(snapshot, i)->seq != seq)
            continue;
        CHECK_EQ_INT(livetrack_snapshot_parent_seqs(snapshot, i, parent_seqs), LIVETRACK_OK);
        return livetrack_snapshot_at(snapshot, i);
    }
    return NULL;
}

/* The old parent in a snapshot now: refs 0 and `holders` holders, or
 * (holders < 0) not there. */
static void check_old_parent(int holders)
{
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    uint64_t parent_seqs[2];
    const livetrack_object *old = snapshot_find_seq(snapshot, old_parent_seq, parent_seqs);
    if (holders < 0) {
        CHECK(old == NULL);
    } else {
        CHECK(old != NULL);
        if (old) {
            CHECK_EQ_INT(old->handle, REPLACED_PARENT);
            CHECK_EQ_INT(old->refs, 0);
            CHECK_EQ_INT(old->holders, (unsigned)holders);
        }
    }
    livetrack_snapshot_free(snapshot);
}

/* B, A stopped before its hold on the cached parent: the parent released
 * (its first child keeps it) and a new parent made at its handle. */
static void replace_cached_parent(void)
{
    CHECK_EQ_INT(release(REPLACED_PARENT, T_PARENT, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(create(REPLACED_PARENT, T_PARENT, 0), LIVETRACK_OK);
    livetrack_object parent;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, REPLACED_PARENT, &parent), LIVETRACK_OK);
    new_parent_seq = parent.seq;
    CHECK(new_parent_seq != old_parent_seq);
    CHECK(node_of(REPLACED_PARENT) != first_parent_node); /* the successor is another node */
    check_old_parent(1); /* kept by its child alone */
}

/* B, A stopped after its attempt: the first child goes, and with it the
 * replaced parent, at once (a hold of A's on it would keep it). */
static void release_keeping_child(void)
{
    check_old_parent(1);
    CHECK_EQ_INT(release(KEEPING_CHILD, T_CHILD, NULL), LIVETRACK_OK);
    check_old_parent(-1);
    livetrack_object parent;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, REPLACED_PARENT, &parent), LIVETRACK_OK);
    CHECK_EQ_INT(parent.seq, new_parent_seq);
    CHECK_EQ_INT(parent.holders, 0); /* A's hold on it is not taken yet: the cached one failed */
}

static void test_cached_parent_replaced(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    uint64_t live_before = stats.live_objects;
    /* A parent and a child of it: A's cache now names the parent's node. */
    CHECK_EQ_INT(create(REPLACED_PARENT, T_PARENT, 0), LIVETRACK_OK);
    livetrack_object parent;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, REPLACED_PARENT, &parent), LIVETRACK_OK);
    old_parent_seq = parent.seq;
    first_parent_node = node_of(REPLACED_PARENT);
    CHECK_EQ_INT(create(KEEPING_CHILD, T_CHILD, REPLACED_PARENT), LIVETRACK_OK);

    create_through_window(LATER_CHILD, REPLACED_PARENT, replace_cached_parent, release_keeping_child);

    /* The later child holds the new parent, by handle and creation number. */
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    livetrack_object child;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, LATER_CHILD, &child), LIVETRACK_OK);
    uint64_t parent_seqs[2] = {0, 0};
    const livetrack_object *listed = snapshot_find_seq(snapshot, child.seq, parent_seqs);
    CHECK(listed && listed->parents[0] == REPLACED_PARENT);
    CHECK_EQ_INT(parent_seqs[0], new_parent_seq);
    livetrack_snapshot_free(snapshot);
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, REPLACED_PARENT, &parent), LIVETRACK_OK);
    CHECK_EQ_INT(parent.holders, 1);
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.live_objects, live_before + 2);

    CHECK_EQ_INT(release(LATER_CHILD, T_CHILD, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(release(REPLACED_PARENT, T_PARENT, NULL), LIVETRACK_OK);
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.live_objects, live_before);
}

int main(void)
{
    CHECK_EQ_INT(livetrack_declare_types(LIVETRACK_DOMAIN_USER, "interleave", type_names, T_COUNT), LIVETRACK_OK);
    thread_a = pthread_self();
    pthread_t b;
    pthread_create(&b, NULL, thread_b, NULL);

    test_cached_parent_node_reused();
    test_cached_parent_replaced();

    pthread_mutex_lock(&step_lock);
    b_exit = 1;
    pthread_cond_broadcast(&step_changed);
    pthread_mutex_unlock(&step_lock);
    pthread_join(b, NULL);
    return check_summary("test_registry_interleave");
}
