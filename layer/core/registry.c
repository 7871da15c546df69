/*
 * The live-object registry: create, retain, release, destroy, lookup.
 * Read the locking notes in registry_internal.h first.
 *
 * Each operation is O(1): one hash lookup in one shard, plus one atomic
 * per parent. Nodes come from per-shard free lists refilled a slab at a
 * time, so steady state allocates nothing.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core_internal.h"
#include "creation_order.h"
#include "registry_internal.h"
#include "test_hooks.h"
#include "timeline.h"

lt_shard lt_shards[LT_SHARD_COUNT];

uint64_t lt_hash(unsigned domain, uint64_t handle)
{
    /* A 64-bit finaliser (xor-shift-multiply): heap addresses differ
     * mostly in their middle bits and must spread over the high bits
     * (shard) and the low bits (bucket) alike. */
    uint64_t x = handle ^ ((uint64_t)domain << 59);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* ---- buckets ---------------------------------------------------------- */

static int buckets_ready(lt_shard *shard)
{
    if (shard->bucket_mask)
        return 1;
    lt_node **buckets = lt_calloc(LT_INITIAL_BUCKETS, sizeof *buckets);
    if (!buckets)
        return 0;
    shard->buckets = buckets;
    shard->bucket_mask = LT_INITIAL_BUCKETS - 1;
    return 1;
}

/* Double the bucket array. A failed allocation keeps the old array:
 * lookups get slower, nothing is lost. Out of line: rare. */
static __attribute__((noinline)) void grow(lt_shard *shard)
{
    uint32_t new_count = (shard->bucket_mask + 1) * 2;
    lt_node **buckets = lt_calloc(new_count, sizeof *buckets);
    if (!buckets)
        return;
    for (uint32_t i = 0; i <= shard->bucket_mask; i++) {
        lt_node *node = shard->buckets[i];
        while (node) {
            lt_node *next = node->chain;
            uint64_t slot = lt_hash(node->domain, node->handle) & (new_count - 1);
            node->chain = buckets[slot];
            buckets[slot] = node;
            node = next;
        }
    }
    lt_free(shard->buckets);
    shard->buckets = buckets;
    shard->bucket_mask = new_count - 1;
}

/* Grow when the load passes 1. Inline: every link tests it. */
static inline void maybe_grow(lt_shard *shard)
{
    if (shard->live > shard->bucket_mask)
        grow(shard);
}

static lt_node **bucket_of(lt_shard *shard, uint64_t hash) { return &shard->buckets[hash & shard->bucket_mask]; }

/* The linked node for (domain, handle), dying ones included, or NULL. */
static lt_node *find_linked(lt_shard *shard, uint64_t hash, unsigned domain, uint64_t handle)
{
    if (!shard->bucket_mask)
        return NULL;
    for (lt_node *node = *bucket_of(shard, hash); node; node = node->chain)
        if (node->handle == handle && node->domain == domain)
            return node;
    return NULL;
}

/* The live (non-dying) node, or NULL. */
static inline __attribute__((always_inline)) lt_node *find_live(lt_shard *shard, uint64_t hash, unsigned domain,
                                                                 uint64_t handle)
{
    lt_node *node = find_linked(shard, hash, domain, handle);
    if (node && LT_HOLDS(atomic_load_explicit(&node->counts, memory_order_acquire)) == 0)
        return NULL;
    return node;
}

/* ---- node pool -------------------------------------------------------- */

/* Refill an empty free list with a slab; 0 when out of memory. Out of
 * line: once per LT_NODES_PER_SLAB nodes. */
static __attribute__((noinline)) int add_slab(lt_shard *shard)
{
    lt_node *slab = lt_calloc(LT_NODES_PER_SLAB, sizeof *slab);
    if (!slab)
        return 0;
    for (unsigned i = 0; i < LT_NODES_PER_SLAB; i++) {
        slab[i].chain = shard->free_nodes;
        shard->free_nodes = &slab[i];
    }
    shard->slab_nodes += LT_NODES_PER_SLAB;
    return 1;
}

static inline lt_node *take_node(lt_shard *shard)
{
    if (!shard->free_nodes && !add_slab(shard))
        return NULL;
    lt_node *node = shard->free_nodes;
    shard->free_nodes = node->chain;
    return node;
}

static void give_node(lt_shard *shard, lt_node *node)
{
    node->chain = shard->free_nodes;
    node->handle = 0;
    shard->free_nodes = node;
}

/* ---- linking ---------------------------------------------------------- */

/* Link `node` into its bucket and into the age list between `older` and
 * `newer` (NULL: the list's end). */
static inline void link_between(lt_shard *shard, uint64_t hash, lt_node *node, lt_node *older, lt_node *newer)
{
    lt_node **bucket = bucket_of(shard, hash);
    node->chain = *bucket;
    *bucket = node;
    node->older = older;
    node->newer = newer;
    if (newer)
        newer->older = node;
    else
        shard->newest = node;
    if (older)
        older->newer = node;
    else
        shard->oldest = node;
    node->linked = LT_LINKED;
    /* Atomic stores (plain moves on x86): the counters are read without
     * the lock by snapshots and the peak and timeline totals. */
    __atomic_store_n(&shard->live, shard->live + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&shard->live_bytes, shard->live_bytes + node->bytes, __ATOMIC_RELAXED);
}

/* A new object is the shard's newest. */
static void link_node(lt_shard *shard, uint64_t hash, lt_node *node)
{
    link_between(shard, hash, node, shard->newest, NULL);
}

/* An object becoming live or dying, as the process's live totals (and the
 * peak) see it. Applied after the shard lock is dropped. */
typedef struct lt_counted_change {
    uint8_t domain;
    uint8_t type;
    uint64_t bytes;
} lt_counted_change;

static void note_birth(const lt_counted_change *birth)
{
    lt_peak_created(birth->bytes);
    if (lt_timeline_on)
        lt_timeline_type_add(birth->domain, birth->type, 1);
}

static void note_death(const lt_counted_change *death)
{
    if (!death->domain)
        return; /* nothing died */
    lt_peak_died(death->bytes);
    if (lt_timeline_on)
        lt_timeline_type_add(death->domain, death->type, -1);
}

/* The change an unlinked node's death makes to the live totals. */
static inline lt_counted_change death_of(const lt_node *node)
{
    return (lt_counted_change){node->domain, node->type, node->bytes};
}

/* Take a linked node out of its bucket: its handle names nothing now, or
 * (forget_stale) the new object about to be linked there. */
static inline __attribute__((always_inline)) void unbucket_node(lt_shard *shard, uint64_t hash, lt_node *node)
{
    for (lt_node **link = bucket_of(shard, hash); *link; link = &(*link)->chain) {
        if (*link == node) {
            *link = node->chain;
            break;
        }
    }
}

