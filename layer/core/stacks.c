/*
 * Call stacks: capture with libunwind, intern, read back trimmed to the
 * application's frames.
 *
 * Notes on locking
 * ----------------
 * The intern table is split into STRIPE_COUNT stripes chosen from the high
 * bits of a stack's hash (buckets from the low bits). stripe->lock protects
 * the stripe's buckets, chains and arena. Entries are immutable once
 * published, except `app_start` (a benign, idempotent cache written
 * without a lock).
 *
 * Ids index a two-level table (chunks of CHUNK_SIZE pointers, allocated
 * once and never moved), so reading an id needs no lock: an id is handed
 * out only after its slot is stored with release order.
 *
 * Each thread remembers the stacks it interned last (a small direct-mapped
 * cache keyed by hash): a loop creating objects from one place skips the
 * stripe lock entirely after its first pass. Before any of that, the
 * stack memo (stack_memo.c) recognises a stack the thread walked before
 * and skips the walk itself.
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"
#include "spinlock.h"
#include "stack_memo.h"
#include "stacks.h"
#include "symbols.h"
#include "walk_gate.h"

#define STRIPE_BITS 6u
#define STRIPE_COUNT (1u << STRIPE_BITS)
#define INITIAL_BUCKETS 64u
#define ARENA_BLOCK (64u * 1024u)
#define CHUNK_BITS 12u
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096u /* 16 M unique stacks */
/* Small: a dlopen()ed library's initial-exec TLS comes from a reserve of
 * about 1.5 KiB shared by every such library in the process. */
#define THREAD_CACHE_SIZE 8u

typedef struct stack_entry {
    struct stack_entry *chain;
    uint64_t hash;
    livetrack_stack_id id;
    uint8_t domain;
    uint8_t type;
    uint8_t depth;
    int8_t app_start; /* first application frame, -1 until computed */
    uintptr_t frames[];
} stack_entry;

typedef struct stripe {
    lt_spinlock lock;
    stack_entry **buckets;
    uint32_t bucket_mask;
    uint32_t entries;
    char *arena;        /* current block */
    size_t arena_left;
} __attribute__((aligned(64))) stripe;

static stripe stripes[STRIPE_COUNT];
static stack_entry **_Atomic chunks[MAX_CHUNKS];
static _Atomic uint32_t next_id = 1;
static _Atomic uint64_t arena_bytes;
static _Atomic uint64_t full_walks; /* captures the memo did not answer */
static lt_spinlock chunk_lock;
_Atomic livetrack_stack_id lt_kind_sites[LIVETRACK_DOMAIN_COUNT][LIVETRACK_MAX_TYPES + 1];

typedef struct cached_stack {
    uint64_t hash;
    stack_entry *entry;
} cached_stack;
static _Thread_local cached_stack thread_cache[THREAD_CACHE_SIZE];

/* A kind of object as one number, for hashing and for the memo's key:
 * domain and type (at most LIVETRACK_MAX_TYPES, so 8 bits are enough). */
static inline unsigned kind_of(unsigned domain, unsigned type) { return domain << 8 | type; }
static inline unsigned kind_domain(unsigned kind) { return kind >> 8; }
static inline unsigned kind_type(unsigned kind) { return kind & 0xffu; }
_Static_assert(LIVETRACK_MAX_TYPES <= 0xffu, "kind_of keeps the type in 8 bits");

