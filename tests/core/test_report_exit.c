/*
 * The exit report and LIVETRACK_EXIT_CODE, in children of this program:
 *   - with leaks and LIVETRACK_EXIT_CODE=23 the status is 23 whatever the
 *     program returned; without leaks (or with only suppressed ones, or
 *     leaks released by an atexit handler) it is the program's own;
 *   - everything is written first: the text report, the JSON document
 *     (LIVETRACK_JSON, %p) and the program's buffered stdout;
 *   - LIVETRACK_EXIT_REPORT=off silences only the text; LIVETRACK_OUTPUT
 *     moves it to a file; LIVETRACK_PEAK_REPORT=1 adds the peak; an
 *     unwritable JSON path gets one message and changes nothing else;
 *     so does each output on a full disk (/dev/full), the timeline too;
 *     LIVETRACK_MAX_DIAGNOSTICS=0 silences none of these messages;
 *   - a report or timeline path that names the program's own stdout or
 *     stderr, redirected to a file, adds to what the program wrote there
 *     instead of emptying it or being overwritten by its late flush; with
 *     another thread blocked reading stdin, or holding stderr's lock with
 *     the report on stderr by default, the program still exits; with
 *     stdout a pipe whose reader has gone, it still dies of SIGPIPE; the
 *     program's output after them (a timeline's rows are written while it
 *     runs, a report before a stream another thread holds is flushed)
 *     comes after them, not over them; a program that closed stdout
 *     (at exit, or before its first object) still gets them in the file
 *     stdout wrote to, named as that file, /dev/stdout, /dev/fd/1 or
 *     /proc/self/fd/1;
 *   - a program that sets a locale with a decimal comma still gets
 *     numbers with a '.' in its timeline (else one column too many) and
 *     text report: the locale is built here with localedef (libc-bin)
 *     from a source and a charmap this test writes, so it needs no
 *     locales package;
 *   - a program that sets its process title, overwriting its initial
 *     environment as setproctitle does, still gets its reports, timeline
 *     and suppressions from the files its LIVETRACK_* settings named.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

enum { T_BUFFER, T_COUNT };
static const char *const type_names[T_COUNT] = {"rx_buffer"};

static int line_leak;

__attribute__((noinline)) static void leak(uint64_t handle)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = T_BUFFER, .handle = handle, .bytes = 256};
    line_leak = __LINE__ + 1;
    livetrack_create(&object);
    __asm__ volatile("" ::: "memory");
}

static int leaked_count;

static void release_at_exit(void)
{
    for (int i = 0; i < leaked_count; i++)
        livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0x100 + (uint64_t)i * 16, NULL, NULL);
}

/* Puts `path` on descriptor `fd` as a shell's ">path" does (emptied, no
 * O_APPEND); the same path twice is "2>&1". */
static void redirect(int fd, const char *path, const char *previous)
{
    int opened = previous && !strcmp(path, previous) ? dup(STDOUT_FILENO)
                                                      : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (opened < 0 || dup2(opened, fd) < 0)
        exit(125);
    close(opened);
}

/* Reads a line from stdin, a pipe nobody writes to: it waits in fgets,
 * holding stdin's lock, until the process ends. */
static void *read_stdin(void *unused)
{
    (void)unused;
    char line[64];
    return fgets(line, sizeof line, stdin);
}

/* As gnulib's close_stdout (coreutils, most GNU tools) at exit */
static void close_stdout_at_exit(void) { fclose(stdout); }

/* Takes the lock of `stream` (stdout or stderr) and keeps it until the
 * process ends. */
static void *hold_stream(void *stream)
{
    flockfile(stream);
    for (;;)
        pause();
    return NULL;
}

/* Returns once another thread holds the lock of `stream` for good. */
static void start_stream_holder(FILE *stream)
{
    pthread_t holder;
    if (pthread_create(&holder, NULL, hold_stream, stream) != 0)
        exit(125);
    while (ftrylockfile(stream) == 0) {
        funlockfile(stream);
        usleep(1000);
    }
}

/* Gives stdin a pipe whose writing end stays open and starts a thread
 * reading it; returns once that thread holds stdin's lock. */
static void start_stdin_reader(void)
{
    int ends[2];
    pthread_t reader;
    if (pipe(ends) != 0 || dup2(ends[0], STDIN_FILENO) < 0 || pthread_create(&reader, NULL, read_stdin, NULL) != 0)
        exit(125);
    while (ftrylockfile(stdin) == 0) {
        funlockfile(stdin);
        usleep(1000);
    }
}

/* The reader of a pipe that is full before it starts: after a while it
 * copies everything from `from` into `path`, then ends (not through
 * exit: the objects are its parent's). */
