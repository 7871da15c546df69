/*
 * bench_opencl: timed loops of cheap OpenCL calls, made through the ICD
 * loader, to measure what a layer adds to them.
 *
 * Usage: bench_opencl [--samples N] [--scale X] [--loop NAME]...
 *   --samples N  timed samples per loop (default 5), after one untimed warm-up
 *   --scale X    multiply every loop's iteration count by X (default 1)
 *   --loop NAME  run only the named loop(s)
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
 * i.e. whether the livetrack layer is loaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CL/cl.h>
#include <CL/cl_icd.h>

/* Stop with a message when an OpenCL call fails. */
static void check(cl_int err, const char *call, int line)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "bench_opencl: line %d: %s failed with error %d\n", line, call, (int)err);
        exit(1);
    }
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
};

typedef struct bench_env {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    bench_api direct; /* the driver's own functions */
} bench_env;

typedef void (*loop_fn)(const bench_env *env, const bench_api *api, long iterations);

/* (a) a small buffer created and released */
static void loop_buffer(const bench_env *env, const bench_api *api, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        cl_int err;
        cl_mem buffer = api->create_buffer(env->context, CL_MEM_READ_WRITE, 64, NULL, &err);
        CHECK(err);
        CHECK(api->release_mem(buffer));
    }
}

/* (b) a user event created, retained once and released twice */
static void loop_user_event(const bench_env *env, const bench_api *api, long iterations)
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
static void loop_marker(const bench_env *env, const bench_api *api, long iterations)
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

static const struct {
    const char *name;
    loop_fn run;
    long iterations; /* per sample, at --scale 1 */
} loops[] = {
    {"buffer_create_release", loop_buffer, 100000},
    {"user_event_retain_release", loop_user_event, 75000},
    {"marker_event_release", loop_marker, 10000},
};
#define LOOP_COUNT (sizeof loops / sizeof loops[0])

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_opencl [--samples N] [--scale X] [--loop NAME]...\nloops:");
    for (size_t i = 0; i < LOOP_COUNT; i++)
        fprintf(stderr, " %s", loops[i].name);
    fputc('\n', stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    long samples = 5;
    double scale = 1.0;
    int selected[LOOP_COUNT] = {0};
    int any_selected = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
            samples = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
            scale = strtod(argv[++i], NULL);
        } else if (strcmp(argv[i], "--loop") == 0 && i + 1 < argc) {
            const char *name = argv[++i];
            size_t l = 0;
            while (l < LOOP_COUNT && strcmp(loops[l].name, name) != 0)
                l++;
            if (l == LOOP_COUNT)
                usage();
            selected[l] = any_selected = 1;
        } else {
            usage();
        }
    }
    if (samples < 1 || !(scale > 0.0))
        usage();

    bench_env env;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &env.platform, NULL));
    CHECK(clGetDeviceIDs(env.platform, CL_DEVICE_TYPE_ALL, 1, &env.device, NULL));
    env.context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CHECK(err);
    env.queue = clCreateCommandQueueWithProperties(env.context, env.device, NULL, &err);
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
    };

    char platform_name[128] = "?", device_name[128] = "?";
    clGetPlatformInfo(env.platform, CL_PLATFORM_NAME, sizeof platform_name, platform_name, NULL);
    clGetDeviceInfo(env.device, CL_DEVICE_NAME, sizeof device_name, device_name, NULL);
    int layer = clGetExtensionFunctionAddressForPlatform(env.platform, "clReportLiveObjectsIntelFPGA") != NULL;
    printf("# bench_opencl platform \"%s\" device \"%s\"\n", platform_name, device_name);
    printf("# layer %s\n", layer ? "yes" : "no");
    printf("# loop iterations ns_per_iteration direct_ns_per_iteration\n");
    fflush(stdout);

    for (size_t l = 0; l < LOOP_COUNT; l++) {
        if (any_selected && !selected[l])
            continue;
        long iterations = (long)(loops[l].iterations * scale);
        if (iterations < 1)
            iterations = 1;
        /* warm-up: pools, caches, lazy initialisation */
        loops[l].run(&env, &through_loader, iterations / 10 + 1);
        loops[l].run(&env, &env.direct, iterations / 10 + 1);
        for (long s = 0; s < samples; s++) {
            /* the two paths back to back, first one then the other */
            double ns[2];
            for (int k = 0; k < 2; k++) {
                int direct = (k + s) % 2;
                double start = now_ns();
                loops[l].run(&env, direct ? &env.direct : &through_loader, iterations);
                ns[direct] = (now_ns() - start) / (double)iterations;
            }
            printf("%s %ld %.1f %.1f\n", loops[l].name, iterations, ns[0], ns[1]);
            fflush(stdout);
        }
    }

    CHECK(clReleaseCommandQueue(env.queue));
    CHECK(clReleaseContext(env.context));
    return 0;
}
