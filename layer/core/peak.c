/*
 * The peak: high-water marks of live objects and bytes, and the live set
 * (by call site) at the moment live bytes were highest (ties: objects).
 *
 * Copying the set at every new high would cost O(live objects) per create
 * while a program grows. Instead a new high only marks the peak "pending";
 * the set is brought up to date (grouped by call site) at the first death
 * after it, when the live set is still exactly the peak's (a growing phase
 * only adds). Without per-site counters on the hot path, that is done from
 * what changed since the set was last made: the objects created since
 * (the head of each shard's age list, newer than the set) and the set's
 * objects that died since (each shard's graveyard, which keeps the last
 * LT_GRAVEYARD deaths with their call site and size), and the objects
 * put back since with their old creation numbers (livetrack_restore, after
 * a refused destroy: each shard's ring of the last LT_RESTORED). That
 * costs O(events since), never O(live objects): a look at each shard's
 * counters finds the shards that changed, and only those are locked and
 * read. Only when a shard's graveyard or ring has wrapped since (more
 * there than it keeps) is the set copied by a walk of the registry, and then only when
 * at least as many events happened since the last copy as objects are
 * live, so the cost per event stays O(1). A copy skipped that way leaves
 * the older set, marked approximate; at report time a program still at
 * its peak gets an exact copy.
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

/* `registered` sits between the two totals: next to each other, GCC
 * updated them as one vector on every create and death, at twice the
 * instructions of two scalar adds (it did the scalar sums as well, for
 * the tests that follow). */
