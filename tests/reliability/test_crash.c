/*
 * Faults: a program that crashes still leaves
 *   - a complete CSV timeline up to the crash (LIVETRACK_CSV: one write()
 *     per row, nothing buffered), and
 *   - the leak report as of the crash (the fatal-signal handler of
 *     lifecycle.c),
 * and it dies of the same signal it would have died of without livetrack.
 *
 * Also: livetrack leaves alone a SIGSEGV handler the program installs,
 * LIVETRACK_CRASH_REPORT=0 leaves the signals alone, a crash while
 * other threads hammer the registry neither hangs nor loses the report,
 * and a report sent to the program's own stderr (redirected to a file)
 * keeps what the program wrote there, as one sent to /dev/stdout does
 * once the program has closed its stdout.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "livetrack/livetrack.h"
#include "rel_util.h"

#define OBJECTS 50

static const char *const type_names[] = {"crash_ctx", "crash_obj", "crash_busy"};

static livetrack_status create(uint64_t handle, unsigned type, uint64_t parent)
{
    livetrack_new_object object = {
        .domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = 64, .parent = parent,
        .call = "crash_create"};
    return livetrack_create(&object);
}

/* ---- the child: make objects, then crash ---------------------------------- */

static atomic_int hammering;

static void *hammer(void *arg)
{
    uint64_t base = 0x7000000000ull + ((uint64_t)(uintptr_t)arg << 32), state = (uintptr_t)arg;
    atomic_fetch_add(&hammering, 1);
    for (uint64_t i = 0;; i++) {
        uint64_t handle = base + (rel_rnd(&state) % 64) * 16;
        if (create(handle, 2, 0x1000) == LIVETRACK_OK)
            livetrack_release(LIVETRACK_DOMAIN_USER, 2, handle, NULL, "crash_release");
        if (i % 256 == 0)
            livetrack_snapshot_free(livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL));
    }
    return NULL;
}

static volatile int zero;

/* Faults the compiler cannot see coming, and that UBSan leaves to the
 * hardware: the crash must be a real SIGSEGV or SIGFPE. */
__attribute__((no_sanitize("undefined"))) static void crash(const char *how)
{
    if (!strcmp(how, "segv")) {
        volatile int *nowhere = (volatile int *)(uintptr_t)(zero + 16);
        *nowhere = 1;
    } else if (!strcmp(how, "abort")) {
        abort();
    } else if (!strcmp(how, "fpe")) {
        volatile int ten = 10;
        printf("%d\n", ten / zero);
    } else if (!strcmp(how, "ill")) {
        __builtin_trap();
    } else if (!strcmp(how, "bus")) {
        /* Touching a page of a file mapping past the file's end. */
        FILE *file = tmpfile();
        if (!file || ftruncate(fileno(file), 4096) != 0)
            abort();
        volatile char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(file), 0);
        if (page == MAP_FAILED || ftruncate(fileno(file), 0) != 0)
            abort();
        page[0] = 1;
    } else if (!strcmp(how, "kill")) {
        kill(getpid(), SIGSEGV); /* sent, not raised by an instruction */
        for (;;)
            pause();
    }
    fprintf(stderr, "did not crash by %s\n", how);
    _exit(3);
}

static void on_segv(int signal_number)
{
    (void)signal_number;
    static const char text[] = "program's own SIGSEGV handler ran\n";
    if (write(STDERR_FILENO, text, sizeof text - 1) < 0)
        _exit(43);
    _exit(42);
}

static int child(int argc, char **argv)
{
    const char *how = argv[2];
    int busy = argc > 3 && !strcmp(argv[3], "busy");
    int own_handler = argc > 3 && !strcmp(argv[3], "own-handler");
    rel_no_core();
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "crashtest", type_names, 3);
    if (own_handler)
        signal(SIGSEGV, on_segv);
    if (argc > 4 && !strcmp(argv[3], "stderr-file")) {
        /* as a shell's 2>FILE does, then a line of the program's own */
        int file = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        static const char line[] = "the program's own line\n";
        if (file < 0 || dup2(file, STDERR_FILENO) < 0 || write(STDERR_FILENO, line, sizeof line - 1) < 0)
            return 5;
        close(file);
    }
    if (argc > 3 && !strcmp(argv[3], "closed-stdout")) {
        /* a line of the program's own, then stdout closed, as gnulib's
         * close_stdout does (at exit, but a crash may come after it) */
        printf("the program's own line\n");
        if (fclose(stdout) != 0)
            return 5;
    }
    if (argc > 3 && !strcmp(argv[3], "kept")) {
        /* live but not leaked: released, held by a keeper */
        create(0x1000, 0, 0);
        if (!livetrack_keep_alive(LIVETRACK_DOMAIN_USER, 0x1000) ||
            livetrack_release(LIVETRACK_DOMAIN_USER, 0, 0x1000, NULL, NULL) != LIVETRACK_OK)
            return 4;
        crash(how);
    }
    create(0x1000, 0, 0);
    for (int i = 1; i < OBJECTS; i++)
        create(0x2000 + 0x10 * (uint64_t)i, 1, 0x1000);
    if (busy) {
        pthread_t thread;
        for (uintptr_t t = 1; t <= 3; t++)
            pthread_create(&thread, NULL, hammer, (void *)t);
        while (atomic_load(&hammering) < 3)
            sched_yield();
        usleep(20000);
    }
    crash(how);
    return 3;
}

