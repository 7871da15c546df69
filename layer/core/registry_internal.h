/*
 * Private layout of the live-object registry, shared by registry.c and
 * snapshot.c only.
 *
 * Notes on locking
 * ----------------
 * The registry is split into LT_SHARD_COUNT shards. A handle's shard is
 * chosen from the high bits of its hash, its bucket from the low bits, so
 * the two never correlate.
 *
 * shard->lock protects everything in that shard: the bucket array, every
 * node's hash chain and age links, node->linked, node->refs, the shard's
 * free list and counters.
 *
 * node->counts packs a node's incarnation (high 32 bits) and its holds
 * (low 32 bits) into one atomic word. The holds are its holders (children,
 * pins, keepers) plus one for the program's references while it has any
 * (node->refs, a plain field under the lock), so that "nothing holds the
 * object any more" is a single observable transition: holds reaching 0.
 * Holds are added under the node's shard lock (a lookup, a retain), or
 * without it on a node already held (a child's hold on its parent's first
 * parent) or through a per-thread cache (below); they are dropped without
 * any lock when a child dies. Exactly one thread sees the holds drop to 0;
 * that thread unlinks and frees the node (taking the shard lock if it does
 * not hold it). A linked node with no holds is dying and every lookup
 * treats it as absent.
 *
 * The incarnation changes, only under the shard lock, whenever the node
 * stops being the live object of its handle while something may still
 * name it: when a create or restore takes it for a new object, and when a
 * create forgets the stale object at its handle (forget_stale), which
 * children may keep (below). So the word read with a given incarnation
 * and holds not 0 means: this very object, live and the one its handle
 * names (LT_LINKED).
 *
 * A node is LT_LINKED (in its bucket and its shard's age list),
 * LT_UNLINKED (free, or dying and already taken out), or LT_REPLACED: the
 * driver gave its handle to a new object while children still held it
 * (a context destroyed with live buffers, its address handed out again).
 * A replaced node left its bucket, so the handle names the new object
 * alone, but stays in the age list and in the shard's live count until
 * its last holder goes: snapshots, reports and the peak see it as what it
 * is, an object the program released that its children keep alive. Its
 * replacement moved its incarnation, so the caches that knew it as its
 * handle's object fail on it; no lookup finds it again (it is in no
 * bucket), so no cache learns the new incarnation; and a cache that knows
 * its successor names the successor's own node (taken before the
 * replacement, while this one was still in use). So no cached hold lands
 * on a replaced node, and one meant for either object never lands on the
 * other.
 *
 * Each thread caches the last parent it looked up (node, creation number
 * and incarnation). Nodes are recycled, never freed, so a stale pointer is
 * safe to read; the cached hold is a compare-and-swap of the counts word
 * that expects the cached incarnation and refuses 0 holds, so it fails,
 * taking nothing, on a node recycled or replaced since (see hold_cached in
 * registry.c). Never is a hold put on another object, even for an instant:
 * one there when that object's owner dropped its last reference would keep
 * it in the table after its driver freed it.
 *
 * livetrack_live_type keeps a second per-thread cache (the objects it found
 * live lately) under the same rule, without holds: an entry answers only
 * while its node's word shows the cached incarnation with holds, and its
 * seq still is the cached one.
 *
 * A shard's last_seq (the newest creation number linked there) and its
 * created count are written under its lock with atomic stores: the
 * created count is summed without the locks.
 *
 * The hot path never holds two shard locks at once. Only snapshots take all
 * of them, always in index order.
 */
#ifndef LIVETRACK_REGISTRY_INTERNAL_H
#define LIVETRACK_REGISTRY_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "livetrack/livetrack.h"
#include "spinlock.h"

#define LT_SHARD_BITS 6u
#define LT_SHARD_COUNT (1u << LT_SHARD_BITS)
#define LT_INITIAL_BUCKETS 64u  /* per shard, grown by doubling */
#define LT_NODES_PER_SLAB 64u   /* nodes taken from malloc at a time */
#define LT_GRAVEYARD 128u       /* released objects remembered per shard */
/* Objects put back remembered per shard: as many as deaths, since each
 * follows a death (a program that polls a destroy the driver refuses
 * fills both at the same pace). */
#define LT_RESTORED LT_GRAVEYARD

/* node->counts: incarnation << 32 | holds (see the notes above) */
#define LT_INCARNATION_ONE ((uint64_t)1 << 32)
#define LT_HOLDS(counts) ((uint32_t)(counts))

/* Where a node is: see the locking notes above. */
typedef enum lt_link_state {
    LT_UNLINKED = 0, /* on the free list, or dying and taken out already */
    LT_LINKED = 1,   /* in its bucket and in the age list: the object its handle names */
    LT_REPLACED = 2  /* in the age list only: its handle names a newer object, children hold this one */
} lt_link_state;

