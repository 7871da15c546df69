/*
 * The stack memo: read stack_memo.h for why a stack can be recognised by
 * its return-address slots.
 *
 * Each thread owns one block (allocated at its first capture): its stack
 * bounds and a small two-way set-associative table. Only the owner reads
 * or writes its entries, so nothing here takes a lock or an atomic on the
 * hot path. Blocks are also kept on a global list, so that memory checkers
 * still see them as reachable in a forked child, where the threads that
 * owned them no longer exist; a thread's block is unlinked and freed when
 * it exits.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>

#include "core_internal.h"
#include "spinlock.h"
#include "stack_memo.h"
#include "walk_gate.h"

#define MEMO_SETS 16u /* per thread */
#define MEMO_WAYS 2u  /* stacks remembered per set: two callers at one spot both hit */
_Static_assert(MEMO_WAYS == 2u, "lt_memo_find tries the recent way, then the other (recent ^ 1)");
#define MEMO_FRAMES 32u /* stacks of more frames are not remembered */
_Static_assert(MEMO_FRAMES % 4u == 0, "slots_hold compares four slots at a time");
/* Learning walks a set may waste (entries replaced before they answered
 * once) before it learns only every LEARN_BACKOFF-th miss: a spot reached
 * through ever different callers costs little more than no memo at all. */
#define WASTE_LIMIT 8u
#define LEARN_BACKOFF 16u

typedef enum {
    ENTRY_EMPTY,
    ENTRY_SEEN,    /* the key came once: learn it if it comes again */
    ENTRY_LEARNED, /* slots known: lt_memo_find answers */
} entry_state;

typedef struct memo_entry {
    lt_memo_key key;
    uint8_t state;
    uint8_t slots;    /* slots checked: frames[1..count), then fillers to a multiple of 4 */
    uint8_t answered; /* 1 once it answered a capture */
    livetrack_stack_id id;
    /* Where frames[i + 1] is kept, and its value. An absolute address is
     * right because key.frame is part of the key; keeping the address next
     * to its value puts both in one cache line and saves an add a slot. */
    struct memo_slot {
        const uintptr_t *where;
        uintptr_t value;
    } slot[MEMO_FRAMES];
} memo_entry;

typedef struct memo_set {
    memo_entry ways[MEMO_WAYS];
    uint8_t recent;   /* the way that answered or learned last */
    uint8_t wasted;   /* learned entries replaced without answering */
    uint8_t misses;   /* misses since the last learning walk, once wasteful */
} memo_set;

typedef struct thread_memo {
    struct thread_memo *next, *prev; /* the global list */
    uintptr_t stack_low, stack_high; /* this thread's pthread stack */
    memo_set sets[MEMO_SETS];
} thread_memo;

/* What a filler slot points at: it always holds its value, 0. */
static const uintptr_t filler_word = 0;

/* A block that could not be made: do not try again on every capture. */
#define NO_MEMO ((thread_memo *)1)

static __thread thread_memo *own_memo __attribute__((tls_model("initial-exec")));
static thread_memo *all_memos;
static lt_spinlock list_lock;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void forget_memo(void *block)
{
    thread_memo *memo = block;
    lt_spin_lock(&list_lock);
    if (memo->prev)
        memo->prev->next = memo->next;
    else
        all_memos = memo->next;
    if (memo->next)
        memo->next->prev = memo->prev;
    lt_spin_unlock(&list_lock);
    own_memo = NULL;
    lt_free(memo);
}

static void make_exit_key(void) { pthread_key_create(&exit_key, forget_memo); }

/* Around fork(): a thread exiting (forget_memo) or making its memo while
 * another forks must not leave the list locked in the child. The child's
 * list keeps the other threads' memos, which it never frees: they are
 * not its threads, and the memory was the parent's. */
void lt_memo_lock_list(void) { lt_spin_lock(&list_lock); }
void lt_memo_unlock_list(void) { lt_spin_unlock(&list_lock); }

static thread_memo *make_memo(void)
{
    own_memo = NO_MEMO;
    pthread_attr_t attr;
    void *low = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return NULL;
    int known = pthread_attr_getstack(&attr, &low, &size) == 0 && size;
    pthread_attr_destroy(&attr);
    if (!known)
        return NULL;
    thread_memo *memo = lt_calloc(1, sizeof *memo);
    if (!memo)
        return NULL;
    memo->stack_low = (uintptr_t)low;
    memo->stack_high = (uintptr_t)low + size;
    pthread_once(&exit_key_once, make_exit_key);
    if (pthread_setspecific(exit_key, memo) != 0) {
        lt_free(memo);
        return NULL;
    }
    lt_spin_lock(&list_lock);
    memo->next = all_memos;
    if (all_memos)
        all_memos->prev = memo;
    all_memos = memo;
    lt_spin_unlock(&list_lock);
    own_memo = memo;
    return memo;
}

static memo_set *set_for(thread_memo *memo, const lt_memo_key *key)
{
    uint64_t h = (key->frame >> 4) ^ (key->return_address * 0x9e3779b97f4a7c15ull) ^ key->kind;
    return &memo->sets[(h ^ (h >> 29)) & (MEMO_SETS - 1)];
}

static int same_key(const lt_memo_key *a, const lt_memo_key *b)
{
    return a->frame == b->frame && a->return_address == b->return_address && a->kind == b->kind &&
           a->asked == b->asked;
}

/* The slots are return addresses in frames above the caller's, so they
 * are never a sanitizer's concern (nor, after a false key match, its
 * redzones: then the words are compared and the entry simply misses). */
