/*
 * The extension's report when the driver cannot say a reference count
 * (refcount_query_fails_layer.c sits between livetrack and pocl): a live
 * object is reported with the count livetrack knows, and at least 1 for
 * one the program released but a child keeps alive (a report of 0 would
 * say it is gone), as for types the driver cannot be asked about. Two
 * sub-buffers hold the parent, so pocl itself would say 2: a report of 1
 * shows the query failed on livetrack's path (the layers are in order).
 */
#include "cl_test_util.h"

int main(void)
{
    ct_env env;
    ct_get_platform(&env);
    cl_int err = CL_SUCCESS;
    env.context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CT_NEED(env.context, err);
    cl_mem parent = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 256, NULL, &err);
    CT_NEED(parent, err);
    cl_buffer_region region = {0, 128};
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CT_NEED(sub, err);
    cl_buffer_region second_region = {128, 128};
    cl_mem second = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &second_region, &err);
    CT_NEED(second, err);

    /* The layer below is there: the program's own query fails too. */
    cl_uint count = 0;
    CHECK_EQ_INT(clGetMemObjectInfo(sub, CL_MEM_REFERENCE_COUNT, sizeof count, &count, NULL), CL_OUT_OF_RESOURCES);
    size_t size = 0;
    CHECK_EQ_INT(clGetMemObjectInfo(parent, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS);
    CHECK_EQ_INT(size, 256);

    /* Released by the program, kept alive by the sub-buffer. */
    CHECK_EQ_INT(clReleaseMemObject(parent), CL_SUCCESS);

    ct_ext ext;
    ct_need_ext(env.platform, &ext);
    ct_report report = {0};
    ct_collect(ext.report, env.platform, &report);
    long at_sub = ct_report_find(&report, sub), at_parent = ct_report_find(&report, parent);
    CHECK(at_sub >= 0 && at_parent >= 0);
    if (at_sub >= 0)
        CHECK_EQ_INT(report.items[at_sub].refcount, 1);
    if (at_parent >= 0) {
        if (report.items[at_parent].refcount != 1)
            fprintf(stderr, "the kept-alive parent was reported with refcount %u\n",
                    report.items[at_parent].refcount);
        CHECK_EQ_INT(report.items[at_parent].refcount, 1);
    }
    ct_report_free(&report);

    CHECK_EQ_INT(clReleaseMemObject(sub), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseMemObject(second), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseContext(env.context), CL_SUCCESS);
    return check_summary("cl_refcount_query_fails");
}
