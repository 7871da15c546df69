/*
 * bench_cuda: what liblivetrack_cuda.so adds to each tracked driver call,
 * measured on the fake libcuda.so.1 (tests/cuda/fake_driver), so it runs
 * on machines without a GPU.
 *
 * Usage: bench_cuda [--rounds N] [--samples N] [--iterations N] [--depth N] [--library PATH]
 *   --rounds N      rounds (default 7); each runs this program twice as a
 *                   child, without and with LD_PRELOAD=liblivetrack_cuda.so
 *                   (LIVETRACK_EXIT_REPORT=off), alternating which goes first
 *   --samples N     timed samples per operation per child (default 11)
 *   --iterations N  calls per sample (default 20000)
 *   --depth N       run the loops N frames deeper than main (default 20), so
 *                   the 16-frame call-site capture walks real frames, as in
 *                   an application
 *   --library PATH  the interposer (default: the one built with this)
 *
 * Prints one line per operation, in the form bench/run reads from every
 * front end's benchmark ("bench_cuda: <calls> without X ns with Y ns
 * ratio R norm N"): the median ns per iteration over all samples without
 * and with the interposer, their ratio, and `norm`: the same ratio after
 * dividing each sample by a twin loop timed moments later in the same
 * child that calls the fake driver's functions directly
 * (fake_cuda_direct, past any interposer). This machine's speed drifts;
 * the twin cancels most of it. Settings such as LIVETRACK_STACK_DEPTH are
 * passed on to the children.
 *
 * Operations (each iteration is one pair of calls):
 *   mem_alloc_free        cuMemAlloc(64) + cuMemFree, exported symbols
 *   stream_create_destroy cuStreamCreate + cuStreamDestroy
 *   event_create_destroy  cuEventCreate + cuEventDestroy
 *   proc_alloc_free       cuMemAlloc + cuMemFree fetched with cuGetProcAddress,
 *                         the CUDA runtime's path to the driver
 *   untracked_call        cuCtxGetCurrent, which livetrack does not wrap
 */
#include <cuda.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "fake_cuda.h"

typedef struct driver {
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*stream_create)(CUstream *, unsigned);
    CUresult (*stream_destroy)(CUstream);
    CUresult (*event_create)(CUevent *, unsigned);
    CUresult (*event_destroy)(CUevent);
    CUresult (*current)(CUcontext *);
} driver;

typedef struct operation {
    const char *name;
    const char *calls; /* as bench/run prints it */
    void (*run)(const driver *d, long iterations);
    int through_proc_address; /* the interposed side fetches its functions with cuGetProcAddress */
} operation;

static void check(CUresult result, const char *call)
{
    if (result != CUDA_SUCCESS)
        bench_die("%s failed with %d", call, (int)result);
}

static void mem_alloc_free(const driver *d, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        CUdeviceptr memory;
        check(d->alloc(&memory, 64), "cuMemAlloc");
        check(d->free(memory), "cuMemFree");
    }
}

static void stream_create_destroy(const driver *d, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        CUstream stream;
        check(d->stream_create(&stream, 0), "cuStreamCreate");
        check(d->stream_destroy(stream), "cuStreamDestroy");
    }
}

static void event_create_destroy(const driver *d, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        CUevent event;
        check(d->event_create(&event, 0), "cuEventCreate");
        check(d->event_destroy(event), "cuEventDestroy");
    }
}

static void untracked_call(const driver *d, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        CUcontext context;
        check(d->current(&context), "cuCtxGetCurrent");
    }
}

static const operation operations[] = {
    {"mem_alloc_free", "cuMemAlloc + cuMemFree", mem_alloc_free, 0},
    {"stream_create_destroy", "cuStreamCreate + cuStreamDestroy", stream_create_destroy, 0},
    {"event_create_destroy", "cuEventCreate + cuEventDestroy", event_create_destroy, 0},
    {"proc_alloc_free", "cuMemAlloc + cuMemFree via cuGetProcAddress", mem_alloc_free, 1},
    {"untracked_call", "cuCtxGetCurrent (not wrapped)", untracked_call, 0},
};
#define OPERATION_COUNT (sizeof operations / sizeof operations[0])

/* ---- the child: timed loops --------------------------------------------------- */

/* The program's view: exported symbols (interposed under LD_PRELOAD). */
static driver exported(void)
{
    return (driver){cuMemAlloc, cuMemFree, cuStreamCreate, cuStreamDestroy, cuEventCreate, cuEventDestroy,
                    cuCtxGetCurrent};
}

