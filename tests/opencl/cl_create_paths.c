/*
 * Every creation path of the OpenCL API is tracked: after creation the
 * object is in the registry with the right type name, one reference and
 * (for buffers, sub-buffers and SVM) the requested size; a retain makes
 * two; the releases remove it.
 */
#include "cl_test_util.h"

static const char *kernel_source =
    "__kernel void add(__global int *a, __global const int *b) { size_t i = get_global_id(0); a[i] += b[i]; }\n"
    "__kernel void one(__global int *a) { a[0] = 1; }\n";

/* create = 1, retain = 2, release = 1, release = gone */
#define LIFECYCLE(handle, type, retain_fn, release_fn)            \
    do {                                                          \
        CT_EXPECT_LIVE((handle), (type), 1);                      \
        CHECK_EQ_INT(retain_fn(handle), CL_SUCCESS);              \
        CT_EXPECT_LIVE((handle), (type), 2);                      \
        CHECK_EQ_INT(release_fn(handle), CL_SUCCESS);             \
        CT_EXPECT_LIVE((handle), (type), 1);                      \
        CHECK_EQ_INT(release_fn(handle), CL_SUCCESS);             \
        CT_EXPECT_GONE(handle);                                   \
    } while (0)

#define EXPECT_BYTES(handle, expected)                            \
    do {                                                          \
        livetrack_object obj_;                                    \
        if (ct_live((handle), &obj_))                             \
            CHECK_EQ_INT(obj_.bytes, (expected));                 \
    } while (0)

#define EXPECT_SOME_BYTES(handle)                                 \
    do {                                                          \
        livetrack_object obj_;                                    \
        if (ct_live((handle), &obj_))                             \
            CHECK(obj_.bytes > 0);                                \
    } while (0)

static void test_contexts(ct_env *env)
{
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(NULL, 1, &env->device, NULL, NULL, &err);
    CT_NEED(context, err);
    LIFECYCLE(context, "cl_context", clRetainContext, clReleaseContext);

    cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)env->platform, 0};
    context = clCreateContextFromType(properties, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
    CT_NEED(context, err);
    LIFECYCLE(context, "cl_context", clRetainContext, clReleaseContext);
}

static void test_queues(ct_env *env)
{
    cl_int err = CL_SUCCESS;
    cl_command_queue queue = clCreateCommandQueue(env->context, env->device, 0, &err);
    CT_NEED(queue, err);
    LIFECYCLE(queue, "cl_command_queue", clRetainCommandQueue, clReleaseCommandQueue);

    cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    queue = clCreateCommandQueueWithProperties(env->context, env->device, properties, &err);
    CT_NEED(queue, err);
    LIFECYCLE(queue, "cl_command_queue", clRetainCommandQueue, clReleaseCommandQueue);

    /* The context the queues came from is untouched. */
    CT_EXPECT_LIVE(env->context, "cl_context", 1);
}