/* The rest of an unlink, for a node out of its bucket (or never in one
 * again: a replaced node): out of the age list and the live counts, into
 * the graveyard. */
static inline __attribute__((always_inline)) void unlink_from_age_list(lt_shard *shard, lt_node *node)
{
    if (node->newer)
        node->newer->older = node->older;
    else
        shard->newest = node->older;
    if (node->older)
        node->older->newer = node->newer;
    else
        shard->oldest = node->newer;
    node->linked = LT_UNLINKED;
    __atomic_store_n(&shard->live, shard->live - 1, __ATOMIC_RELAXED);
    __atomic_store_n(&shard->live_bytes, shard->live_bytes - node->bytes, __ATOMIC_RELAXED);
    lt_released *grave = &shard->graveyard[shard->graveyard_next % LT_GRAVEYARD];
    /* atomic store: the peak reads it without the lock to see which shards changed */
    __atomic_store_n(&shard->graveyard_next, shard->graveyard_next + 1, __ATOMIC_RELAXED);
    /* The node's fields from domain to owner are a lt_released's, in its
     * layout (registry_internal.h checks it): one copy of the block. The
     * lock is held, so seq, written only under it, holds still; `linked`
     * (0 by now) lands in the record's padding. The source is the node
     * at that offset, not &node->domain: the copy spans more than that
     * one byte (gcc's -Warray-bounds=2 says so). */
    memcpy(grave, (const char *)node + offsetof(lt_node, domain), sizeof *grave);
}

/* Inlined into drop_refs, where a release's death happens, for a node it
 * found in its bucket; the rare callers (free_dead, forget_stale) share
 * the out-of-line unlink_node below. */
static inline __attribute__((always_inline)) void unlink_node_inline(lt_shard *shard, uint64_t hash, lt_node *node)
{
    unbucket_node(shard, hash, node);
    unlink_from_age_list(shard, node);
}

/* Unlink a linked or replaced node (a replaced one left its bucket when
 * its handle was given to a newer object). */
static void unlink_node(lt_shard *shard, uint64_t hash, lt_node *node)
{
    if (node->linked == LT_LINKED)
        unbucket_node(shard, hash, node);
    unlink_from_age_list(shard, node);
}

static int valid_domain(unsigned domain) { return domain > LIVETRACK_DOMAIN_ANY && domain < LIVETRACK_DOMAIN_COUNT; }

/* The release of the newest object at (domain, handle) still remembered:
 * the one made last (highest creation number), not the one that died
 * last. They differ when a replaced object (its handle given to a newer
 * one while children held it) died after that newer one. */
static int lt_find_released(unsigned domain, uint64_t handle, lt_released *out)
{
    uint64_t hash = lt_hash(domain, handle);
    lt_shard *shard = lt_shard_of(hash);
    int found = 0;
    lt_spin_lock(&shard->lock);
    uint32_t end = shard->graveyard_next;
    uint32_t kept = end < LT_GRAVEYARD ? end : LT_GRAVEYARD;
    for (uint32_t i = 1; i <= kept; i++) { /* newest first: a tie keeps the latest death */
        const lt_released *grave = &shard->graveyard[(end - i) % LT_GRAVEYARD];
        if (grave->handle == handle && grave->domain == domain && (!found || grave->seq > out->seq)) {
            *out = *grave;
            found = 1;
        }
    }
    lt_spin_unlock(&shard->lock);
    return found;
}

lt_object_state lt_object_history(unsigned domain, uint64_t handle, lt_released *out)
{
    uint64_t hash = lt_hash(domain, handle);
    lt_shard *shard = lt_shard_of(hash);
    lt_object_state state = LT_OBJECT_UNKNOWN;
    lt_spin_lock(&shard->lock);
    lt_node *node = find_live(shard, hash, domain, handle);
    if (node) {
        *out = (lt_released){node->domain, node->type, node->handle, node->seq, node->stack, node->release_stack,
                             node->bytes, node->ticks, node->owner};
        state = node->refs ? LT_OBJECT_HELD : LT_OBJECT_KEPT_ALIVE;
    }
    lt_spin_unlock(&shard->lock);
    if (state == LT_OBJECT_UNKNOWN && lt_find_released(domain, handle, out))
        state = LT_OBJECT_RELEASED;
    return state;
}

livetrack_status livetrack_released(livetrack_domain domain, uint64_t handle, livetrack_object *out)
{
    if (!valid_domain(domain) || !out)
        return LIVETRACK_BAD_ARGUMENT;
    lt_released released;
    if (lt_object_history(domain, handle, &released) != LT_OBJECT_RELEASED)
        return LIVETRACK_UNKNOWN;
    /* A dead object holds nothing: no references, holders or parents
     * (their holds ended with it). */
    *out = (livetrack_object){.domain = domain,
                              .type = released.type,
                              .type_name = livetrack_type_name(domain, released.type),
                              .handle = handle,
                              .seq = released.seq,
                              .time_ns = lt_ticks_to_ns(released.ticks),
                              .bytes = released.bytes,
                              .owner = released.owner,
                              .stack = released.create_stack};
    return LIVETRACK_OK;
}

livetrack_status livetrack_released_type(livetrack_domain domain, uint64_t handle, livetrack_type *type)
{
    if ((unsigned)domain >= LIVETRACK_DOMAIN_COUNT)
        return LIVETRACK_BAD_ARGUMENT;
    lt_released released;
    if (lt_object_history(domain, handle, &released) != LT_OBJECT_RELEASED)
        return LIVETRACK_UNKNOWN;
    if (type)
        *type = released.type;
    return LIVETRACK_OK;
}


/* ---- death ------------------------------------------------------------ */

static void free_dead(lt_node *node, const char *call);

/* Drop one hold (a child's, or a pin) on `node`. Nearly always the node
 * stays (a context outlives its buffers), so this is one atomic and no
 * call; the holder that brings the holds to 0 frees it. `call` let it go
 * (NULL: no API call did, a pin or keeper did). */
static inline void drop_hold(lt_node *node, const char *call)
{
    if (node && LT_HOLDS(atomic_fetch_sub_explicit(&node->counts, 1, memory_order_acq_rel)) == 1)
        free_dead(node, call);
}

/* Drop the holds a dead node (or a failed create) had on its parents. */
static inline void bury(lt_node *dead_parents[2], const char *call)
{
    drop_hold(dead_parents[0], call);
    drop_hold(dead_parents[1], call);
}

/* Unlink and free nodes whose holds reached 0, dropping the holds they
 * had on their parents, which may die in turn. Parent chains are short
 * (sub-buffer -> buffer -> context), but the loop does not rely on it.
 * Each live object that ends here gets its timeline row: nothing else
 * would say that a released context died with its last buffer. */
