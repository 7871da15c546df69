/*
 * bench_opencl: timed loops of OpenCL calls, made through the ICD loader,
 * to measure what a layer adds to them. bench/run runs it without the
 * layer and with it (call sites off and on), alternating, and compares.
 *
 * Usage: bench_opencl [--samples N] [--scale X] [--depth N] [--path P] [--loop NAME]...
 *   --samples N  timed samples per loop (default 5), after one untimed warm-up;
 *                the workload loop takes a third as many (at least 1)
 *   --scale X    multiply every loop's iteration count by X (default 1), but
 *                the fixed ones': the live-set loops' 100k buffers and the
 *                workload's 10k kernels
 *   --depth N    run the loops N frames deeper than main (default 20), so a
 *                16-frame call-site capture walks 16 real frames, as it
 *                would in an application, not 4
 *   --loop NAME  run only the named loop(s) (--help lists them)
 *   --path P     loader, direct or both (default): run one side only, for
 *                bench/callgrind.sh, which counts instructions and needs no twin
 *
 * Output, one line per sample (lines starting with '#' are comments):
 *   <loop name> <iterations> <ns per iteration> <direct ns per iteration>
 * The third field is the cost through the ICD loader (and through any
 * layer it loaded): the number to compare. The fourth is the same loop
 * run right before or after it in the same process, calling the driver
 * straight through its dispatch table, bypassing loader and layer. This
 * machine's speed drifts by 2x over fractions of a second; the ratio of
 * the two, taken moments apart, is what bench/run uses to cancel it.
 * The header says whether the live-object-tracking extension was found,
 * i.e. whether the livetrack layer is loaded, and the LIVETRACK_STACK_DEPTH
 * it ran with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_icd.h>

#include "bench_util.h"

/* Stop with a message when an OpenCL call fails. */
static void check(cl_int err, const char *call, int line)
{
    if (err != CL_SUCCESS)
        bench_die("line %d: %s failed with error %d", line, call, (int)err);
}
#define CHECK(call) check((call), #call, __LINE__)

/* The entry points the loops use, called through pointers either way. */
typedef struct bench_api {
    cl_api_clCreateBuffer create_buffer;
    cl_api_clReleaseMemObject release_mem;
    cl_api_clCreateUserEvent create_user_event;
    cl_api_clRetainEvent retain_event;
    cl_api_clReleaseEvent release_event;
    cl_api_clEnqueueMarkerWithWaitList enqueue_marker;
    cl_api_clFinish finish;
    cl_api_clCreateProgramWithSource create_program;
    cl_api_clBuildProgram build_program;
    cl_api_clReleaseProgram release_program;
    cl_api_clCreateKernel create_kernel;
    cl_api_clSetKernelArg set_kernel_arg;
    cl_api_clReleaseKernel release_kernel;
    cl_api_clEnqueueNDRangeKernel enqueue_kernel;
} bench_api;

/* What the application links: the ICD loader's exports. */
static const bench_api through_loader = {
    .create_buffer = clCreateBuffer,
    .release_mem = clReleaseMemObject,
    .create_user_event = clCreateUserEvent,
    .retain_event = clRetainEvent,
    .release_event = clReleaseEvent,
    .enqueue_marker = clEnqueueMarkerWithWaitList,
    .finish = clFinish,
    .create_program = clCreateProgramWithSource,
    .build_program = clBuildProgram,
    .release_program = clReleaseProgram,
    .create_kernel = clCreateKernel,
    .set_kernel_arg = clSetKernelArg,
    .release_kernel = clReleaseKernel,
    .enqueue_kernel = clEnqueueNDRangeKernel,
};

typedef struct bench_env {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_mem kernel_data; /* the workload's kernels write here */
    bench_api direct;   /* the driver's own functions */
    /* Scratch of the live-set loops, sized once so no sample pays for it:
     * the handles, and a fixed random release order. */
    cl_mem *live;
    size_t *order;
    size_t live_capacity;
    size_t order_count; /* the permutation in order[] is of 0..order_count-1 */
} bench_env;

typedef void (*loop_fn)(bench_env *env, const bench_api *api, long iterations);

/* (a) a small buffer created and released */
static void loop_buffer(bench_env *env, const bench_api *api, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        cl_int err;
        cl_mem buffer = api->create_buffer(env->context, CL_MEM_READ_WRITE, 64, NULL, &err);
        CHECK(err);
        CHECK(api->release_mem(buffer));
    }
}