static void drain_slowly(int from, const char *path)
{
    usleep(500 * 1000);
    int to = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char buffer[4096];
    ssize_t got;
    while (to >= 0 && ((got = read(from, buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR)))
        if (got > 0 && write(to, buffer, (size_t)got) != got)
            _exit(1);
    _exit(to >= 0 ? 0 : 1);
}

/* Sends stdout to a pipe that drain_slowly reads into `path`, and makes
 * it non-blocking, as event loops (libuv) do. The reader keeps the
 * descriptors the test reads, so the test sees the end once it is done. */
static void start_nonblocking_stdout(const char *path)
{
    int ends[2];
    if (pipe(ends) != 0)
        exit(125);
    pid_t reader = fork();
    if (reader < 0)
        exit(125);
    if (reader == 0) {
        close(ends[1]);
        drain_slowly(ends[0], path);
    }
    if (dup2(ends[1], STDOUT_FILENO) < 0 || fcntl(STDOUT_FILENO, F_SETFL, O_NONBLOCK) != 0)
        exit(125);
    close(ends[0]);
    close(ends[1]);
}

/* What setproctitle (nginx, PostgreSQL, Python's setproctitle module)
 * does to make room for a long title: the environment moves to the heap
 * and its strings in the initial block are overwritten, here with the
 * title and zeros. getenv still works; pointers into the block do not. */
static void set_process_title(const char *title)
{
    size_t count = 0;
    while (environ[count])
        count++;
    char **moved = calloc(count + 1, sizeof *moved);
    if (!moved)
        exit(2);
    for (size_t i = 0; i < count; i++)
        if (!(moved[i] = strdup(environ[i])))
            exit(2);
    for (size_t i = 0; i < count; i++)
        memset(environ[i], 0, strlen(environ[i]));
    if (count)
        memcpy(environ[0], title, strnlen(title, strlen(moved[0])));
    environ = moved;
}

/* Child: "child LEAKS STATUS [atexit|idle|misuse|leaks-misuse|locale|title|
 * std-files OUT ERR|stdin-reader OUT ERR|broken-stdout ERR default|ignore|
 * interleaved OUT ERR|stdout-held OUT ERR|stderr-held OUT ERR|
 * nonblocking-stdout OUT ERR|closes-stdout|closes-stdout-early]".
 * Prints its pid and the leak's line, buffered (stdout is a pipe), so a
 * lost flush shows. "idle" records nothing (a
 * shell in a tree livetrack run armed), "misuse" only a misused call,
 * "leaks-misuse" the leaks and a misused call. "locale" first takes the
 * environment's locale, as GTK and Qt programs do, and prints its name
 * and 1.5 in it; "title" first sets a process title. "std-files" first
 * sends stdout to OUT and stderr to ERR, and also writes a line to stderr
 * before its first object; "stdin-reader" does too, and then leaves a
 * thread blocked reading stdin (an interactive console) when it returns:
 * if its exit hangs, SIGALRM ends it after 20 s. "broken-stdout" sends
 * stderr to ERR and stdout to a pipe whose reader has gone, with SIGPIPE's
 * default action or ignored, as its last argument says. "interleaved"
 * and "stdout-held" send stdout and stderr as "std-files" does;
 * "interleaved" then writes a line to stdout, flushed, before its first
 * object and after each leaked one; "stdout-held" has another thread take
 * stdout's lock for good after its buffered line, "stderr-held" that of
 * stderr (SIGALRM ends it after 20 s if its exit hangs).
 * "nonblocking-stdout" sends stderr to ERR and stdout to a non-blocking
 * pipe that a reader starts copying into OUT only once it is full.
 * "closes-stdout" closes stdout in an atexit handler; "closes-stdout-early"
 * writes a line to stdout and closes descriptor 1 before its first object. */
static int child(int argc, char **argv)
{
    const char *mode = argc > 4 ? argv[4] : "";
    int interleaved = !strcmp(mode, "interleaved");
    int stdout_held = !strcmp(mode, "stdout-held"), stderr_held = !strcmp(mode, "stderr-held");
    if ((!strcmp(mode, "std-files") || !strcmp(mode, "stdin-reader") || interleaved || stdout_held || stderr_held) &&
        argc > 6) {
        redirect(STDOUT_FILENO, argv[5], NULL);
        redirect(STDERR_FILENO, argv[6], argv[5]);
        fprintf(stderr, "child stderr line\n");
    }
    if (stderr_held)
        alarm(20);
    if (!strcmp(mode, "closes-stdout"))
        atexit(close_stdout_at_exit);
    if (!strcmp(mode, "closes-stdout-early") &&
        (printf("child output before any object\n") < 0 || fflush(stdout) != 0 || close(STDOUT_FILENO) != 0))
        exit(125);
    if (!strcmp(mode, "stdin-reader")) {
        alarm(20);
        start_stdin_reader();
    }
    if (!strcmp(mode, "nonblocking-stdout") && argc > 6) {
        redirect(STDERR_FILENO, argv[6], NULL);
        start_nonblocking_stdout(argv[5]);
    }
    if (!strcmp(mode, "broken-stdout") && argc > 6) {
        int ends[2];
        redirect(STDERR_FILENO, argv[5], NULL);
        signal(SIGPIPE, strcmp(argv[6], "ignore") ? SIG_DFL : SIG_IGN);
        if (pipe(ends) != 0 || dup2(ends[1], STDOUT_FILENO) < 0)
            exit(125);
        close(ends[0]);
        close(ends[1]);
    }
    if (!strcmp(mode, "title")) {
        /* livetrack has read its settings by now (its constructor did) */
        set_process_title("test_report_exit: a process title");
        const char *json = getenv("LIVETRACK_JSON");
        printf("child title set, LIVETRACK_JSON=%s\n", json ? json : "(unset)");
    }
    if (!strcmp(mode, "locale")) {
        const char *name = setlocale(LC_ALL, "");
        printf("child locale %s %.1f\n", name ? name : "(not set)", 1.5);
    }
    if (!strcmp(mode, "idle") || !strcmp(mode, "misuse")) {
        if (!strcmp(mode, "misuse"))
            livetrack_report_misuse("test: a misused call");
        printf("child line 0\n");
        return atoi(argv[3]);
    }
    leaked_count = atoi(argv[2]);
    if (interleaved && (printf("child output before any object\n") < 0 || fflush(stdout) != 0))
        exit(125);
    for (int i = 0; i < leaked_count; i++) {
        leak(0x100 + (uint64_t)i * 16);
        if (interleaved && (printf("child output after object %d\n", i) < 0 || fflush(stdout) != 0))
            exit(125);
    }
    leak(0x9000);
    livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0x9000, NULL, NULL);
    if (!strcmp(mode, "leaks-misuse"))
        livetrack_report_misuse("test: a misused call");
    if (!strcmp(mode, "atexit"))
        atexit(release_at_exit);
    printf("child line %d\n", line_leak);
    if (stdout_held)
        start_stream_holder(stdout);
    if (stderr_held)
        start_stream_holder(stderr);
    return atoi(argv[3]);
}

static char dir[] = "/tmp/livetrack-report-exit-XXXXXX";

/* The text report's last line for the child's one leak ("child 1 ..."). */
static const char one_leak_total[] = "livetrack: total: 1 leaked object, 256 bytes (256 bytes), from 1 call site";

static void run(const char *leaks, const char *status, const char *extra, const char *const *set, rt_child *out)
{
    char *argv[] = {(char *)rt_self(), "child", (char *)leaks, (char *)status, (char *)extra, NULL};
    CHECK_EQ_INT(rt_run(argv, set, NULL, out), 0);
}

static void expect_status(const rt_child *child, int status, const char *what)
{
    const char *said = strstr(child->out, "child line ");
    if (said)
        line_leak = atoi(said + 11); /* set in the child */
    CHECK_EQ_INT(child->status, status);
    if (child->status != status)
        rt_child_dump(what, child);
    /* The program's buffered output is never lost. */
    CHECK(strstr(child->out, "child line ") != NULL);
}

