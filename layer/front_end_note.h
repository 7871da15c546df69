/*
 * One line of a front end's own notes on stderr ("livetrack: Level Zero:
 * ..."), shared by the Level Zero and CUDA front ends. These notes are
 * about the front end itself (attaching, what it cannot see) and go
 * straight to stderr, not through the core's diagnostics. A note a
 * program can cause again and again (a destroy the driver refuses, in a
 * retry loop) goes through the core's diagnostics instead
 * (lt_front_end_vdiagnostic), so LIVETRACK_MAX_DIAGNOSTICS bounds it.
 */
#ifndef LIVETRACK_FRONT_END_NOTE_H
#define LIVETRACK_FRONT_END_NOTE_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "livetrack/livetrack.h"

static inline void lt_front_end_vnote(const char *prefix, const char *fmt, va_list args)
{
    char line[512];
    int used = snprintf(line, sizeof line, "livetrack: %s: ", prefix);
    vsnprintf(line + used, sizeof line - (size_t)used - 1, fmt, args);
    size_t length = strlen(line);
    line[length] = '\n';
    line[length + 1] = '\0';
    fputs(line, stderr); /* one call: lines from several threads never mix */
}

/* The same line, printed as one of the core's diagnostics: counted
 * against LIVETRACK_MAX_DIAGNOSTICS, not as a misuse. */
static inline void lt_front_end_vdiagnostic(const char *prefix, const char *fmt, va_list args)
{
    char body[512];
    vsnprintf(body, sizeof body, fmt, args);
    livetrack_diagnostic("%s: %s", prefix, body);
}

#endif
