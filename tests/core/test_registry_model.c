/*
 * Model-based test of the registry: long random sequences of operations
 * over a small pool of handles, each checked against a reference model
 * kept in this file.
 *
 * The model tracks objects by identity (not by handle), because a handle
 * that is created again while live replaces the old object, which may stay
 * while children still hold it: its handle names the new object, but
 * snapshots and the live counts still show it (released, kept alive).
 *
 *   refs     - references the application holds
 *   holders  - holds by live (or stale but still held) children
 *   linked   - the handle maps to this object
 *   alive    - refs + holders > 0: in the registry, in snapshots and counts
 *
 * When an object dies it drops one hold on each of its parents, which may
 * die in turn. A stale replacement takes the handle from the old object
 * and drops its refs to 0; it dies at once when no child holds it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "livetrack/livetrack.h"

#define NTYPES 4u
#define POOL 48
#define SEEDS 5
#define OPS_PER_SEED 40000
#define SNAPSHOT_EVERY 64
#define MAX_FAILURES 30

static const char *const type_names[NTYPES] = {"model_ctx", "model_queue", "model_mem", "model_event"};
static const char owner_a_tag = 'a', owner_b_tag = 'b';
static const void *const owners[3] = {NULL, &owner_a_tag, &owner_b_tag};

/* ---- PRNG (splitmix64) -------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static unsigned rnd_below(unsigned n) { return (unsigned)(rnd() % n); }

/* ---- the reference model ------------------------------------------------ */

typedef struct mobj {
    uint64_t handle;
    int slot; /* pool index of its handle */
    unsigned type;
    uint32_t refs, holders;
    int parents[2]; /* object ids, -1: none */
    int linked, alive;
    uint64_t bytes;
    const void *owner;
    uint64_t seq;
    livetrack_object desc; /* as looked up right after creation */
} mobj;

static mobj *objs;
static int nobjs, objs_cap;
static int cur[POOL]; /* linked object of each pool handle, -1: none */
/* Objects replaced while children held them (alive, not linked); dead
 * ones are dropped when the list is read. */
static int *replaced;
static int replaced_count, replaced_cap;
static uint64_t pool_handles[POOL];
static uint64_t model_created;  /* objects created */
static uint64_t last_seq;       /* the newest object's creation number */
static int seq_counted;         /* LIVETRACK_CREATION_ORDER=counter: numbers go 1, 2, 3 ... */
static uint64_t model_replaced; /* stale replacements */
static uint64_t unknown_base;   /* handles never in the pool */

/* What the generator reached, so that the test cannot pass by never
 * getting into the interesting states. */
static struct {
    long replaced_free;     /* stale replacement of an object no child holds */
    long replaced_held;     /* stale replacement of an object children hold */
    long replaced_by_child; /* the new object holds the object it replaces */
    long stale_died_later;  /* an unlinked stale object freed by its last child */
    long via_first_parent;  /* a hold taken through VIA_FIRST_PARENT */
    long kept_alive_ops;    /* an operation on an object with refs 0, holders > 0 */
    long cascade;           /* a death that freed a parent too */
    long status[6];
} seen;

static int slot_of_handle(uint64_t handle)
{
    for (int i = 0; i < POOL; i++)
        if (pool_handles[i] == handle)
            return i;
    return -1;
}

static int linked_object(uint64_t handle)
{
    int slot = slot_of_handle(handle);
    return slot < 0 ? -1 : cur[slot];
}

static void model_die(int o)
{
    /* explicit stack: parent chains may get long */
    int *stack = malloc(sizeof *stack * (size_t)(nobjs + 1));
    int top = 0;
    stack[top++] = o;
    while (top) {
        int d = stack[--top];
        mobj *dead = &objs[d];
        dead->alive = 0;
        if (d != o)
            seen.cascade++;
        if (!dead->linked && dead->refs == 0 && d != o)
            seen.stale_died_later++;
        if (dead->linked) {
            dead->linked = 0;
            cur[dead->slot] = -1;
        }
        for (int i = 0; i < 2; i++) {
            int p = dead->parents[i];
            if (p < 0)
                continue;
            if (objs[p].holders == 0 || !objs[p].alive) {
                fprintf(stderr, "model bug: dropping a hold that does not exist\n");
                abort();
            }
            objs[p].holders--;
            if (objs[p].refs + objs[p].holders == 0)
                stack[top++] = p;
        }
    }
    free(stack);
}

