/*
 * When livetrack cannot attach (no Level Zero driver, or the user turned
 * the loader's tracing layer off), it says so in one line and the program
 * runs exactly as without it: same output, same exit status.
 *
 * Usage: ze_stays_out <test driver> <liblivetrack_ze.so> <program>...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ze_test_util.h"

/* livetrack must write `lines` lines, one of them with `expected_note`
 * (NULL when it must write none). */
static void check_case(const char *program, const char *front_end, const char *directory, const char *case_name,
                       const char *alt_drivers, const char *extra, const char *expected_note, size_t lines)
{
    const char *name = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
    char preload[1024], plain_out[1024], tracked_out[1024], tracked_err[1024];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", front_end);
    snprintf(plain_out, sizeof plain_out, "%s/%s.%s.plain.out", directory, name, case_name);
    snprintf(tracked_out, sizeof tracked_out, "%s/%s.%s.tracked.out", directory, name, case_name);
    snprintf(tracked_err, sizeof tracked_err, "%s/%s.%s.tracked.err", directory, name, case_name);
    char *argv[] = {(char *)program, NULL};
    const char *plain_env[] = {alt_drivers, extra, "LD_PRELOAD", NULL};
    const char *tracked_env[] = {alt_drivers, extra, preload, "LIVETRACK_OUTPUT", "LIVETRACK_EXIT_REPORT=auto", NULL};
    int plain_status = zt_run(argv, plain_env, plain_out, NULL);
    int tracked_status = zt_run(argv, tracked_env, tracked_out, tracked_err);
    CHECK_EQ_INT(plain_status, 0);
    CHECK_EQ_INT(tracked_status, plain_status);
    char *plain = zt_read_file(plain_out), *tracked = zt_read_file(tracked_out), *diagnostics = zt_read_file(tracked_err);
    CHECK(plain && tracked && strcmp(plain, tracked) == 0);
    /* Those lines, and nothing else from livetrack: no report, no misuse. */
    CHECK_EQ_INT(zt_count(diagnostics, "livetrack:"), lines);
    CHECK(diagnostics && (!expected_note || strstr(diagnostics, expected_note) != NULL));
    if (!diagnostics || zt_count(diagnostics, "livetrack:") != lines ||
        (expected_note && !strstr(diagnostics, expected_note)))
        fprintf(stderr, "%s (%s) wrote on stderr:\n%s", name, case_name, diagnostics ? diagnostics : "");
    free(plain);
    free(tracked);
    free(diagnostics);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s <test driver> <liblivetrack_ze.so> <program>...\n", argv[0]);
        return 2;
    }
    const char *directory = zt_temp_dir("ze-stays-out");
    char test_driver[1024];
    snprintf(test_driver, sizeof test_driver, "ZE_ENABLE_ALT_DRIVERS=%s", argv[1]);
    for (int i = 3; i < argc; i++) {
        /* No driver at all: zeInit fails for the program too. */
        check_case(argv[i], argv[2], directory, "no-driver", "ZE_ENABLE_ALT_DRIVERS=/nonexistent/libze_no_driver.so",
                   "ZE_ENABLE_TRACING_LAYER", "livetrack: Level Zero: zeInit failed", 1);
        /* No driver, and `livetrack run` asked for silence about it, in any
         * of the words a yes setting takes. */
        check_case(argv[i], argv[2], directory, "no-driver-quiet",
                   "ZE_ENABLE_ALT_DRIVERS=/nonexistent/libze_no_driver.so", "LIVETRACK_QUIET_ABSENT_API=yes", NULL, 0);
        /* A value that is no yes or no: said once, and the default kept
         * (the zeInit line is the other one). */
        check_case(argv[i], argv[2], directory, "no-driver-bad-quiet",
                   "ZE_ENABLE_ALT_DRIVERS=/nonexistent/libze_no_driver.so", "LIVETRACK_QUIET_ABSENT_API=x",
                   "livetrack: LIVETRACK_QUIET_ABSENT_API=\"x\" is not", 2);
        /* A driver, but the user turned the tracing layer off. */
        check_case(argv[i], argv[2], directory, "no-tracing", test_driver, "ZE_ENABLE_TRACING_LAYER=0",
                   "livetrack: Level Zero: the loader's tracing layer is not available", 1);
    }
    if (!check_failed)
        zt_remove_dir(directory);
    return check_summary("ze_stays_out");
}
