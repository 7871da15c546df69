/*
 * The CSV timeline (timeline.c), one row per lifecycle event when
 * LIVETRACK_CSV is set. Columns are documented in README.md ("The
 * timeline").
 */
#ifndef LIVETRACK_TIMELINE_H
#define LIVETRACK_TIMELINE_H

#include <stdint.h>

/* FREED: an object the program had released ended when the last object
 * (or pin) holding it went; its row names the call that let it go. */
typedef enum lt_event_kind {
    LT_EVENT_CREATE,
    LT_EVENT_RETAIN,
    LT_EVENT_RELEASE,
    LT_EVENT_DESTROY,
    LT_EVENT_MISUSE,
    LT_EVENT_FREED,
    LT_EVENT_RESTORE
} lt_event_kind;

/* Nonzero when a timeline was asked for (read on the hot path); the file
 * is opened by the first row. */
extern int lt_timeline_on;

/* Live objects per (domain, type), kept only while the timeline is on. */
void lt_timeline_type_add(unsigned domain, unsigned type, int64_t delta);

/* Writes the event's row; returns its number (the CSV's `seq`), 0 when no
 * row was written. */
uint64_t lt_timeline_event(lt_event_kind kind, const char *call, unsigned domain, unsigned type, uint64_t handle,
                           uint64_t bytes);

/* The timeline file this process writes rows to (NULL: none), and in
 * *started_ns when this process emptied it (CLOCK_MONOTONIC ns; 0: it
 * appends to the file of a process it forked from or into). */
const char *lt_timeline_file(uint64_t *started_ns);

#endif
