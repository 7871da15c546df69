/*
 * Misuse is refused, not passed to the driver: retain/release of a
 * released handle, of a pointer that was never an object, or of an object
 * of another type gives the type's CL_INVALID_* code; releasing an object
 * the application released but a child keeps alive is refused too, and
 * retaining it is allowed. Each refused call prints one diagnostic on
 * stderr, a "livetrack: ERROR: ..." line naming the call and the handle
 * (%p), followed by the stacks.
 *
 * The test runs itself as a child ("child" argument) with its stderr
 * captured. The child checks the return codes and the registry and prints
 * "refused <call> <handle>" on stdout for each call it expects a diagnostic
 * for; the parent matches those against the "livetrack: ERROR:" lines of
 * the child's stderr, in order.
 */
#include "cl_test_util.h"

static const char *kernel_source = "__kernel void k(__global int *a) { a[0] = 1; }\n";

/* A call the layer must refuse with `code`: the child names it on stdout. */
#define REFUSED(call_name, handle, call, code)                                             \
    do {                                                                                   \
        cl_int refused_err_ = (call);                                                      \
        CHECK_EQ_INT(refused_err_, (code));                                                \
        if (refused_err_ != (code))                                                        \
            fprintf(stderr, "  %s(%p)\n", call_name, (void *)(handle));                     \
        printf("refused %s %p\n", call_name, (void *)(handle));                            \
        fflush(stdout);                                                                    \
    } while (0)

/* Looks like an OpenCL object to nobody: a NULL dispatch pointer that
 * would crash the driver if the call went through. */
typedef struct fake_object {
    void *dispatch;
    char payload[56];
} fake_object;