static int model_new_object(void)
{
    if (nobjs == objs_cap) {
        objs_cap = objs_cap ? objs_cap * 2 : 1024;
        objs = realloc(objs, sizeof *objs * (size_t)objs_cap);
        if (!objs)
            abort();
    }
    memset(&objs[nobjs], 0, sizeof objs[nobjs]);
    return nobjs++;
}

static void note_replaced(int o)
{
    if (replaced_count == replaced_cap) {
        replaced_cap = replaced_cap ? replaced_cap * 2 : 64;
        replaced = realloc(replaced, sizeof *replaced * (size_t)replaced_cap);
        if (!replaced)
            abort();
    }
    replaced[replaced_count++] = o;
}

/* Drop the replaced objects that died since. */
static void prune_replaced(void)
{
    int kept = 0;
    for (int i = 0; i < replaced_count; i++)
        if (objs[replaced[i]].alive)
            replaced[kept++] = replaced[i];
    replaced_count = kept;
}

/* The objects in the registry (linked, or replaced and kept alive). */
static int model_live_count(const void *owner, uint64_t *bytes)
{
    int count = 0;
    uint64_t sum = 0;
    for (int i = 0; i < POOL; i++) {
        if (cur[i] < 0)
            continue;
        if (owner && objs[cur[i]].owner != owner)
            continue;
        count++;
        sum += objs[cur[i]].bytes;
    }
    prune_replaced();
    for (int i = 0; i < replaced_count; i++) {
        if (owner && objs[replaced[i]].owner != owner)
            continue;
        count++;
        sum += objs[replaced[i]].bytes;
    }
    if (bytes)
        *bytes = sum;
    return count;
}

/* The live object with creation number `seq` at pool slot `slot`, -1: none. */
static int live_object_of(int slot, uint64_t seq)
{
    if (cur[slot] >= 0 && objs[cur[slot]].seq == seq)
        return cur[slot];
    for (int i = 0; i < replaced_count; i++)
        if (objs[replaced[i]].alive && objs[replaced[i]].seq == seq)
            return replaced[i];
    return -1;
}

/* ---- comparing the registry with the model ------------------------------- */

static void check_object(const livetrack_object *got, int o)
{
    const mobj *m = &objs[o];
    CHECK_EQ_INT(got->domain, LIVETRACK_DOMAIN_USER);
    CHECK_EQ_INT(got->handle, m->handle);
    CHECK_EQ_INT(got->type, m->type);
    CHECK(got->type_name && strcmp(got->type_name, type_names[m->type]) == 0);
    CHECK_EQ_INT(got->seq, m->seq);
    CHECK_EQ_INT(got->bytes, m->bytes);
    CHECK_EQ_INT(got->refs, m->refs);
    CHECK_EQ_INT(got->holders, m->holders);
    CHECK(got->owner == m->owner);
    for (int i = 0; i < 2; i++) {
        int p = m->parents[i];
        CHECK_EQ_INT(got->parents[i], p < 0 ? 0 : objs[p].handle);
        CHECK_EQ_INT(got->parent_types[i], p < 0 ? 0 : objs[p].type);
    }
}

/* lookup of one handle agrees with the model */
static void check_handle(uint64_t handle)
{
    livetrack_object got;
    memset(&got, 0, sizeof got);
    livetrack_status status = livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, &got);
    int o = linked_object(handle);
    CHECK_EQ_INT(status, o < 0 ? LIVETRACK_UNKNOWN : LIVETRACK_OK);
    if (o >= 0 && status == LIVETRACK_OK)
        check_object(&got, o);
}

static long occupancy_sum, occupancy_samples;

static void check_stats(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    uint64_t bytes;
    int live = model_live_count(NULL, &bytes);
    occupancy_sum += live;
    occupancy_samples++;
    CHECK_EQ_INT(stats.live_objects, live);
    CHECK_EQ_INT(stats.live_bytes, bytes);
    CHECK_EQ_INT(stats.created, model_created);
    CHECK_EQ_INT(stats.replaced, model_replaced);
    CHECK_EQ_INT(stats.incomplete, 0);
}

