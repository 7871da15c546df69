/*
 * The walk gate (walk_gate.c): stack walks and fork() keep out of each
 * other's way.
 *
 * libunwind 1.6, as Debian builds it, takes a process-wide mutex inside
 * unw_step whatever the caching policy (seen on a thread's first walk,
 * which fills its cache from libunwind's memory pool). A thread walking at
 * the moment another thread forks leaves that mutex held in the child, and
 * the child's first stack capture waits for it forever. No fork hook can
 * take libunwind's mutex, so livetrack holds fork() until the walks in
 * flight end, and holds new walks until the fork is done.
 *
 * Walks do not nest: a signal handler that captures a stack while its
 * thread is inside a walk would wait for a fork that waits for that walk
 * (capturing stacks from a signal handler is not async-signal-safe
 * anyway; the crash report does not capture).
 */
#ifndef LIVETRACK_WALK_GATE_H
#define LIVETRACK_WALK_GATE_H

/* Around every call into libunwind that walks: unw_backtrace, unw_step. */
void lt_walk_enter(void);
void lt_walk_leave(void);

#endif