typedef struct local_totals {
    int64_t objects;
    int registered; /* the thread-exit flush is armed */
    int64_t bytes;
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
/* What the set was made from, per shard: the creation number above which
 * its objects were created since (each shard's age list is in creation
 * order), its graveyard position (the deaths after it happened since) and
 * its live count. */
static uint64_t set_seqs[LT_SHARD_COUNT];
static uint32_t set_graves[LT_SHARD_COUNT];
static uint64_t set_lives[LT_SHARD_COUNT];
/* Its restores position (lt_shard.restores): an object put back keeps
 * its old creation number, so the walk of what is newer than the set
 * misses it, and the set takes it from the shard's ring instead. */
static uint32_t set_restores[LT_SHARD_COUNT];
static uint64_t set_objects, set_bytes, set_ticks;
/* The last copy or update of the set ran out of memory (and none has
 * worked since): an empty set is then one livetrack lost, not one it
 * never got to copy. The latter happens without any failure when another
 * thread releases the objects of a new high before their creating thread
 * marked it pending (it does so only once they are findable): the
 * release sees nothing pending, and nothing dies after it. */
static int set_lost;
/* The set: call sites in open addressing. A slot is taken when its
 * domain is not 0 (no object has domain 0), and stays taken when its
 * count drops to 0, so probe sequences never break; growing the table
 * drops such slots. */
static lt_site_count *set_table;
static size_t set_slots, set_taken;

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

/* The same order against the set kept, which may be above the key (see
 * update_set). */
static int beats_set(uint64_t bytes, uint64_t objects)
{
    return bytes > set_bytes || (bytes == set_bytes && objects > set_objects);
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

/* A create that may make a new high, or whose thread's difference has
 * grown past the flush bounds: flush, raise the marks, and mark the peak
 * pending when the flushed totals beat its key. Out of line, so that the
 * common create (below the peak, difference small) saves no registers. */
static __attribute__((noinline)) void flush_created(int candidate)
{
    uint64_t objects, total;
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

/* lt_peak_created once its thread's exit flush is armed. */
static inline __attribute__((always_inline)) void count_created(uint64_t bytes)
{
    local.objects += 1;
    local.bytes += (int64_t)bytes;
    uint64_t objects = count_of(atomic_load_explicit(&live_objects, memory_order_relaxed), local.objects);
    uint64_t total = count_of(atomic_load_explicit(&live_bytes, memory_order_relaxed), local.bytes);
    int candidate = beats_key(total, objects);
    /* A high in objects that is none in bytes (many small objects after a
     * big one) is flushed too: max_objects is exact in one thread. */
    if (!candidate && objects <= atomic_load_explicit(&max_objects, memory_order_relaxed) &&
        local.objects < FLUSH_OBJECTS && local.bytes < FLUSH_BYTES)
        return;
    flush_created(candidate);
}

/* A thread's first create. Out of line, and a tail call below, so that
 * lt_peak_created keeps nothing across a call and needs no frame. */
static __attribute__((noinline)) void first_created(uint64_t bytes)
{
    arm_exit_flush();
    count_created(bytes);
}

void lt_peak_created(uint64_t bytes)
{
    if (__builtin_expect(!local.registered, 0))
        first_created(bytes);
    else
        count_created(bytes);
}

static size_t site_slot(const lt_site_count *table, size_t slots, livetrack_stack_id stack, uint8_t domain,
                        uint8_t type)
{
    uint64_t key = (uint64_t)stack << 16 | (uint64_t)domain << 8 | type;
    size_t slot = (size_t)(key * 0x9e3779b97f4a7c15ull) & (slots - 1);
    while (table[slot].domain &&
           !(table[slot].stack == stack && table[slot].domain == domain && table[slot].type == type))
        slot = (slot + 1) & (slots - 1);
    return slot;
}

static size_t slots_for(size_t sites)
{
    size_t slots = 16;
    while (slots < sites * 2 + 2)
        slots *= 2;
    return slots;
}

/* Count `objects` more (or fewer) of `bytes` at a call site. Adding may
 * take a slot, and grow the table first (NULL: out of memory). */
static lt_site_count *site_of(lt_site_count **table, size_t *slots, size_t *taken, livetrack_stack_id stack,
                              uint8_t domain, uint8_t type)
{
    if ((*taken + 1) * 2 + 2 > *slots) {
        size_t in_use = 0;
        for (size_t i = 0; i < *slots; i++)
            in_use += (*table)[i].objects != 0;
        /* Room for as many sites again before the next growth. */
        size_t grown_slots = slots_for(2 * (in_use + 1));
        lt_site_count *grown = lt_calloc(grown_slots, sizeof *grown);
        if (!grown)
            return NULL;
        for (size_t i = 0; i < *slots; i++) {
            const lt_site_count *old = &(*table)[i];
            if (old->objects)
                grown[site_slot(grown, grown_slots, old->stack, old->domain, old->type)] = *old;
        }
        lt_free(*table);
        *table = grown;
        *slots = grown_slots;
        *taken = in_use;
    }
    lt_site_count *entry = &(*table)[site_slot(*table, *slots, stack, domain, type)];
    if (!entry->domain) {
        *entry = (lt_site_count){stack, domain, type, 0, 0};
        ++*taken;
    }
    return entry;
}

/* Make the counted set the one now. `moment`: it was counted under every
 * shard lock, so it is one real moment, and may raise the key. */
static void settle_set(uint64_t objects, uint64_t bytes, int exact, int moment)
{
    /* The report states the set's own totals, so that they always add up
     * to the sites listed. With several threads they may differ from the
     * key: more, when other threads' creates were still unflushed (the
     * walk saw a real moment above the key, which becomes the key: the
     * peak must never go down); less, when another thread released before
     * the walk. */
    set_approximate = !exact || objects != atomic_load_explicit(&key_objects, memory_order_relaxed) ||
                      bytes != atomic_load_explicit(&key_bytes, memory_order_relaxed);
    if (moment && beats_key(bytes, objects)) {
        atomic_store_explicit(&key_bytes, bytes, memory_order_relaxed);
        atomic_store_explicit(&key_objects, objects, memory_order_relaxed);
        key_ticks = lt_ticks();
        raise_to(&max_objects, objects);
        raise_to(&max_bytes, bytes);
    }
    set_objects = objects;
    set_bytes = bytes;
    set_ticks = key_ticks;
    set_current = 1;
    set_lost = 0;
}

/* The set now holds shard i as it is; the caller holds its lock. Every
 * object linked there later by a create gets a creation number above the
 * shard's last: numbers are taken under the shard's lock. */
static void mark_shard(unsigned i)
{
    set_seqs[i] = lt_shards[i].last_seq;
    set_graves[i] = lt_shards[i].graveyard_next;
    set_lives[i] = lt_shards[i].live;
    set_restores[i] = lt_shards[i].restores;
}

/* The shards into which an object was linked, or from which one was
 * unlinked, since the set was made, read without their locks: every
 * unlink is counted by the graveyard, so a link or an unlink moves the
 * live count or the graveyard position, both changed under the lock and
 * stored atomically. Without branches: it runs over every shard at each
 * update. */
static uint64_t changed_shards(void)
{
    uint64_t changed = 0;
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++) {
        uint32_t graves = __atomic_load_n(&lt_shards[i].graveyard_next, __ATOMIC_RELAXED);
        uint32_t restores = __atomic_load_n(&lt_shards[i].restores, __ATOMIC_RELAXED);
        uint64_t live = __atomic_load_n(&lt_shards[i].live, __ATOMIC_RELAXED);
        changed |= (uint64_t)((graves != set_graves[i]) | (live != set_lives[i]) | (restores != set_restores[i])) << i;
    }
    return changed;
}

/* Group the live set by call site into a new set. Holds every shard lock
 * while it walks; the caller holds `lock` (never taken under a shard
 * lock, so the order is always peak lock, then shards). With `only_higher`
 * the copy replaces the set only if it beats the key: a report's check of
 * the shards' totals (read without their locks, so possibly a moment that
 * never was) must not trade an exact set for a lower one. */
static void copy_set(int only_higher)
{
    lt_registry_lock_all();
    size_t live = 0;
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++)
        live += lt_shards[i].live;
    /* Sized for the sites there usually are: every linked node's stack
     * was interned before the node was linked, so there are at most
     * lt_stack_count() ids among them, nearly always each of one kind
     * (livetrack_create_with_stack may pair one with several types, so
     * the table still grows when it must). Sizing for `live` took 48 MB of
     * zeroed memory at 10^6 objects, for a thousand sites. */
    size_t sites = lt_stack_count() + LIVETRACK_DOMAIN_COUNT * (LIVETRACK_MAX_TYPES + 1);
    if (sites > live)
        sites = live;
    size_t slots = slots_for(sites), taken = 0;
    lt_site_count *table = lt_calloc(slots, sizeof *table);
    if (!table) {
        lt_registry_unlock_all();
        set_lost = 1;
        lt_out_of_memory("the peak's live set");
        return;
    }
    uint64_t objects = 0, bytes = 0;
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++) {
        for (const lt_node *node = lt_shards[i].newest; node; node = node->older) {
            if (!LT_HOLDS(atomic_load_explicit(&node->counts, memory_order_relaxed)))
                continue; /* dying */
            lt_site_count *site = site_of(&table, &slots, &taken, node->stack, node->domain, node->type);
            if (!site) {
                lt_registry_unlock_all();
                lt_free(table);
                set_lost = 1;
                lt_out_of_memory("the peak's live set");
                return;
            }
            site->objects++;
            site->bytes += node->bytes;
            objects++;
            bytes += node->bytes;
        }
    }
    if (only_higher && !(beats_key(bytes, objects) && beats_set(bytes, objects))) {
        lt_registry_unlock_all();
        lt_free(table);
        return;
    }
    lt_free(set_table);
    set_table = table;
    set_slots = slots;
    set_taken = taken;
    settle_set(objects, bytes, 1, 1);
    for (unsigned i = 0; i < LT_SHARD_COUNT; i++)
        mark_shard(i);
    lt_registry_unlock_all();
}

