/*
 * The program's stdout and stderr as places for livetrack's reports and
 * timeline (LIVETRACK_OUTPUT=/dev/stderr, LIVETRACK_CSV=/dev/stdout, or
 * the file a shell redirected them to): never emptied, written where the
 * program's own output has got to, and never failing on a descriptor the
 * program made non-blocking. Only system calls here, but for fopencookie:
 * the crash report uses them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_internal.h"

lt_std_stream_at_load lt_std_streams_at_load[2];

/* Before the program runs: it may close its stdout at exit (gnulib's
 * close_stdout, in an atexit handler, closes descriptor 1), or point the
 * variable at a FILE of its own. */
__attribute__((constructor)) static void note_std_streams(void)
{
    lt_std_streams_at_load[0].stream = stdout;
    lt_std_streams_at_load[1].stream = stderr;
    for (int i = 0; i < 2; i++) {
        struct stat file;
        if (fstat(STDOUT_FILENO + i, &file) == 0) {
            lt_std_streams_at_load[i].dev = file.st_dev;
            lt_std_streams_at_load[i].ino = file.st_ino;
            lt_std_streams_at_load[i].known = 1;
        }
    }
}

lt_output_kind lt_output_kind_of(const char *path, int *std_fd)
{
    struct stat target, stream;
    *std_fd = -1;
    if (stat(path, &target) != 0)
        return LT_OUTPUT_OWN_FILE;
    for (int fd = 1; fd <= 2; fd++) { /* stdout, stderr */
        if (fstat(fd, &stream) == 0 && stream.st_dev == target.st_dev && stream.st_ino == target.st_ino) {
            *std_fd = fd;
            return LT_OUTPUT_STD_STREAM;
        }
    }
    /* The program's output file, whose descriptor it has closed since (or
     * moved): nothing to duplicate, but never to empty. */
    for (int i = 0; i < 2; i++) {
        const lt_std_stream_at_load *was = &lt_std_streams_at_load[i];
        if (was->known && was->dev == target.st_dev && was->ino == target.st_ino)
            return LT_OUTPUT_DEVICE;
    }
    return S_ISREG(target.st_mode) ? LT_OUTPUT_OWN_FILE : LT_OUTPUT_DEVICE;
}

/* A duplicate of `fd` that is livetrack's own: close-on-exec, never 0, 1
 * or 2. A duplicate of the program's stdout shares its file offset: what
 * livetrack writes goes where the program's next write would, and the
 * program's later writes go after it. A descriptor opened anew, even with
 * O_APPEND, has an offset of its own: the program's writes through a
 * shell's ">" (no O_APPEND) would land on livetrack's. */
static int own_duplicate(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 3); }

/* A regular file, the only one with an offset to share, is written
 * through a duplicate. Any other (a pipe, a terminal) is opened anew at
 * `path`: a duplicate shares the open file's status flags too, and a
 * program that made its stdout non-blocking (an event loop) would have
 * livetrack's writes fail with EAGAIN once a pipe is full. Opened
 * non-blocking, so that a FIFO whose reader has gone fails (ENXIO)
 * instead of waiting for one, then made blocking. What cannot be opened
 * anew (a socket, such a FIFO) is duplicated after all, which
 * lt_write_fully copes with. */
int lt_open_std_stream(const char *path, int std_fd)
{
    struct stat stream;
    if (fstat(std_fd, &stream) == 0 && S_ISREG(stream.st_mode))
        return own_duplicate(std_fd);
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0 && fd <= 2) { /* a number the program closed: never livetrack's */
        int moved = own_duplicate(fd);
        close(fd);
        fd = moved;
    }
    int flags = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    if (flags != -1 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0)
        return fd;
    if (fd >= 0)
        close(fd);
    return own_duplicate(std_fd);
}

/* How long lt_write_fully waits for a full pipe or socket to take more */
#define WRITE_WAIT_MS 10000

size_t lt_write_fully(int fd, const void *data, size_t length)
{
    const char *next = data;
    size_t written = 0;
    while (written < length) {
        ssize_t done = write(fd, next + written, length - written);
        if (done > 0) {
            written += (size_t)done;
            continue;
        }
        if (done == 0) {
            errno = 0; /* nothing written, no error to say */
            break;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            break;
        /* A duplicate of a descriptor the program made non-blocking */
        struct pollfd room = {.fd = fd, .events = POLLOUT};
        int ready = poll(&room, 1, WRITE_WAIT_MS);
        if (ready == 0)
            errno = EAGAIN;
        if (ready <= 0 && errno != EINTR)
            break;
    }
    return written;
}

/* The writes of a report on the program's stdout or stderr: all of
 * `data` or an error (glibc takes a short count for one). */
static ssize_t write_std_stream(void *cookie, const char *data, size_t length)
{
    size_t written = lt_write_fully((int)(intptr_t)cookie, data, length);
    return written ? (ssize_t)written : -1;
}

static int close_std_stream(void *cookie) { return close((int)(intptr_t)cookie); }

FILE *lt_open_report_file(const char *path, lt_output_kind kind, int std_fd)
{
    if (kind != LT_OUTPUT_STD_STREAM)
        return fopen(path, kind == LT_OUTPUT_OWN_FILE ? "w" : "a");
    /* Not fdopen(): its writes would fail on a duplicate the program made
     * non-blocking. And "a" would have set O_APPEND on the open file the
     * program's stdout shares with a duplicate. */
    int fd = lt_open_std_stream(path, std_fd);
    cookie_io_functions_t io = {.write = write_std_stream, .close = close_std_stream};
    FILE *file = fd >= 0 ? fopencookie((void *)(intptr_t)fd, "w", io) : NULL;
    if (fd >= 0 && !file) {
        int error = errno;
        close(fd);
        errno = error;
    }
    return file;
}
