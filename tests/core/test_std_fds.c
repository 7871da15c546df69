/*
 * std_fds.c alone (included into this test: its functions are hidden
 * inside liblivetrack.so, and the cases hold its lock themselves): the
 * placeholders held on a program's closed 0, 1 and 2 while livetrack
 * opens a descriptor it keeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "std_fds.c"

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

/* A thread keeps std_fds' lock for `hold_ms`, as a holder that is
 * descheduled (a CPU quota, a busy machine) mid-hold would. */
struct slow_holder {
    pthread_t thread;
    long hold_ms;
    atomic_int locked;
};

static void *hold_lock_slowly(void *argument)
{
    struct slow_holder *holder = argument;
    while (!take_lock())
        sched_yield();
    atomic_store(&holder->locked, 1);
    struct timespec pause = {holder->hold_ms / 1000, (holder->hold_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    drop_lock();
    return NULL;
}

static void start_slow_holder(struct slow_holder *holder, long hold_ms)
{
    holder->hold_ms = hold_ms;
    atomic_store(&holder->locked, 0);
    if (pthread_create(&holder->thread, NULL, hold_lock_slowly, holder) != 0) {
        CHECK(0, "pthread_create failed");
        exit(2);
    }
    while (!atomic_load(&holder->locked))
        sched_yield();
}

static long long elapsed_ms(long long since_ns) { return (monotonic_ns() - since_ns) / 1000000; }

/* Finding 3: a hold outside the crash report waits for a slow holder (150
 * ms, longer than the crash path's bound) and protects; only the crash
 * report's thread goes without after the bound. */
static void slow_holder_outside_crash(void)
{
    close(STDIN_FILENO);
    struct slow_holder holder;
    start_slow_holder(&holder, 150);
    lt_std_fds_held held;
    lt_std_fds_hold(&held);
    CHECK(held.counted, "a hold behind a holder slow for 150 ms went without");
    int kept = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    CHECK(kept >= 3, "a file opened under a hold behind a slow holder is fd %d", kept);
    lt_std_fds_release(&held);
    CHECK(!is_open(STDIN_FILENO), "stdin open after the last release");
    if (kept >= 0)
        close(kept);
    pthread_join(holder.thread, NULL);

    /* The crash report's thread does not wait for a holder stopped long. */
    start_slow_holder(&holder, 400);
    lt_std_fds_crash_report_begins();
    long long start = monotonic_ns();
    lt_std_fds_hold(&held);
    long long waited = elapsed_ms(start);
    CHECK(!held.counted && waited < 400, "the crash report's hold waited %lld ms, counted %d", waited, held.counted);
    lt_std_fds_release(&held);
    atomic_store(&crash_report_thread, 0);
    pthread_join(holder.thread, NULL);
}

/* Another thread's hold kept open until the main thread says so. */
struct open_hold {
    pthread_t thread;
    atomic_int held, may_release;
};

static void *hold_until_told(void *argument)
{
    struct open_hold *open_hold = argument;
    lt_std_fds_held held;
    lt_std_fds_hold(&held);
    atomic_store(&open_hold->held, 1);
    while (!atomic_load(&open_hold->may_release))
        sched_yield();
    lt_std_fds_release(&held);
    return NULL;
}

/* In a child forked just now: a hold, an open under it and the release
 * leave the closed stdin closed, promptly. The exit status counts the
 * failures; an alarm ends a hold that waits for a lock nobody releases. */
static void child_holds_and_releases(void)
{
    alarm(5);
    int child_failures = failures;
    long long start = monotonic_ns();
    lt_std_fds_held held;
    lt_std_fds_hold(&held);
    int counted = held.counted; /* the release clears it */
    int kept = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    lt_std_fds_release(&held);
    long long took = elapsed_ms(start);
    CHECK(counted && took < 100, "the child's hold took %lld ms, counted %d", took, counted);
    CHECK(kept >= 3, "a file the child opened under a hold is fd %d", kept);
    CHECK(!is_open(STDIN_FILENO), "the child's closed stdin is open after its hold and release");
    _exit(failures - child_failures);
}

static void expect_child_passed(pid_t child, const char *when)
{
    int status = 0;
    CHECK(child > 0, "fork failed: %d", errno);
    if (child <= 0)
        return;
    CHECK(waitpid(child, &status, 0) == child, "waitpid: %d", errno);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child forked %s: %s %d", when,
          WIFEXITED(status) ? "failures" : "killed by signal", WIFEXITED(status) ? WEXITSTATUS(status)
                                                                                  : WTERMSIG(status));
}

/* Finding 4: fork() while another thread is in a hold, and while another
 * thread holds the lock itself (the fork handlers as lifecycle.c
 * registers them). */
static void fork_during_holds(void)
{
    close(STDIN_FILENO);
    struct open_hold open_hold = {0};
    if (pthread_create(&open_hold.thread, NULL, hold_until_told, &open_hold) != 0) {
        CHECK(0, "pthread_create failed");
        return;
    }
    while (!atomic_load(&open_hold.held))
        sched_yield();
    pid_t child = fork();
    if (child == 0)
        child_holds_and_releases();
    expect_child_passed(child, "during another thread's hold");
    atomic_store(&open_hold.may_release, 1);
    pthread_join(open_hold.thread, NULL);
    CHECK(!is_open(STDIN_FILENO), "the parent's stdin open after its holds");

    struct slow_holder holder;
    start_slow_holder(&holder, 150);
    child = fork();
    if (child == 0)
        child_holds_and_releases();
    expect_child_passed(child, "while another thread held the lock");
    pthread_join(holder.thread, NULL);
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
    slow_holder_outside_crash();
    pthread_atfork(lt_std_fds_before_fork, lt_std_fds_after_fork_parent, lt_std_fds_after_fork_child);
    fork_during_holds();
    if (saved_stdin >= 0)
        dup2(saved_stdin, STDIN_FILENO);
    dprintf(report_fd, failures ? "%d failures\n" : "all std_fds checks passed\n", failures);
    return failures ? 1 : 0;
}
