/*
 * The extension itself: the function addresses, the platform extension
 * strings, and the basic Report contract (every live object once, newest
 * first, NULL platform = all, NULL report_fn = nothing, objects created
 * before Track included, Track any time and repeatedly, refcount equal
 * to the driver's CL_*_REFERENCE_COUNT, the Altera names alike).
 */
#include "cl_test_util.h"

static const char *kernel_source = "__kernel void k(__global int *a) { a[0] += 1; }\n";

static const char *const function_names[] = {"clTrackLiveObjectsIntelFPGA", "clReportLiveObjectsIntelFPGA",
                                             "clTrackLiveObjectsAltera", "clReportLiveObjectsAltera"};

static void test_function_addresses(cl_platform_id platform)
{
    for (size_t i = 0; i < sizeof function_names / sizeof function_names[0]; i++) {
        void *for_platform = clGetExtensionFunctionAddressForPlatform(platform, function_names[i]);
        void *plain = clGetExtensionFunctionAddress(function_names[i]);
        CHECK(for_platform != NULL);
        CHECK(plain != NULL);
        if (!for_platform || !plain)
            fprintf(stderr, "  %s: for platform %p, plain %p\n", function_names[i], for_platform, plain);
    }
    /* The driver's own extension functions still come through. */
    CHECK(clGetExtensionFunctionAddressForPlatform(platform, "clCreateCommandBufferKHR") != NULL);
    /* Unknown names are still unknown. */
    CHECK(clGetExtensionFunctionAddressForPlatform(platform, "clNoSuchFunctionLivetrackTest") == NULL);
}

/* `name` is one of the space-separated words of `list`. */
static int has_word(const char *list, const char *name)
{
    size_t length = strlen(name);
    for (const char *at = strstr(list, name); at; at = strstr(at + 1, name)) {
        if ((at == list || at[-1] == ' ') && (at[length] == ' ' || at[length] == '\0'))
            return 1;
    }
    return 0;
}

static void test_extension_strings(cl_platform_id platform)
{
    size_t size = 0;
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, NULL, &size), CL_SUCCESS);
    CHECK(size > 1);
    char *text = calloc(1, size + 16);
    size_t size_ret = 0;
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, size, text, &size_ret), CL_SUCCESS);
    CHECK_EQ_INT(size_ret, size);
    CHECK_EQ_INT(strlen(text) + 1, size);
    CHECK(has_word(text, "cl_altera_live_object_tracking"));
    CHECK(has_word(text, "cl_intelfpga_live_object_tracking"));
    CHECK(has_word(text, "cl_khr_icd")); /* the driver's own stay */
    if (!has_word(text, "cl_altera_live_object_tracking") || !has_word(text, "cl_intelfpga_live_object_tracking"))
        fprintf(stderr, "  CL_PLATFORM_EXTENSIONS: \"%s\"\n", text);
    /* A larger buffer gives the same string. */
    char *large = calloc(1, size + 64);
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, size + 64, large, NULL), CL_SUCCESS);
    CHECK(strcmp(large, text) == 0);
    /* Too small a buffer. */
    memset(large, 0x7f, size + 64);
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, size - 1, large, NULL), CL_INVALID_VALUE);
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 1, large, NULL), CL_INVALID_VALUE);
    free(large);
    free(text);

    /* CL_PLATFORM_EXTENSIONS_WITH_VERSION */
    size = 0;
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, 0, NULL, &size), CL_SUCCESS);
    CHECK(size >= 2 * sizeof(cl_name_version));
    CHECK_EQ_INT(size % sizeof(cl_name_version), 0);
    size_t count = size / sizeof(cl_name_version);
    cl_name_version *versions = calloc(count + 1, sizeof *versions);
    size_ret = 0;
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, size, versions, &size_ret),
                 CL_SUCCESS);
    CHECK_EQ_INT(size_ret, size);
    int altera = 0, intelfpga = 0, icd = 0;
    for (size_t i = 0; i < count; i++) {
        if (strcmp(versions[i].name, "cl_altera_live_object_tracking") == 0) {
            altera++;
            CHECK_EQ_INT(versions[i].version, CL_LIVE_OBJECT_TRACKING_EXTENSION_VERSION);
        }
        if (strcmp(versions[i].name, "cl_intelfpga_live_object_tracking") == 0) {
            intelfpga++;
            CHECK_EQ_INT(versions[i].version, CL_LIVE_OBJECT_TRACKING_EXTENSION_VERSION);
        }
        icd += strcmp(versions[i].name, "cl_khr_icd") == 0;
    }
    CHECK_EQ_INT(altera, 1);
    CHECK_EQ_INT(intelfpga, 1);
    CHECK_EQ_INT(icd, 1);
    if (size >= sizeof(cl_name_version))
        CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, size - 1, versions, NULL),
                     CL_INVALID_VALUE);
    free(versions);
}

