/*
 * Helpers of the reliability tests: run this very program again in a
 * child process with extra environment (settings are read once at start,
 * so every scenario needs a fresh process), wait for it with a deadline
 * (a hang must fail the test, not stall it), and read the files it left.
 *
 * Each test is one executable: with no arguments it is the driver, which
 * runs itself as `prog <role> [args]` for each scenario.
 */
#ifndef LIVETRACK_TESTS_REL_UTIL_H
#define LIVETRACK_TESTS_REL_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* What a child did. */
typedef struct rel_run {
    pid_t pid;
    int status;    /* as from waitpid */
    int timed_out; /* killed after the deadline */
    char *out;     /* its stdout, NUL-terminated (malloc'd) */
    char *err;     /* its stderr */
} rel_run;

static inline char *rel_read_fd(int fd)
{
    size_t size = 0, capacity = 4096;
    char *text = malloc(capacity);
    if (!text)
        abort();
    for (;;) {
        if (size + 1024 > capacity) {
            capacity *= 2;
            text = realloc(text, capacity);
            if (!text)
                abort();
        }
        ssize_t got = read(fd, text + size, capacity - size - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size += (size_t)got;
    }
    text[size] = '\0';
    return text;
}

/* The whole file, or NULL when it cannot be read. */
static inline char *rel_read_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *text = rel_read_fd(fd);
    close(fd);
    return text;
}

static inline int rel_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static inline size_t rel_count(const char *text, const char *needle)
{
    size_t count = 0, length = strlen(needle);
    if (!text || !length)
        return 0;
    for (const char *at = strstr(text, needle); at; at = strstr(at + length, needle))
        count++;
    return count;
}

static inline size_t rel_lines(const char *text)
{
    size_t count = 0;
    for (; text && *text; text++)
        count += *text == '\n';
    return count;
}

/* Run `argv` (argv[0] a path) with `env` ("NAME=value" entries added to
 * this process's environment; "NAME=" with nothing after removes NAME),
 * capturing stdout and stderr into files (no pipe can fill up and block
 * the child). Kill it after `timeout_s` seconds. */
static inline rel_run rel_spawn(char *const argv[], const char *const env[], int timeout_s)
{
    rel_run run;
    memset(&run, 0, sizeof run);
    char out_path[] = "/tmp/livetrack-rel-out-XXXXXX", err_path[] = "/tmp/livetrack-rel-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    if (out_fd < 0 || err_fd < 0)
        abort();
    unlink(out_path);
    unlink(err_path);
    fflush(NULL);
    run.pid = fork();
    if (run.pid == 0) {
        dup2(out_fd, STDOUT_FILENO);
        dup2(err_fd, STDERR_FILENO);
        for (size_t i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            if (!eq)
                continue;
            char name[256];
            size_t length = (size_t)(eq - env[i]) < sizeof name - 1 ? (size_t)(eq - env[i]) : sizeof name - 1;
            memcpy(name, env[i], length);
            name[length] = '\0';
            if (eq[1])
                setenv(name, eq + 1, 1);
            else
                unsetenv(name);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    if (run.pid < 0)
        abort();
    struct timespec start, now, nap = {0, 2 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        pid_t done = waitpid(run.pid, &run.status, WNOHANG);
        if (done == run.pid)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= timeout_s) {
            run.timed_out = 1;
            kill(run.pid, SIGKILL);
            waitpid(run.pid, &run.status, 0);
            break;
        }
        nanosleep(&nap, NULL);
    }
    lseek(out_fd, 0, SEEK_SET);
    lseek(err_fd, 0, SEEK_SET);
    run.out = rel_read_fd(out_fd);
    run.err = rel_read_fd(err_fd);
    close(out_fd);
    close(err_fd);
    return run;
}

static inline void rel_run_free(rel_run *run)
{
    free(run->out);
    free(run->err);
    run->out = run->err = NULL;
}

/* "exit 0", "signal 11 (SIGSEGV)", "timed out". */
static inline const char *rel_describe(const rel_run *run, char *buffer, size_t size)
{
    if (run->timed_out)
        snprintf(buffer, size, "timed out (hung)");
    else if (WIFEXITED(run->status))
        snprintf(buffer, size, "exit %d", WEXITSTATUS(run->status));
    else if (WIFSIGNALED(run->status))
        snprintf(buffer, size, "signal %d (%s)", WTERMSIG(run->status), strsignal(WTERMSIG(run->status)));
    else
        snprintf(buffer, size, "status 0x%x", run->status);
    return buffer;
}

/* Print what a child said when a check about it failed. */
static inline void rel_dump(const char *what, const rel_run *run)
{
    char status[96];
    fprintf(stderr, "---- %s: %s\n---- stdout:\n%s---- stderr:\n%s----\n", what, rel_describe(run, status, sizeof status),
            run->out ? run->out : "", run->err ? run->err : "");
}

static inline int rel_exited(const rel_run *run, int code)
{
    return !run->timed_out && WIFEXITED(run->status) && WEXITSTATUS(run->status) == code;
}

static inline int rel_killed_by(const rel_run *run, int signal_number)
{
    return !run->timed_out && WIFSIGNALED(run->status) && WTERMSIG(run->status) == signal_number;
}

/* This program's own path, for running itself. */
static inline const char *rel_self(void)
{
    static char path[4096];
    if (!path[0]) {
        ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
        if (length <= 0)
            abort();
        path[length] = '\0';
    }
    return path;
}

/* A fresh directory under /tmp for a test's files. */
static inline const char *rel_tmpdir(const char *name)
{
    static char dir[256];
    snprintf(dir, sizeof dir, "/tmp/livetrack-%s-XXXXXX", name);
    if (!mkdtemp(dir))
        abort();
    return dir;
}

static inline void rel_rmdir(const char *dir)
{
    char command[512];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* kB from a "Name:  1234 kB" line of /proc/self/status. */
static inline long rel_status_kb(const char *field)
{
    char *text = rel_read_file("/proc/self/status");
    long value = -1;
    const char *at = text ? strstr(text, field) : NULL;
    if (at)
        value = strtol(at + strlen(field), NULL, 10);
    free(text);
    return value;
}

/* No core files from children that crash on purpose (unless
 * REL_KEEP_CORE is set, to debug one). */
static inline void rel_no_core(void)
{
    struct rlimit limit = {0, 0};
    if (!getenv("REL_KEEP_CORE"))
        setrlimit(RLIMIT_CORE, &limit);
}

static inline uint64_t rel_rnd(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
