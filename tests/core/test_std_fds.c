/*
 * std_fds.c alone (compiled into this test: its functions are hidden
 * inside liblivetrack.so): the placeholders held on a program's closed 0,
 * 1 and 2 while livetrack opens a descriptor it keeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core_internal.h"

/* stderr's own descriptor, moved up: the cases close 0, 1 and 2. */
static int report_fd = -1;
static int failures;

#define CHECK(condition, ...)                                                                                         \
    do {                                                                                                              \
        if (!(condition)) {                                                                                           \
            dprintf(report_fd, "FAIL %s:%d: ", __FILE__, __LINE__);                                                   \
            dprintf(report_fd, __VA_ARGS__);                                                                          \
            dprintf(report_fd, "\n");                                                                                 \
            failures++;                                                                                               \
        }                                                                                                             \
    } while (0)

static int is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

/* The usual daemon idiom, run while a hold is in place: the program's own
 * /dev/null on 0 is not livetrack's placeholder, even though the
 * placeholder was the only thing there a moment before. */
static void program_dup2s_dev_null_during_hold(void)
{
    close(STDIN_FILENO);
    lt_std_fds_held held;
    lt_std_fds_hold(&held);
    CHECK(is_open(STDIN_FILENO), "no placeholder on the closed stdin");
    int null_fd = open("/dev/null", O_RDWR);
    CHECK(null_fd >= 3, "/dev/null opened at %d, not above the placeholders", null_fd);
    CHECK(dup2(null_fd, STDIN_FILENO) == STDIN_FILENO, "dup2: %d", errno);
    close(null_fd);
    lt_std_fds_release(&held);
    CHECK(is_open(STDIN_FILENO), "fd 0 closed after the program dup2'd /dev/null onto it");
    close(STDIN_FILENO);
}

/* Finding 2's order: two threads' holds overlap and the first to have
 * held releases first, before the second opens its kept file. */
static void overlapping_holds(void)
{
    close(STDIN_FILENO);
    lt_std_fds_held first, second;
    lt_std_fds_hold(&first);
    lt_std_fds_hold(&second);
    lt_std_fds_release(&first);
    int kept = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    CHECK(kept >= 3, "a file opened under the second of two holds is fd %d", kept);
    lt_std_fds_release(&second);
    CHECK(!is_open(STDIN_FILENO), "stdin open after the last release");
    if (kept >= 0)
        close(kept);
}

/* The program closes the placeholder during a hold and opens a file of
 * its own, which gets the number: it stays. */
static void program_reuses_number_during_hold(void)
{
    close(STDIN_FILENO);
    lt_std_fds_held held;
    lt_std_fds_hold(&held);
    close(STDIN_FILENO);
    int own = open("/proc/self/status", O_RDONLY);
    CHECK(own == STDIN_FILENO, "the program's open got %d, not the free 0", own);
    lt_std_fds_release(&held);
    CHECK(is_open(STDIN_FILENO), "the program's own file on 0 closed by the release");
    close(STDIN_FILENO);
}

/* All three closed: each is held, what is opened meanwhile lands at 3 or
 * above, all three are closed again, and errno is the caller's. */
static void all_three_closed(void)
{
    int saved_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    close(STDIN_FILENO);
    close(STDOUT_FILENO);
    close(STDERR_FILENO);
    errno = EDOM;
    lt_std_fds_held held;
    lt_std_fds_hold(&held);
    CHECK(errno == EDOM, "hold changed errno to %d", errno);
    int kept = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    CHECK(kept >= 3, "a file opened under the hold is fd %d", kept);
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
        CHECK(is_open(fd), "fd %d not held", fd);
    errno = EDOM;
    lt_std_fds_release(&held);
    CHECK(errno == EDOM, "release changed errno to %d", errno);
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
        CHECK(!is_open(fd), "fd %d left open by the release", fd);
    if (kept >= 0)
        close(kept);
    dup2(saved_stdout, STDOUT_FILENO);
    dup2(report_fd, STDERR_FILENO);
    close(saved_stdout);
}

int main(void)
{
    report_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (report_fd < 0)
        return 2;
    int saved_stdin = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3); /* -1 when started without one */
    program_dup2s_dev_null_during_hold();
    overlapping_holds();
    program_reuses_number_during_hold();
    all_three_closed();
    if (saved_stdin >= 0)
        dup2(saved_stdin, STDIN_FILENO);
    dprintf(report_fd, failures ? "%d failures\n" : "all std_fds checks passed\n", failures);
    return failures ? 1 : 0;
}
