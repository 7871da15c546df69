/*
 * A failed creation registers nothing: the live count and the number of
 * objects ever recorded are unchanged, and the error code is the driver's.
 */
#include "cl_test_util.h"

static const char *kernel_source = "__kernel void k(__global int *a) { a[0] = 1; }\n";

typedef struct counts {
    uint64_t live, created;
} counts;

static counts now(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return (counts){stats.live_objects, stats.created};
}

/* The call failed with `expected`, returned no object and recorded nothing. */
#define EXPECT_FAILED(handle, err, expected, before, what)                                              \
    do {                                                                                                \
        counts after_ = now();                                                                          \
        CHECK((handle) == NULL);                                                                        \
        CHECK_EQ_INT((err), (expected));                                                                \
        CHECK_EQ_INT(after_.live, (before).live);                                                       \
        CHECK_EQ_INT(after_.created, (before).created);                                                 \
        if (after_.live != (before).live || after_.created != (before).created || (err) != (expected)) \
            fprintf(stderr, "  in: %s\n", what);                                                        \
    } while (0)

/* Like EXPECT_FAILED, where the call may create an object and free it
 * again before it returns: what is live is unchanged. */
#define EXPECT_LIVE_SAME(handle, err, expected, before, what)                  \
    do {                                                                       \
        counts after_ = now();                                                 \
        CHECK((handle) == NULL);                                               \
        CHECK_EQ_INT((err), (expected));                                       \
        CHECK_EQ_INT(after_.live, (before).live);                              \
        if (after_.live != (before).live || (err) != (expected))               \
            fprintf(stderr, "  in: %s\n", what);                               \
    } while (0)

static cl_device_id link_device;

/* clLinkProgram's notification: reads the program's build log. */
static void CL_CALLBACK read_link_log(cl_program program, void *data)
{
    size_t size = 0;
    *(cl_int *)data = program ? clGetProgramBuildInfo(program, link_device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size)
                              : CL_INVALID_PROGRAM;
}

/* clLinkProgram's notification: keeps the program it is given, as any
 * holder of a valid handle may. */
static void CL_CALLBACK keep_linked(cl_program program, void *data)
{
    if (program && clRetainProgram(program) == CL_SUCCESS)
        *(cl_program *)data = program;
}

