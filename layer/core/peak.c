/*
 * The peak: high-water marks of live objects and bytes, and the live set
 * (by call site) at the moment live bytes were highest (ties: objects).
 *
 * Copying the set at every new high would cost O(live objects) per create
 * while a program grows. Instead a new high only marks the peak "pending";
 * the set is copied (a walk of the registry, grouped by call site) at the
 * first death after it, when the live set is still exactly the peak's (a
 * growing phase only adds). Copies are amortised: one is taken only when
 * at least as many objects were created since the last copy as are live,
 * so the cost per event stays O(1) and the hot path keeps no per-site
 * counters. A copy skipped that way leaves the older set, marked
 * approximate; at report time a program still at its peak gets an exact
 * copy.
 *
 * Totals: each thread keeps its own running difference and adds it to the
 * global atomics ("flushes") when it might make a new high (its flushed
 * total plus its own difference beats the peak), when it grows past
 * FLUSH_OBJECTS / FLUSH_BYTES, when the thread exits, and at once when it
 * would go below zero. A create/release loop below the peak so touches no
 * shared cache line, and no thread ever holds back a release: the flushed
 * totals are never above what is live (they only miss other threads'
 * creates, each less than the flush bounds, and may even go below zero
 * when those are released elsewhere), so a high they show was reached.
 * Holding releases back let another thread's creates count a peak that
 * never was, with a copied set that did not add up to it.
 *
 * The peak is exact in a single thread; with several it may be low by
 * other threads' unflushed creates. The copied set is exact (a walk under
 * every shard lock) and its own totals are what the report shows: a walk
 * that finds more than the key raises the key to it (the flushed totals
 * were behind), one that finds less was taken after the peak moved on,
 * and either is marked approximate. Exact live counts come from the
 * shards (lt_registry_live_totals).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "clock.h"
#include "core_internal.h"
#include "history.h"
#include "registry_internal.h"
#include "spinlock.h"
#include "stacks.h"

#define FLUSH_OBJECTS 64
#define FLUSH_BYTES ((int64_t)1 << 20)

/* Flushed totals: the sum of every thread's flushed differences. Signed:
 * they go below zero when a thread releases objects whose creates another
 * thread still holds unflushed (events made on one thread and released
 * on a driver's callback thread), and read as 2^64 - n unsigned they made
 * a peak of ~2^64 that no real one could beat afterwards. */
static _Atomic int64_t live_objects, live_bytes;

typedef struct local_totals {
    int64_t objects;
    int64_t bytes;
    int registered; /* the thread-exit flush is armed */
} local_totals;
static _Thread_local local_totals local;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t max_objects, max_bytes;
static _Atomic int pending;

/* Under `lock`: the peak key and its copied set. */
static lt_spinlock lock;
/* Atomic only so the hot path's pre-check may read them without it. */
static _Atomic uint64_t key_bytes, key_objects;
static uint64_t key_ticks;
static int set_current;     /* the set below was copied for the current key */
static int set_approximate; /* ... but its totals were not the key's */
static uint64_t set_created; /* lt_created_count() when it was copied */
static uint64_t set_objects, set_bytes, set_ticks;
static lt_site_count *set_sites;
static size_t set_count;

