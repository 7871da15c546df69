/*
 * Services the core's files share: memory (one place, so failures are
 * handled alike and can be injected by tests), diagnostics, counters and
 * settings.
 */
#ifndef LIVETRACK_CORE_INTERNAL_H
#define LIVETRACK_CORE_INTERNAL_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "livetrack/livetrack.h"
#include "path_pattern.h"

/* ---- memory (memory.c) ---- */
void *lt_calloc(size_t count, size_t size);
/* Allocation-failure injection for tests (memory.c explains them). */
long lt_fault_alloc_set(long after, long count);
long lt_fault_alloc_pending(void);
void *lt_malloc(size_t size);
void lt_free(void *pointer);
/* Tell the user once that tracking is now incomplete. */
void lt_out_of_memory(const char *what);
int lt_tracking_incomplete(void);

/* ---- diagnostics (diagnostics.c) ---- */
/* One line on stderr, prefixed "livetrack: ", about something the program
 * did and can do again and again (misuse, a destroy the driver refused):
 * capped by LIVETRACK_MAX_DIAGNOSTICS so a misbehaving program cannot
 * flood its own output. */
#define lt_diag livetrack_diagnostic /* the front ends' public name for it */
/* One line on stderr, prefixed "livetrack: ", about livetrack itself: a
 * report, timeline or suppressions file it cannot write or read, a
 * setting it cannot honour, memory it ran out of. Each is said once or a
 * bounded number of times, and a quiet run (LIVETRACK_MAX_DIAGNOSTICS=0,
 * or a program past the cap) must still learn that its report is
 * missing: neither counted nor capped. */
void lt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A block of whole lines (already prefixed), counted as one diagnostic.
 * Returns 1 when it was printed. */
int lt_diag_block(const char *text);
/* 0 once the diagnostic cap is reached: callers skip costly formatting. */
int lt_diag_would_print(void);
void lt_count_misuse(void);

/* "    #3 0x401136 in main /src/app.c:42:7 (/usr/bin/app+0x1136)" (frames.c) */
void lt_format_frame(const livetrack_frame *frame, unsigned index, char *out, size_t size);

/* "4.0 KiB" (report_text.c) */
void lt_format_bytes(uint64_t bytes, char *out, size_t size);

/* ---- counters (diagnostics.c) ---- */
void lt_stat_replaced(void);
void lt_fill_counters(livetrack_stats *out);
/* Whether this process recorded anything: an object, a misuse, or lost
 * tracking. One that did not (a shell or tool in a tree livetrack run
 * armed) writes no report file. */
int lt_process_recorded_anything(void);

/* ---- settings (settings.c) ---- */
typedef enum lt_exit_report_mode { LT_EXIT_REPORT_AUTO, LT_EXIT_REPORT_ALWAYS, LT_EXIT_REPORT_OFF } lt_exit_report_mode;

typedef enum lt_order_choice { LT_ORDER_CHOICE_AUTO, LT_ORDER_CHOICE_COUNTER, LT_ORDER_CHOICE_CLOCK } lt_order_choice;

typedef struct lt_settings {
    const char *output;      /* LIVETRACK_OUTPUT, NULL: stderr */
    int transparent;         /* LIVETRACK_TRANSPARENT */
    lt_exit_report_mode exit_report; /* LIVETRACK_EXIT_REPORT */
    long max_diagnostics;    /* LIVETRACK_MAX_DIAGNOSTICS */
    long stack_depth;        /* LIVETRACK_STACK_DEPTH, 0: no call sites */
    int release_stacks;      /* LIVETRACK_RELEASE_STACKS */
    int stack_memo;          /* LIVETRACK_STACK_MEMO */
    const char *json;        /* LIVETRACK_JSON, NULL: none */
    const char *csv;         /* LIVETRACK_CSV, NULL: no timeline */
    long exit_code;          /* LIVETRACK_EXIT_CODE, 0: leave the status alone */
    const char *suppressions; /* LIVETRACK_SUPPRESSIONS, NULL: none */
    int peak_report;         /* LIVETRACK_PEAK_REPORT */
    int crash_report;        /* LIVETRACK_CRASH_REPORT */
    int quiet_absent_api;    /* LIVETRACK_QUIET_ABSENT_API */
    const char *run_log;     /* LIVETRACK_RUN_LOG, NULL: none */
    int creation_order;      /* LIVETRACK_CREATION_ORDER, an lt_order_choice */
} lt_settings;

/* The settings, read from the environment the first time anyone asks and
 * fixed from then on. Inline because the hot path asks on every create
 * and release: after the first call it is one load. */
