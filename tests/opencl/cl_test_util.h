/*
 * Helpers shared by the OpenCL layer tests: the platform, device, context
 * and queue; the extension functions; a Report collected into an array;
 * registry look-ups; and running a child process with its output captured.
 *
 * Every test runs through the real ICD loader with
 * OPENCL_LAYERS=<path of liblivetrack_cl.so> (set by CTest) on pocl.
 */
#ifndef LIVETRACK_TESTS_CL_TEST_UTIL_H
#define LIVETRACK_TESTS_CL_TEST_UTIL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
/* The tests call deprecated entry points on purpose (clCreateImage2D,
 * clCreateCommandQueue, clEnqueueMarker, clCreateSampler, ...). */
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_ext_live_object_tracking.h>

#include <errno.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "livetrack/livetrack.h"
#include "check.h"
#include "child_process.h"

/* Stop the test when an OpenCL call that must work fails: later checks
 * would only repeat the failure. */
#define CT_OK(call)                                                                                    \
    do {                                                                                               \
        cl_int ct_err_ = (call);                                                                       \
        if (ct_err_ != CL_SUCCESS) {                                                                   \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)ct_err_);        \
            exit(2);                                                                                   \
        }                                                                                              \
    } while (0)

/* Same for a creation call that reports through `err`. */
#define CT_NEED(expr, err)                                                                             \
    do {                                                                                               \
        if (!(expr) || (err) != CL_SUCCESS) {                                                          \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #expr, (int)(err));          \
            exit(2);                                                                                   \
        }                                                                                              \
    } while (0)

/* ---- platform, device, context, queue ---------------------------------- */

typedef struct ct_env {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
} ct_env;

static inline void ct_get_platform(ct_env *env)
{
    memset(env, 0, sizeof *env);
    cl_uint count = 0;
    CT_OK(clGetPlatformIDs(1, &env->platform, &count));
    CT_OK(clGetDeviceIDs(env->platform, CL_DEVICE_TYPE_ALL, 1, &env->device, NULL));
}

/* Platform, device, context and an in-order queue. */
static inline void ct_setup(ct_env *env)
{
    cl_int err = CL_SUCCESS;
    ct_get_platform(env);
    env->context = clCreateContext(NULL, 1, &env->device, NULL, NULL, &err);
    CT_NEED(env->context, err);
    env->queue = clCreateCommandQueueWithProperties(env->context, env->device, NULL, &err);
    CT_NEED(env->queue, err);
}

static inline void ct_teardown(ct_env *env)
{
    if (env->queue)
        CT_OK(clReleaseCommandQueue(env->queue));
    if (env->context)
        CT_OK(clReleaseContext(env->context));
    env->queue = NULL;
    env->context = NULL;
}

/* Build `source` for the device; prints the build log on failure. */
static inline cl_program ct_build(ct_env *env, const char *source)
{
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(env->context, 1, &source, NULL, &err);
    CT_NEED(program, err);
    err = clBuildProgram(program, 1, &env->device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(program, env->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "clBuildProgram failed: %d\n%s\n", (int)err, log);
        exit(2);
    }
    return program;
}

/* Finish the queue and wait until pocl has dropped its own references on
 * the finished commands (it does that asynchronously, shortly after
 * clFinish returns): until then the driver's reference counts of the
 * context, the queue and the commands' events still move. Waits for the
 * context's and queue's counts to stay the same over 20 ms (at most 2 s).
 * Only a best effort: pocl's thread may be starved for longer on a busy
 * host. A check that compares counts with the driver's runs through
 * ct_until_counts_agree. */
static inline void ct_quiesce(const ct_env *env)
{
    CT_OK(clFinish(env->queue));
    cl_uint last_context = 0, last_queue = 0;
    int stable = 0;
    for (int i = 0; i < 400 && stable < 4; i++) {
        cl_uint context_refs = 0, queue_refs = 0;
        clGetContextInfo(env->context, CL_CONTEXT_REFERENCE_COUNT, sizeof context_refs, &context_refs, NULL);
        clGetCommandQueueInfo(env->queue, CL_QUEUE_REFERENCE_COUNT, sizeof queue_refs, &queue_refs, NULL);
        stable = context_refs == last_context && queue_refs == last_queue ? stable + 1 : 0;
        last_context = context_refs;
        last_queue = queue_refs;
        usleep(5000);
    }
}

