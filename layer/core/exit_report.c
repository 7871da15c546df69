/*
 * The exit report: what was never released, written when the process
 * ends, and LIVETRACK_EXIT_CODE.
 *
 * It runs from the core library's destructor, which the dynamic linker
 * calls after every atexit handler of the program, so objects released by
 * those handlers are not reported (the Level Zero front end sees those
 * releases through untraced_destroys.c, the loader's tracer no longer). It reads only livetrack's own tables,
 * never a driver: at exit the driver may already be torn down.
 *
 *   LIVETRACK_EXIT_REPORT   the text report (auto: only when something
 *                           leaked; always; off)
 *   LIVETRACK_OUTPUT        where the text goes (default stderr)
 *   LIVETRACK_PEAK_REPORT   add the live set at the peak to the text
 *   LIVETRACK_JSON          also the JSON document, whatever leaked
 *   LIVETRACK_EXIT_CODE     when unsuppressed leaks remain, end the process
 *                           with this status, as LeakSanitizer's exitcode
 *   LIVETRACK_RUN_LOG       append this process's verdict (run_log.c)
 * Each of these acts on its own: EXIT_REPORT=off silences the text only.
 * A process that recorded nothing (no object, no misuse) writes none.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"
#include "report_writers.h"

/* A report file with a buffer of its own: with 10^6 leaked objects the
 * JSON is ~200 MB, and stdio's default 4 KiB buffer made that ~50000
 * write calls (~0.2 s to a file on a VM measured, 33 ms in 1 MiB writes). */
#define OUTPUT_BUFFER ((size_t)1 << 20)

typedef struct report_file {
    FILE *file;
    char *buffer;
    char path[4096]; /* %p expanded, for messages: the file tried */
} report_file;

/* Set when flushing the program's stream failed on a pipe whose reader
 * has gone. That flush runs inside the report's pipe guard, which takes
 * back the SIGPIPE it raised; without the report, exit()'s own flush of
 * that stream would have raised it, and a program that leaves SIGPIPE
 * to its default action would have died of it (status 141, which `set -o
 * pipefail` scripts see). So it is raised again once the report is
 * written and the guard is over. */
static int program_write_broke_pipe;

/* Write out what the program has buffered in `stream` (stdout or stderr,
 * on descriptor `fd`) when that descriptor writes to `report_file`:
 * exit() flushes it only after this destructor, so it would come after
 * the report. Best effort, never waiting:
 *  - a stream whose descriptor is closed or another file is left alone:
 *    an atexit handler may have closed the stream (gnulib's close_stdout
 *    does), and a closed FILE must not be used. fclose closed its
 *    descriptor too, and livetrack's own descriptors never take 0-2
 *    (std_fds.c). Only a program that closes stdout and then opens the
 *    report's file again on descriptor 1 gets its closed stdout flushed:
 *    glibc and musl keep a closed standard stream, emptied, and flushing
 *    it writes nothing;
 *  - the stream's lock is tried, never waited for: another thread may hold
 *    it for as long as it likes (blocked in a write to a full pipe). Not
 *    fflush(NULL) either: it waits for every stream's lock, stdin's too,
 *    which a thread blocked in fgets(stdin) holds until a line comes: the
 *    process would hang at exit. A stream left so is flushed by exit()
 *    after the report, which, written at the same file offset
 *    (lt_open_std_stream), it does not overwrite;
 *  - a stream that is not the C library's stdout or stderr as loaded
 *    (lt_std_streams_at_load) may be a FILE the program freed. */
static void flush_program_stream(FILE *stream, int fd, const struct stat *report_file)
{
    if (!stream || stream != lt_std_streams_at_load[fd - 1].stream || !lt_fd_still_is(fd, report_file) ||
        ftrylockfile(stream) != 0)
        return;
    if (fflush_unlocked(stream) != 0 && errno == EPIPE)
        program_write_broke_pipe = 1;
    funlockfile(stream);
}

