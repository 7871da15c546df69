/*
 * bench_cuda_gpu: what liblivetrack_cuda.so adds to tracked CUDA runtime
 * calls on a real GPU and driver, in both attach modes. bench_cuda
 * measures the hook on the fake driver, where a call costs ~10 ns and the
 * hook's own work is all there is to see; this one answers the user's
 * question: how much slower does my CUDA program's object churn get?
 *
 * Usage: bench_cuda_gpu [--rounds N] [--samples N] [--iterations N] [--library PATH]
 *
 * Each round runs this program three times as a child, in an order that
 * rotates with the round: without livetrack, with LD_PRELOAD (the
 * interposer) and with CUDA_INJECTION64_PATH (CUPTI callbacks), always
 * with LIVETRACK_EXIT_REPORT=off. Each child times every operation
 * `samples` times and checks that livetrack loaded as asked. The parent
 * prints per operation the median ns per iteration of each side and the
 * two ratios against "without", measured in the same run.
 *
 * Exits 77 with "SKIP: ..." when there is no usable GPU.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "livetrack/livetrack.h"

enum side { WITHOUT, INTERPOSED, CUPTI, SIDE_COUNT };
static const char *const side_names[SIDE_COUNT] = {"without", "interposed", "cupti"};

typedef struct operation {
    const char *name;
    const char *calls; /* as printed */
    void (*run)(long iterations);
    long divisor; /* slow calls run iterations / divisor times per sample */
} operation;

static cudaStream_t work_stream;

static void check(cudaError_t error, const char *call)
{
    if (error != cudaSuccess)
        bench_die("%s failed: %s", call, cudaGetErrorString(error));
}

static void malloc_free(long iterations)
{
    for (long i = 0; i < iterations; i++) {
        void *memory;
        check(cudaMalloc(&memory, 256), "cudaMalloc");
        check(cudaFree(memory), "cudaFree");
    }
}

static void host_alloc_free(long iterations)
{
    for (long i = 0; i < iterations; i++) {
        void *memory;
        check(cudaMallocHost(&memory, 4096), "cudaMallocHost");
        check(cudaFreeHost(memory), "cudaFreeHost");
    }
}

static void async_alloc_free(long iterations)
{
    for (long i = 0; i < iterations; i++) {
        void *memory;
        check(cudaMallocAsync(&memory, 256, work_stream), "cudaMallocAsync");
        check(cudaFreeAsync(memory, work_stream), "cudaFreeAsync");
    }
    check(cudaStreamSynchronize(work_stream), "cudaStreamSynchronize");
}

static void stream_create_destroy(long iterations)
{
    for (long i = 0; i < iterations; i++) {
        cudaStream_t stream;
        check(cudaStreamCreate(&stream), "cudaStreamCreate");
        check(cudaStreamDestroy(stream), "cudaStreamDestroy");
    }
}

static void event_create_destroy(long iterations)
{
    for (long i = 0; i < iterations; i++) {
        cudaEvent_t event;
        check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
        check(cudaEventDestroy(event), "cudaEventDestroy");
    }
}

static void untracked_call(long iterations)
{
    for (long i = 0; i < iterations; i++) {
        int device;
        check(cudaGetDevice(&device), "cudaGetDevice");
    }
}

static const operation operations[] = {
    {"malloc_free", "cudaMalloc(256) + cudaFree", malloc_free, 1},
    /* pinning pages costs system calls: ~100x a device allocation */
    {"host_alloc_free", "cudaMallocHost(4096) + cudaFreeHost", host_alloc_free, 20},
    {"async_alloc_free", "cudaMallocAsync + cudaFreeAsync", async_alloc_free, 1},
    {"stream_create_destroy", "cudaStreamCreate + cudaStreamDestroy", stream_create_destroy, 1},
    {"event_create_destroy", "cudaEventCreate + cudaEventDestroy", event_create_destroy, 1},
    {"untracked_call", "cudaGetDevice (not tracked)", untracked_call, 1},
};
#define OPERATION_COUNT (sizeof operations / sizeof operations[0])

/* ---- the child: timed loops ------------------------------------------------ */

/* Whether livetrack is in this process, and the objects it recorded
 * (loaded does not mean attached: CUPTI may have refused). Its registry
 * is asked through dlopen, as CUPTI's injection opens it locally, with
 * no global symbols to look up. */
