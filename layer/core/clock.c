/* Tick-to-nanosecond conversion for creation timestamps (see clock.h). */
#include <stdatomic.h>

#include "clock.h"

static uint64_t start_ticks;
static uint64_t start_ns;

__attribute__((constructor)) static void clock_start(void)
{
    start_ns = lt_monotonic_ns();
    start_ticks = lt_ticks();
}

void lt_tick_scale_now(lt_tick_scale *scale)
{
#if defined(__x86_64__)
    uint64_t now_ticks = lt_ticks();
    uint64_t now_ns = lt_monotonic_ns();
    /* Rate measured over livetrack's whole lifetime: long spans make it
     * precise. */
    scale->ns_per_tick = now_ticks > start_ticks ? (double)(now_ns - start_ns) / (double)(now_ticks - start_ticks) : 0.0;
#else
    scale->ns_per_tick = 1.0;
#endif
}

uint64_t lt_scale_ticks(const lt_tick_scale *scale, uint64_t ticks)
{
    if (ticks <= start_ticks)
        return 0;
    return (uint64_t)((double)(ticks - start_ticks) * scale->ns_per_tick);
}

/* Rate reused for single conversions (lookups, timeline rows) until
 * livetrack's lifetime has doubled since it was measured: clock_gettime
 * costs as much as a lookup, and the rate barely moves over a long span. */
static _Atomic uint64_t cached_rate_bits, cached_until_ticks;

static void current_scale(lt_tick_scale *out)
{
    lt_tick_scale scale;
    uint64_t now = lt_ticks();
    if (now < atomic_load_explicit(&cached_until_ticks, memory_order_acquire)) {
        uint64_t bits = atomic_load_explicit(&cached_rate_bits, memory_order_relaxed);
        __builtin_memcpy(&scale.ns_per_tick, &bits, sizeof bits);
    } else {
        lt_tick_scale_now(&scale);
        uint64_t bits;
        __builtin_memcpy(&bits, &scale.ns_per_tick, sizeof bits);
        atomic_store_explicit(&cached_rate_bits, bits, memory_order_relaxed);
        /* Until twice the span measured, and at least 1 ms of ticks ahead. */
        uint64_t span = now > start_ticks ? now - start_ticks : 0;
        atomic_store_explicit(&cached_until_ticks, now + (span > 3000000 ? span : 3000000), memory_order_release);
    }
    *out = scale;
}

uint64_t lt_ticks_to_ns(uint64_t ticks)
{
    lt_tick_scale scale;
    current_scale(&scale);
    return lt_scale_ticks(&scale, ticks);
}

uint64_t lt_ns_to_ticks(uint64_t ns)
{
    lt_tick_scale scale;
    current_scale(&scale);
    if (!(scale.ns_per_tick > 0))
        return start_ticks;
    double ticks = (double)ns / scale.ns_per_tick + 0.5;
    /* A time no lookup gave (past 2^63 ticks): the latest there is. */
    if (!(ticks < 9.2e18) || (uint64_t)ticks > UINT64_MAX - start_ticks)
        return UINT64_MAX;
    return start_ticks + (uint64_t)ticks;
}
