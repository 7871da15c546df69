/*
 * An empty setting is the same as an unset one: run with
 * LIVETRACK_CRASH_REPORT= and LIVETRACK_STACK_DEPTH= (CTest sets both to
 * ""), livetrack must use their defaults, crash report on and 16-frame
 * call sites, and say nothing about them.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "livetrack/livetrack.h"

int main(void)
{
    const char *crash = getenv("LIVETRACK_CRASH_REPORT"), *depth = getenv("LIVETRACK_STACK_DEPTH");
    CHECK(crash && !*crash && depth && !*depth); /* the test's own set-up */

    /* livetrack's constructor installed its handler (crash report on) */
    struct sigaction current;
    CHECK_EQ_INT(sigaction(SIGSEGV, NULL, &current), 0);
    CHECK((current.sa_flags & SA_SIGINFO) != 0);

    /* call sites on */
    CHECK(livetrack_capture_stack() != 0);
    return check_summary("core_settings_empty");
}
