/*
 * The README's Level Zero example: samples/levelzero/leaky_ze under
 * livetrack reports its two early destroys and, at exit, its leaked
 * staging buffers and events grouped by the line that made them.
 *
 * Usage: ze_sample <test driver> <liblivetrack_ze.so> <leaky_ze>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ze_test_util.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s <test driver> <liblivetrack_ze.so> <leaky_ze>\n", argv[0]);
        return 2;
    }
    const char *directory = zt_temp_dir("ze-sample");
    char alt_drivers[1024], preload[1024], output[1024], diagnostics_path[1024];
    snprintf(alt_drivers, sizeof alt_drivers, "ZE_ENABLE_ALT_DRIVERS=%s", argv[1]);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", argv[2]);
    snprintf(output, sizeof output, "LIVETRACK_OUTPUT=%s/report.txt", directory);
    snprintf(diagnostics_path, sizeof diagnostics_path, "%s/stderr.txt", directory);
    const char *env[] = {alt_drivers, preload, output, "LIVETRACK_EXIT_REPORT=auto", NULL};
    char *child_argv[] = {argv[3], NULL};
    CHECK_EQ_INT(zt_run(child_argv, env, "/dev/null", diagnostics_path), 0);

    char *report = zt_read_file(output + strlen("LIVETRACK_OUTPUT="));
    char *diagnostics = zt_read_file(diagnostics_path);
    CHECK(report && strstr(report, "6 leaked objects (192.0 KiB) from 2 call sites"));
    CHECK(report && strstr(report, "3 leaked ze_mem (192.0 KiB) created at:"));
    CHECK(report && strstr(report, "3 leaked ze_event_handle_t (0 bytes) created at:"));
    CHECK(report && strstr(report, "keeps alive 2 objects the program released: ze_event_pool_handle_t"));
    CHECK(report && strstr(report, " in main ") && strstr(report, "leaky_ze.c:")); /* call sites in the sample */
    CHECK(diagnostics && strstr(diagnostics, "zeEventPoolDestroy(") &&
          strstr(diagnostics, "ze_event_pool_handle_t destroyed while 3 objects created from it are live"));
    CHECK(diagnostics && strstr(diagnostics, "ze_context_handle_t destroyed while 6 objects created from it are live"));
    if (check_failed)
        fprintf(stderr, "report:\n%s\nstderr:\n%s", report ? report : "(none)", diagnostics ? diagnostics : "(none)");
    free(report);
    free(diagnostics);
    if (!check_failed)
        zt_remove_dir(directory);
    return check_summary("ze_sample");
}