/* Open a %p path for writing; file NULL (and a message) when it cannot be.
 * A file the program's stdout or stderr writes to is written through that
 * descriptor's duplicate, where the program's output ends, after what the
 * program buffered for it there is flushed (flush_program_stream).
 * Only stdout and stderr are: a FILE the program opened itself on such a
 * file is flushed by exit() after the report. */
static report_file open_output(const char *pattern, const char *what, int fall_back_to_stderr)
{
    report_file out = {NULL, NULL, ""};
    int error = ENAMETOOLONG;
    if (lt_expand_path(pattern, out.path, sizeof out.path)) {
        int std_fd;
        lt_output_kind kind = lt_output_kind_of(out.path, &std_fd);
        struct stat report_file;
        /* fstat: /dev/stdout leads nowhere once stdout is closed, and
         * with `>out 2>&1` stderr's buffered output still goes first */
        if (kind == LT_OUTPUT_STD_STREAM && fstat(std_fd, &report_file) == 0) {
            flush_program_stream(stdout, STDOUT_FILENO, &report_file);
            flush_program_stream(stderr, STDERR_FILENO, &report_file);
        }
        out.file = lt_open_report_file(out.path, kind, std_fd);
        error = errno;
    } else {
        snprintf(out.path, sizeof out.path, "%s", pattern); /* too long to expand: as given */
    }
    if (!out.file) {
        if (fall_back_to_stderr)
            lt_note("cannot write the %s to \"%s\"; writing it to stderr", what, out.path);
        else
            lt_note("cannot write the %s to \"%s\": %s", what, out.path, strerror(error));
        return out;
    }
    out.buffer = lt_malloc(OUTPUT_BUFFER); /* none: stdio's own, only slower */
    if (out.buffer && setvbuf(out.file, out.buffer, _IOFBF, OUTPUT_BUFFER) != 0) {
        lt_free(out.buffer);
        out.buffer = NULL;
    }
    return out;
}

/* Close the file and say if any of the report failed to reach it (a full
 * disk). Called right after the writer: the writers flush the stream
 * themselves, so a write error shows as the stream's error flag, with
 * errno still as the failed write left it, and fclose then succeeds. */
static void close_output(report_file *out, const char *what)
{
    int error = ferror(out->file) ? (errno ? errno : EIO) : 0;
    if (fclose(out->file) != 0 && !error)
        error = errno ? errno : EIO;
    lt_free(out->buffer); /* only after fclose: stdio writes from it until then */
    if (error)
        lt_note("writing the %s to \"%s\" failed: %s", what, out->path, strerror(error));
}

/* The text report's place when LIVETRACK_OUTPUT names none (or one that
 * cannot be written): the program's stderr, but through a FILE of
 * livetrack's own on a duplicate of descriptor 2, as for an explicit
 * /dev/stderr. The text report takes its stream's lock, so that no other
 * output lands inside it; on the program's own stderr FILE that would wait
 * for good for a thread that holds that lock at exit. What the program
 * buffered on stderr (nothing, unless it made stderr buffered) is flushed
 * first if that lock is free, else exit() writes it after the report. NULL
 * when descriptor 2 is closed (nowhere to write): the caller then writes
 * to the program's stderr FILE, as before, and those writes fail. */
static FILE *open_default_output(void)
{
    struct stat program_stderr;
    if (fstat(STDERR_FILENO, &program_stderr) != 0)
        return NULL;
    flush_program_stream(stderr, STDERR_FILENO, &program_stderr);
    return lt_open_report_file("/dev/stderr", LT_OUTPUT_STD_STREAM, STDERR_FILENO);
}

