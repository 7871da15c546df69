/*
 * Running a program as a child of a test: a chosen environment, stdout
 * and stderr captured whole. Shared by the test helpers of every suite.
 */
#ifndef LIVETRACK_TESTS_CHILD_PROCESS_H
#define LIVETRACK_TESTS_CHILD_PROCESS_H

#include <errno.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct tc_child {
    char *out, *err; /* NUL-terminated */
    size_t out_size, err_size;
    int status;      /* exit code, or 128 + signal */
    pid_t pid;
    int runs;        /* 2 when tc_run ran it again (see there) */
} tc_child;

static inline void tc_append(char **text, size_t *size, const char *data, size_t length)
{
    char *grown = realloc(*text, *size + length + 1);
    if (!grown) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memcpy(grown + *size, data, length);
    *size += length;
    grown[*size] = '\0';
    *text = grown;
}

static inline void tc_child_free(tc_child *child)
{
    free(child->out);
    free(child->err);
    memset(child, 0, sizeof *child);
}

/* environ without the names in `unset` and the LIVETRACK_* variables
 * (unless keep_livetrack), plus the "NAME=value" strings of `set`; a bare
 * "NAME" in `set` removes that name, as in `unset`. */
static inline char **tc_make_env(const char *const *set, const char *const *unset, int keep_livetrack)
{
    size_t n = 0, extra = 0;
    while (environ[n])
        n++;
    while (set && set[extra])
        extra++;
    char **env = calloc(n + extra + 1, sizeof *env);
    if (!env)
        exit(2);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        int drop = !keep_livetrack && strncmp(environ[i], "LIVETRACK_", 10) == 0;
        const char *const *lists[2] = {set, unset};
        for (int l = 0; l < 2 && !drop; l++) {
            for (size_t j = 0; lists[l] && lists[l][j] && !drop; j++) {
                size_t length = strcspn(lists[l][j], "=");
                drop = strncmp(environ[i], lists[l][j], length) == 0 && environ[i][length] == '=';
            }
        }
        if (!drop)
            env[used++] = environ[i];
    }
    for (size_t j = 0; j < extra; j++)
        if (strchr(set[j], '='))
            env[used++] = (char *)set[j];
    env[used] = NULL;
    return env;
}

/* Run argv[0] (a path) with `set` added to a copy of the environment from
 * which the names in `unset` (and, unless keep_livetrack, every
 * LIVETRACK_* variable) are removed; its stdout and stderr are captured.
 * Returns 0 when it ran; child->status is its exit code, or 128 + signal. */
static inline int tc_run_once(char *const argv[], const char *const *set, const char *const *unset,
                              int keep_livetrack, tc_child *child)
{
    memset(child, 0, sizeof *child);
    int out_pipe[2], err_pipe[2];
    if (pipe(out_pipe) || pipe(err_pipe)) {
        perror("pipe");
        return -1;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
    posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
    posix_spawn_file_actions_addclose(&actions, out_pipe[1]);
    posix_spawn_file_actions_addclose(&actions, err_pipe[1]);
    char **env = tc_make_env(set, unset, keep_livetrack);
    fflush(NULL);
    int rc = posix_spawn(&child->pid, argv[0], &actions, NULL, argv, env);
    posix_spawn_file_actions_destroy(&actions);
    free(env);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (rc != 0) {
        fprintf(stderr, "posix_spawn %s: %s\n", argv[0], strerror(rc));
        close(out_pipe[0]);
        close(err_pipe[0]);
        return -1;
    }
    struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int open_count = 2;
    while (open_count > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buffer[65536];
            ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
            if (got > 0) {
                if (i == 0)
                    tc_append(&child->out, &child->out_size, buffer, (size_t)got);
                else
                    tc_append(&child->err, &child->err_size, buffer, (size_t)got);
            } else if (got == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_count--;
            }
        }
    }
    if (!child->out)
        tc_append(&child->out, &child->out_size, "", 0);
    if (!child->err)
        tc_append(&child->err, &child->err_size, "", 0);
    int status = 0;
    while (waitpid(child->pid, &status, 0) < 0 && errno == EINTR)
        ;
    child->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 0;
}

/* Runs the child; once more when LeakSanitizer's own tracer crashed in it
 * (a known intermittent failure of LSan's stop-the-world at exit,
 * google/sanitizers#1353: "Tracer caught signal 11 ... LeakSanitizer has
 * encountered a fatal error"), which says nothing of the program. Leaks
 * LSan finds ("detected memory leaks") are never retried. */
static inline int tc_run(char *const argv[], const char *const *set, const char *const *unset, int keep_livetrack,
                         tc_child *child)
{
    int rc = tc_run_once(argv, set, unset, keep_livetrack, child);
    if (rc == 0 && child->err && strstr(child->err, "LeakSanitizer has encountered a fatal error")) {
        fprintf(stderr, "note: LeakSanitizer's tracer crashed in %s (a sanitizer flake); running it again\n",
                argv[0]);
        tc_child_free(child);
        rc = tc_run_once(argv, set, unset, keep_livetrack, child);
        child->runs = 2;
        return rc;
    }
    child->runs = 1;
    return rc;
}

static inline void tc_child_dump(const char *what, const tc_child *child)
{
    fprintf(stderr, "---- %s: exit %d, stdout:\n%s---- stderr:\n%s---- end\n", what, child->status, child->out,
            child->err);
}

#endif
