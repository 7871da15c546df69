/*
 * Call stacks (stacks.c): capture with libunwind and intern, so that a
 * registry node stores a 32-bit id and memory grows with unique stacks.
 *
 * An interned entry is keyed by (domain, type, return addresses): a call
 * site always makes one kind of object, so the key costs nothing in
 * sharing, and a site id alone tells what kind of objects it made.
 * With LIVETRACK_STACK_DEPTH=0 each (domain, type) still gets one entry
 * with no frames, so every object has a site.
 */
#ifndef LIVETRACK_STACKS_H
#define LIVETRACK_STACKS_H

#include <stdatomic.h>
#include <stdint.h>

#include "core_internal.h"
#include "livetrack/livetrack.h"

#define LT_MAX_STACK_DEPTH 64u
/* Frames captured beyond the requested depth, to make room for the
 * frames inside livetrack, the loaders and the runtimes that are dropped
 * when the stack is read: the first guess, until stacks show the real
 * number (stacks.c learns it). */
#define LT_STACK_SLACK 12u

/* Capture the calling thread's stack for an object of (domain, type) and
 * intern it. Returns 0 only when livetrack is out of memory. */
livetrack_stack_id lt_stack_capture(unsigned domain, unsigned type);
/* lt_stack_capture for a valid (domain, type) when the loaded settings
 * ask for frames (stack_depth > 0): lt_stack_capture_inline's path to the
 * walk, its checks made there. A tail call into the capture, so the
 * frames above the program's are those lt_stack_capture leaves. */
livetrack_stack_id lt_stack_capture_frames(unsigned domain, unsigned type, const lt_settings *settings);
/* With call sites off, the one frameless site of each (domain, type): 0
 * until lt_stack_capture interns it, then fixed. */
extern _Atomic livetrack_stack_id lt_kind_sites[LIVETRACK_DOMAIN_COUNT][LIVETRACK_MAX_TYPES + 1];
/* lt_stack_capture for a valid (domain, type), inline for livetrack_create:
 * with call sites off, once a kind's frameless site is interned, a create
 * takes it with one load and no call. Every other case is the same call
 * as before. */
static inline livetrack_stack_id lt_stack_capture_inline(unsigned domain, unsigned type)
{
    const lt_settings *settings = atomic_load_explicit(&lt_settings_ready, memory_order_acquire);
    if (__builtin_expect(settings == NULL, 0))
        return lt_stack_capture(domain, type);
    if (settings->stack_depth > 0)
        return lt_stack_capture_frames(domain, type, settings);
    livetrack_stack_id id = atomic_load_explicit(&lt_kind_sites[domain][type], memory_order_relaxed);
    return __builtin_expect(id != 0, 1) ? id : lt_stack_capture(domain, type);
}
/* The same for a caller holding a registry lock (it does not consult the
 * symbolizer). */
livetrack_stack_id lt_stack_capture_locked(unsigned domain, unsigned type);

/* Live objects and bytes of one call site (the peak's set). */
typedef struct lt_site_count {
    livetrack_stack_id stack;
    uint8_t domain;
    uint8_t type;
    uint64_t objects;
    uint64_t bytes;
} lt_site_count;

uint64_t lt_stack_count(void);
uint64_t lt_stack_bytes(void);
uint64_t lt_stack_walks(void); /* stacks walked with libunwind (not answered by the memo) */

#endif