static void free_dead(lt_node *dead, const char *call)
{
    lt_node *pending[64];
    unsigned count = 0;
    pending[count++] = dead;
    while (count) {
        lt_node *node = pending[--count];
        uint64_t hash = lt_hash(node->domain, node->handle);
        lt_shard *shard = lt_shard_of(hash);
        lt_counted_change death = {0};
        lt_spin_lock(&shard->lock);
        if (node->linked) {
            unlink_node(shard, hash, node);
            death = death_of(node);
        }
        lt_node *grand[2] = {node->parents[0], node->parents[1]};
        uint64_t handle = node->handle;
        give_node(shard, node);
        lt_spin_unlock(&shard->lock);
        note_death(&death);
        if (lt_timeline_on && death.domain)
            lt_timeline_event(LT_EVENT_FREED, call, death.domain, death.type, handle, death.bytes);
        for (int i = 0; i < 2; i++) {
            if (!grand[i] || LT_HOLDS(atomic_fetch_sub_explicit(&grand[i]->counts, 1, memory_order_acq_rel)) != 1)
                continue;
            if (count < sizeof pending / sizeof pending[0])
                pending[count++] = grand[i];
            else
                free_dead(grand[i], call); /* deep chains: recurse */
        }
    }
}

/* ---- holds on parents -------------------------------------------------- */

/* +1 hold unless the node is dying (no holds left). The caller holds the
 * node's shard lock, under which its incarnation holds still: the counts
 * the hold was added to, or 0. */
static uint64_t pin(lt_node *node)
{
    uint64_t counts = atomic_load_explicit(&node->counts, memory_order_relaxed);
    while (LT_HOLDS(counts) && !atomic_compare_exchange_weak_explicit(&node->counts, &counts, counts + 1,
                                                                      memory_order_acquire, memory_order_relaxed))
        ;
    return LT_HOLDS(counts) ? counts : 0;
}

static void unpin(lt_node *node) { drop_hold(node, NULL); }

/* What a per-thread cache remembers of an object it found live, to know
 * it again without the shard lock: its node, creation number and the
 * node's incarnation then, as the lowest counts word that shows it live
 * (the incarnation with 1 hold). */
typedef struct remembered_object {
    lt_node *node;
    uint64_t seq;
    uint64_t live_from;
} remembered_object;

static inline uint64_t live_from(uint64_t counts) { return (counts & ~(uint64_t)UINT32_MAX) + 1; }

/* Whether a counts word shows the incarnation `live_from` was taken from,
 * with holds: in one compare, the word is one of that incarnation's
 * 2^32 - 1 with holds (a subtraction that wraps puts all others above). */
static inline int live_incarnation(uint64_t counts, uint64_t live_from)
{
    return counts - live_from < (uint64_t)UINT32_MAX;
}

/* Whether a node's counts word, loaded with acquire order, shows the
 * remembered object live: the same incarnation with holds, and then (read
 * after that load) the same creation number. The incarnation alone has 32
 * bits: a cache entry left for long could meet its node again after 2^32
 * reuses, whose object has another seq. */
static inline int shows_remembered(uint64_t counts, const remembered_object *object)
{
    return live_incarnation(counts, object->live_from) &&
           atomic_load_explicit(&object->node->seq, memory_order_relaxed) == object->seq;
}

/* A hold on a remembered object, taken without the shard lock: 1 when
 * taken, 0 when it is no longer live (nothing is then taken).
 *
 * Why this is right under any memory ordering: the hold is the
 * compare-and-swap itself, on the one word that carries both the holds and
 * the incarnation, and it succeeds only on a value that shows the
 * remembered incarnation with holds. All changes of one atomic object are
 * totally ordered, so at that point in the word's order the node was that
 * object, the one its handle names (LT_LINKED) and not dying (a death
 * drops the holds to 0, a reuse or a replacement moves the incarnation,
 * and neither comes back while the word keeps its value), and the +1 now
 * keeps it so. A node recycled or
 * replaced since the cache remembered it fails the compare, and no hold,
 * not even a passing one, lands on another object. (Only an exact return
 * of the word, 2^32 incarnations of this node between the load and the
 * compare-and-swap a few instructions later, would pass; the seq check
 * before covers entries left for long.) Acquire, on the load and the
 * successful swap: they synchronize with the release store that made the
 * incarnation (insert_object, livetrack_restore; the holds' later atomic
 * changes continue its release sequence), so the seq, owner and parents
 * read then are the object's. */
static inline int hold_cached(const remembered_object *object)
{
    lt_node *node = object->node;
    uint64_t counts = atomic_load_explicit(&node->counts, memory_order_acquire);
    if (!shows_remembered(counts, object))
        return 0;
    /* The swap fails when a hold came or went meanwhile: try again while
     * the word still shows the same incarnation with holds. */
    while (!atomic_compare_exchange_weak_explicit(&node->counts, &counts, counts + 1, memory_order_acquire,
                                                  memory_order_acquire))
        if (!live_incarnation(counts, object->live_from))
            return 0;
    return 1;
}

/* Programs create many children of the same parent in a row (buffers of
 * one context, events of one queue): remember the last parent per thread
 * and skip its shard lock and hash walk. */
typedef struct parent_cache {
    uint64_t handle;
    remembered_object parent;
    uint8_t domain;
} parent_cache;
static _Thread_local parent_cache last_parent;

/* The live node of (domain, handle) with a hold taken on it, or NULL; with
 * `remember`, what a cache needs to know it again (read under the lock,
 * where its incarnation holds still). */
static inline lt_node *pin_live(unsigned domain, uint64_t handle, remembered_object *remember)
{
    uint64_t hash = lt_hash(domain, handle);
    lt_shard *shard = lt_shard_of(hash);
    lt_spin_lock(&shard->lock);
    lt_node *node = find_live(shard, hash, domain, handle);
    uint64_t counts = node ? pin(node) : 0;
    if (!counts)
        node = NULL;
    else if (remember)
        *remember = (remembered_object){node, atomic_load_explicit(&node->seq, memory_order_relaxed), live_from(counts)};
    lt_spin_unlock(&shard->lock);
    return node;
}

/* A pinned parent, now held for the child: the owner it passes on, or a
 * hold on its own first parent instead. */
static inline lt_node *held_parent(lt_node *node, int via_first_parent, const void **owner)
{
    if (owner && !*owner)
        *owner = node->owner;
    if (!via_first_parent)
        return node;
    /* The pinned node holds its first parent, so that one cannot die
     * before we add our own hold. */
    lt_node *held = node->parents[0];
    if (held)
        atomic_fetch_add_explicit(&held->counts, 1, memory_order_relaxed);
    unpin(node);
    return held;
}

/* A parent-cache miss: the shard lookup, which refills the cache. Out of
 * line, and a tail call from hold_parent, so that a hit calls nothing
 * while it has values to keep, and saves no registers. */
