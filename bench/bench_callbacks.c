/*
 * bench_callbacks: what an event callback costs, through the ICD loader
 * (and the layer, when OPENCL_LAYERS loads it) and straight into the
 * driver, in one run. Not part of bench/run; docs/PERFORMANCE.md quotes it.
 *
 * Usage: bench_callbacks [--threads N] [--iterations N] [--samples N] [--callbacks K]
 *
 * Every thread repeats, on an event of its own: clCreateUserEvent, K x
 * clSetEventCallback, clSetUserEventStatus(CL_COMPLETE), clReleaseEvent,
 * and at the end of a sample waits until every callback has run (pocl may
 * run them on a thread of its own). The same loop with no callback is the
 * baseline; "per callback" is the difference divided by K.
 *
 * Output, one line per sample (lines starting with '#' are comments):
 *   <threads> <K> <path> <ns per iteration, no callback> <ns per iteration, K callbacks> <ns per callback>
 * path is "loader" (the program's calls, through any layer) or "direct"
 * (the driver's dispatch table). With several threads, ns are wall time
 * divided by one thread's iterations: what each thread waits per event.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_icd.h>

#include "bench_util.h"

static void check(cl_int err, const char *call, int line)
{
    if (err != CL_SUCCESS)
        bench_die("line %d: %s failed with error %d", line, call, (int)err);
}
#define CHECK(call) check((call), #call, __LINE__)

typedef struct callback_api {
    cl_api_clCreateUserEvent create_user_event;
    cl_api_clSetEventCallback set_event_callback;
    cl_api_clSetUserEventStatus set_user_event_status;
    cl_api_clReleaseEvent release_event;
} callback_api;

static const callback_api through_loader = {clCreateUserEvent, clSetEventCallback, clSetUserEventStatus,
                                            clReleaseEvent};
static callback_api direct;

static cl_context context;
static atomic_long callbacks_run;

static void CL_CALLBACK count_callback(cl_event event, cl_int status, void *data)
{
    (void)event, (void)status, (void)data;
    atomic_fetch_add_explicit(&callbacks_run, 1, memory_order_relaxed);
}

typedef struct worker_args {
    const callback_api *api;
    long iterations;
    long callbacks; /* per event */
    pthread_barrier_t *start;
} worker_args;

static void *worker(void *arg)
{
    worker_args *work = arg;
    pthread_barrier_wait(work->start);
    for (long i = 0; i < work->iterations; i++) {
        cl_int err;
        cl_event event = work->api->create_user_event(context, &err);
        CHECK(err);
        for (long k = 0; k < work->callbacks; k++)
            CHECK(work->api->set_event_callback(event, CL_COMPLETE, count_callback, NULL));
        CHECK(work->api->set_user_event_status(event, CL_COMPLETE));
        CHECK(work->api->release_event(event));
    }
    return NULL;
}

/* ns per iteration of one thread: all threads run the loop at once. */
static double timed_run(const callback_api *api, long threads, long iterations, long callbacks)
{
    pthread_t ids[64];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    worker_args work = {api, iterations, callbacks, &start};
    long expected = atomic_load(&callbacks_run) + threads * iterations * callbacks;
    for (long t = 0; t < threads; t++)
        if (pthread_create(&ids[t], NULL, worker, &work) != 0)
            bench_die("cannot start a thread");
    pthread_barrier_wait(&start);
    double began = bench_now_ns();
    for (long t = 0; t < threads; t++)
        pthread_join(ids[t], NULL);
    while (atomic_load(&callbacks_run) < expected)
        usleep(10);
    double elapsed = bench_now_ns() - began;
    pthread_barrier_destroy(&start);
    return elapsed / (double)iterations;
}

int main(int argc, char **argv)
{
    bench_name = "bench_callbacks";
    long threads = 1, iterations = 20000, samples = 5, callbacks = 1;
    const bench_option options[] = {
        {"--threads", &threads, 1, 64, NULL},
        {"--iterations", &iterations, 1, 100000000, NULL},
        {"--samples", &samples, 1, 1000, NULL},
        {"--callbacks", &callbacks, 1, 1000, NULL},
    };
    bench_parse_options(argc, argv, options, sizeof options / sizeof options[0],
                        "usage: bench_callbacks [--threads N] [--iterations N] [--samples N] [--callbacks K]\n");

    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    /* An ICD driver's objects start with a pointer to its dispatch table. */
    const struct _cl_icd_dispatch *driver = *(struct _cl_icd_dispatch *const *)context;
    direct = (callback_api){driver->clCreateUserEvent, driver->clSetEventCallback, driver->clSetUserEventStatus,
                            driver->clReleaseEvent};

    int layer = clGetExtensionFunctionAddressForPlatform(platform, "clReportLiveObjectsIntelFPGA") != NULL;
    printf("# bench_callbacks layer %s threads %ld iterations %ld callbacks per event %ld\n", layer ? "yes" : "no",
           threads, iterations, callbacks);
    printf("# threads callbacks path ns_no_callback ns_with_callbacks ns_per_callback\n");
    const callback_api *paths[2] = {&through_loader, &direct};
    const char *path_names[2] = {"loader", "direct"};
    for (int p = 0; p < 2; p++) /* warm-up */
        timed_run(paths[p], threads, iterations / 10 + 1, callbacks);
    for (long s = 0; s < samples; s++) {
        for (int k = 0; k < 2; k++) {
            int p = (int)((k + s) % 2); /* alternate which path goes first */
            double without = timed_run(paths[p], threads, iterations, 0);
            double with = timed_run(paths[p], threads, iterations, callbacks);
            printf("%ld %ld %s %.1f %.1f %.1f\n", threads, callbacks, path_names[p], without, with,
                   (with - without) / (double)callbacks);
            fflush(stdout);
        }
    }
    CHECK(clReleaseContext(context));
    return 0;
}