/* ---- refcounts against the driver, inside the callback ---- */

typedef struct refcount_check {
    clGetCommandBufferInfoKHR_fn command_buffer_info;
    int say_mismatches;
    size_t calls, mismatches, unknown_types, not_in_registry, order_errors;
    uint64_t last_seq;
    int inside;
    int nested;
} refcount_check;

static int driver_refcount(refcount_check *state, void *object, const char *type_name, cl_uint *out)
{
    cl_int err = CL_INVALID_VALUE;
    *out = 0;
    if (strcmp(type_name, "cl_context") == 0)
        err = clGetContextInfo((cl_context)object, CL_CONTEXT_REFERENCE_COUNT, sizeof *out, out, NULL);
    else if (strcmp(type_name, "cl_command_queue") == 0)
        err = clGetCommandQueueInfo((cl_command_queue)object, CL_QUEUE_REFERENCE_COUNT, sizeof *out, out, NULL);
    else if (strcmp(type_name, "cl_mem") == 0)
        err = clGetMemObjectInfo((cl_mem)object, CL_MEM_REFERENCE_COUNT, sizeof *out, out, NULL);
    else if (strcmp(type_name, "cl_program") == 0)
        err = clGetProgramInfo((cl_program)object, CL_PROGRAM_REFERENCE_COUNT, sizeof *out, out, NULL);
    else if (strcmp(type_name, "cl_kernel") == 0)
        err = clGetKernelInfo((cl_kernel)object, CL_KERNEL_REFERENCE_COUNT, sizeof *out, out, NULL);
    else if (strcmp(type_name, "cl_event") == 0)
        err = clGetEventInfo((cl_event)object, CL_EVENT_REFERENCE_COUNT, sizeof *out, out, NULL);
    else if (strcmp(type_name, "cl_sampler") == 0)
        err = clGetSamplerInfo((cl_sampler)object, CL_SAMPLER_REFERENCE_COUNT, sizeof *out, out, NULL);
    else if (strcmp(type_name, "cl_device_id") == 0)
        err = clGetDeviceInfo((cl_device_id)object, CL_DEVICE_REFERENCE_COUNT, sizeof *out, out, NULL);
    else if (strcmp(type_name, "cl_command_buffer_khr") == 0 && state->command_buffer_info)
        err = state->command_buffer_info((cl_command_buffer_khr)object, CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR,
                                         sizeof *out, out, NULL);
    else if (strcmp(type_name, "cl_svm_pointer") == 0) {
        *out = 1;
        err = CL_SUCCESS;
    } else {
        state->unknown_types++;
        fprintf(stderr, "  reported an unknown type \"%s\" (%p)\n", type_name, object);
        return 0;
    }
    if (err != CL_SUCCESS)
        fprintf(stderr, "  the driver's reference count of %s %p: error %d\n", type_name, object, (int)err);
    return err == CL_SUCCESS;
}