static void raise_to(_Atomic uint64_t *mark, uint64_t value)
{
    uint64_t seen = atomic_load_explicit(mark, memory_order_relaxed);
    while (value > seen &&
           !atomic_compare_exchange_weak_explicit(mark, &seen, value, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* The peak is where live bytes were highest; among equal bytes (or with
 * no sized objects at all) where objects were. */
static int beats_key(uint64_t bytes, uint64_t objects)
{
    uint64_t peak_bytes = atomic_load_explicit(&key_bytes, memory_order_relaxed);
    return bytes > peak_bytes ||
           (bytes == peak_bytes && objects > atomic_load_explicit(&key_objects, memory_order_relaxed));
}

/* A flushed total plus a thread's difference, as a count: below zero
 * reads as none. Summed unsigned, so absurd sizes wrap instead of being
 * undefined. */
static uint64_t count_of(int64_t flushed, int64_t difference)
{
    int64_t sum = (int64_t)((uint64_t)flushed + (uint64_t)difference);
    return sum > 0 ? (uint64_t)sum : 0;
}

/* Add this thread's difference to the global totals; returns them. */
static void flush(uint64_t *objects, uint64_t *bytes)
{
    *objects = count_of(atomic_fetch_add_explicit(&live_objects, local.objects, memory_order_relaxed), local.objects);
    *bytes = count_of(atomic_fetch_add_explicit(&live_bytes, local.bytes, memory_order_relaxed), local.bytes);
    local.objects = 0;
    local.bytes = 0;
}

static void flush_at_thread_exit(void *unused)
{
    (void)unused;
    uint64_t objects, bytes;
    flush(&objects, &bytes);
}

static void make_exit_key(void) { pthread_key_create(&exit_key, flush_at_thread_exit); }

/* Once per thread: make sure its difference is not lost when it exits. */
static void arm_exit_flush(void)
{
    local.registered = 1;
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, &local);
}

void lt_peak_created(uint64_t bytes)
{
    if (!local.registered)
        arm_exit_flush();
    local.objects += 1;
    local.bytes += (int64_t)bytes;
    uint64_t objects = count_of(atomic_load_explicit(&live_objects, memory_order_relaxed), local.objects);
    uint64_t total = count_of(atomic_load_explicit(&live_bytes, memory_order_relaxed), local.bytes);
    int candidate = beats_key(total, objects);
    if (!candidate && local.objects < FLUSH_OBJECTS && local.bytes < FLUSH_BYTES)
        return;
    flush(&objects, &total);
    raise_to(&max_objects, objects);
    raise_to(&max_bytes, total);
    if (!candidate || !beats_key(total, objects))
        return;
    lt_spin_lock(&lock);
    if (beats_key(total, objects)) {
        atomic_store_explicit(&key_bytes, total, memory_order_relaxed);
        atomic_store_explicit(&key_objects, objects, memory_order_relaxed);
        key_ticks = lt_ticks();
        set_current = 0;
        atomic_store_explicit(&pending, 1, memory_order_release);
    }
    lt_spin_unlock(&lock);
}

static int same_site(const lt_site_count *entry, const lt_node *node)
{
    return entry->stack == node->stack && entry->domain == node->domain && entry->type == node->type;
}

/* Group the live set by call site into `set_sites`. Holds every shard
 * lock while it walks; the caller holds `lock` (never taken under a shard
 * lock, so the order is always peak lock, then shards). With `only_higher`
 * the copy replaces the set only if it beats the key: a report's check of
 * the shards' totals (read without their locks, so possibly a moment that
 * never was) must not trade an exact set for a lower one. */
static void copy_set(uint64_t created, int only_higher)
{
    lt_registry_lock_all();
    size_t live = 0;
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++)
        live += lt_shards[i].live;
    /* Open addressing on the call site: the stack id and the kind. Every
     * linked node's stack was interned before the node was linked, so
     * there are at most lt_stack_count() distinct ids among them, each of
     * one kind; nodes whose stack could not be interned (out of memory)
     * share id 0 whatever their kind, so 0 adds up to one site per kind.
     * Sizing for `live` took 48 MB of zeroed memory at 10^6 objects, for
     * a thousand sites. */
    size_t sites = lt_stack_count() + LIVETRACK_DOMAIN_COUNT * (LIVETRACK_MAX_TYPES + 1);
    if (sites > live)
        sites = live;
    size_t slots = 16;
    while (slots < sites * 2 + 2)
        slots *= 2;
    lt_site_count *table = lt_calloc(slots, sizeof *table);
    if (!table) {
        lt_registry_unlock_all();
        lt_out_of_memory("the peak's live set");
        return;
    }
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++) {
        for (const lt_node *node = lt_shards[i].newest; node; node = node->older) {
            if (!atomic_load_explicit(&node->counts, memory_order_relaxed))
                continue; /* dying */
            /* A slot is taken once it counts an object: id 0 is a real
             * key, not the empty marker. */
            uint64_t key = (uint64_t)node->stack << 16 | (uint64_t)node->domain << 8 | node->type;
            size_t slot = (size_t)(key * 0x9e3779b97f4a7c15ull) & (slots - 1);
            while (table[slot].objects && !same_site(&table[slot], node))
                slot = (slot + 1) & (slots - 1);
            if (!table[slot].objects)
                table[slot] = (lt_site_count){node->stack, node->domain, node->type, 0, 0};
            table[slot].objects++;
            table[slot].bytes += node->bytes;
        }
    }
    lt_registry_unlock_all();
    size_t kept = 0;
    uint64_t objects = 0, bytes = 0;
    for (size_t i = 0; i < slots; i++)
        if (table[i].objects) {
            objects += table[i].objects;
            bytes += table[i].bytes;
            table[kept++] = table[i]; /* compact in place: kept <= i */
        }
    if (only_higher && !beats_key(bytes, objects)) {
        lt_free(table);
        return;
    }
    lt_free(set_sites);
    set_sites = table;
    set_count = kept;
    /* The report states the set's own totals, so that they always add up
     * to the sites listed. With several threads they may differ from the
     * key: more, when other threads' creates were still unflushed (the
     * walk saw a real moment above the key, which becomes the key: the
     * peak must never go down); less, when another thread released before
     * the walk. */
    set_approximate = objects != atomic_load_explicit(&key_objects, memory_order_relaxed) ||
                      bytes != atomic_load_explicit(&key_bytes, memory_order_relaxed);
    if (beats_key(bytes, objects)) {
        atomic_store_explicit(&key_bytes, bytes, memory_order_relaxed);
        atomic_store_explicit(&key_objects, objects, memory_order_relaxed);
        key_ticks = lt_ticks();
        raise_to(&max_objects, objects);
        raise_to(&max_bytes, bytes);
    }
    set_objects = objects;
    set_bytes = bytes;
    set_ticks = key_ticks;
    set_created = created;
    set_current = 1;
}

