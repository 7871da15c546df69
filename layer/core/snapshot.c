/*
 * Snapshots of the live set.
 *
 * All shard locks are held only while nodes are copied; the copy is then
 * ordered newest-first (each shard's age list is already in sequence order,
 * so a 64-way merge replaces a sort) and handed to the caller, who may
 * call back into the registry freely while walking it.
 *
 * The objects stay where they were copied and the merge only writes their
 * order, an index per object: a second copy of every 96-byte description
 * doubled the memory a report touches, and with 10^6 live objects at exit
 * the page faults for it were most of the report's time on some hosts.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core_internal.h"
#include "registry_internal.h"

struct livetrack_snapshot {
    size_t count;
    livetrack_object *objects; /* as copied, shard by shard */
    /* Beside each object of the copy (same index), the creation numbers
     * of its parents: a parent's handle may name two objects of one
     * snapshot, a replaced one its children keep and the newer one the
     * driver gave the handle to. In the block of `objects`, after them. */
    uint64_t (*parent_seqs)[2];
    size_t order[]; /* newest first: indexes into objects */
};

typedef struct segment {
    uint64_t seq; /* of its newest remaining entry: compared without a load from the copy */
    size_t next;  /* index of that entry in the flat copy */
    size_t end;
} segment;

/* Whether a node whose counts the caller read is one to copy. */
static int wanted(const lt_node *node, uint64_t counts, livetrack_domain domain, const void *owner, uint64_t since)
{
    if (!LT_HOLDS(counts))
        return 0; /* dying */
    if (node->seq <= since)
        return 0;
    if (domain != LIVETRACK_DOMAIN_ANY && node->domain != domain)
        return 0;
    return !owner || node->owner == owner;
}

static size_t live_upper_bound(void)
{
    size_t total = 0;
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++)
        total += __atomic_load_n(&lt_shards[i].live, __ATOMIC_RELAXED);
    return total;
}

/* Sift-down for a heap of segments, the newest head seq on top. */
static void sift(segment *heap, size_t count, size_t at)
{
    for (;;) {
        size_t best = at, left = 2 * at + 1, right = left + 1;
        if (left < count && heap[left].seq > heap[best].seq)
            best = left;
        if (right < count && heap[right].seq > heap[best].seq)
            best = right;
        if (best == at)
            return;
        segment swap = heap[at];
        heap[at] = heap[best];
        heap[best] = swap;
        at = best;
    }
}

livetrack_snapshot *livetrack_snapshot_take(livetrack_domain domain, const void *owner)
{
    return livetrack_snapshot_since(domain, owner, 0);
}

livetrack_snapshot *livetrack_snapshot_since(livetrack_domain domain, const void *owner, uint64_t mark)
{
    size_t capacity = live_upper_bound() + 64;
    livetrack_object *flat = NULL;
    uint64_t(*parent_seqs)[2] = NULL;
    segment segments[LT_SHARD_COUNT];
    size_t used, segment_count;
    for (;;) {
        /* One block: the objects, then their parents' creation numbers
         * (a livetrack_object is a multiple of 8 bytes, so they stay
         * aligned). */
        _Static_assert(sizeof(livetrack_object) % sizeof(uint64_t) == 0, "parent_seqs must stay aligned");
        flat = lt_malloc((capacity ? capacity : 1) * (sizeof *flat + sizeof *parent_seqs));
        if (!flat) {
            lt_out_of_memory("a snapshot");
            return NULL;
        }
        parent_seqs = (uint64_t(*)[2])(void *)(flat + (capacity ? capacity : 1));
        lt_registry_lock_all();
        size_t live = 0;
        for (unsigned i = 0; i < LT_SHARD_COUNT; i++)
            live += lt_shards[i].live;
        if (live <= capacity)
            break;
        /* More objects appeared between counting and locking. */
        lt_registry_unlock_all();
        lt_free(flat);
        capacity = live + live / 4 + 64;
    }
    used = 0;
    segment_count = 0;
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++) {
        size_t start = used;
        for (const lt_node *node = lt_shards[i].newest; node; node = node->older) {
            /* Read once: a child dying on another thread drops its hold
             * on this node without a lock, and a second read could find
             * the node dying after it was taken for live. */
            uint64_t counts = atomic_load_explicit(&node->counts, memory_order_acquire);
            if (!wanted(node, counts, domain, owner, mark))
                continue;
            lt_describe_node_as(node, counts, &flat[used]);
            lt_parent_seqs_of(node, parent_seqs[used]);
            used++;
        }
        if (used > start)
            segments[segment_count++] = (segment){flat[start].seq, start, used};
    }
    lt_registry_unlock_all();

    livetrack_snapshot *snapshot = lt_malloc(sizeof *snapshot + (used ? used : 1) * sizeof snapshot->order[0]);
    if (!snapshot) {
        lt_free(flat);
        lt_out_of_memory("a snapshot");
        return NULL;
    }
    for (size_t i = segment_count / 2; i-- > 0;)
        sift(segments, segment_count, i);
    lt_tick_scale scale;
    lt_tick_scale_now(&scale);
    size_t out = 0;
    while (segment_count) {
        size_t index = segments[0].next++;
        flat[index].time_ns = lt_scale_ticks(&scale, flat[index].time_ns);
        snapshot->order[out++] = index;
        if (segments[0].next == segments[0].end)
            segments[0] = segments[--segment_count];
        else {
            segments[0].seq = flat[segments[0].next].seq;
            /* The 64 segments are read in turns, too many streams for the
             * hardware prefetcher: ask for this one's next entry now, so
             * that its seq is in cache when the segment comes up again. */
            if (segments[0].next + 1 < segments[0].end)
                __builtin_prefetch(&flat[segments[0].next + 1].seq);
        }
        sift(segments, segment_count, 0);
    }
    snapshot->count = out;
    snapshot->objects = flat;
    snapshot->parent_seqs = parent_seqs;
    return snapshot;
}

size_t livetrack_snapshot_count(const livetrack_snapshot *snapshot) { return snapshot ? snapshot->count : 0; }

const livetrack_object *livetrack_snapshot_at(const livetrack_snapshot *snapshot, size_t index)
{
    return snapshot && index < snapshot->count ? &snapshot->objects[snapshot->order[index]] : NULL;
}

livetrack_status livetrack_snapshot_parent_seqs(const livetrack_snapshot *snapshot, size_t index, uint64_t out[2])
{
    if (!snapshot || !out || index >= snapshot->count)
        return LIVETRACK_BAD_ARGUMENT;
    out[0] = snapshot->parent_seqs[snapshot->order[index]][0];
    out[1] = snapshot->parent_seqs[snapshot->order[index]][1];
    return LIVETRACK_OK;
}

#define PREFETCH_AHEAD 16 /* objects; ~1.5 KiB of copy in flight */

void lt_snapshot_prefetch_oldest_first(const livetrack_snapshot *snapshot, size_t index)
{
    if (!snapshot || index < PREFETCH_AHEAD || index - PREFETCH_AHEAD >= snapshot->count)
        return;
    const char *object = (const char *)&snapshot->objects[snapshot->order[index - PREFETCH_AHEAD]];
    __builtin_prefetch(object);
    __builtin_prefetch(object + sizeof(livetrack_object) - 1); /* 96 bytes: it may span two lines */
}

void livetrack_snapshot_free(livetrack_snapshot *snapshot)
{
    if (!snapshot)
        return;
    lt_free(snapshot->objects);
    lt_free(snapshot);
}
