/*
 * The CSV timeline (LIVETRACK_CSV): one row per lifecycle event with the
 * live counts after it and the process's memory from /proc/self/status.
 *
 * Each row is formatted in full and handed to one write() on a file opened
 * with O_APPEND (or on a duplicate of the program's stdout or stderr, when
 * the file is theirs: the kernel moves a shared offset past one write at a
 * time), and nothing is buffered in the process, so rows of several
 * threads (or of a forked child sharing the file) never interleave; a row
 * longer than the stack buffer is assembled in memory of its size (only
 * without memory does it go out in pieces). Names are quoted as RFC 4180
 * says when they need it, so a row is always one record. Rows
 * are numbered and written under one mutex, so their numbers are the order
 * in which they were written, and each thread's rows are in the order of
 * its events. The registry applies an event under its shard lock and the
 * row is written after that lock is dropped (taking this mutex inside a
 * shard lock would deadlock the crash handler, which keeps the mutex and
 * then takes the shard locks), so two threads racing on one handle may
 * get their rows in the opposite order; a hand-off the program
 * synchronizes (a release, then another thread's create) keeps its order.
 * The timeline is opt-in and this lock is never taken when it is off.
 *
 * A crash must not tear the last row either. When a process dies, the
 * kernel cuts short a write() in flight at a page boundary of the file
 * (a ~120-byte row straddles one now and then), so the fatal-signal
 * handler takes the mutex and keeps it until the process is gone: no
 * thread is then inside write(), and none starts one.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "core_internal.h"
#include "history.h"
#include "json_write.h"
#include "timeline.h"

#define METRIC_COUNT 5

int lt_timeline_on;

static const char header[] =
    "seq,time_ms,event,call,api,type,handle,bytes,type_live,live_objects,live_bytes,"
    "vm_size_kb,vm_rss_kb,vm_data_kb,vm_peak_kb,threads,"
    "d_vm_size_kb,d_vm_rss_kb,d_vm_data_kb,d_vm_peak_kb,d_threads\n";

/* The /proc/self/status fields, in column order. */
static const char *const metric_names[METRIC_COUNT] = {"VmSize:", "VmRSS:", "VmData:", "VmPeak:", "Threads:"};
static const char *const event_names[] = {"create", "retain", "release", "destroy", "misuse", "freed", "restore"};

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
/* The thread holding the mutex (0: none), so a crash handler running on
 * that very thread does not wait for itself. */
static _Atomic uintptr_t row_writer;
static int csv_fd = -1;      /* opened by the first row */
static int csv_open_failed; /* the open failed: no timeline, no retry */
static int csv_write_failed; /* a write failed: said once, the timeline ends there */
static int csv_is_pipe;      /* a FIFO or socket: a reader gone would raise SIGPIPE */
static char csv_path[4096];  /* the file's name, for that message */
/* When this process emptied the file, CLOCK_MONOTONIC + 1 (comparable
 * across processes); 0: it appends, to a relative's or to a file it never
 * empties (the program's stdout, a FIFO). */
static uint64_t csv_started_ns;
/* Set when this process forked before its first row and shares the file's
 * name with the other side: memory both sides see, so that only the first
 * of them to write a row empties the file (the later ones append).
 * NULL otherwise, and then opening empties the file. */
static _Atomic int *file_started;
enum { FILE_NOT_STARTED, FILE_STARTED, FILE_GETTING_HEADER }; /* its values */
/* Set in a forked child whose rows go on to its parent's file (no %p in
 * the name): its first row says so, once, with the parent's pid. Both
 * number their rows on from the count at the fork, and each row's totals
 * are its own process's, so nothing in the file tells the two apart. */
static long shares_file_with_parent;
static int status_fd = -1;
/* What each of the two descriptors was when opened (lt_fd_still_is). */
static struct stat csv_opened, status_opened;

static void open_status(void)
{
    lt_std_fds_held std_fds;
    lt_std_fds_hold(&std_fds); /* kept open: never as the program's closed stdin */
    status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    lt_std_fds_release(&std_fds);
    if (status_fd >= 0 && fstat(status_fd, &status_opened) != 0) {
        close(status_fd);
        status_fd = -1;
    }
}
static uint64_t rows;
/* The readings of this process's previous row, for the d_* columns; its
 * first row leaves them empty: there is nothing to take a change from (a
 * reading when the file opens would come after the first event's call). */
