/*
 * The GPU test: cuda_gpu_leaky (a CUDA runtime program, built with nvcc)
 * under each attach mode, on a real driver and GPU:
 *
 *   CUPTI          CUDA_INJECTION64_PATH=liblivetrack_cuda.so
 *   interposition  LD_PRELOAD=liblivetrack_cuda.so
 *
 * In each, the text and JSON exit reports must list exactly the objects
 * the program leaked (it prints them), with their types, sizes and
 * cuda_gpu_leaky.cu:line, and nothing the runtime made for itself (its
 * primary context, the kernel's module), and no misuse: the program
 * uses every API correctly. Both reports are printed.
 *
 * Exits 77 (ctest's SKIP_RETURN_CODE) with the reason on stdout when the
 * program was not built (no nvcc) or finds no usable GPU.
 *
 * The same program is built twice: with the shared runtime (libcudart.so)
 * and with the static one (nvcc's default: the runtime is inside the
 * program, so neither its frames nor its symbols are libcudart's).
 *
 * Memory shared between processes: the program started as "share"
 * (without livetrack) exports three allocations, and started as "open"
 * under livetrack maps them and leaks two mappings, one of them opened
 * twice and closed once. The report must list those two with the
 * exporter's sizes, which the IPC handle does not carry.
 *
 * Threads: the program started as "threads" makes and frees objects on
 * eight threads at once, then each leaks two; the reports must list
 * exactly those sixteen, with no misuse.
 *
 * cudaDeviceReset: the program started as "reset" makes four objects,
 * never frees them, resets the device (which frees them with the primary
 * context), and leaks one allocation made after. Each of the four must be
 * reported as going with the context, and the exit report must list only
 * the one leak.
 *
 * Usage: cuda_gpu_check <cuda_gpu_leaky> <liblivetrack_cuda.so> [<cuda_gpu_leaky_static>]
 */
#include <signal.h>

#include "cuda_leak_manifest.h"
#include "cuda_report_checks.h"

#define SKIPPED 77

static char out_path[256], err_path[256], report_path[256], handles_path[256], timeline_path[256];

/* A refused cuMemAddressFree (the program says so) is undone by putting
 * the same reservation back: a `restore` row, and no second `create`
 * (which is how it was undone before livetrack_restore). */
static void check_refused_free(const char *manifest)
{
    if (!strstr(manifest, "refused cuMemAddressFree 0x"))
        return; /* the driver took the wrong size: nothing to check */
    char *timeline = cuda_read_file(timeline_path);
    CHECK(timeline != NULL);
    if (!timeline)
        return;
    CHECK_EQ_INT(cuda_count(timeline, ",restore,cuMemAddressFree,"), 1);
    CHECK_EQ_INT(cuda_count(timeline, ",create,cuMemAddressFree,"), 0);
    free(timeline);
}

/* "dropped <type> 0x<handle> <bytes>" lines: objects cudaDeviceReset took
 * with the primary context. Each must be named as going with the context
 * (it is the program's misuse: it never freed them). Returns how many. */
static size_t check_dropped(const char *manifest, const char *text)
{
    size_t dropped = 0;
    for (const char *line = manifest; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char type[64], expected[160];
        unsigned long long handle, bytes;
        if (sscanf(line, "dropped %63s %llx %llu", type, &handle, &bytes) != 3)
            continue;
        dropped++;
        snprintf(expected, sizeof expected, "%s 0x%llx (%llu bytes), never freed, goes with context", type, handle,
                 bytes);
        if (!text || !strstr(text, expected))
            fprintf(stderr, "the report does not say: %s\n", expected);
        CHECK(text && strstr(text, expected));
    }
    return dropped;
}

static void check_no_misuse_in_json(const char *path)
{
    char error[256];
    json_document *document = json_parse_file(path, error, sizeof error);
    if (document) {
        CHECK_EQ_INT(json_int(json_path(json_root(document), "summary.misuse_count"), -1), 0);
        json_free(document);
    }
}

/* Run child[] (the program and its arguments) in `mode`; it must leak at
 * least `least_leaks` objects, and the reports must list exactly those. */
