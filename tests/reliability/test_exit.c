/*
 * Process lifecycle: exec() and the ways a process ends.
 *
 *   exec          a tracked program execs another tracked program (the
 *                 same pid): no crash or hang, and the report of the new
 *                 program has its own objects only (the old image's
 *                 destructors never run, so its objects go unreported)
 *   exec-untracked  a tracked program with threads inside livetrack execs
 *                 a program that knows nothing of it
 *   thread-exit   a thread other than main calls exit() while main waits:
 *                 the exit report is written, the status is the program's
 *   exit-busy     exit() while other threads still create, release,
 *                 snapshot and report: no crash, no hang, a whole report
 *   exit-code     LIVETRACK_EXIT_CODE with exit() from a thread
 */
#include <pthread.h>
#include <stdatomic.h>

#include "livetrack/livetrack.h"
#include "rel_util.h"

enum { T_PRE, T_POST, T_MAIN, T_THREAD, T_BUSY, T_COUNT };
static const char *const type_names[T_COUNT] = {"pre_exec", "post_exec", "main_leak", "thread_leak", "busy_obj"};

static int create(uint64_t handle, unsigned type, uint64_t parent)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = 16,
                                   .parent = parent, .call = "exit_create"};
    return livetrack_create(&object) == LIVETRACK_OK;
}

static void declare(void) { livetrack_declare_types(LIVETRACK_DOMAIN_USER, "exittest", type_names, T_COUNT); }

/* ---- children ------------------------------------------------------------------------ */

static atomic_int busy_started;

static void *busy(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    uint64_t base = 0x40000000ull * (id + 1), parent = base, state = id;
    FILE *sink = fopen("/dev/null", "w");
    create(parent, T_BUSY, 0);
    atomic_fetch_add(&busy_started, 1);
    for (unsigned long i = 0;; i++) {
        uint64_t handle = base + 0x10 + (rel_rnd(&state) % 1024) * 0x10;
        if (create(handle, T_BUSY, parent) && i % 3)
            livetrack_release(LIVETRACK_DOMAIN_USER, T_BUSY, handle, NULL, "exit_release");
        if (i % 128 == 0)
            livetrack_snapshot_free(livetrack_snapshot_take(LIVETRACK_DOMAIN_ANY, NULL));
        if (i % 1024 == 0)
            livetrack_write_report(sink, LIVETRACK_FORMAT_TEXT, LIVETRACK_REPORT_ALWAYS, 0);
    }
    return NULL;
}

static void start_busy(unsigned count)
{
    pthread_t thread;
    for (uintptr_t t = 0; t < count; t++)
        pthread_create(&thread, NULL, busy, (void *)t);
    while (atomic_load(&busy_started) < (int)count)
        sched_yield();
}

static void *exit_from_thread(void *arg)
{
    for (uint64_t i = 0; i < 5; i++)
        create(0x9000 + i * 0x10, T_THREAD, 0);
    exit((int)(uintptr_t)arg);
}

static int child(int argc, char **argv)
{
    const char *role = argv[2];
    declare();
    if (!strcmp(role, "exec")) {
        for (uint64_t i = 0; i < 3; i++)
            create(0x1000 + i * 0x10, T_PRE, 0);
        start_busy(2);
        char *args[] = {argv[0], "child", "after-exec", NULL};
        execv("/proc/self/exe", args);
        return 90;
    }
    if (!strcmp(role, "after-exec")) {
        create(0x2000, T_POST, 0);
        return 0;
    }
    if (!strcmp(role, "exec-untracked")) {
        create(0x1000, T_PRE, 0);
        start_busy(2);
        char *args[] = {"/bin/sh", "-c", "echo untracked program ran", NULL};
        execv("/bin/sh", args);
        return 90;
    }
    if (!strcmp(role, "thread-exit") || !strcmp(role, "exit-code")) {
        for (uint64_t i = 0; i < 5; i++)
            create(0x8000 + i * 0x10, T_MAIN, 0);
        pthread_t thread;
        pthread_create(&thread, NULL, exit_from_thread, (void *)(uintptr_t)7);
        pthread_join(thread, NULL); /* never returns: the thread exits the process */
        return 91;
    }
    if (!strcmp(role, "exit-busy")) {
        for (uint64_t i = 0; i < 5; i++)
            create(0x8000 + i * 0x10, T_MAIN, 0);
        start_busy(argc > 3 ? (unsigned)atoi(argv[3]) : 4);
        struct timespec nap = {0, 20 * 1000 * 1000};
        nanosleep(&nap, NULL);
        exit(0);
    }
    return 92;
}

