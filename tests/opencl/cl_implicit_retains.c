/*
 * Implicit retains: a child keeps its parent alive after the application
 * released the parent. The parent stays live with refs 0 and holders 1
 * (one per live child), a Report lists it after the child (it is older),
 * and releasing the last child removes both. An event released before
 * its callbacks run is not held (the driver decides how long it lives),
 * but the callbacks may still use it, and retain it.
 */
#include <stdatomic.h>
#include <time.h>

#include "cl_test_util.h"

static const char *kernel_source = "__kernel void k(__global int *a) { a[0] = 1; }\n";

typedef struct callback_log {
    atomic_int runs;
    atomic_int info_failures;
    cl_event kept;
} callback_log;

static uint64_t misuse_count(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.misuse;
}

/* Reads the event the driver passes, which the program has released. */
static void CL_CALLBACK use_event(cl_event event, cl_int status, void *data)
{
    callback_log *log = data;
    cl_int now;
    cl_command_type type;
    (void)status;
    if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof now, &now, NULL) != CL_SUCCESS ||
        clGetEventInfo(event, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL) != CL_SUCCESS)
        atomic_fetch_add(&log->info_failures, 1);
    atomic_fetch_add(&log->runs, 1);
}

/* ... and takes a reference to it, which the program releases later. */
static void CL_CALLBACK keep_event(cl_event event, cl_int status, void *data)
{
    callback_log *log = data;
    if (clRetainEvent(event) == CL_SUCCESS)
        log->kept = event;
    use_event(event, status, data);
}

/* Live with these app references and children. */
#define EXPECT_HELD(handle, type, refs_expected, holders_expected)         \
    do {                                                                   \
        livetrack_object held_;                                            \
        int found_ = ct_live((handle), &held_);                            \
        CHECK(found_);                                                     \
        if (found_) {                                                      \
            CHECK(strcmp(held_.type_name, (type)) == 0);                   \
            CHECK_EQ_INT(held_.refs, (refs_expected));                     \
            CHECK_EQ_INT(held_.holders, (holders_expected));               \
        }                                                                  \
    } while (0)

/* Both are reported, `first` before `second`. */
static void expect_report_order(const ct_ext *ext, cl_platform_id platform, const void *first, const void *second,
                                const char *what)
{
    ct_report report = {0};
    ct_collect(ext->report, platform, &report);
    long a = ct_report_find(&report, first), b = ct_report_find(&report, second);
    CHECK(a >= 0);
    CHECK(b >= 0);
    CHECK(a < b);
    if (a < 0 || b < 0 || a >= b)
        fprintf(stderr, "  %s: expected %p (at %ld) before %p (at %ld)\n", what, first, a, second, b);
    /* The kept-alive object is reported with its type name. */
    if (b >= 0)
        CHECK(report.items[b].type_name[0] != '\0');
    ct_report_free(&report);
}

