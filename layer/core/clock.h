/*
 * Creation timestamps for the hot path.
 *
 * clock_gettime through the vDSO costs ~20 ns, as much as a whole registry
 * update, so nodes store raw time-stamp-counter ticks and reports convert
 * them to nanoseconds with a rate measured between livetrack's start and
 * the moment of conversion. Elsewhere than x86 the ticks are nanoseconds.
 */
#ifndef LIVETRACK_CLOCK_H
#define LIVETRACK_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t lt_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static inline uint64_t lt_ticks(void) { return __builtin_ia32_rdtsc(); }
#else
static inline uint64_t lt_ticks(void) { return lt_monotonic_ns(); }
#endif

/* Nanoseconds since livetrack started for a tick value. */
uint64_t lt_ticks_to_ns(uint64_t ticks);
/* Back: the ticks of a time lt_ticks_to_ns gave (to the rate's precision). */
uint64_t lt_ns_to_ticks(uint64_t ns);

/* For converting many values: measure the rate once. */
typedef struct lt_tick_scale {
    double ns_per_tick;
} lt_tick_scale;
void lt_tick_scale_now(lt_tick_scale *scale);
uint64_t lt_scale_ticks(const lt_tick_scale *scale, uint64_t ticks);

#endif
