/*
 * What the registry remembers beyond the live set, for reports:
 * the peak (peak.c), misuse events (misuse.c) and recently released
 * objects (the per-shard graveyard in registry.c).
 */
#ifndef LIVETRACK_HISTORY_H
#define LIVETRACK_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "livetrack/livetrack.h"
#include "stacks.h"

/* ---- peak (peak.c) ---- */
typedef struct lt_peak_info {
    uint64_t objects;      /* high-water mark of live objects */
    uint64_t bytes;        /* high-water mark of live bytes */
    uint64_t time_ns;      /* when the peak of the set below was reached */
    uint64_t set_objects;  /* objects and bytes in the set below */
    uint64_t set_bytes;
    int approximate;       /* 1: the set was copied after the peak moved on */
    size_t site_count;
    lt_site_count *sites;  /* the live set at the peak, by site; lt_free() it */
} lt_peak_info;
/* 1 with the peak in *out (all 0 when no object was ever live); 0 when
 * objects were live but livetrack ran out of memory keeping or copying
 * their set: there is no peak set to report. A set that is empty for
 * another reason (its objects released on another thread before it was
 * due) is returned, approximate, under the marks. */
int lt_peak_get(lt_peak_info *out);

/* The registry's side: every object that becomes live or dies. */
void lt_peak_created(uint64_t bytes);
int lt_peak_pending(void);       /* a new high waits for its set */
void lt_peak_before_death(void); /* copies the peak set when one is pending;
                                    call it holding no shard lock */
void lt_peak_died(uint64_t bytes);
void lt_registry_live_totals(uint64_t *objects, uint64_t *bytes); /* registry.c: exact, from the shards */
void lt_peak_marks(uint64_t *objects, uint64_t *bytes);
uint64_t lt_created_count(void); /* registry.c: objects created so far */
void lt_peak_lock(void);   /* for lt_history_lock() (fork) */
void lt_peak_unlock(void);

/* ---- misuse events (misuse.c) ---- */
#define LT_MISUSE_KEPT 1024u /* the first this many are kept for reports */
typedef struct lt_misuse_record {
    uint64_t seq;          /* its place among creation numbers (lt_creation_number_now) */
    uint64_t timeline_row; /* its row in the CSV timeline (the row's seq); 0: no timeline */
    uint64_t time_ns;
    uint8_t domain;
    uint8_t type;          /* LIVETRACK_ANY_TYPE when unknown */
    uint64_t handle;       /* 0: the misuse names no object */
    livetrack_stack_id call_stack;
    livetrack_stack_id create_stack;   /* 0: not known */
    livetrack_stack_id release_stack;  /* 0: not captured */
    char message[240];
} lt_misuse_record;
/* Copy the kept records, oldest first; returns how many were written. */
size_t lt_misuse_records(lt_misuse_record *out, size_t max);
/* How many records are kept now (more may be by the time they are copied). */
size_t lt_misuse_kept(void);

/* ---- released objects (registry.c) ---- */
typedef struct lt_released {
    uint8_t domain;
    uint8_t type;
    uint64_t handle;
    uint64_t seq;
    livetrack_stack_id create_stack;
    livetrack_stack_id release_stack;
    uint64_t bytes; /* so the peak's set can take it off its call site */
    /* Creation time (lt_ticks) and owner, so that livetrack_released can
     * describe the object as it was, for putting it back. */
    uint64_t ticks;
    const void *owner;
} lt_released;
typedef enum lt_object_state {
    LT_OBJECT_UNKNOWN,    /* never seen, or released too long ago */
    LT_OBJECT_HELD,       /* live, the program holds references */
    LT_OBJECT_KEPT_ALIVE, /* released by the program, held by children */
    LT_OBJECT_RELEASED    /* dead; remembered in the graveyard */
} lt_object_state;
/* What livetrack knows of a handle: live node first, then the graveyard. */
lt_object_state lt_object_history(unsigned domain, uint64_t handle, lt_released *out);

/* ---- misuse (misuse.c), for the registry and diagnostics ---- */
/* Count, record and (within LIVETRACK_MAX_DIAGNOSTICS) print one misuse.
 * `domain`/`handle` name the object (0: none). */
void lt_misuse(unsigned domain, uint64_t handle, const char *message);

#endif
