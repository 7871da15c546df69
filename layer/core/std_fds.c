/*
 * Descriptors 0, 1 and 2 stay closed when the program closed them.
 *
 * A program may start with stdin, stdout or stderr closed (`prog <&-
 * >&-`, a daemon, some service managers) and count on it: a read of a
 * closed stdin fails with EBADF, and so does a write to a closed stdout.
 * open() and pipe() take the lowest free numbers, so a descriptor that
 * livetrack, libunwind or libdw opens and keeps would become the
 * program's stdin or stdout: its reads would read a livetrack file (or
 * fail with EAGAIN on libunwind's non-blocking pipe) and its output would
 * vanish into a timeline or a pipe. Around each such open the free ones
 * among 0-2 are held on /dev/null, so what is opened lands at 3 or above,
 * and are closed again afterwards. Only system calls: usable in the crash
 * handler. Another thread of the program opening a descriptor meanwhile
 * gets a higher number than it would have; one that counts on getting 0,
 * 1 or 2 from open() while other threads may open files is racy already.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"

void lt_std_fds_hold(lt_std_fds_held *held)
{
    int saved_errno = errno;
    memset(held, 0, sizeof *held);
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        int placeholder = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (placeholder == fd && fstat(fd, &held->null_device) == 0) {
            held->placeholder[fd] = 1;
            continue;
        }
        /* No /dev/null (a bare chroot): nothing to hold it with. Another
         * number: another thread took this one meanwhile. */
        if (placeholder >= 0)
            close(placeholder);
    }
    errno = saved_errno;
}

void lt_std_fds_release(lt_std_fds_held *held)
{
    int saved_errno = errno;
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
        /* Unless another thread of the program has put a file of its own
         * there meanwhile (dup2), which stays. */
        if (held->placeholder[fd] && lt_fd_still_is(fd, &held->null_device))
            close(fd);
        held->placeholder[fd] = 0;
    }
    errno = saved_errno;
}
