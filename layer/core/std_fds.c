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
 * among 0-2 are held on a placeholder, so what is opened lands at 3 or
 * above, and are closed again afterwards.
 *
 * The placeholder is an anonymous memfd: no path is needed (a bare chroot
 * or a namespace may have no /dev/null), and its inode is livetrack's
 * alone. So at release a number is closed only when it still is that
 * inode: a program that has put a file of its own there meanwhile keeps
 * it, even when that file is /dev/null, as daemon(3) puts there. Without
 * memfd_create (Linux before 3.17) nothing is held.
 *
 * Holds are process-wide: the symbolizer and the timeline hold under
 * different locks, and a hold that closed the placeholders while another
 * still relied on them would let that one's file land on 0, 1 or 2. So
 * every hold fills the free numbers, and only the last release closes the
 * placeholders. The count and the placeholders are under a small lock,
 * held for a few system calls.
 *
 * Only system calls, and errno is kept: the crash report symbolizes, from
 * the fatal-signal handler. A signal handler never waits for the lock
 * when the thread it interrupted holds it (it would never be released).
 * Other threads wait for it as long as it takes: it is held for a few
 * system calls, and a holder that is merely descheduled (a CPU quota, a
 * busy machine) must not make a hold protect nothing. Only the crash
 * report's thread (lifecycle.c says which) waits no longer than
 * LOCK_WAIT_NS: the holder may be stopped in a fatal-signal handler of its
 * own, and a hold that protects nothing is better than no report.
 *
 * fork: the child has only the forking thread, so holds other threads had
 * in progress are never released there. Before fork() the lock is taken
 * (after livetrack's other locks, and nothing is waited for under it), so
 * no placement is half done; the child then forgets the holds and closes
 * the placeholders still in place.
 *
 * Another thread of the program opening a descriptor meanwhile gets a
 * higher number than it would have; one that counts on getting 0, 1 or 2
 * from open() while other threads may open files is racy already.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core_internal.h"
#include "spinlock.h"

#define STD_FD_COUNT 3

/* How long the crash report's hold waits for another thread's hold or
 * release (a few system calls) before going without: that thread may be
 * stopped (a debugger) or itself in a fatal-signal handler. */
#define LOCK_WAIT_NS (100 * 1000 * 1000L)

static lt_spinlock lock;
/* The thread holding `lock` (0: none), so that a signal handler running
 * on that same thread does not wait for itself. */
static atomic_long lock_owner;
/* The thread writing the crash report (0: none): only its waits are
 * bounded. Set once, from the fatal-signal handler. */
static atomic_long crash_report_thread;
/* before_fork() took `lock`, for after_fork_parent() to drop. */
static int locked_for_fork;

/* Under `lock`: the holds in progress, and the numbers among 0-2 that
 * hold a placeholder, with the file each was when placed. */
static unsigned holders;
static unsigned char placed[STD_FD_COUNT];
static struct stat placed_file[STD_FD_COUNT];

static long this_thread(void) { return (long)syscall(SYS_gettid); }

static long long monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* 1 when `lock` is now held by this thread; 0 to go without (a signal
 * handler on the holding thread, or the crash report after LOCK_WAIT_NS). */
static int take_lock(void)
{
    long self = this_thread();
    int bounded = atomic_load_explicit(&crash_report_thread, memory_order_relaxed) == self;
    long long deadline = 0;
    for (unsigned tries = 0;; tries++) {
        if (lt_spin_trylock(&lock)) {
            atomic_store_explicit(&lock_owner, self, memory_order_relaxed);
            return 1;
        }
        if (atomic_load_explicit(&lock_owner, memory_order_relaxed) == self)
            return 0; /* a signal handler interrupted this thread's own hold or release */
        if (tries < 64) {
            LT_CPU_RELAX();
            continue;
        }
        if (bounded) {
            long long now = monotonic_ns();
            if (!deadline)
                deadline = now + LOCK_WAIT_NS;
            else if (now >= deadline)
                return 0;
        }
        sched_yield();
    }
}

static void drop_lock(void)
{
    atomic_store_explicit(&lock_owner, 0, memory_order_relaxed);
    lt_spin_unlock(&lock);
}

/* A number among 0-2 that still holds a placeholder, to duplicate; -1:
 * none (the program has replaced or closed them all). */
static int placeholder_in_place(void)
{
    for (int fd = STDIN_FILENO; fd < STD_FD_COUNT; fd++)
        if (placed[fd] && lt_fd_still_is(fd, &placed_file[fd]))
            return fd;
    return -1;
}

static int new_placeholder(void)
{
#ifdef SYS_memfd_create
    /* The system call, not glibc's wrapper (2.27): a bare build host
     * may have an older glibc on a kernel that has the call. */
    return (int)syscall(SYS_memfd_create, "livetrack-placeholder", MFD_CLOEXEC);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/* Called under `lock`: put a placeholder on each free number among 0-2. */
static void fill_free_numbers(void)
{
    int source = -1;
    for (int fd = STDIN_FILENO; fd < STD_FD_COUNT; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        if (source < 0)
            source = placeholder_in_place();
        /* A new memfd takes the lowest free number, this one unless
         * another thread took it meanwhile; a duplicate asks for it. */
        int got = source >= 0 ? fcntl(source, F_DUPFD_CLOEXEC, fd) : new_placeholder();
        if (got < 0)
            return; /* no memfd_create, or no descriptor left: nothing to hold with */
        if (got != fd || fstat(fd, &placed_file[fd]) != 0) {
            close(got); /* the program took the number first */
            continue;
        }
        placed[fd] = 1;
        source = fd;
    }
}

/* Called under `lock` when no hold is left: close what still is ours. */
static void close_placeholders(void)
{
    for (int fd = STDIN_FILENO; fd < STD_FD_COUNT; fd++) {
        /* A file the program put there meanwhile (dup2) stays. */
        if (placed[fd] && lt_fd_still_is(fd, &placed_file[fd]))
            close(fd);
        placed[fd] = 0;
    }
}

void lt_std_fds_hold(lt_std_fds_held *held)
{
    int saved_errno = errno;
    held->counted = take_lock();
    if (held->counted) {
        holders++;
        /* Also when others hold already: the program may have closed a
         * number since (then its placeholder is placed again). */
        fill_free_numbers();
        drop_lock();
    }
    errno = saved_errno;
}

void lt_std_fds_release(lt_std_fds_held *held)
{
    if (!held->counted)
        return;
    held->counted = 0;
    int saved_errno = errno;
    /* Not going without here: the count must come down, and the holder
     * of the lock is only ever a few system calls from dropping it. */
    while (!take_lock())
        sched_yield();
    /* holders is 0 only for a hold begun before a fork() that a signal
     * handler made in its middle: the child has forgotten it already. */
    if (holders && --holders == 0)
        close_placeholders();
    drop_lock();
    errno = saved_errno;
}

void lt_std_fds_crash_report_begins(void)
{
    atomic_store_explicit(&crash_report_thread, this_thread(), memory_order_relaxed);
}

void lt_std_fds_before_fork(void)
{
    /* Waits only for a few system calls; 0 when fork() comes from a
     * signal handler that interrupted this thread's own hold. */
    locked_for_fork = take_lock();
}

void lt_std_fds_after_fork_parent(void)
{
    if (locked_for_fork)
        drop_lock();
    locked_for_fork = 0;
}

void lt_std_fds_after_fork_child(void)
{
    int saved_errno = errno;
    /* The holds in progress were other threads', gone here: none will be
     * released, so the placeholders would stay on the closed numbers. */
    holders = 0;
    close_placeholders();
    locked_for_fork = 0;
    drop_lock();
    errno = saved_errno;
}
