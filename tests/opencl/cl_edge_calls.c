/*
 * cl_edge_calls: an ordinary OpenCL program (it knows nothing of
 * livetrack) for cl_transparency, made of the calls where a layer most
 * easily changes what the program sees:
 *   - count out-parameters: NULL where the specification requires an
 *     error, and the program's variable after a call that failed;
 *   - the driver calling the program back with an object: the linked
 *     program inside clLinkProgram's notification, an event inside its
 *     own callback after the program released it, and that event's
 *     context, and an SVM free's queue, after the program released the
 *     queue and the context (retained there, and released after), and a
 *     buffer made there in a context nothing else holds any more, which
 *     keeps that context a valid argument after the callback;
 *   - by-value kernel arguments of pointer size whose type names look
 *     like images, and a value given for a __local pointer.
 * It prints every result on stdout; the output must be the same with and
 * without the layer, and the layer must say nothing (no misuse here).
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "buffer_made_in_callback.h"

#define MUST(call)                                                                                        \
    do {                                                                                                  \
        cl_int must_err_ = (call);                                                                        \
        if (must_err_ != CL_SUCCESS) {                                                                    \
            fprintf(stderr, "cl_edge_calls: %s failed: %d (line %d)\n", #call, (int)must_err_, __LINE__); \
            exit(3);                                                                                      \
        }                                                                                                 \
    } while (0)

/* A value no driver writes, to see whether an out-parameter was touched. */
#define UNTOUCHED 12345u

static const char *two_kernels = "__kernel void first(__global int *a) { a[0] = 1; }\n"
                                 "__kernel void second(__global int *a) { a[0] = 2; }\n";

static const char *image_lookalikes = "typedef long image_offset_t;\n"
                                      "typedef struct { int width, height; } image_size;\n"
                                      "__kernel void place(__global int *out, image_offset_t offset, image_size size,\n"
                                      "                    __local float *scratch)\n"
                                      "{ scratch[0] = 1; out[0] = (int)offset + size.width * size.height; }\n";

static cl_program build(cl_context context, cl_device_id device, const char *source, const char *options)
{
    cl_int err;
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    MUST(err);
    MUST(clBuildProgram(program, 1, &device, options, NULL, NULL));
    return program;
}