static uint64_t hash_stack(unsigned kind, const uintptr_t *frames, unsigned depth)
{
    /* Frames are mixed independently (rotate and add, no multiply chain
     * through the loop) and avalanched once at the end: collisions only
     * cost a compare, the loop runs on every create. */
    uint64_t h = 0x9e3779b97f4a7c15ull ^ kind ^ ((uint64_t)depth << 32);
    for (unsigned i = 0; i < depth; i++) {
        unsigned r = (i * 23u) & 63u;
        h += r ? (frames[i] << r) | (frames[i] >> (64u - r)) : frames[i];
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 32;
    return h;
}

static stack_entry *entry_of(livetrack_stack_id id)
{
    if (!id)
        return NULL;
    uint32_t index = id - 1;
    if (index >= (uint32_t)MAX_CHUNKS * CHUNK_SIZE)
        return NULL;
    stack_entry **chunk = atomic_load_explicit(&chunks[index >> CHUNK_BITS], memory_order_acquire);
    if (!chunk)
        return NULL;
    return __atomic_load_n(&chunk[index & (CHUNK_SIZE - 1)], __ATOMIC_ACQUIRE);
}

/* Give an entry its id. Caller holds its stripe lock. */
static int publish(stack_entry *entry)
{
    uint32_t id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
    uint32_t index = id - 1;
    if (index >= (uint32_t)MAX_CHUNKS * CHUNK_SIZE)
        return 0;
    _Atomic(stack_entry **) *slot = &chunks[index >> CHUNK_BITS];
    stack_entry **chunk = atomic_load_explicit(slot, memory_order_acquire);
    if (!chunk) {
        lt_spin_lock(&chunk_lock);
        chunk = atomic_load_explicit(slot, memory_order_acquire);
        if (!chunk) {
            chunk = lt_calloc(CHUNK_SIZE, sizeof *chunk);
            if (chunk) {
                atomic_fetch_add_explicit(&arena_bytes, CHUNK_SIZE * sizeof *chunk, memory_order_relaxed);
                atomic_store_explicit(slot, chunk, memory_order_release);
            }
        }
        lt_spin_unlock(&chunk_lock);
        if (!chunk)
            return 0;
    }
    entry->id = id;
    __atomic_store_n(&chunk[index & (CHUNK_SIZE - 1)], entry, __ATOMIC_RELEASE);
    return 1;
}

static void *arena_take(stripe *s, size_t size)
{
    size = (size + 15u) & ~(size_t)15u;
    if (s->arena_left < size) {
        size_t block = size > ARENA_BLOCK ? size : ARENA_BLOCK;
        char *memory = lt_malloc(block);
        if (!memory)
            return NULL;
        atomic_fetch_add_explicit(&arena_bytes, block, memory_order_relaxed);
        s->arena = memory;
        s->arena_left = block;
    }
    void *out = s->arena;
    s->arena += size;
    s->arena_left -= size;
    return out;
}

static void maybe_grow(stripe *s)
{
    if (s->entries <= s->bucket_mask)
        return;
    uint32_t count = (s->bucket_mask + 1) * 2;
    stack_entry **buckets = lt_calloc(count, sizeof *buckets);
    if (!buckets)
        return; /* longer chains, nothing lost */
    for (uint32_t i = 0; i <= s->bucket_mask; i++) {
        for (stack_entry *e = s->buckets[i], *next; e; e = next) {
            next = e->chain;
            e->chain = buckets[e->hash & (count - 1)];
            buckets[e->hash & (count - 1)] = e;
        }
    }
    lt_free(s->buckets);
    s->buckets = buckets;
    s->bucket_mask = count - 1;
}

static int same(const stack_entry *e, uint64_t hash, unsigned domain, unsigned type, const uintptr_t *frames,
                unsigned depth)
{
    return e->hash == hash && e->domain == domain && e->type == type && e->depth == depth &&
           (!depth || !memcmp(e->frames, frames, depth * sizeof *frames));
}

static livetrack_stack_id intern(unsigned domain, unsigned type, const uintptr_t *frames, unsigned depth,
                                 stack_entry **created)
{
    uint64_t hash = hash_stack(kind_of(domain, type), frames, depth);
    cached_stack *cached = &thread_cache[hash & (THREAD_CACHE_SIZE - 1)];
    if (cached->entry && same(cached->entry, hash, domain, type, frames, depth))
        return cached->entry->id;

    stripe *s = &stripes[hash >> (64 - STRIPE_BITS)];
    stack_entry *found = NULL;
    lt_spin_lock(&s->lock);
    if (!s->bucket_mask) {
        s->buckets = lt_calloc(INITIAL_BUCKETS, sizeof *s->buckets);
        if (s->buckets)
            s->bucket_mask = INITIAL_BUCKETS - 1;
    }
    if (s->bucket_mask) {
        for (stack_entry *e = s->buckets[hash & s->bucket_mask]; e; e = e->chain)
            if (same(e, hash, domain, type, frames, depth)) {
                found = e;
                break;
            }
        if (!found) {
            stack_entry *e = arena_take(s, sizeof *e + depth * sizeof *frames);
            if (e) {
                memset(e, 0, sizeof *e);
                e->hash = hash;
                e->domain = (uint8_t)domain;
                e->type = (uint8_t)type;
                e->depth = (uint8_t)depth;
                e->app_start = -1;
                if (depth)
                    memcpy(e->frames, frames, depth * sizeof *frames);
                if (publish(e)) {
                    *created = e;
                    e->chain = s->buckets[hash & s->bucket_mask];
                    s->buckets[hash & s->bucket_mask] = e;
                    s->entries++;
                    maybe_grow(s);
                    found = e;
                }
            }
        }
    }
    lt_spin_unlock(&s->lock);
    if (!found) {
        lt_out_of_memory("a call stack");
        return 0;
    }
    *cached = (cached_stack){hash, found};
    return found->id;
}

/* Frames captured beyond the depth asked for, to make room for the
 * internal ones dropped when a stack is read: LT_STACK_SLACK until a
 * stack has shown how many there are, then the most seen plus two. Every
 * frame walked costs ~80 instructions, so guessing 12 where the OpenCL
 * layer has 4 or 5 would add a quarter to the walk. */
static _Atomic unsigned learned_slack = LT_STACK_SLACK;
static _Atomic int slack_learned;

static unsigned app_start(stack_entry *e);

/* A new stack tells how many internal frames lead to the application. */
static void learn_slack(stack_entry *e, unsigned asked)
{
    unsigned internal = app_start(e);
    if (internal == 0 && e->depth == asked && e->depth && lt_address_is_internal(e->frames[0]))
        internal = e->depth; /* nothing but internal frames: the slack was too small */
    unsigned want = internal + 2 > LT_STACK_SLACK * 2 ? LT_STACK_SLACK * 2 : internal + 2;
    if (!atomic_exchange_explicit(&slack_learned, 1, memory_order_relaxed)) {
        atomic_store_explicit(&learned_slack, want, memory_order_relaxed);
        return;
    }
    unsigned seen = atomic_load_explicit(&learned_slack, memory_order_relaxed);
    while (want > seen &&
           !atomic_compare_exchange_weak_explicit(&learned_slack, &seen, want, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* The first frameless site of a (domain, type). Out of line, so that
 * the load that answers every later create needs no stack frame. */
static __attribute__((noinline)) livetrack_stack_id first_frameless_site(unsigned domain, unsigned type)
{
    stack_entry *created = NULL;
    livetrack_stack_id id = intern(domain, type, NULL, 0, &created);
    atomic_store_explicit(&lt_kind_sites[domain][type], id, memory_order_relaxed);
    return id;
}

/* With call sites off, every (domain, type) has one frameless site,
 * interned the first time; after that it is one relaxed load. */
static livetrack_stack_id frameless_site(unsigned domain, unsigned type)
{
    livetrack_stack_id id = atomic_load_explicit(&lt_kind_sites[domain][type], memory_order_relaxed);
    return __builtin_expect(id != 0, 1) ? id : first_frameless_site(domain, type);
}

/* What a full walk may teach (nothing under a registry lock). */
enum { LEARN_NOTHING, LEARN_SLACK, LEARN_ALL };

/* What capture() hands its slow half: all of it in memory, so that
 * capture() keeps nothing in saved registers across the memo lookup. */
typedef struct capture_request {
    lt_memo_key key; /* its kind is kind_of(domain, type) */
    int learn;       /* offer the walk to the memo and the slack */
} capture_request;

/* Set at load when the program runs under LeakSanitizer (ASan, LSan):
 * walks then stay out of libunwind's thread-local storage. unw_backtrace
 * keeps its trace cache there, and so do per-thread caches of unwind
 * rules; it is dynamic TLS here (libunwind comes with liblivetrack, which
 * a loader dlopen()s), and GCC 12's LeakSanitizer crashes scanning such
 * TLS on a driver's threads (pocl's workers run event callbacks that
 * create objects). Stepping frame by frame with the global cache costs
 * about ten times unw_backtrace's walk (50 against 5 us a new call site
 * here), which only sanitized runs pay. */
static int tls_averse;

/* Return addresses from the calling function's own frame outwards, as
 * unw_backtrace gives them. Inlined, so that the walk starts in the
 * caller's frame. */
static inline __attribute__((always_inline)) int walk_stack(void **frames, int max)
{
    if (!tls_averse)
        return unw_backtrace(frames, max);
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0)
        return 0;
    int count = 0;
    do {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || !ip)
            break;
        frames[count++] = (void *)(uintptr_t)ip;
    } while (count < max && unw_step(&cursor) > 0);
    return count;
}

/* Set once the program took libunwind's descriptors over: no more walks,
 * which would read, write or close its files (unwinder_fds.c). */
static atomic_int walks_stopped;

static int unwinder_fds_still_its_own(void)
{
    if (lt_unwinder_fds_intact())
        return 1;
    if (!atomic_exchange(&walks_stopped, 1))
        lt_note("the program closed the descriptors the stack walker (libunwind) keeps and may use their "
                "numbers for its own files; call stacks are no longer taken, so that walks cannot touch them");
    return 0;
}

/* The slow half of a capture, when the memo did not answer: walk the
 * stack into `frames` (capture()'s array), intern it, let the memo learn
 * it. The walk starts here, so it is taken one frame deeper and its first
 * frame dropped: what remains starts, as the memo expects, with a return
 * address inside capture() and then capture()'s own return address. */
__attribute__((noinline)) static livetrack_stack_id walk_and_intern(void **frames, const capture_request *request)
{
    stack_entry *created = NULL;
    atomic_fetch_add_explicit(&full_walks, 1, memory_order_relaxed);
    int count = -1;
    if (!atomic_load_explicit(&walks_stopped, memory_order_relaxed) && unwinder_fds_still_its_own()) {
        lt_walk_enter();
        count = walk_stack(frames, (int)request->key.asked + 1) - 1;
        lt_walk_leave();
    }
    if (count < 0)
        count = 0;
    const uintptr_t *stack = (const uintptr_t *)frames + 1;
    unsigned kind = request->key.kind;
    livetrack_stack_id id = intern(kind_domain(kind), kind_type(kind), stack, (unsigned)count, &created);
    if (request->learn == LEARN_ALL)
        lt_memo_offer(&request->key, stack, (unsigned)count, id);
    /* Only for a new stack, and never under a registry lock: telling
     * internal frames apart takes the symbolizer's lock. */
    if (created && request->learn != LEARN_NOTHING)
        learn_slack(created, request->key.asked);
    return id;
}

/* Not inlined: the memo keys on this function's own frame and return
 * address. A memo hit costs this function a key and a lookup. */
__attribute__((noinline)) static livetrack_stack_id capture(unsigned domain, unsigned type, long depth, int use_memo,
                                                            int may_learn)
{
    void *frames[LT_MAX_STACK_DEPTH + LT_STACK_SLACK * 2 + 1]; /* + 1: walk_and_intern's own frame */
    unsigned asked = (unsigned)depth + atomic_load_explicit(&learned_slack, memory_order_relaxed);
    capture_request request = {
        .key = {(uintptr_t)frames, (uintptr_t)__builtin_return_address(0), kind_of(domain, type), asked},
        .learn = !may_learn ? LEARN_NOTHING : use_memo ? LEARN_ALL : LEARN_SLACK,
    };
    livetrack_stack_id id = use_memo ? lt_memo_find(&request.key) : 0;
    return id ? id : walk_and_intern(frames, &request);
}

/* A capture under `settings`. */
static inline __attribute__((always_inline)) livetrack_stack_id capture_as_set(unsigned domain, unsigned type,
                                                                               int may_learn,
                                                                               const lt_settings *settings)
{
    if (settings->stack_depth <= 0)
        return frameless_site(domain, type);
    return capture(domain, type, settings->stack_depth, settings->stack_memo, may_learn);
}

/* The first capture, before the settings are loaded. Out of line, so
 * that with call sites off a capture needs no stack frame. */
static __attribute__((noinline)) livetrack_stack_id capture_loading_settings(unsigned domain, unsigned type,
                                                                              int may_learn)
{
    return capture_as_set(domain, type, may_learn, lt_load_settings());
}

/* Inlined into both entry points so that, with call sites off, taking a
 * capture costs one call and a load. */
static inline __attribute__((always_inline)) livetrack_stack_id capture_kind(unsigned domain, unsigned type,
                                                                             int may_learn)
{
    if (domain >= LIVETRACK_DOMAIN_COUNT || type > LIVETRACK_MAX_TYPES)
        type = LIVETRACK_MAX_TYPES, domain = 0; /* misuse stacks of no particular kind */
    /* lt_get_settings, with its rare half out of line */
    const lt_settings *settings = atomic_load_explicit(&lt_settings_ready, memory_order_acquire);
    if (__builtin_expect(!settings, 0))
        return capture_loading_settings(domain, type, may_learn);
    return capture_as_set(domain, type, may_learn, settings);
}

livetrack_stack_id lt_stack_capture(unsigned domain, unsigned type) { return capture_kind(domain, type, 1); }

livetrack_stack_id lt_stack_capture_frames(unsigned domain, unsigned type, const lt_settings *settings)
{
    return capture(domain, type, settings->stack_depth, settings->stack_memo, 1);
}

livetrack_stack_id lt_stack_capture_locked(unsigned domain, unsigned type) { return capture_kind(domain, type, 0); }

uint64_t lt_stack_count(void) { return atomic_load(&next_id) - 1; }
uint64_t lt_stack_bytes(void) { return atomic_load(&arena_bytes); }
uint64_t lt_stack_walks(void) { return atomic_load(&full_walks); }

/* publish() takes chunk_lock while holding a stripe: stripes first. */
void lt_stacks_lock_all(void)
{
    for (unsigned i = 0; i < STRIPE_COUNT; i++)
        lt_spin_lock(&stripes[i].lock);
    lt_spin_lock(&chunk_lock);
}

void lt_stacks_unlock_all(void)
{
    lt_spin_unlock(&chunk_lock);
    for (unsigned i = STRIPE_COUNT; i-- > 0;)
        lt_spin_unlock(&stripes[i].lock);
}

/* ---- public reading ---------------------------------------------------- */

/* Index of the first frame that is the application's: frames inside
 * livetrack, the loaders and the runtimes come first and are dropped.
 *
 * Scanned from the inside out, run by run of internal frames. The
 * innermost run always goes. A run further out goes too when it is only
 * loaders' and runtimes' frames: what lies between was not the program's
 * call either (another layer between the loader and livetrack, a runtime
 * running its initialisation under pthread_once). A run further out with
 * a frame of livetrack's own ends the scan instead: livetrack called out
 * there, to the driver or to the program, and the program was called
 * back (an event or destructor callback through livetrack's wrapper, a
 * report function). The frames between are the program's callback, the
 * line that made the object; the frames beyond it say who ran it. */
static unsigned app_start(stack_entry *e)
{
    int8_t start = __atomic_load_n(&e->app_start, __ATOMIC_RELAXED);
    if (start >= 0)
        return (unsigned)start;
    unsigned i = 0;
    int past_a_run = 0;
    for (unsigned j = 0; j < e->depth;) {
        lt_frame_owner owner = lt_address_owner(e->frames[j]);
        if (owner == LT_FRAME_PROGRAM) {
            j++;
            continue;
        }
        int livetrack_in_run = 0;
        while (owner != LT_FRAME_PROGRAM) {
            livetrack_in_run |= owner == LT_FRAME_LIVETRACK;
            owner = ++j < e->depth ? lt_address_owner(e->frames[j]) : LT_FRAME_PROGRAM;
        }
        if (past_a_run && livetrack_in_run)
            break; /* a callback: the program's frames start at i */
        i = j;
        past_a_run = 1;
    }
    if (i >= e->depth)
        i = 0; /* nothing but internal frames: show them rather than nothing */
    __atomic_store_n(&e->app_start, (int8_t)i, __ATOMIC_RELAXED);
    return i;
}

livetrack_stack_id livetrack_capture_stack(void)
{
    if (lt_get_settings()->stack_depth <= 0)
        return 0;
    return lt_stack_capture(LIVETRACK_DOMAIN_COUNT, 0);
}

/* A CUDA runtime linked statically (nvcc's default) is part of the
 * program's own module, so app_start() cannot tell its frames from the
 * program's by module. Its functions are named libcudart_static_<hash>,
 * carry no debug information, and lead up to the one cuda* entry point
 * the program called (cudaMalloc, __cudaPopCallConfiguration): those
 * frames, all in one module, are skipped when the stack goes on past
 * them. Symbolizing them is a cache lookup after the first time, and
 * this runs only when a stack is read (reports), never when one is
 * captured. */
static int runtime_named(const livetrack_frame *frame, const char *prefix)
{
    size_t length = strlen(prefix);
    return frame->function && !frame->file && !strncmp(frame->function, prefix, length);
}

static int entry_point_named(const livetrack_frame *frame)
{
    /* cudaMalloc, __cudaLaunchKernel: "cuda" then a capital; not cuda_x() or cuda::x */
    const char *name = frame->function;
    if (!name || frame->file)
        return 0;
    if (!strncmp(name, "__", 2))
        name += 2;
    return !strncmp(name, "cuda", 4) && name[4] >= 'A' && name[4] <= 'Z';
}

static int same_module(const livetrack_frame *a, const livetrack_frame *b)
{
    return a->module && b->module && !strcmp(a->module, b->module);
}

static size_t static_cuda_runtime_frames(const uintptr_t *frames, size_t count)
{
    livetrack_frame first = {0}, frame = {0};
    size_t skipped = 0;
    while (skipped + 1 < count && lt_symbolize_address(frames[skipped], &frame, 1) &&
           runtime_named(&frame, "libcudart_static_") && (!skipped || same_module(&frame, &first))) {
        if (!skipped)
            first = frame;
        skipped++;
    }
    if (skipped && skipped + 1 < count && lt_symbolize_address(frames[skipped], &frame, 1) &&
        entry_point_named(&frame) && same_module(&frame, &first))
        skipped++;
    return skipped;
}

size_t livetrack_stack_addresses(livetrack_stack_id stack, uintptr_t *out, size_t max)
{
    stack_entry *e = entry_of(stack);
    if (!e || !out)
        return 0;
    unsigned start = app_start(e);
    /* The frames captured beyond the depth (the slack) stand in for the
     * runtime's, as far as they go. */
    start += (unsigned)static_cuda_runtime_frames(e->frames + start, e->depth - start);
    size_t depth = (size_t)lt_get_settings()->stack_depth;
    size_t count = 0;
    for (unsigned i = start; i < e->depth && count < depth && count < max; i++)
        out[count++] = e->frames[i];
    return count;
}

size_t livetrack_stack_symbolize(livetrack_stack_id stack, livetrack_frame *out, size_t max)
{
    uintptr_t addresses[LT_MAX_STACK_DEPTH];
    size_t count = livetrack_stack_addresses(stack, addresses, LT_MAX_STACK_DEPTH);
    size_t used = 0;
    for (size_t i = 0; i < count && used < max; i++)
        used += lt_symbolize_address(addresses[i], out + used, max - used);
    return used;
}

/* Per-thread caches of unwind rules spare the walks the global cache's
 * lock, except under LeakSanitizer (tls_averse). Either way fork() leaves
 * no libunwind lock held: it waits at the walk gate (walk_gate.h). */
__attribute__((constructor)) static void stacks_start(void)
{
    tls_averse = dlsym(RTLD_DEFAULT, "__lsan_do_leak_check") != NULL;
    /* libunwind's first use opens its memory-check pipe, for good: at 3 or
     * above, not as the stdin or stdout the program started without. The
     * placeholders are open "before", and no FIFO: the pipe alone is new. */
    lt_std_fds_held std_fds;
    lt_std_fds_hold(&std_fds);
    lt_unwinder_fds_before_first_use();
    unw_set_caching_policy(unw_local_addr_space, tls_averse ? UNW_CACHE_GLOBAL : UNW_CACHE_PER_THREAD);
    lt_unwinder_fds_after_first_use();
    lt_std_fds_release(&std_fds);
}