extern _Atomic(const lt_settings *) lt_settings_ready; /* settings.c: set once loaded */
const lt_settings *lt_load_settings(void);
static inline const lt_settings *lt_get_settings(void)
{
    const lt_settings *settings = atomic_load_explicit(&lt_settings_ready, memory_order_acquire);
    return settings ? settings : lt_load_settings();
}

/* ---- the run log (run_log.c): a process's verdict for livetrack run ---- */
typedef struct lt_run_verdict {
    uint64_t leaked_objects, leaked_bytes, misuse;
    uint64_t inherited_objects; /* a forked child's leaks that its parent made (not in leaked_objects) */
    int signal;                 /* the fatal signal of a crash report, 0 at exit */
    const char *text_path;      /* the text report's file, NULL: none or stderr */
    const char *json_path;      /* the JSON report's file, NULL: none */
} lt_run_verdict;
/* Appends the verdict, and the process's timeline file, to
 * LIVETRACK_RUN_LOG when that is set. */
void lt_run_log_append(const lt_run_verdict *verdict);

/* ---- snapshots (snapshot.c) ---- */
/* For a walk in creation order (oldest first: from the last index down),
 * at `index`: start loading the object the walk reaches a few steps later
 * (nothing near the end). Such a walk jumps between the shards' stretches
 * of the copy, more streams than the hardware prefetcher follows, so each
 * object of a large snapshot was a cache miss. */
void lt_snapshot_prefetch_oldest_first(const livetrack_snapshot *snapshot, size_t index);

/* The creation number of the last object this process inherited from the
 * parent it forked from (0: none, it did not fork). A forked child keeps
 * the parent's objects; they are the parent's to release, not its leaks. */
uint64_t lt_inherited_up_to(void); /* lifecycle.c */

/* ---- process lifecycle (lifecycle.c registers these with pthread_atfork) ----
 * Each module takes every lock it owns before fork() and drops them after,
 * so the child never inherits a lock held by a thread that does not exist
 * there. */
void lt_registry_lock_all(void);   /* registry.c: every shard, in index order */
void lt_registry_unlock_all(void);
void lt_stacks_lock_all(void);     /* stacks.c: the stack table's stripes */
void lt_stacks_unlock_all(void);
void lt_memo_lock_list(void);      /* stack_memo.c: the list of threads' memos */
void lt_memo_unlock_list(void);
void lt_walks_block(void);         /* walk_gate.c: waits for the walks in flight */
void lt_walks_unblock(void);
void lt_walks_unblock_in_child(void); /* and forgets the parent's threads' counts */
void lt_timeline_lock(void);       /* timeline.c; also shares "file started" with the child */
void lt_timeline_unlock(void);
void lt_timeline_after_fork_child(void); /* reopens a %p timeline for the child's pid */
/* A fatal signal's handler: wait (bounded) for the row being written and
 * keep the timeline locked until the process ends, so no row is torn. */
void lt_timeline_hold_for_crash(void);
void lt_history_lock(void);        /* peak.c and misuse.c; taken before the registry's */
void lt_history_unlock(void);
void lt_symbols_lock(void);        /* symbols.c; taken last */
void lt_symbols_unlock(void);

/* Around livetrack's own writes to stderr or a pipe (pipe_guard.c): a
 * reader gone makes them fail with EPIPE instead of raising SIGPIPE in
 * the program. Async-signal-safe. */
typedef struct lt_pipe_guard {
    sigset_t old_mask;
    int blocked, pending_before;
} lt_pipe_guard;
void lt_pipe_guard_begin(lt_pipe_guard *guard);
void lt_pipe_guard_end(lt_pipe_guard *guard);

/* Whether descriptor `fd` is still the file `opened` (its fstat when
 * livetrack opened it) describes: a program may close every descriptor it
 * did not open (daemons do) and get the numbers back for files of its
 * own, which livetrack must then neither read, write nor close. */
static inline int lt_fd_still_is(int fd, const struct stat *opened)
{
    struct stat now;
    return fd >= 0 && fstat(fd, &now) == 0 && now.st_dev == opened->st_dev && now.st_ino == opened->st_ino;
}

/* ---- the program's stdout and stderr as report files (std_streams.c) ---- */
/* stdout and stderr as they were when livetrack was loaded: the C
 * library's own FILE objects, which outlive an fclose (glibc and musl keep
 * the three standard ones in static storage), and the files of
 * descriptors 1 and 2 (`known` 0: that descriptor was closed). A program
 * may point stdout at a FILE of its own and free it with fclose, or close
 * its stdout before the exit report is written (gnulib's close_stdout, in
 * an atexit handler, closes descriptor 1): its output file is still not
 * to be emptied. */