typedef struct lt_node {
    struct lt_node *chain; /* next in the bucket; next free node when free */
    struct lt_node *newer; /* age list: toward the shard's newest */
    struct lt_node *older; /* age list: toward the shard's oldest */
    /* From domain to owner, the fields of a lt_released in its order, so
     * that a death copies them to the graveyard in four moves (GCC merges
     * the adjacent loads and stores), not nine. */
    uint8_t domain;
    uint8_t type;
    uint8_t linked; /* lt_link_state */
    /* The program's references (in the padding before handle: copied into
     * a lt_released's padding by a death, and left there). */
    uint32_t refs;
    uint64_t handle;
    /* Atomic because the per-thread caches read it without the shard lock
     * to check that a node still is the object they remember. */
    _Atomic uint64_t seq;
    livetrack_stack_id stack;         /* creation call site */
    livetrack_stack_id release_stack; /* LIVETRACK_RELEASE_STACKS: the release that dropped refs to 0 */
    uint64_t bytes;
    uint64_t ticks; /* creation time, lt_clock units */
    const void *owner;
    struct lt_node *parents[2];
    _Atomic uint64_t counts; /* incarnation << 32 | holds */
} lt_node;
/* unlink_node copies the block from domain to owner as a lt_released. */
#define LT_NODE_AS_RELEASED(field) \
    (offsetof(lt_node, field) - offsetof(lt_node, domain) == offsetof(lt_released, field))
_Static_assert(LT_NODE_AS_RELEASED(domain) && LT_NODE_AS_RELEASED(type) && LT_NODE_AS_RELEASED(handle) &&
                   offsetof(lt_node, seq) - offsetof(lt_node, domain) == offsetof(lt_released, seq) &&
                   offsetof(lt_node, stack) - offsetof(lt_node, domain) == offsetof(lt_released, create_stack) &&
                   LT_NODE_AS_RELEASED(release_stack) && LT_NODE_AS_RELEASED(bytes) && LT_NODE_AS_RELEASED(ticks) &&
                   LT_NODE_AS_RELEASED(owner) &&
                   offsetof(lt_node, owner) + sizeof(void *) - offsetof(lt_node, domain) == sizeof(lt_released) &&
                   sizeof(_Atomic uint64_t) == sizeof(uint64_t),
               "lt_node's fields from domain to owner must be laid out as a lt_released");

typedef struct lt_shard {
    lt_spinlock lock;
    lt_node **buckets;
    uint32_t bucket_mask; /* bucket count - 1; 0 until first use */
    uint64_t live;        /* linked nodes */
    uint64_t live_bytes;
    uint64_t slab_nodes;  /* nodes ever taken from malloc */
    uint64_t last_seq;    /* the creation number of the newest object linked here */
    uint64_t created;     /* objects linked here by a create (not a restore) */
    lt_node *newest;      /* head of the age list */
    lt_node *oldest;
    lt_node *free_nodes;
    /* Ring of the latest unlinked objects, so a misuse of a released
     * handle can show where it was created and released. */
    uint32_t graveyard_next;
    /* Objects linked again in their old place in the age list
     * (livetrack_restore), so older than the peak's walk of what is new
     * since its set: the set takes them from `restored`, as deaths from
     * the graveyard. A ring of the latest; `restores` counts them all, and
     * sits beside graveyard_next: the peak reads both of every shard. */
    uint32_t restores;
    lt_released graveyard[LT_GRAVEYARD];
    lt_released restored[LT_RESTORED];
} __attribute__((aligned(64))) lt_shard;

extern lt_shard lt_shards[LT_SHARD_COUNT];

uint64_t lt_hash(unsigned domain, uint64_t handle);
static inline unsigned lt_shard_index(uint64_t hash) { return (unsigned)(hash >> (64 - LT_SHARD_BITS)); }
/* The shard's address comes out of an empty asm, opaque to the compiler:
 * otherwise GCC kept the shard index and rebuilt the address from it (a
 * multiply by the shard's size, 81 * 128 bytes) for each field it
 * touched, ~40 instructions a create and release. */
static inline lt_shard *lt_shard_of(uint64_t hash)
{
    lt_shard *shard = &lt_shards[lt_shard_index(hash)];
    __asm__("" : "+r"(shard));
    return shard;
}

/* Fill a public description of a node in the age list (linked or
 * replaced). Caller holds its shard lock. */
void lt_describe_node(const lt_node *node, livetrack_object *out);
/* The same with its counts as read once by the caller: holders drop
 * without the lock, and a second read could find a node the caller took
 * for live dying (refs and holders 0). */
void lt_describe_node_as(const lt_node *node, uint64_t counts, livetrack_object *out);

/* The creation numbers of the parents a node in the age list holds, 0
 * where it has none: a parent's handle alone may name a newer object.
 * Caller holds the node's shard lock (its holds keep the parents). */
static inline void lt_parent_seqs_of(const lt_node *node, uint64_t out[2])
{
    for (int i = 0; i < 2; i++)
        out[i] = node->parents[i] ? atomic_load_explicit(&node->parents[i]->seq, memory_order_relaxed) : 0;
}

#endif
