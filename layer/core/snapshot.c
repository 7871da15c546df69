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
    size_t order[];            /* newest first: indexes into objects */
};

typedef struct segment {
    uint64_t seq; /* of its newest remaining entry: compared without a load from the copy */
    size_t next;  /* index of that entry in the flat copy */
    size_t end;
} segment;

static int wanted(const lt_node *node, livetrack_domain domain, const void *owner, uint64_t since)
{
    if (!LT_HOLDS(atomic_load_explicit(&node->counts, memory_order_acquire)))
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
    segment segments[LT_SHARD_COUNT];
    size_t used, segment_count;
    for (;;) {
        flat = lt_malloc((capacity ? capacity : 1) * sizeof *flat);
        if (!flat) {
            lt_out_of_memory("a snapshot");
            return NULL;
        }
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
        for (const lt_node *node = lt_shards[i].newest; node; node = node->older)
            if (wanted(node, domain, owner, mark))
                lt_describe_node(node, &flat[used++]);
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
    return snapshot;
}

size_t livetrack_snapshot_count(const livetrack_snapshot *snapshot) { return snapshot ? snapshot->count : 0; }

const livetrack_object *livetrack_snapshot_at(const livetrack_snapshot *snapshot, size_t index)
{
    return snapshot && index < snapshot->count ? &snapshot->objects[snapshot->order[index]] : NULL;
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
