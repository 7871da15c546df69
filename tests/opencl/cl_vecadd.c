/*
 * cl_vecadd: an ordinary OpenCL program (it knows nothing of livetrack)
 * for cl_transparency. It adds two vectors of 4096 ints, runs a few
 * deterministic clGet*Info queries and failing calls, and prints every
 * result on stdout; the output must be the same with and without the
 * layer. Whether the tracking extension is present goes to stderr only.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MUST(call)                                                                                    \
    do {                                                                                              \
        cl_int must_err_ = (call);                                                                    \
        if (must_err_ != CL_SUCCESS) {                                                                \
            fprintf(stderr, "cl_vecadd: %s failed: %d (line %d)\n", #call, (int)must_err_, __LINE__); \
            exit(3);                                                                                  \
        }                                                                                             \
    } while (0)

enum { N = 4096 };

static const char *source =
    "__kernel void vadd(__global const int *a, __global const int *b, __global int *c) {\n"
    "    size_t i = get_global_id(0);\n"
    "    c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void scale(__global int *c, int factor) { c[get_global_id(0)] *= factor; }\n";

static void print_string(const char *label, char *text) { printf("%s: %s\n", label, text); }

static cl_uint u32_info(cl_int err, const cl_uint *value)
{
    MUST(err);
    return *value;
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_int err = CL_SUCCESS;
    char text[1024];
    cl_uint u = 0;
    size_t size = 0;

    MUST(clGetPlatformIDs(1, &platform, NULL));
    fprintf(stderr, "cl_vecadd: tracking extension %s\n",
            clGetExtensionFunctionAddressForPlatform(platform, "clReportLiveObjectsIntelFPGA") ? "present" : "absent");
    MUST(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof text, text, NULL));
    print_string("platform name", text);
    MUST(clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof text, text, NULL));
    print_string("platform version", text);
    MUST(clGetPlatformInfo(platform, CL_PLATFORM_VENDOR, sizeof text, text, NULL));
    print_string("platform vendor", text);
    cl_uint num_devices = 0;
    MUST(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &num_devices));
    printf("devices: %u\n", num_devices);
    MUST(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    MUST(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof text, text, NULL));
    print_string("device name", text);
    MUST(clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof text, text, NULL));
    print_string("device version", text);
    cl_device_type type = 0;
    MUST(clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    printf("device type: %llu\n", (unsigned long long)type);
    MUST(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &size));
    printf("device extensions size: %zu\n", size);
    printf("device reference count: %u\n",
           u32_info(clGetDeviceInfo(device, CL_DEVICE_REFERENCE_COUNT, sizeof u, &u, NULL), &u));

    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    MUST(err);
    printf("context devices: %u\n", u32_info(clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof u, &u, NULL), &u));
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    MUST(err);
    cl_context queue_context = NULL;
    MUST(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context, NULL));
    printf("queue context is the context: %d\n", queue_context == context);
    cl_device_id queue_device = NULL;
    MUST(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, NULL));
    printf("queue device is the device: %d\n", queue_device == device);

    static cl_int a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = i * 3 - 1000;
        b[i] = (i * 7919) % 1013;
    }
    cl_mem buf_a = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    MUST(err);
    cl_mem buf_b = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b, &err);
    MUST(err);
    cl_mem buf_c = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof c, NULL, &err);
    MUST(err);
    cl_mem_flags flags = 0;
    MUST(clGetMemObjectInfo(buf_a, CL_MEM_FLAGS, sizeof flags, &flags, NULL));
    MUST(clGetMemObjectInfo(buf_c, CL_MEM_SIZE, sizeof size, &size, NULL));
    printf("buffer a flags: %llu, buffer c size: %zu\n", (unsigned long long)flags, size);
    cl_buffer_region region = {0, 1024};
    cl_mem sub = clCreateSubBuffer(buf_c, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    MUST(err);
    cl_mem associated = NULL;
    MUST(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof associated, &associated, NULL));
    MUST(clGetMemObjectInfo(sub, CL_MEM_SIZE, sizeof size, &size, NULL));
    printf("sub-buffer of c: %d, size %zu\n", associated == buf_c, size);

    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    MUST(err);
    MUST(clBuildProgram(program, 1, &device, "", NULL, NULL));
    MUST(clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof size, &size, NULL));
    printf("program kernels: %zu\n", size);
    MUST(clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, sizeof text, text, NULL));
    print_string("kernel names", text);
    cl_kernel kernel = clCreateKernel(program, "vadd", &err);
    MUST(err);
    MUST(clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof text, text, NULL));
    print_string("kernel function", text);
    printf("kernel args: %u\n", u32_info(clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof u, &u, NULL), &u));
    cl_program kernel_program = NULL;
    MUST(clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof kernel_program, &kernel_program, NULL));
    printf("kernel program is the program: %d\n", kernel_program == program);
    printf("program reference count: %u\n",
           u32_info(clGetProgramInfo(program, CL_PROGRAM_REFERENCE_COUNT, sizeof u, &u, NULL), &u));
    printf("kernel reference count: %u\n",
           u32_info(clGetKernelInfo(kernel, CL_KERNEL_REFERENCE_COUNT, sizeof u, &u, NULL), &u));

    printf("context reference count: %u\n",
           u32_info(clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof u, &u, NULL), &u));
    printf("buffer c reference count: %u\n",
           u32_info(clGetMemObjectInfo(buf_c, CL_MEM_REFERENCE_COUNT, sizeof u, &u, NULL), &u));

    /* Error codes of calls that fail in the driver. */
    cl_mem bad = clCreateBuffer(context, CL_MEM_READ_WRITE, 0, NULL, &err);
    printf("clCreateBuffer(size 0): %d %s\n", (int)err, bad ? "object" : "NULL");
    cl_kernel bad_kernel = clCreateKernel(program, "nope", &err);
    printf("clCreateKernel(nope): %d %s\n", (int)err, bad_kernel ? "object" : "NULL");
    printf("clSetKernelArg(index 9): %d\n", (int)clSetKernelArg(kernel, 9, sizeof buf_a, &buf_a));

    MUST(clSetKernelArg(kernel, 0, sizeof buf_a, &buf_a));
    MUST(clSetKernelArg(kernel, 1, sizeof buf_b, &buf_b));
    MUST(clSetKernelArg(kernel, 2, sizeof buf_c, &buf_c));
    size_t global = N;
    cl_event done = NULL;
    MUST(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, &done));
    cl_kernel scale = clCreateKernel(program, "scale", &err);
    MUST(err);
    cl_int factor = 3;
    MUST(clSetKernelArg(scale, 0, sizeof sub, &sub));
    MUST(clSetKernelArg(scale, 1, sizeof factor, &factor));
    size_t sub_items = 256;
    MUST(clEnqueueNDRangeKernel(queue, scale, 1, NULL, &sub_items, NULL, 1, &done, NULL));
    MUST(clEnqueueReadBuffer(queue, buf_c, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    cl_command_type command = 0;
    MUST(clGetEventInfo(done, CL_EVENT_COMMAND_TYPE, sizeof command, &command, NULL));
    cl_int status = 1;
    MUST(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    /* Reference counts are printed only before the first enqueue: pocl
     * drops its own holds on finished commands asynchronously. */
    printf("event command type: 0x%x, status %d\n", (unsigned)command, (int)status);

    long long sum = 0;
    int wrong = 0;
    for (int i = 0; i < N; i++) {
        cl_int expected = (a[i] + b[i]) * (i < 256 ? 3 : 1);
        wrong += c[i] != expected;
        sum += c[i];
    }
    printf("vector add: %d wrong, sum %lld, c[0] %d, c[255] %d, c[256] %d, c[4095] %d\n", wrong, sum, c[0], c[255],
           c[256], c[N - 1]);

    MUST(clReleaseEvent(done));
    MUST(clReleaseKernel(scale));
    MUST(clReleaseKernel(kernel));
    MUST(clReleaseProgram(program));
    MUST(clReleaseMemObject(sub));
    MUST(clReleaseMemObject(buf_c));
    MUST(clReleaseMemObject(buf_b));
    MUST(clReleaseMemObject(buf_a));
    MUST(clReleaseCommandQueue(queue));
    MUST(clReleaseContext(context));
    printf("done\n");
    return wrong ? 1 : 0;
}