static void count_out_parameters(cl_platform_id platform, cl_device_id device, cl_context context)
{
    printf("clGetDeviceIDs(no devices, no count) = %d\n",
           (int)clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, NULL));
    cl_device_id found = NULL;
    cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &found, NULL);
    printf("clGetDeviceIDs(1 slot, no count) = %d, device %s\n", (int)err, found == device ? "same" : "other");

    cl_program program = build(context, device, two_kernels, "");
    cl_kernel kernel = NULL;
    cl_uint kernels = UNTOUCHED;
    err = clCreateKernelsInProgram(program, 1, &kernel, &kernels);
    printf("clCreateKernelsInProgram(1 slot for 2) = %d, num_kernels_ret %s\n", (int)err,
           kernels == UNTOUCHED ? "untouched" : "written");
    if (err == CL_SUCCESS)
        MUST(clReleaseKernel(kernel));
    MUST(clReleaseProgram(program));

    cl_uint units = 0;
    MUST(clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
    const cl_device_partition_property by_one[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_device_id sub = NULL;
    cl_uint subs = UNTOUCHED;
    err = clCreateSubDevices(device, by_one, 1, &sub, &subs);
    /* One compute unit gives one sub-device, which fits; more do not. */
    printf("clCreateSubDevices(1 slot) = %s, num_devices_ret %s\n",
           err == CL_SUCCESS ? "success" : err == CL_INVALID_VALUE ? "CL_INVALID_VALUE" : "other error",
           subs == UNTOUCHED ? "untouched" : subs == (units ? units : 1) ? "the count" : "wrong");
    if (err == CL_SUCCESS)
        MUST(clReleaseDevice(sub));
}

typedef struct link_report {
    cl_device_id device;
    atomic_int done;
    cl_int build_info;
    cl_int program_info;
    cl_uint refs;
} link_report;

static void CL_CALLBACK linked(cl_program program, void *data)
{
    link_report *report = data;
    cl_build_status status;
    report->build_info =
        clGetProgramBuildInfo(program, report->device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, NULL);
    report->program_info =
        clGetProgramInfo(program, CL_PROGRAM_REFERENCE_COUNT, sizeof report->refs, &report->refs, NULL);
    atomic_store(&report->done, 1);
}

/* Callbacks may run on a driver thread after the call returns. */
static int wait_for(atomic_int *flag)
{
    for (int i = 0; i < 10000 && !atomic_load(flag); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    return atomic_load(flag);
}

static void link_notification(cl_context context, cl_device_id device)
{
    cl_int err;
    const char *source = "__kernel void linked_kernel(__global int *a) { a[0] = 3; }\n";
    cl_program compiled = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    MUST(err);
    MUST(clCompileProgram(compiled, 1, &device, "", 0, NULL, NULL, NULL, NULL));
    link_report report = {.device = device, .done = 0};
    cl_program program = clLinkProgram(context, 1, &device, "", 1, &compiled, linked, &report, &err);
    printf("clLinkProgram(with a notification) = %d, program %s\n", (int)err, program ? "returned" : "none");
    int ran = wait_for(&report.done); /* before the report's fields are read */
    printf("notification ran: %d, clGetProgramBuildInfo inside = %d, clGetProgramInfo inside = %d\n", ran,
           (int)report.build_info, (int)report.program_info);
    if (program)
        MUST(clReleaseProgram(program));
    MUST(clReleaseProgram(compiled));
}

typedef struct event_report {
    atomic_int done;
    cl_int status_info;
    cl_int type_info;
    cl_command_type type;
} event_report;

static void CL_CALLBACK completed(cl_event event, cl_int status, void *data)
{
    event_report *report = data;
    cl_int now;
    (void)status;
    report->status_info = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof now, &now, NULL);
    report->type_info = clGetEventInfo(event, CL_EVENT_COMMAND_TYPE, sizeof report->type, &report->type, NULL);
    atomic_store(&report->done, 1);
}

/* The marker waits on a user event, so it cannot complete before the
 * program has released it: its callback then runs on an event only the
 * driver still holds. */
static void callback_after_release(cl_context context, cl_command_queue queue)
{
    cl_int err;
    cl_event gate = clCreateUserEvent(context, &err);
    MUST(err);
    cl_event marker;
    MUST(clEnqueueMarkerWithWaitList(queue, 1, &gate, &marker));
    event_report report = {.done = 0};
    printf("clSetEventCallback = %d\n", (int)clSetEventCallback(marker, CL_COMPLETE, completed, &report));
    printf("clReleaseEvent(marker) = %d\n", (int)clReleaseEvent(marker));
    MUST(clSetUserEventStatus(gate, CL_COMPLETE));
    MUST(clFinish(queue));
    int ran = wait_for(&report.done); /* before the report's fields are read */
    printf("callback ran: %d, clGetEventInfo inside = %d / %d, command type %s\n", ran,
           (int)report.status_info, (int)report.type_info,
           report.type == CL_COMMAND_MARKER ? "marker" : "other");
    MUST(clReleaseEvent(gate));
}

typedef struct held_report {
    atomic_int done;
    cl_int context_info, retain, queue_info, svm_free_context;
    cl_context context;
    cl_command_queue queue;
} held_report;

static void CL_CALLBACK read_event_context(cl_event event, cl_int status, void *data)
{
    held_report *report = data;
    cl_uint devices = 0;
    (void)status;
    if (clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof report->context, &report->context, NULL) != CL_SUCCESS)
        report->context = NULL;
    report->context_info = clGetContextInfo(report->context, CL_CONTEXT_NUM_DEVICES, sizeof devices, &devices, NULL);
    report->retain = clRetainContext(report->context); /* released after the callback */
    atomic_store(&report->done, 1);
}

static void CL_CALLBACK free_with_queue(cl_command_queue queue, cl_uint count, void *pointers[], void *data)
{
    held_report *report = data;
    cl_context context = NULL;
    report->queue_info = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, NULL);
    report->retain = clRetainCommandQueue(queue); /* released after the callback */
    report->queue = queue;
    report->svm_free_context = context ? CL_SUCCESS : CL_INVALID_CONTEXT;
    for (cl_uint i = 0; i < count; i++)
        clSVMFree(context, pointers[i]);
    atomic_store(&report->done, 1);
}

/* The program releases the event, the queue and the context while a user
 * event it still holds keeps their commands waiting; the callbacks run
 * once it opens, and use them. */
