/*
 * A last release the driver refuses after livetrack counted it
 * (ltcl_undo_release in layer/opencl/tracking.c). release_refused_layer.c,
 * a test layer between livetrack's and pocl, refuses the last release of
 * each buffer and context once with CL_OUT_OF_HOST_MEMORY, as a driver
 * short of memory may. The program then still has the object, so
 * livetrack must have it too:
 *  1. the refused release returns the driver's code, and no misuse is
 *     reported;
 *  2. the object is live in the registry again as it was (creation
 *     number, call site, size, one reference), so the calls that use it
 *     pass livetrack's checks and reach the driver;
 *  3. the program's next release ends it;
 *  4. the same for a context, which can still make buffers;
 *  5. the extension's report for the platform lists the context put back
 *     and a buffer made from it since (the registry keeps the owner, the
 *     platform, in its record of the release);
 *  6. the timeline (LIVETRACK_CSV, set by ctest) has a `restore` row for
 *     each, naming the refused call.
 * Before, the object dropped out of the registry: every later call on it
 * was refused as on a released handle, and the exit report missed it.
 */
#include "cl_test_util.h"

/* Whether the timeline has a `restore` row of `call` for `type`. Each row
 * is one write(), so the file is whole up to the last event. */
static int restored_in_timeline(const char *call, const char *type)
{
    const char *path = getenv("LIVETRACK_CSV");
    FILE *file = path ? fopen(path, "r") : NULL;
    if (!file)
        return 0;
    char line[1024], wanted[128];
    snprintf(wanted, sizeof wanted, ",restore,%s,OpenCL,%s,", call, type);
    int found = 0;
    while (!found && fgets(line, sizeof line, file))
        found = strstr(line, wanted) != NULL;
    fclose(file);
    return found;
}

/* Released once (refused) and again: the registry follows both. */
static void check_refused_then_released(cl_int (*release)(void *), void *object, const char *what)
{
    livetrack_object before, after;
    CHECK(ct_live(object, &before));
    uint64_t misuse_before = 0;
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    misuse_before = stats.misuse;

    CHECK_EQ_INT(release(object), CL_OUT_OF_HOST_MEMORY);
    int live = ct_live(object, &after);
    if (!live)
        fprintf(stderr, "the %s is gone from the registry after its refused release\n", what);
    CHECK(live);
    if (live) {
        CHECK_EQ_INT(after.seq, before.seq);
        CHECK_EQ_INT(after.stack, before.stack);
        CHECK_EQ_INT(after.bytes, before.bytes);
        CHECK_EQ_INT(after.type, before.type);
        CHECK_EQ_INT(after.refs, 1);
        CHECK(after.owner == before.owner);
    }
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.misuse, misuse_before);
}

static cl_int release_buffer(void *buffer) { return clReleaseMemObject((cl_mem)buffer); }
static cl_int release_context(void *context) { return clReleaseContext((cl_context)context); }

int main(void)
{
    ct_env env;
    ct_get_platform(&env);
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CT_NEED(context, err);
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 256, NULL, &err);
    CT_NEED(buffer, err);

    /* 1-3: the buffer. */
    check_refused_then_released(release_buffer, buffer, "buffer");
    size_t size = 0;
    CHECK_EQ_INT(clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS);
    CHECK_EQ_INT(size, 256);
    CHECK_EQ_INT(clReleaseMemObject(buffer), CL_SUCCESS);
    CHECK(!ct_live(buffer, NULL));

    /* 4: the context. */
    check_refused_then_released(release_context, context, "context");
    cl_mem later = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK_EQ_INT(err, CL_SUCCESS);

    /* 5: both in the platform's report. */
    ct_ext ext;
    ct_need_ext(env.platform, &ext);
    ct_report report = {0};
    ct_collect(ext.report, env.platform, &report);
    CHECK(ct_report_find(&report, context) >= 0);
    CHECK(ct_report_find(&report, later) >= 0);
    ct_report_free(&report);

    if (later) {
        CHECK_EQ_INT(clReleaseMemObject(later), CL_OUT_OF_HOST_MEMORY); /* its own last release, refused once */
        CHECK_EQ_INT(clReleaseMemObject(later), CL_SUCCESS);
    }
    CHECK_EQ_INT(clReleaseContext(context), CL_SUCCESS);
    CHECK(!ct_live(context, NULL));

    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.misuse, 0);
    CHECK_EQ_INT(ct_live_count(), 0);

    /* 6 */
    CHECK(getenv("LIVETRACK_CSV") != NULL);
    CHECK(restored_in_timeline("clReleaseMemObject", "cl_mem"));
    CHECK(restored_in_timeline("clReleaseContext", "cl_context"));
    return check_summary("cl_release_refused");
}
