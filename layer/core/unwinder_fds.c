/*
 * The two descriptors libunwind keeps for itself, and whether they still
 * are its own.
 *
 * libunwind (1.6) checks an address it is unsure of by write()ing a byte
 * of it into a pipe it opens at its first use; before each check it reads
 * that pipe, and when the read finds no data and no pipe it close()s both
 * numbers and opens a new pipe (libunwind/libunwind#291). A program that
 * closes every descriptor it did not open (a daemon) and opens files of
 * its own gets those numbers back: the next stack walk would then read a
 * byte of the program's file, or close the program's two files and put a
 * pipe in their place. So the pipe's two descriptors are found when
 * libunwind opens them (new FIFOs across its first call) and compared
 * with what they were before every walk; once they differ, walks stop.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "core_internal.h"

/* libunwind opens its pipe at the lowest free numbers from 3 up (0-2 are
 * held if the program closed them: std_fds.c), at load. */
#define FDS_LOOKED_AT 256

static unsigned char open_before[FDS_LOOKED_AT];
static int pipe_fds[2] = {-1, -1};
static struct stat pipe_opened[2];
static int found;

void lt_unwinder_fds_before_first_use(void)
{
    for (int fd = 0; fd < FDS_LOOKED_AT; fd++)
        open_before[fd] = fcntl(fd, F_GETFD) != -1;
}

/* libunwind's pipe2(O_CLOEXEC | O_NONBLOCK): read end, write end. */
static int is_unwinder_end(int fd, int access_mode)
{
    int status_flags = fcntl(fd, F_GETFL), fd_flags = fcntl(fd, F_GETFD);
    return status_flags != -1 && fd_flags != -1 && (status_flags & O_ACCMODE) == access_mode &&
           (status_flags & O_NONBLOCK) && (fd_flags & FD_CLOEXEC);
}

void lt_unwinder_fds_after_first_use(void)
{
    /* Exactly one new pipe, both ends as libunwind opens them; anything
     * else (another thread of the program opened a FIFO meanwhile, or
     * libunwind had opened its pipe before) leaves the check off rather
     * than take the program's pipe for libunwind's. */
    int count = 0;
    for (int fd = 0; fd < FDS_LOOKED_AT; fd++) {
        struct stat status;
        if (open_before[fd] || fstat(fd, &status) != 0 || !S_ISFIFO(status.st_mode))
            continue;
        if (++count > 2)
            break;
        pipe_fds[count - 1] = fd;
        pipe_opened[count - 1] = status;
    }
    found = count == 2 && pipe_opened[0].st_ino == pipe_opened[1].st_ino &&
            pipe_opened[0].st_dev == pipe_opened[1].st_dev &&
            ((is_unwinder_end(pipe_fds[0], O_RDONLY) && is_unwinder_end(pipe_fds[1], O_WRONLY)) ||
             (is_unwinder_end(pipe_fds[0], O_WRONLY) && is_unwinder_end(pipe_fds[1], O_RDONLY)));
}

int lt_unwinder_fds_intact(void)
{
    if (!found)
        return 1; /* not found at load (another libunwind, or more descriptors): not checked */
    return lt_fd_still_is(pipe_fds[0], &pipe_opened[0]) && lt_fd_still_is(pipe_fds[1], &pipe_opened[1]);
}