/* The runtime's view: what cuGetProcAddress hands out. */
static driver fetched(void)
{
    driver d = exported();
    void *alloc = NULL, *release = NULL;
    check(cuGetProcAddress("cuMemAlloc", &alloc, 12000, 0, NULL), "cuGetProcAddress");
    check(cuGetProcAddress("cuMemFree", &release, 12000, 0, NULL), "cuGetProcAddress");
    d.alloc = (CUresult(*)(CUdeviceptr *, size_t))alloc;
    d.free = (CUresult(*)(CUdeviceptr))release;
    return d;
}

/* The fake driver alone. */
static driver direct(void)
{
    driver d;
    d.alloc = (CUresult(*)(CUdeviceptr *, size_t))fake_cuda_direct("cuMemAlloc", 12000);
    d.free = (CUresult(*)(CUdeviceptr))fake_cuda_direct("cuMemFree", 12000);
    d.stream_create = (CUresult(*)(CUstream *, unsigned))fake_cuda_direct("cuStreamCreate", 12000);
    d.stream_destroy = (CUresult(*)(CUstream))fake_cuda_direct("cuStreamDestroy", 12000);
    d.event_create = (CUresult(*)(CUevent *, unsigned))fake_cuda_direct("cuEventCreate", 12000);
    d.event_destroy = (CUresult(*)(CUevent))fake_cuda_direct("cuEventDestroy", 12000);
    d.current = (CUresult(*)(CUcontext *))fake_cuda_direct("cuCtxGetCurrent", 12000);
    if (!d.alloc || !d.free || !d.stream_create || !d.stream_destroy || !d.event_create || !d.event_destroy ||
        !d.current)
        bench_die("the fake driver lacks a function this benchmark calls");
    return d;
}

typedef struct timed_loop {
    const operation *op;
    const driver *d;
    long iterations;
    double ns;
} timed_loop;

static long time_loop(void *raw)
{
    timed_loop *loop = raw;
    double start = bench_now_ns();
    loop->op->run(loop->d, loop->iterations);
    loop->ns = (bench_now_ns() - start) / (double)loop->iterations;
    return 0;
}

static int child(long samples, long iterations, long depth)
{
    check(cuInit(0), "cuInit");
    CUcontext context;
    check(cuCtxCreate(&context, NULL, 0, 0), "cuCtxCreate");
    driver program = exported(), runtime = fetched(), alone = direct();
    printf("# interposer %s\n", dlsym(RTLD_DEFAULT, "InitializeInjection") ? "yes" : "no");
    for (size_t o = 0; o < OPERATION_COUNT; o++) {
        const operation *op = &operations[o];
        timed_loop measured = {op, op->through_proc_address ? &runtime : &program, iterations, 0};
        timed_loop twin = {op, &alone, iterations, 0};
        /* warm-up: first-touch costs, caches, the registry's free lists */
        bench_at_depth((unsigned)depth, time_loop, &measured);
        for (long s = 0; s < samples; s++) {
            bench_at_depth((unsigned)depth, time_loop, &measured);
            bench_at_depth((unsigned)depth, time_loop, &twin);
            printf("%s %.2f %.2f\n", op->name, measured.ns, twin.ns);
        }
    }
    check(cuCtxDestroy(context), "cuCtxDestroy");
    return 0;
}

/* ---- the parent: alternate children, compare ----------------------------------- */

typedef struct samples_of {
    double *ns, *relative;
    size_t count;
} samples_of;

static samples_of results[OPERATION_COUNT][2]; /* [operation][interposed] */

