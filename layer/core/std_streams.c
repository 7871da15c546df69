/*
 * The program's stdout and stderr as places for livetrack's reports and
 * timeline (LIVETRACK_OUTPUT=/dev/stderr, LIVETRACK_CSV=/dev/stdout, or
 * the file a shell redirected them to): never emptied, written where the
 * program's own output has got to, still found once the program has
 * closed the descriptor /dev/stdout leads through, and never failing on a
 * descriptor the program made non-blocking. Only system calls here, but for fopencookie:
 * the crash report uses them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_internal.h"

lt_std_stream_at_load lt_std_streams_at_load[2];

/* Before the program runs: it may close its stdout at exit (gnulib's
 * close_stdout, in an atexit handler, closes descriptor 1), or point the
 * variable at a FILE of its own. Where a regular file's descriptor led is
 * read into static storage: nothing is allocated this early. */
__attribute__((constructor)) static void note_std_streams(void)
{
    static const char *const links[2] = {"/proc/self/fd/1", "/proc/self/fd/2"};
    lt_std_streams_at_load[0].stream = stdout;
    lt_std_streams_at_load[1].stream = stderr;
    for (int i = 0; i < 2; i++) {
        lt_std_stream_at_load *was = &lt_std_streams_at_load[i];
        struct stat file;
        if (fstat(STDOUT_FILENO + i, &file) != 0)
            continue;
        was->dev = file.st_dev;
        was->ino = file.st_ino;
        was->known = 1;
        if (!S_ISREG(file.st_mode))
            continue;
        ssize_t length = readlink(links[i], was->path, sizeof was->path - 1);
        /* A truncated or non-absolute one ("/x (deleted)" is checked by
         * its inode when it is used) would lead elsewhere */
        int whole = length > 0 && (size_t)length < sizeof was->path - 1 && was->path[0] == '/';
        was->path[whole ? length : 0] = '\0';
    }
}

/* Which of the program's descriptors, 1 or 2, `path` names by a name that
 * leads through the descriptor (/dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N with this
 * process's PID); 0 for any other path. */
static int std_stream_alias(const char *path)
{
    if (!strcmp(path, "/dev/stdout"))
        return 1;
    if (!strcmp(path, "/dev/stderr"))
        return 2;
    static const char *const fd_directories[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
    const char *number = NULL;
    for (size_t i = 0; i < sizeof fd_directories / sizeof fd_directories[0] && !number; i++) {
        size_t length = strlen(fd_directories[i]);
        if (!strncmp(path, fd_directories[i], length))
            number = path + length;
    }
    if (!number && !strncmp(path, "/proc/", 6)) {
        long pid = 0;
        const char *digit = path + 6;
        for (; *digit >= '0' && *digit <= '9' && pid < 1L << 40; digit++)
            pid = pid * 10 + (*digit - '0');
        if (digit > path + 6 && pid == (long)getpid() && !strncmp(digit, "/fd/", 4))
            number = digit + 4;
    }
    return number && (number[0] == '1' || number[0] == '2') && !number[1] ? number[0] - '0' : 0;
}

lt_output_kind lt_output_kind_of(const char *path, int *std_fd)
{
    struct stat target, stream;
    *std_fd = -1;
    int closed_alias = 0;
    if (stat(path, &target) != 0) {
        /* /dev/stdout or the like of a descriptor the program has closed
         * since: the regular file it led to at load, if still there */
        closed_alias = std_stream_alias(path);
        const lt_std_stream_at_load *was = closed_alias ? &lt_std_streams_at_load[closed_alias - 1] : NULL;
        if (!was || !was->known || !was->path[0] || stat(was->path, &target) != 0 || target.st_dev != was->dev ||
            target.st_ino != was->ino)
            return LT_OUTPUT_OWN_FILE;
    }
    /* With `>out 2>&1`, /dev/stdout closed still leads to stderr's file:
     * written through stderr's descriptor, at its offset, so that what the
     * program writes to stderr later does not land on the report. */
    for (int fd = 1; fd <= 2; fd++) { /* stdout, stderr */
        if (fstat(fd, &stream) == 0 && stream.st_dev == target.st_dev && stream.st_ino == target.st_ino) {
            *std_fd = fd;
            return LT_OUTPUT_STD_STREAM;
        }
    }
    if (closed_alias) {
        *std_fd = closed_alias;
        return LT_OUTPUT_STD_STREAM_AT_LOAD;
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

int lt_open_std_stream_at_load(int std_fd)
{
    const lt_std_stream_at_load *was = &lt_std_streams_at_load[std_fd - 1];
    /* Descriptor 1 is the closed one: never to be livetrack's file */
    lt_std_fds_held std_fds;
    lt_std_fds_hold(&std_fds);
    int fd = open(was->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
    lt_std_fds_release(&std_fds); /* errno kept */
    if (fd >= 0 && fd <= 2) { /* nothing held (no memfd_create) */
        int moved = own_duplicate(fd);
        close(fd);
        fd = moved;
    }
    struct stat opened;
    if (fd >= 0 && (fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_dev != was->dev ||
                    opened.st_ino != was->ino)) {
        close(fd); /* replaced since it was looked at: not the program's file */
        errno = ENOENT;
        return -1;
    }
    return fd;
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
    if (kind == LT_OUTPUT_STD_STREAM_AT_LOAD) {
        int fd = lt_open_std_stream_at_load(std_fd);
        FILE *file = fd >= 0 ? fdopen(fd, "a") : NULL;
        if (fd >= 0 && !file) {
            int error = errno;
            close(fd);
            errno = error;
        }
        return file;
    }
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
