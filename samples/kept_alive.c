/*
 * kept_alive: objects the program has released can stay alive because other
 * live objects hold them, and the live-object report shows them.
 *
 *   1. A program released while one of its kernels is alive is still live:
 *      the kernel keeps it. It is reported after the kernel.
 *   2. A buffer released while a sub-buffer of it is alive is still live.
 *      Once the sub-buffer goes, the buffer goes too.
 *   3. The kernel is never released: at exit livetrack reports it as a leak,
 *      and names the program (and context) it keeps alive.
 *
 * The report callback is free to call OpenCL: here it asks each kernel
 * and memory object for a detail to print.
 *
 * Run it under the layer:
 *   OPENCL_LAYERS=$PWD/build/layer/opencl/liblivetrack_cl.so build/samples/kept_alive
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_ext_live_object_tracking.h>

/* Stop with a message when an OpenCL call fails. */
static void check(cl_int err, const char *call, int line)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "kept_alive: line %d: %s failed with error %d\n", line, call, (int)err);
        exit(1);
    }
}
#define CHECK(call) check((call), #call, __LINE__)

static const char *kernel_source = "__kernel void scale(__global float *x, float k) { x[get_global_id(0)] *= k; }\n";

static clReportLiveObjectsIntelFPGA_fn report;
static cl_platform_id platform;

/* Print one live object, with a detail the callback asks the driver for. */
static void CL_CALLBACK show(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    unsigned *count = user_data;
    char detail[64] = "";
    if (strcmp(type_name, "cl_kernel") == 0) {
        char name[32];
        if (clGetKernelInfo((cl_kernel)object, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL) == CL_SUCCESS)
            snprintf(detail, sizeof detail, "  (kernel \"%s\")", name);
    } else if (strcmp(type_name, "cl_mem") == 0) {
        size_t size;
        cl_mem parent = NULL;
        if (clGetMemObjectInfo((cl_mem)object, CL_MEM_SIZE, sizeof size, &size, NULL) == CL_SUCCESS &&
            clGetMemObjectInfo((cl_mem)object, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL) ==
                CL_SUCCESS)
            snprintf(detail, sizeof detail, "  (%zu bytes%s)", size, parent ? ", sub-buffer" : "");
    }
    printf("   %-16s %p refcount %u%s\n", type_name, object, refcount, detail);
    (*count)++;
}

static void report_now(const char *when)
{
    unsigned count = 0;
    printf("kept_alive: %s\n", when);
    if (!report) {
        printf("   (unknown: the livetrack layer is not loaded)\n");
        return;
    }
    report(platform, show, &count);
    printf("   (%u live objects)\n", count);
}

int main(void)
{
    cl_int err;
    cl_device_id device;
    CHECK(clGetPlatformIDs(1, &platform, NULL));

    clTrackLiveObjectsIntelFPGA_fn track =
        (clTrackLiveObjectsIntelFPGA_fn)clGetExtensionFunctionAddressForPlatform(platform,
                                                                                 "clTrackLiveObjectsIntelFPGA");
    report = (clReportLiveObjectsIntelFPGA_fn)clGetExtensionFunctionAddressForPlatform(platform,
                                                                                       "clReportLiveObjectsIntelFPGA");
    if (track && report) {
        track(platform);
    } else {
        fprintf(stderr, "kept_alive: cl_intelfpga_live_object_tracking is not available; run with\n"
                        "kept_alive:   OPENCL_LAYERS=/abs/path/to/liblivetrack_cl.so\n"
                        "kept_alive: to see the live objects. Continuing without the reports.\n");
        report = NULL;
    }

    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device, NULL));
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);

    /* 1. A kernel keeps its program alive. */
    cl_program program = clCreateProgramWithSource(context, 1, &kernel_source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL));
    cl_kernel kernel = clCreateKernel(program, "scale", &err);
    CHECK(err);
    CHECK(clReleaseProgram(program)); /* we hold no reference to it any more... */
    report_now("after releasing the program; the kernel still holds it:");

    /* 2. A sub-buffer keeps its parent buffer alive. */
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK(err);
    cl_buffer_region region = {0, 1024};
    cl_mem half = clCreateSubBuffer(buffer, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CHECK(err);
    CHECK(clReleaseMemObject(buffer));
    report_now("after releasing the 4096-byte buffer; its sub-buffer still holds it:");

    CHECK(clReleaseMemObject(half));
    report_now("after releasing the sub-buffer; both buffers are gone:");

    /* 3. The context is released, but the kernel is deliberately leaked:
     * the kernel keeps the program and, through it, the context alive. */
    CHECK(clReleaseContext(context));
    report_now("after releasing the context; only the leaked kernel holds everything:");
    printf("kept_alive: exiting with kernel %p leaked; see livetrack's exit report on stderr\n", (void *)kernel);
    return 0;
}
