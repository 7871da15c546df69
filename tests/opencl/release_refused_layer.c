/*
 * A test layer (OPENCL_LAYERS, after livetrack's) whose driver refuses the
 * last release of each buffer and context once, with
 * CL_OUT_OF_HOST_MEMORY, as a driver short of memory may: the object
 * stays, with its one reference. Every other call, and each object's
 * next last release, goes to the next layer or the driver unchanged.
 */
#include <CL/cl_layer.h>
#include <pthread.h>

#include "small_layer.h"

#define LAYER_NAME "livetrack test: a driver that refuses each object's last release once"

static const struct _cl_icd_dispatch *next;
static struct _cl_icd_dispatch table;

/* The objects whose last release was refused already. */
#define MAX_REFUSED 64
static const void *refused[MAX_REFUSED];
static unsigned refused_count;
static pthread_mutex_t refused_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether to refuse this last release: the first time only. */
static int refuse_once(const void *object)
{
    pthread_mutex_lock(&refused_lock);
    int seen = 0;
    for (unsigned i = 0; i < refused_count && !seen; i++)
        seen = refused[i] == object;
    int refuse = !seen && refused_count < MAX_REFUSED;
    if (refuse)
        refused[refused_count++] = object;
    pthread_mutex_unlock(&refused_lock);
    return refuse;
}

static cl_int CL_API_CALL release_buffer(cl_mem memory)
{
    cl_uint count = 0;
    if (next->clGetMemObjectInfo(memory, CL_MEM_REFERENCE_COUNT, sizeof count, &count, NULL) == CL_SUCCESS &&
        count == 1 && refuse_once(memory))
        return CL_OUT_OF_HOST_MEMORY;
    return next->clReleaseMemObject(memory);
}

static cl_int CL_API_CALL release_context(cl_context context)
{
    cl_uint count = 0;
    if (next->clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof count, &count, NULL) == CL_SUCCESS &&
        count == 1 && refuse_once(context))
        return CL_OUT_OF_HOST_MEMORY;
    return next->clReleaseContext(context);
}

static void install(struct _cl_icd_dispatch *layer_table)
{
    layer_table->clReleaseMemObject = release_buffer;
    layer_table->clReleaseContext = release_context;
}

LT_SMALL_LAYER(LAYER_NAME, next, table, install)