/* (b) a user event created, retained once and released twice */
static void loop_user_event(bench_env *env, const bench_api *api, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        cl_int err;
        cl_event event = api->create_user_event(env->context, &err);
        CHECK(err);
        CHECK(api->retain_event(event));
        CHECK(api->release_event(event));
        CHECK(api->release_event(event));
    }
}

/* (c) a marker enqueued with an event that is released at once; the queue
 * is drained every 1000 markers */
static void loop_marker(bench_env *env, const bench_api *api, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        cl_event event;
        CHECK(api->enqueue_marker(env->queue, 0, NULL, &event));
        CHECK(api->release_event(event));
        if ((i + 1) % 1000 == 0)
            CHECK(api->finish(env->queue));
    }
    CHECK(api->finish(env->queue));
}

/* (d) `iterations` buffers made live at once, then released: in creation
 * order, or in a random order (the same in every run). The registry's
 * hash chains, age lists and free lists see a large live set, and random
 * releases defeat the caches a FIFO pattern enjoys. Time per buffer. */
static void live_buffers(bench_env *env, const bench_api *api, long iterations, int random_order)
{
    size_t count = (size_t)iterations;
    if (count > env->live_capacity)
        bench_die("live-set loop of %zu buffers exceeds its scratch (%zu)", count, env->live_capacity);
    if (random_order && env->order_count != count) {
        bench_shuffle(env->order, count, 0x5eed + count);
        env->order_count = count;
    }
    for (size_t i = 0; i < count; i++) {
        cl_int err;
        env->live[i] = api->create_buffer(env->context, CL_MEM_READ_WRITE, 64, NULL, &err);
        CHECK(err);
    }
    for (size_t i = 0; i < count; i++)
        CHECK(api->release_mem(env->live[random_order ? env->order[i] : i]));
}

static void loop_live_fifo(bench_env *env, const bench_api *api, long iterations)
{
    live_buffers(env, api, iterations, 0);
}

static void loop_live_random(bench_env *env, const bench_api *api, long iterations)
{
    live_buffers(env, api, iterations, 1);
}

/* (e) a small real workload: build a program, make its kernel, enqueue it
 * `iterations` times, each with an event the program releases (draining
 * the queue every 1000), release kernel and program. The program build is
 * included; after the warm-up pocl serves it from its kernel cache. Time
 * per kernel enqueue. */
static const char *workload_source =
    "__kernel void bench_add(__global int *data, int value)\n"
    "{\n"
    "    data[get_global_id(0)] += value;\n"
    "}\n";
#define WORKLOAD_ITEMS 64

static void loop_workload(bench_env *env, const bench_api *api, long iterations)
{
    cl_int err;
    cl_program program = api->create_program(env->context, 1, &workload_source, NULL, &err);
    CHECK(err);
    CHECK(api->build_program(program, 1, &env->device, "", NULL, NULL));
    cl_kernel kernel = api->create_kernel(program, "bench_add", &err);
    CHECK(err);
    cl_int value = 1;
    CHECK(api->set_kernel_arg(kernel, 0, sizeof env->kernel_data, &env->kernel_data));
    CHECK(api->set_kernel_arg(kernel, 1, sizeof value, &value));
    size_t global = WORKLOAD_ITEMS;
    for (long i = 0; i < iterations; i++) {
        cl_event event;
        CHECK(api->enqueue_kernel(env->queue, kernel, 1, NULL, &global, NULL, 0, NULL, &event));
        CHECK(api->release_event(event));
        if ((i + 1) % 1000 == 0)
            CHECK(api->finish(env->queue));
    }
    CHECK(api->finish(env->queue));
    CHECK(api->release_kernel(kernel));
    CHECK(api->release_program(program));
}