/* One more object of `size` bytes at its site in the set being brought
 * up to date, and in its totals; 0 when the table could not grow. */
static int add_to_set(livetrack_stack_id stack, uint8_t domain, uint8_t type, uint64_t size, uint64_t *objects,
                      uint64_t *bytes)
{
    lt_site_count *site = site_of(&set_table, &set_slots, &set_taken, stack, domain, type);
    if (!site)
        return 0;
    site->objects++;
    site->bytes += size;
    *objects += 1;
    *bytes += size;
    return 1;
}

/* Bring the set from the moment it was made to now by what changed since
 * (see the top of the file). Returns 0, leaving the set as it was, when a
 * shard's graveyard no longer holds every death since, or its ring every
 * object put back since. The caller holds `lock`.
 *
 * Only the shards that changed are locked, in index order, all of them
 * at once. In one thread that is the moment of the call. With several, a
 * shard found unchanged may change before the others are locked: a look
 * at all again would cost as much as the first, for what the set's totals
 * already tell (they then differ from the key, unless another thread's
 * creates and releases cancel out, and the set is marked approximate). */
static int update_set(void)
{
    if (!set_table)
        return 0;
    uint64_t changed = changed_shards();
    for (uint64_t left = changed; left; left &= left - 1)
        lt_spin_lock(&lt_shards[__builtin_ctzll(left)].lock);
    int updated = 1;
    for (uint64_t left = changed; left; left &= left - 1) {
        unsigned i = (unsigned)__builtin_ctzll(left);
        if (lt_shards[i].graveyard_next - set_graves[i] > LT_GRAVEYARD ||
            lt_shards[i].restores - set_restores[i] > LT_RESTORED)
            updated = 0;
    }
    uint64_t objects = set_objects, bytes = set_bytes;
    int exact = 1;
    for (uint64_t left = changed; updated > 0 && left; left &= left - 1) {
        unsigned i = (unsigned)__builtin_ctzll(left);
        const lt_shard *shard = &lt_shards[i];
        /* Newest first: stop at the first object the set already holds. */
        for (const lt_node *node = shard->newest;
             node && atomic_load_explicit(&node->seq, memory_order_relaxed) > set_seqs[i]; node = node->older) {
            if (!LT_HOLDS(atomic_load_explicit(&node->counts, memory_order_relaxed)))
                continue; /* dying */
            if (!add_to_set(node->stack, node->domain, node->type, node->bytes, &objects, &bytes)) {
                updated = -1;
                break;
            }
        }
        /* Objects put back with a number the set holds: made before it,
         * they died and came back since (or died before it and came
         * back). Taken before the deaths, so a death after a return
         * finds its object there. */
        for (uint32_t r = set_restores[i]; updated > 0 && r != shard->restores; r++) {
            const lt_released *back = &shard->restored[r % LT_RESTORED];
            if (back->seq > set_seqs[i])
                continue; /* newer than the set: the walk above counted it */
            if (!add_to_set(back->create_stack, back->domain, back->type, back->bytes, &objects, &bytes)) {
                updated = -1;
                break;
            }
        }
        for (uint32_t g = set_graves[i]; updated > 0 && g != shard->graveyard_next; g++) {
            const lt_released *grave = &shard->graveyard[g % LT_GRAVEYARD];
            if (grave->seq > set_seqs[i])
                continue; /* made and gone since: never in the set */
            lt_site_count *site =
                &set_table[site_slot(set_table, set_slots, grave->create_stack, grave->domain, grave->type)];
            /* Not there: it was dying when the set was made (another
             * thread's release in flight), so not counted in it. */
            if (!site->objects || site->bytes < grave->bytes) {
                exact = 0;
                continue;
            }
            site->objects--;
            site->bytes -= grave->bytes;
            objects--;
            bytes -= grave->bytes;
        }
        mark_shard(i);
    }
    /* Above the key (other threads' creates were not in the shared totals
     * yet), the set may raise it only if it is one real moment: no shard
     * left unlocked changed since the first look (their counters only
     * grow). Looked at only then: it costs as much as the first look. */
    if (updated > 0)
        settle_set(objects, bytes, exact, beats_key(bytes, objects) && !changed_shards());
    for (uint64_t left = changed; left; left &= left - 1)
        lt_spin_unlock(&lt_shards[__builtin_ctzll(left)].lock);
    if (updated < 0) {
        /* Half applied, the set is none: a copy, when it can be paid for,
         * makes a new one. */
        lt_free(set_table);
        set_table = NULL;
        set_slots = set_taken = 0;
        set_objects = set_bytes = 0; /* the report states the set's totals: those of no sites */
        set_current = 0;
        set_lost = 1;
        lt_out_of_memory("the peak's live set");
        return 0;
    }
    return updated;
}