static void test_exit_code(void)
{
    rt_child child;
    const char *const code[] = {"LIVETRACK_EXIT_CODE=23", NULL};

    run("2", "0", NULL, code, &child);
    expect_status(&child, 23, "leaks, LIVETRACK_EXIT_CODE=23");
    char header[128], where[128];
    snprintf(header, sizeof header, "livetrack: 2 leaked objects (512 bytes) from 1 call site at exit of pid %ld",
             (long)child.pid);
    CHECK_EQ_INT(rt_count_lines(child.err, header), 1);
    snprintf(where, sizeof where, " in leak /");
    CHECK(strstr(child.err, where) != NULL);
    snprintf(where, sizeof where, "test_report_exit.c:%d:", line_leak);
    CHECK(strstr(child.err, where) != NULL);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: total: 2 leaked objects, 512 bytes (512 bytes), from 1 call site"), 1);
    rt_child_free(&child);

    run("2", "7", NULL, code, &child);
    expect_status(&child, 23, "leaks, program status 7, LIVETRACK_EXIT_CODE=23");
    rt_child_free(&child);

    run("0", "0", NULL, code, &child);
    expect_status(&child, 0, "no leaks, LIVETRACK_EXIT_CODE=23");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 0);
    rt_child_free(&child);

    run("0", "7", NULL, code, &child);
    expect_status(&child, 7, "no leaks, program status 7");
    rt_child_free(&child);

    run("2", "0", NULL, NULL, &child);
    expect_status(&child, 0, "leaks, no LIVETRACK_EXIT_CODE");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: total: 2 leaked objects"), 1);
    rt_child_free(&child);

    /* Released by an atexit handler: the report runs after it. */
    run("2", "0", "atexit", code, &child);
    expect_status(&child, 0, "leaks released at exit");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 0);
    rt_child_free(&child);

    /* The text off: the status still says "leaks". */
    const char *const quiet[] = {"LIVETRACK_EXIT_CODE=23", "LIVETRACK_EXIT_REPORT=off", NULL};
    run("2", "0", NULL, quiet, &child);
    expect_status(&child, 23, "LIVETRACK_EXIT_REPORT=off");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 0);
    rt_child_free(&child);

    /* Every leak suppressed: no report, the program's status. */
    char suppressions[256], setting[300];
    snprintf(suppressions, sizeof suppressions, "%s/all.supp", dir);
    CHECK(rt_write_file(suppressions, "# everything of this test\ntype:rx_*\n"));
    snprintf(setting, sizeof setting, "LIVETRACK_SUPPRESSIONS=%s", suppressions);
    const char *const suppressed[] = {"LIVETRACK_EXIT_CODE=23", setting, NULL};
    run("2", "0", NULL, suppressed, &child);
    expect_status(&child, 0, "all leaks suppressed");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 0);
    rt_child_free(&child);
    unlink(suppressions);
}