static void test_buffers(ct_env *env)
{
    cl_int err = CL_SUCCESS;
    cl_mem buffer = clCreateBuffer(env->context, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CT_NEED(buffer, err);
    EXPECT_BYTES(buffer, 4096);
    LIFECYCLE(buffer, "cl_mem", clRetainMemObject, clReleaseMemObject);

    static char host[1000];
    buffer = clCreateBuffer(env->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    CT_NEED(buffer, err);
    EXPECT_BYTES(buffer, sizeof host);
    LIFECYCLE(buffer, "cl_mem", clRetainMemObject, clReleaseMemObject);

    cl_mem_properties no_properties[] = {0};
    buffer = clCreateBufferWithProperties(env->context, no_properties, CL_MEM_READ_WRITE, 1000, NULL, &err);
    CT_NEED(buffer, err);
    EXPECT_BYTES(buffer, 1000);
    LIFECYCLE(buffer, "cl_mem", clRetainMemObject, clReleaseMemObject);

    buffer = clCreateBufferWithProperties(env->context, NULL, CL_MEM_READ_WRITE, 77, NULL, &err);
    CT_NEED(buffer, err);
    EXPECT_BYTES(buffer, 77);
    LIFECYCLE(buffer, "cl_mem", clRetainMemObject, clReleaseMemObject);

    /* Sub-buffer at the first aligned offset. */
    cl_uint align_bits = 0;
    CT_OK(clGetDeviceInfo(env->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
    size_t align = align_bits / 8 ? align_bits / 8 : 1;
    cl_mem parent = clCreateBuffer(env->context, CL_MEM_READ_WRITE, 4 * align + 4096, NULL, &err);
    CT_NEED(parent, err);
    cl_buffer_region region = {align, 256};
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CT_NEED(sub, err);
    EXPECT_BYTES(sub, 256);
    LIFECYCLE(sub, "cl_mem", clRetainMemObject, clReleaseMemObject);
    CT_EXPECT_LIVE(parent, "cl_mem", 1);
    EXPECT_BYTES(parent, 4 * align + 4096);
    CHECK_EQ_INT(clReleaseMemObject(parent), CL_SUCCESS);
    CT_EXPECT_GONE(parent);
}

static void test_images(ct_env *env)
{
    cl_int err = CL_SUCCESS;
    cl_image_format format = {CL_RGBA, CL_UNSIGNED_INT8};

    cl_image_desc desc2d;
    memset(&desc2d, 0, sizeof desc2d);
    desc2d.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc2d.image_width = 16;
    desc2d.image_height = 8;
    cl_mem image = clCreateImage(env->context, CL_MEM_READ_WRITE, &format, &desc2d, NULL, &err);
    CT_NEED(image, err);
    EXPECT_SOME_BYTES(image);
    LIFECYCLE(image, "cl_mem", clRetainMemObject, clReleaseMemObject);

    image = clCreateImage2D(env->context, CL_MEM_READ_ONLY, &format, 8, 8, 0, NULL, &err);
    CT_NEED(image, err);
    EXPECT_SOME_BYTES(image);
    LIFECYCLE(image, "cl_mem", clRetainMemObject, clReleaseMemObject);

    image = clCreateImage3D(env->context, CL_MEM_READ_ONLY, &format, 4, 4, 4, 0, 0, NULL, &err);
    CT_NEED(image, err);
    EXPECT_SOME_BYTES(image);
    LIFECYCLE(image, "cl_mem", clRetainMemObject, clReleaseMemObject);

    cl_image_desc desc3d;
    memset(&desc3d, 0, sizeof desc3d);
    desc3d.image_type = CL_MEM_OBJECT_IMAGE3D;
    desc3d.image_width = 4;
    desc3d.image_height = 4;
    desc3d.image_depth = 2;
    image = clCreateImageWithProperties(env->context, NULL, CL_MEM_READ_WRITE, &format, &desc3d, NULL, &err);
    CT_NEED(image, err);
    EXPECT_SOME_BYTES(image);
    LIFECYCLE(image, "cl_mem", clRetainMemObject, clReleaseMemObject);

    /* A 1D image on a buffer: the image keeps the buffer alive. */
    cl_mem buffer = clCreateBuffer(env->context, CL_MEM_READ_WRITE, 4 * 256, NULL, &err);
    CT_NEED(buffer, err);
    cl_image_desc desc1d;
    memset(&desc1d, 0, sizeof desc1d);
    desc1d.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    desc1d.image_width = 256;
    desc1d.buffer = buffer;
    image = clCreateImage(env->context, CL_MEM_READ_WRITE, &format, &desc1d, NULL, &err);
    if (!image || err != CL_SUCCESS) {
        printf("skipping the image-from-buffer case: clCreateImage(CL_MEM_OBJECT_IMAGE1D_BUFFER) gave %d\n",
               (int)err);
        CHECK_EQ_INT(clReleaseMemObject(buffer), CL_SUCCESS);
        return;
    }
    EXPECT_SOME_BYTES(image);
    CT_EXPECT_LIVE(image, "cl_mem", 1);
    CHECK_EQ_INT(clRetainMemObject(image), CL_SUCCESS);
    CT_EXPECT_LIVE(image, "cl_mem", 2);
    CHECK_EQ_INT(clReleaseMemObject(image), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(buffer), CL_SUCCESS);
    /* Released by the program, kept alive by the image. */
    livetrack_object obj;
    CHECK(ct_live(buffer, &obj));
    if (ct_live(buffer, &obj)) {
        CHECK_EQ_INT(obj.refs, 0);
        CHECK(obj.holders >= 1);
    }
    CHECK_EQ_INT(clReleaseMemObject(image), CL_SUCCESS);
    CT_EXPECT_GONE(image);
    CT_EXPECT_GONE(buffer);
}

static void test_samplers(ct_env *env)
{
    cl_int err = CL_SUCCESS;
    cl_sampler sampler = clCreateSampler(env->context, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err);
    CT_NEED(sampler, err);
    LIFECYCLE(sampler, "cl_sampler", clRetainSampler, clReleaseSampler);

    cl_sampler_properties properties[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_TRUE, CL_SAMPLER_FILTER_MODE,
                                          CL_FILTER_LINEAR, 0};
    sampler = clCreateSamplerWithProperties(env->context, properties, &err);
    CT_NEED(sampler, err);
    LIFECYCLE(sampler, "cl_sampler", clRetainSampler, clReleaseSampler);
}

/* Programs and kernels; returns a built program for the event tests. */
static cl_program test_programs_and_kernels(ct_env *env)
{
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(env->context, 1, &kernel_source, NULL, &err);
    CT_NEED(program, err);
    CT_EXPECT_LIVE(program, "cl_program", 1);
    CT_OK(clBuildProgram(program, 1, &env->device, "", NULL, NULL));
    CHECK_EQ_INT(clRetainProgram(program), CL_SUCCESS);
    CT_EXPECT_LIVE(program, "cl_program", 2);
    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    CT_EXPECT_LIVE(program, "cl_program", 1);

    /* clCreateKernel */
    cl_kernel kernel = clCreateKernel(program, "add", &err);
    CT_NEED(kernel, err);
    LIFECYCLE(kernel, "cl_kernel", clRetainKernel, clReleaseKernel);

    /* clCreateKernelsInProgram */
    cl_uint kernel_count = 0;
    CT_OK(clCreateKernelsInProgram(program, 0, NULL, &kernel_count));
    CHECK_EQ_INT(kernel_count, 2);
    cl_kernel kernels[2] = {NULL, NULL};
    CT_OK(clCreateKernelsInProgram(program, 2, kernels, NULL));
    for (int i = 0; i < 2; i++)
        CT_EXPECT_LIVE(kernels[i], "cl_kernel", 1);
    for (int i = 0; i < 2; i++)
        LIFECYCLE(kernels[i], "cl_kernel", clRetainKernel, clReleaseKernel);

    /* clCloneKernel */
    kernel = clCreateKernel(program, "one", &err);
    CT_NEED(kernel, err);
    cl_kernel clone = clCloneKernel(kernel, &err);
    CT_NEED(clone, err);
    CT_EXPECT_LIVE(kernel, "cl_kernel", 1);
    LIFECYCLE(clone, "cl_kernel", clRetainKernel, clReleaseKernel);
    LIFECYCLE(kernel, "cl_kernel", clRetainKernel, clReleaseKernel);

    /* clCreateProgramWithBinary, from the built program's binary */
    size_t binary_size = 0;
    CT_OK(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof binary_size, &binary_size, NULL));
    CHECK(binary_size > 0);
    unsigned char *binary = malloc(binary_size ? binary_size : 1);
    CT_OK(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL));
    const unsigned char *binaries[1] = {binary};
    cl_int binary_status = CL_INVALID_VALUE;
    cl_program from_binary = clCreateProgramWithBinary(env->context, 1, &env->device, &binary_size, binaries,
                                                       &binary_status, &err);
    free(binary);
    CT_NEED(from_binary, err);
    CHECK_EQ_INT(binary_status, CL_SUCCESS);
    CT_EXPECT_LIVE(from_binary, "cl_program", 1);
    CHECK_EQ_INT(clBuildProgram(from_binary, 1, &env->device, "", NULL, NULL), CL_SUCCESS);
    kernel = clCreateKernel(from_binary, "one", &err);
    CT_NEED(kernel, err);
    CT_EXPECT_LIVE(kernel, "cl_kernel", 1);
    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    CT_EXPECT_GONE(kernel);
    LIFECYCLE(from_binary, "cl_program", clRetainProgram, clReleaseProgram);

    /* clCreateProgramWithBuiltInKernels: pocl cannot build the CPU
     * device's built-in kernels, so only the program is checked. */
    size_t names_size = 0;
    CT_OK(clGetDeviceInfo(env->device, CL_DEVICE_BUILT_IN_KERNELS, 0, NULL, &names_size));
    char *names = calloc(1, names_size + 1);
    CT_OK(clGetDeviceInfo(env->device, CL_DEVICE_BUILT_IN_KERNELS, names_size, names, NULL));
    names[strcspn(names, ";")] = '\0';
    if (names[0]) {
        cl_program builtin = clCreateProgramWithBuiltInKernels(env->context, 1, &env->device, names, &err);
        CT_NEED(builtin, err);
        LIFECYCLE(builtin, "cl_program", clRetainProgram, clReleaseProgram);
    } else {
        printf("skipping clCreateProgramWithBuiltInKernels: the device lists no built-in kernels\n");
    }
    free(names);

    /* clCompileProgram + clLinkProgram: the linked program is a new object. */
    static const char *lib_source = "__kernel void twice(__global int *a) { a[get_global_id(0)] *= 2; }\n";
    cl_program compiled = clCreateProgramWithSource(env->context, 1, &lib_source, NULL, &err);
    CT_NEED(compiled, err);
    CT_OK(clCompileProgram(compiled, 1, &env->device, "", 0, NULL, NULL, NULL, NULL));
    CT_EXPECT_LIVE(compiled, "cl_program", 1);
    uint64_t live_before = ct_live_count();
    cl_program linked = clLinkProgram(env->context, 1, &env->device, "", 1, &compiled, NULL, NULL, &err);
    CT_NEED(linked, err);
    CHECK(linked != compiled);
    CHECK_EQ_INT(ct_live_count(), live_before + 1);
    CT_EXPECT_LIVE(compiled, "cl_program", 1);
    kernel = clCreateKernel(linked, "twice", &err);
    CT_NEED(kernel, err);
    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    LIFECYCLE(linked, "cl_program", clRetainProgram, clReleaseProgram);
    LIFECYCLE(compiled, "cl_program", clRetainProgram, clReleaseProgram);

    return program;
}

/* An event from an enqueue: tracked with one reference, retain = 2,
 * gone after the releases. */
static void check_event(cl_event event, cl_int err, const char *what)
{
    if (!event || err != CL_SUCCESS) {
        fprintf(stderr, "%s: no event (%d)\n", what, (int)err);
        CHECK(0);
        return;
    }
    livetrack_object obj;
    int found = ct_live(event, &obj);
    if (!found)
        fprintf(stderr, "%s: event %p is not in the registry\n", what, (void *)event);
    CT_EXPECT_LIVE(event, "cl_event", 1);
    CHECK_EQ_INT(clRetainEvent(event), CL_SUCCESS);
    CT_EXPECT_LIVE(event, "cl_event", 2);
    CHECK_EQ_INT(clWaitForEvents(1, &event), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(event), CL_SUCCESS);
    CT_EXPECT_LIVE(event, "cl_event", 1);
    CHECK_EQ_INT(clReleaseEvent(event), CL_SUCCESS);
    CT_EXPECT_GONE(event);
}

static void test_events(ct_env *env, cl_program program)
{
    cl_int err = CL_SUCCESS;
    cl_event event = NULL;

    event = clCreateUserEvent(env->context, &err);
    CT_NEED(event, err);
    CT_EXPECT_LIVE(event, "cl_event", 1);
    CHECK_EQ_INT(clRetainEvent(event), CL_SUCCESS);
    CT_EXPECT_LIVE(event, "cl_event", 2);
    CHECK_EQ_INT(clSetUserEventStatus(event, CL_COMPLETE), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(event), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(event), CL_SUCCESS);
    CT_EXPECT_GONE(event);

    enum { N = 64 };
    cl_int data[N], back[N];
    for (int i = 0; i < N; i++)
        data[i] = i;
    cl_mem a = clCreateBuffer(env->context, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
    CT_NEED(a, err);
    cl_mem b = clCreateBuffer(env->context, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
    CT_NEED(b, err);

    event = NULL;
    err = clEnqueueWriteBuffer(env->queue, a, CL_FALSE, 0, sizeof data, data, 0, NULL, &event);
    check_event(event, err, "clEnqueueWriteBuffer");

    event = NULL;
    err = clEnqueueCopyBuffer(env->queue, a, b, 0, 0, sizeof data, 0, NULL, &event);
    check_event(event, err, "clEnqueueCopyBuffer");

    event = NULL;
    cl_int pattern = 3;
    err = clEnqueueFillBuffer(env->queue, a, &pattern, sizeof pattern, 0, sizeof data, 0, NULL, &event);
    check_event(event, err, "clEnqueueFillBuffer");

    event = NULL;
    err = clEnqueueReadBuffer(env->queue, b, CL_TRUE, 0, sizeof back, back, 0, NULL, &event);
    check_event(event, err, "clEnqueueReadBuffer");
    CHECK_EQ_INT(back[5], 5);

    event = NULL;
    cl_event unmap_event = NULL;
    void *mapped = clEnqueueMapBuffer(env->queue, a, CL_TRUE, CL_MAP_READ, 0, sizeof data, 0, NULL, &event, &err);
    check_event(event, err, "clEnqueueMapBuffer");
    if (mapped) {
        CHECK_EQ_INT(((cl_int *)mapped)[7], 3);
        err = clEnqueueUnmapMemObject(env->queue, a, mapped, 0, NULL, &unmap_event);
        check_event(unmap_event, err, "clEnqueueUnmapMemObject");
    }

    cl_kernel kernel = clCreateKernel(program, "add", &err);
    CT_NEED(kernel, err);
    CT_OK(clSetKernelArg(kernel, 0, sizeof a, &a));
    CT_OK(clSetKernelArg(kernel, 1, sizeof b, &b));
    size_t global = N;
    event = NULL;
    err = clEnqueueNDRangeKernel(env->queue, kernel, 1, NULL, &global, NULL, 0, NULL, &event);
    check_event(event, err, "clEnqueueNDRangeKernel");

    cl_kernel one = clCreateKernel(program, "one", &err);
    CT_NEED(one, err);
    CT_OK(clSetKernelArg(one, 0, sizeof a, &a));
    event = NULL;
    err = clEnqueueTask(env->queue, one, 0, NULL, &event);
    check_event(event, err, "clEnqueueTask");

    cl_event first = NULL;
    CT_OK(clEnqueueMarkerWithWaitList(env->queue, 0, NULL, &first));
    check_event(first, CL_SUCCESS, "clEnqueueMarkerWithWaitList");

    cl_event user = clCreateUserEvent(env->context, &err);
    CT_NEED(user, err);
    event = NULL;
    err = clEnqueueMarkerWithWaitList(env->queue, 1, &user, &event);
    CHECK_EQ_INT(clSetUserEventStatus(user, CL_COMPLETE), CL_SUCCESS);
    check_event(event, err, "clEnqueueMarkerWithWaitList(user event)");
    CHECK_EQ_INT(clReleaseEvent(user), CL_SUCCESS);
    CT_EXPECT_GONE(user);

    event = NULL;
    err = clEnqueueBarrierWithWaitList(env->queue, 0, NULL, &event);
    check_event(event, err, "clEnqueueBarrierWithWaitList");

    event = NULL;
    err = clEnqueueMarker(env->queue, &event);
    check_event(event, err, "clEnqueueMarker");

    CT_OK(clFinish(env->queue));
    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseKernel(one), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(a), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(b), CL_SUCCESS);
    CT_EXPECT_GONE(kernel);
    CT_EXPECT_GONE(a);
}

/* More enqueues that return events: rectangles, images, migration, SVM. */
static void test_more_events(ct_env *env)
{
    cl_int err = CL_SUCCESS;
    cl_event event = NULL;
    static unsigned char host[16 * 16 * 4];
    cl_mem buffer = clCreateBuffer(env->context, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CT_NEED(buffer, err);

    size_t origin[3] = {0, 0, 0}, region[3] = {16, 4, 1};
    event = NULL;
    err = clEnqueueWriteBufferRect(env->queue, buffer, CL_TRUE, origin, origin, region, 16, 0, 16, 0, host, 0, NULL,
                                   &event);
    check_event(event, err, "clEnqueueWriteBufferRect");
    event = NULL;
    err = clEnqueueReadBufferRect(env->queue, buffer, CL_TRUE, origin, origin, region, 16, 0, 16, 0, host, 0, NULL,
                                  &event);
    check_event(event, err, "clEnqueueReadBufferRect");
    event = NULL;
    err = clEnqueueMigrateMemObjects(env->queue, 1, &buffer, 0, 0, NULL, &event);
    check_event(event, err, "clEnqueueMigrateMemObjects");

    cl_image_format format = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 16;
    desc.image_height = 16;
    cl_mem image = clCreateImage(env->context, CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
    CT_NEED(image, err);
    size_t image_region[3] = {16, 16, 1};
    event = NULL;
    err = clEnqueueWriteImage(env->queue, image, CL_TRUE, origin, image_region, 0, 0, host, 0, NULL, &event);
    check_event(event, err, "clEnqueueWriteImage");
    event = NULL;
    err = clEnqueueReadImage(env->queue, image, CL_TRUE, origin, image_region, 0, 0, host, 0, NULL, &event);
    check_event(event, err, "clEnqueueReadImage");
    cl_uint4 color = {{1, 2, 3, 4}};
    event = NULL;
    err = clEnqueueFillImage(env->queue, image, &color, origin, image_region, 0, NULL, &event);
    check_event(event, err, "clEnqueueFillImage");
    event = NULL;
    err = clEnqueueCopyImageToBuffer(env->queue, image, buffer, origin, image_region, 0, 0, NULL, &event);
    check_event(event, err, "clEnqueueCopyImageToBuffer");
    event = NULL;
    err = clEnqueueCopyBufferToImage(env->queue, buffer, image, 0, origin, image_region, 0, NULL, &event);
    check_event(event, err, "clEnqueueCopyBufferToImage");
    size_t row_pitch = 0;
    event = NULL;
    void *mapped = clEnqueueMapImage(env->queue, image, CL_TRUE, CL_MAP_READ, origin, image_region, &row_pitch, NULL,
                                     0, NULL, &event, &err);
    check_event(event, err, "clEnqueueMapImage");
    if (mapped) {
        CHECK_EQ_INT(((unsigned char *)mapped)[2], 3);
        CT_OK(clEnqueueUnmapMemObject(env->queue, image, mapped, 0, NULL, NULL));
    }
    CT_OK(clFinish(env->queue));
    CHECK_EQ_INT(clReleaseMemObject(image), CL_SUCCESS);

    /* SVM enqueues, and clEnqueueSVMFree releasing tracked pointers. */
    void *svm = clSVMAlloc(env->context, CL_MEM_READ_WRITE, 256, 0);
    void *svm2 = clSVMAlloc(env->context, CL_MEM_READ_WRITE, 256, 0);
    if (svm && svm2) {
        cl_int pattern = 6;
        event = NULL;
        err = clEnqueueSVMMemFill(env->queue, svm, &pattern, sizeof pattern, 256, 0, NULL, &event);
        check_event(event, err, "clEnqueueSVMMemFill");
        event = NULL;
        err = clEnqueueSVMMemcpy(env->queue, CL_TRUE, svm2, svm, 256, 0, NULL, &event);
        check_event(event, err, "clEnqueueSVMMemcpy");
        event = NULL;
        err = clEnqueueSVMMap(env->queue, CL_TRUE, CL_MAP_READ, svm2, 256, 0, NULL, &event);
        check_event(event, err, "clEnqueueSVMMap");
        CHECK_EQ_INT(((cl_int *)svm2)[63], 6);
        event = NULL;
        err = clEnqueueSVMUnmap(env->queue, svm2, 0, NULL, &event);
        check_event(event, err, "clEnqueueSVMUnmap");
        void *pointers[2] = {svm, svm2};
        event = NULL;
        err = clEnqueueSVMFree(env->queue, 2, pointers, NULL, NULL, 0, NULL, &event);
        CT_EXPECT_GONE(svm);
        CT_EXPECT_GONE(svm2);
        check_event(event, err, "clEnqueueSVMFree");
        CT_OK(clFinish(env->queue));
    } else {
        printf("skipping the SVM enqueues: clSVMAlloc returned NULL\n");
        clSVMFree(env->context, svm);
        clSVMFree(env->context, svm2);
    }

    /* Creations with errcode_ret = NULL are recorded too. */
    cl_mem quiet = clCreateBuffer(env->context, CL_MEM_READ_WRITE, 48, NULL, NULL);
    CHECK(quiet != NULL);
    CT_EXPECT_LIVE(quiet, "cl_mem", 1);
    EXPECT_BYTES(quiet, 48);
    cl_event quiet_event = clCreateUserEvent(env->context, NULL);
    CHECK(quiet_event != NULL);
    CT_EXPECT_LIVE(quiet_event, "cl_event", 1);
    CHECK_EQ_INT(clSetUserEventStatus(quiet_event, CL_COMPLETE), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(quiet_event), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(quiet), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(buffer), CL_SUCCESS);
}

static void test_sub_devices(ct_env *env)
{
    /* Root devices are not tracked; retain/release pass through. */
    CHECK(!ct_live(env->device, NULL));
    CHECK_EQ_INT(clRetainDevice(env->device), CL_SUCCESS);
    CHECK(!ct_live(env->device, NULL));
    CHECK_EQ_INT(clReleaseDevice(env->device), CL_SUCCESS);
    CHECK(!ct_live(env->device, NULL));

    cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_uint count = 0;
    cl_int err = clCreateSubDevices(env->device, equally, 0, NULL, &count);
    if (err != CL_SUCCESS || count == 0) {
        printf("skipping sub-devices: clCreateSubDevices(equally, 1) gave %d\n", (int)err);
        return;
    }
    uint64_t live_before = ct_live_count();
    cl_device_id *subs = calloc(count, sizeof *subs);
    CT_OK(clCreateSubDevices(env->device, equally, count, subs, NULL));
    CHECK_EQ_INT(ct_live_count(), live_before + count);
    for (cl_uint i = 0; i < count; i++)
        CT_EXPECT_LIVE(subs[i], "cl_device_id", 1);
    for (cl_uint i = 0; i < count; i++)
        LIFECYCLE(subs[i], "cl_device_id", clRetainDevice, clReleaseDevice);
    free(subs);
    CHECK_EQ_INT(ct_live_count(), live_before);

    cl_device_partition_property by_counts[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1,
                                                CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    cl_device_id sub = NULL;
    count = 0;
    err = clCreateSubDevices(env->device, by_counts, 1, &sub, &count);
    CHECK_EQ_INT(err, CL_SUCCESS);
    CHECK_EQ_INT(count, 1);
    if (err == CL_SUCCESS && sub) {
        /* A context on the sub-device, then the sub-device's lifecycle. */
        cl_context context = clCreateContext(NULL, 1, &sub, NULL, NULL, &err);
        CT_NEED(context, err);
        CT_EXPECT_LIVE(context, "cl_context", 1);
        CHECK_EQ_INT(clReleaseContext(context), CL_SUCCESS);
        CT_EXPECT_GONE(context);
        LIFECYCLE(sub, "cl_device_id", clRetainDevice, clReleaseDevice);
    }

    /* A sub-device of a sub-device does not hold its parent: pocl 3.1
     * frees a sub-device at its last release whatever was partitioned
     * from it, so a report that asked the driver about it would crash. */
    cl_device_partition_property two[] = {CL_DEVICE_PARTITION_BY_COUNTS, 2, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    cl_device_id middle = NULL, leaf = NULL;
    if (clCreateSubDevices(env->device, two, 1, &middle, NULL) != CL_SUCCESS || !middle) {
        printf("skipping nested sub-devices: no sub-device with 2 compute units\n");
        return;
    }
    err = clCreateSubDevices(middle, by_counts, 1, &leaf, NULL);
    if (err != CL_SUCCESS || !leaf) {
        printf("skipping nested sub-devices: partitioning a sub-device gave %d\n", (int)err);
        CHECK_EQ_INT(clReleaseDevice(middle), CL_SUCCESS);
        return;
    }
    CT_EXPECT_LIVE(leaf, "cl_device_id", 1);
    CHECK_EQ_INT(clReleaseDevice(middle), CL_SUCCESS);
    CT_EXPECT_GONE(middle);
    CT_EXPECT_LIVE(leaf, "cl_device_id", 1);
    ct_ext ext;
    ct_need_ext(env->platform, &ext);
    ct_report listed = {0};
    ct_collect(ext.report, env->platform, &listed);
    CHECK(ct_report_find(&listed, leaf) >= 0 && ct_report_find(&listed, middle) < 0);
    ct_report_free(&listed);
    cl_uint units = 0;
    CHECK_EQ_INT(clGetDeviceInfo(leaf, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL), CL_SUCCESS);
    CHECK_EQ_INT(units, 1);
    CHECK_EQ_INT(clReleaseDevice(leaf), CL_SUCCESS);
    CT_EXPECT_GONE(leaf);
    CT_EXPECT_GONE(middle);
}

static void test_svm(ct_env *env)
{
    void *svm = clSVMAlloc(env->context, CL_MEM_READ_WRITE, 3000, 0);
    if (!svm) {
        printf("skipping SVM: clSVMAlloc returned NULL (the device reports no SVM support)\n");
        return;
    }
    CT_EXPECT_LIVE(svm, "cl_svm_pointer", 1);
    EXPECT_BYTES(svm, 3000);
    clSVMFree(env->context, svm);
    CT_EXPECT_GONE(svm);

    /* Two at once, freed in creation order. */
    void *first = clSVMAlloc(env->context, CL_MEM_READ_ONLY, 128, 0);
    void *second = clSVMAlloc(env->context, CL_MEM_READ_ONLY, 64, 0);
    CHECK(first && second);
    if (first && second) {
        CT_EXPECT_LIVE(first, "cl_svm_pointer", 1);
        CT_EXPECT_LIVE(second, "cl_svm_pointer", 1);
        EXPECT_BYTES(second, 64);
    }
    clSVMFree(env->context, first);
    CT_EXPECT_GONE(first);
    if (second)
        CT_EXPECT_LIVE(second, "cl_svm_pointer", 1);
    clSVMFree(env->context, second);
    CT_EXPECT_GONE(second);
}

static void test_command_buffers(ct_env *env)
{
    clCreateCommandBufferKHR_fn create =
        (clCreateCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(env->platform, "clCreateCommandBufferKHR");
    clRetainCommandBufferKHR_fn retain =
        (clRetainCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(env->platform, "clRetainCommandBufferKHR");
    clReleaseCommandBufferKHR_fn release = (clReleaseCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env->platform, "clReleaseCommandBufferKHR");
    clFinalizeCommandBufferKHR_fn finalize = (clFinalizeCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env->platform, "clFinalizeCommandBufferKHR");
    clEnqueueCommandBufferKHR_fn enqueue = (clEnqueueCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env->platform, "clEnqueueCommandBufferKHR");
    clCommandFillBufferKHR_fn fill =
        (clCommandFillBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(env->platform, "clCommandFillBufferKHR");
    if (!create || !retain || !release || !finalize || !enqueue || !fill) {
        printf("skipping cl_khr_command_buffer: the functions are missing\n");
        CHECK(0); /* pocl 3.1 has them */
        return;
    }
    cl_int err = CL_SUCCESS;
    cl_command_buffer_khr buffer = create(1, &env->queue, NULL, &err);
    CT_NEED(buffer, err);
    CT_EXPECT_LIVE(buffer, "cl_command_buffer_khr", 1);
    CHECK_EQ_INT(retain(buffer), CL_SUCCESS);
    CT_EXPECT_LIVE(buffer, "cl_command_buffer_khr", 2);
    CHECK_EQ_INT(release(buffer), CL_SUCCESS);
    CT_EXPECT_LIVE(buffer, "cl_command_buffer_khr", 1);

    cl_mem memory = clCreateBuffer(env->context, CL_MEM_READ_WRITE, 256, NULL, &err);
    CT_NEED(memory, err);
    cl_int pattern = 0x5a5a5a5a;
    CHECK_EQ_INT(fill(buffer, NULL, memory, &pattern, sizeof pattern, 0, 256, 0, NULL, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(finalize(buffer), CL_SUCCESS);
    cl_event event = NULL;
    err = enqueue(0, NULL, buffer, 0, NULL, &event);
    check_event(event, err, "clEnqueueCommandBufferKHR");
    CT_OK(clFinish(env->queue));
    cl_int back = 0;
    CT_OK(clEnqueueReadBuffer(env->queue, memory, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL));
    CHECK_EQ_INT(back, pattern);

    CHECK_EQ_INT(release(buffer), CL_SUCCESS);
    CT_EXPECT_GONE(buffer);
    CHECK_EQ_INT(clReleaseMemObject(memory), CL_SUCCESS);
}

int main(void)
{
    ct_env env;
    ct_setup(&env);
    uint64_t live_at_start = ct_live_count();
    CT_EXPECT_LIVE(env.context, "cl_context", 1);
    CT_EXPECT_LIVE(env.queue, "cl_command_queue", 1);

    test_contexts(&env);
    test_queues(&env);
    test_buffers(&env);
    test_images(&env);
    test_samplers(&env);
    cl_program program = test_programs_and_kernels(&env);
    test_events(&env, program);
    test_more_events(&env);
    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    CT_EXPECT_GONE(program);
    test_sub_devices(&env);
    test_svm(&env);
    test_command_buffers(&env);

    /* Everything the tests made is gone again. */
    CHECK_EQ_INT(ct_live_count(), live_at_start);
    ct_teardown(&env);
    CHECK_EQ_INT(ct_live_count(), live_at_start - 2);
    ct_check_model(0);
    return check_summary("cl_create_paths");
}
