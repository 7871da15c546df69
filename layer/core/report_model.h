/*
 * The report model (report_model.c, report_peak.c): one snapshot of the
 * live set turned into what every report format shows, so the text and
 * JSON reports of one exit agree exactly.
 *
 *   leaked      live objects the program still holds (refs > 0)
 *   kept alive  live objects the program released, held only by their
 *               live children (leaked or suppressed) or by a call in
 *               progress: not leaks of their own
 *   sites       leaked objects grouped by the application frames of their
 *               creation stack (site_groups.h), largest first by bytes,
 *               then by count, then oldest first; suppressed sites after
 *               the others
 *
 * A model reads only livetrack's own tables, never a driver, so it can be
 * built from the core's destructor at exit.
 */
#ifndef LIVETRACK_REPORT_MODEL_H
#define LIVETRACK_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "livetrack/livetrack.h"
#include "site_groups.h"
#include "suppressions.h"

#define LT_REPORT_EXAMPLES 3 /* example handles per site */

typedef struct lt_report_kind {
    unsigned domain, type;
    uint64_t objects, bytes;
} lt_report_kind;

typedef struct lt_report_site {
    uint32_t id;              /* 1-based, in report order */
    size_t group;             /* its frames: model->groups */
    long suppression;         /* index of the pattern that suppressed it, -1: none */
    uint64_t objects, bytes;
    uint64_t first_seq;       /* its oldest object (a peak site: its lowest stack id), for a stable order */
    lt_report_kind *kinds;    /* its types, largest first */
    size_t kind_count, kind_capacity;
    size_t examples[LT_REPORT_EXAMPLES]; /* snapshot indexes, oldest first */
    unsigned example_count;
    size_t kept_first, kept_count; /* model->kept: released objects these keep alive */
    uint64_t kept_bytes;           /* their bytes (memory a leaked mapping pins, say) */
    size_t next_in_group;     /* internal: the group's next site + 1 */
} lt_report_site;

typedef struct lt_pattern_use {
    uint64_t objects, bytes;
} lt_pattern_use;

typedef struct lt_report_model {
    livetrack_snapshot *snapshot; /* NULL when it could not be taken */
    size_t count;                 /* objects in the snapshot */
    uint64_t since_mark;
    livetrack_stats stats;
    lt_misuse_record *misuse;     /* the kept misuse records, copied just before the stats */
    size_t misuse_kept;           /* so never more than stats.misuse counts */
    int call_sites;               /* LIVETRACK_STACK_DEPTH > 0 */
    const lt_suppressions *suppressions;
    lt_pattern_use *pattern_use;  /* per suppression pattern */

    uint32_t *site_of;            /* per snapshot index: site index + 1, 0: not leaked */
    lt_report_site *sites;        /* reported sites, then suppressed ones */
    size_t site_count, reported_sites;
    size_t *kept;                 /* snapshot indexes, grouped by site */
    size_t kept_total;

    uint64_t leaked_objects, leaked_bytes;         /* not suppressed */
    uint64_t suppressed_objects, suppressed_bytes;
    uint64_t kept_objects;                         /* kept alive, released by the program */
    uint64_t kept_by_leaks;                        /* of those, held through unsuppressed leaks */
    uint64_t kept_by_leaks_bytes;                  /* and their bytes, not counted as leaked */
    uint64_t inherited_objects, inherited_bytes;   /* of the leaked: made before this process forked */
    lt_report_kind *by_type;      /* leaked, not suppressed, largest first */
    size_t type_count;
    uint64_t api_objects[LIVETRACK_DOMAIN_COUNT], api_bytes[LIVETRACK_DOMAIN_COUNT];
    unsigned api_order[LIVETRACK_DOMAIN_COUNT]; /* domains that leaked, largest first */
    size_t api_count;

    lt_site_groups groups;
    int peak_built, have_peak;    /* lt_report_peak_build */
    lt_peak_info peak;
    lt_report_site *peak_sites;   /* only objects, bytes, kinds and group are used */
    size_t peak_site_count;
} lt_report_model;

/* An empty model (no snapshot): enough for the peak alone. It has the
 * stats and the misuse records, taken together. */
void lt_report_model_init(lt_report_model *model);

/* Build the model of the objects created after `since_mark` (0: all).
 * Returns 0 when out of memory (the model then says nothing leaked and
 * model->snapshot is NULL); free it either way. */
int lt_report_model_build(lt_report_model *model, uint64_t since_mark);
void lt_report_model_free(lt_report_model *model);
/* The leaks LIVETRACK_EXIT_CODE and livetrack_write_report go by: the
 * leaked objects, or every live object when that is not known, so that a
 * run asked to fail on leaks does not pass on a guess. */
uint64_t lt_report_model_leaks_to_count(const lt_report_model *model);

/* The live set at the peak, grouped like the leaks (report_peak.c).
 * Returns 0 when livetrack has no peak to show. */
int lt_report_peak_build(lt_report_model *model);

/* Shared by the model and the peak: add objects of a kind to a site. */
int lt_report_site_add(lt_report_site *site, unsigned domain, unsigned type, uint64_t bytes, uint64_t objects);
/* Order sites largest first (bytes, then objects, then oldest). */
int lt_report_site_compare(const lt_report_site *a, const lt_report_site *b);
void lt_report_sort_kinds(lt_report_kind *kinds, size_t count);

#endif
