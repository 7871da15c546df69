/*
 * Leak suppressions (suppressions.c): the patterns of the file named by
 * LIVETRACK_SUPPRESSIONS, for leaks the program cannot fix (inside a
 * third-party library, a driver's own objects).
 *
 * One pattern a line, `kind:pattern`, with kind one of
 *   type      the object's type name            type:cl_event
 *   function  a function of its creation stack  function:third_party_*
 *   module    a module of its creation stack    module:*libfoo.so*
 *   file      a source file of its stack        file:*third_party*
 * `*` matches any run of bytes (`/` included) and `?` one byte; every other
 * byte, `[`, `]` and `\` too, stands for itself (wildcard.h). `#` starts a
 * comment line; blank lines are ignored. A line that is none of these gets
 * one message naming file:line and is ignored; an unreadable file gets one
 * message and suppresses nothing.
 *
 * The file is read once, on first use, and kept for the whole process:
 * the exit report and on-demand reports see the same patterns.
 */
#ifndef LIVETRACK_SUPPRESSIONS_H
#define LIVETRACK_SUPPRESSIONS_H

#include <stddef.h>

#include "livetrack/livetrack.h"

typedef enum lt_suppression_kind {
    LT_SUPPRESS_TYPE,
    LT_SUPPRESS_FUNCTION,
    LT_SUPPRESS_MODULE,
    LT_SUPPRESS_FILE
} lt_suppression_kind;

typedef struct lt_suppression {
    lt_suppression_kind kind;
    const char *pattern; /* after "kind:", matched by lt_wildcard_matches */
    const char *text;    /* the whole pattern as written ("type:cl_event") */
    unsigned line;       /* in the file, for the report */
} lt_suppression;

typedef struct lt_suppressions {
    const char *path;    /* NULL: no LIVETRACK_SUPPRESSIONS */
    size_t count;
    lt_suppression *items;
} lt_suppressions;

/* The patterns of LIVETRACK_SUPPRESSIONS (count 0 when none). Never NULL. */
const lt_suppressions *lt_suppressions_get(void);

/* Parse `path` into *out (used by lt_suppressions_get; tests may call it
 * directly). Bad lines and an unreadable file are reported through
 * lt_note. Returns the number of patterns. */
size_t lt_suppressions_load(const char *path, lt_suppressions *out);
void lt_suppressions_free(lt_suppressions *suppressions);

/* Index of the first type pattern that matches `type_name`, or -1. */
long lt_suppress_type(const lt_suppressions *suppressions, const char *type_name);

/* Index of the first function, module or file pattern that matches any of
 * the frames, or -1. */
long lt_suppress_frames(const lt_suppressions *suppressions, const livetrack_frame *frames, size_t count);

/* 1 when some pattern needs the frames (function, module or file). */
int lt_suppressions_need_frames(const lt_suppressions *suppressions);

/* The index of the first such pattern; LONG_MAX when there is none. */
long lt_suppressions_first_frame_pattern(const lt_suppressions *suppressions);

#endif