static inline double ct_now_s(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* How long ct_until_counts_agree looks again: far beyond any delay of
 * pocl's thread, short of the tests' 60 s limit. */
#define CT_COUNTS_AGREE_WAIT_S 10.0

/* Runs `compare` (a Report checked against the driver's counts, returning
 * how many differ; it prints each difference when `say` is set) until it
 * finds none, each time after ct_quiesce, for up to CT_COUNTS_AGREE_WAIT_S.
 * Returns the differences of the last run, 0 when the counts agreed.
 *
 * A count pocl drops later than ct_quiesce waited (its thread starved on a
 * loaded host, under a sanitizer) moves between the layer's read and the
 * test's, and agrees on a later run; a count the layer gets wrong differs
 * on every run, and the test still fails. */
static inline int ct_until_counts_agree(const ct_env *env, int (*compare)(void *data, int say), void *data)
{
    double deadline = ct_now_s() + CT_COUNTS_AGREE_WAIT_S;
    for (int run = 1;; run++) {
        ct_quiesce(env);
        int last_run = ct_now_s() >= deadline;
        int differences = compare(data, run == 1 || last_run);
        if (!differences) {
            if (run > 1)
                fprintf(stderr, "the counts agreed at report %d\n", run);
            return 0;
        }
        if (last_run) {
            fprintf(stderr, "%d reference count(s) still differ from the driver's after %d reports over %.0f s\n",
                    differences, run, CT_COUNTS_AGREE_WAIT_S);
            return differences;
        }
        if (run == 1)
            fprintf(stderr, "%d reference count(s) differ from the driver's, which may still be letting go of its "
                            "own references: looking again for up to %.0f s\n",
                    differences, CT_COUNTS_AGREE_WAIT_S);
    }
}

/* ---- the extension ----------------------------------------------------- */

typedef struct ct_ext {
    clTrackLiveObjectsIntelFPGA_fn track;
    clReportLiveObjectsIntelFPGA_fn report;
    clTrackLiveObjectsAltera_fn track_altera;
    clReportLiveObjectsAltera_fn report_altera;
} ct_ext;

/* Fetch the four functions for `platform`. Returns 1 when all are there. */
static inline int ct_get_ext(cl_platform_id platform, ct_ext *ext)
{
    ext->track = (clTrackLiveObjectsIntelFPGA_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clTrackLiveObjectsIntelFPGA");
    ext->report = (clReportLiveObjectsIntelFPGA_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clReportLiveObjectsIntelFPGA");
    ext->track_altera =
        (clTrackLiveObjectsAltera_fn)clGetExtensionFunctionAddressForPlatform(platform, "clTrackLiveObjectsAltera");
    ext->report_altera =
        (clReportLiveObjectsAltera_fn)clGetExtensionFunctionAddressForPlatform(platform, "clReportLiveObjectsAltera");
    return ext->track && ext->report && ext->track_altera && ext->report_altera;
}

/* Fetch the extension or stop: nothing else can be tested without it. */
static inline void ct_need_ext(cl_platform_id platform, ct_ext *ext)
{
    if (!ct_get_ext(platform, ext)) {
        fprintf(stderr, "the live-object-tracking functions are missing: is OPENCL_LAYERS=%s the layer?\n",
                getenv("OPENCL_LAYERS") ? getenv("OPENCL_LAYERS") : "(unset)");
        exit(2);
    }
}

/* ---- a Report, collected ----------------------------------------------- */

typedef struct ct_entry {
    void *handle;
    char type_name[40];
    cl_uint refcount;
} ct_entry;

typedef struct ct_report {
    ct_entry *items;
    size_t count, capacity;
    int bad_type_name; /* a NULL type name was passed */
} ct_report;

static inline void ct_report_add(ct_report *report, void *handle, const char *type_name, cl_uint refcount)
{
    if (report->count == report->capacity) {
        size_t capacity = report->capacity ? report->capacity * 2 : 64;
        ct_entry *items = realloc(report->items, capacity * sizeof *items);
        if (!items) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        report->items = items;
        report->capacity = capacity;
    }
    ct_entry *entry = &report->items[report->count++];
    entry->handle = handle;
    entry->refcount = refcount;
    if (!type_name) {
        report->bad_type_name = 1;
        type_name = "(null)";
    }
    snprintf(entry->type_name, sizeof entry->type_name, "%s", type_name);
}

static inline void CL_CALLBACK ct_collect_fn(void *user_data, void *obj_ptr, const char *type_name, cl_uint refcount)
{
    ct_report_add((ct_report *)user_data, obj_ptr, type_name, refcount);
}

/* Run a Report (report_fn from ct_ext) and collect it, in call order. */
static inline void ct_collect(clReportLiveObjectsIntelFPGA_fn report_fn, cl_platform_id platform, ct_report *out)
{
    out->count = 0;
    out->bad_type_name = 0;
    report_fn(platform, ct_collect_fn, out);
}

static inline void ct_report_free(ct_report *report)
{
    free(report->items);
    memset(report, 0, sizeof *report);
}

/* Index of `handle` in the report, or -1. */
static inline long ct_report_find(const ct_report *report, const void *handle)
{
    for (size_t i = 0; i < report->count; i++)
        if (report->items[i].handle == handle)
            return (long)i;
    return -1;
}

/* How many entries of this type name. */
static inline size_t ct_report_count_type(const ct_report *report, const char *type_name)
{
    size_t n = 0;
    for (size_t i = 0; i < report->count; i++)
        n += strcmp(report->items[i].type_name, type_name) == 0;
    return n;
}

/* ---- the registry ------------------------------------------------------ */

static inline uint64_t ct_key(const void *handle) { return (uint64_t)(uintptr_t)handle; }

/* 1 when `handle` is live in the registry; fills *out when not NULL. */
static inline int ct_live(const void *handle, livetrack_object *out)
{
    livetrack_object scratch;
    return livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ct_key(handle), out ? out : &scratch) == LIVETRACK_OK;
}

static inline uint64_t ct_live_count(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.live_objects;
}

static inline uint64_t ct_created_count(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.created;
}

/* Live OpenCL objects of one type name (NULL: all). */
static inline size_t ct_registry_count(const char *type_name)
{
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_OPENCL, NULL);
    size_t n = 0, count = livetrack_snapshot_count(snapshot);
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        if (!type_name || (object->type_name && strcmp(object->type_name, type_name) == 0))
            n++;
    }
    livetrack_snapshot_free(snapshot);
    return n;
}