static __attribute__((noinline)) lt_node *hold_parent_by_lookup(unsigned domain, uint64_t handle,
                                                                int via_first_parent, const void **owner)
{
    remembered_object parent;
    lt_node *node = pin_live(domain, handle, &parent);
    if (!node)
        return NULL;
    last_parent = (parent_cache){handle, parent, (uint8_t)domain};
    return held_parent(node, via_first_parent, owner);
}

/* Take a hold on the parent named by `handle` (or on its first parent).
 * Returns the node now held, or NULL when there is nothing live to hold. */
static lt_node *hold_parent(unsigned domain, uint64_t handle, int via_first_parent, const void **owner)
{
    if (!handle)
        return NULL;
    /* The cache's entry by address: the hold's atomic would make GCC read
     * the thread-local again after it. */
    parent_cache *cache = &last_parent;
    if (!cache->parent.node || cache->handle != handle || cache->domain != domain)
        return hold_parent_by_lookup(domain, handle, via_first_parent, owner);
    LT_TEST_PAUSE(LT_TEST_CACHED_PARENT_READ);
    /* Fix: the hold used to be taken first and the node checked after it,
     * so a node recycled for another thread's object got a passing hold;
     * that object's last release then left it in the table, released but
     * "kept alive", after its driver freed it. The hold now is taken only
     * on the remembered object itself (hold_cached). */
    int held = hold_cached(&cache->parent);
    LT_TEST_PAUSE(LT_TEST_CACHED_PARENT_TRIED);
    if (!held)
        return hold_parent_by_lookup(domain, handle, via_first_parent, owner);
    return held_parent(cache->parent.node, via_first_parent, owner);
}

/* A keeper is the node it holds: held, the node cannot be recycled. */
livetrack_keeper *livetrack_keep_alive(livetrack_domain domain, uint64_t handle)
{
    if (domain <= LIVETRACK_DOMAIN_ANY || domain >= LIVETRACK_DOMAIN_COUNT)
        return NULL;
    return (livetrack_keeper *)pin_live(domain, handle, NULL);
}

void livetrack_let_go_in(livetrack_keeper *keeper, const char *call)
{
    /* The last hold may free the object: the peak's set first, as before
     * any death. */
    lt_peak_before_death();
    drop_hold((lt_node *)keeper, call);
}

void livetrack_let_go(livetrack_keeper *keeper) { livetrack_let_go_in(keeper, NULL); }

/* ---- public operations ------------------------------------------------- */

/* The driver handed out an address we still think is live: the program
 * released the object while children kept it alive (a context destroyed
 * with live buffers), or our model of it was wrong (an object freed
 * behind the API's back). Forget the application's references and take
 * the node out of its bucket, so that the handle names the new object.
 * Children that still hold the old node keep it (LT_REPLACED): in the age
 * list and the live counts, so snapshots and reports show it as released
 * but kept alive, until its last holder goes and free_dead unlinks it;
 * its death is counted then. Otherwise it is unlinked now and *death says
 * so; returns 1 when the node was freed here (its parents, in
 * dead_parents, then lose its holds), 0 when it is kept or was dying
 * already (its freer gives it back). Caller holds the lock. Out of line:
 * rare, and it would cost every create its registers. */
static __attribute__((noinline)) int forget_stale(lt_shard *shard, uint64_t hash, lt_node *stale,
                                                  lt_counted_change *death, lt_node *dead_parents[2])
{
    *death = (lt_counted_change){0};
    /* The references end, and with them their hold; and the node is
     * another incarnation, so that the per-thread caches that remember the
     * object fail to hold or find it (the children's holds are counted
     * in the low half, which the incarnation's move leaves alone). */
    uint64_t refs_hold = stale->refs ? 1 : 0;
    stale->refs = 0;
    uint64_t after =
        atomic_fetch_add_explicit(&stale->counts, LT_INCARNATION_ONE - refs_hold, memory_order_acq_rel) +
        LT_INCARNATION_ONE - refs_hold;
    lt_stat_replaced();
    if (LT_HOLDS(after) != 0) {
        /* Its holders drop their holds without this lock: the last one
         * may go right after the add above, and its free_dead then waits
         * for this lock and finds the node replaced. No lookup finds it
         * from here on (it is in no bucket), so no cache learns its new
         * incarnation, and no hold but its holders' own reaches it. */
        unbucket_node(shard, hash, stale);
        stale->linked = LT_REPLACED;
        return 0;
    }
    unlink_node(shard, hash, stale);
    *death = death_of(stale);
    if (!refs_hold)
        return 0; /* dying already (its last holder went): its freer finds it unlinked */
    dead_parents[0] = stale->parents[0];
    dead_parents[1] = stale->parents[1];
    give_node(shard, stale);
    return 1;
}

/* A node taken for an object (its fields set) becomes the node's next
 * incarnation, live with `refs` program references as its one hold.
 * Release order: a thread that holds it through a cache (hold_cached)
 * sees the fields, seq included. The caller holds the shard lock, under
 * which alone the incarnation moves. The holds are 0 (the node was free)
 * and nothing adds to them at 0, so the word read here stays as it is
 * until this store, and one add makes the new one. */
static inline void publish_incarnation(lt_node *node, uint32_t refs)
{
    uint64_t counts = atomic_load_explicit(&node->counts, memory_order_relaxed);
    node->refs = refs;
    atomic_store_explicit(&node->counts, counts + LT_INCARNATION_ONE + 1, memory_order_release);
}

static int valid_new_object(const livetrack_new_object *object)
{
    return object && object->handle && object->domain > LIVETRACK_DOMAIN_ANY &&
           object->domain < LIVETRACK_DOMAIN_COUNT && object->type < LIVETRACK_MAX_TYPES;
}

/* Record a valid new object made at `ticks` with call site `stack`.
 * Inlined into both callers: livetrack_create is the hot path. */
