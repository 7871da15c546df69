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
 * primary context, the kernel's module). Both reports are printed.
 *
 * Exits 77 (ctest's SKIP_RETURN_CODE) with the reason on stdout when the
 * program was not built (no nvcc) or finds no usable GPU.
 *
 * The same program is built twice: with the shared runtime (libcudart.so)
 * and with the static one (nvcc's default: the runtime is inside the
 * program, so neither its frames nor its symbols are libcudart's).
 *
 * Usage: cuda_gpu_check <cuda_gpu_leaky> <liblivetrack_cuda.so> [<cuda_gpu_leaky_static>]
 */
#include "cuda_leak_manifest.h"
#include "cuda_report_checks.h"

#define SKIPPED 77

static char out_path[256], err_path[256], report_path[256];

static int run_mode(const char *mode, char *program, const char *library)
{
    char preload[1024], inject[1024], json_setting[300];
    int cupti = !strcmp(mode, "CUPTI");
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", cupti ? "" : library);
    snprintf(inject, sizeof inject, "CUDA_INJECTION64_PATH=%s", cupti ? library : "");
    snprintf(json_setting, sizeof json_setting, "LIVETRACK_JSON=%s", report_path);
    const char *environment[] = {preload, inject, json_setting, "LIVETRACK_EXIT_REPORT=always", "LIVETRACK_OUTPUT=",
                                 NULL};
    char *child[] = {program, NULL};
    int status = cuda_run(child, environment, out_path, err_path);
    char *manifest = cuda_read_file(out_path), *text = cuda_read_file(err_path);
    printf("==== %s, %s mode (%s): exit status %d\n---- stdout:\n%s---- stderr (the report):\n%s", program, mode,
           cupti ? inject : preload, status, manifest ? manifest : "", text ? text : "");
    char *json = cuda_read_file(report_path);
    printf("---- JSON report:\n%s\n", json ? json : "(none)");
    free(json);
    fflush(stdout);

    CHECK_EQ_INT(status, 0);
    cuda_leaks leaks;
    CHECK(manifest && cuda_parse_leaks(manifest, &leaks) && leaks.count == 7);
    if (manifest && text && leaks.count) {
        /* Attached as asked: CUPTI subscribed (no fallback message). */
        CHECK(strstr(text, "CUPTI cannot be used") == NULL);
        cuda_check_text_report(text, &leaks, "cuda_gpu_leaky.cu");
        cuda_check_json_report(report_path, &leaks, "cuda_gpu_leaky.cu");
        CHECK(strstr(text, "leaked CUcontext") == NULL);
        CHECK(strstr(text, "leaked CUmodule") == NULL);
        CHECK(strstr(text, "leaked CUlibrary") == NULL);
    }
    free(manifest);
    free(text);
    return status;
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
    run_mode("CUPTI", argv[1], argv[2]);
    run_mode("interposition", argv[1], argv[2]);
    if (argc == 4) {
        CHECK(access(argv[3], X_OK) == 0); /* built with the shared one: this one too */
        if (!access(argv[3], X_OK)) {
            run_mode("CUPTI", argv[3], argv[2]);
            run_mode("interposition", argv[3], argv[2]);
        }
    }
    unlink(out_path);
    unlink(err_path);
    unlink(report_path);
    rmdir(directory);
    return check_summary("cuda_gpu_check");
}