static void check_snapshot_of(livetrack_domain domain, const void *owner)
{
    livetrack_snapshot *snapshot = livetrack_snapshot_take(domain, owner);
    CHECK(snapshot != NULL);
    if (!snapshot)
        return;
    size_t count = livetrack_snapshot_count(snapshot);
    CHECK_EQ_INT(count, model_live_count(owner, NULL));
    uint64_t previous_seq = UINT64_MAX;
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *got = livetrack_snapshot_at(snapshot, i);
        CHECK(got != NULL);
        if (!got)
            break;
        CHECK(got->seq < previous_seq); /* newest first, no duplicates */
        previous_seq = got->seq;
        int slot = slot_of_handle(got->handle);
        int o = slot < 0 ? -1 : live_object_of(slot, got->seq);
        CHECK(o >= 0);
        if (o < 0)
            continue;
        check_object(got, o);
        /* the very parents, though a handle may name two objects here */
        uint64_t parent_seqs[2];
        CHECK_EQ_INT(livetrack_snapshot_parent_seqs(snapshot, i, parent_seqs), LIVETRACK_OK);
        for (int k = 0; k < 2; k++)
            CHECK_EQ_INT(parent_seqs[k], objs[o].parents[k] < 0 ? 0 : objs[objs[o].parents[k]].seq);
        if (owner)
            CHECK(got->owner == owner);
        /* a replaced one is in the snapshot, but its handle names another */
        CHECK_EQ_INT(livetrack_still_live(got), objs[o].linked);
    }
    CHECK(livetrack_snapshot_at(snapshot, count) == NULL);
    livetrack_snapshot_free(snapshot);
}

static void check_everything(void)
{
    check_stats();
    check_snapshot_of(LIVETRACK_DOMAIN_USER, NULL);
    check_snapshot_of(LIVETRACK_DOMAIN_ANY, NULL);
    check_snapshot_of(LIVETRACK_DOMAIN_USER, owners[1]);
    check_snapshot_of(LIVETRACK_DOMAIN_ANY, owners[2]);
    livetrack_snapshot *other = livetrack_snapshot_take(LIVETRACK_DOMAIN_OPENCL, NULL);
    CHECK(other != NULL);
    CHECK_EQ_INT(livetrack_snapshot_count(other), 0);
    livetrack_snapshot_free(other);
    /* Recent objects and a sample of older ones: still live exactly when
     * the model says they are linked (a stale replaced one is not, even
     * while children still hold it). */
    for (int o = nobjs > 256 ? nobjs - 256 : 0; o < nobjs; o++)
        CHECK_EQ_INT(livetrack_still_live(&objs[o].desc), objs[o].linked);
    for (int i = 0; i < 64 && nobjs; i++) {
        int o = (int)rnd_below((unsigned)nobjs);
        CHECK_EQ_INT(livetrack_still_live(&objs[o].desc), objs[o].linked);
    }
}

/* ---- operations ---------------------------------------------------------- */

static unsigned pick_type(int o)
{
    unsigned r = rnd_below(100);
    if (r < 60 && o >= 0)
        return objs[o].type;
    if (r < 80)
        return LIVETRACK_ANY_TYPE;
    if (r < 95)
        return rnd_below(NTYPES);
    return NTYPES + rnd_below(LIVETRACK_MAX_TYPES - NTYPES); /* a type nothing has */
}

static livetrack_status expected_access(int o, unsigned type)
{
    if (o >= 0 && objs[o].refs == 0)
        seen.kept_alive_ops++;
    if (o < 0)
        return LIVETRACK_UNKNOWN;
    if (type != LIVETRACK_ANY_TYPE && type != objs[o].type)
        return LIVETRACK_WRONG_TYPE;
    return LIVETRACK_OK;
}

static uint64_t pick_parent_handle(void)
{
    unsigned r = rnd_below(100);
    if (r < 65)
        return pool_handles[rnd_below(POOL)]; /* live or not */
    if (r < 75)
        return unknown_base + rnd_below(1000) * 8; /* never live */
    return 0;
}