__attribute__((no_sanitize("address", "thread"))) static int slots_hold(const memo_entry *entry)
{
    /* Four slots per branch (learn_slots pads the count to a multiple of
     * four with filler_word): a hit reads every slot anyway, and a miss
     * (rare once learned) may as well finish its group of four. */
    const struct memo_slot *slot = entry->slot, *end = entry->slot + entry->slots;
    for (; slot < end; slot += 4)
        if ((*slot[0].where ^ slot[0].value) | (*slot[1].where ^ slot[1].value) | (*slot[2].where ^ slot[2].value) |
            (*slot[3].where ^ slot[3].value))
            return 0;
    return 1;
}

static int entry_answers(const memo_entry *entry, const lt_memo_key *key)
{
    return entry->state == ENTRY_LEARNED && same_key(&entry->key, key) && slots_hold(entry);
}

livetrack_stack_id lt_memo_find(const lt_memo_key *key)
{
#if defined(__x86_64__)
    thread_memo *memo = own_memo;
    if (!memo || memo == NO_MEMO)
        return 0;
    memo_set *set = set_for(memo, key);
    /* The way that answered last first: two callers at one spot usually
     * come in runs, and a way with the same key but the other caller's
     * slots costs a compare of its slots. */
    unsigned recent = set->recent;
    memo_entry *entry = &set->ways[recent];
    if (!entry_answers(entry, key)) {
        entry = &set->ways[recent ^ 1u];
        if (!entry_answers(entry, key))
            return 0;
        set->recent = (uint8_t)(recent ^ 1u);
    }
    entry->answered = 1;
    return entry->id;
#else
    (void)key;
    return 0;
#endif
}

#if defined(__x86_64__)
/* learn_slots' walk, inside the walk gate: where each of frames[1..count)
 * is kept on this thread's stack. */
static int learn_from_walk(memo_entry *entry, const thread_memo *memo, const uintptr_t *frames, unsigned count,
                           unw_cursor_t *cursor)
{
    unsigned next = 1; /* the frame of `frames` to meet next */
    for (unsigned steps = 0; next < count && steps < count + 16u; steps++) {
        if (unw_step(cursor) <= 0 || unw_is_signal_frame(cursor) > 0)
            return 0;
        unw_word_t ip = 0, sp = 0;
        if (unw_get_reg(cursor, UNW_REG_IP, &ip) != 0 || unw_get_reg(cursor, UNW_REG_SP, &sp) != 0)
            return 0;
        if (next == 1 && ip != frames[1])
            continue; /* still inside the memo and the capture */
        if (ip != frames[next])
            return 0; /* the walks disagree: do not trust either for the memo */
        /* The call that left `ip` pushed it just below this frame's
         * stack pointer (x86-64). */
        uintptr_t slot = (uintptr_t)sp - sizeof(uintptr_t);
        if (slot < entry->key.frame || slot + sizeof(uintptr_t) > memo->stack_high)
            return 0;
        entry->slot[next - 1] = (struct memo_slot){(const uintptr_t *)slot, frames[next]};
        next++;
    }
    if (next != count)
        return 0;
    unsigned slots = count - 1;
    for (; slots % 4; slots++)
        entry->slot[slots] = (struct memo_slot){&filler_word, 0};
    entry->slots = (uint8_t)slots;
    return slots_hold(entry);
}

/* Walk the stack again, frame by frame, to learn where frames[1..count)
 * are kept. This function's own frames come first; frames[1] (the
 * capturing function's return address) is where the two walks meet. */
__attribute__((noinline)) static int learn_slots(memo_entry *entry, const thread_memo *memo,
                                                 const uintptr_t *frames, unsigned count)
{
    unw_context_t context;
    unw_cursor_t cursor;
    lt_walk_enter();
    int learned = unw_getcontext(&context) == 0 && unw_init_local(&cursor, &context) == 0 &&
                  learn_from_walk(entry, memo, frames, count, &cursor);
    lt_walk_leave();
    return learned;
}
#endif

void lt_memo_offer(const lt_memo_key *key, const uintptr_t *frames, unsigned count, livetrack_stack_id id)
{
#if defined(__x86_64__)
    thread_memo *memo = own_memo;
    if (memo == NO_MEMO || !id || count < 2 || count > MEMO_FRAMES + 1 || frames[1] != key->return_address)
        return;
    if (!memo && !(memo = make_memo()))
        return;
    if (key->frame < memo->stack_low || key->frame >= memo->stack_high)
        return; /* another stack (sigaltstack, a coroutine): bounds unknown */
    memo_set *set = set_for(memo, key);
    /* A key seen once in this set is learned now; otherwise the way not
     * used last takes the key (remembered as seen, not learned yet). */
    memo_entry *seen = NULL;
    for (unsigned way = 0; way < MEMO_WAYS && !seen; way++)
        if (set->ways[way].state == ENTRY_SEEN && same_key(&set->ways[way].key, key))
            seen = &set->ways[way];
    if (!seen) {
        unsigned victim = set->recent ^ 1u;
        memo_entry *entry = &set->ways[victim];
        if (entry->state == ENTRY_LEARNED && !entry->answered && set->wasted < UINT8_MAX)
            set->wasted++;
        if (set->wasted > WASTE_LIMIT && ++set->misses % LEARN_BACKOFF)
            return; /* this spot keeps changing: keep what is there */
        *entry = (memo_entry){.key = *key, .state = ENTRY_SEEN};
        set->recent = (uint8_t)victim;
        return;
    }
    seen->id = id;
    seen->state = learn_slots(seen, memo, frames, count) ? ENTRY_LEARNED : ENTRY_EMPTY;
    if (seen->state == ENTRY_EMPTY && set->wasted < UINT8_MAX)
        set->wasted++; /* a stack the memo cannot follow (a signal frame, ...) */
    set->recent = (uint8_t)(seen - set->ways);
#else
    (void)key, (void)frames, (void)count, (void)id;
#endif
}
