/*
 * The core's only allocation functions (see core_internal.h).
 *
 * Because every allocation of the core passes here, tests can make any of
 * them fail and check that livetrack degrades to "tracking incomplete"
 * without harming the program:
 *
 *   LIVETRACK_FAULT_ALLOC_AFTER=N        the first N allocations succeed,
 *                                        every later one fails
 *   LIVETRACK_FAULT_ALLOC_AFTER=N:COUNT  only the COUNT after them fail
 *                                        (a transient shortage)
 *
 * It is a test hook, not a user setting: it is read once, at the first
 * allocation, straight from the environment (the settings may not be
 * loaded yet, and loading them must not allocate through here first).
 * Tests linked with the core's sources call lt_fault_alloc_set() instead.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core_internal.h"
#include "huge_pages.h"

static atomic_int incomplete;

/* Injection state. `fault_after` is FAULT_UNREAD until the environment
 * has been read, then FAULT_OFF or the number of allocations to let
 * through. Allocations are rare (slabs, bucket arrays, reports), so the
 * atomics cost nothing on the hot path. */
#define FAULT_UNREAD (-2L)
#define FAULT_OFF (-1L)
static atomic_long fault_after = FAULT_UNREAD;
static atomic_long fault_count = -1; /* failures to inject; -1: all */
static atomic_long fault_seen;       /* allocations counted since armed */
static atomic_long fault_injected;   /* failures injected so far */

static long parse_count(const char *text, char **end)
{
    errno = 0;
    long value = strtol(text, end, 10);
    return (errno || *end == text || value < 0) ? -1 : value;
}

static long read_fault_setting(void)
{
    const char *value = getenv("LIVETRACK_FAULT_ALLOC_AFTER");
    long after = FAULT_OFF, count = -1;
    if (value && *value) {
        char *end;
        after = parse_count(value, &end);
        if (after >= 0 && *end == ':') {
            count = parse_count(end + 1, &end);
            if (count < 0)
                after = -1;
        }
        if (after < 0 || *end) {
            /* Not lt_diag: it reads the settings, which may allocate. */
            static const char message[] = "livetrack: LIVETRACK_FAULT_ALLOC_AFTER is not N or N:COUNT; ignored\n";
            fputs(message, stderr);
            after = FAULT_OFF;
            count = -1;
        }
    }
    atomic_store(&fault_count, count);
    long expected = FAULT_UNREAD;
    /* Two threads may read at once; both computed the same value. */
    atomic_compare_exchange_strong(&fault_after, &expected, after);
    return atomic_load(&fault_after);
}

static int inject_failure(void)
{
    long after = atomic_load_explicit(&fault_after, memory_order_relaxed);
    if (after == FAULT_UNREAD)
        after = read_fault_setting();
    if (after < 0)
        return 0;
    long index = atomic_fetch_add_explicit(&fault_seen, 1, memory_order_relaxed);
    long count = atomic_load_explicit(&fault_count, memory_order_relaxed);
    if (index < after || (count >= 0 && index >= after + count))
        return 0;
    atomic_fetch_add_explicit(&fault_injected, 1, memory_order_relaxed);
    return 1;
}

/* Test hook: let `after` more allocations succeed, then fail `count` of
 * them (-1: all); after < 0 turns injection off. Returns the failures
 * injected since the previous call. */
long lt_fault_alloc_set(long after, long count)
{
    atomic_store(&fault_count, count);
    atomic_store(&fault_seen, 0);
    atomic_store(&fault_after, after < 0 ? FAULT_OFF : after);
    return atomic_exchange(&fault_injected, 0);
}

/* Test hook: failures still to be injected (-1: no end), 0 when the
 * window set by lt_fault_alloc_set() has passed or injection is off. */
long lt_fault_alloc_pending(void)
{
    long after = atomic_load(&fault_after), count = atomic_load(&fault_count);
    if (after < 0)
        return 0;
    if (count < 0)
        return -1;
    long seen = atomic_load(&fault_seen);
    long left = after + count - (seen > after ? seen : after);
    return left > 0 ? left : 0;
}

/* Reports allocate a few arrays sized by the live set (the snapshot's
 * copy of every object, its order, the model's per-object site index):
 * ~100 MB at 10^6 live objects, all written at once. In 4 KiB pages that
 * is ~25000 page faults, which on a VM where a fault costs 10-15 us made
 * a 10^6-object exit report miss its 1 s. So large blocks ask for huge
 * pages (huge_pages.h); the hot path's blocks are far below the size. */

void *lt_calloc(size_t count, size_t size)
{
    if (inject_failure())
        return NULL;
    void *block = calloc(count, size);
    /* calloc checked count * size for overflow before this product */
    return block ? lt_hint_huge_pages(block, count * size) : NULL;
}

void *lt_malloc(size_t size) { return inject_failure() ? NULL : lt_hint_huge_pages(malloc(size), size); }
void lt_free(void *pointer) { free(pointer); }

void lt_out_of_memory(const char *what)
{
    if (!atomic_exchange(&incomplete, 1))
        lt_note("out of memory allocating %s: tracking is incomplete from now on "
                "(the program itself is not affected)%s",
                what, atomic_load(&fault_injected) ? " [failure injected by LIVETRACK_FAULT_ALLOC_AFTER]" : "");
}

int lt_tracking_incomplete(void) { return atomic_load(&incomplete); }

/* With injection on, say at the very end (after the exit report, which
 * allocates too) how many allocations there were and how many failed, so
 * a test can tell when its K passed the program's last allocation. */
__attribute__((destructor(101))) static void fault_summary(void)
{
    if (atomic_load(&fault_after) < 0)
        return;
    char line[160];
    int length = snprintf(line, sizeof line, "livetrack: LIVETRACK_FAULT_ALLOC_AFTER: %ld allocations, %ld failed\n",
                          atomic_load(&fault_seen), atomic_load(&fault_injected));
    if (length > 0 && write(STDERR_FILENO, line, (size_t)length) < 0)
        return;
}

int livetrack_incomplete(void) { return lt_tracking_incomplete(); }
