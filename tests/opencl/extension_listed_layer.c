/*
 * A test layer (OPENCL_LAYERS, after livetrack's) whose platform already
 * lists cl_intelfpga_live_object_tracking, as the Intel FPGA runtime does
 * (and a second tracking layer below livetrack), and also
 * cl_altera_live_object_tracking_foo, a different extension whose name
 * only starts with one of livetrack's. It adds both to the end of the
 * driver's CL_PLATFORM_EXTENSIONS and CL_PLATFORM_EXTENSIONS_WITH_VERSION;
 * the versioned entries have a version of their own (1.2.3), so the test
 * sees whose entry is kept. Every other call goes to the next layer or the
 * driver unchanged.
 */
#include <CL/cl_layer.h>
#include <stdlib.h>

#include "small_layer.h"

#define LAYER_NAME "livetrack test: a platform that lists the live-object-tracking extension itself"

static const struct _cl_icd_dispatch *next;
static struct _cl_icd_dispatch table;

static const char *const listed_names[] = {"cl_intelfpga_live_object_tracking", "cl_altera_live_object_tracking_foo"};
#define LISTED_COUNT (sizeof listed_names / sizeof listed_names[0])

/* What a driver answers for a value of `size` bytes. */
static cl_int answer(const void *value, size_t size, size_t value_size, void *out, size_t *size_ret)
{
    if (out && value_size < size)
        return CL_INVALID_VALUE;
    if (out)
        memcpy(out, value, size);
    if (size_ret)
        *size_ret = size;
    return CL_SUCCESS;
}

static cl_int extensions_string(cl_platform_id platform, size_t value_size, void *out, size_t *size_ret)
{
    size_t driver_size = 0;
    cl_int result = next->clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, NULL, &driver_size);
    if (result != CL_SUCCESS)
        return result;
    size_t size = driver_size + 1;
    for (size_t i = 0; i < LISTED_COUNT; i++)
        size += strlen(listed_names[i]) + 1;
    char *text = calloc(1, size);
    if (!text)
        return CL_OUT_OF_HOST_MEMORY;
    result = next->clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, driver_size, text, NULL);
    if (result == CL_SUCCESS) {
        for (size_t i = 0; i < LISTED_COUNT; i++) {
            if (text[0] && text[strlen(text) - 1] != ' ')
                strcat(text, " ");
            strcat(text, listed_names[i]);
        }
        result = answer(text, strlen(text) + 1, value_size, out, size_ret);
    }
    free(text);
    return result;
}

static cl_int extensions_with_version(cl_platform_id platform, size_t value_size, void *out, size_t *size_ret)
{
    size_t driver_size = 0;
    cl_int result = next->clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, 0, NULL, &driver_size);
    if (result != CL_SUCCESS)
        return result;
    size_t size = driver_size + LISTED_COUNT * sizeof(cl_name_version);
    cl_name_version *list = calloc(1, size);
    if (!list)
        return CL_OUT_OF_HOST_MEMORY;
    result = next->clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, driver_size, list, NULL);
    if (result == CL_SUCCESS) {
        cl_name_version *added = list + driver_size / sizeof(cl_name_version);
        for (size_t i = 0; i < LISTED_COUNT; i++) {
            added[i].version = CL_MAKE_VERSION(1, 2, 3);
            strncpy(added[i].name, listed_names[i], CL_NAME_VERSION_MAX_NAME_SIZE - 1);
        }
        result = answer(list, size, value_size, out, size_ret);
    }
    free(list);
    return result;
}

static cl_int CL_API_CALL platform_info(cl_platform_id platform, cl_platform_info name, size_t value_size,
                                        void *value, size_t *size_ret)
{
    if (name == CL_PLATFORM_EXTENSIONS)
        return extensions_string(platform, value_size, value, size_ret);
    if (name == CL_PLATFORM_EXTENSIONS_WITH_VERSION)
        return extensions_with_version(platform, value_size, value, size_ret);
    return next->clGetPlatformInfo(platform, name, value_size, value, size_ret);
}

static void install(struct _cl_icd_dispatch *layer_table) { layer_table->clGetPlatformInfo = platform_info; }

LT_SMALL_LAYER(LAYER_NAME, next, table, install)