static int run_mode(const char *mode, char *const child[], const char *library, size_t least_leaks)
{
    const char *program = child[0];
    char preload[1024], inject[1024], json_setting[300], csv_setting[300];
    int cupti = !strcmp(mode, "CUPTI");
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", cupti ? "" : library);
    snprintf(inject, sizeof inject, "CUDA_INJECTION64_PATH=%s", cupti ? library : "");
    snprintf(json_setting, sizeof json_setting, "LIVETRACK_JSON=%s", report_path);
    snprintf(csv_setting, sizeof csv_setting, "LIVETRACK_CSV=%s", timeline_path);
    const char *environment[] = {preload, inject, json_setting, csv_setting, "LIVETRACK_EXIT_REPORT=always",
                                 "LIVETRACK_OUTPUT=", NULL};
    unlink(report_path); /* the last run's must not pass for this one's */
    unlink(timeline_path);
    int status = cuda_run(child, environment, out_path, err_path);
    char *manifest = cuda_read_file(out_path), *text = cuda_read_file(err_path);
    printf("==== %s%s%s, %s mode (%s): exit status %d\n---- stdout:\n%s---- stderr (the report):\n%s", program,
           child[1] ? " " : "", child[1] ? child[1] : "", mode, cupti ? inject : preload, status,
           manifest ? manifest : "", text ? text : "");
    char *json = cuda_read_file(report_path);
    printf("---- JSON report:\n%s\n", json ? json : "(none)");
    free(json);
    fflush(stdout);

    CHECK_EQ_INT(status, 0);
    cuda_leaks leaks;
    CHECK(manifest && cuda_parse_leaks(manifest, &leaks) && leaks.count >= least_leaks);
    if (manifest && text && leaks.count) {
        /* Attached as asked: CUPTI subscribed (no fallback message). */
        CHECK(strstr(text, "CUPTI cannot be used") == NULL);
        cuda_check_text_report(text, &leaks, "cuda_gpu_leaky.cu");
        cuda_check_json_report(report_path, &leaks, "cuda_gpu_leaky.cu");
        CHECK(strstr(text, "leaked CUcontext") == NULL);
        CHECK(strstr(text, "leaked CUmodule") == NULL);
        CHECK(strstr(text, "leaked CUlibrary") == NULL);
        /* A reset's objects are the program's misuse; nothing else is. */
        if (!check_dropped(manifest, text)) {
            CHECK(strstr(text, "misused call") == NULL);
            check_no_misuse_in_json(report_path);
        }
        check_refused_free(manifest);
    }
    free(manifest);
    free(text);
    return status;
}

/* The program as "share", without livetrack, in the background; it
 * writes its handles to handles_path and waits for the file to go. */
static pid_t start_exporter(char *program, const char *out_path, const char *err_path)
{
    char *child[] = {program, "share", handles_path, NULL};
    const char *without_livetrack[] = {"LD_PRELOAD=", "CUDA_INJECTION64_PATH=", NULL};
    return cuda_start(child, without_livetrack, out_path, err_path);
}

/* IPC: the handles of memory another process shares, mapped and leaked
 * under livetrack by each build of the program, in both modes. */