static inline __attribute__((always_inline)) livetrack_status insert_object(const livetrack_new_object *object,
                                                                            uint64_t ticks, livetrack_stack_id stack)
{
    unsigned domain = object->domain;
    /* Hashed before the parents are held: kept across those calls, the
     * 32-bit domain was spilled and read back as 64 bits for the hash's
     * shift, a store-to-load forwarding stall of ~10 ns a create. */
    uint64_t hash = lt_hash(domain, object->handle);
    const void *owner = object->owner;
    lt_node *parents[2];
    parents[0] = hold_parent(domain, object->parent, object->flags & LIVETRACK_PARENT_VIA_FIRST_PARENT, &owner);
    parents[1] = object->second_parent ? hold_parent(domain, object->second_parent, 0, &owner) : NULL;

    lt_shard *shard = lt_shard_of(hash);
    int by_clock = lt_creation_order() == LT_ORDER_BY_CLOCK;
    /* What an object still recorded at this handle left when it was
     * forgotten (stale_found): set only then, so that the common create
     * clears no structs on its stack. */
    int stale_found = 0, stale_dead = 0;
    lt_node *stale_parents[2];
    lt_counted_change stale_death;

    lt_spin_lock(&shard->lock);
    lt_node *node = buckets_ready(shard) ? take_node(shard) : NULL;
    if (!node)
        goto no_node;
    lt_node *stale = find_linked(shard, hash, domain, object->handle);
    if (__builtin_expect(stale != NULL, 0)) {
        /* The stale object dies here: a pending peak set is brought up to
         * date first, as before any death. That takes shard locks, so
         * this one is let go meanwhile and the handle looked up again. */
        if (lt_peak_pending()) {
            give_node(shard, node);
            lt_spin_unlock(&shard->lock);
            lt_peak_before_death();
            lt_spin_lock(&shard->lock);
            node = take_node(shard);
            if (!node)
                goto no_node;
            stale = find_linked(shard, hash, domain, object->handle);
        }
        if (stale) {
            stale_parents[0] = stale_parents[1] = NULL;
            stale_dead = forget_stale(shard, hash, stale, &stale_death, stale_parents);
            stale_found = 1;
        }
    }
    node->handle = object->handle;
    node->domain = (uint8_t)domain;
    node->type = (uint8_t)object->type;
    node->bytes = object->bytes;
    node->owner = owner;
    node->parents[0] = parents[0];
    node->parents[1] = parents[1];
    node->stack = stack;
    node->release_stack = 0;
    /* Taken under the lock so each shard's age list is in seq order,
     * which lets snapshots merge shards instead of sorting. */
    uint64_t seq = lt_creation_number(by_clock, &ticks, lt_shard_index(hash), shard->last_seq, parents);
    node->ticks = ticks;
    atomic_store_explicit(&node->seq, seq, memory_order_relaxed);
    /* atomic store: the peak reads it (mark_shard) */
    __atomic_store_n(&shard->last_seq, seq, __ATOMIC_RELAXED);
    /* atomic store: lt_created_count() sums the shards without their locks */
    __atomic_store_n(&shard->created, shard->created + 1, __ATOMIC_RELAXED);
    publish_incarnation(node, 1);
    link_node(shard, hash, node);
    maybe_grow(shard);
    lt_spin_unlock(&shard->lock);

    if (__builtin_expect(stale_found, 0))
        note_death(&stale_death); /* nothing when children keep it */
    note_birth(&(lt_counted_change){(uint8_t)domain, (uint8_t)object->type, object->bytes});
    /* The object this handle named before ended unseen (its driver gave
     * the handle out again): its row comes before the new one's, and
     * before those of parents it held alone. One its children keep gets
     * its row when the last of them goes. */
    if (__builtin_expect(stale_found, 0) && stale_death.domain && lt_timeline_on)
        lt_timeline_event(LT_EVENT_FREED, object->call, stale_death.domain, stale_death.type, object->handle,
                          stale_death.bytes);
    if (__builtin_expect(stale_found, 0) && stale_dead) {
        lt_peak_before_death(); /* the new object may have made a new high */
        bury(stale_parents, object->call);
    }
    if (lt_timeline_on)
        lt_timeline_event(LT_EVENT_CREATE, object->call, domain, object->type, object->handle, object->bytes);
    return LIVETRACK_OK;

no_node: /* the shard's lock is held; the parents' holds are given back */
    lt_spin_unlock(&shard->lock);
    bury(parents, object->call);
    lt_out_of_memory("a registry node");
    return LIVETRACK_NO_MEMORY;
}

livetrack_status livetrack_create(const livetrack_new_object *object)
{
    if (!valid_new_object(object))
        return LIVETRACK_BAD_ARGUMENT;
    /* Read outside the shard lock: rdtsc costs ~13 ns on the machines
     * measured, and the locked section should stay short (in clock mode
     * the creation number comes from these ticks, and a shard's numbers
     * still rise: see lt_creation_number). The stack is captured here,
     * not in insert_object: the frames livetrack adds on top of the
     * program's are then the same for every create. */
    uint64_t ticks = lt_ticks();
    livetrack_stack_id stack = lt_stack_capture_inline(object->domain, object->type);
    return insert_object(object, ticks, stack);
}

livetrack_status livetrack_create_with_stack(const livetrack_new_object *object, livetrack_stack_id stack)
{
    /* Reports take a node's stack for an interned one. */
    if (!valid_new_object(object) || stack > lt_stack_count())
        return LIVETRACK_BAD_ARGUMENT;
    return insert_object(object, lt_ticks(), stack);
}

/* `refs` more program references on a node found live; 0 when it died
 * meanwhile (its last hold going on another thread since the lookup).
 * Caller holds the shard lock, under which alone refs change: while the
 * object has references they are a hold already, and counting one more
 * needs no atomic. */
static inline int add_refs(lt_node *node, uint32_t refs)
{
    if (__builtin_expect(!node->refs, 0)) {
        /* Released by the program, kept alive by holders that may all go
         * now: the references become a hold, unless the last one went. */
        uint64_t counts = atomic_load_explicit(&node->counts, memory_order_relaxed);
        while (LT_HOLDS(counts) && !atomic_compare_exchange_weak_explicit(&node->counts, &counts, counts + 1,
                                                                          memory_order_acq_rel, memory_order_relaxed))
            ;
        if (!LT_HOLDS(counts))
            return 0;
    }
    node->refs += refs;
    return 1;
}

/* ---- undoing a refused release ----------------------------------------- */

/* Link a node that keeps its old creation number: in the bucket, and in
 * the age list where that number puts it (snapshots merge the shards'
 * lists, each in seq order). The walk starts at the end whose number is
 * nearer: it passes the objects made in this shard since (few, for an
 * object refused its destroy soon after it was made), or those made
 * before it (few, for one that lives long). */
static void link_node_in_seq_order(lt_shard *shard, uint64_t hash, lt_node *node)
{
    uint64_t seq = atomic_load_explicit(&node->seq, memory_order_relaxed);
    lt_node *newer = NULL, *older = shard->newest;
    uint64_t newest_seq = older ? atomic_load_explicit(&older->seq, memory_order_relaxed) : 0;
    uint64_t oldest_seq = shard->oldest ? atomic_load_explicit(&shard->oldest->seq, memory_order_relaxed) : 0;
    if (older && seq < newest_seq && (seq < oldest_seq || seq - oldest_seq < newest_seq - seq)) {
        older = NULL;
        newer = shard->oldest;
        while (newer && atomic_load_explicit(&newer->seq, memory_order_relaxed) < seq) {
            older = newer;
            newer = newer->newer;
        }
    } else {
        while (older && atomic_load_explicit(&older->seq, memory_order_relaxed) > seq) {
            newer = older;
            older = older->older;
        }
    }
    link_between(shard, hash, node, older, newer);
    shard->restored[shard->restores % LT_RESTORED] = (lt_released){
        node->domain, node->type, node->handle, seq, node->stack, 0, node->bytes, node->ticks, node->owner};
    /* atomic store: the peak reads it without the lock to see which shards changed */
    __atomic_store_n(&shard->restores, shard->restores + 1, __ATOMIC_RELAXED);
}

