/*
 * The CSV timeline that LIVETRACK_CSV writes (README.md, "The timeline"), read
 * into memory: one row per lifecycle event.
 *
 * Columns are found by their header name, so added or reordered columns
 * do not break the reader. Only seq, time_ms, event, api, type,
 * live_objects and live_bytes are required; the others read as 0 and
 * the `has_*` flags say which were there. A last line without its
 * newline (the program crashed while writing it) is ignored. A row that
 * holds a NUL byte (never written by livetrack: the file is damaged), or
 * a time that is not a finite number of milliseconds up to 1e15 (nan,
 * inf), is malformed: skipped and counted like any other.
 */
#ifndef LIVETRACK_CSV_READER_H
#define LIVETRACK_CSV_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum timeline_event {
    TIMELINE_CREATE,
    TIMELINE_RETAIN,
    TIMELINE_RELEASE,
    TIMELINE_DESTROY,
    TIMELINE_MISUSE,
    TIMELINE_FREED,   /* a released object ended with the last object holding it */
    TIMELINE_RESTORE, /* a release or destroy the API refused: the object is back */
    TIMELINE_EVENT_KINDS
} timeline_event;

/* Names of the events as the CSV writes them ("create", ...). */
extern const char *const timeline_event_names[TIMELINE_EVENT_KINDS];

typedef struct timeline_row {
    uint64_t seq;
    double time_ms;
    uint64_t handle;
    uint64_t bytes;        /* unsigned, as the core writes them: sizes reach 2^64 - 1 */
    int64_t type_live;
    uint64_t live_objects;
    uint64_t live_bytes;
    int64_t vm_size_kb, vm_rss_kb, vm_data_kb, vm_peak_kb, threads;
    int64_t d_vm_size_kb, d_vm_rss_kb;
    uint32_t call;   /* index into timeline.strings ("" when empty) */
    uint32_t api;    /* index into timeline.strings */
    uint32_t type;   /* index into timeline.strings */
    uint32_t series; /* index into timeline.series: one per api+type */
    uint8_t event;   /* timeline_event */
} timeline_row;

/* One api+type pair, in order of first appearance. */
typedef struct timeline_series {
    uint32_t api, type;
    int64_t peak;   /* highest type_live seen */
    int64_t last;   /* type_live after the last row of this type */
    uint64_t rows;
} timeline_series;

typedef struct timeline {
    timeline_row *rows;
    size_t count;
    char **strings; /* interned call, api and type names; strings[0] = "" */
    size_t string_count;
    timeline_series *series;
    size_t series_count;
    int has_vm;      /* vm_size_kb and vm_rss_kb columns present */
    int has_call;
    int has_deltas;  /* d_vm_rss_kb present */
    size_t skipped;  /* malformed rows left out */
    int partial_last_line;
} timeline;

/* Reads `path` ("-": stdin). On failure returns 0 with a message in
 * `error`; malformed rows are skipped and counted, not fatal. */
int timeline_read(const char *path, timeline *out, char *error, size_t error_size);
/* The same from a stream already open, read to its end and not closed (a
 * pipe or FIFO can be opened and read only once); `path` names it in
 * warnings. */
int timeline_read_stream(FILE *in, const char *path, timeline *out, char *error, size_t error_size);
void timeline_free(timeline *timeline);
/* "OpenCL cl_event" for a series, into `out`. */
void timeline_series_name(const timeline *timeline, size_t series, char *out, size_t size);

#endif
