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

static void install(struct _cl_icd_dispatch *layer_table) { layer_table->clGetMemObjectInfo = failing_mem_info; }

LT_SMALL_LAYER(LAYER_NAME, next, table, install)
