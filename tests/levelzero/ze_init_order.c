/*
 * A program linked with the loader starts it with its own zeInit, under
 * livetrack as without it: calls before zeInit fail as uninitialised,
 * settings the program puts into its environment before zeInit reach the
 * loader (here the validation layer, which refuses a context with bad
 * flags), and the objects made after it are tracked.
 *
 * A zeInit from a library's constructor, before the front end's own
 * constructor ran, also reaches the loader and starts tracking.
 *
 * Usage: ze_init_order <test driver> <liblivetrack_ze.so> <ze_init_early>
 *        ze_init_order child   (what the checker runs, with and without)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ze_test_util.h"

#include <dlfcn.h>

static int child(void)
{
    uint32_t count = 0;
    ze_result_t before = zeDriverGet(&count, NULL);
    setenv("ZE_ENABLE_VALIDATION_LAYER", "1", 1);
    setenv("ZE_ENABLE_PARAMETER_VALIDATION", "1", 1);
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    zt_open(&driver, &device);
    ze_context_desc_t bad = zt_context_desc;
    bad.flags = 0xff;
    ze_context_handle_t context = NULL;
    ze_result_t bad_flags = zeContextCreate(driver, &bad, &context);
    if (bad_flags == ZE_RESULT_SUCCESS)
        zeContextDestroy(context);
    ze_context_handle_t leaked = NULL;
    ze_result_t made = zeContextCreate(driver, &zt_context_desc, &leaked);
    printf("zeDriverGet before zeInit: 0x%x\ncontext with flags 0xff: 0x%x\ncontext: 0x%x\n", (unsigned)before,
           (unsigned)bad_flags, (unsigned)made);
    return 0;
}

/* What the program's environment holds after its zeInit. */
static int child_environment(void)
{
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    zt_open(&driver, &device);
    const char *variable = getenv("ZE_ENABLE_TRACING_LAYER");
    printf("ZE_ENABLE_TRACING_LAYER after zeInit: %s\n", variable ? variable : "(unset)");
    return 0;
}

/* A driver that starts a thread in zeInit: livetrack cannot take its
 * variable out again (unsetenv beside other threads is unsafe), and says
 * so; with a driver that starts none, the program never sees it. */