static const struct {
    const char *name;
    loop_fn run;
    long iterations;       /* per sample, at --scale 1 */
    long sample_divisor;   /* long loops take fewer samples */
    int fixed;             /* 1: --scale does not apply (the count is what the loop measures) */
    const char *describes; /* for --help */
} loops[] = {
    {"buffer_create_release", loop_buffer, 100000, 1, 0, "clCreateBuffer(64 B) + clReleaseMemObject"},
    {"user_event_retain_release", loop_user_event, 75000, 1, 0, "clCreateUserEvent, clRetainEvent, clReleaseEvent x2"},
    {"marker_event_release", loop_marker, 10000, 1, 0, "clEnqueueMarkerWithWaitList + clReleaseEvent"},
    /* The size of the live set is what these measure (hash chains, cache
     * misses), so it must not shrink with --scale either. */
    {"live100k_release_fifo", loop_live_fifo, 100000, 1, 1,
     "100k live buffers, released oldest first (ns per buffer; --scale does not apply)"},
    {"live100k_release_random", loop_live_random, 100000, 1, 1,
     "100k live buffers, released in random order (--scale does not apply)"},
    /* The program build (~50 ms from pocl's cache here) is part of the
     * workload, so the kernel count must not shrink with --scale. */
    {"workload_kernels", loop_workload, 10000, 3, 1,
     "build a program, 10k kernel enqueues with events (ns per kernel; --scale does not apply)"},
};
#define LOOP_COUNT (sizeof loops / sizeof loops[0])

static void usage(int status)
{
    FILE *out = status ? stderr : stdout;
    fprintf(out, "usage: bench_opencl [--samples N] [--scale X] [--depth N] [--path loader|direct|both]\n"
                 "                    [--loop NAME]...\n"
                    "Prints '<loop> <iterations> <ns/iteration through the loader> <ns/iteration direct>' per sample.\n"
                    "loops:\n");
    for (size_t i = 0; i < LOOP_COUNT; i++)
        fprintf(out, "  %-26s %s (%ld iterations)\n", loops[i].name, loops[i].describes, loops[i].iterations);
    exit(status);
}

/* Iterations per sample of loop l at this --scale. */
static long loop_iterations(size_t l, double scale)
{
    long iterations = loops[l].fixed ? loops[l].iterations : (long)((double)loops[l].iterations * scale);
    return iterations < 1 ? 1 : iterations;
}

typedef struct run_args {
    bench_env *env;
    const int *selected;
    int any_selected;
    long samples;
    double scale;
    int paths; /* bit 0: through the loader, bit 1: direct */
} run_args;

