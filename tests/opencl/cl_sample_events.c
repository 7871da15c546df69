/*
 * The extension specification's sample: 10 iterations of
 *   clEnqueueTask(..., &e1); clEnqueueReadBuffer(..., 1, &e1, &e2);
 * leak 20 events, and the Report lists exactly those 20 cl_event objects,
 * newest first, beside the other live objects.
 */
#include "cl_test_util.h"

static const char *kernel_source = "__kernel void task(__global int *p) { p[0] += 1; }\n";

enum { ITERATIONS = 10 };

typedef struct sampled_events {
    const ct_ext *ext;
    cl_platform_id platform;
    const cl_event *created;
    ct_report *report;
} sampled_events;

/* Collects a Report into sampled->report; returns how many of the created
 * events it lists with a count other than the driver's. */
static int events_off_the_driver_count(void *data, int say)
{
    sampled_events *sampled = data;
    ct_collect(sampled->ext->report, sampled->platform, sampled->report);
    int differences = 0;
    for (int i = 0; i < 2 * ITERATIONS; i++) {
        long at = ct_report_find(sampled->report, sampled->created[i]);
        if (at < 0)
            continue; /* the checks in main say that */
        cl_uint driver = 0;
        cl_int queried = clGetEventInfo(sampled->created[i], CL_EVENT_REFERENCE_COUNT, sizeof driver, &driver, NULL);
        if (queried != CL_SUCCESS) {
            differences++;
            if (say)
                fprintf(stderr, "  event %d (%p): the driver's count: error %d\n", i, (void *)sampled->created[i],
                        (int)queried);
        } else if (sampled->report->items[at].refcount != driver) {
            differences++;
            if (say)
                fprintf(stderr, "  event %d (%p): reported refcount %u, the driver says %u\n", i,
                        (void *)sampled->created[i], sampled->report->items[at].refcount, driver);
        }
    }
    return differences;
}

int main(void)
{
    ct_env env;
    ct_get_platform(&env);
    ct_ext ext;
    ct_need_ext(env.platform, &ext);
    /* Register the interest right after getting the platform. */
    ext.track(env.platform);

    cl_int err = CL_SUCCESS;
    env.context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CT_NEED(env.context, err);
    env.queue = clCreateCommandQueueWithProperties(env.context, env.device, NULL, &err);
    CT_NEED(env.queue, err);
    cl_mem buffer = clCreateBuffer(env.context, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, &err);
    CT_NEED(buffer, err);
    cl_int zero = 0;
    CT_OK(clEnqueueWriteBuffer(env.queue, buffer, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL));
    cl_program program = ct_build(&env, kernel_source);
    cl_kernel kernel = clCreateKernel(program, "task", &err);
    CT_NEED(kernel, err);
    CT_OK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));

    cl_event created[2 * ITERATIONS];
    cl_int results[ITERATIONS];
    for (int i = 0; i < ITERATIONS; i++) {
        cl_event leaked_event = NULL, another = NULL;
        CT_OK(clEnqueueTask(env.queue, kernel, 0, NULL, &leaked_event));
        CT_OK(clEnqueueReadBuffer(env.queue, buffer, CL_FALSE, 0, sizeof results[i], &results[i], 1, &leaked_event,
                                  &another));
        created[2 * i] = leaked_event;
        created[2 * i + 1] = another;
        /* The events are not released. */
    }
    /* Each event is reported with the driver's count, once pocl has let
     * go of the finished commands (after clFinish). */
    ct_report report = {0};
    sampled_events sampled = {&ext, env.platform, created, &report};
    CHECK_EQ_INT(ct_until_counts_agree(&env, events_off_the_driver_count, &sampled), 0);
    for (int i = 0; i < ITERATIONS; i++)
        CHECK_EQ_INT(results[i], i + 1);

    CHECK(!report.bad_type_name);
    CHECK_EQ_INT(ct_report_count_type(&report, "cl_event"), 2 * ITERATIONS);
    /* Besides the events: context, queue, buffer, program, kernel. */
    CHECK_EQ_INT(report.count, 2 * ITERATIONS + 5);
    CHECK_EQ_INT(ct_report_count_type(&report, "cl_context"), 1);
    CHECK_EQ_INT(ct_report_count_type(&report, "cl_command_queue"), 1);
    CHECK_EQ_INT(ct_report_count_type(&report, "cl_mem"), 1);
    CHECK_EQ_INT(ct_report_count_type(&report, "cl_program"), 1);
    CHECK_EQ_INT(ct_report_count_type(&report, "cl_kernel"), 1);

    /* Newest first: the events are the 20 newest objects, in reverse
     * creation order. */
    for (int i = 0; i < 2 * ITERATIONS && (size_t)i < report.count; i++) {
        const ct_entry *entry = &report.items[i];
        CHECK(entry->handle == (void *)created[2 * ITERATIONS - 1 - i]);
        CHECK(strcmp(entry->type_name, "cl_event") == 0);
    }
    if (report.count == 2 * ITERATIONS + 5) {
        CHECK(report.items[20].handle == (void *)kernel);
        CHECK(report.items[21].handle == (void *)program);
        CHECK(report.items[22].handle == (void *)buffer);
        CHECK(report.items[23].handle == (void *)env.queue);
        CHECK(report.items[24].handle == (void *)env.context);
    }
    /* Print it the way the sample does (shows in the test log). */
    for (size_t i = 0; i < report.count; i++)
        printf(" Live %s object: %p refcount %u\n", report.items[i].type_name, report.items[i].handle,
               report.items[i].refcount);

    /* Fix the leak: release the events; the report shrinks to 5. */
    for (int i = 0; i < 2 * ITERATIONS; i++)
        CHECK_EQ_INT(clReleaseEvent(created[i]), CL_SUCCESS);
    ct_collect(ext.report, env.platform, &report);
    CHECK_EQ_INT(report.count, 5);
    CHECK_EQ_INT(ct_report_count_type(&report, "cl_event"), 0);

    CHECK_EQ_INT(clReleaseKernel(kernel), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseProgram(program), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(buffer), CL_SUCCESS);
    ct_teardown(&env);
    ct_collect(ext.report, env.platform, &report);
    CHECK_EQ_INT(report.count, 0);
    ct_report_free(&report);
    ct_check_model(0);
    return check_summary("cl_sample_events");
}