static void test_outputs(void)
{
    rt_child child;
    char json_setting[300], output_setting[300], path[300];
    snprintf(json_setting, sizeof json_setting, "LIVETRACK_JSON=%s/exit-%%p.json", dir);
    snprintf(output_setting, sizeof output_setting, "LIVETRACK_OUTPUT=%s/report-%%p.txt", dir);

    /* JSON and text, then the exit code: the document is whole. */
    const char *const both[] = {"LIVETRACK_EXIT_CODE=23", json_setting, NULL};
    run("3", "0", NULL, both, &child);
    expect_status(&child, 23, "LIVETRACK_JSON with leaks");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: total: 3 leaked objects"), 1);
    snprintf(path, sizeof path, "%s/exit-%ld.json", dir, (long)child.pid);
    char pid_check[64], line_check[160];
    snprintf(pid_check, sizeof pid_check, "r['process']['pid'] == %ld", (long)child.pid);
    snprintf(line_check, sizeof line_check, "site_lines(r['sites'][0])[0] == ('test_report_exit.c', %d)", line_leak);
    const char *checks[] = {"r['at_exit'] is True", pid_check, line_check, "r['settings']['exit_code'] == 23",
                            "r['summary']['leaked_objects'] == 3 and r['summary']['leaked_bytes'] == 768",
                            "len(r['sites']) == 1 and r['sites'][0]['objects'] == 3", NULL};
    CHECK(rt_check_json(path, checks));
    unlink(path);
    rt_child_free(&child);

    /* JSON without leaks: still written; no text. */
    const char *const json_only[] = {json_setting, NULL};
    run("0", "0", NULL, json_only, &child);
    expect_status(&child, 0, "LIVETRACK_JSON without leaks");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 0);
    snprintf(path, sizeof path, "%s/exit-%ld.json", dir, (long)child.pid);
    const char *empty_checks[] = {"r['summary']['leaked_objects'] == 0 and r['sites'] == []", NULL};
    CHECK(rt_check_json(path, empty_checks));
    unlink(path);
    rt_child_free(&child);

    /* A process that recorded nothing writes no file and no text, even
     * when asked for it always: in a tree that livetrack run armed, a
     * wrapper exits after the program and would replace its report. */
    char output_path[300];
    const char *const idle[] = {json_setting, output_setting, "LIVETRACK_EXIT_REPORT=always",
                                "LIVETRACK_PEAK_REPORT=1", NULL};
    run("0", "0", "idle", idle, &child);
    expect_status(&child, 0, "a process that recorded nothing");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 0);
    snprintf(path, sizeof path, "%s/exit-%ld.json", dir, (long)child.pid);
    snprintf(output_path, sizeof output_path, "%s/report-%ld.txt", dir, (long)child.pid);
    CHECK(access(path, F_OK) != 0);
    CHECK(access(output_path, F_OK) != 0);
    unlink(path);
    unlink(output_path);
    rt_child_free(&child);

    /* A misused call alone is something to say. */
    run("0", "0", "misuse", json_only, &child);
    expect_status(&child, 0, "a process with only a misused call");
    snprintf(path, sizeof path, "%s/exit-%ld.json", dir, (long)child.pid);
    const char *misuse_checks[] = {"r['summary']['misuse_count'] == 1 and r['sites'] == []", "r['peak'] is None",
                                   NULL};
    CHECK(rt_check_json(path, misuse_checks));
    unlink(path);
    rt_child_free(&child);

    /* An unwritable JSON path: one message, the rest as usual. */
    const char *const bad_json[] = {"LIVETRACK_JSON=/nonexistent-livetrack-dir/x.json", NULL};
    run("1", "0", NULL, bad_json, &child);
    expect_status(&child, 0, "unwritable LIVETRACK_JSON");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: cannot write the JSON report to "
                                           "\"/nonexistent-livetrack-dir/x.json\": No such file or directory"),
                 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: total: 1 leaked object,"), 1);
    rt_child_free(&child);

    /* LIVETRACK_MAX_DIAGNOSTICS=0 cuts the misused call's line, not
     * livetrack's word that the JSON was not written and that the
     * suppressions file is missing: a quiet run still learns that its
     * report is not there. */
    const char *const quiet[] = {"LIVETRACK_MAX_DIAGNOSTICS=0", "LIVETRACK_EXIT_REPORT=off",
                                 "LIVETRACK_JSON=/nonexistent-livetrack-dir/x.json",
                                 "LIVETRACK_SUPPRESSIONS=/nonexistent-livetrack-dir/x.supp", NULL};
    run("1", "0", "leaks-misuse", quiet, &child);
    expect_status(&child, 0, "LIVETRACK_MAX_DIAGNOSTICS=0 with unwritable outputs");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: further diagnostics suppressed (LIVETRACK_MAX_DIAGNOSTICS=0)"),
                 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: ERROR: test: a misused call"), 0);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: cannot write the JSON report to "
                                           "\"/nonexistent-livetrack-dir/x.json\": No such file or directory"),
                 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: cannot read the suppressions file "
                                           "\"/nonexistent-livetrack-dir/x.supp\" (LIVETRACK_SUPPRESSIONS): No such "
                                           "file or directory; no leaks are suppressed"),
                 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 3);
    rt_child_free(&child);

    /* A path longer than any file's (the settings keep a copy of at most
     * PATH_MAX bytes): one message, and no JSON, as if unset. */
    static char long_json[PATH_MAX + 64];
    int prefix = snprintf(long_json, sizeof long_json, "LIVETRACK_JSON=%s/", dir);
    memset(long_json + prefix, 'j', sizeof long_json - 1 - (size_t)prefix);
    const char *const too_long[] = {long_json, NULL};
    run("1", "0", NULL, too_long, &child);
    expect_status(&child, 0, "a LIVETRACK_JSON longer than PATH_MAX");
    char too_long_message[128];
    snprintf(too_long_message, sizeof too_long_message, "\" is not a path of at most %d bytes; using the default \"\"",
             PATH_MAX - 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: LIVETRACK_JSON=\""), 1);
    CHECK_EQ_INT(rt_count(child.err, too_long_message), 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: total: 1 leaked object,"), 1);
    CHECK_EQ_INT(rt_count(child.err, "JSON report"), 0); /* not tried */
    rt_child_free(&child);

    /* The message names the file tried: %p expanded. */
    const char *const bad_pid_json[] = {"LIVETRACK_JSON=/nonexistent-livetrack-dir/%p.json", NULL};
    run("1", "0", NULL, bad_pid_json, &child);
    char tried[200];
    snprintf(tried, sizeof tried, "livetrack: cannot write the JSON report to \"/nonexistent-livetrack-dir/%ld.json\"",
             (long)child.pid);
    CHECK_EQ_INT(rt_count_lines(child.err, tried), 1);
    rt_child_free(&child);

    /* LIVETRACK_OUTPUT: the text in the file, nothing on stderr. */
    const char *const to_file[] = {"LIVETRACK_EXIT_CODE=23", output_setting, NULL};
    run("1", "0", NULL, to_file, &child);
    expect_status(&child, 23, "LIVETRACK_OUTPUT");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 0);
    snprintf(path, sizeof path, "%s/report-%ld.txt", dir, (long)child.pid);
    char *text = rt_read_file(path);
    CHECK(text && rt_count_lines(text, one_leak_total));
    free(text);
    unlink(path);
    rt_child_free(&child);

    /* A full disk: the text, the JSON and the timeline each say once that
     * they were not written, and the status is still the leaks'. */
    const char *const full_disk[] = {"LIVETRACK_EXIT_CODE=23", "LIVETRACK_OUTPUT=/dev/full", "LIVETRACK_JSON=/dev/full",
                                     "LIVETRACK_CSV=/dev/full", NULL};
    run("2", "0", NULL, full_disk, &child);
    expect_status(&child, 23, "outputs on a full disk");
    CHECK_EQ_INT(
        rt_count_lines(child.err, "livetrack: writing the report to \"/dev/full\" failed: No space left on device"), 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: writing the JSON report to \"/dev/full\" failed: No space left "
                                           "on device"),
                 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: writing the timeline to \"/dev/full\" failed: No space left on "
                                           "device; no more rows are written"),
                 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 3);
    rt_child_free(&child);

    /* LIVETRACK_EXIT_REPORT=always without leaks. */
    const char *const always[] = {"LIVETRACK_EXIT_REPORT=always", NULL};
    run("0", "0", NULL, always, &child);
    expect_status(&child, 0, "LIVETRACK_EXIT_REPORT=always");
    char header[128];
    snprintf(header, sizeof header, "livetrack: 0 leaked objects (0 bytes) at exit of pid %ld", (long)child.pid);
    CHECK_EQ_INT(rt_count_lines(child.err, header), 1);
    rt_child_free(&child);

    /* LIVETRACK_PEAK_REPORT=1: the peak after the total; without leaks
     * the peak alone. */
    const char *const peak[] = {"LIVETRACK_PEAK_REPORT=1", NULL};
    run("2", "0", NULL, peak, &child);
    expect_status(&child, 0, "LIVETRACK_PEAK_REPORT=1");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: at peak 768 bytes live in 3 objects ("), 1);
    CHECK(strstr(child.err, "livetrack: total:") < strstr(child.err, "livetrack: at peak"));
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: 2 live rx_buffer (512 bytes) created at:"), 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: 1 live rx_buffer (256 bytes) created at:"), 1);
    rt_child_free(&child);
    run("0", "0", NULL, peak, &child);
    expect_status(&child, 0, "LIVETRACK_PEAK_REPORT=1 without leaks");
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: at peak 256 bytes live in 1 object ("), 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: total:"), 0);
    rt_child_free(&child);
}

/* A report path that names the program's own stdout or stderr, which
 * are redirected to files: the program's output stays, the report comes
 * after it whole (the program's buffered stdout is not written over it at
 * exit), and so does a timeline sent there. */
