/*
 * leaky_events: the example of the live-object-tracking extension, run for
 * real on any OpenCL platform (pocl works).
 *
 * Each of 10 iterations enqueues a task and a read that waits for it, and
 * forgets to release both events. The live-object report at the end lists
 * 20 cl_event objects beside the context, queue, buffer, program and
 * kernel the program still uses. Everything except the events is released
 * before exit, so livetrack's exit report (on stderr) names exactly the 20
 * leaked events.
 *
 * Run it under the layer:
 *   OPENCL_LAYERS=$PWD/build/layer/opencl/liblivetrack_cl.so build/samples/leaky_events
 *
 * Without the layer the extension functions are missing; the sample says so
 * and runs the same OpenCL work without reporting.
 */
#include <stdio.h>
#include <stdlib.h>

#include <CL/cl.h>
#include <CL/cl_ext_live_object_tracking.h>

/* Stop with a message when an OpenCL call fails. */
static void check(cl_int err, const char *call, int line)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "leaky_events: line %d: %s failed with error %d\n", line, call, (int)err);
        exit(1);
    }
}
#define CHECK(call) check((call), #call, __LINE__)

static const char *kernel_source = "__kernel void task(__global int *p) { p[0] += 1; }\n";

/* Called once per live object, newest object first. */
static void CL_CALLBACK show_live_obj(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    (void)user_data; /* could carry a log file or a counter */
    printf(" Live %s object: %p refcount %u\n", type_name, object, refcount);
}

int main(void)
{
    cl_int err;
    cl_platform_id platform;
    cl_device_id device;

    CHECK(clGetPlatformIDs(1, &platform, NULL));

    /* Ask for tracking as soon as the platform is known. The functions are
     * extension functions: they must be looked up, not linked. */
    clTrackLiveObjectsIntelFPGA_fn track =
        (clTrackLiveObjectsIntelFPGA_fn)clGetExtensionFunctionAddressForPlatform(platform,
                                                                                 "clTrackLiveObjectsIntelFPGA");
    clReportLiveObjectsIntelFPGA_fn report =
        (clReportLiveObjectsIntelFPGA_fn)clGetExtensionFunctionAddressForPlatform(platform,
                                                                                  "clReportLiveObjectsIntelFPGA");
    if (track && report) {
        track(platform);
    } else {
        fprintf(stderr, "leaky_events: cl_intelfpga_live_object_tracking is not available; run with\n"
                        "leaky_events:   OPENCL_LAYERS=/abs/path/to/liblivetrack_cl.so\n"
                        "leaky_events: to see the live objects. Continuing without the report.\n");
        report = NULL;
    }

    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device, NULL));
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    CHECK(err);
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, &err);
    CHECK(err);
    cl_int zero = 0;
    CHECK(clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL));

    cl_program program = clCreateProgramWithSource(context, 1, &kernel_source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL));
    cl_kernel kernel = clCreateKernel(program, "task", &err);
    CHECK(err);
    CHECK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));

    cl_int results[10];
    for (int i = 0; i < 10; i++) {
        /* We leak these events, and only the report will tell us. */
        cl_event leaked_event, another;
        CHECK(clEnqueueTask(queue, kernel, 0, NULL, &leaked_event));
        CHECK(clEnqueueReadBuffer(queue, buffer, CL_FALSE, 0, sizeof results[i], &results[i], 1, &leaked_event,
                                  &another));
        /* The events are not released! */
    }
    CHECK(clFinish(queue));
    printf("leaky_events: counter after 10 tasks: %d\n", (int)results[9]);

    /* List every live object: 20 cl_event objects and the five objects
     * above, which are still in use. */
    if (report) {
        printf("leaky_events: live objects, newest first:\n");
        report(platform, show_live_obj, NULL);
    }

    /* Clean up everything except the events. */
    CHECK(clReleaseKernel(kernel));
    CHECK(clReleaseProgram(program));
    CHECK(clReleaseMemObject(buffer));
    CHECK(clReleaseCommandQueue(queue));
    CHECK(clReleaseContext(context));
    return 0;
}
