/*
 * Call-site groups (site_groups.c), for the reports.
 *
 * A report shows a call site as the application's frames, symbolized.
 * Several interned stacks can read the same (the same call reached through
 * different paths inside a loader or driver, objects of several types made
 * by one helper, or a loop the compiler unrolled into several calls on one
 * line), so reports group by what the frames say: function, file, line,
 * column and inlining of every frame (module and offset where there is no
 * line), not by stack id or return address. Objects without frames (call
 * sites off, a stack that was not captured) group by (domain, type).
 *
 * Each distinct stack is symbolized once, when it is first seen; the
 * symbolizer caches each address. A table lives for one report and is
 * used by one thread.
 */
#ifndef LIVETRACK_SITE_GROUPS_H
#define LIVETRACK_SITE_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "livetrack/livetrack.h"

typedef struct lt_site_group {
    livetrack_stack_id stack; /* the first stack seen: its addresses stand for all */
    unsigned domain, type;    /* of the first object seen; the key when there are no frames */
    livetrack_frame *frames;  /* symbolized, inlined calls expanded; NULL: none */
    size_t frame_count;
    uint64_t hash;
} lt_site_group;

typedef struct lt_site_groups {
    lt_site_group *groups;
    size_t count, capacity;
    /* stack id (and kind) -> group: most lookups end here */
    uint64_t *stack_keys;
    uint32_t *stack_groups;
    size_t stack_mask, stack_used;
    /* what the frames say -> group */
    uint32_t *slots; /* group index + 1, 0: empty */
    size_t slot_mask;
} lt_site_groups;

void lt_site_groups_init(lt_site_groups *table);
void lt_site_groups_free(lt_site_groups *table);

/* The group of an object of (domain, type) created at `stack`; -1 when
 * out of memory. */
long lt_site_group_of(lt_site_groups *table, livetrack_stack_id stack, unsigned domain, unsigned type);

/* The group's frames (inlined calls expanded). */
size_t lt_site_group_frames(lt_site_groups *table, size_t group, const livetrack_frame **frames);

#endif