/* The registry's model held: no handle the driver reused while the
 * registry still thought it live (an object freed behind the API's back),
 * tracking complete, and (when `misuse_expected` is 0) no misuse reported. */
#define ct_check_model(misuse_expected)                                                   \
    do {                                                                                 \
        livetrack_stats model_stats_;                                                    \
        livetrack_get_stats(&model_stats_);                                              \
        CHECK_EQ_INT(model_stats_.replaced, 0);                                          \
        CHECK_EQ_INT(model_stats_.incomplete, 0);                                        \
        if (!(misuse_expected))                                                          \
            CHECK_EQ_INT(model_stats_.misuse, 0);                                        \
    } while (0)

/* Check that `handle` is live with this type and these app references.
 * Prints the caller's line on failure. */
#define CT_EXPECT_LIVE(handle, type, refs_expected)                                                      \
    do {                                                                                                 \
        livetrack_object ct_obj_;                                                                        \
        int ct_found_ = ct_live((handle), &ct_obj_);                                                     \
        CHECK(ct_found_);                                                                                \
        if (ct_found_) {                                                                                 \
            CHECK(ct_obj_.type_name && strcmp(ct_obj_.type_name, (type)) == 0);                          \
            if (!ct_obj_.type_name || strcmp(ct_obj_.type_name, (type)) != 0)                            \
                fprintf(stderr, "  type is \"%s\", expected \"%s\"\n",                                  \
                        ct_obj_.type_name ? ct_obj_.type_name : "(null)", (type));                       \
            CHECK_EQ_INT(ct_obj_.refs, (refs_expected));                                                 \
        }                                                                                                \
    } while (0)

#define CT_EXPECT_GONE(handle) CHECK(!ct_live((handle), NULL))

/* ---- child processes --------------------------------------------------- */

typedef tc_child ct_child;
static inline void ct_child_free(ct_child *child) { tc_child_free(child); }
static inline void ct_append(char **text, size_t *size, const char *data, size_t length)
{
    tc_append(text, size, data, length);
}
/* Run argv[0] (a path) with its stdout and stderr captured, in the
 * caller's environment (LIVETRACK_* included) changed by `set`/`unset`. */
static inline int ct_run(char *const argv[], const char *const *set, const char *const *unset, ct_child *child)
{
    return tc_run(argv, set, unset, 1, child);
}
static inline void ct_child_dump(const char *what, const ct_child *child) { tc_child_dump(what, child); }

/* ---- matching a child's output lines ---- */

typedef struct ct_lines {
    char **lines;
    size_t count;
} ct_lines;

/* The lines of `text` that start with `prefix`, copied. */
static inline ct_lines ct_lines_starting(const char *text, const char *prefix)
{
    ct_lines list = {NULL, 0};
    size_t prefix_length = strlen(prefix);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, prefix, prefix_length) == 0) {
            char **grown = realloc(list.lines, (list.count + 1) * sizeof *list.lines);
            if (!grown)
                exit(2);
            list.lines = grown;
            list.lines[list.count++] = strndup(line, length);
        }
        line = end ? end + 1 : line + length;
    }
    return list;
}

static inline void ct_lines_free(ct_lines *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->lines[i]);
    free(list->lines);
}

/* `word` occurs in `line` as a whole token (no identifier character on
 * either side, so "0x12" does not match inside "0x123"). */
static inline int ct_has_token(const char *line, const char *word)
{
    size_t length = strlen(word);
    for (const char *at = strstr(line, word); at; at = strstr(at + 1, word)) {
        char before = at == line ? ' ' : at[-1], after = at[length];
        int inside = before == '_' || after == '_' || (before >= '0' && before <= '9') ||
                     (after >= '0' && after <= '9') || (before >= 'a' && before <= 'z') ||
                     (after >= 'a' && after <= 'z') || (before >= 'A' && before <= 'Z') || (after >= 'A' && after <= 'Z');
        if (!inside)
            return 1;
    }
    return 0;
}

/* Number of lines of `text` that start with `prefix`. */
static inline size_t ct_count_lines_with_prefix(const char *text, const char *prefix)
{
    size_t n = 0, length = strlen(prefix);
    for (const char *line = text; line && *line;) {
        if (strncmp(line, prefix, length) == 0)
            n++;
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : NULL;
    }
    return n;
}

/* The path of this executable (for re-running itself as a child). */
static inline const char *ct_self_path(void)
{
    static char path[4096];
    ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
    if (length <= 0)
        return NULL;
    path[length] = '\0';
    return path;
}

#endif
