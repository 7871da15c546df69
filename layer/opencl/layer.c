/*
 * The ICD layer's entry points: the loader asks clGetLayerInfo what we are
 * and gives clInitLayer the table to forward to; we answer with our own
 * table, a copy of theirs with our wrappers put in (entry_points.c: one
 * per entry, each checking its object arguments first).
 */
#include <CL/cl_layer.h>
#include <string.h>

#include "cl_layer_internal.h"

#define LAYER_NAME "livetrack: live OpenCL object tracking (cl_altera_live_object_tracking)"

const struct _cl_icd_dispatch *ltcl_next;
static struct _cl_icd_dispatch layer_table;

const struct _cl_icd_dispatch *ltcl_layer_table(void) { return &layer_table; }

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
    const void *value;
    size_t size;
    cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    switch (param_name) {
    case CL_LAYER_API_VERSION:
        value = &version;
        size = sizeof version;
        break;
    case CL_LAYER_NAME:
        value = LAYER_NAME;
        size = sizeof LAYER_NAME;
        break;
    default:
        return CL_INVALID_VALUE;
    }
    return ltcl_answer(value, size, param_value_size, param_value, param_value_size_ret);
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clInitLayer(cl_uint num_entries, const struct _cl_icd_dispatch *target_dispatch, cl_uint *num_entries_ret,
            const struct _cl_icd_dispatch **layer_dispatch_ret)
{
    const cl_uint our_entries = sizeof layer_table / sizeof(void *);
    if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret)
        return CL_INVALID_VALUE;
    /* A loader with a shorter table than ours cannot forward the entries
     * it lacks; refuse rather than call through garbage. */
    if (num_entries < our_entries)
        return CL_INVALID_VALUE;
    ltcl_next = target_dispatch;
    memcpy(&layer_table, target_dispatch, sizeof layer_table);
    ltcl_declare_types();
    ltcl_install_wrappers(&layer_table);
    *num_entries_ret = our_entries;
    *layer_dispatch_ret = &layer_table;
    return CL_SUCCESS;
}
