/*
 * How liblivetrack_cuda.so attaches, run as the driver runs it: the fake
 * driver loads CUDA_INJECTION64_PATH at cuInit and calls its
 * InitializeInjection, as the real one does. There is no GPU here, so
 * CUPTI never subscribes (it is missing, or its cuptiSubscribe fails with
 * no driver): this checks the fallback, each way the library can be
 * brought in, on the leaky program (which calls cuInit twice):
 *
 *   LD_PRELOAD only              tracks by interposition, says nothing
 *   injection only               says once that nothing is tracked, and why
 *   both                         says once that interposition tracks instead
 *   both, CUPTI library missing  the same, naming the missing library
 *
 * Usage: cuda_attach <cuda_leaky> <liblivetrack_cuda.so>
 */
#include "cuda_leak_manifest.h"
#include "cuda_test_util.h"

static char out_path[256], err_path[256];

/* Run the leaky program; its stderr (free() it), NULL on a bad exit. */
static char *run_leaky(char *leaky, const char *const environment[])
{
    char *child[] = {leaky, NULL};
    int status = cuda_run(child, environment, out_path, err_path);
    char *manifest = cuda_read_file(out_path), *text = cuda_read_file(err_path);
    cuda_leaks leaks;
    CHECK_EQ_INT(status, 0);
    CHECK(manifest && cuda_parse_leaks(manifest, &leaks) && leaks.count == 11);
    free(manifest);
    if (text)
        fprintf(stderr, "--- %s %s %s:\n%s", environment[0], environment[1], environment[2], text);
    return text ? text : calloc(1, 1);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s <cuda_leaky> <liblivetrack_cuda.so>\n", argv[0]);
        return 2;
    }
    char directory[] = "/tmp/livetrack-cuda-attach.XXXXXX";
    CHECK(mkdtemp(directory) != NULL);
    snprintf(out_path, sizeof out_path, "%s/stdout", directory);
    snprintf(err_path, sizeof err_path, "%s/stderr", directory);
    char preload[1024], inject[1024];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", argv[2]);
    snprintf(inject, sizeof inject, "CUDA_INJECTION64_PATH=%s", argv[2]);
    /* The report on stderr, no JSON: whatever the caller set. */
    const char *common[] = {"LIVETRACK_EXIT_REPORT=auto", "LIVETRACK_OUTPUT=", "LIVETRACK_JSON=", NULL};
    const char *tracked = "11 leaked objects";

    const char *preload_only[] = {preload, "CUDA_INJECTION64_PATH=", "LIVETRACK_CUPTI_LIBRARY=", common[0], common[1],
                                  common[2], NULL};
    char *text = run_leaky(argv[1], preload_only);
    CHECK(strstr(text, tracked) != NULL);
    CHECK_EQ_INT(cuda_count(text, "CUPTI"), 0);
    free(text);

    const char *inject_only[] = {inject, "LD_PRELOAD=", "LIVETRACK_CUPTI_LIBRARY=", common[0], common[1], common[2],
                                 NULL};
    text = run_leaky(argv[1], inject_only);
    CHECK_EQ_INT(cuda_count(text, "livetrack: CUDA: CUPTI cannot be used ("), 1);
    CHECK_EQ_INT(cuda_count(text, "interposition needs LD_PRELOAD="), 1);
    CHECK(strstr(text, "no CUDA objects are tracked") != NULL);
    CHECK(strstr(text, tracked) == NULL);
    free(text);

    const char *both[] = {preload, inject, "LIVETRACK_CUPTI_LIBRARY=", common[0], common[1], common[2], NULL};
    text = run_leaky(argv[1], both);
    CHECK_EQ_INT(cuda_count(text, "livetrack: CUDA: CUPTI cannot be used ("), 1);
    CHECK_EQ_INT(cuda_count(text, "tracking by interposition (LD_PRELOAD) instead"), 1);
    CHECK(strstr(text, tracked) != NULL);
    free(text);

    const char *no_cupti[] = {preload, inject, "LIVETRACK_CUPTI_LIBRARY=/nonexistent/libcupti.so", common[0],
                              common[1], common[2], NULL};
    text = run_leaky(argv[1], no_cupti);
    CHECK_EQ_INT(cuda_count(text, "CUPTI cannot be used (libcupti could not be loaded (/nonexistent/libcupti.so"),
                 1);
    CHECK_EQ_INT(cuda_count(text, "tracking by interposition (LD_PRELOAD) instead"), 1);
    CHECK(strstr(text, tracked) != NULL);
    free(text);

    unlink(out_path);
    unlink(err_path);
    rmdir(directory);
    return check_summary("cuda_attach");
}