/* ---- the driver -------------------------------------------------------------- */

typedef struct scenario {
    const char *how;
    const char *mode; /* "", "busy", "own-handler", "off" */
    int signal_number;
} scenario;

/* Rows of the timeline: the header, then one complete row per event. */
static void check_csv(const char *path, size_t min_rows, const char *what)
{
    char *csv = rel_read_file(path);
    CHECK(csv != NULL);
    if (!csv) {
        fprintf(stderr, "%s: no timeline at %s\n", what, path);
        return;
    }
    size_t length = strlen(csv);
    CHECK(length > 0 && csv[length - 1] == '\n'); /* no torn last row */
    size_t rows = rel_lines(csv);
    CHECK(rows >= min_rows + 1);
    /* every row has as many fields as the header */
    char *save = NULL;
    char *line = strtok_r(csv, "\n", &save);
    size_t fields = line ? rel_count(line, ",") : 0;
    size_t bad = 0, creates = 0;
    for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        bad += rel_count(line, ",") != fields;
        creates += strstr(line, ",create,crash_create,") != NULL && strstr(line, ",crash_obj,") != NULL;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(creates, OBJECTS - 1);
    if (bad || creates != OBJECTS - 1)
        fprintf(stderr, "%s: %zu rows, %zu malformed, %zu crash_obj creates\n", what, rows, bad, creates);
    free(csv);
}

static void run_scenario(const char *dir, const scenario *s)
{
    char csv[512], output[512], json[512], csv_env[600], output_env[600], json_env[600], what[128];
    snprintf(what, sizeof what, "crash by %s%s%s", s->how, *s->mode ? ", " : "", s->mode);
    snprintf(csv_env, sizeof csv_env, "LIVETRACK_CSV=%s/%s-%s.%%p.csv", dir, s->how, s->mode);
    snprintf(output_env, sizeof output_env, "LIVETRACK_OUTPUT=%s/%s-%s.%%p.txt", dir, s->how, s->mode);
    snprintf(json_env, sizeof json_env, "LIVETRACK_JSON=%s/%s-%s.%%p.json", dir, s->how, s->mode);
    const char *env[] = {csv_env, output_env, json_env, "LIVETRACK_EXIT_REPORT=auto",
                         !strcmp(s->mode, "off") ? "LIVETRACK_CRASH_REPORT=0" : "LIVETRACK_CRASH_REPORT=",
                         /* under ASan, leave these signals to livetrack as a plain build does */
                         "ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:"
                         "detect_leaks=0",
                         NULL};
    char *argv[] = {(char *)rel_self(), "child", (char *)s->how, (char *)s->mode, NULL};
    rel_run run = rel_spawn(argv, env, 30);
    snprintf(csv, sizeof csv, "%s/%s-%s.%ld.csv", dir, s->how, s->mode, (long)run.pid);
    snprintf(output, sizeof output, "%s/%s-%s.%ld.txt", dir, s->how, s->mode, (long)run.pid);
    snprintf(json, sizeof json, "%s/%s-%s.%ld.json", dir, s->how, s->mode, (long)run.pid);
    int failed_before = check_failed;

    if (!strcmp(s->mode, "own-handler")) {
        /* the program's handler ran, livetrack wrote nothing */
        CHECK(rel_exited(&run, 42));
        CHECK(!rel_file_exists(output));
        CHECK(!rel_file_exists(json));
    } else {
        CHECK(rel_killed_by(&run, s->signal_number));
        char *report = rel_read_file(output);
        char *document = rel_read_file(json);
        if (!strcmp(s->mode, "off")) {
            CHECK(report == NULL);
            CHECK(document == NULL);
        } else {
            /* the JSON document too, whole */
            CHECK(document && document[0] == '{' && strstr(document, "\"crash_obj\"") &&
                  strstr(document, "\n}"));
            /* The objects made before the crash; a busy run adds the
             * hammering threads' objects live at that moment. */
            char expected[64];
            snprintf(expected, sizeof expected, " pid %ld", (long)run.pid);
            CHECK(report != NULL);
            CHECK(report && strstr(report, expected));
            snprintf(expected, sizeof expected, "total: %d leaked objects", OBJECTS);
            CHECK(report && (!strcmp(s->mode, "busy") ? strstr(report, "total: ") : strstr(report, expected)));
            CHECK(rel_count(run.err, "livetrack: pid") == 1);
        }
        free(report);
        free(document);
    }
    check_csv(csv, OBJECTS, what);
    if (check_failed != failed_before)
        rel_dump(what, &run);
    rel_run_free(&run);
}