static void op_create(void)
{
    /* most creates use a free handle; the rest may replace a live one */
    int slot = (int)rnd_below(POOL);
    if (rnd_below(100) < 85) {
        int start = slot;
        while (cur[slot] >= 0) {
            slot = (slot + 1) % POOL;
            if (slot == start)
                break; /* pool full: replace */
        }
    }

    livetrack_new_object request;
    memset(&request, 0, sizeof request);
    request.domain = LIVETRACK_DOMAIN_USER;
    request.type = rnd_below(NTYPES);
    request.handle = pool_handles[slot];
    request.bytes = rnd_below(2) ? 0 : rnd() % 100000;
    request.owner = owners[rnd_below(10) < 6 ? 0 : 1 + rnd_below(2)];
    request.parent = rnd_below(100) < 55 ? pick_parent_handle() : 0;
    request.second_parent = rnd_below(100) < 20 ? pick_parent_handle() : 0;
    request.flags = rnd_below(100) < 20 ? LIVETRACK_PARENT_VIA_FIRST_PARENT : 0;

    /* model: hold the parents first (the registry does too, so a new
     * object may hold the very object it replaces) */
    int held[2] = {-1, -1};
    const void *owner = request.owner;
    uint64_t named[2] = {request.parent, request.second_parent};
    for (int k = 0; k < 2; k++) {
        int n = named[k] ? linked_object(named[k]) : -1;
        if (n < 0)
            continue;
        /* the owner comes from the parent named, live, even when VIA
         * finds no first parent of it to hold */
        if (!owner)
            owner = objs[n].owner;
        int h = (k == 0 && (request.flags & LIVETRACK_PARENT_VIA_FIRST_PARENT)) ? objs[n].parents[0] : n;
        if (h < 0)
            continue;
        objs[h].holders++;
        held[k] = h;
        if (h != n)
            seen.via_first_parent++;
    }
    /* stale replacement */
    int stale = cur[slot];
    if (stale >= 0) {
        objs[stale].linked = 0;
        cur[slot] = -1;
        objs[stale].refs = 0;
        model_replaced++;
        if (held[0] == stale || held[1] == stale)
            seen.replaced_by_child++;
        if (objs[stale].holders)
            seen.replaced_held++;
        else
            seen.replaced_free++;
        if (objs[stale].holders == 0)
            model_die(stale);
        else
            note_replaced(stale);
    }
    int o = model_new_object();
    mobj *m = &objs[o];
    m->handle = request.handle;
    m->slot = slot;
    m->type = request.type;
    m->refs = 1;
    m->holders = 0;
    m->parents[0] = held[0];
    m->parents[1] = held[1];
    m->linked = m->alive = 1;
    m->bytes = request.bytes;
    m->owner = owner;
    model_created++;
    cur[slot] = o;

    CHECK_EQ_INT(livetrack_create(&request), LIVETRACK_OK);
    livetrack_status status = livetrack_lookup(LIVETRACK_DOMAIN_USER, request.handle, &m->desc);
    CHECK_EQ_INT(status, LIVETRACK_OK);
    /* Creation numbers rise (consecutively from the counter); the model
     * learns each one here and holds the registry to it from then on. */
    CHECK(m->desc.seq > last_seq);
    if (seq_counted)
        CHECK_EQ_INT(m->desc.seq, last_seq + 1);
    m->seq = last_seq = m->desc.seq;
    if (status == LIVETRACK_OK)
        check_object(&m->desc, o);
    if (stale >= 0)
        CHECK(!livetrack_still_live(&objs[stale].desc));
    for (int k = 0; k < 2; k++)
        if (held[k] >= 0 && objs[held[k]].linked)
            check_handle(objs[held[k]].handle);
}

static void op_retain(void)
{
    int slot = (int)rnd_below(POOL);
    int o = cur[slot];
    unsigned type = pick_type(o);
    livetrack_status expected = expected_access(o, type);
    if (expected == LIVETRACK_OK)
        objs[o].refs++;
    seen.status[expected]++;
    CHECK_EQ_INT(livetrack_retain(LIVETRACK_DOMAIN_USER, type, pool_handles[slot], NULL), expected);
    check_handle(pool_handles[slot]);
}

