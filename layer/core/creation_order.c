/* Choosing how creation numbers are made (see creation_order.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "core_internal.h"
#include "creation_order.h"

_Atomic int lt_order_mode;
uint64_t lt_order_base_ticks;
_Atomic uint64_t lt_order_next = 1;
_Atomic uint64_t lt_order_floor;
_Atomic uint64_t lt_order_late_next = LT_ORDER_TICK_LIMIT;
/* Room for as many creates past the limit as ticks before it. */
_Static_assert(LT_ORDER_TICK_LIMIT * 2 - 1 <= UINT64_MAX >> LT_SHARD_BITS, "clock-mode numbers must not wrap");

#if defined(__x86_64__)
/* CPUID 0x80000007, EDX bit 8: the counter runs at one rate in every
 * power state (what Linux calls constant_tsc + nonstop_tsc). */
static int tsc_invariant(void)
{
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u)
        return 0;
    __cpuid(0x80000007u, eax, ebx, ecx, edx);
    return (edx >> 8) & 1;
}

/* Linux uses the counter for its own clock only after checking that the
 * cores agree, and drops it when it sees them drift. */
static int kernel_trusts_tsc(void)
{
    char name[32] = "";
    FILE *file = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
    if (!file)
        return 0;
    int read = fgets(name, sizeof name, file) != NULL;
    fclose(file);
    return read && !strcmp(name, "tsc\n");
}
#endif

/* Before any create: liblivetrack's constructors run before those of the
 * front ends and programs that link it, and the mode is chosen only at
 * the first create or mark, after some threads may have read the clock. */
__attribute__((constructor)) static void take_base(void) { lt_order_base_ticks = lt_ticks(); }

static pthread_once_t chosen = PTHREAD_ONCE_INIT;

static void choose(void)
{
    lt_order_choice choice = (lt_order_choice)lt_get_settings()->creation_order;
    int mode = LT_ORDER_BY_COUNTER;
#if defined(__x86_64__)
    if (choice == LT_ORDER_CHOICE_CLOCK || (choice == LT_ORDER_CHOICE_AUTO && tsc_invariant() && kernel_trusts_tsc()))
        mode = LT_ORDER_BY_CLOCK;
#else
    if (choice == LT_ORDER_CHOICE_CLOCK)
        lt_note("LIVETRACK_CREATION_ORDER=clock needs x86-64's time-stamp counter; counting creations instead");
#endif
    /* Creates read it without the once. */
    atomic_store_explicit(&lt_order_mode, mode, memory_order_release);
}

int lt_choose_creation_order(void)
{
    pthread_once(&chosen, choose);
    return atomic_load_explicit(&lt_order_mode, memory_order_acquire);
}

uint64_t lt_creation_number_now(void)
{
    if (lt_creation_order() != LT_ORDER_BY_CLOCK)
        return atomic_load_explicit(&lt_order_next, memory_order_relaxed) - 1;
    uint64_t now = lt_mark_number(lt_ticks_in_order());
    /* The floor every later create numbers above. Release: a create that
     * sees it also sees what this thread did before. */
    uint64_t floor = atomic_load_explicit(&lt_order_floor, memory_order_relaxed);
    while (floor < now &&
           !atomic_compare_exchange_weak_explicit(&lt_order_floor, &floor, now, memory_order_release,
                                                  memory_order_relaxed))
        ;
    return now > floor ? now : floor;
}