static void check_environment(char *self, const char *driver, const char *preload, const char *directory)
{
    char out[1024], err[1024];
    snprintf(out, sizeof out, "%s/environment.out", directory);
    snprintf(err, sizeof err, "%s/environment.err", directory);
    char *argv[] = {self, "child-environment", NULL};
    for (int threads = 0; threads <= 1; threads++) {
        const char *env[] = {driver, preload, "ZE_ENABLE_TRACING_LAYER",
                             threads ? "ZTD_START_THREAD=1" : "ZTD_START_THREAD", "LIVETRACK_EXIT_REPORT=off", NULL};
        CHECK_EQ_INT(zt_run(argv, env, out, err), 0);
        char *printed = zt_read_file(out), *said = zt_read_file(err);
        int note = said && strstr(said, "ZE_ENABLE_TRACING_LAYER=1 stays in the environment") != NULL;
        CHECK(printed && strstr(printed, threads ? "after zeInit: 1\n" : "after zeInit: (unset)\n"));
        CHECK(note == threads);
        if (!printed || note != threads)
            fprintf(stderr, "driver thread %d: stdout:\n%sstderr:\n%s", threads, printed ? printed : "",
                    said ? said : "");
        free(printed);
        free(said);
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "child"))
        return child();
    if (argc == 2 && !strcmp(argv[1], "child-environment"))
        return child_environment();
    /* The front end dlopened, not preloaded: its zeInit interposes
     * nothing, so it starts the loader from its constructor as for a
     * program that dlopens the loader, and still tracks. */
    if (argc == 3 && !strcmp(argv[1], "child-dlopen")) {
        if (!dlopen(argv[2], RTLD_NOW)) {
            fprintf(stderr, "%s\n", dlerror());
            return 3;
        }
        return child();
    }
    if (argc != 4) {
        fprintf(stderr, "usage: %s <test driver> <liblivetrack_ze.so> <ze_init_early>\n", argv[0]);
        return 2;
    }
    const char *directory = zt_temp_dir("ze-init-order");
    char driver[1024], preload[1024], plain_out[1024], tracked_out[1024], report[1024], output[1100];
    snprintf(driver, sizeof driver, "ZE_ENABLE_ALT_DRIVERS=%s", argv[1]);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", argv[2]);
    snprintf(plain_out, sizeof plain_out, "%s/plain.out", directory);
    snprintf(tracked_out, sizeof tracked_out, "%s/tracked.out", directory);
    snprintf(report, sizeof report, "%s/report.txt", directory);
    snprintf(output, sizeof output, "LIVETRACK_OUTPUT=%s", report);
    char *child_argv[] = {argv[0], "child", NULL};
    const char *plain_env[] = {driver, "LD_PRELOAD", "ZE_ENABLE_TRACING_LAYER", NULL};
    const char *tracked_env[] = {driver, preload, "ZE_ENABLE_TRACING_LAYER", output, "LIVETRACK_EXIT_REPORT=auto",
                                 NULL};
    CHECK_EQ_INT(zt_run(child_argv, plain_env, plain_out, NULL), 0);
    CHECK_EQ_INT(zt_run(child_argv, tracked_env, tracked_out, NULL), 0);
    char *plain = zt_read_file(plain_out), *tracked = zt_read_file(tracked_out), *leaks = zt_read_file(report);
    CHECK(plain && tracked && !strcmp(plain, tracked));
    /* what the loader answers without livetrack, to be sure the checks above compare something */
    CHECK(plain && strstr(plain, "zeDriverGet before zeInit: 0x78000001\n"));
    CHECK(plain && strstr(plain, "context: 0x0\n") && !strstr(plain, "context with flags 0xff: 0x0\n"));
    CHECK(leaks && strstr(leaks, "livetrack: 1 leaked ze_context"));
    char *dlopen_argv[] = {argv[0], "child-dlopen", argv[2], NULL};
    const char *dlopen_env[] = {driver, "LD_PRELOAD", "ZE_ENABLE_TRACING_LAYER", output, "LIVETRACK_EXIT_REPORT=auto",
                                NULL};
    unlink(report);
    CHECK_EQ_INT(zt_run(dlopen_argv, dlopen_env, tracked_out, NULL), 0);
    char *dlopened = zt_read_file(report);
    CHECK(dlopened && strstr(dlopened, "livetrack: 1 leaked ze_context"));
    free(dlopened);

    check_environment(argv[0], driver, preload, directory);

    /* zeInit from a library constructor that ran before the front end's */
    char *early_argv[] = {argv[3], NULL};
    unlink(report);
    CHECK_EQ_INT(zt_run(early_argv, plain_env, plain_out, NULL), 0);
    CHECK_EQ_INT(zt_run(early_argv, tracked_env, tracked_out, NULL), 0);
    char *early_plain = zt_read_file(plain_out), *early_tracked = zt_read_file(tracked_out);
    char *early_report = zt_read_file(report);
    CHECK(early_plain && strstr(early_plain, "zeInit in a library constructor: 0x0\n"));
    CHECK(early_plain && early_tracked && !strcmp(early_plain, early_tracked));
    CHECK(early_report && strstr(early_report, "livetrack: 1 leaked ze_context"));
    if (early_tracked && early_plain && strcmp(early_plain, early_tracked))
        fprintf(stderr, "ze_init_early without livetrack:\n%swith it:\n%s", early_plain, early_tracked);
    free(early_plain);
    free(early_tracked);
    free(early_report);
    if (check_failed)
        fprintf(stderr, "without livetrack:\n%swith it:\n%sits report:\n%s", plain ? plain : "",
                tracked ? tracked : "", leaks ? leaks : "");
    free(plain);
    free(tracked);
    free(leaks);
    if (!check_failed)
        zt_remove_dir(directory);
    return check_summary("ze_init_order");
}