static void op_release(int all)
{
    int slot = (int)rnd_below(POOL);
    int o = cur[slot];
    unsigned type = pick_type(o);
    livetrack_status expected = expected_access(o, type);
    uint32_t expected_left = 0;
    int parents[2] = {-1, -1};
    if (expected == LIVETRACK_OK && objs[o].refs == 0)
        expected = LIVETRACK_NOT_OWNED;
    if (expected == LIVETRACK_OK) {
        objs[o].refs = all ? 0 : objs[o].refs - 1;
        expected_left = objs[o].refs;
        parents[0] = objs[o].parents[0];
        parents[1] = objs[o].parents[1];
        if (objs[o].refs + objs[o].holders == 0)
            model_die(o);
    }
    seen.status[expected]++;
    if (all) {
        CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, type, pool_handles[slot], NULL), expected);
    } else {
        uint32_t left = 12345;
        CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, type, pool_handles[slot], &left, NULL), expected);
        CHECK_EQ_INT(left, expected_left);
    }
    check_handle(pool_handles[slot]);
    if (o >= 0)
        CHECK_EQ_INT(livetrack_still_live(&objs[o].desc), objs[o].linked);
    for (int k = 0; k < 2; k++)
        if (parents[k] >= 0 && objs[parents[k]].linked)
            check_handle(objs[parents[k]].handle);
}

static void op_lookup(void)
{
    uint64_t handle = pool_handles[rnd_below(POOL)];
    check_handle(handle);
    /* a NULL output is allowed */
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, NULL),
                 linked_object(handle) < 0 ? LIVETRACK_UNKNOWN : LIVETRACK_OK);
}

static void op_unknown_handle(void)
{
    uint64_t handle = rnd_below(8) == 0 ? 0 : unknown_base + rnd_below(1000) * 8;
    unsigned type = rnd_below(2) ? LIVETRACK_ANY_TYPE : rnd_below(NTYPES);
    uint32_t left = 77;
    livetrack_object out;
    switch (rnd_below(4)) {
    case 0:
        CHECK_EQ_INT(livetrack_retain(LIVETRACK_DOMAIN_USER, type, handle, NULL), LIVETRACK_UNKNOWN);
        break;
    case 1:
        CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, type, handle, &left, NULL), LIVETRACK_UNKNOWN);
        CHECK_EQ_INT(left, 0);
        break;
    case 2:
        CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, type, handle, NULL), LIVETRACK_UNKNOWN);
        break;
    default:
        CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, &out), LIVETRACK_UNKNOWN);
        break;
    }
}

/* A live user handle looked for in another domain is not found. */
static void op_wrong_domain(void)
{
    uint64_t handle = pool_handles[rnd_below(POOL)];
    livetrack_domain domain = (livetrack_domain)(LIVETRACK_DOMAIN_OPENCL + rnd_below(3));
    livetrack_object out;
    uint32_t left = 77;
    switch (rnd_below(4)) {
    case 0:
        CHECK_EQ_INT(livetrack_retain(domain, LIVETRACK_ANY_TYPE, handle, NULL), LIVETRACK_UNKNOWN);
        break;
    case 1:
        CHECK_EQ_INT(livetrack_release(domain, LIVETRACK_ANY_TYPE, handle, &left, NULL), LIVETRACK_UNKNOWN);
        CHECK_EQ_INT(left, 0);
        break;
    case 2:
        CHECK_EQ_INT(livetrack_destroy(domain, LIVETRACK_ANY_TYPE, handle, NULL), LIVETRACK_UNKNOWN);
        break;
    default:
        CHECK_EQ_INT(livetrack_lookup(domain, handle, &out), LIVETRACK_UNKNOWN);
        break;
    }
    check_handle(handle);
}

static void op_still_live(void)
{
    if (!nobjs)
        return;
    int o = (int)rnd_below((unsigned)nobjs);
    CHECK_EQ_INT(livetrack_still_live(&objs[o].desc), objs[o].linked);
}

static const char *do_one_op(void)
{
    unsigned r = rnd_below(100);
    if (r < 24) {
        op_create();
        return "create";
    }
    if (r < 32) {
        op_retain();
        return "retain";
    }
    if (r < 62) {
        op_release(0);
        return "release";
    }
    if (r < 70) {
        op_release(1);
        return "destroy";
    }
    if (r < 80) {
        op_lookup();
        return "lookup";
    }
    if (r < 87) {
        op_unknown_handle();
        return "unknown handle";
    }
    if (r < 93) {
        op_wrong_domain();
        return "wrong domain";
    }
    op_still_live();
    return "still_live";
}

