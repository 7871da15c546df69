/*
 * cl_site_leaky: an ordinary OpenCL program (it knows nothing of
 * livetrack) that leaks objects at known lines, for cl_report_sites.
 * Every leaking call is on one line marked with a LEAK:name comment; the
 * test reads the line numbers from this file and expects the report to
 * name exactly those lines.
 *
 *   cl_site_leaky leak   leaks: a 4096-byte buffer, 10 user events made at
 *                        one line, a kernel (its program released: kept
 *                        alive), a 256-byte sub-buffer (its parent
 *                        released), a marker event, and a 512-byte buffer
 *                        made inside libcl_site_vendor; context and queue
 *                        are released (kept alive by the leaks)
 *   cl_site_leaky clean  the same work, everything released
 *   cl_site_leaky callbacks
 *                        leaks a 128-byte buffer made in an event
 *                        callback (on a driver thread, through
 *                        livetrack's callback wrapper) and a 64-byte
 *                        buffer made in a memory object's destructor
 *                        callback (run inside the program's
 *                        clReleaseMemObject, through livetrack's wrapper
 *                        of that call): each site starts at the
 *                        callback's own line
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl_site_vendor.h"

#define MUST(call)                                                                                        \
    do {                                                                                                  \
        cl_int must_err_ = (call);                                                                        \
        if (must_err_ != CL_SUCCESS) {                                                                    \
            fprintf(stderr, "cl_site_leaky: %s failed: %d (line %d)\n", #call, (int)must_err_, __LINE__); \
            exit(3);                                                                                      \
        }                                                                                                 \
    } while (0)

static const char *source = "__kernel void k(__global int *p) { p[0] = 1; }\n";

/* The context the callbacks make their buffers in. */
static cl_context callback_context;
static atomic_int event_callback_ran;

static void CL_CALLBACK leak_in_event_callback(cl_event event, cl_int status, void *data)
{
    (void)event, (void)status, (void)data;
    cl_mem leaked = clCreateBuffer(callback_context, CL_MEM_READ_WRITE, 128, NULL, NULL); /* LEAK:event_callback */
    atomic_store(&event_callback_ran, leaked ? 1 : -1);
}

static void CL_CALLBACK leak_in_destructor_callback(cl_mem destroyed, void *data)
{
    (void)destroyed;
    cl_mem leaked = clCreateBuffer(callback_context, CL_MEM_READ_WRITE, 64, NULL, NULL); /* LEAK:destructor_callback */
    *(int *)data = leaked ? 1 : -1;
}

/* The callbacks' leaks; everything else released. */
static int leak_in_callbacks(cl_device_id device)
{
    cl_int err = CL_SUCCESS;
    callback_context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    MUST(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(callback_context, device, NULL, &err);
    MUST(err);
    cl_event marker = NULL;
    MUST(clEnqueueMarkerWithWaitList(queue, 0, NULL, &marker));
    MUST(clSetEventCallback(marker, CL_COMPLETE, leak_in_event_callback, NULL));
    MUST(clFinish(queue));
    /* The driver runs the callback on a thread of its own, maybe after clFinish returned. */
    for (int i = 0; i < 10000 && !atomic_load(&event_callback_ran); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    if (atomic_load(&event_callback_ran) != 1) {
        fprintf(stderr, "cl_site_leaky: the event callback did not make its buffer\n");
        return 3;
    }
    MUST(clReleaseEvent(marker));

    int destructor_ran = 0;
    cl_mem destroyed = clCreateBuffer(callback_context, CL_MEM_READ_WRITE, 32, NULL, &err);
    MUST(err);
    MUST(clSetMemObjectDestructorCallback(destroyed, leak_in_destructor_callback, &destructor_ran));
    MUST(clReleaseMemObject(destroyed));
    if (destructor_ran != 1) {
        fprintf(stderr, "cl_site_leaky: the destructor callback did not make its buffer\n");
        return 3;
    }
    MUST(clReleaseCommandQueue(queue));
    MUST(clReleaseContext(callback_context));
    printf("cl_site_leaky: done\n");
    return 0;
}

int main(int argc, char **argv)
{
    int clean = argc > 1 && strcmp(argv[1], "clean") == 0;
    int callbacks = argc > 1 && strcmp(argv[1], "callbacks") == 0;
    if (argc < 2 || (!clean && !callbacks && strcmp(argv[1], "leak") != 0)) {
        fprintf(stderr, "usage: cl_site_leaky leak|clean|callbacks\n");
        return 64;
    }
    cl_platform_id platform;
    cl_device_id device;
    cl_int err = CL_SUCCESS;
    MUST(clGetPlatformIDs(1, &platform, NULL));
    MUST(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    if (callbacks)
        return leak_in_callbacks(device);
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    MUST(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    MUST(err);

    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err); /* LEAK:buffer */
    MUST(err);
    cl_event events[10];
    for (int i = 0; i < 10; i++) {
        events[i] = clCreateUserEvent(context, &err); /* LEAK:events */
        MUST(err);
        MUST(clSetUserEventStatus(events[i], CL_COMPLETE));
    }
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    MUST(err);
    MUST(clBuildProgram(program, 1, &device, "", NULL, NULL));
    cl_kernel kernel = clCreateKernel(program, "k", &err); /* LEAK:kernel */
    MUST(err);
    cl_mem parent = clCreateBuffer(context, CL_MEM_READ_WRITE, 1024, NULL, &err);
    MUST(err);
    cl_buffer_region region = {0, 256};
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err); /* LEAK:sub */
    MUST(err);
    cl_event marker = NULL;
    MUST(clEnqueueMarkerWithWaitList(queue, 0, NULL, &marker)); /* LEAK:marker */
    MUST(clFinish(queue));
    cl_mem vendor = vendor_leak(context);
    if (!vendor)
        return 3;

    MUST(clReleaseProgram(program));
    MUST(clReleaseMemObject(parent));
    MUST(clReleaseCommandQueue(queue));
    MUST(clReleaseContext(context));
    if (clean) {
        MUST(clReleaseMemObject(vendor));
        MUST(clReleaseEvent(marker));
        MUST(clReleaseMemObject(sub));
        MUST(clReleaseKernel(kernel));
        for (int i = 0; i < 10; i++)
            MUST(clReleaseEvent(events[i]));
        MUST(clReleaseMemObject(buffer));
    }
    printf("cl_site_leaky: done\n");
    return 0;
}