/* All loops, called from bench_at_depth() so stacks are realistically deep. */
static long run_loops(void *arg)
{
    run_args *run = arg;
    bench_env *env = run->env;
    for (size_t l = 0; l < LOOP_COUNT; l++) {
        if (run->any_selected && !run->selected[l])
            continue;
        long iterations = loop_iterations(l, run->scale);
        long samples = (run->samples + loops[l].sample_divisor - 1) / loops[l].sample_divisor;
        /* warm-up: pools, caches, lazy initialisation, pocl's kernel cache */
        for (int direct = 0; direct < 2; direct++)
            if (run->paths & (1 << direct))
                loops[l].run(env, direct ? &env->direct : &through_loader, iterations / 10 + 1);
        for (long s = 0; s < samples; s++) {
            /* the two paths back to back, first one then the other */
            double ns[2] = {0.0, 0.0};
            for (int k = 0; k < 2; k++) {
                int direct = (int)((k + s) % 2);
                if (!(run->paths & (1 << direct)))
                    continue;
                double start = bench_now_ns();
                loops[l].run(env, direct ? &env->direct : &through_loader, iterations);
                ns[direct] = (bench_now_ns() - start) / (double)iterations;
            }
            printf("%s %ld %.1f %.1f\n", loops[l].name, iterations, ns[0], ns[1]);
            fflush(stdout);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_name = "bench_opencl";
    long samples = 5, depth = 20;
    double scale = 1.0;
    int selected[LOOP_COUNT] = {0};
    int any_selected = 0;
    int paths = 3;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            usage(0);
        if (i + 1 >= argc)
            usage(2);
        if (strcmp(argv[i], "--samples") == 0) {
            samples = bench_parse_long("--samples", argv[++i], 1, 100000);
        } else if (strcmp(argv[i], "--scale") == 0) {
            scale = bench_parse_double("--scale", argv[++i], 1e-6, 1e6);
        } else if (strcmp(argv[i], "--depth") == 0) {
            depth = bench_parse_long("--depth", argv[++i], 0, 1000);
        } else if (strcmp(argv[i], "--path") == 0) {
            const char *path = argv[++i];
            paths = !strcmp(path, "loader") ? 1 : !strcmp(path, "direct") ? 2 : !strcmp(path, "both") ? 3 : 0;
            if (!paths) {
                fprintf(stderr, "bench_opencl: --path takes loader, direct or both, not %s\n", path);
                usage(2);
            }
        } else if (strcmp(argv[i], "--loop") == 0) {
            const char *name = argv[++i];
            size_t l = 0;
            while (l < LOOP_COUNT && strcmp(loops[l].name, name) != 0)
                l++;
            if (l == LOOP_COUNT) {
                fprintf(stderr, "bench_opencl: no loop named %s\n", name);
                usage(2);
            }
            selected[l] = any_selected = 1;
        } else {
            usage(2);
        }
    }

    bench_env env;
    memset(&env, 0, sizeof env);
    cl_int err;
    CHECK(clGetPlatformIDs(1, &env.platform, NULL));
    CHECK(clGetDeviceIDs(env.platform, CL_DEVICE_TYPE_ALL, 1, &env.device, NULL));
    env.context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CHECK(err);
    env.queue = clCreateCommandQueueWithProperties(env.context, env.device, NULL, &err);
    CHECK(err);
    env.kernel_data = clCreateBuffer(env.context, CL_MEM_READ_WRITE, WORKLOAD_ITEMS * sizeof(cl_int), NULL, &err);
    CHECK(err);

    /* An ICD driver's objects start with a pointer to its dispatch table. */
    const struct _cl_icd_dispatch *driver = *(struct _cl_icd_dispatch *const *)env.context;
    env.direct = (bench_api){
        .create_buffer = driver->clCreateBuffer,
        .release_mem = driver->clReleaseMemObject,
        .create_user_event = driver->clCreateUserEvent,
        .retain_event = driver->clRetainEvent,
        .release_event = driver->clReleaseEvent,
        .enqueue_marker = driver->clEnqueueMarkerWithWaitList,
        .finish = driver->clFinish,
        .create_program = driver->clCreateProgramWithSource,
        .build_program = driver->clBuildProgram,
        .release_program = driver->clReleaseProgram,
        .create_kernel = driver->clCreateKernel,
        .set_kernel_arg = driver->clSetKernelArg,
        .release_kernel = driver->clReleaseKernel,
        .enqueue_kernel = driver->clEnqueueNDRangeKernel,
    };

    /* Scratch for the live-set loops (warm-ups are smaller). */
    for (size_t l = 0; l < LOOP_COUNT; l++) {
        if (loops[l].run != loop_live_fifo && loops[l].run != loop_live_random)
            continue;
        size_t need = (size_t)loop_iterations(l, scale) + 1;
        if (need > env.live_capacity)
            env.live_capacity = need;
    }
    env.live = calloc(env.live_capacity, sizeof *env.live);
    env.order = calloc(env.live_capacity, sizeof *env.order);
    if (!env.live || !env.order)
        bench_die("out of memory for %zu live buffers", env.live_capacity);

    char platform_name[128] = "?", device_name[128] = "?";
    clGetPlatformInfo(env.platform, CL_PLATFORM_NAME, sizeof platform_name, platform_name, NULL);
    clGetDeviceInfo(env.device, CL_DEVICE_NAME, sizeof device_name, device_name, NULL);
    int layer = clGetExtensionFunctionAddressForPlatform(env.platform, "clReportLiveObjectsIntelFPGA") != NULL;
    const char *stack_depth = getenv("LIVETRACK_STACK_DEPTH");
    printf("# bench_opencl platform \"%s\" device \"%s\"\n", platform_name, device_name);
    /* The floor side of bench/run: bench/passthrough_layer.c answers this. */
    int passthrough = clGetExtensionFunctionAddressForPlatform(env.platform, "livetrackBenchPassthroughLayer") != NULL;
    printf("# layer %s\n", layer ? "yes" : passthrough ? "passthrough" : "no");
    printf("# stack_depth %s (LIVETRACK_STACK_DEPTH; frames below main: %ld)\n",
           stack_depth && *stack_depth ? stack_depth : "default", depth);
    printf("# loop iterations ns_per_iteration direct_ns_per_iteration\n");
    fflush(stdout);

    run_args run = {&env, selected, any_selected, samples, scale, paths};
    bench_at_depth((unsigned)depth, run_loops, &run);

    free(env.live);
    free(env.order);
    CHECK(clReleaseMemObject(env.kernel_data));
    CHECK(clReleaseCommandQueue(env.queue));
    CHECK(clReleaseContext(env.context));
    return 0;
}