void lt_peak_before_death(void)
{
    if (!atomic_load_explicit(&pending, memory_order_acquire))
        return;
    lt_spin_lock(&lock);
    if (atomic_load_explicit(&pending, memory_order_relaxed)) {
        atomic_store_explicit(&pending, 0, memory_order_relaxed);
        uint64_t created = lt_created_count(), live, bytes;
        lt_registry_live_totals(&live, &bytes);
        if (created - set_created >= live)
            copy_set(created, 0);
    }
    lt_spin_unlock(&lock);
}

void lt_peak_died(uint64_t bytes)
{
    local.objects -= 1;
    local.bytes -= (int64_t)bytes;
    /* Below zero in either: this thread released what it had not counted
     * in (another thread's objects, or its own already flushed). Held
     * back, that would leave the flushed totals too high, and another
     * thread's create could count a peak that never was. A thread that
     * only releases so never keeps a difference to flush at exit. */
    if ((local.objects | local.bytes) < 0) {
        uint64_t objects, total;
        flush(&objects, &total);
    }
}

void lt_peak_marks(uint64_t *objects, uint64_t *bytes)
{
    *objects = atomic_load_explicit(&max_objects, memory_order_relaxed);
    *bytes = atomic_load_explicit(&max_bytes, memory_order_relaxed);
}

int lt_peak_get(lt_peak_info *out)
{
    memset(out, 0, sizeof *out);
    lt_spin_lock(&lock);
    /* Still at the peak with no set copied for it (nothing died since), or
     * above it? The flushed totals lag behind the shards' exact ones by
     * other threads' unpushed creates, even when the set is current. Then
     * the live set now is the peak's, or a higher one that copy_set makes
     * the peak. */
    uint64_t objects, bytes;
    lt_registry_live_totals(&objects, &bytes);
    int at_key = bytes == atomic_load_explicit(&key_bytes, memory_order_relaxed) &&
                 objects == atomic_load_explicit(&key_objects, memory_order_relaxed);
    if (!set_current && (at_key || beats_key(bytes, objects))) {
        atomic_store_explicit(&pending, 0, memory_order_relaxed);
        copy_set(lt_created_count(), 0);
    } else if (beats_key(bytes, objects)) {
        copy_set(lt_created_count(), 1);
    }
    lt_peak_marks(&out->objects, &out->bytes); /* after copy_set, which may raise them */
    out->approximate = !set_current || set_approximate;
    out->set_objects = set_objects;
    out->set_bytes = set_bytes;
    out->time_ns = lt_ticks_to_ns(set_ticks);
    out->site_count = set_count;
    out->sites = set_count ? lt_malloc(set_count * sizeof *out->sites) : NULL;
    if (out->sites)
        memcpy(out->sites, set_sites, set_count * sizeof *out->sites);
    else
        out->site_count = 0;
    lt_spin_unlock(&lock);
    return 1;
}

/* The peak lock nests outside the shard locks (copy_set), so fork takes
 * it first. */
void lt_peak_lock(void) { lt_spin_lock(&lock); }
void lt_peak_unlock(void) { lt_spin_unlock(&lock); }