static void test_std_streams(void)
{
    rt_child child;
    char out_path[300], err_path[300], json_path[300];
    snprintf(out_path, sizeof out_path, "%s/std.out", dir);
    snprintf(err_path, sizeof err_path, "%s/std.err", dir);
    snprintf(json_path, sizeof json_path, "%s/std.json", dir);
    char *argv[] = {(char *)rt_self(), "child", "1", "0", "std-files", out_path, err_path, NULL};

    /* ./program >std.out 2>std.err with the text on stderr, the JSON on
     * stdout and the timeline on stderr too. */
    const char *const split[] = {"LIVETRACK_OUTPUT=/dev/stderr", "LIVETRACK_JSON=/dev/stdout",
                                 "LIVETRACK_CSV=/proc/self/fd/2", NULL};
    CHECK_EQ_INT(rt_run(argv, split, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);
    char *out = rt_read_file(out_path), *err = rt_read_file(err_path);
    CHECK(out && err);
    if (out && err) {
        /* stdout: the program's line, then the JSON document alone */
        CHECK(!strncmp(out, "child line ", 11));
        const char *json = strchr(out, '\n');
        CHECK(json && rt_write_file(json_path, json + 1));
        const char *checks[] = {"r['at_exit'] is True", "r['summary']['leaked_objects'] == 1", NULL};
        CHECK(json && rt_check_json(json_path, checks));
        /* stderr: the program's line, the timeline, the text report */
        CHECK(!strncmp(err, "child stderr line\n", 18));
        CHECK_EQ_INT(rt_count_lines(err, "seq,time_ms,event,"), 1);
        CHECK_EQ_INT(rt_count(err, ",create,"), 2);
        char header[128];
        snprintf(header, sizeof header, "livetrack: 1 leaked object (256 bytes) from 1 call site at exit of pid %ld",
                 (long)child.pid);
        CHECK_EQ_INT(rt_count_lines(err, header), 1);
        CHECK_EQ_INT(rt_count_lines(err, one_leak_total), 1);
        const char *rows = strstr(err, "seq,time_ms,"), *report = strstr(err, header);
        CHECK(rows && report && rows < report);
    }
    if (check_failed)
        fprintf(stderr, "stdout:\n%s\nstderr:\n%s\n", out ? out : "(none)", err ? err : "(none)");
    free(out);
    free(err);
    rt_child_free(&child);

    /* ./program >std.out 2>&1 with the text on /dev/fd/1: one file. */
    char *together[] = {(char *)rt_self(), "child", "1", "0", "std-files", out_path, out_path, NULL};
    const char *const text_on_stdout[] = {"LIVETRACK_OUTPUT=/dev/fd/1", NULL};
    CHECK_EQ_INT(rt_run(together, text_on_stdout, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);
    out = rt_read_file(out_path);
    CHECK(out && !strncmp(out, "child stderr line\n", 18));
    CHECK(out && rt_count_lines(out, "child line ") == 1);
    CHECK(out && rt_count_lines(out, "livetrack: total: 1 leaked object,") == 1);
    const char *line = out ? strstr(out, "child line ") : NULL;
    const char *report = out ? strstr(out, "livetrack: 1 leaked object") : NULL;
    CHECK(line && report && line < report);
    free(out);
    rt_child_free(&child);

    /* A regular file of its own is still emptied first. */
    char report_path[300], output_setting[320];
    snprintf(report_path, sizeof report_path, "%s/stale.txt", dir);
    snprintf(output_setting, sizeof output_setting, "LIVETRACK_OUTPUT=%s", report_path);
    CHECK(rt_write_file(report_path, "a stale report\n"));
    const char *const own_file[] = {output_setting, NULL};
    run("1", "0", NULL, own_file, &child);
    expect_status(&child, 0, "LIVETRACK_OUTPUT on an existing file");
    char *text = rt_read_file(report_path);
    CHECK(text && !strncmp(text, "livetrack: 1 leaked object", 26) && !strstr(text, "stale"));
    free(text);
    rt_child_free(&child);
    unlink(out_path);
    unlink(err_path);
    unlink(json_path);
    unlink(report_path);
}

/* A child run with its stdout and stderr on files of this test's
 * directory, NAME.out and NAME.err, and what it wrote there: the modes
 * "child LEAKS 0 MODE OUT ERR" send them there themselves, a shell's
 * redirection does for std_run_argv's own command. */
typedef struct std_run {
    char out_path[300], err_path[300];
    rt_child child;
    char *out, *err; /* NULL: the file is not there */
    int failed_before;
} std_run;

static void std_run_init(std_run *run, const char *name)
{
    snprintf(run->out_path, sizeof run->out_path, "%s/%s.out", dir, name);
    snprintf(run->err_path, sizeof run->err_path, "%s/%s.err", dir, name);
}

/* Runs ARGV with SET and UNSET and checks that it exited with STATUS
 * (one place for the check every run makes; std_run_end shows the run
 * when it fails). */
static void std_run_argv(std_run *run, char *const *argv, const char *const *set, const char *const *unset,
                         int status)
{
    run->failed_before = check_failed;
    CHECK_EQ_INT(rt_run(argv, set, unset, &run->child), 0);
    CHECK_EQ_INT(run->child.status, status);
    run->out = rt_read_file(run->out_path);
    run->err = rt_read_file(run->err_path);
}

/* std_run_init(NAME), then "child LEAKS 0 MODE NAME.out NAME.err" run as
 * std_run_argv runs it. */
static void std_run_child(std_run *run, const char *name, const char *leaks, const char *mode,
                          const char *const *set, const char *const *unset, int status)
{
    std_run_init(run, name);
    char *argv[] = {(char *)rt_self(), "child", (char *)leaks, "0", (char *)mode, run->out_path, run->err_path, NULL};
    std_run_argv(run, argv, set, unset, status);
}

/* After its checks: on a failure since the run, what the child did and
 * both files (a long one by its size); then everything is let go. */
static void std_run_end(std_run *run, const char *what)
{
    if (check_failed != run->failed_before) {
        rt_child_dump(what, &run->child);
        const char *names[] = {"stdout", "stderr"}, *texts[] = {run->out, run->err};
        for (int i = 0; i < 2; i++) {
            if (texts[i] && strlen(texts[i]) > 4096)
                fprintf(stderr, "%s file: %zu bytes\n", names[i], strlen(texts[i]));
            else
                fprintf(stderr, "%s file:\n%s\n", names[i], texts[i] ? texts[i] : "(none)");
        }
    }
    free(run->out);
    free(run->err);
    rt_child_free(&run->child);
    unlink(run->out_path);
    unlink(run->err_path);
}

/* A report on the program's stderr while another thread sits in
 * fgets(stdin), holding stdin's lock: flushing the program's streams
 * before the report must not wait for that lock (fflush(NULL) did, and
 * the process never ended), nor must the flush before
 * LIVETRACK_EXIT_CODE's _exit, which still was fflush(NULL). */
static void test_std_streams_stdin_held(void)
{
    static const struct {
        const char *output, *exit_code;
        int status;
    } cases[] = {{"LIVETRACK_OUTPUT=/dev/stderr", NULL, 0},
                 {NULL, "LIVETRACK_EXIT_CODE=3", 3},
                 {"LIVETRACK_OUTPUT=/dev/stderr", "LIVETRACK_EXIT_CODE=3", 3}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *set[3] = {NULL, NULL, NULL}, **next = set;
        if (cases[i].output)
            *next++ = cases[i].output;
        if (cases[i].exit_code)
            *next = cases[i].exit_code;
        std_run run;
        /* 128 + SIGALRM instead of the case's status: it hung at exit */
        std_run_child(&run, "reader", "1", "stdin-reader", set, NULL, cases[i].status);
        CHECK(run.out && rt_count_lines(run.out, "child line ") == 1);
        CHECK(run.err && !strncmp(run.err, "child stderr line\n", 18));
        CHECK(run.err && rt_count_lines(run.err, one_leak_total) == 1);
        if (check_failed != run.failed_before)
            fprintf(stderr, "%s %s:\n", cases[i].output ? cases[i].output : "",
                    cases[i].exit_code ? cases[i].exit_code : "");
        std_run_end(&run, "a report on stderr with stdin held");
    }
}

/* The default text report (no LIVETRACK_OUTPUT: on stderr) while another
 * thread holds stderr's lock for good: the process still ends, with the
 * report on stderr after the program's line there. (It was written
 * through the program's stderr FILE, whose lock it waited for.) */
static void test_std_streams_stderr_held(void)
{
    const char *const unset[] = {"LIVETRACK_OUTPUT", NULL};
    std_run run;
    /* 128 + SIGALRM instead of 0: it hung at exit */
    std_run_child(&run, "errheld", "1", "stderr-held", NULL, unset, 0);
    CHECK(run.out && rt_count_lines(run.out, "child line ") == 1);
    CHECK(run.err && !strncmp(run.err, "child stderr line\n", 18));
    CHECK(run.err && rt_count_lines(run.err, one_leak_total) == 1);
    std_run_end(&run, "the default report, stderr's lock held");
}

/* A locale whose only change from POSIX is the decimal comma (and the
 * '.' thousands separator) of de_DE, fr_FR, ru_RU ...; its charmap is
 * ASCII, written out here so that no file of the locales package is
 * needed. Returns LOCPATH's directory, which holds it as "comma_test". */
static int make_comma_locale(char *locale_dir, size_t size)
{
    char source[300], charmap[300], output[400];
    snprintf(source, sizeof source, "%s/comma_test.src", dir);
    snprintf(charmap, sizeof charmap, "%s/ascii.charmap", dir);
    snprintf(locale_dir, size, "%s/locales", dir);
    snprintf(output, sizeof output, "%s/comma_test", locale_dir);
    if (!rt_write_file(source, "LC_NUMERIC\ndecimal_point \"<U002C>\"\nthousands_sep \"<U002E>\"\n"
                               "grouping 3;3\nEND LC_NUMERIC\n"))
        return 0;
    char map[128 * 16 + 128] =
        "<code_set_name> LIVETRACK_TEST_ASCII\n<comment_char> %\n<escape_char> /\nCHARMAP\n";
    for (unsigned c = 0; c < 128; c++)
        snprintf(map + strlen(map), sizeof map - strlen(map), "<U%04X> /x%02x\n", c, c);
    snprintf(map + strlen(map), sizeof map - strlen(map), "END CHARMAP\n");
    if (!rt_write_file(charmap, map) || mkdir(locale_dir, 0755) != 0)
        return 0;
    char *argv[] = {LIVETRACK_LOCALEDEF, "-i", source, "-f", charmap, output, NULL};
    rt_child built;
    if (rt_run(argv, NULL, NULL, &built) != 0)
        return 0;
    /* 1: written with warnings (the categories it leaves to POSIX). */
    int ok = built.status <= 1;
    if (!ok)
        rt_child_dump("localedef", &built);
    rt_child_free(&built);
    unlink(source);
    unlink(charmap);
    return ok;
}

static void remove_comma_locale(const char *locale_dir)
{
    char command[400];
    snprintf(command, sizeof command, "rm -rf '%s'", locale_dir);
    CHECK_EQ_INT(system(command), 0);
}

/* Fields of a CSV row without quoted fields. */
static unsigned csv_fields(const char *row, size_t length)
{
    unsigned fields = 1;
    for (size_t i = 0; i < length; i++)
        fields += row[i] == ',';
    return fields;
}

static void test_decimal_comma(void)
{
    char locale_dir[300], locpath[320], csv_setting[320], csv_path[300];
    if (!*LIVETRACK_LOCALEDEF || !make_comma_locale(locale_dir, sizeof locale_dir)) {
        CHECK(!"a decimal-comma locale could be built with localedef (" LIVETRACK_LOCALEDEF ")");
        return;
    }
    int failed_before = check_failed;
    snprintf(locpath, sizeof locpath, "LOCPATH=%s", locale_dir);
    snprintf(csv_path, sizeof csv_path, "%s/timeline.csv", dir);
    snprintf(csv_setting, sizeof csv_setting, "LIVETRACK_CSV=%s", csv_path);
    const char *const comma[] = {locpath, "LC_ALL=comma_test", csv_setting, "LIVETRACK_PEAK_REPORT=1", NULL};
    rt_child child;
    run("6", "0", "locale", comma, &child);
    expect_status(&child, 0, "a decimal-comma locale");
    /* The locale took: else this case checks nothing. */
    CHECK(strstr(child.out, "child locale comma_test 1,5\n") != NULL);

    /* 6 leaks of 256 bytes, 7 live at the peak. */
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: total: 6 leaked objects, 1536 bytes (1.5 KiB), "), 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: at peak 1.8 KiB live in 7 objects ("), 1);
    char peak_line[400];
    CHECK(rt_line_starting(child.err, "livetrack: at peak", 0, peak_line, sizeof peak_line));
    const char *after = strstr(peak_line, " ms after start)");
    CHECK(after && after - peak_line >= 3 && after[-2] == '.' && strchr("0123456789", after[-1]));
    if (check_failed > failed_before)
        rt_child_dump("a decimal-comma locale", &child);

    /* Every row has the header's 21 fields, and time_ms a '.'. */
    char *csv = rt_read_file(csv_path);
    CHECK(csv != NULL);
    unsigned rows = 0;
    for (const char *row = csv; row && *row; rows++) {
        const char *end = strchr(row, '\n');
        size_t length = end ? (size_t)(end - row) : strlen(row);
        CHECK_EQ_INT(csv_fields(row, length), 21);
        const char *time = memchr(row, ',', length);
        size_t digits = time ? strspn(time + 1, "0123456789") : 0;
        if (rows > 0)
            CHECK(digits > 0 && time[1 + digits] == '.' && strspn(time + 2 + digits, "0123456789") == 3);
        row = end ? end + 1 : NULL;
    }
    CHECK_EQ_INT(rows, 1 + 8); /* the header, 7 creates, 1 release */
    if (check_failed > failed_before && csv)
        fprintf(stderr, "---- the timeline:\n%s", csv);
    free(csv);
    unlink(csv_path);
    rt_child_free(&child);
    remove_comma_locale(locale_dir);
}