livetrack_status livetrack_keep_parents(const livetrack_object *object, livetrack_keeper *out[2])
{
    if (out)
        out[0] = out[1] = NULL;
    if (!object || !out || !object->seq || !valid_domain(object->domain))
        return LIVETRACK_BAD_ARGUMENT;
    uint64_t hash = lt_hash(object->domain, object->handle);
    lt_shard *shard = lt_shard_of(hash);
    lt_spin_lock(&shard->lock);
    lt_node *node = find_live(shard, hash, object->domain, object->handle);
    int found = node && atomic_load_explicit(&node->seq, memory_order_relaxed) == object->seq;
    for (int i = 0; i < 2 && found; i++) {
        /* The live child holds its parents, and cannot drop them while
         * this lock keeps it linked: a plain add is safe. */
        if (node->parents[i]) {
            atomic_fetch_add_explicit(&node->parents[i]->counts, 1, memory_order_relaxed);
            out[i] = (livetrack_keeper *)node->parents[i];
        }
    }
    lt_spin_unlock(&shard->lock);
    return found ? LIVETRACK_OK : LIVETRACK_UNKNOWN;
}

static int valid_object_to_restore(const livetrack_object *before, uint32_t refs_taken)
{
    return before && before->handle && before->seq && refs_taken && valid_domain(before->domain) &&
           before->type < LIVETRACK_MAX_TYPES && before->stack <= lt_stack_count();
}

/* A hold on each parent: the caller's keepers (the very objects; NULL:
 * none there), or without them what the parents' handles name now. */
static void hold_parents_again(const livetrack_object *before, livetrack_keeper *const keepers[2], lt_node *held[2])
{
    for (int i = 0; i < 2; i++) {
        if (!keepers) {
            held[i] = hold_parent(before->domain, before->parents[i], 0, NULL);
            /* made after the object: its handle names another parent now */
            if (held[i] && atomic_load_explicit(&held[i]->seq, memory_order_relaxed) > before->seq) {
                lt_peak_before_death();
                drop_hold(held[i], NULL);
                held[i] = NULL;
            }
            continue;
        }
        held[i] = (lt_node *)keepers[i];
        if (held[i]) /* kept, so not dying: a plain add is safe */
            atomic_fetch_add_explicit(&held[i]->counts, 1, memory_order_relaxed);
    }
}

livetrack_status livetrack_restore(const livetrack_object *before, uint32_t refs_taken,
                                   livetrack_keeper *const parents[2], const char *call)
{
    if (!valid_object_to_restore(before, refs_taken))
        return LIVETRACK_BAD_ARGUMENT;
    unsigned domain = before->domain;
    uint64_t hash = lt_hash(domain, before->handle);
    lt_shard *shard = lt_shard_of(hash);
    lt_node *held[2];
    hold_parents_again(before, parents, held);
    livetrack_status status = LIVETRACK_OK;
    int linked_again = 0;

    lt_spin_lock(&shard->lock);
    lt_node *node = NULL;
    /* A number this shard never gave would put its age list out of order. */
    int given_here = lt_creation_number_given(before->seq, lt_shard_index(hash), shard->last_seq);
    while (given_here) {
        node = find_linked(shard, hash, domain, before->handle);
        uint32_t holds = node ? LT_HOLDS(atomic_load_explicit(&node->counts, memory_order_acquire)) : 0;
        /* Still there (its children kept it, or references are left):
         * give back the references taken, unless it is dying meanwhile
         * (its last hold going on another thread). */
        if (holds && atomic_load_explicit(&node->seq, memory_order_relaxed) == before->seq &&
            !add_refs(node, refs_taken))
            holds = 0;
        if (!node || holds)
            break;
        /* Dying: once its freer has unlinked it (a few instructions
         * away), the handle is free to link again. */
        lt_spin_unlock(&shard->lock);
        sched_yield();
        lt_spin_lock(&shard->lock);
    }
    if (!given_here) {
        status = LIVETRACK_BAD_ARGUMENT;
    } else if (node) {
        if (atomic_load_explicit(&node->seq, memory_order_relaxed) != before->seq)
            status = LIVETRACK_REPLACED;
    } else if (!buckets_ready(shard) || !(node = take_node(shard))) {
        status = LIVETRACK_NO_MEMORY;
    } else {
        node->handle = before->handle;
        node->domain = (uint8_t)domain;
        node->type = (uint8_t)before->type;
        node->bytes = before->bytes;
        node->owner = before->owner;
        node->parents[0] = held[0];
        node->parents[1] = held[1];
        node->ticks = lt_ns_to_ticks(before->time_ns);
        node->stack = before->stack;
        node->release_stack = 0;
        atomic_store_explicit(&node->seq, before->seq, memory_order_relaxed);
        publish_incarnation(node, refs_taken);
        link_node_in_seq_order(shard, hash, node);
        maybe_grow(shard);
        linked_again = 1;
    }
    lt_spin_unlock(&shard->lock);

    if (!linked_again) {
        /* The object kept its holds, or is not back. Dropping them may end
         * a parent: the peak's set first, as before any death. */
        lt_peak_before_death();
        bury(held, call);
    }
    if (status == LIVETRACK_NO_MEMORY) {
        lt_out_of_memory("a registry node");
        return status;
    }
    if (status != LIVETRACK_OK)
        return status;
    if (linked_again)
        note_birth(&(lt_counted_change){(uint8_t)domain, (uint8_t)before->type, before->bytes});
    if (lt_timeline_on)
        lt_timeline_event(LT_EVENT_RESTORE, call, domain, before->type, before->handle, before->bytes);
    return LIVETRACK_OK;
}

/* The live node of the expected type, or NULL with *status saying why.
 * Caller holds the shard lock. Always inline: a retain now inlines it
 * twice (common and contended path), and GCC then kept one out-of-line
 * copy that release and destroy called too (+28 Ir a release). */
static inline __attribute__((always_inline)) lt_node *find_typed(lt_shard *shard, uint64_t hash, unsigned domain,
                                                                  livetrack_type type, uint64_t handle,
                                                                  livetrack_status *status)
{
    lt_node *node = find_live(shard, hash, domain, handle);
    *status = !node ? LIVETRACK_UNKNOWN
                    : (type != LIVETRACK_ANY_TYPE && node->type != type) ? LIVETRACK_WRONG_TYPE : LIVETRACK_OK;
    return *status == LIVETRACK_OK ? node : NULL;
}