static long previous[METRIC_COUNT];
static int have_previous;
static _Atomic int64_t type_live[LIVETRACK_DOMAIN_COUNT][LIVETRACK_MAX_TYPES + 1];

void lt_timeline_type_add(unsigned domain, unsigned type, int64_t delta)
{
    if (domain < LIVETRACK_DOMAIN_COUNT && type <= LIVETRACK_MAX_TYPES)
        atomic_fetch_add_explicit(&type_live[domain][type], delta, memory_order_relaxed);
}

/* Called under the mutex. A failed write (a full disk) ends the timeline,
 * with one line saying so: a CSV cut short without a word reads as a
 * program that stopped making objects. The program goes on. */
static void write_all(int fd, const char *text, size_t length)
{
    lt_pipe_guard guard;
    if (csv_is_pipe)
        lt_pipe_guard_begin(&guard); /* a FIFO whose reader has gone: EPIPE, not SIGPIPE */
    /* lt_write_fully: the program's stdout may be non-blocking */
    if (!csv_write_failed && lt_write_fully(fd, text, length) < length) {
        csv_write_failed = 1;
        lt_note("writing the timeline to \"%s\" failed: %s; no more rows are written", csv_path,
                errno ? strerror(errno) : "nothing written");
    }
    if (csv_is_pipe)
        lt_pipe_guard_end(&guard);
}

static void read_metrics(long out[METRIC_COUNT])
{
    char text[4096];
    memset(out, 0, METRIC_COUNT * sizeof *out);
    if (status_fd >= 0 && !lt_fd_still_is(status_fd, &status_opened))
        open_status(); /* the program closed it; the number may be its own file now */
    ssize_t length = status_fd >= 0 ? pread(status_fd, text, sizeof text - 1, 0) : -1;
    if (length <= 0)
        return;
    text[length] = '\0';
    for (int i = 0; i < METRIC_COUNT; i++) {
        const char *at = strstr(text, metric_names[i]);
        if (at)
            out[i] = strtol(at + strlen(metric_names[i]), NULL, 10);
    }
}

/* The first row of processes that forked before it, on the program's
 * stdout or stderr: the first of them writes the header, the others wait
 * for it. Not under flock as a file of livetrack's own: they all write
 * through one open file (fork shared the program's descriptor), a lock
 * on which each of them would get at once, and the program's own lock on
 * its stdout, if it took one, would be converted and then dropped. The
 * wait is bounded: the header's write may be stuck on a full pipe, or its
 * writer stopped for good, and the rows go on without it then. */
static void start_shared_std_stream(void)
{
    int not_started = FILE_NOT_STARTED;
    if (atomic_compare_exchange_strong(file_started, &not_started, FILE_GETTING_HEADER)) {
        write_all(csv_fd, header, sizeof header - 1);
        atomic_store(file_started, FILE_STARTED);
        return;
    }
    struct timespec pause = {0, 1000 * 1000};
    for (int waited_ms = 0; waited_ms < 1000 && atomic_load(file_started) == FILE_GETTING_HEADER; waited_ms++)
        nanosleep(&pause, NULL);
}

/* Open the file named by the setting; 0 when there is none or it fails.
 * Called under the mutex by the first row, not at load: livetrack run
 * arms every process of the tree, and a shell wrapper or a tool that
 * records nothing must not truncate the timeline of the program it ran. */
