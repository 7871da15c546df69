/*
 * Linked into the registry tests that run a second time on a liblivetrack
 * built with a small LT_ORDER_TICK_LIMIT (tests/core/CMakeLists.txt): it
 * waits, before main, until that many ticks have passed since the library
 * was loaded, so that every creation number those tests see in clock mode
 * is past the limit and counts creates, as in a process older than 1.7
 * years. The library is a dependency, so its constructor read the base
 * before this one runs: ticks counted from here are never more than since
 * the base.
 */
#include <stdint.h>
#include <time.h>

#ifndef LT_ORDER_TICK_LIMIT
#error "LT_ORDER_TICK_LIMIT must be the late library's (set by CMake)"
#endif

__attribute__((constructor)) static void wait_past_the_tick_limit(void)
{
    uint64_t start = __builtin_ia32_rdtsc();
    while (__builtin_ia32_rdtsc() - start < LT_ORDER_TICK_LIMIT)
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
}
