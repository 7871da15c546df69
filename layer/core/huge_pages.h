/*
 * Asking for transparent huge pages on large blocks, for the core's report
 * arrays (memory.c) and the livetrack tool's JSON reader.
 *
 * On some virtual machines a fresh 4 KiB page costs 10-15 us to fault in
 * (measured on one: 0.57 s to first touch 200 MB, 19 ms with huge pages),
 * and the kernel gives huge pages on request where THP is in "madvise"
 * mode (Debian's default). Only a hint: refused, nothing changes.
 */
#ifndef LIVETRACK_HUGE_PAGES_H
#define LIVETRACK_HUGE_PAGES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define LT_HUGE_PAGE ((uintptr_t)2 << 20)

/* Advises the whole huge pages inside a block of at least two; returns
 * the block. */
static inline void *lt_hint_huge_pages(void *block, size_t size)
{
    if (!block || size < 2 * LT_HUGE_PAGE)
        return block;
    uintptr_t start = ((uintptr_t)block + LT_HUGE_PAGE - 1) & ~(LT_HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t)block + size) & ~(LT_HUGE_PAGE - 1);
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
    return block;
}

#endif