int lt_peak_pending(void) { return atomic_load_explicit(&pending, memory_order_acquire); }

void lt_peak_before_death(void)
{
    if (!atomic_load_explicit(&pending, memory_order_acquire))
        return;
    lt_spin_lock(&lock);
    if (atomic_load_explicit(&pending, memory_order_relaxed)) {
        atomic_store_explicit(&pending, 0, memory_order_relaxed);
        if (!update_set()) {
            /* Too much changed to say from the graveyards: copy, when as
             * many events (links and unlinks) as live objects pay for the
             * walk. Read without the locks: an estimate is enough. */
            uint64_t events = 0, live = 0;
            for (unsigned i = 0; i < LT_SHARD_COUNT; i++) {
                uint64_t graves = __atomic_load_n(&lt_shards[i].graveyard_next, __ATOMIC_RELAXED) - set_graves[i];
                uint64_t lives = __atomic_load_n(&lt_shards[i].live, __ATOMIC_RELAXED);
                events += 2 * (uint64_t)(uint32_t)graves + lives - set_lives[i];
                live += lives;
            }
            if (!set_table || events >= live)
                copy_set(0);
        }
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
        copy_set(0);
    } else if (beats_key(bytes, objects)) {
        copy_set(1);
    }
    lt_peak_marks(&out->objects, &out->bytes); /* after copy_set, which may raise them */
    /* Objects were live, yet no set of them is kept because the last copy
     * ran out of memory, or an update did and dropped the set: that is no
     * peak set, not one of nothing at time 0. Without a failure an empty
     * set stays what it is, an approximate one under the marks: its
     * objects died on another thread before a set of them was due (see
     * set_lost). */
    if (set_lost && out->objects && !set_objects) {
        lt_spin_unlock(&lock);
        memset(out, 0, sizeof *out);
        return 0;
    }
    out->approximate = !set_current || set_approximate;
    out->set_objects = set_objects;
    out->set_bytes = set_bytes;
    out->time_ns = lt_ticks_to_ns(set_ticks);
    size_t sites = 0;
    for (size_t i = 0; i < set_slots; i++)
        sites += set_table[i].objects != 0;
    out->sites = sites ? lt_malloc(sites * sizeof *out->sites) : NULL;
    if (out->sites)
        for (size_t i = 0; i < set_slots; i++)
            if (set_table[i].objects)
                out->sites[out->site_count++] = set_table[i];
    lt_spin_unlock(&lock);
    if (sites && !out->sites) {
        /* Totals without the sites they add up to: none, as above. */
        memset(out, 0, sizeof *out);
        lt_out_of_memory("the peak's live set");
        return 0;
    }
    return 1;
}

/* The peak lock nests outside the shard locks (copy_set), so fork takes
 * it first. */
void lt_peak_lock(void) { lt_spin_lock(&lock); }
void lt_peak_unlock(void) { lt_spin_unlock(&lock); }