int main(void)
{
    ct_env env;
    ct_setup(&env);
    cl_int err = CL_SUCCESS;
    counts before;

    /* clCreateBuffer with size 0 */
    before = now();
    err = CL_SUCCESS;
    cl_mem buffer = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 0, NULL, &err);
    EXPECT_FAILED(buffer, err, CL_INVALID_BUFFER_SIZE, before, "clCreateBuffer(size 0)");

    /* ... and with no errcode_ret: still nothing recorded */
    before = now();
    buffer = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 0, NULL, NULL);
    err = CL_INVALID_BUFFER_SIZE;
    EXPECT_FAILED(buffer, err, CL_INVALID_BUFFER_SIZE, before, "clCreateBuffer(size 0, no errcode_ret)");

    /* clCreateBuffer with contradicting flags */
    before = now();
    buffer = clCreateBuffer(env.context, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, NULL, &err);
    EXPECT_FAILED(buffer, err, CL_INVALID_VALUE, before, "clCreateBuffer(READ_ONLY|WRITE_ONLY)");

    /* clCreateBufferWithProperties with size 0 */
    before = now();
    buffer = clCreateBufferWithProperties(env.context, NULL, CL_MEM_READ_WRITE, 0, NULL, &err);
    EXPECT_FAILED(buffer, err, CL_INVALID_BUFFER_SIZE, before, "clCreateBufferWithProperties(size 0)");

    /* clCreateSubBuffer out of range */
    cl_mem parent = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 1024, NULL, &err);
    CT_NEED(parent, err);
    before = now();
    cl_buffer_region region = {0, 4096};
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    EXPECT_FAILED(sub, err, CL_INVALID_VALUE, before, "clCreateSubBuffer(out of range)");
    CT_EXPECT_LIVE(parent, "cl_mem", 1);
    livetrack_object obj;
    if (ct_live(parent, &obj))
        CHECK_EQ_INT(obj.holders, 0); /* the failed sub-buffer holds nothing */

    /* clCreateImage with an image type that is not an image */
    before = now();
    cl_image_format format = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_BUFFER;
    desc.image_width = 4;
    cl_mem image = clCreateImage(env.context, CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
    CHECK(image == NULL);
    CHECK(err != CL_SUCCESS);
    CHECK_EQ_INT(now().live, before.live);
    CHECK_EQ_INT(now().created, before.created);

    /* clCreateCommandQueueWithProperties with an unknown property */
    before = now();
    cl_queue_properties bad_queue[] = {0x7fff, 1, 0};
    cl_command_queue queue = clCreateCommandQueueWithProperties(env.context, env.device, bad_queue, &err);
    CHECK(queue == NULL);
    CHECK(err != CL_SUCCESS);
    CHECK_EQ_INT(now().live, before.live);
    CHECK_EQ_INT(now().created, before.created);

    /* clCreateContext with no device */
    before = now();
    cl_context context = clCreateContext(NULL, 0, NULL, NULL, NULL, &err);
    EXPECT_FAILED(context, err, CL_INVALID_VALUE, before, "clCreateContext(no device)");

    /* clCreateUserEvent on a released (dead) context would be misuse;
     * on NULL it is the loader's or driver's CL_INVALID_CONTEXT. */
    before = now();
    cl_event event = clCreateUserEvent(NULL, &err);
    EXPECT_FAILED(event, err, CL_INVALID_CONTEXT, before, "clCreateUserEvent(NULL)");

    /* clCreateSampler with normalized coordinates off and CL_ADDRESS_REPEAT */
    before = now();
    cl_sampler_properties bad_sampler[] = {0x7fff, 0, 0};
    cl_sampler sampler = clCreateSamplerWithProperties(env.context, bad_sampler, &err);
    CHECK(sampler == NULL);
    CHECK(err != CL_SUCCESS);
    CHECK_EQ_INT(now().live, before.live);
    CHECK_EQ_INT(now().created, before.created);

    /* clCreateProgramWithSource with no source */
    before = now();
    cl_program program = clCreateProgramWithSource(env.context, 0, NULL, NULL, &err);
    EXPECT_FAILED(program, err, CL_INVALID_VALUE, before, "clCreateProgramWithSource(count 0)");

    /* clCreateProgramWithBinary with garbage */
    before = now();
    static const unsigned char junk[16] = "not a binary";
    const unsigned char *binaries[1] = {junk};
    size_t length = sizeof junk;
    program = clCreateProgramWithBinary(env.context, 1, &env.device, &length, binaries, NULL, &err);
    CHECK(program == NULL);
    CHECK(err != CL_SUCCESS);
    CHECK_EQ_INT(now().live, before.live);
    CHECK_EQ_INT(now().created, before.created);

    /* clCreateProgramWithBuiltInKernels with an unknown kernel name */
    before = now();
    program = clCreateProgramWithBuiltInKernels(env.context, 1, &env.device, "no.such.kernel", &err);
    EXPECT_FAILED(program, err, CL_INVALID_VALUE, before, "clCreateProgramWithBuiltInKernels(unknown)");

    /* clCreateKernel with a bad name, on a built program */
    program = ct_build(&env, kernel_source);
    before = now();
    cl_kernel kernel = clCreateKernel(program, "no_such_kernel", &err);
    EXPECT_FAILED(kernel, err, CL_INVALID_KERNEL_NAME, before, "clCreateKernel(bad name)");
    CT_EXPECT_LIVE(program, "cl_program", 1);
    if (ct_live(program, &obj))
        CHECK_EQ_INT(obj.holders, 0);

    /* clCreateKernelsInProgram with too small an array */
    before = now();
    cl_kernel kernels[1] = {NULL};
    err = clCreateKernelsInProgram(program, 0, kernels, NULL);
    CHECK(err != CL_SUCCESS);
    CHECK_EQ_INT(now().live, before.live);
    CHECK_EQ_INT(now().created, before.created);

    /* A program that does not compile: clCompileProgram fails and creates
     * nothing. (Linking it would trip an assertion in pocl 3.1.) */
    static const char *broken_source = "__kernel void broken( { }\n";
    cl_program broken = clCreateProgramWithSource(env.context, 1, &broken_source, NULL, &err);
    CT_NEED(broken, err);
    before = now();
    err = clCompileProgram(broken, 1, &env.device, "", 0, NULL, NULL, NULL, NULL);
    CHECK(err != CL_SUCCESS);
    CHECK_EQ_INT(now().live, before.live);
    CHECK_EQ_INT(now().created, before.created);
    CHECK_EQ_INT(clReleaseProgram(broken), CL_SUCCESS);

    /* clLinkProgram with no input programs */
    before = now();
    cl_program linked = clLinkProgram(env.context, 1, &env.device, "", 0, NULL, NULL, NULL, &err);
    EXPECT_FAILED(linked, err, CL_INVALID_VALUE, before, "clLinkProgram(no programs)");

    /* A link that fails with a notification: pocl hands the notification
     * a program, then frees it and returns NULL. The program was live
     * while the notification read its log, and nothing of it stays: the
     * registry does not keep a program the driver freed (a report would
     * retain it, and the context would look held). */
    static const char *calls_missing = "int helper(int x);\n"
                                       "__kernel void user(__global int *a) { a[0] = helper(a[0]); }\n";
    cl_program unresolved = clCreateProgramWithSource(env.context, 1, &calls_missing, NULL, &err);
    CT_NEED(unresolved, err);
    CT_OK(clCompileProgram(unresolved, 1, &env.device, "", 0, NULL, NULL, NULL, NULL));
    livetrack_object context_before;
    CHECK(ct_live(env.context, &context_before));
    before = now();
    cl_int log_status = 1;
    link_device = env.device;
    linked = clLinkProgram(env.context, 1, &env.device, "", 1, &unresolved, read_link_log, &log_status, &err);
    EXPECT_LIVE_SAME(linked, err, CL_LINK_PROGRAM_FAILURE, before, "clLinkProgram(unresolved, notified)");
    CHECK_EQ_INT(log_status, CL_SUCCESS);
    livetrack_object context_after;
    CHECK(ct_live(env.context, &context_after) && context_after.holders == context_before.holders);
    ct_ext ext;
    ct_need_ext(env.platform, &ext);
    ct_report report = {0};
    ct_collect(ext.report, env.platform, &report); /* retained a freed program before */
    CHECK_EQ_INT(ct_report_count_type(&report, "cl_program"), 2); /* `program` and `unresolved` */
    ct_report_free(&report);

    /* The same failed link, but the notification retains the program: the
     * driver drops only its own reference, and the program's keeps it
     * alive. It stays a valid argument, a live object and a leak until
     * released. */
    cl_program kept = NULL;
    linked = clLinkProgram(env.context, 1, &env.device, "", 1, &unresolved, keep_linked, &kept, &err);
    CHECK(linked == NULL && err == CL_LINK_PROGRAM_FAILURE && kept != NULL);
    if (kept) {
        cl_uint refs = 0;
        CHECK_EQ_INT(clGetProgramInfo(kept, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_SUCCESS);
        CHECK_EQ_INT(refs, 1);
        livetrack_object kept_object;
        CHECK(ct_live(kept, &kept_object) && kept_object.refs == 1);
        ct_collect(ext.report, env.platform, &report);
        CHECK_EQ_INT(ct_report_count_type(&report, "cl_program"), 3);
        ct_report_free(&report);
        CHECK_EQ_INT(clReleaseProgram(kept), CL_SUCCESS);
    }
    CHECK(ct_live(env.context, &context_after) && context_after.holders == context_before.holders);
    CHECK_EQ_INT(clReleaseProgram(unresolved), CL_SUCCESS);

    /* clCreateSubDevices with more compute units than exist */
    cl_uint units = 0;
    CT_OK(clGetDeviceInfo(env.device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
    cl_device_partition_property too_many[] = {CL_DEVICE_PARTITION_BY_COUNTS, (cl_device_partition_property)units + 1,
                                               CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    cl_device_id subs[4] = {NULL, NULL, NULL, NULL};
    cl_uint count = 0;
    before = now();
    err = clCreateSubDevices(env.device, too_many, 4, subs, &count);
    CHECK(err != CL_SUCCESS);
    CHECK_EQ_INT(now().live, before.live);
    CHECK_EQ_INT(now().created, before.created);

    /* clSVMAlloc with size 0 returns NULL and records nothing */
    before = now();
    void *svm = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 0, 0);
    CHECK(svm == NULL);
    CHECK_EQ_INT(now().live, before.live);
    CHECK_EQ_INT(now().created, before.created);

    /* Failed enqueues produce no event: a read past the end. */
    cl_event read_event = NULL;
    char host[16];
    before = now();
    err = clEnqueueReadBuffer(env.queue, parent, CL_TRUE, 1020, sizeof host, host, 0, NULL, &read_event);
    CHECK_EQ_INT(err, CL_INVALID_VALUE);
    CHECK(read_event == NULL);
    CHECK_EQ_INT(now().live, before.live);
    CHECK_EQ_INT(now().created, before.created);

    /* A failed clEnqueueSVMFree frees nothing: the pointer stays tracked. */
    void *svm_kept = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 64, 0);
    if (svm_kept) {
        before = now();
        livetrack_object made, after;
        CHECK(ct_live(svm_kept, &made));
        void *pointers[1] = {svm_kept};
        cl_event svm_event = NULL;
        err = clEnqueueSVMFree(env.queue, 1, pointers, NULL, NULL, 1, NULL, &svm_event);
        CHECK_EQ_INT(err, CL_INVALID_EVENT_WAIT_LIST);
        CHECK(svm_event == NULL);
        CT_EXPECT_LIVE(svm_kept, "cl_svm_pointer", 1);
        CHECK_EQ_INT(now().live, before.live);
        /* the very record, not one made anew: its creation number (which
         * marks and leaks-since go by) and its call site are the alloc's */
        CHECK_EQ_INT(now().created, before.created);
        CHECK(ct_live(svm_kept, &after) && after.seq == made.seq && after.stack == made.stack);
        /* ... so the program's own clSVMFree afterwards is not misuse. */
        livetrack_stats stats;
        livetrack_get_stats(&stats);
        uint64_t misuse_before = stats.misuse;
        clSVMFree(env.context, svm_kept);
        livetrack_get_stats(&stats);
        CHECK_EQ_INT(stats.misuse, misuse_before);
        CT_EXPECT_GONE(svm_kept);
    }

    /* cl_khr_command_buffer: a command buffer on no queue; enqueueing one
     * that is not finalized gives no event. */
    clCreateCommandBufferKHR_fn create_cb =
        (clCreateCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(env.platform, "clCreateCommandBufferKHR");
    clReleaseCommandBufferKHR_fn release_cb = (clReleaseCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env.platform, "clReleaseCommandBufferKHR");
    clEnqueueCommandBufferKHR_fn enqueue_cb = (clEnqueueCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env.platform, "clEnqueueCommandBufferKHR");
    if (create_cb && release_cb && enqueue_cb) {
        before = now();
        cl_command_buffer_khr cb = create_cb(0, NULL, NULL, &err);
        CHECK(cb == NULL);
        CHECK(err != CL_SUCCESS);
        CHECK_EQ_INT(now().live, before.live);
        CHECK_EQ_INT(now().created, before.created);

        cb = create_cb(1, &env.queue, NULL, &err);
        CT_NEED(cb, err);
        before = now();
        cl_event cb_event = NULL;
        err = enqueue_cb(0, NULL, cb, 0, NULL, &cb_event);
        CHECK(err != CL_SUCCESS);
        CHECK(cb_event == NULL);
        CHECK_EQ_INT(now().live, before.live);
        CHECK_EQ_INT(now().created, before.created);
        CHECK_EQ_INT(release_cb(cb), CL_SUCCESS);
    }

    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(parent), CL_SUCCESS);
    ct_teardown(&env);
    CHECK_EQ_INT(ct_registry_count(NULL), 0);
    ct_check_model(0);
    return check_summary("cl_failures");
}