/* A retain's timeline row: out of line and a tail call, so that the
 * common retain (timeline off) calls nothing. */
static __attribute__((noinline)) livetrack_status retain_row(const char *call, unsigned domain, unsigned type,
                                                             uint64_t handle, uint64_t bytes)
{
    lt_timeline_event(LT_EVENT_RETAIN, call, domain, type, handle, bytes);
    return LIVETRACK_OK;
}

/* A retain once its shard's lock is held; lets it go. */
static inline __attribute__((always_inline)) livetrack_status retain_holding(lt_shard *shard, uint64_t hash,
                                                                             livetrack_domain domain,
                                                                             livetrack_type type, uint64_t handle,
                                                                             const char *call)
{
    livetrack_status status;
    unsigned actual_type = 0;
    uint64_t bytes = 0;
    lt_node *node = find_typed(shard, hash, domain, type, handle, &status);
    if (node) {
        if (!add_refs(node, 1))
            status = LIVETRACK_UNKNOWN; /* died between find and update */
        actual_type = node->type;
        bytes = node->bytes;
    }
    lt_spin_unlock(&shard->lock);
    if (lt_timeline_on && status == LIVETRACK_OK)
        return retain_row(call, domain, actual_type, handle, bytes);
    return status;
}

/* A retain that found its shard locked: waits as lt_spin_lock does. Out
 * of line, so that the common retain is a leaf that saves no registers. */
static __attribute__((noinline)) livetrack_status retain_contended(lt_shard *shard, uint64_t hash,
                                                                   livetrack_domain domain, livetrack_type type,
                                                                   uint64_t handle, const char *call)
{
    lt_spin_lock(&shard->lock);
    return retain_holding(shard, hash, domain, type, handle, call);
}

livetrack_status livetrack_retain(livetrack_domain domain, livetrack_type type, uint64_t handle, const char *call)
{
    uint64_t hash = lt_hash(domain, handle);
    lt_shard *shard = lt_shard_of(hash);
    if (__builtin_expect(!lt_spin_trylock(&shard->lock), 0))
        return retain_contended(shard, hash, domain, type, handle, call);
    return retain_holding(shard, hash, domain, type, handle, call);
}

/* `only_seq`: 0, or the creation number the object must have (another
 * object recorded at its handle since is left alone). Inlined into each
 * caller, so release and destroy, which pass 0, pay nothing for it. */
static inline __attribute__((always_inline)) livetrack_status
drop_refs(livetrack_domain domain, livetrack_type type, uint64_t handle, int all, uint32_t *refs_left, const char *call,
          uint64_t only_seq)
{
    uint64_t hash = lt_hash(domain, handle);
    lt_shard *shard = lt_shard_of(hash);
    lt_node *dead_parents[2] = {NULL, NULL};
    livetrack_status status;
    uint32_t left = 0;
    unsigned actual_type = 0;
    uint64_t bytes = 0;
    /* The node died here: its domain, type and bytes are the ones above
     * (kept in registers; a lt_counted_change on the stack cost a store
     * and a load of each). */
    int died = 0;

    /* Before anything can die: a pending peak set is copied while the
     * live set still is the peak's (one flag load when none is pending). */
    lt_peak_before_death();
    lt_spin_lock(&shard->lock);
    lt_node *node = find_typed(shard, hash, domain, type, handle, &status);
    if (__builtin_expect(only_seq != 0, 0) && node &&
        atomic_load_explicit(&node->seq, memory_order_relaxed) != only_seq) {
        node = NULL;
        status = LIVETRACK_UNKNOWN;
    }
    if (node) {
        /* refs change only under this lock; holders may move concurrently
         * and are never touched, but for the references' own hold. */
        uint32_t refs = node->refs;
        actual_type = node->type;
        bytes = node->bytes;
        if (refs == 0) {
            status = LIVETRACK_NOT_OWNED;
        } else {
            left = all ? 0 : refs - 1;
            /* Unwinding under the lock is slow, but this is opt-in and
             * happens once per object, at the release that matters. */
            if (!left && lt_get_settings()->release_stacks)
                node->release_stack = lt_stack_capture_locked(domain, node->type);
            node->refs = left;
            /* The last reference: its hold goes, and with the last hold
             * the object. */
            if (!left && LT_HOLDS(atomic_fetch_sub_explicit(&node->counts, 1, memory_order_acq_rel)) == 1) {
                unlink_node_inline(shard, hash, node);
                died = 1;
                dead_parents[0] = node->parents[0];
                dead_parents[1] = node->parents[1];
                give_node(shard, node);
            }
        }
    }
    lt_spin_unlock(&shard->lock);
    if (died)
        note_death(&(lt_counted_change){(uint8_t)domain, (uint8_t)actual_type, bytes});
    if (lt_timeline_on && status == LIVETRACK_OK)
        lt_timeline_event(all ? LT_EVENT_DESTROY : LT_EVENT_RELEASE, call, domain, actual_type, handle, bytes);
    bury(dead_parents, call); /* after this release's row: parents it frees follow it */
    if (refs_left)
        *refs_left = left;
    return status;
}

livetrack_status livetrack_release(livetrack_domain domain, livetrack_type type, uint64_t handle,
                                   uint32_t *refs_left, const char *call)
{
    return drop_refs(domain, type, handle, 0, refs_left, call, 0);
}

livetrack_status livetrack_destroy(livetrack_domain domain, livetrack_type type, uint64_t handle, const char *call)
{
    return drop_refs(domain, type, handle, 1, NULL, call, 0);
}

livetrack_status livetrack_destroy_object(const livetrack_object *object, const char *call)
{
    if (!object || !object->seq)
        return LIVETRACK_UNKNOWN;
    return drop_refs(object->domain, object->type, object->handle, 1, NULL, call, object->seq);
}

void lt_describe_node(const lt_node *node, livetrack_object *out)
{
    lt_describe_node_as(node, atomic_load_explicit(&node->counts, memory_order_acquire), out);
}

void lt_describe_node_as(const lt_node *node, uint64_t counts, livetrack_object *out)
{
    out->domain = (livetrack_domain)node->domain;
    out->type = node->type;
    out->type_name = livetrack_type_name(out->domain, node->type);
    out->handle = node->handle;
    out->seq = node->seq;
    out->time_ns = node->ticks; /* converted by the caller, outside the lock */
    out->bytes = node->bytes;
    out->refs = node->refs;
    out->holders = LT_HOLDS(counts) - (node->refs != 0); /* the references' hold is not a holder */
    out->owner = node->owner;
    for (int i = 0; i < 2; i++) {
        /* A held parent cannot be freed while its child is linked. */
        out->parents[i] = node->parents[i] ? node->parents[i]->handle : 0;
        out->parent_types[i] = node->parents[i] ? node->parents[i]->type : 0;
    }
    out->stack = node->stack;
}

