/*
 * Points in the registry where a test can stop a thread, to force an
 * interleaving that a scheduler hands out only once in a long while
 * (tests/core/test_registry_interleave.c).
 *
 * Compiled in only where LT_TEST_HOOKS is defined: the core library that
 * tests/core builds again for that test. The release library has no call
 * and no check there. In the test build the registry calls
 * lt_test_pause(point), a weak symbol that the test program defines (and
 * exports, with default visibility): without one, nothing is called.
 */
#ifndef LIVETRACK_TEST_HOOKS_H
#define LIVETRACK_TEST_HOOKS_H

enum lt_test_point {
    /* hold_parent, a create's parent found in the thread's cache: the
     * cached node read, its hold not yet attempted */
    LT_TEST_CACHED_PARENT_READ = 1,
    /* ... the hold attempted (taken or refused), not yet acted on */
    LT_TEST_CACHED_PARENT_TRIED = 2,
};

#ifdef LT_TEST_HOOKS
/* Default visibility: the project builds with -fvisibility=hidden, and a
 * hidden reference would never reach the program's definition. */
void lt_test_pause(enum lt_test_point point) __attribute__((weak, visibility("default")));
#define LT_TEST_PAUSE(point) (lt_test_pause ? lt_test_pause(point) : (void)0)
#else
#define LT_TEST_PAUSE(point) ((void)0)
#endif

#endif