static void CL_CALLBACK refcount_fn(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    refcount_check *state = user_data;
    if (state->inside++)
        state->nested++;
    state->calls++;
    cl_uint driver = 0;
    if (!type_name) {
        state->unknown_types++;
    } else if (driver_refcount(state, object, type_name, &driver) && driver != refcount) {
        state->mismatches++;
        if (state->say_mismatches)
            fprintf(stderr, "  %s %p: reported refcount %u, the driver says %u\n", type_name, object, refcount,
                    driver);
    }
    livetrack_object obj;
    if (!ct_live(object, &obj)) {
        state->not_in_registry++;
    } else {
        if (type_name && strcmp(obj.type_name, type_name) != 0)
            state->unknown_types++;
        if (state->last_seq && obj.seq >= state->last_seq)
            state->order_errors++;
        state->last_seq = obj.seq;
    }
    state->inside--;
}

typedef struct refcount_report {
    const ct_ext *ext;
    cl_platform_id platform;
    refcount_check *state;
} refcount_report;

/* One Report through refcount_fn, from a fresh state; returns its
 * mismatches (for ct_until_counts_agree). */
static int report_refcount_mismatches(void *data, int say)
{
    refcount_report *run = data;
    clGetCommandBufferInfoKHR_fn command_buffer_info = run->state->command_buffer_info;
    memset(run->state, 0, sizeof *run->state);
    run->state->command_buffer_info = command_buffer_info;
    run->state->say_mismatches = say;
    run->ext->report(run->platform, refcount_fn, run->state);
    return (int)run->state->mismatches;
}

static void CL_CALLBACK crash_if_called(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    (void)user_data;
    (void)object;
    (void)type_name;
    (void)refcount;
    abort();
}

/* Same handles, same order. */
static int same_report(const ct_report *a, const ct_report *b)
{
    if (a->count != b->count)
        return 0;
    for (size_t i = 0; i < a->count; i++)
        if (a->items[i].handle != b->items[i].handle || strcmp(a->items[i].type_name, b->items[i].type_name) != 0)
            return 0;
    return 1;
}