static int livetrack_present(uint64_t *created)
{
    *created = 0;
    void *registry = dlopen("liblivetrack.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (!registry)
        return 0;
    void (*get_stats)(livetrack_stats *) = (void (*)(livetrack_stats *))dlsym(registry, "livetrack_get_stats");
    livetrack_stats stats = {0};
    if (get_stats)
        get_stats(&stats);
    dlclose(registry);
    *created = stats.created;
    return 1;
}

static int child(long samples, long iterations)
{
    int devices = 0;
    cudaError_t error = cudaGetDeviceCount(&devices);
    if (error != cudaSuccess || devices == 0) {
        printf("SKIP: no usable GPU (cudaGetDeviceCount: %s, %d devices)\n", cudaGetErrorString(error), devices);
        return 77;
    }
    check(cudaStreamCreate(&work_stream), "cudaStreamCreate");
    for (size_t o = 0; o < OPERATION_COUNT; o++) {
        long count = iterations / operations[o].divisor > 0 ? iterations / operations[o].divisor : 1;
        operations[o].run(count); /* warm-up: pools, first-touch, free lists */
        for (long s = 0; s < samples; s++) {
            double start = bench_now_ns();
            operations[o].run(count);
            printf("%s %.2f\n", operations[o].name, (bench_now_ns() - start) / (double)count);
        }
    }
    check(cudaStreamDestroy(work_stream), "cudaStreamDestroy");
    uint64_t created;
    int present = livetrack_present(&created);
    printf("# livetrack %s\n# tracked %llu\n", present ? "loaded" : "absent", (unsigned long long)created);
    return 0;
}

/* ---- the parent: rotate the sides, compare ---------------------------------- */

typedef struct samples_of {
    double *ns;
    size_t count;
} samples_of;

static samples_of results[OPERATION_COUNT][SIDE_COUNT];

/* Returns 77 when the first child (without livetrack: the rotation
 * starts there) found no GPU, else 0; dies on failure. */
static int run_child(const char *self, const char *library, enum side side, long samples, long iterations,
                     int first_child)
{
    char samples_text[32], iterations_text[32];
    snprintf(samples_text, sizeof samples_text, "%ld", samples);
    snprintf(iterations_text, sizeof iterations_text, "%ld", iterations);
    int channel[2];
    if (pipe(channel))
        bench_die("pipe failed");
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork failed");
    if (pid == 0) {
        dup2(channel[1], 1);
        close(channel[0]);
        close(channel[1]);
        unsetenv("LD_PRELOAD");
        unsetenv("CUDA_INJECTION64_PATH");
        setenv("LIVETRACK_EXIT_REPORT", "off", 1);
        if (side == INTERPOSED)
            setenv("LD_PRELOAD", library, 1);
        if (side == CUPTI)
            setenv("CUDA_INJECTION64_PATH", library, 1);
        execl(self, self, "--child", samples_text, iterations_text, (char *)NULL);
        _exit(127);
    }
    close(channel[1]);
    FILE *in = fdopen(channel[0], "r");
    char line[512];
    int loaded = -1, skipped = 0;
    unsigned long long tracked = 0;
    while (in && fgets(line, sizeof line, in)) {
        char name[64];
        double ns;
        if (!strncmp(line, "SKIP:", 5)) {
            fputs(line, stdout);
            skipped = 1;
            continue;
        }
        if (!strncmp(line, "# livetrack ", 12)) {
            loaded = !strncmp(line + 12, "loaded", 6);
            continue;
        }
        if (sscanf(line, "# tracked %llu", &tracked) == 1)
            continue;
        if (sscanf(line, "%63s %lf", name, &ns) != 2)
            continue;
        for (size_t o = 0; o < OPERATION_COUNT; o++) {
            if (strcmp(name, operations[o].name))
                continue;
            samples_of *into = &results[o][side];
            double *grown = realloc(into->ns, (into->count + 1) * sizeof *grown);
            if (!grown)
                bench_die("out of memory");
            into->ns = grown;
            into->ns[into->count++] = ns;
        }
    }
    if (in)
        fclose(in);
    int status = 0;
    waitpid(pid, &status, 0);
    fprintf(stderr, "bench_cuda_gpu: %s child done\n", side_names[side]); /* progress, should a limit cut it */
    if (skipped && WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        /* The first child runs without livetrack: a GPU it found that a
         * later child does not is livetrack's doing, not a skip. */
        if (side != WITHOUT || !first_child)
            bench_die("the %s run found no usable GPU; the run without livetrack did", side_names[side]);
        return 77;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        bench_die("the child run %s failed", side_names[side]);
    if (loaded != (side != WITHOUT))
        bench_die("the %s run %s livetrack", side_names[side], loaded ? "found" : "did not find");
    if (side != WITHOUT && !tracked)
        bench_die("the %s run loaded livetrack, which tracked nothing (did it attach? see its messages above)",
                  side_names[side]);
    return 0;
}

int main(int argc, char **argv)
{
    bench_name = "bench_cuda_gpu";
    if (argc == 4 && !strcmp(argv[1], "--child"))
        return child(bench_parse_long("samples", argv[2], 1, 1000000),
                     bench_parse_long("iterations", argv[3], 1, 1L << 30));
    long rounds = 3, samples = 7, iterations = 1000;
    const char *library = BENCH_CUDA_LIBRARY;
    static const char usage[] =
        "usage: bench_cuda_gpu [--rounds N] [--samples N] [--iterations N] [--library PATH]\n"
        "\n"
        "Times tracked CUDA runtime calls on a real GPU in children run without livetrack,\n"
        "with LD_PRELOAD=liblivetrack_cuda.so and with CUDA_INJECTION64_PATH=liblivetrack_cuda.so,\n"
        "rotating their order each round, and prints one line per operation: the median ns per\n"
        "iteration of each side and each mode's ratio to the run without. Exits 77 without a GPU.\n"
        "\n"
        "  --rounds N       rounds of three children (default 3)\n"
        "  --samples N      timed samples per operation per child (default 7)\n"
        "  --iterations N   call pairs per sample (default 1000; cudaMallocHost: 1/20 of it)\n"
        "  --library PATH   liblivetrack_cuda.so (default: the one built with this tree)\n"
        "  --help           this text\n";
    const bench_option options[] = {
        {"--rounds", &rounds, 1, 1000, NULL},
        {"--samples", &samples, 1, 10000, NULL},
        {"--iterations", &iterations, 1, 100000000, NULL},
        {"--library", NULL, 0, 0, &library},
    };
    bench_parse_options(argc, argv, options, sizeof options / sizeof options[0], usage);
    if (access(library, R_OK))
        bench_die("no liblivetrack_cuda.so at %s (build livetrack_cuda, or pass --library)", library);
    char self[4096];
    bench_self_path(self, sizeof self);

    double start = bench_now_ns();
    for (long r = 0; r < rounds; r++)
        for (int k = 0; k < SIDE_COUNT; k++) /* rotate the order: slow drifts cancel */
            if (run_child(self, library, (enum side)((r + k) % SIDE_COUNT), samples, iterations, !r && !k) == 77)
                return 77;
    printf("# bench_cuda_gpu: real GPU and driver, %ld rounds x %ld samples x %ld iterations, "
           "LIVETRACK_STACK_DEPTH=%s, %.1f s\n",
           rounds, samples, iterations, getenv("LIVETRACK_STACK_DEPTH") ? getenv("LIVETRACK_STACK_DEPTH") : "(default)",
           (bench_now_ns() - start) / 1e9);
    printf("# %-40s %12s %12s %12s %10s %10s\n", "operation (per iteration)", "without ns", "interposed", "cupti",
           "ratio int", "ratio cupti");
    for (size_t o = 0; o < OPERATION_COUNT; o++) {
        double median[SIDE_COUNT];
        for (int s = 0; s < SIDE_COUNT; s++) {
            median[s] = bench_median(results[o][s].ns, results[o][s].count);
            free(results[o][s].ns);
        }
        printf("bench_cuda_gpu: %-40s %12.1f %12.1f %12.1f %10.2f %10.2f\n", operations[o].calls, median[WITHOUT],
               median[INTERPOSED], median[CUPTI], median[INTERPOSED] / median[WITHOUT],
               median[CUPTI] / median[WITHOUT]);
    }
    return 0;
}
