/*
 * Every entry point validates its object arguments: a handle that was
 * released, never existed, or is a live object of another type gets the
 * function's documented CL_INVALID_* code (NULL and *errcode_ret for
 * functions returning an object) and one diagnostic, and the driver never
 * sees it. With LIVETRACK_TRANSPARENT=1 the call reaches the driver after
 * the diagnostic. Objects released by the program but kept alive by their
 * children stay valid arguments; NULL handles and root devices are never
 * refused; valid programs get no diagnostic at all.
 *
 * The test runs itself as children with their output captured:
 *   refuse       bad handles of every type through a representative set of
 *                functions; prints "refused <call> <handle> <CODE>" per
 *                call on stdout, which the parent matches, in order,
 *                against the "livetrack: ERROR:" lines on stderr
 *   transparent  LIVETRACK_TRANSPARENT=1: the same kind of call passes
 *                through and gets the driver's answer ("passed ...")
 *   valid        kept-alive objects, NULL handles, root devices, plain
 *                kernel arguments of pointer size: no diagnostic
 *
 * "Released" handles are mostly zombies: the test takes a reference of its
 * own straight from the driver's dispatch table (livetrack does not see
 * it), then releases the object through the API. livetrack counts it
 * released while the driver keeps it alive, so a check that fails to
 * refuse, or transparent mode, hands the driver an object it still has
 * rather than freed memory. A few handles are really freed, as in a real
 * use after release.
 */
#include "cl_test_util.h"

#include <CL/cl_icd.h>

static const char *kernel_source = "__kernel void k(__global int *a, long n) { a[0] = (int)n; }\n";
static const char *image_source =
    "__kernel void s(__read_only image2d_t image, sampler_t sampler, __global float4 *out)\n"
    "{ out[0] = read_imagef(image, sampler, (int2)(0, 0)); }\n";

static int bad_inputs;
static cl_int err;

static const struct _cl_icd_dispatch *driver_of(const void *object)
{
    return *(const struct _cl_icd_dispatch *const *)object;
}

/* Tell the parent which diagnostic to expect next. */
static void expect_line(const char *verb, const char *call, const void *handle, const char *code)
{
    printf("%s %s %p %s\n", verb, call, handle, code);
    fflush(stdout);
    bad_inputs++;
}