/* The settings' files after the program overwrote its environment: the
 * first timeline row comes after that, the suppressions file and the
 * reports are read and written at exit. */
static void test_process_title(void)
{
    char json_setting[340], output_setting[340], csv_setting[340], suppressions_setting[340];
    char json_path[300], output_path[300], csv_path[300], suppressions[300];
    snprintf(json_path, sizeof json_path, "%s/title.json", dir);
    snprintf(output_path, sizeof output_path, "%s/title.txt", dir);
    snprintf(csv_path, sizeof csv_path, "%s/title.csv", dir);
    snprintf(suppressions, sizeof suppressions, "%s/title.supp", dir);
    snprintf(json_setting, sizeof json_setting, "LIVETRACK_JSON=%s", json_path);
    snprintf(output_setting, sizeof output_setting, "LIVETRACK_OUTPUT=%s", output_path);
    snprintf(csv_setting, sizeof csv_setting, "LIVETRACK_CSV=%s", csv_path);
    snprintf(suppressions_setting, sizeof suppressions_setting, "LIVETRACK_SUPPRESSIONS=%s", suppressions);
    CHECK(rt_write_file(suppressions, "type:rx_buffer\n"));
    const char *const settings[] = {json_setting, output_setting, csv_setting, suppressions_setting,
                                    "LIVETRACK_EXIT_CODE=23", "LIVETRACK_EXIT_REPORT=always", NULL};
    rt_child child;
    int failed_before = check_failed;
    run("2", "0", "title", settings, &child);
    /* Both leaks suppressed: the program's status, and nothing said. */
    expect_status(&child, 0, "a process title over the environment");
    CHECK(strstr(child.out, "child title set, LIVETRACK_JSON=/") != NULL);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 0);

    char *text = rt_read_file(output_path);
    CHECK(text && rt_count_lines(text, "livetrack: suppressed: 2 objects (512 bytes) by LIVETRACK_SUPPRESSIONS="));
    free(text);
    const char *checks[] = {"r['summary']['leaked_objects'] == 0 and r['summary']['suppressed_objects'] == 2", NULL};
    CHECK(rt_check_json(json_path, checks));
    char *csv = rt_read_file(csv_path);
    CHECK(csv && rt_count_lines(csv, "seq,time_ms,") == 1 && rt_count(csv, ",create,") == 3);
    free(csv);
    if (check_failed > failed_before)
        rt_child_dump("a process title over the environment", &child);
    rt_child_free(&child);
    unlink(json_path);
    unlink(output_path);
    unlink(csv_path);
    unlink(suppressions);
}

