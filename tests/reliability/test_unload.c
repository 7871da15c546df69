/*
 * Process lifecycle: the driver library is unloaded (dlclose) before
 * livetrack's exit handler runs. The exit report, the CSV timeline and a
 * report taken after the unload must not touch the library: not call it
 * (livetrack never calls a driver from a report) and not read its memory
 * (type and API names it declared, its code addresses on creation
 * stacks). The objects it recorded and never released are still reported
 * under the names it gave.
 *
 *   test_unload <driver.so>
 */
#include <dlfcn.h>

#include "livetrack/livetrack.h"
#include "rel_util.h"

#define BUFFERS 6

static int child(const char *driver_path)
{
    void *driver = dlopen(driver_path, RTLD_NOW | RTLD_LOCAL);
    if (!driver) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 10;
    }
    int (*start)(unsigned) = (int (*)(unsigned))dlsym(driver, "unload_driver_start");
    if (!start || start(BUFFERS) != 0)
        return 11;
    /* a report while it is loaded: symbols of its frames get cached */
    FILE *sink = fopen("/dev/null", "w");
    livetrack_write_report(sink, LIVETRACK_FORMAT_TEXT, LIVETRACK_REPORT_ALWAYS, 0);
    fclose(sink);
    if (dlclose(driver) != 0)
        return 12;
    if (dlopen(driver_path, RTLD_NOW | RTLD_NOLOAD)) {
        fprintf(stderr, "the driver is still loaded after dlclose\n");
        return 13;
    }
    /* after the unload: a report now, and the exit report */
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    size_t count = livetrack_snapshot_count(snapshot);
    for (size_t i = 0; i < count; i++)
        printf("%s\n", livetrack_snapshot_at(snapshot, i)->type_name);
    livetrack_snapshot_free(snapshot);
    printf("api %s\n", livetrack_domain_name(LIVETRACK_DOMAIN_USER));
    livetrack_write_report(stdout, LIVETRACK_FORMAT_TEXT, 0, 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "child"))
        return child(argv[2]);
    if (argc < 2) {
        fprintf(stderr, "usage: test_unload <driver.so>\n");
        return 2;
    }
    const char *dir = rel_tmpdir("unload");
    char output_env[512], csv_env[512], json_env[512], path[512];
    snprintf(output_env, sizeof output_env, "LIVETRACK_OUTPUT=%s/report.%%p", dir);
    snprintf(csv_env, sizeof csv_env, "LIVETRACK_CSV=%s/timeline.%%p.csv", dir);
    snprintf(json_env, sizeof json_env, "LIVETRACK_JSON=%s/report.%%p.json", dir);
    const char *env[] = {output_env, csv_env, json_env, "LIVETRACK_EXIT_REPORT=auto", NULL};
    char *args[] = {(char *)rel_self(), "child", argv[1], NULL};
    rel_run run = rel_spawn(args, env, 60);
    snprintf(path, sizeof path, "%s/report.%ld", dir, (long)run.pid);
    char *report = rel_read_file(path);
    snprintf(path, sizeof path, "%s/report.%ld.json", dir, (long)run.pid);
    char *json = rel_read_file(path);

    CHECK(rel_exited(&run, 0));
    /* the names it declared, still right after it is gone */
    CHECK_EQ_INT(rel_count(run.out, "drv_buffer\n"), BUFFERS);
    CHECK(strstr(run.out, "api UnloadedDriver\n") != NULL);
    CHECK(report && strstr(report, "total: 7 leaked objects,"));
    CHECK(report && strstr(report, "drv_buffer") && strstr(report, "UnloadedDriver"));
    CHECK(json && strstr(json, "\"drv_buffer\""));
    if (check_failed) {
        rel_dump("driver unloaded before exit", &run);
        fprintf(stderr, "---- exit report:\n%s\n", report ? report : "(none)");
    } else {
        rel_rmdir(dir);
    }
    free(report);
    free(json);
    rel_run_free(&run);
    return check_summary("reliability.unload");
}