int main(void)
{
    ct_env env;
    ct_get_platform(&env);
    cl_int err = CL_SUCCESS;

    test_function_addresses(env.platform);
    test_extension_strings(env.platform);

    /* Objects created before Track are reported too. */
    env.context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CT_NEED(env.context, err);
    env.queue = clCreateCommandQueueWithProperties(env.context, env.device, NULL, &err);
    CT_NEED(env.queue, err);
    cl_mem early = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 256, NULL, &err);
    CT_NEED(early, err);

    ct_ext ext;
    ct_need_ext(env.platform, &ext);
    ext.track(env.platform);

    ct_report report = {0}, again = {0};
    ct_collect(ext.report, env.platform, &report);
    CHECK(ct_report_find(&report, early) == 0); /* the newest */
    CHECK(ct_report_find(&report, env.queue) == 1);
    CHECK(ct_report_find(&report, env.context) == 2);
    CHECK_EQ_INT(report.count, ct_registry_count(NULL));
    CHECK(!report.bad_type_name);
    if (report.count == 3) {
        CHECK(strcmp(report.items[0].type_name, "cl_mem") == 0);
        CHECK(strcmp(report.items[1].type_name, "cl_command_queue") == 0);
        CHECK(strcmp(report.items[2].type_name, "cl_context") == 0);
        CHECK_EQ_INT(report.items[0].refcount, 1);
        CHECK_EQ_INT(report.items[1].refcount, 1);
    }

    /* One of every type. */
    cl_buffer_region region = {0, 128};
    cl_mem sub = clCreateSubBuffer(early, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CT_NEED(sub, err);
    cl_image_format format = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 8;
    desc.image_height = 8;
    cl_mem image = clCreateImage(env.context, CL_MEM_READ_ONLY, &format, &desc, NULL, &err);
    CT_NEED(image, err);
    cl_sampler sampler = clCreateSampler(env.context, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err);
    CT_NEED(sampler, err);
    cl_program program = ct_build(&env, kernel_source);
    cl_kernel kernel = clCreateKernel(program, "k", &err);
    CT_NEED(kernel, err);
    CT_OK(clSetKernelArg(kernel, 0, sizeof early, &early));
    cl_event user = clCreateUserEvent(env.context, &err);
    CT_NEED(user, err);
    cl_event task = NULL;
    CT_OK(clEnqueueTask(env.queue, kernel, 0, NULL, &task));
    /* A user event: pocl holds no references of its own on it, so its
     * count is exactly the application's. */
    cl_event retained_twice = clCreateUserEvent(env.context, &err);
    CT_NEED(retained_twice, err);
    CT_OK(clRetainEvent(retained_twice));
    CT_OK(clFinish(env.queue));
    cl_device_partition_property by_counts[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1,
                                                CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    cl_device_id sub_device = NULL;
    if (clCreateSubDevices(env.device, by_counts, 1, &sub_device, NULL) != CL_SUCCESS)
        sub_device = NULL;
    void *svm = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 512, 0);
    clCreateCommandBufferKHR_fn create_cb =
        (clCreateCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(env.platform, "clCreateCommandBufferKHR");
    clReleaseCommandBufferKHR_fn release_cb = (clReleaseCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env.platform, "clReleaseCommandBufferKHR");
    cl_command_buffer_khr command_buffer = create_cb ? create_cb(1, &env.queue, NULL, &err) : NULL;
    /* A kept-alive object (the app released it) and extra references. */
    CT_OK(clReleaseProgram(program));
    CT_OK(clRetainMemObject(image));
    CT_OK(clRetainKernel(kernel));

    /* Every object is reported with the driver's count, once pocl has let
     * go of the finished commands. */
    refcount_check state;
    memset(&state, 0, sizeof state);
    state.command_buffer_info = (clGetCommandBufferInfoKHR_fn)clGetExtensionFunctionAddressForPlatform(
        env.platform, "clGetCommandBufferInfoKHR");
    size_t registry_count = ct_registry_count(NULL);
    refcount_report counted = {&ext, env.platform, &state};
    CHECK_EQ_INT(ct_until_counts_agree(&env, report_refcount_mismatches, &counted), 0);
    CHECK_EQ_INT(state.calls, registry_count);
    CHECK_EQ_INT(state.unknown_types, 0);
    CHECK_EQ_INT(state.not_in_registry, 0);
    CHECK_EQ_INT(state.order_errors, 0); /* newest first */
    CHECK_EQ_INT(state.nested, 0);       /* serially */

    ct_collect(ext.report, env.platform, &report);
    CHECK_EQ_INT(report.count, registry_count);
    long at;
#define EXPECT_REPORTED(handle, type, refs)                                                          \
    do {                                                                                             \
        at = ct_report_find(&report, (handle));                                                      \
        CHECK(at >= 0);                                                                              \
        if (at >= 0) {                                                                               \
            CHECK(strcmp(report.items[at].type_name, (type)) == 0);                                  \
            if ((refs) >= 0)                                                                         \
                CHECK_EQ_INT(report.items[at].refcount, (refs));                                     \
        } else {                                                                                     \
            fprintf(stderr, "  %s %p is not reported\n", (type), (void *)(handle));                  \
        }                                                                                            \
    } while (0)
    EXPECT_REPORTED(env.context, "cl_context", -1);
    EXPECT_REPORTED(env.queue, "cl_command_queue", -1);
    EXPECT_REPORTED(early, "cl_mem", -1);
    EXPECT_REPORTED(sub, "cl_mem", -1);
    EXPECT_REPORTED(image, "cl_mem", -1);
    EXPECT_REPORTED(sampler, "cl_sampler", -1);
    EXPECT_REPORTED(program, "cl_program", -1); /* released by the app, kept by the kernel */
    EXPECT_REPORTED(kernel, "cl_kernel", -1);
    EXPECT_REPORTED(user, "cl_event", 1);
    EXPECT_REPORTED(task, "cl_event", -1);
    EXPECT_REPORTED(retained_twice, "cl_event", -1);
    if (sub_device)
        EXPECT_REPORTED(sub_device, "cl_device_id", -1);
    if (svm)
        EXPECT_REPORTED(svm, "cl_svm_pointer", 1);
    if (command_buffer)
        EXPECT_REPORTED(command_buffer, "cl_command_buffer_khr", -1);
    /* Newest first: the command buffer is the newest object. */
    if (command_buffer)
        CHECK(ct_report_find(&report, command_buffer) == 0);
    CHECK(ct_report_find(&report, env.context) == (long)report.count - 1);
    CHECK(ct_report_find(&report, task) < ct_report_find(&report, user));
    CHECK(ct_report_find(&report, kernel) < ct_report_find(&report, program));

    /* NULL platform: all of them, the same way. */
    ct_collect(ext.report, NULL, &again);
    CHECK(same_report(&report, &again));

    /* The Altera names behave the same. */
    ct_collect(ext.report_altera, env.platform, &again);
    CHECK(same_report(&report, &again));

    /* NULL report_fn: nothing happens. */
    ext.report(env.platform, NULL, NULL);
    ext.report(NULL, NULL, &again);
    ext.report_altera(env.platform, NULL, NULL);

    /* Track again, with both names, any number of times: no change. */
    ext.track(env.platform);
    ext.track(env.platform);
    ext.track_altera(env.platform);
    ct_collect(ext.report, env.platform, &again);
    CHECK(same_report(&report, &again));

    /* The entry points from clGetExtensionFunctionAddress work too. */
    clReportLiveObjectsIntelFPGA_fn plain_report =
        (clReportLiveObjectsIntelFPGA_fn)clGetExtensionFunctionAddress("clReportLiveObjectsIntelFPGA");
    if (plain_report) {
        ct_collect(plain_report, env.platform, &again);
        CHECK(same_report(&report, &again));
    }

    /* Release everything; the report follows. */
    if (command_buffer)
        CHECK_EQ_INT(release_cb(command_buffer), CL_SUCCESS);
    if (svm)
        clSVMFree(env.context, svm);
    if (sub_device)
        CHECK_EQ_INT(clReleaseDevice(sub_device), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(retained_twice), CL_SUCCESS);
    ct_collect(ext.report, env.platform, &again);
    at = ct_report_find(&again, retained_twice);
    CHECK(at >= 0);
    if (at >= 0)
        CHECK_EQ_INT(again.items[at].refcount, 1);
    CHECK_EQ_INT(clSetUserEventStatus(retained_twice, CL_COMPLETE), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(retained_twice), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(task), CL_SUCCESS);
    CHECK_EQ_INT(clSetUserEventStatus(user, CL_COMPLETE), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(user), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseSampler(sampler), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(image), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(image), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(sub), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(early), CL_SUCCESS);
    ct_collect(ext.report, env.platform, &again);
    CHECK_EQ_INT(again.count, 2);
    CHECK(ct_report_find(&again, env.queue) == 0);
    CHECK(ct_report_find(&again, env.context) == 1);
    ct_teardown(&env);
    ct_collect(ext.report, env.platform, &again);
    CHECK_EQ_INT(again.count, 0);

    /* A context with no device and no CL_CONTEXT_PLATFORM (pocl returns one
     * with CL_DEVICE_NOT_FOUND for a type it lacks) is its platform's all
     * the same, and so is what is made in it. */
    cl_context deviceless = clCreateContextFromType(NULL, CL_DEVICE_TYPE_ACCELERATOR, NULL, NULL, &err);
    CHECK(deviceless != NULL); /* pocl 3.1 has no accelerator */
    if (deviceless) {
        cl_event in_deviceless = clCreateUserEvent(deviceless, &err);
        ct_collect(ext.report, env.platform, &again);
        CHECK(ct_report_find(&again, deviceless) >= 0);
        if (in_deviceless)
            CHECK(ct_report_find(&again, in_deviceless) == 0);
        if (in_deviceless) {
            CHECK_EQ_INT(clSetUserEventStatus(in_deviceless, CL_COMPLETE), CL_SUCCESS);
            CHECK_EQ_INT(clReleaseEvent(in_deviceless), CL_SUCCESS);
        }
        CHECK_EQ_INT(clReleaseContext(deviceless), CL_SUCCESS);
    }
    ct_collect(ext.report, env.platform, &again);
    CHECK_EQ_INT(again.count, 0);
    ext.report(env.platform, crash_if_called, NULL);

    ct_report_free(&report);
    ct_report_free(&again);
    ct_check_model(0);
    return check_summary("cl_extension");
}