/* ---- the driver ---------------------------------------------------------------------------- */

static const char *dir;

/* Run a role; returns the run, its report in *report (malloc'd). */
static rel_run run_role(const char *role, const char *arg, const char *extra_env, char **report)
{
    char output_env[512], csv_env[512], path[512];
    snprintf(output_env, sizeof output_env, "LIVETRACK_OUTPUT=%s/%s.%%p", dir, role);
    snprintf(csv_env, sizeof csv_env, "LIVETRACK_CSV=%s/%s.%%p.csv", dir, role);
    const char *env[] = {output_env, csv_env, "LIVETRACK_EXIT_REPORT=auto", "LIVETRACK_EXIT_CODE=",
                         extra_env ? extra_env : "LIVETRACK_MAX_DIAGNOSTICS=", NULL};
    char *args[] = {(char *)rel_self(), "child", (char *)role, (char *)arg, NULL};
    rel_run run = rel_spawn(args, env, 30);
    snprintf(path, sizeof path, "%s/%s.%ld", dir, role, (long)run.pid);
    *report = rel_read_file(path);
    return run;
}

static void finish(const char *what, rel_run *run, int failed_before, char *report)
{
    if (check_failed != failed_before) {
        rel_dump(what, run);
        fprintf(stderr, "---- report:\n%s\n", report ? report : "(none)");
    }
    free(report);
    rel_run_free(run);
}

static void test_exec(void)
{
    char *report;
    rel_run run = run_role("exec", NULL, NULL, &report);
    int failed_before = check_failed;
    CHECK(rel_exited(&run, 0));
    CHECK(report != NULL);
    CHECK(report && strstr(report, "total: 1 leaked object,") && strstr(report, "post_exec") &&
          !strstr(report, "pre_exec"));
    char path[512];
    snprintf(path, sizeof path, "%s/exec.%ld.csv", dir, (long)run.pid);
    char *csv = rel_read_file(path);
    CHECK(csv && strstr(csv, ",post_exec,"));
    /* Not checked, but shown: whether the timeline of the program before
     * exec() survived (the new image opens the same %p name again). */
    printf("exec: the timeline of the image before exec %s\n",
           csv && strstr(csv, ",pre_exec,") ? "survived" : "was truncated by the new image");
    free(csv);
    finish("exec", &run, failed_before, report);

    run = run_role("exec-untracked", NULL, NULL, &report);
    failed_before = check_failed;
    CHECK(rel_exited(&run, 0));
    CHECK(strstr(run.out, "untracked program ran") != NULL);
    CHECK(report == NULL); /* exec() runs no destructor: nothing is reported */
    finish("exec-untracked", &run, failed_before, report);
}

static void test_thread_exit(void)
{
    char *report;
    rel_run run = run_role("thread-exit", NULL, NULL, &report);
    int failed_before = check_failed;
    CHECK(rel_exited(&run, 7));
    CHECK(report && strstr(report, "total: 10 leaked objects,"));
    finish("exit from a thread", &run, failed_before, report);

    run = run_role("exit-code", NULL, "LIVETRACK_EXIT_CODE=9", &report);
    failed_before = check_failed;
    CHECK(rel_exited(&run, 9));
    CHECK(report && strstr(report, "total: 10 leaked objects,"));
    finish("exit from a thread with LIVETRACK_EXIT_CODE", &run, failed_before, report);
}

static void test_exit_busy(int rounds)
{
    static const char *const threads[] = {"1", "4", "8"};
    int good = 0;
    for (int r = 0; r < rounds; r++) {
        char *report;
        rel_run run = run_role("exit-busy", threads[r % 3], r % 2 ? "LIVETRACK_JSON=/dev/null" : NULL, &report);
        int failed_before = check_failed;
        CHECK(rel_exited(&run, 0));
        /* whole: header to total line */
        CHECK(report && strstr(report, "main_leak") && strstr(report, "\nlivetrack: total: "));
        CHECK(report && report[strlen(report) - 1] == '\n');
        good += check_failed == failed_before;
        char what[64];
        snprintf(what, sizeof what, "exit with %s busy threads", threads[r % 3]);
        finish(what, &run, failed_before, report);
    }
    printf("exit while threads work: %d of %d runs ended cleanly with a whole report\n", good, rounds);
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "child"))
        return child(argc, argv);
    dir = rel_tmpdir("exit");
    test_exec();
    test_thread_exit();
    test_exit_busy(argc > 1 ? atoi(argv[1]) : 12);
    if (!check_failed)
        rel_rmdir(dir);
    return check_summary("reliability.exit");
}
