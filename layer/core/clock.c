/* Tick-to-nanosecond conversion for creation timestamps (see clock.h). */
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

uint64_t lt_ticks_to_ns(uint64_t ticks)
{
    lt_tick_scale scale;
    lt_tick_scale_now(&scale);
    return lt_scale_ticks(&scale, ticks);
}