static int open_csv(void)
{
    const char *pattern = lt_get_settings()->csv;
    if (!pattern || csv_open_failed)
        return 0;
    char path[4096];
    if (!lt_expand_path(pattern, path, sizeof path)) {
        csv_open_failed = 1;
        lt_note("LIVETRACK_CSV=\"%s\" is too long; no timeline", pattern);
        return 0;
    }
    /* The program's own stdout or stderr (/dev/stdout, or the file it is
     * redirected to) is never emptied, which would erase what the program
     * wrote there, and a regular file is written through a duplicate of
     * the program's descriptor (lt_open_std_stream): each row goes where
     * the program's output has got to, and its later output after the
     * row. From a descriptor of its own (even with O_APPEND) the rows had
     * an offset of their own, and the program's writes through a shell's
     * ">" landed on them. */
    int std_fd;
    lt_output_kind kind = lt_output_kind_of(path, &std_fd);
    int empties = kind == LT_OUTPUT_OWN_FILE;
    int fd;
    if (kind == LT_OUTPUT_STD_STREAM) {
        fd = lt_open_std_stream(path, std_fd); /* never 0-2 */
    } else if (kind == LT_OUTPUT_STD_STREAM_AT_LOAD) {
        fd = lt_open_std_stream_at_load(std_fd); /* /dev/stdout, stdout closed since: its file, never emptied */
    } else {
        lt_std_fds_held std_fds;
        lt_std_fds_hold(&std_fds); /* kept open: never as the program's closed stdout */
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (empties && !file_started ? O_TRUNC : 0), 0644);
        lt_std_fds_release(&std_fds); /* errno kept for the message below */
    }
    if (fd < 0) {
        csv_open_failed = 1; /* one message, not one per event */
        lt_note("cannot write the timeline to \"%s\": %s", path, strerror(errno));
        return 0;
    }
    csv_fd = fd;
    csv_write_failed = 0;
    if (fstat(fd, &csv_opened) != 0)
        memset(&csv_opened, 0, sizeof csv_opened);
    csv_is_pipe = S_ISFIFO(csv_opened.st_mode) || S_ISSOCK(csv_opened.st_mode);
    snprintf(csv_path, sizeof csv_path, "%s", path);
    rows = 0;
    have_previous = 0;
    csv_started_ns = file_started || !empties ? 0 : lt_monotonic_ns() + 1;
    if (!file_started) {
        write_all(csv_fd, header, sizeof header - 1);
    } else if (kind == LT_OUTPUT_STD_STREAM) {
        start_shared_std_stream();
    } else {
        /* The lock orders this against the other processes' first rows:
         * none appends before the file was emptied and given its header. */
        flock(fd, LOCK_EX);
        if (!atomic_exchange(file_started, FILE_STARTED)) {
            csv_started_ns = empties ? lt_monotonic_ns() + 1 : 0;
            if (!empties || ftruncate(fd, 0) == 0)
                write_all(csv_fd, header, sizeof header - 1);
        }
        flock(fd, LOCK_UN);
    }
    return 1;
}

__attribute__((constructor)) static void timeline_start(void)
{
    if (!lt_get_settings()->csv)
        return;
    open_status();
    lt_timeline_on = 1;
}

/* Front ends may name their wrappers "<call>_wrap": show the call. */
static size_t call_length(const char *call)
{
    size_t length = strlen(call);
    if (length > 5 && !strcmp(call + length - 5, "_wrap"))
        length -= 5;
    return length;
}

/* Bytes of `text` as one CSV field (RFC 4180): quoted, with quotes
 * doubled, when it holds a comma, a quote or a line break; else as is. */
static size_t csv_field_length(const char *text, size_t length)
{
    size_t quotes = 0, special = 0;
    for (size_t i = 0; i < length; i++) {
        quotes += text[i] == '"';
        special |= text[i] == '"' || text[i] == ',' || text[i] == '\n' || text[i] == '\r';
    }
    return special ? length + quotes + 2 : length;
}

/* Writes the field (csv_field_length bytes) and a comma at `out`; returns
 * the byte after them. */
static char *put_csv_field(char *out, const char *text, size_t length)
{
    size_t quoted_length = csv_field_length(text, length);
    if (quoted_length == length) {
        memcpy(out, text, length);
        out += length;
    } else {
        *out++ = '"';
        for (size_t i = 0; i < length; i++) {
            if (text[i] == '"')
                *out++ = '"';
            *out++ = text[i];
        }
        *out++ = '"';
    }
    *out++ = ',';
    return out;
}

/* The field and its comma, as put_csv_field lays them out, straight to
 * the file: for a long row when there is no memory to assemble it. */
static void write_csv_field(const char *text, size_t length)
{
    int quoted = csv_field_length(text, length) != length;
    if (quoted)
        write_all(csv_fd, "\"", 1);
    while (length) {
        const char *quote = quoted ? memchr(text, '"', length) : NULL;
        size_t run = quote ? (size_t)(quote - text) + 1 : length;
        write_all(csv_fd, text, run);
        if (quote)
            write_all(csv_fd, "\"", 1); /* doubled */
        text += run;
        length -= run;
    }
    if (quoted)
        write_all(csv_fd, "\",", 2);
    else
        write_all(csv_fd, ",", 1);
}