int main(void)
{
    ct_env env;
    ct_setup(&env);
    ct_ext ext;
    ct_need_ext(env.platform, &ext);
    ext.track(env.platform);
    cl_int err = CL_SUCCESS;
    uint64_t live_at_start = ct_live_count();

    /* ---- program released before its kernel ---- */
    cl_program program = ct_build(&env, kernel_source);
    cl_kernel kernel = clCreateKernel(program, "k", &err);
    CT_NEED(kernel, err);
    EXPECT_HELD(program, "cl_program", 1, 1);
    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    EXPECT_HELD(program, "cl_program", 0, 1);
    EXPECT_HELD(kernel, "cl_kernel", 1, 0);
    expect_report_order(&ext, env.platform, kernel, program, "kernel before its released program");
    /* The driver agrees that the program still exists. */
    cl_program from_kernel = NULL;
    CHECK_EQ_INT(clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof from_kernel, &from_kernel, NULL), CL_SUCCESS);
    CHECK(from_kernel == program);
    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    CT_EXPECT_GONE(kernel);
    CT_EXPECT_GONE(program);
    CHECK_EQ_INT(ct_live_count(), live_at_start);

    /* Two kernels: holders 2, the program goes with the last one. */
    program = ct_build(&env, kernel_source);
    cl_kernel k1 = clCreateKernel(program, "k", &err);
    CT_NEED(k1, err);
    cl_kernel k2 = clCreateKernel(program, "k", &err);
    CT_NEED(k2, err);
    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    EXPECT_HELD(program, "cl_program", 0, 2);
    CHECK_EQ_INT(clReleaseKernel(k2), CL_SUCCESS);
    EXPECT_HELD(program, "cl_program", 0, 1);
    CHECK_EQ_INT(clReleaseKernel(k1), CL_SUCCESS);
    CT_EXPECT_GONE(program);

    /* ---- parent buffer released before its sub-buffer ---- */
    cl_mem parent = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 2048, NULL, &err);
    CT_NEED(parent, err);
    cl_buffer_region region = {0, 512};
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CT_NEED(sub, err);
    EXPECT_HELD(parent, "cl_mem", 1, 1);
    CHECK_EQ_INT(clReleaseMemObject(parent), CL_SUCCESS);
    EXPECT_HELD(parent, "cl_mem", 0, 1);
    EXPECT_HELD(sub, "cl_mem", 1, 0);
    expect_report_order(&ext, env.platform, sub, parent, "sub-buffer before its released parent");
    cl_mem associated = NULL;
    CHECK_EQ_INT(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof associated, &associated, NULL),
                 CL_SUCCESS);
    CHECK(associated == parent);
    /* The sub-buffer still works. */
    cl_int pattern = 9, back = 0;
    CHECK_EQ_INT(clEnqueueFillBuffer(env.queue, sub, &pattern, sizeof pattern, 0, 512, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueReadBuffer(env.queue, sub, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(back, 9);
    CHECK_EQ_INT(clReleaseMemObject(sub), CL_SUCCESS);
    CT_EXPECT_GONE(sub);
    CT_EXPECT_GONE(parent);
    CHECK_EQ_INT(ct_live_count(), live_at_start);

    /* ---- context released before its queue and its buffers ---- */
    cl_context context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CT_NEED(context, err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, env.device, NULL, &err);
    CT_NEED(queue, err);
    cl_mem b1 = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
    CT_NEED(b1, err);
    cl_mem b2 = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
    CT_NEED(b2, err);
    EXPECT_HELD(context, "cl_context", 1, 3);
    CHECK_EQ_INT(clReleaseContext(context), CL_SUCCESS);
    EXPECT_HELD(context, "cl_context", 0, 3);
    expect_report_order(&ext, env.platform, queue, context, "queue before its released context");
    expect_report_order(&ext, env.platform, b2, context, "buffer before its released context");
    /* The queue and buffers still work. */
    CHECK_EQ_INT(clEnqueueFillBuffer(queue, b1, &pattern, sizeof pattern, 0, 64, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueCopyBuffer(queue, b1, b2, 0, 0, 64, 0, NULL, NULL), CL_SUCCESS);
    back = 0;
    CHECK_EQ_INT(clEnqueueReadBuffer(queue, b2, CL_TRUE, 60, sizeof back, &back, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(back, 9);
    CHECK_EQ_INT(clReleaseCommandQueue(queue), CL_SUCCESS);
    EXPECT_HELD(context, "cl_context", 0, 2);
    CHECK_EQ_INT(clReleaseMemObject(b1), CL_SUCCESS);
    EXPECT_HELD(context, "cl_context", 0, 1);
    CHECK_EQ_INT(clReleaseMemObject(b2), CL_SUCCESS);
    CT_EXPECT_GONE(context);
    CHECK_EQ_INT(ct_live_count(), live_at_start);

    /* ---- a chain: context <- buffer <- sub-buffer, released top-down ---- */
    context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CT_NEED(context, err);
    parent = clCreateBuffer(context, CL_MEM_READ_WRITE, 1024, NULL, &err);
    CT_NEED(parent, err);
    sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CT_NEED(sub, err);
    CHECK_EQ_INT(clReleaseContext(context), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(parent), CL_SUCCESS);
    CHECK(ct_live(context, NULL));
    EXPECT_HELD(parent, "cl_mem", 0, 1);
    CHECK_EQ_INT(clReleaseMemObject(sub), CL_SUCCESS);
    CT_EXPECT_GONE(sub);
    CT_EXPECT_GONE(parent);
    CT_EXPECT_GONE(context);

    /* ---- retaining a kept-alive object gives the app a reference again ---- */
    program = ct_build(&env, kernel_source);
    kernel = clCreateKernel(program, "k", &err);
    CT_NEED(kernel, err);
    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    EXPECT_HELD(program, "cl_program", 0, 1);
    CHECK_EQ_INT(clRetainProgram(program), CL_SUCCESS);
    EXPECT_HELD(program, "cl_program", 1, 1);
    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    EXPECT_HELD(program, "cl_program", 1, 0);
    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    CT_EXPECT_GONE(program);

    /* ---- a callback's event, released by the program before it runs ---- */
    /* Nothing keeps it in the registry (drivers differ in how long they
     * hold it), yet the callback may use it and take a reference to it. */
    uint64_t misuse_before = misuse_count();
    cl_event gate = clCreateUserEvent(env.context, &err);
    CT_NEED(gate, err);
    cl_event marker;
    CHECK_EQ_INT(clEnqueueMarkerWithWaitList(env.queue, 1, &gate, &marker), CL_SUCCESS);
    callback_log log = {.runs = 0, .info_failures = 0, .kept = NULL};
    CHECK_EQ_INT(clSetEventCallback(marker, CL_SUBMITTED, use_event, &log), CL_SUCCESS);
    CHECK_EQ_INT(clSetEventCallback(marker, CL_COMPLETE, keep_event, &log), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(marker), CL_SUCCESS);
    CT_EXPECT_GONE(marker);
    CHECK_EQ_INT(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    CHECK_EQ_INT(clFinish(env.queue), CL_SUCCESS);
    for (int i = 0; i < 10000 && atomic_load(&log.runs) < 2; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    CHECK_EQ_INT(atomic_load(&log.runs), 2);
    CHECK_EQ_INT(atomic_load(&log.info_failures), 0);
    /* the reference keep_event took is the program's: tracked again */
    CHECK(log.kept == marker);
    EXPECT_HELD(marker, "cl_event", 1, 0);
    CHECK_EQ_INT(clReleaseEvent(marker), CL_SUCCESS);
    CT_EXPECT_GONE(marker);
    CHECK_EQ_INT(misuse_count(), misuse_before);

    /* A released user event whose status was never set: pocl frees it with
     * its callbacks, which never run. A report must not touch it. */
    cl_event orphan = clCreateUserEvent(env.context, &err);
    CT_NEED(orphan, err);
    CHECK_EQ_INT(clSetEventCallback(orphan, CL_COMPLETE, use_event, &log), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseEvent(orphan), CL_SUCCESS);
    CT_EXPECT_GONE(orphan);
    ct_report report = {0};
    ct_collect(ext.report, env.platform, &report);
    CHECK(ct_report_find(&report, orphan) < 0);
    ct_report_free(&report);
    CHECK_EQ_INT(clReleaseEvent(gate), CL_SUCCESS);
    CHECK_EQ_INT(misuse_count(), misuse_before);

    CHECK_EQ_INT(ct_live_count(), live_at_start);
    ct_teardown(&env);
    ct_check_model(0);
    return check_summary("cl_implicit_retains");
}
