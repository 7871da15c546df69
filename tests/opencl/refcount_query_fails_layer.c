/*
 * A test layer (OPENCL_LAYERS, after livetrack's) whose driver cannot say
 * a buffer's reference count: clGetMemObjectInfo(CL_MEM_REFERENCE_COUNT)
 * fails with CL_OUT_OF_RESOURCES, as a driver short of memory may. Every
 * other call goes to the next layer or the driver unchanged.
 */
#include <CL/cl_layer.h>

#include "small_layer.h"

#define LAYER_NAME "livetrack test: a driver that cannot count a buffer's references"

static const struct _cl_icd_dispatch *next;
static struct _cl_icd_dispatch table;

static cl_int CL_API_CALL failing_mem_info(cl_mem memory, cl_mem_info name, size_t size, void *value,
                                           size_t *size_ret)
{
    if (name == CL_MEM_REFERENCE_COUNT)
        return CL_OUT_OF_RESOURCES;
    return next->clGetMemObjectInfo(memory, name, size, value, size_ret);
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
    return lt_layer_info(LAYER_NAME, param_name, param_value_size, param_value, param_value_size_ret);
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clInitLayer(cl_uint num_entries, const struct _cl_icd_dispatch *target_dispatch, cl_uint *num_entries_ret,
            const struct _cl_icd_dispatch **layer_dispatch_ret)
{
    cl_int status = lt_layer_start(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret, &next, &table);
    if (status != CL_SUCCESS)
        return status;
    table.clGetMemObjectInfo = failing_mem_info;
    return CL_SUCCESS;
}