/* Release everything: destroy every linked object the application holds;
 * children going frees what they kept alive. */
static void drain(void)
{
    for (int round = 0; round < POOL + 2; round++) {
        int any = 0;
        for (int slot = 0; slot < POOL; slot++) {
            int o = cur[slot];
            if (o < 0 || objs[o].refs == 0)
                continue;
            any = 1;
            objs[o].refs = 0;
            if (objs[o].holders == 0)
                model_die(o);
            CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, pool_handles[slot], NULL),
                         LIVETRACK_OK);
        }
        if (!any)
            break;
    }
    for (int o = 0; o < nobjs; o++)
        CHECK(!objs[o].alive);
    check_everything();
}

static void run_seed(uint64_t seed)
{
    rng_state = seed;
    nobjs = 0;
    replaced_count = 0;
    for (int i = 0; i < POOL; i++) {
        cur[i] = -1;
        /* spread over shards and buckets; distinct per seed */
        pool_handles[i] = 0x7f0000000000ull + (seed << 24) + (uint64_t)i * 0x40 + (rnd() & 0xffff00);
        for (int j = 0; j < i; j++)
            if (pool_handles[j] == pool_handles[i])
                pool_handles[i] += 8;
    }
    unknown_base = 0x5500000000000000ull + (seed << 32);

    for (int op = 0; op < OPS_PER_SEED; op++) {
        int failed_before = check_failed;
        const char *what = do_one_op();
        check_stats();
        if (op % SNAPSHOT_EVERY == SNAPSHOT_EVERY - 1)
            check_everything();
        if (check_failed != failed_before)
            fprintf(stderr, "  (seed %llu, op %d: %s)\n", (unsigned long long)seed, op, what);
        if (check_failed > MAX_FAILURES) {
            fprintf(stderr, "too many failures, stopping seed %llu\n", (unsigned long long)seed);
            break;
        }
    }
    drain();
}

/* The generator must have reached every interesting state. */
static void check_coverage(void)
{
    printf("model: %.1f of %d handles live on average\n", (double)occupancy_sum / (double)occupancy_samples, POOL);
    printf("model: replaced %ld free, %ld held (%ld by their own child), %ld stale freed later; "
           "%ld via-first-parent holds, %ld cascades, %ld ops on kept-alive objects; "
           "statuses ok %ld unknown %ld wrong-type %ld not-owned %ld\n",
           seen.replaced_free, seen.replaced_held, seen.replaced_by_child, seen.stale_died_later,
           seen.via_first_parent, seen.cascade, seen.kept_alive_ops, seen.status[LIVETRACK_OK],
           seen.status[LIVETRACK_UNKNOWN], seen.status[LIVETRACK_WRONG_TYPE], seen.status[LIVETRACK_NOT_OWNED]);
    CHECK(seen.replaced_free > 100);
    CHECK(seen.replaced_held > 100);
    CHECK(seen.replaced_by_child > 10);
    CHECK(seen.stale_died_later > 100);
    CHECK(seen.via_first_parent > 100);
    CHECK(seen.cascade > 100);
    CHECK(seen.kept_alive_ops > 100);
    CHECK(seen.status[LIVETRACK_OK] > 1000);
    CHECK(seen.status[LIVETRACK_UNKNOWN] > 1000);
    CHECK(seen.status[LIVETRACK_WRONG_TYPE] > 1000);
    CHECK(seen.status[LIVETRACK_NOT_OWNED] > 100);
}

int main(void)
{
    CHECK_EQ_INT(livetrack_declare_types(LIVETRACK_DOMAIN_USER, "model", type_names, NTYPES), LIVETRACK_OK);
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    model_created = stats.created;
    last_seq = livetrack_mark();
    const char *order = getenv("LIVETRACK_CREATION_ORDER");
    seq_counted = order && !strcmp(order, "counter");
    model_replaced = stats.replaced;
    CHECK_EQ_INT(stats.live_objects, 0);

    static const uint64_t seeds[SEEDS] = {1, 42, 0xdeadbeef, 20240601, 7777777};
    for (int s = 0; s < SEEDS && check_failed <= MAX_FAILURES; s++)
        run_seed(seeds[s]);
    check_coverage();
    free(objs);
    free(replaced);
    return check_summary("test_registry_model");
}
