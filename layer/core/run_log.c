/*
 * The run log: one line per tracked process, for `livetrack run`.
 *
 * livetrack run preloads livetrack into every process of the program's
 * tree, and each process writes its own report at exit. When a script
 * runs several tracked programs, the run needs every process's verdict,
 * not only the last one's file or the script's exit status, which may
 * drop a failed command's. LIVETRACK_RUN_LOG names a file (livetrack run
 * makes a private one) to which each process that recorded anything
 * appends, at exit or crash, one line of tab-separated fields:
 *
 *   pid  leaked objects  leaked bytes  misused calls  signal (0: exit)
 *   program name  text report file  JSON file  ("" when not written
 *   to a file)  objects inherited from the parent it forked from and
 *   left unreleased (not among the leaked ones)  timeline file ("":
 *   none)  when this process emptied the timeline file, 0 when it
 *   appended (to a relative's, or to the program's stdout, a FIFO)  when
 *   the line was written (both in ns of CLOCK_MONOTONIC, plus 1,
 *   comparable across the machine's processes: the run says whose rows a
 *   timeline several processes emptied holds)
 *
 * One write() with O_APPEND per line: the kernel keeps the lines of
 * concurrent processes whole in a local file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "core_internal.h"
#include "timeline.h"

/* Copies `text` into `out` with tabs and line breaks, which would split
 * the line, made '?'; returns the length written (at most size - 1). */
static size_t copy_field(char *out, size_t size, const char *text)
{
    size_t length = 0;
    for (; text && text[length] && length + 1 < size; length++)
        out[length] = (text[length] == '\t' || text[length] == '\n' || text[length] == '\r') ? '?' : text[length];
    out[length] = '\0';
    return length;
}

/* static: ~29 KB, and a crash report that could not switch to its own
 * stack runs on whatever signal stack the thread has. One caller at a
 * time (busy): a thread crashing while the exit appends skips its line
 * rather than garble the exit's. */
static atomic_flag busy = ATOMIC_FLAG_INIT;
static char line[4 * 4096 + 256], program[256], text_path[4096], json_path[4096], csv_path[4096];

/* The verdict as one line in `line`; its length, 0 if it did not fit
 * (it cannot: every field is bounded above). */
static size_t format_line(const lt_run_verdict *verdict)
{
    copy_field(program, sizeof program, program_invocation_short_name);
    copy_field(text_path, sizeof text_path, verdict->text_path);
    copy_field(json_path, sizeof json_path, verdict->json_path);
    uint64_t csv_started_ns;
    copy_field(csv_path, sizeof csv_path, lt_timeline_file(&csv_started_ns));
    int length = snprintf(line, sizeof line,
                          "%ld\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%d\t%s\t%s\t%s\t%" PRIu64 "\t%s\t%" PRIu64
                          "\t%" PRIu64 "\n",
                          (long)getpid(), verdict->leaked_objects, verdict->leaked_bytes, verdict->misuse,
                          verdict->signal, program, text_path, json_path, verdict->inherited_objects, csv_path,
                          csv_started_ns, lt_monotonic_ns() + 1);
    return length > 0 && (size_t)length < sizeof line ? (size_t)length : 0;
}

static void append_line(const char *path, size_t length)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        /* Most likely this process outlived the livetrack run that
         * started it, which removed its log when the program ended. */
        lt_note("the run log \"%s\" is gone (the livetrack run that started this process has ended?): "
                "this process's leaks are in its own report only",
                path);
        return;
    }
    if (fd < 0) {
        lt_note("cannot add this process's verdict to the run log \"%s\": %s", path, strerror(errno));
        return;
    }
    if (write(fd, line, length) != (ssize_t)length)
        lt_note("writing this process's verdict to the run log \"%s\" failed", path);
    close(fd);
}

void lt_run_log_append(const lt_run_verdict *verdict)
{
    const char *path = lt_get_settings()->run_log;
    if (!path || atomic_flag_test_and_set(&busy))
        return;
    size_t length = format_line(verdict);
    if (length)
        append_line(path, length);
    atomic_flag_clear(&busy);
}
