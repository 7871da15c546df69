/*
 * livetrack's own writes never raise SIGPIPE in the program.
 *
 * Diagnostics, the exit and crash reports go to stderr, and a timeline
 * may go to a FIFO; when the reader has gone, write() raises SIGPIPE,
 * whose default action ends the process: a program that never wrote to
 * that pipe itself would die of livetrack's writing (exit 141 instead of
 * its own status, or instead of the crash signal it was dying of). Around
 * such writes SIGPIPE is blocked in the writing thread; a SIGPIPE they
 * raised is taken back before it is unblocked (one the program had
 * pending already stays), and the write fails with EPIPE instead, which
 * the callers handle like a full disk. Only system calls: usable in the
 * crash handler.
 */
#include <signal.h>
#include <time.h>

#include "core_internal.h"

static int sigpipe_pending(void)
{
    sigset_t pending;
    return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

void lt_pipe_guard_begin(lt_pipe_guard *guard)
{
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    guard->blocked = pthread_sigmask(SIG_BLOCK, &pipe_only, &guard->old_mask) == 0;
    guard->pending_before = guard->blocked && sigpipe_pending();
}

void lt_pipe_guard_end(lt_pipe_guard *guard)
{
    if (!guard->blocked)
        return;
    if (!guard->pending_before && sigpipe_pending()) {
        sigset_t pipe_only;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        struct timespec now = {0, 0};
        sigtimedwait(&pipe_only, NULL, &now); /* ours: taken back */
    }
    pthread_sigmask(SIG_SETMASK, &guard->old_mask, NULL);
}
