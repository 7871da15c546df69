/*
 * cli_app: an ordinary OpenCL program (it knows nothing of livetrack) that
 * the `livetrack` command tests run under `livetrack run`.
 *
 *   --leak N        leak N user events from leak_events() (default 2)
 *   --extra-leak    also leak one 4 KiB buffer from planted_leak(): the
 *                   "regression" that `livetrack diff` must find
 *   --churn N       create and release N buffers of 1 KiB (timeline volume)
 *   --misuse        release a buffer twice (a misuse row in the timeline)
 *   --orphan        release the context before a buffer made from it: the
 *                   context ends with the buffer's release
 *   --pipeline N    N steps of a buffer pipeline: each step fills a new
 *                   buffer of 64 KiB to 1 MiB, keeps the last 24 and
 *                   forgets the fill's event every 40 steps (a timeline
 *                   worth plotting: docs/report.png comes from it)
 *   --exit N        exit with status N
 *   --signal N      end by raising signal N (default action: no crash report)
 *   --fork          fork once the context exists; the child exits at once
 *                   (keeping a copy of the context), the parent waits
 *   --wait-file F   once the context exists, wait until file F exists
 *   --crash         end by a real SIGSEGV (a store to address 16). Not
 *                   raise() or abort(): pocl's LLVM puts its own handler
 *                   before livetrack's, and a signal sent, not faulted, is
 *                   not seen again once that handler returns
 *
 * The helpers are noinline so each leak has a call site of its own.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CL/cl.h>

static void check(cl_int err, const char *what)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "cli_app: %s failed with error %d\n", what, (int)err);
        exit(99);
    }
}

__attribute__((noinline)) static void leak_events(cl_context context, int count)
{
    for (int i = 0; i < count; i++) {
        cl_int err;
        cl_event event = clCreateUserEvent(context, &err);
        check(err, "clCreateUserEvent");
        clSetUserEventStatus(event, CL_COMPLETE);
        (void)event; /* never released */
    }
}

__attribute__((noinline)) static void planted_leak(cl_context context)
{
    cl_int err;
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err);
    check(err, "clCreateBuffer");
    (void)buffer; /* never released */
}

__attribute__((noinline)) static void churn(cl_context context, long count)
{
    for (long i = 0; i < count; i++) {
        cl_int err;
        cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 1024, NULL, &err);
        check(err, "clCreateBuffer");
        check(clReleaseMemObject(buffer), "clReleaseMemObject");
    }
}

__attribute__((noinline)) static void misuse(cl_context context)
{
    cl_int err;
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
    check(err, "clCreateBuffer");
    check(clReleaseMemObject(buffer), "clReleaseMemObject");
    err = clReleaseMemObject(buffer); /* livetrack refuses this one */
    printf("cli_app: second release returned %d\n", (int)err);
}

__attribute__((noinline)) static void forget_event(cl_event event) { (void)event; /* never released */ }

#define PIPELINE_DEPTH 24

__attribute__((noinline)) static void pipeline(cl_context context, cl_device_id device, long steps)
{
    cl_int err;
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    check(err, "clCreateCommandQueueWithProperties");
    cl_mem ring[PIPELINE_DEPTH] = {0};
    for (long i = 0; i < steps; i++) {
        /* sizes rise and fall, so live bytes have a shape and a peak */
        size_t size = (size_t)(64 + 960 * ((i / 25) % 8 == 5 ? 1 : (i % 200) / 200.0)) * 1024;
        cl_mem *slot = &ring[i % PIPELINE_DEPTH];
        if (*slot)
            check(clReleaseMemObject(*slot), "clReleaseMemObject");
        *slot = clCreateBuffer(context, CL_MEM_READ_WRITE, size, NULL, &err);
        check(err, "clCreateBuffer");
        cl_uchar pattern = (cl_uchar)i;
        cl_event filled;
        check(clEnqueueFillBuffer(queue, *slot, &pattern, 1, 0, size, 0, NULL, &filled), "clEnqueueFillBuffer");
        check(clWaitForEvents(1, &filled), "clWaitForEvents");
        if (i % 40 == 39)
            forget_event(filled);
        else
            check(clReleaseEvent(filled), "clReleaseEvent");
    }
    for (int k = 0; k < PIPELINE_DEPTH; k++)
        if (ring[k])
            check(clReleaseMemObject(ring[k]), "clReleaseMemObject");
    check(clReleaseCommandQueue(queue), "clReleaseCommandQueue");
}

static volatile int zero;

/* A fault the compiler cannot see coming, left to the hardware by UBSan. */
__attribute__((no_sanitize("undefined"), noinline)) static void fault(void)
{
    volatile int *nowhere = (volatile int *)(uintptr_t)(zero + 16);
    *nowhere = 1;
}

int main(int argc, char **argv)
{
    int leaks = 2, extra = 0, do_misuse = 0, orphan = 0, exit_status = 0, signal_number = 0, crash = 0, forks = 0;
    long churn_count = 0, pipeline_steps = 0;
    const char *wait_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--leak") && i + 1 < argc)
            leaks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--extra-leak"))
            extra = 1;
        else if (!strcmp(argv[i], "--churn") && i + 1 < argc)
            churn_count = atol(argv[++i]);
        else if (!strcmp(argv[i], "--pipeline") && i + 1 < argc)
            pipeline_steps = atol(argv[++i]);
        else if (!strcmp(argv[i], "--misuse"))
            do_misuse = 1;
        else if (!strcmp(argv[i], "--orphan"))
            orphan = 1;
        else if (!strcmp(argv[i], "--exit") && i + 1 < argc)
            exit_status = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--signal") && i + 1 < argc)
            signal_number = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--crash"))
            crash = 1;
        else if (!strcmp(argv[i], "--fork"))
            forks = 1;
        else if (!strcmp(argv[i], "--wait-file") && i + 1 < argc)
            wait_file = argv[++i];
        else {
            fprintf(stderr, "cli_app: unknown argument %s\n", argv[i]);
            return 98;
        }
    }

    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    check(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    check(err, "clCreateContext");
    /* Hold here, the context made (a timeline row written), until the
     * caller creates the file: another process can start meanwhile. */
    for (int waited = 0; wait_file && access(wait_file, F_OK) != 0; waited++) {
        if (waited == 3000)
            return 95;
        usleep(10000);
    }
    if (forks) {
        pid_t child = fork();
        if (child == 0)
            exit(0);
        int status;
        if (child < 0 || waitpid(child, &status, 0) != child)
            return 97;
        /* The child only inherited the context: under --fail-on-leak its
         * status must still be 0, or the tool changed the program. */
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "cli_app: the forked child ended with status %d\n", status);
            return 96;
        }
    }

    churn(context, churn_count);
    pipeline(context, device, pipeline_steps);
    leak_events(context, leaks);
    if (extra)
        planted_leak(context);
    if (do_misuse)
        misuse(context);
    cl_mem last_buffer = NULL;
    if (orphan) {
        last_buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 256, NULL, &err);
        check(err, "clCreateBuffer");
    }
    clReleaseContext(context);
    if (last_buffer)
        check(clReleaseMemObject(last_buffer), "clReleaseMemObject");
    fflush(stdout);
    if (signal_number) {
        signal(signal_number, SIG_DFL);
        raise(signal_number);
    }
    if (crash)
        fault();
    return exit_status;
}
