/*
 * Helpers for the report tests (core and OpenCL): run a program with its
 * output captured and a changed environment, capture a report in memory,
 * read files, find the source line of a `LEAK:name` marker, and check a
 * JSON report against the schema with check_report_json.py.
 *
 * Settings are read once per process, so a case that needs its own
 * LIVETRACK_* environment runs in a child.
 */
#ifndef LIVETRACK_TESTS_REPORT_TEST_UTIL_H
#define LIVETRACK_TESTS_REPORT_TEST_UTIL_H

#include <errno.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "livetrack/livetrack.h"

#ifndef LIVETRACK_SOURCE_DIR
#error "LIVETRACK_SOURCE_DIR must name the source tree (set by CMake)"
#endif
#ifndef LIVETRACK_PYTHON3
#define LIVETRACK_PYTHON3 "/usr/bin/python3"
#endif

#include "child_process.h"

/* Children of the report tests start without the caller's LIVETRACK_*
 * settings: each test sets exactly the ones it checks. */
typedef tc_child rt_child;
static inline void rt_child_free(rt_child *child) { tc_child_free(child); }
static inline int rt_run(char *const argv[], const char *const *set, const char *const *unset, rt_child *child)
{
    return tc_run(argv, set, unset, 0, child);
}
static inline void rt_child_dump(const char *what, const rt_child *child) { tc_child_dump(what, child); }

/* This executable, to run itself as a child. */
static inline const char *rt_self(void)
{
    static char path[4096];
    ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
    if (length <= 0)
        return NULL;
    path[length] = '\0';
    return path;
}

/* A whole file, NUL-terminated; NULL when it cannot be read. One
 * allocation of the file's size: growing a buffer piece by piece is
 * quadratic under ASan, whose realloc always copies. */
static inline char *rt_read_file(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return NULL;
    long size = fseek(file, 0, SEEK_END) == 0 ? ftell(file) : -1;
    rewind(file);
    char *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    size_t got = text ? fread(text, 1, (size_t)size, file) : 0;
    fclose(file);
    if (!text)
        return NULL;
    text[got] = '\0';
    return text;
}

static inline int rt_write_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    if (!file)
        return 0;
    int ok = fputs(text, file) >= 0;
    return fclose(file) == 0 && ok;
}

/* Output written to memory: rt_capture_begin gives the stream to write
 * to, rt_capture_end closes it and hands over the text (free it). A test
 * that cannot capture its report cannot check anything, so either failing
 * ends it with status 2. */
typedef struct rt_capture {
    char *text;
    size_t size;
    FILE *stream;
} rt_capture;

static inline FILE *rt_capture_begin(rt_capture *capture)
{
    *capture = (rt_capture){0};
    capture->stream = open_memstream(&capture->text, &capture->size);
    if (!capture->stream) {
        fprintf(stderr, "open_memstream failed: %s\n", strerror(errno));
        exit(2);
    }
    return capture->stream;
}

static inline char *rt_capture_end(rt_capture *capture)
{
    if (fclose(capture->stream) != 0 || !capture->text) {
        fprintf(stderr, "the captured report was lost (out of memory?)\n");
        exit(2);
    }
    return capture->text;
}

/* livetrack_write_report's output as a string to free; *written (unless
 * NULL) gets what it returned. */
static inline char *rt_report(livetrack_format format, unsigned flags, uint64_t since_mark, size_t *written)
{
    rt_capture capture;
    size_t count = livetrack_write_report(rt_capture_begin(&capture), format, flags, since_mark);
    if (written)
        *written = count;
    return rt_capture_end(&capture);
}

/* livetrack_write_peak_report's output, the same way. */
static inline char *rt_peak_report(size_t *written)
{
    rt_capture capture;
    size_t count = livetrack_write_peak_report(rt_capture_begin(&capture));
    if (written)
        *written = count;
    return rt_capture_end(&capture);
}

/* Occurrences of `needle` in `text`. A plain loop: ASan's strstr measures
 * the whole haystack on every call, quadratic on a 200 MB report. */
static inline size_t rt_count(const char *text, const char *needle)
{
    size_t n = 0, length = strlen(needle);
    for (const char *at = text; at && *at; at++)
        if (*at == *needle && strncmp(at, needle, length) == 0) {
            n++;
            at += length - 1;
        }
    return n;
}