/* A call returning cl_int that must be refused with `code`. */
#define REFUSED(call, handle, expr, code)                                                         \
    do {                                                                                          \
        cl_int got_ = (expr);                                                                     \
        CHECK_EQ_INT(got_, (code));                                                               \
        if (got_ != (code))                                                                       \
            fprintf(stderr, "  in %s(%p), line %d\n", (call), (const void *)(handle), __LINE__);  \
        expect_line("refused", (call), (handle), #code);                                          \
    } while (0)

/* A call returning an object: NULL, and `code` in err (which expr passes
 * as errcode_ret). */
#define REFUSED_OBJECT(call, handle, expr, code)                                                  \
    do {                                                                                          \
        err = 12345;                                                                              \
        const void *got_ = (const void *)(expr);                                                  \
        CHECK(got_ == NULL);                                                                      \
        CHECK_EQ_INT(err, (code));                                                                \
        if (got_ || err != (code))                                                                \
            fprintf(stderr, "  in %s(%p), line %d\n", (call), (const void *)(handle), __LINE__);  \
        expect_line("refused", (call), (handle), #code);                                          \
    } while (0)

/* A call with no error code to return (clSVMAlloc returns NULL). */
#define REFUSED_NULL(call, handle, expr, code)                                                    \
    do {                                                                                          \
        const void *got_ = (const void *)(expr);                                                  \
        CHECK(got_ == NULL);                                                                      \
        expect_line("refused", (call), (handle), #code);                                          \
    } while (0)

/* Looks like an OpenCL object to nobody: a NULL dispatch pointer that
 * crashes the loader or the driver if the call goes through. */
typedef struct fake_object {
    void *dispatch;
    char payload[56];
} fake_object;

/* ---- zombies: released for livetrack, alive for the driver ---- */

typedef struct zombies {
    cl_context context;
    cl_command_queue queue;
    cl_mem buffer;
    cl_program program;
    cl_kernel kernel;
    cl_event event;
    cl_sampler sampler;
    cl_device_id sub_device; /* NULL when the device cannot be partitioned */
} zombies;

static void make_zombies(ct_env *env, cl_program program, zombies *z)
{
    z->context = clCreateContext(NULL, 1, &env->device, NULL, NULL, &err);
    CT_NEED(z->context, err);
    CT_OK(driver_of(z->context)->clRetainContext(z->context));
    CT_OK(clReleaseContext(z->context));

    z->queue = clCreateCommandQueueWithProperties(env->context, env->device, NULL, &err);
    CT_NEED(z->queue, err);
    CT_OK(driver_of(z->queue)->clRetainCommandQueue(z->queue));
    CT_OK(clReleaseCommandQueue(z->queue));

    z->buffer = clCreateBuffer(env->context, CL_MEM_READ_WRITE, 64, NULL, &err);
    CT_NEED(z->buffer, err);
    CT_OK(driver_of(z->buffer)->clRetainMemObject(z->buffer));
    CT_OK(clReleaseMemObject(z->buffer));

    z->program = ct_build(env, kernel_source);
    CT_OK(driver_of(z->program)->clRetainProgram(z->program));
    CT_OK(clReleaseProgram(z->program));

    z->kernel = clCreateKernel(program, "k", &err);
    CT_NEED(z->kernel, err);
    CT_OK(driver_of(z->kernel)->clRetainKernel(z->kernel));
    CT_OK(clReleaseKernel(z->kernel));

    z->event = clCreateUserEvent(env->context, &err);
    CT_NEED(z->event, err);
    CT_OK(clSetUserEventStatus(z->event, CL_COMPLETE));
    CT_OK(driver_of(z->event)->clRetainEvent(z->event));
    CT_OK(clReleaseEvent(z->event));

    z->sampler = clCreateSampler(env->context, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err);
    CT_NEED(z->sampler, err);
    CT_OK(driver_of(z->sampler)->clRetainSampler(z->sampler));
    CT_OK(clReleaseSampler(z->sampler));

    cl_device_partition_property by_counts[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1,
                                                CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    z->sub_device = NULL;
    if (clCreateSubDevices(env->device, by_counts, 1, &z->sub_device, NULL) == CL_SUCCESS && z->sub_device) {
        CT_OK(driver_of(z->sub_device)->clRetainDevice(z->sub_device));
        CT_OK(clReleaseDevice(z->sub_device));
    }
    /* livetrack counts every one of them released */
    CHECK(!ct_live(z->context, NULL) && !ct_live(z->queue, NULL) && !ct_live(z->buffer, NULL));
    CHECK(!ct_live(z->program, NULL) && !ct_live(z->kernel, NULL) && !ct_live(z->event, NULL));
    CHECK(!ct_live(z->sampler, NULL));
}

/* Drop the references livetrack never saw, straight at the driver. */
static void bury_zombies(zombies *z)
{
    driver_of(z->kernel)->clReleaseKernel(z->kernel);
    driver_of(z->program)->clReleaseProgram(z->program);
    driver_of(z->event)->clReleaseEvent(z->event);
    driver_of(z->sampler)->clReleaseSampler(z->sampler);
    driver_of(z->buffer)->clReleaseMemObject(z->buffer);
    driver_of(z->queue)->clReleaseCommandQueue(z->queue);
    driver_of(z->context)->clReleaseContext(z->context);
    if (z->sub_device)
        driver_of(z->sub_device)->clReleaseDevice(z->sub_device);
}

static uint64_t misuse_count(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.misuse;
}

/* ---- refuse --------------------------------------------------------------- */

static int run_refuse(void)
{
    ct_env env;
    ct_setup(&env);
    uint64_t misuse_before = misuse_count();
    cl_program program = ct_build(&env, kernel_source);
    cl_kernel kernel = clCreateKernel(program, "k", &err);
    CT_NEED(kernel, err);
    cl_mem buffer = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 1024, NULL, &err);
    CT_NEED(buffer, err);
    cl_event user_event = clCreateUserEvent(env.context, &err);
    CT_NEED(user_event, err);
    CT_OK(clSetUserEventStatus(user_event, CL_COMPLETE));
    cl_sampler sampler = clCreateSampler(env.context, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err);
    CT_NEED(sampler, err);
    zombies z;
    make_zombies(&env, program, &z);
    fake_object fake;
    memset(&fake, 0, sizeof fake);
    void *never = &fake;

    /* Really freed: the driver has given the memory back. */
    cl_mem freed_buffer = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 64, NULL, &err);
    CT_NEED(freed_buffer, err);
    CT_OK(clReleaseMemObject(freed_buffer));
    cl_event freed_event = clCreateUserEvent(env.context, &err);
    CT_NEED(freed_event, err);
    CT_OK(clSetUserEventStatus(freed_event, CL_COMPLETE));
    CT_OK(clReleaseEvent(freed_event));
    cl_kernel freed_kernel = clCreateKernel(program, "k", &err);
    CT_NEED(freed_kernel, err);
    CT_OK(clReleaseKernel(freed_kernel));
    cl_context freed_context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CT_NEED(freed_context, err);
    CT_OK(clReleaseContext(freed_context));

    size_t size = 0;
    cl_uint count = 0;
    char text[256];
    int value = 7;

    /* ---- cl_context: zombie, freed, never created, a live queue ---- */
    cl_context bad_contexts[] = {z.context, freed_context, (cl_context)never, (cl_context)env.queue};
    for (size_t i = 0; i < sizeof bad_contexts / sizeof bad_contexts[0]; i++) {
        cl_context bad = bad_contexts[i];
        REFUSED("clGetContextInfo", bad, clGetContextInfo(bad, CL_CONTEXT_NUM_DEVICES, sizeof count, &count, NULL),
                CL_INVALID_CONTEXT);
        REFUSED_OBJECT("clCreateBuffer", bad, clCreateBuffer(bad, CL_MEM_READ_WRITE, 64, NULL, &err),
                       CL_INVALID_CONTEXT);
        REFUSED_OBJECT("clCreateCommandQueueWithProperties", bad,
                       clCreateCommandQueueWithProperties(bad, env.device, NULL, &err), CL_INVALID_CONTEXT);
        REFUSED_OBJECT("clCreateProgramWithSource", bad,
                       clCreateProgramWithSource(bad, 1, &kernel_source, NULL, &err), CL_INVALID_CONTEXT);
        REFUSED_OBJECT("clCreateUserEvent", bad, clCreateUserEvent(bad, &err), CL_INVALID_CONTEXT);
    }
    /* errcode_ret may be NULL: still NULL back */
    REFUSED_NULL("clCreateBuffer", z.context, clCreateBuffer(z.context, CL_MEM_READ_WRITE, 64, NULL, NULL),
                 CL_INVALID_CONTEXT);
    REFUSED_OBJECT("clCreateSamplerWithProperties", z.context, clCreateSamplerWithProperties(z.context, NULL, &err),
                   CL_INVALID_CONTEXT);
    REFUSED_OBJECT("clCreateSampler", never,
                   clCreateSampler((cl_context)never, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err),
                   CL_INVALID_CONTEXT);
    cl_image_format format = {CL_RGBA, CL_FLOAT};
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 4;
    desc.image_height = 4;
    REFUSED_OBJECT("clCreateImage", z.context, clCreateImage(z.context, CL_MEM_READ_ONLY, &format, &desc, NULL, &err),
                   CL_INVALID_CONTEXT);
    REFUSED("clGetSupportedImageFormats", freed_context,
            clGetSupportedImageFormats(freed_context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &count),
            CL_INVALID_CONTEXT);
    REFUSED_NULL("clSVMAlloc", z.context, clSVMAlloc(z.context, CL_MEM_READ_WRITE, 64, 0), CL_INVALID_CONTEXT);
    clSVMFree((cl_context)never, NULL);
    expect_line("refused", "clSVMFree", never, "CL_INVALID_CONTEXT");
    REFUSED("clSetContextDestructorCallback", freed_context,
            clSetContextDestructorCallback(freed_context, NULL, NULL), CL_INVALID_CONTEXT);

    /* ---- cl_command_queue: zombie, never created, a live buffer ---- */
    cl_command_queue bad_queues[] = {z.queue, (cl_command_queue)never, (cl_command_queue)buffer};
    size_t one = 1;
    for (size_t i = 0; i < sizeof bad_queues / sizeof bad_queues[0]; i++) {
        cl_command_queue bad = bad_queues[i];
        REFUSED("clGetCommandQueueInfo", bad,
                clGetCommandQueueInfo(bad, CL_QUEUE_REFERENCE_COUNT, sizeof count, &count, NULL),
                CL_INVALID_COMMAND_QUEUE);
        REFUSED("clFlush", bad, clFlush(bad), CL_INVALID_COMMAND_QUEUE);
        REFUSED("clFinish", bad, clFinish(bad), CL_INVALID_COMMAND_QUEUE);
        REFUSED("clEnqueueWriteBuffer", bad,
                clEnqueueWriteBuffer(bad, buffer, CL_TRUE, 0, sizeof value, &value, 0, NULL, NULL),
                CL_INVALID_COMMAND_QUEUE);
        cl_event event = NULL;
        REFUSED("clEnqueueMarkerWithWaitList", bad, clEnqueueMarkerWithWaitList(bad, 0, NULL, &event),
                CL_INVALID_COMMAND_QUEUE);
        CHECK(event == NULL);
        REFUSED("clEnqueueNDRangeKernel", bad, clEnqueueNDRangeKernel(bad, kernel, 1, NULL, &one, NULL, 0, NULL, NULL),
                CL_INVALID_COMMAND_QUEUE);
    }
    REFUSED_OBJECT("clEnqueueMapBuffer", z.queue,
                   clEnqueueMapBuffer(z.queue, buffer, CL_TRUE, CL_MAP_READ, 0, 64, 0, NULL, NULL, &err),
                   CL_INVALID_COMMAND_QUEUE);
    REFUSED("clEnqueueBarrier", z.queue, clEnqueueBarrier(z.queue), CL_INVALID_COMMAND_QUEUE);
    REFUSED("clEnqueueMarker", never, clEnqueueMarker((cl_command_queue)never, NULL), CL_INVALID_COMMAND_QUEUE);
    REFUSED("clRetainCommandQueue", z.queue, clRetainCommandQueue(z.queue), CL_INVALID_COMMAND_QUEUE);

    /* ---- cl_mem: zombie, freed, never created, a live event ---- */
    cl_mem bad_buffers[] = {z.buffer, freed_buffer, (cl_mem)never, (cl_mem)user_event};
    for (size_t i = 0; i < sizeof bad_buffers / sizeof bad_buffers[0]; i++) {
        cl_mem bad = bad_buffers[i];
        REFUSED("clGetMemObjectInfo", bad, clGetMemObjectInfo(bad, CL_MEM_SIZE, sizeof size, &size, NULL),
                CL_INVALID_MEM_OBJECT);
        REFUSED("clEnqueueReadBuffer", bad,
                clEnqueueReadBuffer(env.queue, bad, CL_TRUE, 0, sizeof value, &value, 0, NULL, NULL),
                CL_INVALID_MEM_OBJECT);
        REFUSED("clEnqueueCopyBuffer", bad, clEnqueueCopyBuffer(env.queue, buffer, bad, 0, 0, 4, 0, NULL, NULL),
                CL_INVALID_MEM_OBJECT);
        cl_mem migrate[] = {buffer, bad};
        REFUSED("clEnqueueMigrateMemObjects", bad,
                clEnqueueMigrateMemObjects(env.queue, 2, migrate, 0, 0, NULL, NULL), CL_INVALID_MEM_OBJECT);
    }
    /* A released buffer as a kernel argument. This program has no
     * argument info (pocl's default), so a pointer that never was an
     * object cannot be told from a long here: only released handles are
     * refused (the image kernel below has argument info). */
    REFUSED("clSetKernelArg", z.buffer, clSetKernelArg(kernel, 0, sizeof z.buffer, &z.buffer), CL_INVALID_MEM_OBJECT);
    REFUSED("clSetKernelArg", freed_buffer, clSetKernelArg(kernel, 0, sizeof freed_buffer, &freed_buffer),
            CL_INVALID_MEM_OBJECT);
    /* No argument 7: the driver's CL_INVALID_ARG_INDEX, whatever the value */
    CHECK_EQ_INT(clSetKernelArg(kernel, 7, sizeof z.buffer, &z.buffer), CL_INVALID_ARG_INDEX);
    cl_buffer_region region = {0, 16};
    REFUSED_OBJECT("clCreateSubBuffer", z.buffer,
                   clCreateSubBuffer(z.buffer, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err),
                   CL_INVALID_MEM_OBJECT);
    REFUSED("clSetMemObjectDestructorCallback", freed_buffer,
            clSetMemObjectDestructorCallback(freed_buffer, NULL, NULL), CL_INVALID_MEM_OBJECT);
    cl_int pattern = 0;
    REFUSED("clEnqueueFillBuffer", z.buffer,
            clEnqueueFillBuffer(env.queue, z.buffer, &pattern, sizeof pattern, 0, 64, 0, NULL, NULL),
            CL_INVALID_MEM_OBJECT);
    REFUSED("clEnqueueUnmapMemObject", z.buffer, clEnqueueUnmapMemObject(env.queue, z.buffer, &value, 0, NULL, NULL),
            CL_INVALID_MEM_OBJECT);
    REFUSED("clGetImageInfo", never, clGetImageInfo((cl_mem)never, CL_IMAGE_WIDTH, sizeof size, &size, NULL),
            CL_INVALID_MEM_OBJECT);
    REFUSED("clReleaseMemObject", z.buffer, clReleaseMemObject(z.buffer), CL_INVALID_MEM_OBJECT);
    /* an image made from a released buffer */
    cl_image_desc from_buffer;
    memset(&from_buffer, 0, sizeof from_buffer);
    from_buffer.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    from_buffer.image_width = 4;
    from_buffer.mem_object = z.buffer;
    REFUSED_OBJECT("clCreateImage", z.buffer,
                   clCreateImage(env.context, CL_MEM_READ_ONLY, &format, &from_buffer, NULL, &err),
                   CL_INVALID_IMAGE_DESCRIPTOR);
    cl_mem native_list[] = {freed_buffer};
    const void *native_where[] = {&value};
    REFUSED("clEnqueueNativeKernel", freed_buffer,
            clEnqueueNativeKernel(env.queue, NULL, &value, sizeof value, 1, native_list, native_where, 0, NULL, NULL),
            CL_INVALID_MEM_OBJECT);

    /* ---- cl_program: zombie, never created, a live kernel ---- */
    cl_program bad_programs[] = {z.program, (cl_program)never, (cl_program)kernel};
    for (size_t i = 0; i < sizeof bad_programs / sizeof bad_programs[0]; i++) {
        cl_program bad = bad_programs[i];
        REFUSED("clGetProgramInfo", bad, clGetProgramInfo(bad, CL_PROGRAM_NUM_DEVICES, sizeof count, &count, NULL),
                CL_INVALID_PROGRAM);
        REFUSED("clBuildProgram", bad, clBuildProgram(bad, 1, &env.device, "", NULL, NULL), CL_INVALID_PROGRAM);
        REFUSED_OBJECT("clCreateKernel", bad, clCreateKernel(bad, "k", &err), CL_INVALID_PROGRAM);
        REFUSED("clGetProgramBuildInfo", bad,
                clGetProgramBuildInfo(bad, env.device, CL_PROGRAM_BUILD_STATUS, sizeof value, &value, NULL),
                CL_INVALID_PROGRAM);
    }
    cl_kernel kernels[4];
    REFUSED("clCreateKernelsInProgram", z.program, clCreateKernelsInProgram(z.program, 4, kernels, &count),
            CL_INVALID_PROGRAM);
    cl_program headers[] = {z.program};
    const char *header_names[] = {"h.h"};
    cl_program fresh = clCreateProgramWithSource(env.context, 1, &kernel_source, NULL, &err);
    CT_NEED(fresh, err);
    REFUSED("clCompileProgram", z.program,
            clCompileProgram(fresh, 1, &env.device, "", 1, headers, header_names, NULL, NULL), CL_INVALID_PROGRAM);
    cl_program inputs[] = {(cl_program)never};
    REFUSED_OBJECT("clLinkProgram", never, clLinkProgram(env.context, 1, &env.device, "", 1, inputs, NULL, NULL, &err),
                   CL_INVALID_PROGRAM);

    /* ---- cl_kernel: zombie, freed, never created, a live program ---- */
    cl_kernel bad_kernels[] = {z.kernel, freed_kernel, (cl_kernel)never, (cl_kernel)program};
    for (size_t i = 0; i < sizeof bad_kernels / sizeof bad_kernels[0]; i++) {
        cl_kernel bad = bad_kernels[i];
        REFUSED("clGetKernelInfo", bad, clGetKernelInfo(bad, CL_KERNEL_NUM_ARGS, sizeof count, &count, NULL),
                CL_INVALID_KERNEL);
        REFUSED("clSetKernelArg", bad, clSetKernelArg(bad, 0, sizeof buffer, &buffer), CL_INVALID_KERNEL);
        REFUSED("clEnqueueNDRangeKernel", bad,
                clEnqueueNDRangeKernel(env.queue, bad, 1, NULL, &one, NULL, 0, NULL, NULL), CL_INVALID_KERNEL);
        REFUSED("clEnqueueTask", bad, clEnqueueTask(env.queue, bad, 0, NULL, NULL), CL_INVALID_KERNEL);
    }
    REFUSED("clGetKernelWorkGroupInfo", z.kernel,
            clGetKernelWorkGroupInfo(z.kernel, env.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof size, &size, NULL),
            CL_INVALID_KERNEL);
    REFUSED_OBJECT("clCloneKernel", z.kernel, clCloneKernel(z.kernel, &err), CL_INVALID_KERNEL);
    REFUSED("clGetKernelArgInfo", freed_kernel,
            clGetKernelArgInfo(freed_kernel, 0, CL_KERNEL_ARG_NAME, sizeof text, text, NULL), CL_INVALID_KERNEL);

    /* ---- cl_event: zombie, freed, never created, a live buffer ---- */
    cl_event bad_events[] = {z.event, freed_event, (cl_event)never, (cl_event)buffer};
    for (size_t i = 0; i < sizeof bad_events / sizeof bad_events[0]; i++) {
        cl_event bad = bad_events[i];
        REFUSED("clGetEventInfo", bad,
                clGetEventInfo(bad, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof value, &value, NULL), CL_INVALID_EVENT);
        REFUSED("clWaitForEvents", bad, clWaitForEvents(1, &bad), CL_INVALID_EVENT);
        /* a released event in a wait list, after a good one */
        cl_event wait[] = {user_event, bad};
        REFUSED("clEnqueueMarkerWithWaitList", bad, clEnqueueMarkerWithWaitList(env.queue, 2, wait, NULL),
                CL_INVALID_EVENT_WAIT_LIST);
        REFUSED("clEnqueueReadBuffer", bad,
                clEnqueueReadBuffer(env.queue, buffer, CL_TRUE, 0, sizeof value, &value, 2, wait, NULL),
                CL_INVALID_EVENT_WAIT_LIST);
        REFUSED("clEnqueueNDRangeKernel", bad,
                clEnqueueNDRangeKernel(env.queue, kernel, 1, NULL, &one, NULL, 2, wait, NULL),
                CL_INVALID_EVENT_WAIT_LIST);
    }
    REFUSED("clSetUserEventStatus", z.event, clSetUserEventStatus(z.event, CL_COMPLETE), CL_INVALID_EVENT);
    REFUSED("clSetEventCallback", freed_event, clSetEventCallback(freed_event, CL_COMPLETE, NULL, NULL),
            CL_INVALID_EVENT);
    cl_ulong when = 0;
    REFUSED("clGetEventProfilingInfo", z.event,
            clGetEventProfilingInfo(z.event, CL_PROFILING_COMMAND_END, sizeof when, &when, NULL), CL_INVALID_EVENT);
    REFUSED("clEnqueueWaitForEvents", freed_event, clEnqueueWaitForEvents(env.queue, 1, &freed_event),
            CL_INVALID_EVENT);
    REFUSED("clReleaseEvent", freed_event, clReleaseEvent(freed_event), CL_INVALID_EVENT);

    /* ---- cl_sampler: zombie, never created, a live buffer ---- */
    cl_sampler bad_samplers[] = {z.sampler, (cl_sampler)never, (cl_sampler)buffer};
    for (size_t i = 0; i < sizeof bad_samplers / sizeof bad_samplers[0]; i++)
        REFUSED("clGetSamplerInfo", bad_samplers[i],
                clGetSamplerInfo(bad_samplers[i], CL_SAMPLER_REFERENCE_COUNT, sizeof count, &count, NULL),
                CL_INVALID_SAMPLER);
    cl_bool images = CL_FALSE;
    CT_OK(clGetDeviceInfo(env.device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
    if (images) {
        /* With argument info the driver says which arguments take
         * objects: a pointer that never was one, or a live object of
         * another type, is refused too (without it only released handles
         * can be told from numbers). */
        cl_program image_program = clCreateProgramWithSource(env.context, 1, &image_source, NULL, &err);
        CT_NEED(image_program, err);
        CT_OK(clBuildProgram(image_program, 1, &env.device, "-cl-kernel-arg-info", NULL, NULL));
        cl_kernel image_kernel = clCreateKernel(image_program, "s", &err);
        CT_NEED(image_kernel, err);
        REFUSED("clSetKernelArg", never, clSetKernelArg(image_kernel, 2, sizeof never, &never), CL_INVALID_MEM_OBJECT);
        REFUSED("clSetKernelArg", never, clSetKernelArg(image_kernel, 1, sizeof never, &never), CL_INVALID_SAMPLER);
        REFUSED("clSetKernelArg", user_event, clSetKernelArg(image_kernel, 2, sizeof user_event, &user_event),
                CL_INVALID_MEM_OBJECT);
        /* a released sampler, or an event, as a sampler argument */
        REFUSED("clSetKernelArg", z.sampler, clSetKernelArg(image_kernel, 1, sizeof z.sampler, &z.sampler),
                CL_INVALID_SAMPLER);
        REFUSED("clSetKernelArg", user_event, clSetKernelArg(image_kernel, 1, sizeof user_event, &user_event),
                CL_INVALID_SAMPLER);
        /* a released buffer as an image argument */
        REFUSED("clSetKernelArg", z.buffer, clSetKernelArg(image_kernel, 0, sizeof z.buffer, &z.buffer),
                CL_INVALID_MEM_OBJECT);
        /* live objects of the wrong kind: a sampler as a buffer (pocl
         * crashes on it), a buffer as a sampler, the queue as a buffer */
        REFUSED("clSetKernelArg", sampler, clSetKernelArg(image_kernel, 2, sizeof sampler, &sampler),
                CL_INVALID_MEM_OBJECT);
        REFUSED("clSetKernelArg", buffer, clSetKernelArg(image_kernel, 1, sizeof buffer, &buffer), CL_INVALID_SAMPLER);
        REFUSED("clSetKernelArg", env.queue, clSetKernelArg(image_kernel, 2, sizeof env.queue, &env.queue),
                CL_INVALID_MEM_OBJECT);
        CHECK_EQ_INT(clSetKernelArg(image_kernel, 1, sizeof sampler, &sampler), CL_SUCCESS);
        CHECK_EQ_INT(clSetKernelArg(image_kernel, 2, sizeof buffer, &buffer), CL_SUCCESS);
        CT_OK(clReleaseKernel(image_kernel));
        CT_OK(clReleaseProgram(image_program));
    }

    /* ---- cl_device_id: released sub-device, never created, a live context ---- */
    cl_device_id bad_devices[] = {z.sub_device, (cl_device_id)never, (cl_device_id)env.context};
    for (size_t i = 0; i < sizeof bad_devices / sizeof bad_devices[0]; i++) {
        cl_device_id bad = bad_devices[i];
        if (!bad)
            continue; /* no sub-devices on this device */
        REFUSED("clGetDeviceInfo", bad, clGetDeviceInfo(bad, CL_DEVICE_TYPE, sizeof when, &when, NULL),
                CL_INVALID_DEVICE);
        REFUSED_OBJECT("clCreateContext", bad, clCreateContext(NULL, 1, &bad, NULL, NULL, &err), CL_INVALID_DEVICE);
        REFUSED_OBJECT("clCreateCommandQueueWithProperties", bad,
                       clCreateCommandQueueWithProperties(env.context, bad, NULL, &err), CL_INVALID_DEVICE);
        REFUSED("clGetProgramBuildInfo", bad,
                clGetProgramBuildInfo(program, bad, CL_PROGRAM_BUILD_STATUS, sizeof value, &value, NULL),
                CL_INVALID_DEVICE);
        REFUSED("clGetKernelWorkGroupInfo", bad,
                clGetKernelWorkGroupInfo(kernel, bad, CL_KERNEL_WORK_GROUP_SIZE, sizeof size, &size, NULL),
                CL_INVALID_DEVICE);
        cl_ulong host = 0;
        REFUSED("clGetHostTimer", bad, clGetHostTimer(bad, &host), CL_INVALID_DEVICE);
    }
    /* a bad device after a good one in a device list */
    cl_device_id device_list[] = {env.device, (cl_device_id)never};
    REFUSED("clBuildProgram", never, clBuildProgram(program, 2, device_list, "", NULL, NULL), CL_INVALID_DEVICE);

    /* ---- cl_command_buffer_khr (when the driver has the extension) ---- */
    clCreateCommandBufferKHR_fn create_cb =
        (clCreateCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(env.platform, "clCreateCommandBufferKHR");
    clReleaseCommandBufferKHR_fn release_cb = (clReleaseCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env.platform, "clReleaseCommandBufferKHR");
    clFinalizeCommandBufferKHR_fn finalize_cb = (clFinalizeCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env.platform, "clFinalizeCommandBufferKHR");
    clGetCommandBufferInfoKHR_fn info_cb = (clGetCommandBufferInfoKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env.platform, "clGetCommandBufferInfoKHR");
    if (create_cb && release_cb && finalize_cb && info_cb) {
        cl_command_buffer_khr cb = create_cb(1, &env.queue, NULL, &err);
        if (cb && err == CL_SUCCESS) {
        CT_OK(release_cb(cb));
        REFUSED("clFinalizeCommandBufferKHR", cb, finalize_cb(cb), CL_INVALID_COMMAND_BUFFER_KHR);
        REFUSED("clGetCommandBufferInfoKHR", cb,
                info_cb(cb, CL_COMMAND_BUFFER_NUM_QUEUES_KHR, sizeof count, &count, NULL),
                CL_INVALID_COMMAND_BUFFER_KHR);
        REFUSED_OBJECT("clCreateCommandBufferKHR", z.queue, create_cb(1, &z.queue, NULL, &err),
                       CL_INVALID_COMMAND_QUEUE);
        }
    }

    /* ---- cl_pocl_content_size: pocl's, and the layer's wrapper checks both
     *      buffers (pocl wrote into a released one) ---- */
    typedef cl_int(CL_API_CALL * set_content_size_fn)(cl_mem buffer, cl_mem content_size_buffer);
    set_content_size_fn set_content_size =
        (set_content_size_fn)clGetExtensionFunctionAddressForPlatform(env.platform, "clSetContentSizeBufferPoCL");
    CHECK(set_content_size != NULL);
    if (set_content_size) {
        REFUSED("clSetContentSizeBufferPoCL", z.buffer, set_content_size(z.buffer, buffer), CL_INVALID_MEM_OBJECT);
        REFUSED("clSetContentSizeBufferPoCL", freed_buffer, set_content_size(buffer, freed_buffer),
                CL_INVALID_MEM_OBJECT);
        /* live buffers reach pocl, which answers as without the layer */
        cl_mem content = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 64, NULL, &err);
        CT_OK(err);
        cl_mem content_size = clCreateBuffer(env.context, CL_MEM_READ_WRITE, sizeof(cl_ulong), NULL, &err);
        CT_OK(err);
        CHECK_EQ_INT(set_content_size(content, content_size), CL_SUCCESS);
        CT_OK(clReleaseMemObject(content));
        CT_OK(clReleaseMemObject(content_size));
    }

    /* ---- NULL handles are the driver's business: its own code, no
     *      diagnostic ---- */
    CHECK_EQ_INT(clGetMemObjectInfo(NULL, CL_MEM_SIZE, sizeof size, &size, NULL), CL_INVALID_MEM_OBJECT);
    CHECK_EQ_INT(clReleaseMemObject(NULL), CL_INVALID_MEM_OBJECT);
    CHECK_EQ_INT(clRetainEvent(NULL), CL_INVALID_EVENT);
    CHECK_EQ_INT(clGetKernelInfo(NULL, CL_KERNEL_NUM_ARGS, sizeof count, &count, NULL), CL_INVALID_KERNEL);

    /* The driver never saw a bad call: everything still works. */
    CHECK_EQ_INT(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), CL_SUCCESS);
    cl_long n = 41;
    CHECK_EQ_INT(clSetKernelArg(kernel, 1, sizeof n, &n), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueNDRangeKernel(env.queue, kernel, 1, NULL, &one, NULL, 1, &user_event, NULL), CL_SUCCESS);
    value = 0;
    CHECK_EQ_INT(clEnqueueReadBuffer(env.queue, buffer, CL_TRUE, 0, sizeof value, &value, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(value, 41);

    printf("bad inputs %d\n", bad_inputs);
    printf("misuse counted %llu\n", (unsigned long long)(misuse_count() - misuse_before));
    CT_OK(clReleaseProgram(fresh));
    CT_OK(clReleaseSampler(sampler));
    CT_OK(clReleaseEvent(user_event));
    CT_OK(clReleaseMemObject(buffer));
    CT_OK(clReleaseKernel(kernel));
    CT_OK(clReleaseProgram(program));
    ct_quiesce(&env);
    bury_zombies(&z);
    ct_teardown(&env);
    CHECK_EQ_INT(ct_registry_count(NULL), 0);
    ct_check_model(1);
    return check_summary("cl_validation refuse");
}

/* ---- transparent ---------------------------------------------------------- */

#define PASSED(call, handle, expr)                                                               \
    do {                                                                                         \
        cl_int got_ = (expr);                                                                    \
        CHECK_EQ_INT(got_, CL_SUCCESS);                                                          \
        if (got_ != CL_SUCCESS)                                                                  \
            fprintf(stderr, "  in %s(%p), line %d\n", (call), (const void *)(handle), __LINE__); \
        expect_line("passed", (call), (handle), "-");                                            \
    } while (0)

static int run_transparent(void)
{
    ct_env env;
    ct_setup(&env);
    cl_program program = ct_build(&env, kernel_source);
    zombies z;
    make_zombies(&env, program, &z);
    size_t size = 0;
    cl_uint count = 0;
    cl_int status = 0;

    /* The driver still has every zombie, and answers for it. */
    PASSED("clGetMemObjectInfo", z.buffer, clGetMemObjectInfo(z.buffer, CL_MEM_SIZE, sizeof size, &size, NULL));
    CHECK_EQ_INT(size, 64);
    PASSED("clGetContextInfo", z.context,
           clGetContextInfo(z.context, CL_CONTEXT_NUM_DEVICES, sizeof count, &count, NULL));
    CHECK_EQ_INT(count, 1);
    PASSED("clGetKernelInfo", z.kernel, clGetKernelInfo(z.kernel, CL_KERNEL_NUM_ARGS, sizeof count, &count, NULL));
    CHECK_EQ_INT(count, 2);
    PASSED("clGetProgramInfo", z.program,
           clGetProgramInfo(z.program, CL_PROGRAM_NUM_DEVICES, sizeof count, &count, NULL));
    CHECK_EQ_INT(count, 1);
    PASSED("clGetEventInfo", z.event,
           clGetEventInfo(z.event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    CHECK_EQ_INT(status, CL_COMPLETE);
    PASSED("clGetSamplerInfo", z.sampler,
           clGetSamplerInfo(z.sampler, CL_SAMPLER_REFERENCE_COUNT, sizeof count, &count, NULL));
    PASSED("clGetCommandQueueInfo", z.queue,
           clGetCommandQueueInfo(z.queue, CL_QUEUE_REFERENCE_COUNT, sizeof count, &count, NULL));
    cl_int pattern = 5, back = 0;
    PASSED("clEnqueueFillBuffer", z.buffer,
           clEnqueueFillBuffer(env.queue, z.buffer, &pattern, sizeof pattern, 0, 64, 0, NULL, NULL));
    /* the buffer argument of the read is a zombie too: one line per call */
    PASSED("clEnqueueReadBuffer", z.buffer,
           clEnqueueReadBuffer(env.queue, z.buffer, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL));
    CHECK_EQ_INT(back, 5);
    cl_event event = NULL;
    PASSED("clEnqueueMarkerWithWaitList", z.event, clEnqueueMarkerWithWaitList(env.queue, 1, &z.event, &event));
    /* the event the driver returned is tracked as usual */
    CT_EXPECT_LIVE(event, "cl_event", 1);
    CHECK_EQ_INT(clWaitForEvents(1, &event), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(event), CL_SUCCESS);
    if (z.sub_device) {
        cl_device_type type = 0;
        PASSED("clGetDeviceInfo", z.sub_device, clGetDeviceInfo(z.sub_device, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    }
    printf("bad inputs %d\n", bad_inputs);
    printf("misuse counted %llu\n", (unsigned long long)misuse_count());
    CT_OK(clReleaseProgram(program));
    ct_quiesce(&env);
    bury_zombies(&z);
    ct_teardown(&env);
    CHECK_EQ_INT(ct_registry_count(NULL), 0);
    ct_check_model(1);
    return check_summary("cl_validation transparent");
}

/* ---- valid: nothing to say ----------------------------------------------- */

static int run_valid(void)
{
    ct_env env;
    ct_setup(&env);
    size_t size = 0, one = 1;
    cl_uint count = 0;

    /* A context released by the program but held by its queue: usable
     * through the queue, and as the handle itself. */
    cl_context context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CT_NEED(context, err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, env.device, NULL, &err);
    CT_NEED(queue, err);
    CT_OK(clReleaseContext(context));
    cl_context from_queue = NULL;
    CHECK_EQ_INT(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof from_queue, &from_queue, NULL), CL_SUCCESS);
    CHECK(from_queue == context);
    CHECK_EQ_INT(clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof count, &count, NULL), CL_SUCCESS);
    cl_mem in_released_context = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK(in_released_context != NULL);
    CHECK_EQ_INT(err, CL_SUCCESS);
    cl_int pattern = 3;
    CHECK_EQ_INT(clEnqueueFillBuffer(queue, in_released_context, &pattern, sizeof pattern, 0, 64, 0, NULL, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(in_released_context), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseCommandQueue(queue), CL_SUCCESS);
    CT_EXPECT_GONE(context);

    /* A program released by the program but held by its kernel:
     * CL_KERNEL_PROGRAM hands it back, and it may be used and retained. */
    cl_program program = ct_build(&env, kernel_source);
    cl_kernel kernel = clCreateKernel(program, "k", &err);
    CT_NEED(kernel, err);
    CT_OK(clReleaseProgram(program));
    cl_program from_kernel = NULL;
    CHECK_EQ_INT(clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof from_kernel, &from_kernel, NULL), CL_SUCCESS);
    CHECK(from_kernel == program);
    CHECK_EQ_INT(clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof size, &size, NULL), CL_SUCCESS);
    cl_kernel second = clCreateKernel(program, "k", &err);
    CHECK(second != NULL);
    CHECK_EQ_INT(err, CL_SUCCESS);
    CHECK_EQ_INT(clRetainProgram(program), CL_SUCCESS);
    CT_EXPECT_LIVE(program, "cl_program", 1);

    /* A buffer released by the program but held by its sub-buffer. */
    cl_mem parent = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 1024, NULL, &err);
    CT_NEED(parent, err);
    cl_buffer_region region = {0, 256};
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CT_NEED(sub, err);
    CT_OK(clReleaseMemObject(parent));
    cl_mem associated = NULL;
    CHECK_EQ_INT(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof associated, &associated, NULL),
                 CL_SUCCESS);
    CHECK(associated == parent);
    CHECK_EQ_INT(clGetMemObjectInfo(parent, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS);
    CHECK_EQ_INT(size, 1024);
    cl_int back = 0;
    CHECK_EQ_INT(clEnqueueFillBuffer(env.queue, sub, &pattern, sizeof pattern, 0, 256, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueReadBuffer(env.queue, parent, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(back, 3);

    /* Kernel arguments of pointer size that are not handles, and a NULL
     * buffer. */
    cl_long n = 0x12345678;
    CHECK_EQ_INT(clSetKernelArg(kernel, 1, sizeof n, &n), CL_SUCCESS);
    cl_mem no_buffer = NULL;
    CHECK_EQ_INT(clSetKernelArg(kernel, 0, sizeof no_buffer, &no_buffer), CL_SUCCESS);
    CHECK_EQ_INT(clSetKernelArg(kernel, 0, sizeof sub, &sub), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueNDRangeKernel(env.queue, kernel, 1, NULL, &one, NULL, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueReadBuffer(env.queue, sub, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(back, 0x12345678);

    /* Root devices, however the program got them: from the queue, the
     * program, a sub-device's parent. */
    cl_device_id device = NULL;
    CHECK_EQ_INT(clGetCommandQueueInfo(env.queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL), CL_SUCCESS);
    CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof count, &count, NULL), CL_SUCCESS);
    CHECK_EQ_INT(clGetProgramInfo(program, CL_PROGRAM_DEVICES, sizeof device, &device, NULL), CL_SUCCESS);
    CHECK_EQ_INT(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_STATUS, sizeof n, &n, NULL), CL_SUCCESS);
    cl_device_partition_property by_counts[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1,
                                                CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    cl_device_id sub_device = NULL;
    if (clCreateSubDevices(env.device, by_counts, 1, &sub_device, NULL) == CL_SUCCESS && sub_device) {
        cl_device_id root = NULL;
        CHECK_EQ_INT(clGetDeviceInfo(sub_device, CL_DEVICE_PARENT_DEVICE, sizeof root, &root, NULL), CL_SUCCESS);
        CHECK(root == env.device);
        cl_context sub_context = clCreateContext(NULL, 1, &sub_device, NULL, NULL, &err);
        CHECK(sub_context != NULL);
        if (sub_context)
            CHECK_EQ_INT(clReleaseContext(sub_context), CL_SUCCESS);
        CHECK_EQ_INT(clReleaseDevice(sub_device), CL_SUCCESS);
    }

    CHECK_EQ_INT(clReleaseKernel(second), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(sub), CL_SUCCESS);
    CT_EXPECT_GONE(parent);
    CT_EXPECT_GONE(program);
    ct_teardown(&env);
    CHECK_EQ_INT(ct_registry_count(NULL), 0);
    ct_check_model(0);
    return check_summary("cl_validation valid");
}

/* ---- the parent ------------------------------------------------------------- */

/* Run one child and match its expected lines with its diagnostics: one
 * "livetrack: ERROR:" line per expected line, naming the call, the handle
 * and the code (or saying it passed the call on). Returns the number of
 * bad inputs the child tried. */
static long run_and_match(const char *mode, const char *const *set)
{
    char *argv[] = {(char *)ct_self_path(), (char *)mode, NULL};
    ct_child child;
    int failed_before = check_failed;
    CHECK_EQ_INT(ct_run(argv, set, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);
    ct_lines expected = ct_lines_starting(child.out, strcmp(mode, "transparent") ? "refused " : "passed ");
    ct_lines errors = ct_lines_starting(child.err, "livetrack: ERROR: ");
    CHECK_EQ_INT(errors.count, expected.count);
    size_t n = expected.count < errors.count ? expected.count : errors.count;
    for (size_t i = 0; i < n; i++) {
        char verb[16], call[128], handle[64], code[64];
        if (sscanf(expected.lines[i], "%15s %127s %63s %63s", verb, call, handle, code) != 4) {
            CHECK(0);
            continue;
        }
        const char *line = errors.lines[i];
        int ok = ct_has_token(line, call) && ct_has_token(line, handle) &&
                 (strcmp(verb, "passed") ? ct_has_token(line, code) && strstr(line, "refused with")
                                         : strstr(line, "passed to the driver") != NULL);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  diagnostic %zu: expected %s %s %s %s, got:\n    %s\n", i, verb, call, handle, code,
                    line);
    }
    long tried = 0;
    unsigned long long counted = 0;
    const char *bad = strstr(child.out, "bad inputs ");
    CHECK(bad && sscanf(bad, "bad inputs %ld", &tried) == 1);
    const char *misuse = strstr(child.out, "misuse counted ");
    CHECK(misuse && sscanf(misuse, "misuse counted %llu", &counted) == 1);
    CHECK_EQ_INT(counted, expected.count);
    CHECK_EQ_INT(tried, expected.count);
    if (check_failed != failed_before)
        ct_child_dump(mode, &child);
    ct_lines_free(&expected);
    ct_lines_free(&errors);
    ct_child_free(&child);
    return tried;
}

static int run_parent(void)
{
    CHECK(ct_self_path() != NULL);
    const char *strict[] = {"LIVETRACK_MAX_DIAGNOSTICS=-1", "LIVETRACK_TRANSPARENT=0", "LIVETRACK_EXIT_REPORT=auto",
                            NULL};
    const char *transparent[] = {"LIVETRACK_MAX_DIAGNOSTICS=-1", "LIVETRACK_TRANSPARENT=1",
                                 "LIVETRACK_EXIT_REPORT=auto", NULL};
    long refused = run_and_match("refuse", strict);
    long passed = run_and_match("transparent", transparent);

    /* Valid use: no diagnostic at all. */
    char *argv[] = {(char *)ct_self_path(), "valid", NULL};
    ct_child child;
    int failed_before = check_failed;
    CHECK_EQ_INT(ct_run(argv, strict, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);
    CHECK_EQ_INT(ct_count_lines_with_prefix(child.err, "livetrack:"), 0);
    if (check_failed != failed_before)
        ct_child_dump("valid", &child);
    ct_child_free(&child);

    printf("cl_validation: %ld bad inputs refused, %ld passed through in transparent mode\n", refused, passed);
    return check_summary("cl_validation");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "refuse"))
        return run_refuse();
    if (argc > 1 && !strcmp(argv[1], "transparent"))
        return run_transparent();
    if (argc > 1 && !strcmp(argv[1], "valid"))
        return run_valid();
    return run_parent();
}