/* stdout a pipe whose reader has gone, with the program's line still
 * buffered at exit: the program dies of SIGPIPE in exit()'s flush, and
 * still does with a report on its stderr or on that very pipe (livetrack
 * flushes the stream first, inside its own SIGPIPE guard, and before this
 * the status became 0). A program that ignores SIGPIPE keeps its own. */
static void test_std_streams_broken_pipe(void)
{
    static const struct {
        const char *setting, *sigpipe;
        int status;
    } cases[] = {{"LIVETRACK_OUTPUT=/dev/stderr", "default", 128 + SIGPIPE},
                 {"LIVETRACK_OUTPUT=/dev/stdout", "default", 128 + SIGPIPE},
                 {"LIVETRACK_JSON=/dev/stdout", "default", 128 + SIGPIPE},
                 {"LIVETRACK_OUTPUT=/dev/stdout", "ignore", 0}};
    char err_path[300];
    snprintf(err_path, sizeof err_path, "%s/broken.err", dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rt_child child;
        char *argv[] = {(char *)rt_self(), "child", "1", "0", "broken-stdout", err_path, (char *)cases[i].sigpipe,
                        NULL};
        const char *const set[] = {cases[i].setting, NULL};
        int failed_before = check_failed;
        CHECK_EQ_INT(rt_run(argv, set, NULL, &child), 0);
        CHECK_EQ_INT(child.status, cases[i].status);
        char *err = rt_read_file(err_path);
        /* on stderr the report is whole; on the pipe it is lost, and said */
        const char *expected = strstr(cases[i].setting, "stderr") ? "livetrack: total: 1 leaked object, 256 bytes"
                                                                  : ": Broken pipe";
        CHECK(err && strstr(err, expected));
        if (check_failed != failed_before) {
            fprintf(stderr, "%s, SIGPIPE %s:\n", cases[i].setting, cases[i].sigpipe);
            rt_child_dump("stdout a broken pipe", &child);
            fprintf(stderr, "stderr file:\n%s\n", err ? err : "(none)");
        }
        free(err);
        rt_child_free(&child);
    }
    unlink(err_path);
}

/* LIVETRACK_CSV=/dev/stdout, ./program >file, the program writing lines
 * between its objects: the rows, written while it runs, and its lines all
 * stay whole, in the order they were written. (The rows went through a
 * descriptor of livetrack's own, at an offset of its own, and the
 * program's later lines landed on them.) */
static void test_std_streams_timeline_mixed(void)
{
    const char *const set[] = {"LIVETRACK_CSV=/dev/stdout", "LIVETRACK_EXIT_REPORT=off", NULL};
    std_run run;
    std_run_child(&run, "mixed", "3", "interleaved", set, NULL, 0);
    /* 3 leaks, then 0x9000 created and released: 5 rows */
    static const char *const expected[] = {"child output before any object\n",
                                           "seq,time_ms,event,call,api,type,",
                                           "1,",
                                           "child output after object 0\n",
                                           "2,",
                                           "child output after object 1\n",
                                           "3,",
                                           "child output after object 2\n",
                                           "4,",
                                           "5,",
                                           "child line "};
    size_t count = sizeof expected / sizeof expected[0], seen = 0;
    CHECK(run.out != NULL);
    for (const char *line = run.out; line && *line; seen++) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) + 1 : strlen(line);
        if (seen < count) {
            const char *want = expected[seen];
            int whole = want[strlen(want) - 1] == '\n';
            CHECK(whole ? length == strlen(want) && !strncmp(line, want, length) : !strncmp(line, want, strlen(want)));
            if (isdigit((unsigned char)want[0])) /* a row: every field there, whole */
                CHECK_EQ_INT(csv_fields(line, length - 1), 21);
        }
        line += length;
    }
    CHECK_EQ_INT(seen, count);
    std_run_end(&run, "a timeline on stdout among the program's lines");
}

/* LIVETRACK_OUTPUT=/dev/stdout, ./program >file, and another thread
 * holds stdout's lock at exit, so the program's buffered line is left to
 * exit()'s flush, after the report: that line comes after the report,
 * which stays whole (from a descriptor of its own the report was written
 * past fd 1's offset, and the line then over the report's first bytes). */
static void test_std_streams_report_then_late_flush(void)
{
    const char *const set[] = {"LIVETRACK_OUTPUT=/dev/stdout", NULL};
    std_run run;
    std_run_child(&run, "held", "1", "stdout-held", set, NULL, 0);
    const char *out = run.out;
    char header[128];
    snprintf(header, sizeof header, "livetrack: 1 leaked object (256 bytes) from 1 call site at exit of pid %ld\n",
             (long)run.child.pid);
    CHECK(out && !strncmp(out, header, strlen(header)));
    CHECK(out && rt_count_lines(out, one_leak_total) == 1);
    const char *line = out ? strstr(out, "child line ") : NULL;
    CHECK(line && strchr(line, '\n') && !strchr(line, '\n')[1]); /* the last line */
    std_run_end(&run, "a report on stdout, stdout's lock held");
}