/* A row is usually ~120 bytes and fits here; longer names take a buffer of
 * their size, so that the row still goes out in one write(). */
#define ROW_BUFFER 512

uint64_t lt_timeline_event(lt_event_kind kind, const char *call, unsigned domain, unsigned type, uint64_t handle,
                           uint64_t bytes)
{
    /* Numbers only, so their length is bounded: 21 fields of at most 20
     * digits and a sign, "0x" and the commas fit in 512 bytes. */
    char head[64], tail[512], row[ROW_BUFFER];
    long metrics[METRIC_COUNT];
    uint64_t live_objects, live_bytes;
    int64_t of_type = 0;
    const char *type_name = kind == LT_EVENT_MISUSE && type == LIVETRACK_ANY_TYPE ? "" : livetrack_type_name(domain, type);
    const char *api = domain ? livetrack_domain_name(domain) : "";
    if (!call)
        call = "";
    size_t call_bytes = call_length(call), api_bytes = strlen(api), type_bytes = strlen(type_name);

    pthread_mutex_lock(&mutex);
    if (csv_fd < 0 && !open_csv()) {
        pthread_mutex_unlock(&mutex);
        return 0;
    }
    if (!csv_write_failed && !lt_fd_still_is(csv_fd, &csv_opened)) {
        /* Its number may be a file of the program's now: not a row more. */
        csv_write_failed = 1;
        lt_note("the program closed the timeline's descriptor (\"%s\"); no more rows are written", csv_path);
    }
    if (shares_file_with_parent && !csv_write_failed)
        lt_diag("pid %ld, forked from pid %ld, adds its timeline rows to \"%s\", as its parent does: their rows "
                "mix, seq numbers repeat and each row's live totals are its own process's; put %%p in LIVETRACK_CSV "
                "for a timeline per process",
                (long)getpid(), shares_file_with_parent, csv_path);
    shares_file_with_parent = 0;
    atomic_store_explicit(&row_writer, (uintptr_t)pthread_self(), memory_order_relaxed);
    /* The type's count is read here, under the lock and next to the
     * totals: read before the lock, it went stale while this thread waited
     * and other threads' objects died, and rows said type_live >
     * live_objects. The two still are not one atomic snapshot: another
     * thread's object is counted out of the shard's total a moment before
     * out of its type (registry.c: note_death after the shard lock), so for
     * that moment the type may be ahead of the total by the objects dying
     * right then; the total is exact, so the type is held to it. The
     * other way round, a create counts its object into the type after its
     * shard lock, so another thread releasing that handle at once can
     * count it out first: the type is held to 0 from below. */
    lt_registry_live_totals(&live_objects, &live_bytes);
    if (domain < LIVETRACK_DOMAIN_COUNT && type <= LIVETRACK_MAX_TYPES)
        of_type = atomic_load_explicit(&type_live[domain][type], memory_order_relaxed);
    if (of_type > 0 && (uint64_t)of_type > live_objects)
        of_type = (int64_t)live_objects;
    if (of_type < 0)
        of_type = 0;
    read_metrics(metrics);
    /* Not %.3f: that writes "1,036" under a program's decimal-comma locale, one column too many. */
    char ms[LT_JSON_NUMBER_MAX];
    size_t ms_length = lt_json_format_ms(ms, lt_ticks_to_ns(lt_ticks()));
    uint64_t row_number = ++rows;
    int head_length = snprintf(head, sizeof head, "%llu,%.*s,%s,", (unsigned long long)row_number, (int)ms_length,
                               ms, event_names[kind]);
    int tail_length = snprintf(tail, sizeof tail, "0x%llx,%llu,%lld,%llu,%llu,%ld,%ld,%ld,%ld,%ld,",
                               (unsigned long long)handle, (unsigned long long)bytes, (long long)of_type,
                               (unsigned long long)live_objects, (unsigned long long)live_bytes, metrics[0],
                               metrics[1], metrics[2], metrics[3], metrics[4]);
    if (tail_length > 0 && (size_t)tail_length < sizeof tail) {
        int changes = have_previous ? snprintf(tail + tail_length, sizeof tail - (size_t)tail_length,
                                               "%ld,%ld,%ld,%ld,%ld\n", metrics[0] - previous[0],
                                               metrics[1] - previous[1], metrics[2] - previous[2],
                                               metrics[3] - previous[3], metrics[4] - previous[4])
                                    : snprintf(tail + tail_length, sizeof tail - (size_t)tail_length, ",,,,\n");
        tail_length = changes > 0 ? tail_length + changes : -1;
    }
    memcpy(previous, metrics, sizeof previous);
    have_previous = 1;
    if (head_length > 0 && (size_t)head_length < sizeof head && tail_length > 0 && (size_t)tail_length < sizeof tail) {
        size_t length = (size_t)head_length + csv_field_length(call, call_bytes) + csv_field_length(api, api_bytes) +
                        csv_field_length(type_name, type_bytes) + 3 + (size_t)tail_length;
        char *buffer = length <= sizeof row ? row : lt_malloc(length);
        if (buffer) {
            char *at = buffer;
            memcpy(at, head, (size_t)head_length);
            at = put_csv_field(at + head_length, call, call_bytes);
            at = put_csv_field(at, api, api_bytes);
            at = put_csv_field(at, type_name, type_bytes);
            memcpy(at, tail, (size_t)tail_length);
            write_all(csv_fd, buffer, length);
            if (buffer != row)
                lt_free(buffer);
        } else {
            /* No memory for a long row: write it in pieces rather than lose
             * it. The mutex still keeps this process's threads out of it;
             * only a forked child appending to the same file could land a
             * row in between. */
            write_all(csv_fd, head, (size_t)head_length);
            write_csv_field(call, call_bytes);
            write_csv_field(api, api_bytes);
            write_csv_field(type_name, type_bytes);
            write_all(csv_fd, tail, (size_t)tail_length);
        }
    }
    atomic_store_explicit(&row_writer, 0, memory_order_relaxed);
    pthread_mutex_unlock(&mutex);
    return row_number;
}