__attribute__((destructor)) static void exit_report(void)
{
    const lt_settings *settings = lt_get_settings();
    int text = settings->exit_report != LT_EXIT_REPORT_OFF;
    if (!text && !settings->json && !settings->exit_code && !settings->run_log)
        return;
    /* livetrack run preloads the core into every process of the tree.
     * A shell wrapper that ran the program, exits after it and recorded
     * nothing would otherwise replace the program's JSON (and its forced
     * text report) with an empty one. Nothing recorded: nothing leaked. */
    if (!lt_process_recorded_anything())
        return;
    lt_report_model model;
    lt_report_model_build(&model, 0);
    unsigned flags = LT_REPORT_AT_EXIT | (settings->peak_report ? LIVETRACK_REPORT_PEAK : 0);
    if (settings->exit_report == LT_EXIT_REPORT_ALWAYS)
        flags |= LIVETRACK_REPORT_ALWAYS;

    /* Leaks not known (out of memory for the snapshot) are said too. */
    int some_leaks = lt_report_model_leaks_to_count(&model) != 0;
    /* stderr may be a pipe whose reader has gone: the process still ends
     * with the program's status, not of a SIGPIPE. */
    lt_pipe_guard guard;
    lt_pipe_guard_begin(&guard);
    /* The files written, for the run log: %p expanded */
    static char text_written[sizeof ((report_file *)0)->path], json_written[sizeof text_written];
    if (text && (some_leaks || (flags & (LIVETRACK_REPORT_ALWAYS | LIVETRACK_REPORT_PEAK)))) {
        report_file out = {NULL, NULL, ""};
        if (settings->output)
            out = open_output(settings->output, "report", 1);
        FILE *on_stderr = out.file ? NULL : open_default_output();
        FILE *file = out.file ? out.file : on_stderr ? on_stderr : stderr;
        if (some_leaks || (flags & LIVETRACK_REPORT_ALWAYS))
            lt_report_write_text(file, &model, flags);
        else
            lt_report_write_peak_text(file, &model);
        if (on_stderr)
            fclose(on_stderr); /* a failure shows nowhere: stderr is where it would be said */
        if (out.file) {
            close_output(&out, "report");
            memcpy(text_written, out.path, sizeof text_written);
        }
    }
    if (settings->json) {
        report_file out = open_output(settings->json, "JSON report", 0);
        if (out.file) {
            lt_report_write_json(out.file, &model, flags);
            close_output(&out, "JSON report");
            memcpy(json_written, out.path, sizeof json_written);
        }
    }
    /* A forked child's verdict is its own: what it inherited is its
     * parent's to release (and is in the child's report all the same).
     * The exit status follows the verdict, or every forked worker of a
     * program that holds a context would fail. */
    uint64_t leaked = lt_report_model_leaks_to_count(&model);
    if (model.snapshot)
        leaked -= model.inherited_objects;
    lt_run_verdict verdict = {leaked,
                              model.snapshot ? model.leaked_bytes - model.inherited_bytes : model.stats.live_bytes,
                              model.stats.misuse, model.snapshot ? model.inherited_objects : 0, 0,
                              text_written[0] ? text_written : NULL,
                              json_written[0] ? json_written : NULL};
    lt_run_log_append(&verdict);
    lt_pipe_guard_end(&guard);
    lt_report_model_free(&model);
    /* The program's own write raised it: the program's disposition and
     * signal mask decide, as they would have in exit()'s flush (ignored or
     * blocked, it changes nothing; caught, its handler runs). */
    if (program_write_broke_pipe)
        raise(SIGPIPE);
    if (settings->exit_code && leaked) {
        /* As LeakSanitizer does: everything is written, then the status
         * says "leaks" whatever the program returned. Not fflush(NULL):
         * glibc's waits for every stream's lock, stdin's too, which a
         * thread blocked in fgets(stdin) holds until a line comes, and the
         * process would never end. glibc's fcloseall() is the flush exit()
         * itself does, which takes no stream's lock. Nothing of livetrack
         * writes through stdio after it: _exit follows. */
#ifdef __GLIBC__
        fcloseall();
#else
        fflush(NULL);
#endif
        _exit((int)settings->exit_code);
    }
}