/* A crash with objects live but none leaked writes no text report: the
 * file LIVETRACK_OUTPUT names keeps what it held, and no message says a
 * report is in it. */
static void run_kept_only(const char *dir)
{
    char output[512], output_env[600];
    snprintf(output, sizeof output, "%s/kept.txt", dir);
    snprintf(output_env, sizeof output_env, "LIVETRACK_OUTPUT=%s", output);
    FILE *file = fopen(output, "w");
    CHECK(file && fputs("the program's own\n", file) >= 0 && fclose(file) == 0);
    const char *env[] = {output_env, "LIVETRACK_EXIT_REPORT=auto", "LIVETRACK_CRASH_REPORT=",
                         "ASAN_OPTIONS=handle_segv=0:detect_leaks=0", NULL};
    char *argv[] = {(char *)rel_self(), "child", "segv", "kept", NULL};
    rel_run run = rel_spawn(argv, env, 30);
    int failed_before = check_failed;
    CHECK(rel_killed_by(&run, SIGSEGV));
    char *kept = rel_read_file(output);
    CHECK(kept && !strcmp(kept, "the program's own\n"));
    free(kept);
    CHECK_EQ_INT(rel_count(run.err, "livetrack: pid"), 0);
    if (check_failed != failed_before)
        rel_dump("crash with only a kept-alive object", &run);
    rel_run_free(&run);
    unlink(output);
}

/* Runs ARGV, a child that writes "the program's own line" to FILE and
 * then crashes with its report sent there, and checks that the crash
 * report came after that line, which stays. NOTICE, where not NULL, must
 * stand once on the run's stderr (where livetrack says which file holds
 * the report). LABEL names the case when it fails. */
static void run_crash_report_into_file(const char *const *env, char *const *argv, const char *file,
                                       const char *notice, const char *label)
{
    rel_run run = rel_spawn(argv, env, 30);
    int failed_before = check_failed;
    CHECK(rel_killed_by(&run, SIGSEGV));
    char *text = rel_read_file(file);
    CHECK(text && !strncmp(text, "the program's own line\n", 23));
    char total[64];
    snprintf(total, sizeof total, "livetrack: total: %d leaked objects", OBJECTS);
    CHECK(text && strstr(text, total));
    if (notice)
        CHECK(rel_count(run.err, notice) == 1);
    if (check_failed != failed_before) {
        fprintf(stderr, "%s:\n%s\n", file, text ? text : "(none)");
        rel_dump(label, &run);
    }
    free(text);
    rel_run_free(&run);
    unlink(file);
}

/* LIVETRACK_OUTPUT=/dev/stderr with stderr redirected to a file: the
 * crash report is added after what the program wrote there, which stays. */
static void run_output_on_stderr(const char *dir)
{
    char err_path[512];
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    const char *env[] = {"LIVETRACK_OUTPUT=/dev/stderr", "LIVETRACK_EXIT_REPORT=auto", "LIVETRACK_CRASH_REPORT=",
                         "ASAN_OPTIONS=handle_segv=0:detect_leaks=0", NULL};
    char *argv[] = {(char *)rel_self(), "child", "segv", "stderr-file", err_path, NULL};
    run_crash_report_into_file(env, argv, err_path, NULL, "crash report on the program's stderr");
}

/* LIVETRACK_OUTPUT=/dev/stdout, stdout redirected to a file by a shell
 * and closed by the program before the crash: /dev/stdout leads nowhere
 * then, and the crash report still goes after the program's line in that
 * file (it went to stderr: "the leak report as of the crash is below"). */
static void run_output_on_closed_stdout(const char *dir)
{
    char out_path[512];
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", dir);
    const char *env[] = {"LIVETRACK_OUTPUT=/dev/stdout", "LIVETRACK_EXIT_REPORT=auto", "LIVETRACK_CRASH_REPORT=",
                         "ASAN_OPTIONS=handle_segv=0:detect_leaks=0", NULL};
    char *argv[] = {"/bin/sh", "-c", "exec \"$0\" child segv closed-stdout >\"$1\"", (char *)rel_self(), out_path,
                    NULL};
    run_crash_report_into_file(env, argv, out_path, "the leak report as of the crash is in /dev/stdout",
                               "crash report on a closed stdout's file");
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "child"))
        return child(argc, argv);

    static const scenario scenarios[] = {
        {"segv", "", SIGSEGV},   {"abort", "", SIGABRT}, {"fpe", "", SIGFPE},  {"ill", "", SIGILL},
        {"bus", "", SIGBUS},     {"kill", "", SIGSEGV},  {"segv", "busy", SIGSEGV},
        {"abort", "busy", SIGABRT}, {"segv", "own-handler", SIGSEGV}, {"segv", "off", SIGSEGV},
    };
    const char *dir = rel_tmpdir("crash");
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        run_scenario(dir, &scenarios[i]);
    run_kept_only(dir);
    run_output_on_stderr(dir);
    run_output_on_closed_stdout(dir);
    if (!check_failed)
        rel_rmdir(dir);
    return check_summary("reliability.crash");
}