void lt_timeline_hold_for_crash(void)
{
    if (!lt_timeline_on)
        return;
    /* Interrupted between lock and unlock: this thread's write() is
     * either done or not begun, and the others already wait. */
    if (atomic_load_explicit(&row_writer, memory_order_relaxed) == (uintptr_t)pthread_self())
        return;
    /* A row takes microseconds; the bound is for a writer stopped for
     * good (a debugger, a thread stuck in a full disk's write). */
    struct timespec pause = {0, 1000 * 1000};
    for (int waited_ms = 0; waited_ms < 500; waited_ms++) {
        if (pthread_mutex_trylock(&mutex) == 0)
            return; /* never unlocked: the process is about to end */
        nanosleep(&pause, NULL);
    }
}

void lt_timeline_lock(void)
{
    pthread_mutex_lock(&mutex);
    /* Before fork(), with no file yet and one name for both sides: whoever
     * writes a row first must not lose it to the other's later open. */
    const char *pattern = lt_get_settings()->csv;
    if (lt_timeline_on && csv_fd < 0 && !csv_open_failed && !file_started && !lt_path_has_pid(pattern)) {
        void *shared = mmap(NULL, sizeof *file_started, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (shared != MAP_FAILED)
            file_started = shared; /* zero-filled: not started */
    }
}
void lt_timeline_unlock(void) { pthread_mutex_unlock(&mutex); }

const char *lt_timeline_file(uint64_t *started_ns)
{
    *started_ns = csv_fd >= 0 ? csv_started_ns : 0;
    return csv_fd >= 0 ? csv_path : NULL;
}

void lt_timeline_after_fork_child(void)
{
    csv_started_ns = 0; /* an open file is the parent's; a new one sets it */
    /* The child's rows go to its own file when the name has the pid in
     * it, opened by its first row; otherwise both processes append whole
     * rows to the same file. */
    const char *pattern = lt_get_settings()->csv;
    if (lt_path_has_pid(pattern)) {
        if (lt_fd_still_is(csv_fd, &csv_opened))
            close(csv_fd);
        csv_fd = -1;
        csv_open_failed = 0; /* another name: it may work */
        file_started = NULL; /* a file of its own, emptied by its first row */
    } else if (lt_timeline_on && !csv_open_failed) {
        shares_file_with_parent = (long)getppid();
    }
    if (status_fd >= 0) {
        /* /proc/self is resolved at open: the child must reopen it (and
         * close the parent's, unless that number is a file of the
         * program's by now). */
        if (lt_fd_still_is(status_fd, &status_opened))
            close(status_fd);
        open_status();
    }
}