livetrack_status livetrack_lookup(livetrack_domain domain, uint64_t handle, livetrack_object *out)
{
    uint64_t hash = lt_hash(domain, handle);
    lt_shard *shard = lt_shard_of(hash);
    lt_spin_lock(&shard->lock);
    lt_node *node = find_live(shard, hash, domain, handle);
    if (node && out)
        lt_describe_node(node, out);
    lt_spin_unlock(&shard->lock);
    if (!node)
        return LIVETRACK_UNKNOWN;
    if (out)
        out->time_ns = lt_ticks_to_ns(out->time_ns);
    return LIVETRACK_OK;
}

/* Front ends check the same few objects (the program's context, queue,
 * kernels) on call after call: each thread remembers the last ones it
 * found live, by node, creation number and incarnation, and answers again
 * without the shard lock while that very object still is live. As in the
 * parent cache, nodes are recycled and never freed, so a stale entry is
 * safe to read: a node reused for another object, or the object replaced
 * at its handle, shows another incarnation. No hold is taken: the answer
 * is the object's state at the moment its word was read. */
#define CHECK_CACHE_SIZE 4u
typedef struct checked_object {
    uint64_t handle;
    remembered_object object;
    uint8_t domain;
    uint8_t type;
} checked_object;
static _Thread_local checked_object checked_objects[CHECK_CACHE_SIZE];

/* From the handle's own bits, not lt_hash: a hit then costs no hashing.
 * Handles are mostly heap addresses, 16-byte aligned at least. */
static checked_object *checked_slot(uint64_t handle)
{
    return &checked_objects[((handle >> 4) ^ (handle >> 10)) & (CHECK_CACHE_SIZE - 1)];
}

static int checked_still_live(const checked_object *entry, unsigned domain, uint64_t handle)
{
    if (!entry->object.node || entry->handle != handle || entry->domain != domain)
        return 0;
    /* Acquire: the seq read after it is at least the one of the
     * incarnation seen (publish_incarnation stores with release order). */
    return shows_remembered(atomic_load_explicit(&entry->object.node->counts, memory_order_acquire), &entry->object);
}

/* A cache miss: the shard lookup, which refills the entry. Out of line so
 * that a hit saves and restores no registers. */
static __attribute__((noinline)) livetrack_status live_type_slow(checked_object *entry, unsigned domain,
                                                                 uint64_t handle, livetrack_type *type)
{
    uint64_t hash = lt_hash(domain, handle);
    lt_shard *shard = lt_shard_of(hash);
    lt_spin_lock(&shard->lock);
    lt_node *node = find_live(shard, hash, domain, handle);
    if (node) {
        /* Under the lock the incarnation holds still. */
        uint64_t counts = atomic_load_explicit(&node->counts, memory_order_relaxed);
        *entry = (checked_object){
            handle, {node, atomic_load_explicit(&node->seq, memory_order_relaxed), live_from(counts)}, (uint8_t)domain,
            node->type};
    }
    livetrack_type found = node ? node->type : 0;
    lt_spin_unlock(&shard->lock);
    if (node && type)
        *type = found;
    return node ? LIVETRACK_OK : LIVETRACK_UNKNOWN;
}

livetrack_status livetrack_live_type(livetrack_domain domain, uint64_t handle, livetrack_type *type)
{
    checked_object *entry = checked_slot(handle);
    if (!checked_still_live(entry, domain, handle))
        return live_type_slow(entry, domain, handle, type);
    if (type)
        *type = entry->type;
    return LIVETRACK_OK;
}

/* Whether `object` (that very incarnation) is live; runs fn, if any,
 * before the shard lock is dropped. */
static int check_live(const livetrack_object *object, void (*fn)(void *context), void *context)
{
    uint64_t hash = lt_hash(object->domain, object->handle);
    lt_shard *shard = lt_shard_of(hash);
    lt_spin_lock(&shard->lock);
    lt_node *node = find_live(shard, hash, object->domain, object->handle);
    int live = node && node->seq == object->seq;
    if (live && fn)
        fn(context);
    lt_spin_unlock(&shard->lock);
    return live;
}

int livetrack_still_live(const livetrack_object *object) { return object ? check_live(object, NULL, NULL) : 0; }

int livetrack_while_live(const livetrack_object *object, void (*fn)(void *context), void *context)
{
    return object && fn ? check_live(object, fn, context) : 0;
}

void livetrack_get_stats(livetrack_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++) {
        lt_shard *shard = &lt_shards[i];
        lt_spin_lock(&shard->lock);
        out->live_objects += shard->live;
        out->live_bytes += shard->live_bytes;
        out->created += shard->created;
        out->node_bytes += shard->slab_nodes * sizeof(lt_node) + (shard->bucket_mask ? (shard->bucket_mask + 1u) * sizeof(lt_node *) : 0);
        lt_spin_unlock(&shard->lock);
    }
    lt_peak_marks(&out->peak_objects, &out->peak_bytes);
    /* Threads add their differences to the peak's totals in batches (peak.c):
     * the high-water mark is never below what is live now. */
    if (out->peak_objects < out->live_objects)
        out->peak_objects = out->live_objects;
    if (out->peak_bytes < out->live_bytes)
        out->peak_bytes = out->live_bytes;
    out->unique_stacks = lt_stack_count();
    out->stack_bytes = lt_stack_bytes();
    out->stack_walks = lt_stack_walks();
    lt_fill_counters(out);
}

void lt_registry_live_totals(uint64_t *objects, uint64_t *bytes)
{
    /* Each shard's counters are written under its lock; a relaxed read of
     * each is exact for that shard at some moment, which is all a
     * timeline row or the peak check needs. */
    uint64_t count = 0, total = 0;
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++) {
        count += __atomic_load_n(&lt_shards[i].live, __ATOMIC_RELAXED);
        total += __atomic_load_n(&lt_shards[i].live_bytes, __ATOMIC_RELAXED);
    }
    *objects = count;
    *bytes = total;
}

uint64_t lt_created_count(void)
{
    uint64_t created = 0;
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++)
        created += __atomic_load_n(&lt_shards[i].created, __ATOMIC_RELAXED);
    return created;
}

uint64_t livetrack_mark(void) { return lt_creation_number_now(); }

void lt_registry_lock_all(void)
{
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++)
        lt_spin_lock(&lt_shards[i].lock);
}

void lt_registry_unlock_all(void)
{
    for (unsigned i = LT_SHARD_COUNT; i-- > 0;)
        lt_spin_unlock(&lt_shards[i].lock);
}
