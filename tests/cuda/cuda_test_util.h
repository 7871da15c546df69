/*
 * Helpers for the CUDA front end's driver-API tests (header only). They
 * read the registry through the public API, as any program may: object
 * types by name, handles as the reports show them.
 */
#ifndef LIVETRACK_TESTS_CUDA_TEST_UTIL_H
#define LIVETRACK_TESTS_CUDA_TEST_UTIL_H

#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "livetrack/livetrack.h"

#define CUDA_TEST_HANDLE(value) ((uint64_t)(uintptr_t)(value))

/* The registry key of a handle. Texture and surface objects, physical
 * memory and address reservations carry 0x80 | type in the top byte
 * (docs/cuda.md); this finds the type number from its name. */
__attribute__((unused)) static uint64_t cuda_key(const char *type_name, uint64_t handle)
{
    static const char *const tagged[] = {"CUtexObject", "CUsurfObject", "va_reservation",
                                         "CUmemGenericAllocationHandle"};
    for (size_t t = 0; t < sizeof tagged / sizeof tagged[0]; t++) {
        if (strcmp(tagged[t], type_name))
            continue;
        for (unsigned type = 0; type < LIVETRACK_MAX_TYPES; type++) {
            const char *name = livetrack_type_name(LIVETRACK_DOMAIN_CUDA, type);
            if (name && !strcmp(name, type_name))
                return handle ^ ((uint64_t)(0x80u | type) << 56);
        }
    }
    return handle;
}

/* The file name of the module holding `function` ("(none)" if no module
 * does): tells a livetrack wrapper from the driver's own function. */
__attribute__((unused)) static const char *cuda_module_of(const void *function)
{
    static char name[256];
    Dl_info info;
    if (!function || !dladdr(function, &info) || !info.dli_fname)
        return "(none)";
    snprintf(name, sizeof name, "%s", info.dli_fname);
    return basename(name);
}

/* The handle a registry key names: tagged keys (top bit set) lose their
 * tag byte. For processes that do not know the type numbers. */
__attribute__((unused)) static uint64_t cuda_untag(uint64_t key)
{
    return (key >> 63) ? key & (((uint64_t)1 << 56) - 1) : key;
}

/* The live object `handle` if it is a `type_name`, else 0. */
__attribute__((unused)) static int cuda_live(const char *type_name, uint64_t handle, livetrack_object *out)
{
    livetrack_object object;
    if (livetrack_lookup(LIVETRACK_DOMAIN_CUDA, cuda_key(type_name, handle), &object) != LIVETRACK_OK)
        return 0;
    if (!object.type_name || strcmp(object.type_name, type_name))
        return 0;
    if (out)
        *out = object;
    return 1;
}

/* References the program holds on it, 0 when not live. */
__attribute__((unused)) static uint32_t cuda_refs(const char *type_name, uint64_t handle)
{
    livetrack_object object;
    return cuda_live(type_name, handle, &object) ? object.refs : 0;
}

__attribute__((unused)) static uint64_t cuda_misuse_count(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.misuse;
}

/* CUDA objects live now. */
__attribute__((unused)) static size_t cuda_live_count(void)
{
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_CUDA, NULL);
    size_t count = livetrack_snapshot_count(snapshot);
    livetrack_snapshot_free(snapshot);
    return count;
}

/* Start capturing this process's stderr into a temporary file; the end
 * call restores it and returns what was written (free() it). */
typedef struct cuda_capture {
    FILE *file;
    int saved;
} cuda_capture;

__attribute__((unused)) static void cuda_capture_begin(cuda_capture *capture)
{
    fflush(stderr);
    capture->file = tmpfile();
    capture->saved = dup(2);
    if (capture->file && capture->saved >= 0)
        dup2(fileno(capture->file), 2);
}

__attribute__((unused)) static char *cuda_capture_end(cuda_capture *capture)
{
    fflush(stderr);
    if (!capture->file || capture->saved < 0)
        return calloc(1, 1);
    dup2(capture->saved, 2);
    close(capture->saved);
    long size = ftell(capture->file);
    char *text = calloc((size_t)(size > 0 ? size : 0) + 1, 1);
    rewind(capture->file);
    if (text && size > 0 && fread(text, 1, (size_t)size, capture->file) != (size_t)size)
        text[0] = '\0';
    fclose(capture->file);
    /* Show it too: a failing test's log should have it. */
    if (text)
        fputs(text, stderr);
    return text ? text : calloc(1, 1);
}

/* How often `needle` occurs in `text`. */
__attribute__((unused)) static int cuda_count(const char *text, const char *needle)
{
    int count = 0;
    for (const char *at = text; (at = strstr(at, needle)); at += strlen(needle))
        count++;
    return count;
}

/* Start `argv` with `environment` (NULL-terminated "NAME=value" strings;
 * a "NAME=" entry unsets NAME) added to ours; its stdout and stderr go to
 * the files named. Returns its pid, or -1. */
__attribute__((unused)) static pid_t cuda_start(char *const argv[], const char *const environment[],
                                                const char *out_path, const char *err_path)
{
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child == 0) {
        for (size_t i = 0; environment && environment[i]; i++) {
            char name[256];
            const char *equals = strchr(environment[i], '=');
            size_t length = equals ? (size_t)(equals - environment[i]) : strlen(environment[i]);
            if (length >= sizeof name)
                _exit(126);
            memcpy(name, environment[i], length);
            name[length] = '\0';
            if (equals && equals[1])
                setenv(name, equals + 1, 1);
            else
                unsetenv(name);
        }
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out < 0 || err < 0)
            _exit(126);
        dup2(out, 1);
        dup2(err, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    return child;
}

/* cuda_start, then wait: returns the exit status (128 + signal), or -1. */
__attribute__((unused)) static int cuda_run(char *const argv[], const char *const environment[], const char *out_path,
                                            const char *err_path)
{
    pid_t child = cuda_start(argv, environment, out_path, err_path);
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A whole file, NUL-terminated (free() it); NULL when unreadable. */
__attribute__((unused)) static char *cuda_read_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    rewind(file);
    char *text = calloc((size_t)(size > 0 ? size : 0) + 1, 1);
    if (text && size > 0 && fread(text, 1, (size_t)size, file) != (size_t)size)
        text[0] = '\0';
    fclose(file);
    return text;
}

#endif