static void held_for_callbacks(cl_device_id device)
{
    cl_int err, marker_callback = CL_INVALID_VALUE, svm_free = CL_INVALID_VALUE;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    MUST(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    MUST(err);
    void *svm = clSVMAlloc(context, CL_MEM_READ_WRITE, 256, 0);
    cl_event gate = clCreateUserEvent(context, &err);
    MUST(err);
    cl_event marker;
    MUST(clEnqueueMarkerWithWaitList(queue, 1, &gate, &marker));
    held_report on_event = {.done = 0}, on_free = {.done = 0};
    marker_callback = clSetEventCallback(marker, CL_COMPLETE, read_event_context, &on_event);
    if (svm)
        svm_free = clEnqueueSVMFree(queue, 1, &svm, free_with_queue, &on_free, 1, &gate, NULL);
    MUST(clFlush(queue));
    MUST(clReleaseEvent(marker));
    MUST(clReleaseCommandQueue(queue));
    MUST(clReleaseContext(context));
    printf("callbacks before the gate opened: %d\n", atomic_load(&on_event.done) + atomic_load(&on_free.done));
    MUST(clSetUserEventStatus(gate, CL_COMPLETE));
    printf("held for callbacks: clSetEventCallback = %d, clEnqueueSVMFree = %d (SVM %s)\n", (int)marker_callback,
           (int)svm_free, svm ? "allocated" : "none");
    /* Both waited for before their reports are read. */
    int event_ran = wait_for(&on_event.done), free_ran = svm ? wait_for(&on_free.done) : 0;
    printf("event callback ran: %d, its context: clGetContextInfo = %d, clRetainContext = %d\n",
           event_ran, (int)on_event.context_info, (int)on_event.retain);
    if (svm)
        printf("SVM free ran: %d, its queue: clGetCommandQueueInfo = %d, clRetainCommandQueue = %d, context %d\n",
               free_ran, (int)on_free.queue_info, (int)on_free.retain, (int)on_free.svm_free_context);
    if (on_free.queue && on_free.retain == CL_SUCCESS)
        printf("clReleaseCommandQueue(retained in the SVM free) = %d\n", (int)clReleaseCommandQueue(on_free.queue));
    if (on_event.context && on_event.retain == CL_SUCCESS)
        printf("clReleaseContext(retained in the callback) = %d\n", (int)clReleaseContext(on_event.context));
    MUST(clReleaseEvent(gate));
}

static void made_in_callback(cl_device_id device)
{
    cl_int err;
    buffer_made_in_callback report;
    MUST(buffer_made_in_callback_run(device, &report));
    int ran = atomic_load(&report.done); /* waited for by buffer_made_in_callback_run */
    printf("callback made a buffer: ran %d, clCreateBuffer = %d\n", ran, (int)report.create);
    if (!report.buffer)
        return;
    cl_context of_buffer = NULL;
    cl_uint devices = 0;
    MUST(clGetMemObjectInfo(report.buffer, CL_MEM_CONTEXT, sizeof of_buffer, &of_buffer, NULL));
    printf("its context after the callback: clGetContextInfo = %d\n",
           (int)clGetContextInfo(of_buffer, CL_CONTEXT_NUM_DEVICES, sizeof devices, &devices, NULL));
    cl_mem another = clCreateBuffer(of_buffer, CL_MEM_READ_WRITE, 64, NULL, &err);
    printf("clCreateBuffer in it = %d\n", (int)err);
    if (another)
        MUST(clReleaseMemObject(another));
    MUST(clReleaseMemObject(report.buffer));
}

static void image_named_values(cl_context context, cl_device_id device)
{
    cl_int err;
    cl_program program = build(context, device, image_lookalikes, "-cl-kernel-arg-info");
    cl_kernel kernel = clCreateKernel(program, "place", &err);
    MUST(err);
    int64_t offset = 0x300000002;
    struct {
        int32_t width, height;
    } size = {2, 3};
    printf("clSetKernelArg(image_offset_t) = %d\n", (int)clSetKernelArg(kernel, 1, sizeof offset, &offset));
    printf("clSetKernelArg(image_size) = %d\n", (int)clSetKernelArg(kernel, 2, sizeof size, &size));
    /* a value for a __local pointer: the driver's error, whatever it is */
    int64_t not_a_size = 42;
    printf("clSetKernelArg(__local with a value) = %d\n",
           (int)clSetKernelArg(kernel, 3, sizeof not_a_size, &not_a_size));
    MUST(clReleaseKernel(kernel));
    MUST(clReleaseProgram(program));
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    MUST(clGetPlatformIDs(1, &platform, NULL));
    MUST(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    MUST(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    MUST(err);

    count_out_parameters(platform, device, context);
    link_notification(context, device);
    callback_after_release(context, queue);
    held_for_callbacks(device);
    made_in_callback(device);
    image_named_values(context, device);

    MUST(clReleaseCommandQueue(queue));
    MUST(clReleaseContext(context));
    return 0;
}