/* Lines of `text` starting with `prefix`. */
static inline size_t rt_count_lines(const char *text, const char *prefix)
{
    size_t n = 0, length = strlen(prefix);
    for (const char *line = text; line && *line;) {
        n += strncmp(line, prefix, length) == 0;
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : NULL;
    }
    return n;
}

/* The line of `text` that starts with `prefix` (the n-th, from 0), copied
 * into `out` without its newline; 0 when there is none. */
static inline int rt_line_starting(const char *text, const char *prefix, unsigned n, char *out, size_t size)
{
    size_t length = strlen(prefix);
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t line_length = end ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, prefix, length) == 0 && n-- == 0) {
            snprintf(out, size, "%.*s", (int)line_length, line);
            return 1;
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

/* The text that follows the line starting with `header` (from its next
 * line to the next empty line): one site's block of a text report. */
static inline char *rt_block_after(const char *text, const char *header)
{
    const char *at = text;
    size_t length = strlen(header);
    while (at && *at && strncmp(at, header, length) != 0) {
        at = strchr(at, '\n');
        at = at ? at + 1 : NULL;
    }
    if (!at || !*at)
        return NULL;
    const char *start = strchr(at, '\n');
    start = start ? start + 1 : at + strlen(at);
    const char *end = strstr(start, "\n\n");
    end = end ? end + 1 : start + strlen(start);
    char *block = NULL;
    size_t size = 0;
    tc_append(&block, &size, start, (size_t)(end - start));
    return block;
}

/* The line number of the first line of `source` containing `marker`, 0
 * when there is none. */
static inline int rt_marker_line(const char *source, const char *marker)
{
    char *text = rt_read_file(source);
    if (!text)
        return 0;
    int line = 1, found = 0;
    const char *at = strstr(text, marker);
    if (at) {
        for (const char *c = text; c < at; c++)
            line += *c == '\n';
        found = line;
    }
    free(text);
    return found;
}

/* Validate a JSON report against docs/livetrack-report.schema.json and
 * evaluate `checks` (Python expressions over `r`; NULL-terminated).
 * Returns 1 when all hold; prints the checker's complaints otherwise. */
static inline int rt_check_json(const char *report, const char *const *checks)
{
    const char *argv[64];
    size_t n = 0;
    argv[n++] = LIVETRACK_PYTHON3;
    argv[n++] = LIVETRACK_SOURCE_DIR "/tests/core/check_report_json.py";
    argv[n++] = LIVETRACK_SOURCE_DIR "/docs/livetrack-report.schema.json";
    argv[n++] = report;
    for (size_t i = 0; checks && checks[i] && n < 63; i++)
        argv[n++] = checks[i];
    argv[n] = NULL;
    rt_child child;
    const char *const keep_none[] = {NULL};
    if (rt_run((char *const *)argv, NULL, keep_none, &child) != 0)
        return 0;
    int ok = child.status == 0;
    if (!ok)
        fprintf(stderr, "  JSON check of %s failed (exit %d):\n%s%s", report, child.status, child.out, child.err);
    rt_child_free(&child);
    return ok;
}

/* Write this process's JSON report (livetrack_write_report with `flags`,
 * no mark) to a new temporary file and check it as rt_check_json does. The
 * file and its directory are removed when the checks hold and kept (named
 * in the checker's complaint) when they do not. */
static inline int rt_check_own_json(unsigned flags, const char *const *checks)
{
    char dir[] = "/tmp/livetrack-report-XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        fprintf(stderr, "  mkdtemp %s: %s\n", dir, strerror(errno));
        return 0;
    }
    snprintf(path, sizeof path, "%s/report.json", dir);
    FILE *file = fopen(path, "w");
    if (!file) {
        fprintf(stderr, "  cannot write %s: %s\n", path, strerror(errno));
        rmdir(dir);
        return 0;
    }
    livetrack_write_report(file, LIVETRACK_FORMAT_JSON, flags, 0);
    int ok = fclose(file) == 0 && rt_check_json(path, checks);
    if (ok) {
        unlink(path);
        rmdir(dir);
    }
    return ok;
}

#endif
