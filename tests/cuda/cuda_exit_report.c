/*
 * The exit report of an ordinary driver-API program under
 * LD_PRELOAD=liblivetrack_cuda.so (cuda_leaky, on the fake driver): the
 * text report and the JSON report (LIVETRACK_JSON) list exactly the
 * objects it leaked, with their types, sizes and the file:line that made
 * each. cuda_leaky prints what it leaked; this compares.
 *
 * Usage: cuda_exit_report <cuda_leaky> <liblivetrack_cuda.so>
 */
#include "cuda_leak_manifest.h"
#include "cuda_report_checks.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s <cuda_leaky> <liblivetrack_cuda.so>\n", argv[0]);
        return 2;
    }
    char directory[] = "/tmp/livetrack-cuda-report.XXXXXX";
    CHECK(mkdtemp(directory) != NULL);
    char out_path[256], err_path[256], json_path[256], preload[1024], json_setting[300];
    snprintf(out_path, sizeof out_path, "%s/stdout", directory);
    snprintf(err_path, sizeof err_path, "%s/stderr", directory);
    snprintf(json_path, sizeof json_path, "%s/report.json", directory);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", argv[2]);
    snprintf(json_setting, sizeof json_setting, "LIVETRACK_JSON=%s", json_path);
    const char *environment[] = {preload, json_setting, "LIVETRACK_EXIT_REPORT=auto", "CUDA_INJECTION64_PATH=",
                                 "LIVETRACK_OUTPUT=", NULL};
    char *child[] = {argv[1], NULL};
    CHECK_EQ_INT(cuda_run(child, environment, out_path, err_path), 0);

    char *manifest = cuda_read_file(out_path), *text = cuda_read_file(err_path);
    cuda_leaks leaks;
    CHECK(manifest && cuda_parse_leaks(manifest, &leaks));
    CHECK_EQ_INT(leaks.count, 11);
    if (text && leaks.count) {
        cuda_check_text_report(text, &leaks, "cuda_leak_scenario.c");
        cuda_check_json_report(json_path, &leaks, "cuda_leak_scenario.c");
    }
    if (check_failed && text)
        fprintf(stderr, "--- the program's stderr:\n%s", text);
    free(manifest);
    free(text);
    unlink(out_path);
    unlink(err_path);
    unlink(json_path);
    rmdir(directory);
    return check_summary("cuda_exit_report");
}