static void run_child(const char *self, const char *library, int interposed, long samples, long iterations,
                      long depth)
{
    char samples_text[32], iterations_text[32], depth_text[32];
    snprintf(samples_text, sizeof samples_text, "%ld", samples);
    snprintf(iterations_text, sizeof iterations_text, "%ld", iterations);
    snprintf(depth_text, sizeof depth_text, "%ld", depth);
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
        unsetenv("CUDA_INJECTION64_PATH");
        setenv("LIVETRACK_EXIT_REPORT", "off", 1);
        if (interposed)
            setenv("LD_PRELOAD", library, 1);
        else
            unsetenv("LD_PRELOAD");
        execl(self, self, "--child", samples_text, iterations_text, depth_text, (char *)NULL);
        _exit(127);
    }
    close(channel[1]);
    FILE *in = fdopen(channel[0], "r");
    char line[256];
    int saw_header = 0;
    while (in && fgets(line, sizeof line, in)) {
        char name[64];
        double ns, twin;
        if (!strncmp(line, "# interposer ", 13)) {
            saw_header = 1;
            if (!strncmp(line + 13, interposed ? "yes" : "no", interposed ? 3 : 2))
                continue;
            bench_die("the run %s the interposer %s it", interposed ? "with" : "without",
                      interposed ? "did not load" : "loaded");
        }
        if (sscanf(line, "%63s %lf %lf", name, &ns, &twin) != 3)
            continue;
        for (size_t o = 0; o < OPERATION_COUNT; o++) {
            if (strcmp(name, operations[o].name))
                continue;
            samples_of *side = &results[o][interposed];
            side->ns = realloc(side->ns, (side->count + 1) * sizeof *side->ns);
            side->relative = realloc(side->relative, (side->count + 1) * sizeof *side->relative);
            if (!side->ns || !side->relative)
                bench_die("out of memory");
            side->ns[side->count] = ns;
            side->relative[side->count] = twin > 0 ? ns / twin : 1.0;
            side->count++;
        }
    }
    if (in)
        fclose(in);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) || !saw_header)
        bench_die("the child run %s the interposer failed", interposed ? "with" : "without");
}

int main(int argc, char **argv)
{
    bench_name = "bench_cuda";
    if (argc == 5 && !strcmp(argv[1], "--child"))
        return child(bench_parse_long("samples", argv[2], 1, 1000000),
                     bench_parse_long("iterations", argv[3], 1, 1L << 30), bench_parse_long("depth", argv[4], 0, 200));
    long rounds = 7, samples = 11, iterations = 20000, depth = 20;
    const char *library = BENCH_CUDA_LIBRARY;
    static const char usage[] =
        "usage: bench_cuda [--rounds N] [--samples N] [--iterations N] [--depth N] [--library PATH]\n"
        "\n"
        "Times tracked CUDA driver calls on the fake libcuda.so.1, in children run alternately\n"
        "without and with liblivetrack_cuda.so preloaded, and prints one line per operation:\n"
        "median ns per iteration without and with livetrack, their ratio, and 'norm', the ratio\n"
        "after dividing each sample by a twin loop calling the fake driver directly.\n"
        "\n"
        "  --rounds N       child pairs, alternating which side runs first (default 7)\n"
        "  --samples N      timed samples per operation per child (default 11)\n"
        "  --iterations N   calls per sample (default 20000)\n"
        "  --depth N        frames below main the loops run at (default 20)\n"
        "  --library PATH   liblivetrack_cuda.so (default: the one built with this tree)\n"
        "  --help           this text\n";
    const bench_option options[] = {
        {"--rounds", &rounds, 1, 1000, NULL},
        {"--samples", &samples, 1, 10000, NULL},
        {"--iterations", &iterations, 1, 100000000, NULL},
        {"--depth", &depth, 0, 200, NULL},
        {"--library", NULL, 0, 0, &library},
    };
    bench_parse_options(argc, argv, options, sizeof options / sizeof options[0], usage);
    if (access(library, R_OK))
        bench_die("no interposer at %s (build livetrack_cuda, or pass --library)", library);
    char self[4096];
    bench_self_path(self, sizeof self);

    double start = bench_now_ns();
    for (long r = 0; r < rounds; r++) {
        int first = (int)(r % 2); /* alternate which side goes first: slow drifts cancel */
        run_child(self, library, first, samples, iterations, depth);
        run_child(self, library, !first, samples, iterations, depth);
    }
    const char *stack_depth = getenv("LIVETRACK_STACK_DEPTH");
    printf("# bench_cuda: fake libcuda.so.1, %ld rounds x %ld samples x %ld iterations, depth %ld, "
           "LIVETRACK_STACK_DEPTH=%s, %.1f s\n",
           rounds, samples, iterations, depth, stack_depth ? stack_depth : "(default)", (bench_now_ns() - start) / 1e9);
    for (size_t o = 0; o < OPERATION_COUNT; o++) {
        samples_of *off = &results[o][0], *on = &results[o][1];
        double off_ns = bench_median(off->ns, off->count), on_ns = bench_median(on->ns, on->count);
        double norm = bench_median(on->relative, on->count) / bench_median(off->relative, off->count);
        /* The line bench/run reads from every front end's benchmark. */
        printf("bench_cuda: %-44s without %8.1f ns  with %8.1f ns  ratio %5.2f  norm %5.2f\n", operations[o].calls,
               off_ns, on_ns, on_ns / off_ns, norm);
        free(off->ns);
        free(off->relative);
        free(on->ns);
        free(on->relative);
    }
    return 0;
}
