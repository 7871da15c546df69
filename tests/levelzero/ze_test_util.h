/*
 * Helpers the Level Zero tests share: descriptors for every object kind,
 * running a child program with a changed environment, reading files, and
 * capturing this process's stderr.
 */
#ifndef LIVETRACK_ZE_TEST_UTIL_H
#define LIVETRACK_ZE_TEST_UTIL_H

#include <fcntl.h>
#include <ftw.h>
#include <level_zero/ze_api.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child_process.h"

/* The first driver and its first device; exits when there is none. */
static inline void zt_open(ze_driver_handle_t *driver, ze_device_handle_t *device)
{
    uint32_t count = 1;
    if (zeInit(0) != ZE_RESULT_SUCCESS || zeDriverGet(&count, driver) != ZE_RESULT_SUCCESS || count == 0 ||
        zeDeviceGet(*driver, &count, device) != ZE_RESULT_SUCCESS || count == 0) {
        fprintf(stderr, "no Level Zero driver: is ZE_ENABLE_ALT_DRIVERS set to the test driver?\n");
        exit(2);
    }
}

/* ---- descriptors ---------------------------------------------------------- */

static const ze_context_desc_t zt_context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
static const ze_command_queue_desc_t zt_queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                                      .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
static const ze_command_list_desc_t zt_list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
static const ze_event_pool_desc_t zt_pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                                  .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 16};
static const ze_event_desc_t zt_event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 0};
static const ze_fence_desc_t zt_fence_desc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
static const ze_image_desc_t zt_image_desc = {.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC, .type = ZE_IMAGE_TYPE_2D,
                                              .width = 64, .height = 64, .depth = 1};
static const ze_sampler_desc_t zt_sampler_desc = {.stype = ZE_STRUCTURE_TYPE_SAMPLER_DESC};
static const ze_device_mem_alloc_desc_t zt_device_alloc_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
static const ze_host_mem_alloc_desc_t zt_host_alloc_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
static const ze_kernel_desc_t zt_kernel_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "add"};
static const ze_kernel_desc_t zt_missing_kernel_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                                        .pKernelName = "no_such_kernel"};
/* The test driver builds any module except one whose input starts with "fail". */
static const uint8_t zt_module_input[] = "spirv for tests";
static const uint8_t zt_failing_module_input[] = "fail to build";
static const ze_module_desc_t zt_module_desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC, .format = ZE_MODULE_FORMAT_IL_SPIRV,
                                                .inputSize = sizeof zt_module_input, .pInputModule = zt_module_input};
static const ze_module_desc_t zt_failing_module_desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                                                        .format = ZE_MODULE_FORMAT_IL_SPIRV,
                                                        .inputSize = sizeof zt_failing_module_input,
                                                        .pInputModule = zt_failing_module_input};
/* ... and fails with ZE_RESULT_ERROR_INVALID_NATIVE_BINARY (with a build log) when it starts with "invalid". */
static const uint8_t zt_invalid_module_input[] = "invalid binary";
static const ze_module_desc_t zt_invalid_module_desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                                                        .format = ZE_MODULE_FORMAT_NATIVE,
                                                        .inputSize = sizeof zt_invalid_module_input,
                                                        .pInputModule = zt_invalid_module_input};
/* ... builds, but does not link (zeModuleDynamicLink), when it starts with "imports". */
static const uint8_t zt_importing_module_input[] = "imports a function";
static const ze_module_desc_t zt_importing_module_desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                                                          .format = ZE_MODULE_FORMAT_IL_SPIRV,
                                                          .inputSize = sizeof zt_importing_module_input,
                                                          .pInputModule = zt_importing_module_input};
/* The test driver's page size for physical and virtual memory. */
#define ZT_PAGE_SIZE ((size_t)65536)

/* ---- files and processes ---------------------------------------------------- */

/* A fresh directory for this test's files. Exits on failure. */
static inline const char *zt_temp_dir(const char *test_name)
{
    static char path[512];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/livetrack-%s-XXXXXX", base && *base ? base : "/tmp", test_name);
    if (!mkdtemp(path)) {
        perror("mkdtemp");
        exit(2);
    }
    return path;
}

static inline int zt_remove_entry(const char *path, const struct stat *status, int flag, struct FTW *walk)
{
    (void)status;
    (void)flag;
    (void)walk;
    return remove(path);
}

/* Remove a directory zt_temp_dir() made, with what is in it. */
static inline void zt_remove_dir(const char *path) { nftw(path, zt_remove_entry, 8, FTW_DEPTH | FTW_PHYS); }

/* The whole file, NUL-terminated (free it), or NULL. */
static inline char *zt_read_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    size_t capacity = 4096, size = 0;
    char *text = malloc(capacity);
    size_t got;
    while (text && (got = fread(text + size, 1, capacity - size - 1, file)) > 0) {
        size += got;
        if (capacity - size - 1 == 0) {
            char *bigger = realloc(text, capacity * 2);
            if (!bigger) {
                free(text);
                text = NULL;
                break;
            }
            text = bigger;
            capacity *= 2;
        }
    }
    fclose(file);
    if (text)
        text[size] = '\0';
    return text;
}

/* How many times `needle` occurs in `text`. */
static inline size_t zt_count(const char *text, const char *needle)
{
    size_t count = 0, length = strlen(needle);
    for (const char *at = text ? strstr(text, needle) : NULL; at; at = strstr(at + length, needle))
        count++;
    return count;
}

/* Run argv[0] with this process's environment changed by `changes`
 * ("NAME=value" sets, "NAME" alone removes), stdout and stderr to the
 * files named (NULL: inherit). Returns the exit status, 128 + the signal
 * that killed it, or -1 when it could not run. */
static inline int zt_run(char *const argv[], const char *const changes[], const char *stdout_path,
                         const char *stderr_path)
{
    char **env = tc_make_env(changes, NULL, 1);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (stdout_path)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (stderr_path)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int spawned = posix_spawn(&pid, argv[0], &actions, NULL, argv, env);
    posix_spawn_file_actions_destroy(&actions);
    free(env);
    if (spawned != 0)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Capture what this process writes to stderr between begin and end. */
typedef struct zt_stderr_capture {
    int saved;
    char path[512];
} zt_stderr_capture;

static inline void zt_capture_stderr_begin(zt_stderr_capture *capture, const char *directory)
{
    static unsigned serial;
    snprintf(capture->path, sizeof capture->path, "%s/stderr-%u.txt", directory, serial++);
    fflush(stderr);
    capture->saved = dup(STDERR_FILENO);
    int file = open(capture->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (file >= 0) {
        dup2(file, STDERR_FILENO);
        close(file);
    }
}

/* What was written (free it). */
static inline char *zt_capture_stderr_end(zt_stderr_capture *capture)
{
    fflush(stderr);
    dup2(capture->saved, STDERR_FILENO);
    close(capture->saved);
    char *text = zt_read_file(capture->path);
    return text ? text : calloc(1, 1);
}

#endif
