/*
 * cl_leaky: an ordinary OpenCL program (it knows nothing of livetrack)
 * that leaks a known set of objects, for cl_exit_report.
 *
 *   cl_leaky leak   creates, in this order:
 *                     context   (released)
 *                     queue     (released)
 *                     buffer1   4096 bytes (leaked)
 *                     parent    1024 bytes (released)
 *                     sub       256-byte sub-buffer of parent (leaked)
 *                     event     user event (leaked)
 *                     buffer2   100 bytes (leaked)
 *                   and prints "<name> 0x<16 hex digits>" for each.
 *   cl_leaky clean  the same, releasing everything.
 *   cl_leaky leak-misuse  "leak", and releases parent once more after it
 *                   released it (refused by the layer: the sub-buffer
 *                   keeps it alive).
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MUST(call)                                                                                   \
    do {                                                                                             \
        cl_int must_err_ = (call);                                                                   \
        if (must_err_ != CL_SUCCESS) {                                                               \
            fprintf(stderr, "cl_leaky: %s failed: %d (line %d)\n", #call, (int)must_err_, __LINE__); \
            exit(3);                                                                                 \
        }                                                                                            \
    } while (0)

static void show(const char *name, const void *handle)
{
    printf("%s 0x%016llx\n", name, (unsigned long long)(uintptr_t)handle);
}

int main(int argc, char **argv)
{
    int clean = argc > 1 && strcmp(argv[1], "clean") == 0;
    int misuse = argc > 1 && strcmp(argv[1], "leak-misuse") == 0;
    if (argc < 2 || (!clean && !misuse && strcmp(argv[1], "leak") != 0)) {
        fprintf(stderr, "usage: cl_leaky leak|clean|leak-misuse\n");
        return 64;
    }
    cl_platform_id platform;
    cl_device_id device;
    cl_int err = CL_SUCCESS;
    MUST(clGetPlatformIDs(1, &platform, NULL));
    MUST(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));

    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    MUST(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    MUST(err);
    cl_mem buffer1 = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err);
    MUST(err);
    cl_mem parent = clCreateBuffer(context, CL_MEM_READ_WRITE, 1024, NULL, &err);
    MUST(err);
    cl_buffer_region region = {0, 256};
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    MUST(err);
    cl_event event = clCreateUserEvent(context, &err);
    MUST(err);
    cl_mem buffer2 = clCreateBuffer(context, CL_MEM_READ_WRITE, 100, NULL, &err);
    MUST(err);

    /* Some work, so the objects are real. */
    cl_int pattern = 1;
    MUST(clEnqueueFillBuffer(queue, sub, &pattern, sizeof pattern, 0, 256, 0, NULL, NULL));
    MUST(clFinish(queue));
    MUST(clSetUserEventStatus(event, CL_COMPLETE));

    show("context", context);
    show("queue", queue);
    show("buffer1", buffer1);
    show("parent", parent);
    show("sub", sub);
    show("event", event);
    show("buffer2", buffer2);
    fflush(stdout);

    MUST(clReleaseCommandQueue(queue));
    MUST(clReleaseMemObject(parent));
    MUST(clReleaseContext(context));
    if (misuse) {
        cl_int refused = clReleaseMemObject(parent);
        printf("second release of parent: %d\n", (int)refused);
    }
    if (clean) {
        MUST(clReleaseMemObject(buffer2));
        MUST(clReleaseEvent(event));
        MUST(clReleaseMemObject(sub));
        MUST(clReleaseMemObject(buffer1));
    }
    return 0;
}
