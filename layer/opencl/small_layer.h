/*
 * The two entry points every small layer has: clGetLayerInfo's answer
 * (its API version and name) and the start of clInitLayer (a copy of the
 * next table, to put its own functions in), and LT_SMALL_LAYER, which
 * defines both. Header only, for the layers
 * built beside livetrack's (bench/'s pass-through layer, the test
 * layers), which link none of it.
 */
#ifndef LIVETRACK_SMALL_LAYER_H
#define LIVETRACK_SMALL_LAYER_H

#include <CL/cl_layer.h>
#include <string.h>

static inline cl_int lt_layer_info(const char *name, cl_layer_info param_name, size_t param_value_size,
                                   void *param_value, size_t *param_value_size_ret)
{
    cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    const void *value = param_name == CL_LAYER_API_VERSION ? (const void *)&version : (const void *)name;
    size_t size = param_name == CL_LAYER_API_VERSION ? sizeof version : strlen(name) + 1;
    if (param_name != CL_LAYER_API_VERSION && param_name != CL_LAYER_NAME)
        return CL_INVALID_VALUE;
    if (param_value && param_value_size < size)
        return CL_INVALID_VALUE;
    if (param_value)
        memcpy(param_value, value, size);
    if (param_value_size_ret)
        *param_value_size_ret = size;
    return CL_SUCCESS;
}

/* clInitLayer's common part: checks the loader's arguments, keeps its
 * table in *next and copies it into *table, which the loader gets; the
 * caller then puts its own functions in *table. */
static inline cl_int lt_layer_start(cl_uint num_entries, const struct _cl_icd_dispatch *target_dispatch,
                                    cl_uint *num_entries_ret, const struct _cl_icd_dispatch **layer_dispatch_ret,
                                    const struct _cl_icd_dispatch **next, struct _cl_icd_dispatch *table)
{
    const cl_uint entries = sizeof *table / sizeof(void *);
    if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret || num_entries < entries)
        return CL_INVALID_VALUE;
    *next = target_dispatch;
    memcpy(table, target_dispatch, sizeof *table);
    *num_entries_ret = entries;
    *layer_dispatch_ret = table;
    return CL_SUCCESS;
}

/* Both entry points of a small layer called `layer_name`, whose copy of
 * the next table is `table` (the next one kept in `next`): `install`
 * (a function taking the table) then puts the layer's own functions in. */
#define LT_SMALL_LAYER(layer_name, next, table, install)                                                            \
    __attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(                          \
        cl_layer_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret)         \
    {                                                                                                              \
        return lt_layer_info(layer_name, param_name, param_value_size, param_value, param_value_size_ret);         \
    }                                                                                                              \
    __attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL clInitLayer(                             \
        cl_uint num_entries, const struct _cl_icd_dispatch *target_dispatch, cl_uint *num_entries_ret,              \
        const struct _cl_icd_dispatch **layer_dispatch_ret)                                                         \
    {                                                                                                              \
        cl_int status_ =                                                                                           \
            lt_layer_start(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret, &(next), &(table));  \
        if (status_ == CL_SUCCESS)                                                                                 \
            install(&(table));                                                                                     \
        return status_;                                                                                            \
    }

#endif