static int run_child(void)
{
    ct_env env;
    ct_setup(&env);
    cl_int err = CL_SUCCESS;
    uint64_t misuse_before;
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    misuse_before = stats.misuse;

    /* ---- a fully released buffer ---- */
    cl_mem buffer = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 64, NULL, &err);
    CT_NEED(buffer, err);
    CHECK_EQ_INT(clReleaseMemObject(buffer), CL_SUCCESS);
    CT_EXPECT_GONE(buffer);
    REFUSED("clReleaseMemObject", buffer, clReleaseMemObject(buffer), CL_INVALID_MEM_OBJECT);
    REFUSED("clRetainMemObject", buffer, clRetainMemObject(buffer), CL_INVALID_MEM_OBJECT);
    CT_EXPECT_GONE(buffer);

    /* ---- pointers that never were objects ---- */
    fake_object fake;
    memset(&fake, 0, sizeof fake);
    REFUSED("clReleaseMemObject", &fake, clReleaseMemObject((cl_mem)&fake), CL_INVALID_MEM_OBJECT);
    REFUSED("clRetainMemObject", &fake, clRetainMemObject((cl_mem)&fake), CL_INVALID_MEM_OBJECT);
    REFUSED("clReleaseContext", &fake, clReleaseContext((cl_context)&fake), CL_INVALID_CONTEXT);
    REFUSED("clRetainCommandQueue", &fake, clRetainCommandQueue((cl_command_queue)&fake), CL_INVALID_COMMAND_QUEUE);
    REFUSED("clReleaseProgram", &fake, clReleaseProgram((cl_program)&fake), CL_INVALID_PROGRAM);
    REFUSED("clReleaseKernel", &fake, clReleaseKernel((cl_kernel)&fake), CL_INVALID_KERNEL);
    REFUSED("clRetainEvent", &fake, clRetainEvent((cl_event)&fake), CL_INVALID_EVENT);
    REFUSED("clReleaseSampler", &fake, clReleaseSampler((cl_sampler)&fake), CL_INVALID_SAMPLER);
    CHECK(!ct_live(&fake, NULL));

    /* ---- objects of another type: refused, the object is untouched ---- */
    cl_mem live_buffer = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 64, NULL, &err);
    CT_NEED(live_buffer, err);
    REFUSED("clReleaseKernel", live_buffer, clReleaseKernel((cl_kernel)live_buffer), CL_INVALID_KERNEL);
    REFUSED("clRetainKernel", live_buffer, clRetainKernel((cl_kernel)live_buffer), CL_INVALID_KERNEL);
    REFUSED("clReleaseContext", live_buffer, clReleaseContext((cl_context)live_buffer), CL_INVALID_CONTEXT);
    REFUSED("clReleaseCommandQueue", live_buffer, clReleaseCommandQueue((cl_command_queue)live_buffer),
            CL_INVALID_COMMAND_QUEUE);
    REFUSED("clReleaseProgram", live_buffer, clReleaseProgram((cl_program)live_buffer), CL_INVALID_PROGRAM);
    REFUSED("clReleaseEvent", live_buffer, clReleaseEvent((cl_event)live_buffer), CL_INVALID_EVENT);
    REFUSED("clReleaseSampler", live_buffer, clReleaseSampler((cl_sampler)live_buffer), CL_INVALID_SAMPLER);
    REFUSED("clReleaseMemObject", env.queue, clReleaseMemObject((cl_mem)env.queue), CL_INVALID_MEM_OBJECT);
    CT_EXPECT_LIVE(live_buffer, "cl_mem", 1);
    CT_EXPECT_LIVE(env.queue, "cl_command_queue", 1);
    /* The driver's object really is untouched: same count (asked before
     * any enqueue: pocl drops its holds on finished commands
     * asynchronously), and it still works. */
    cl_uint driver_refs = 0;
    CHECK_EQ_INT(clGetMemObjectInfo(live_buffer, CL_MEM_REFERENCE_COUNT, sizeof driver_refs, &driver_refs, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(driver_refs, 1);
    cl_int pattern = 4, back = 0;
    CHECK_EQ_INT(clEnqueueFillBuffer(env.queue, live_buffer, &pattern, sizeof pattern, 0, 64, 0, NULL, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueReadBuffer(env.queue, live_buffer, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(back, 4);
    CHECK_EQ_INT(clReleaseMemObject(live_buffer), CL_SUCCESS);

    /* ---- every type, released twice ---- */
    cl_context context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CT_NEED(context, err);
    CHECK_EQ_INT(clReleaseContext(context), CL_SUCCESS);
    REFUSED("clReleaseContext", context, clReleaseContext(context), CL_INVALID_CONTEXT);
    REFUSED("clRetainContext", context, clRetainContext(context), CL_INVALID_CONTEXT);

    cl_command_queue queue = clCreateCommandQueueWithProperties(env.context, env.device, NULL, &err);
    CT_NEED(queue, err);
    CHECK_EQ_INT(clReleaseCommandQueue(queue), CL_SUCCESS);
    REFUSED("clReleaseCommandQueue", queue, clReleaseCommandQueue(queue), CL_INVALID_COMMAND_QUEUE);

    cl_sampler sampler = clCreateSampler(env.context, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err);
    CT_NEED(sampler, err);
    CHECK_EQ_INT(clReleaseSampler(sampler), CL_SUCCESS);
    REFUSED("clReleaseSampler", sampler, clReleaseSampler(sampler), CL_INVALID_SAMPLER);
    REFUSED("clRetainSampler", sampler, clRetainSampler(sampler), CL_INVALID_SAMPLER);

    cl_event event = clCreateUserEvent(env.context, &err);
    CT_NEED(event, err);
    CHECK_EQ_INT(clSetUserEventStatus(event, CL_COMPLETE), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(event), CL_SUCCESS);
    REFUSED("clReleaseEvent", event, clReleaseEvent(event), CL_INVALID_EVENT);
    REFUSED("clRetainEvent", event, clRetainEvent(event), CL_INVALID_EVENT);

    cl_program program = ct_build(&env, kernel_source);
    cl_kernel kernel = clCreateKernel(program, "k", &err);
    CT_NEED(kernel, err);
    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    REFUSED("clReleaseKernel", kernel, clReleaseKernel(kernel), CL_INVALID_KERNEL);
    REFUSED("clRetainKernel", kernel, clRetainKernel(kernel), CL_INVALID_KERNEL);

    /* ---- released by the app, kept alive by a child: release refused,
     *      retain allowed ---- */
    kernel = clCreateKernel(program, "k", &err);
    CT_NEED(kernel, err);
    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    CHECK(ct_live(program, NULL));
    REFUSED("clReleaseProgram", program, clReleaseProgram(program), CL_INVALID_PROGRAM);
    livetrack_object obj;
    if (ct_live(program, &obj)) {
        CHECK_EQ_INT(obj.refs, 0);
        CHECK_EQ_INT(obj.holders, 1);
    }
    /* The kernel still works: the driver never saw the bad release. */
    cl_mem out = clCreateBuffer(env.context, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, &err);
    CT_NEED(out, err);
    CHECK_EQ_INT(clSetKernelArg(kernel, 0, sizeof out, &out), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueTask(env.queue, kernel, 0, NULL, NULL), CL_SUCCESS);
    back = 0;
    CHECK_EQ_INT(clEnqueueReadBuffer(env.queue, out, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(back, 1);
    CHECK_EQ_INT(clRetainProgram(program), CL_SUCCESS);
    CT_EXPECT_LIVE(program, "cl_program", 1);
    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    CT_EXPECT_LIVE(program, "cl_program", 1);
    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    CT_EXPECT_GONE(program);
    REFUSED("clRetainProgram", program, clRetainProgram(program), CL_INVALID_PROGRAM);

    cl_mem parent = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 1024, NULL, &err);
    CT_NEED(parent, err);
    cl_buffer_region region = {0, 256};
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CT_NEED(sub, err);
    CHECK_EQ_INT(clReleaseMemObject(parent), CL_SUCCESS);
    REFUSED("clReleaseMemObject", parent, clReleaseMemObject(parent), CL_INVALID_MEM_OBJECT);
    CHECK_EQ_INT(clRetainMemObject(parent), CL_SUCCESS);
    CT_EXPECT_LIVE(parent, "cl_mem", 1);
    CHECK_EQ_INT(clReleaseMemObject(parent), CL_SUCCESS);
    REFUSED("clReleaseMemObject", parent, clReleaseMemObject(parent), CL_INVALID_MEM_OBJECT);
    CHECK_EQ_INT(clReleaseMemObject(sub), CL_SUCCESS);
    CT_EXPECT_GONE(parent);
    CT_EXPECT_GONE(sub);

    context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CT_NEED(context, err);
    queue = clCreateCommandQueueWithProperties(context, env.device, NULL, &err);
    CT_NEED(queue, err);
    CHECK_EQ_INT(clReleaseContext(context), CL_SUCCESS);
    REFUSED("clReleaseContext", context, clReleaseContext(context), CL_INVALID_CONTEXT);
    CHECK_EQ_INT(clRetainContext(context), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseContext(context), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseCommandQueue(queue), CL_SUCCESS);
    CT_EXPECT_GONE(context);

    /* ---- command buffers (an extension type) ---- */
    clCreateCommandBufferKHR_fn create_cb =
        (clCreateCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(env.platform, "clCreateCommandBufferKHR");
    clReleaseCommandBufferKHR_fn release_cb = (clReleaseCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env.platform, "clReleaseCommandBufferKHR");
    if (create_cb && release_cb) {
        cl_command_buffer_khr cb = create_cb(1, &env.queue, NULL, &err);
        CT_NEED(cb, err);
        CHECK_EQ_INT(release_cb(cb), CL_SUCCESS);
        REFUSED("clReleaseCommandBufferKHR", cb, release_cb(cb), CL_INVALID_COMMAND_BUFFER_KHR);
    }

    /* ---- sub-devices: a released one is refused; root devices are not
     *      tracked and their retain/release pass through ---- */
    cl_device_partition_property by_counts[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1,
                                                CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    cl_device_id sub_device = NULL;
    if (clCreateSubDevices(env.device, by_counts, 1, &sub_device, NULL) == CL_SUCCESS && sub_device) {
        CHECK_EQ_INT(clReleaseDevice(sub_device), CL_SUCCESS);
        REFUSED("clReleaseDevice", sub_device, clReleaseDevice(sub_device), CL_INVALID_DEVICE);
        REFUSED("clRetainDevice", sub_device, clRetainDevice(sub_device), CL_INVALID_DEVICE);
    }
    CHECK_EQ_INT(clRetainDevice(env.device), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseDevice(env.device), CL_SUCCESS);
    REFUSED("clReleaseDevice", &fake, clReleaseDevice((cl_device_id)&fake), CL_INVALID_DEVICE);

    /* ---- SVM: clSVMFree returns nothing, but a bad free is still
     *      refused (not passed to the driver) with a diagnostic ---- */
    void *svm = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 256, 0);
    if (svm) {
        clSVMFree(env.context, svm);
        CT_EXPECT_GONE(svm);
        clSVMFree(env.context, svm);
        printf("refused clSVMFree %p\n", svm);
    }
    clSVMFree(env.context, &fake);
    printf("refused clSVMFree %p\n", (void *)&fake);
    clSVMFree(env.context, NULL); /* allowed: no diagnostic */
    /* A pointer listed twice in one clEnqueueSVMFree is a double free
     * (pocl 3.1 aborts on it): refused before the driver, nothing freed. */
    void *first = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 256, 0);
    void *second = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 256, 0);
    if (first && second) {
        void *twice[] = {first, second, first};
        REFUSED("clEnqueueSVMFree", first, clEnqueueSVMFree(env.queue, 3, twice, NULL, NULL, 0, NULL, NULL),
                CL_INVALID_VALUE);
        CT_EXPECT_LIVE(first, "cl_svm_pointer", 1);
        CT_EXPECT_LIVE(second, "cl_svm_pointer", 1);
        CHECK_EQ_INT(clEnqueueSVMFree(env.queue, 2, twice, NULL, NULL, 0, NULL, NULL), CL_SUCCESS);
        CHECK_EQ_INT(clFinish(env.queue), CL_SUCCESS);
        CT_EXPECT_GONE(first);
        CT_EXPECT_GONE(second);
    }

    CHECK_EQ_INT(clReleaseMemObject(out), CL_SUCCESS);
    livetrack_get_stats(&stats);
    printf("misuse counted %llu\n", (unsigned long long)(stats.misuse - misuse_before));
    ct_teardown(&env);
    CHECK_EQ_INT(ct_registry_count(NULL), 0);
    ct_check_model(1);
    return check_summary("cl_misuse child");
}

/* A fresh process that never calls clGetDeviceIDs: the root device it
 * gets from its context is still a root device (retain/release pass
 * through, no diagnostic). */
static int run_root_device_child(void)
{
    cl_platform_id platform;
    cl_int err = CL_SUCCESS;
    CT_OK(clGetPlatformIDs(1, &platform, NULL));
    cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_context context = clCreateContextFromType(properties, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
    CT_NEED(context, err);
    cl_device_id device = NULL;
    CT_OK(clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, NULL));
    CHECK(!ct_live(device, NULL));
    CHECK_EQ_INT(clRetainDevice(device), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseDevice(device), CL_SUCCESS);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    CT_NEED(queue, err);
    cl_device_id queue_device = NULL;
    CT_OK(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, NULL));
    CHECK_EQ_INT(clRetainDevice(queue_device), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseDevice(queue_device), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseCommandQueue(queue), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseContext(context), CL_SUCCESS);
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.misuse, 0);
    return check_summary("cl_misuse root-device child");
}

/* ---- the parent: match the child's stderr lines ---- */

static int run_parent(void)
{
    const char *self = ct_self_path();
    CHECK(self != NULL);
    if (!self)
        return check_summary("cl_misuse");
    char *argv[] = {(char *)self, "child", NULL};
    ct_child child;
    /* No limit on diagnostics; the default exit report (none: the child
     * releases everything). */
    const char *set[] = {"LIVETRACK_MAX_DIAGNOSTICS=-1", "LIVETRACK_TRANSPARENT=0", NULL};
    CHECK_EQ_INT(ct_run(argv, set, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);

    ct_lines expected = ct_lines_starting(child.out, "refused ");
    /* A diagnostic is one "livetrack: ERROR:" line, then the stacks. */
    ct_lines diagnostics = ct_lines_starting(child.err, "livetrack: ERROR: ");
    CHECK(expected.count >= 30);
    /* One diagnostic per refused call, nothing else. */
    CHECK_EQ_INT(diagnostics.count, expected.count);

    size_t n = expected.count < diagnostics.count ? expected.count : diagnostics.count;
    for (size_t i = 0; i < n; i++) {
        char call[128], handle[64];
        if (sscanf(expected.lines[i], "refused %127s %63s", call, handle) != 2) {
            CHECK(0);
            continue;
        }
        const char *line = diagnostics.lines[i];
        int ok = ct_has_token(line, call) && ct_has_token(line, handle);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  line %zu: expected a diagnostic naming %s and %s, got:\n    %s\n", i, call, handle,
                    line);
    }
    /* The child counted them as misuse too. */
    unsigned long long counted = 0;
    const char *misuse = strstr(child.out, "misuse counted ");
    CHECK(misuse && sscanf(misuse, "misuse counted %llu", &counted) == 1);
    CHECK_EQ_INT(counted, expected.count);

    if (check_failed)
        ct_child_dump("cl_misuse child", &child);
    ct_lines_free(&expected);
    ct_lines_free(&diagnostics);
    ct_child_free(&child);

    int failed_before = check_failed;
    char *root_argv[] = {(char *)self, "root-device-child", NULL};
    CHECK_EQ_INT(ct_run(root_argv, set, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);
    CHECK_EQ_INT(ct_count_lines_with_prefix(child.err, "livetrack: "), 0);
    if (check_failed != failed_before)
        ct_child_dump("cl_misuse root-device child", &child);
    ct_child_free(&child);
    return check_summary("cl_misuse");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return run_child();
    if (argc > 1 && strcmp(argv[1], "root-device-child") == 0)
        return run_root_device_child();
    return run_parent();
}