/* LIVETRACK_JSON and LIVETRACK_CSV on /dev/stdout, a pipe the program
 * made non-blocking, read slowly: the JSON and every row arrive whole
 * (through a duplicate of fd 1, which shares its O_NONBLOCK, the writes
 * failed with EAGAIN once 64 KiB were in the pipe). */
static void test_std_streams_nonblocking_pipe(void)
{
    char json_path[300];
    snprintf(json_path, sizeof json_path, "%s/nonblock.json", dir);
    const char *const set[] = {"LIVETRACK_JSON=/dev/stdout", "LIVETRACK_CSV=/dev/stdout", "LIVETRACK_EXIT_REPORT=off",
                               NULL};
    std_run run;
    std_run_child(&run, "nonblock", "2000", "nonblocking-stdout", set, NULL, 0); /* once the reader is done too */
    const char *out = run.out;
    CHECK(run.err && !strstr(run.err, "livetrack:"));
    /* the rows (2000 leaks, one object created and released), the
     * program's line, the JSON */
    CHECK(out && rt_count_lines(out, "seq,time_ms,event,") == 1);
    CHECK(out && rt_count(out, ",create,") == 2001 && rt_count(out, ",release,") == 1);
    const char *line = out ? strstr(out, "child line ") : NULL;
    const char *json = line ? strchr(line, '\n') : NULL;
    CHECK(json && rt_write_file(json_path, json + 1));
    const char *checks[] = {"r['summary']['leaked_objects'] == 2000", NULL};
    CHECK(json && rt_check_json(json_path, checks));
    std_run_end(&run, "the JSON and the timeline on a non-blocking stdout pipe");
    unlink(json_path);
}

/* ./program >out with LIVETRACK_OUTPUT=out, the program closing stdout
 * at exit (fclose in an atexit handler, as gnulib's close_stdout does):
 * descriptor 1 is closed when the report is written, and the file is
 * still the program's, not to be emptied (it was: "w" erased the
 * program's output). Named /dev/stdout, /dev/fd/1, /proc/self/fd/1 or
 * /proc/%p/fd/1, which lead nowhere once descriptor 1 is closed, the
 * text report and the JSON still go to that file (the text went to
 * stderr, the JSON nowhere: "No such file or directory"); with `2>&1`
 * too, written at stderr's offset. */
static void test_std_streams_closed_at_exit(void)
{
    static const char *const spellings[] = {NULL /* the file's own path */, "/dev/stdout", "/dev/fd/1",
                                            "/proc/self/fd/1", "/proc/%p/fd/1"};
    static const char *const variables[] = {"LIVETRACK_OUTPUT", "LIVETRACK_JSON"};
    static const char *const redirections[] = {"exec \"$0\" child 1 0 closes-stdout >\"$1\" 2>\"$2\"",
                                               "exec \"$0\" child 1 0 closes-stdout >\"$1\" 2>&1"};
    for (size_t s = 0; s < sizeof spellings / sizeof spellings[0]; s++) {
        for (size_t v = 0; v < 2; v++) {
            for (size_t r = 0; r < 2; r++) {
                std_run run;
                std_run_init(&run, "closed");
                char setting[320], json_path[300];
                snprintf(setting, sizeof setting, "%s=%s", variables[v], spellings[s] ? spellings[s] : run.out_path);
                snprintf(json_path, sizeof json_path, "%s/closed.json", dir);
                /* redirected by a shell, before livetrack is loaded */
                char *argv[] = {"/bin/sh", "-c", (char *)redirections[r], (char *)rt_self(), run.out_path,
                                run.err_path, NULL};
                const char *const set[] = {setting, v ? "LIVETRACK_EXIT_REPORT=off" : NULL, NULL};
                std_run_argv(&run, argv, set, NULL, 0);
                CHECK(run.out && !strncmp(run.out, "child line ", 11));
                if (v == 0) {
                    CHECK(run.out && rt_count_lines(run.out, one_leak_total) == 1);
                    CHECK(!run.err || !strstr(run.err, "livetrack:"));
                } else {
                    const char *json = run.out ? strstr(run.out, "\n{") : NULL;
                    CHECK(json && rt_write_file(json_path, json + 1));
                    const char *checks[] = {"r['summary']['leaked_objects'] == 1", NULL};
                    CHECK(json && rt_check_json(json_path, checks));
                    CHECK(!run.err || !strstr(run.err, "cannot write"));
                    unlink(json_path);
                }
                if (check_failed != run.failed_before)
                    fprintf(stderr, "%s, %s:\n", setting, redirections[r]);
                std_run_end(&run, "a report on the file of a stdout closed at exit");
            }
        }
    }
}

/* LIVETRACK_CSV=/dev/stdout or /proc/self/fd/1, ./program >out, the
 * program closing descriptor 1 before its first object: the timeline,
 * opened at the first row, still goes after the program's line in out
 * (it went nowhere: "cannot write the timeline"). */
static void test_std_streams_timeline_after_close(void)
{
    static const char *const spellings[] = {"LIVETRACK_CSV=/dev/stdout", "LIVETRACK_CSV=/proc/self/fd/1"};
    for (size_t s = 0; s < 2; s++) {
        std_run run;
        std_run_init(&run, "early");
        char *argv[] = {"/bin/sh", "-c", "exec \"$0\" child 1 0 closes-stdout-early >\"$1\" 2>\"$2\"",
                        (char *)rt_self(), run.out_path, run.err_path, NULL};
        const char *const set[] = {spellings[s], "LIVETRACK_EXIT_REPORT=off", NULL};
        std_run_argv(&run, argv, set, NULL, 0);
        const char *out = run.out;
        CHECK(out && !strncmp(out, "child output before any object\nseq,time_ms,event,", 49));
        /* one leak, then 0x9000 created and released */
        CHECK(out && rt_count(out, ",create,") == 2 && rt_count(out, ",release,") == 1);
        CHECK(!run.err || !strstr(run.err, "livetrack:"));
        if (check_failed != run.failed_before)
            fprintf(stderr, "%s:\n", spellings[s]);
        std_run_end(&run, "a timeline on the file of a stdout closed before it");
    }
}

int main(int argc, char **argv)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, T_COUNT);
    if (argc > 3 && !strcmp(argv[1], "child"))
        return child(argc, argv);
    CHECK(mkdtemp(dir) != NULL);
    test_exit_code();
    test_outputs();
    test_std_streams();
    test_std_streams_stdin_held();
    test_std_streams_stderr_held();
    test_std_streams_broken_pipe();
    test_decimal_comma();
    test_process_title();
    test_std_streams_timeline_mixed();
    test_std_streams_report_then_late_flush();
    test_std_streams_nonblocking_pipe();
    test_std_streams_closed_at_exit();
    test_std_streams_timeline_after_close();
    if (!check_failed)
        rmdir(dir);
    return check_summary("test_report_exit");
}