static void run_shared_memory(char *const programs[], size_t program_count, const char *library,
                              const char *directory)
{
    char log_path[300], error_path[300];
    snprintf(log_path, sizeof log_path, "%s/exporter.out", directory);
    snprintf(error_path, sizeof error_path, "%s/exporter.err", directory);
    pid_t exporter = start_exporter(programs[0], log_path, error_path);
    CHECK(exporter > 0);
    char *handles = NULL;
    int status = -1, exited = 0;
    for (int waited_ms = 0; exporter > 0 && waited_ms < 60000 && !handles && !exited; waited_ms += 10) {
        if (!access(handles_path, F_OK))
            handles = cuda_read_file(handles_path);
        else if (waitpid(exporter, &status, WNOHANG) == exporter)
            exited = 1; /* before writing its handles */
        else
            usleep(10000);
    }
    CHECK(handles != NULL && strcmp(handles, "failed") != 0);
    if (handles && strcmp(handles, "failed")) {
        for (size_t p = 0; p < program_count; p++) {
            char *child[] = {programs[p], "open", handles, NULL};
            run_mode("CUPTI", child, library, 2);
            run_mode("interposition", child, library, 2);
        }
    }
    free(handles);
    unlink(handles_path); /* the exporter frees its memory and exits */
    /* One that hangs (or never wrote its handles) is stopped, so that
     * the test fails with its log instead of timing out without it. */
    for (int waited_ms = 0; exporter > 0 && !exited && waited_ms < 30000; waited_ms += 10) {
        if (waitpid(exporter, &status, WNOHANG) == exporter)
            exited = 1;
        else
            usleep(10000);
    }
    if (exporter > 0 && !exited) {
        kill(exporter, SIGKILL);
        exited = waitpid(exporter, &status, 0) == exporter;
    }
    if (exited)
        status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char partial[300];
    snprintf(partial, sizeof partial, "%s.partial", handles_path);
    unlink(partial);
    char *log = cuda_read_file(log_path), *errors = cuda_read_file(error_path);
    printf("==== %s share (without livetrack): exit status %d\n%s%s", programs[0], status, log ? log : "",
           errors ? errors : "");
    free(log);
    free(errors);
    CHECK_EQ_INT(status, 0);
    unlink(log_path);
    unlink(error_path);
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s <cuda_gpu_leaky> <liblivetrack_cuda.so> [<cuda_gpu_leaky_static>]\n", argv[0]);
        return 2;
    }
    if (access(argv[1], X_OK)) {
        printf("SKIP: %s was not built: nvcc was not found when livetrack was configured "
               "(tests/cuda/gpu/run.sh builds and runs it by hand)\n",
               argv[1]);
        return SKIPPED;
    }
    char directory[] = "/tmp/livetrack-cuda-gpu.XXXXXX";
    if (!mkdtemp(directory))
        return 1;
    snprintf(out_path, sizeof out_path, "%s/stdout", directory);
    snprintf(err_path, sizeof err_path, "%s/stderr", directory);
    snprintf(report_path, sizeof report_path, "%s/report.json", directory);
    snprintf(handles_path, sizeof handles_path, "%s/handles", directory);
    snprintf(timeline_path, sizeof timeline_path, "%s/timeline.csv", directory);

    /* Without livetrack first: is there a GPU at all? */
    const char *plain[] = {"LD_PRELOAD=", "CUDA_INJECTION64_PATH=", NULL};
    char *child[] = {argv[1], NULL};
    int status = cuda_run(child, plain, out_path, err_path);
    if (status == SKIPPED) {
        char *reason = cuda_read_file(out_path);
        printf("%s", reason ? reason : "SKIP: no usable GPU\n");
        free(reason);
        unlink(out_path);
        unlink(err_path);
        rmdir(directory);
        return SKIPPED;
    }
    CHECK_EQ_INT(status, 0);
    /* Seven from the runtime calls, and an imported physical memory
     * handle where the device can share memory through a descriptor. */
    const size_t least_leaks = 7;
    run_mode("CUPTI", child, argv[2], least_leaks);
    run_mode("interposition", child, argv[2], least_leaks);
    char *programs[] = {argv[1], argv[3]};
    size_t program_count = 1;
    if (argc == 4) {
        CHECK(access(argv[3], X_OK) == 0); /* built with the shared one: this one too */
        if (!access(argv[3], X_OK)) {
            char *static_child[] = {argv[3], NULL};
            run_mode("CUPTI", static_child, argv[2], least_leaks);
            run_mode("interposition", static_child, argv[2], least_leaks);
            program_count = 2;
        }
    }
    for (size_t p = 0; p < program_count; p++) {
        char *threads_child[] = {programs[p], "threads", NULL};
        run_mode("CUPTI", threads_child, argv[2], 16);
        run_mode("interposition", threads_child, argv[2], 16);
        char *reset_child[] = {programs[p], "reset", NULL};
        run_mode("CUPTI", reset_child, argv[2], 1);
        run_mode("interposition", reset_child, argv[2], 1);
    }
    run_shared_memory(programs, program_count, argv[2], directory);
    unlink(out_path);
    unlink(err_path);
    unlink(report_path);
    unlink(timeline_path);
    rmdir(directory);
    return check_summary("cuda_gpu_check");
}
