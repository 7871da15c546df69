/* The paths livetrack's messages take, and the misuse counters: the
 * diagnostics a program can cause again and again (misuse, refused
 * destroys) stop at LIVETRACK_MAX_DIAGNOSTICS; livetrack's notes about
 * itself (its report files, timeline, suppressions, settings, memory) are
 * few and are always printed. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core_internal.h"
#include "history.h"

static _Atomic long printed;
static _Atomic uint64_t misuse_count;
static _Atomic uint64_t replaced_count;

/* One fputs of a whole line: lines from several threads never mix. */
static void write_line(const char *line)
{
    lt_pipe_guard guard;
    lt_pipe_guard_begin(&guard);
    fputs(line, stderr);
    fflush(stderr);
    lt_pipe_guard_end(&guard);
}

/* "livetrack: " and the message as one line, cut to fit the buffer. */
static void print_line(const char *fmt, va_list args)
{
    char line[1024];
    int used = snprintf(line, sizeof line, "livetrack: ");
    int body = vsnprintf(line + used, sizeof line - (size_t)used - 1, fmt, args);
    used = body < 0 ? used : (int)strnlen(line, sizeof line - 2);
    line[used++] = '\n';
    line[used] = '\0';
    write_line(line);
}

static void vdiag(const char *fmt, va_list args)
{
    long limit = lt_get_settings()->max_diagnostics;
    long index = atomic_fetch_add(&printed, 1);
    if (limit >= 0 && index > limit)
        return;
    if (limit >= 0 && index == limit) {
        char line[128];
        snprintf(line, sizeof line, "livetrack: further diagnostics suppressed (LIVETRACK_MAX_DIAGNOSTICS=%ld)\n",
                 limit);
        write_line(line);
        return;
    }
    print_line(fmt, args);
}

void livetrack_diagnostic(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vdiag(fmt, args);
    va_end(args);
}

void lt_note(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    print_line(fmt, args);
    va_end(args);
}

int lt_diag_block(const char *text)
{
    long limit = lt_get_settings()->max_diagnostics;
    long index = atomic_fetch_add(&printed, 1);
    if (limit >= 0 && index > limit)
        return 0;
    lt_pipe_guard guard;
    lt_pipe_guard_begin(&guard);
    if (limit >= 0 && index == limit)
        fprintf(stderr, "livetrack: further diagnostics suppressed (LIVETRACK_MAX_DIAGNOSTICS=%ld)\n", limit);
    else
        fputs(text, stderr); /* one fputs: blocks from several threads never mix */
    fflush(stderr);
    lt_pipe_guard_end(&guard);
    return index < limit || limit < 0;
}

int lt_diag_would_print(void)
{
    long limit = lt_get_settings()->max_diagnostics;
    return limit < 0 || atomic_load(&printed) <= limit;
}

void lt_count_misuse(void) { atomic_fetch_add(&misuse_count, 1); }

void lt_stat_replaced(void) { atomic_fetch_add(&replaced_count, 1); }

void lt_fill_counters(livetrack_stats *out)
{
    out->misuse = atomic_load(&misuse_count);
    out->replaced = atomic_load(&replaced_count);
    out->incomplete = lt_tracking_incomplete();
}

int lt_process_recorded_anything(void)
{
    return lt_created_count() || atomic_load(&misuse_count) || lt_tracking_incomplete();
}

const char *livetrack_status_name(livetrack_status status)
{
    switch (status) {
    case LIVETRACK_OK: return "ok";
    case LIVETRACK_UNKNOWN: return "not a live object (never created or already released)";
    case LIVETRACK_WRONG_TYPE: return "live object of another type";
    case LIVETRACK_NOT_OWNED: return "already released by the application (kept alive by its children)";
    case LIVETRACK_NO_MEMORY: return "livetrack is out of memory";
    case LIVETRACK_BAD_ARGUMENT: return "bad argument";
    case LIVETRACK_REPLACED: return "another object has the handle now";
    }
    return "unknown status";
}
