/*
 * clGetLayerInfo's answer for a small layer: its API version and name.
 * Header only, for the layers built beside livetrack's (bench/'s
 * pass-through layer, the test layers), which link none of it.
 */
#ifndef LIVETRACK_LAYER_INFO_H
#define LIVETRACK_LAYER_INFO_H

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

#endif