typedef struct lt_std_stream_at_load {
    FILE *stream;
    dev_t dev;
    ino_t ino;
    int known;
    /* Where the descriptor led (readlink of /proc/self/fd/N), for a
     * regular file; "" for anything else or when /proc could not say. Once
     * the program has closed the descriptor, /dev/stdout and the like no
     * longer lead there: this path still does. */
    char path[4096];
} lt_std_stream_at_load;
extern lt_std_stream_at_load lt_std_streams_at_load[2]; /* stdout, stderr */

/* How a report or timeline file is to be opened. A path may name the
 * program's own stdout or stderr (/dev/stdout, /dev/fd/2,
 * /proc/self/fd/1, or the file they are redirected to): emptying it would
 * erase what the program wrote there, so such a file is written as
 * lt_open_std_stream says; the file they wrote to when livetrack was
 * loaded, and any other that is not a regular file (a terminal, a FIFO,
 * /dev/null: nothing to empty), is appended to. So is that file when the
 * path is /dev/stdout or another of those names and the program has
 * closed the descriptor since (gnulib's close_stdout at exit): the name
 * leads nowhere then, and the file is opened by the path recorded at
 * load (regular files only: a pipe or terminal has none that reopens it
 * reliably). Only a new or regular file of its own is emptied. */
typedef enum lt_output_kind {
    LT_OUTPUT_OWN_FILE,   /* absent, or a regular file: emptied */
    LT_OUTPUT_DEVICE,     /* exists and is not a regular file, or was stdout or stderr at load: appended to */
    LT_OUTPUT_STD_STREAM, /* the file the program's stdout or stderr writes to: lt_open_std_stream */
    /* /dev/stdout or the like of a descriptor closed since, which led to
     * a regular file at load: appended to, lt_open_std_stream_at_load */
    LT_OUTPUT_STD_STREAM_AT_LOAD,
} lt_output_kind;
/* `std_fd` is set to that descriptor, 1 or 2, for LT_OUTPUT_STD_STREAM
 * (1 when both are the file) and LT_OUTPUT_STD_STREAM_AT_LOAD (the one
 * the path names), else to -1. Only system calls. */
lt_output_kind lt_output_kind_of(const char *path, int *std_fd);
/* The descriptor (livetrack's own, close-on-exec, never 0, 1 or 2) to
 * write the program's stdout or stderr `std_fd`, named by `path`, through,
 * so that it lands where the program's output has got to; -1, errno set,
 * on failure. Write it with lt_write_fully. Only system calls. */
int lt_open_std_stream(const char *path, int std_fd);
/* The descriptor (livetrack's own, close-on-exec, never 0, 1 or 2,
 * O_APPEND) of the regular file the program's `std_fd`, 1 or 2, wrote to
 * when livetrack was loaded, opened by the path recorded then; -1, errno
 * set, when it cannot be opened or is no longer that file. Only system
 * calls. */
int lt_open_std_stream_at_load(int std_fd);
/* write() all of `data`: EINTR retried, and on a descriptor the program
 * made non-blocking (a full pipe or socket) it waits for room, up to 10 s
 * each time nothing could be written. Returns the bytes written; fewer
 * than `length` on failure, errno saying why (0: write() took nothing).
 * Only system calls. */
size_t lt_write_fully(int fd, const void *data, size_t length);
/* A report file (the exit and crash reports) at `path`, opened as
 * lt_output_kind_of said; NULL, errno set, on failure. */
FILE *lt_open_report_file(const char *path, lt_output_kind kind, int std_fd);

/* Around an open() of a descriptor that livetrack, libunwind or libdw
 * keeps (std_fds.c): those of 0, 1 and 2 the program has closed are held
 * on a placeholder of livetrack's own meanwhile, so that the kept one
 * does not become the program's stdin, stdout or stderr. Holds in several
 * threads share the placeholders; the last release closes them. */
typedef struct lt_std_fds_held {
    int counted; /* 0: this hold went without (see std_fds.c) */
} lt_std_fds_held;
void lt_std_fds_hold(lt_std_fds_held *held);
void lt_std_fds_release(lt_std_fds_held *held);
/* From the fatal-signal handler, on the thread that writes the crash
 * report: its holds wait for another thread's only a bounded time. */
void lt_std_fds_crash_report_begins(void);
/* lifecycle.c's fork handlers: the child forgets the parent's holds. */
void lt_std_fds_before_fork(void);
void lt_std_fds_after_fork_parent(void);
void lt_std_fds_after_fork_child(void);

/* libunwind's own two descriptors (unwinder_fds.c): note the open ones
 * around its first use, then ask before each walk whether the program
 * has taken them over (it closed them; the numbers may be its files). */
void lt_unwinder_fds_before_first_use(void);
void lt_unwinder_fds_after_first_use(void);
int lt_unwinder_fds_intact(void);


#endif
