/* The leaky scenario (cuda_leak_scenario.h). Keep each PLANT on one line:
 * the line recorded is the line of the creating call. */
#include "cuda_leak_scenario.h"

#include <cuda.h>
#include <string.h>

static void plant(cuda_leaks *out, const char *type, uint64_t handle, uint64_t bytes, unsigned line, CUresult result)
{
    if (result != CUDA_SUCCESS || out->count == CUDA_LEAKS_MAX) {
        out->failed = 1;
        return;
    }
    out->leaks[out->count++] = (cuda_leak){type, handle, bytes, line};
}

#define PLANT(type, handle, bytes, call) plant(out, type, (uint64_t)(uintptr_t)(handle), bytes, __LINE__, call)
#define CLEAN(call)                      \
    do {                                 \
        if ((call) != CUDA_SUCCESS)      \
            out->failed = 1;             \
    } while (0)

void cuda_plant_leaks(cuda_leaks *out)
{
    memset(out, 0, sizeof *out);
    CUcontext context = NULL;
    CUstream stream = NULL;
    CUevent event = NULL;
    CUgraph graph = NULL;
    CUdeviceptr device = 0, managed = 0, async = 0, freed = 0;
    void *pinned = NULL;
    CUmemGenericAllocationHandle physical = 0, multicast = 0;
    CUtexObject texture = 0;
    CUarray array = NULL;

    PLANT("CUcontext", context, 0, cuCtxCreate(&context, NULL, 0, 0));
    PLANT("CUstream", stream, 0, cuStreamCreate(&stream, 0));
    PLANT("CUevent", event, 0, cuEventCreate(&event, 0));
    PLANT("CUdeviceptr", device, 4096, cuMemAlloc(&device, 4096));
    PLANT("host_pinned", pinned, 1000, cuMemAllocHost(&pinned, 1000));
    PLANT("managed", managed, 2048, cuMemAllocManaged(&managed, 2048, CU_MEM_ATTACH_GLOBAL));
    PLANT("device_async", async, 512, cuMemAllocAsync(&async, 512, stream));
    PLANT("CUgraph", graph, 0, cuGraphCreate(&graph, 0));

    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    PLANT("CUmemGenericAllocationHandle", physical, 2u << 20, cuMemCreate(&physical, 2u << 20, &prop, 0));
    CUmulticastObjectProp team = {.numDevices = 2, .size = 2u << 20};
    PLANT("CUmemGenericAllocationHandle", multicast, 0, cuMulticastCreate(&multicast, &team));

    CUDA_ARRAY_DESCRIPTOR flat = {.Width = 16, .Height = 16, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
    CLEAN(cuArrayCreate(&array, &flat));
    CUDA_RESOURCE_DESC resource = {.resType = CU_RESOURCE_TYPE_ARRAY, .res.array.hArray = array};
    CUDA_TEXTURE_DESC texture_desc = {0};
    PLANT("CUtexObject", texture, 0, cuTexObjectCreate(&texture, &resource, &texture_desc, NULL));

    /* Made and freed as they should be: not leaks. */
    CLEAN(cuArrayDestroy(array));
    CLEAN(cuMemAlloc(&freed, 64));
    CLEAN(cuMemFree(freed));
    CUstream other = NULL;
    CLEAN(cuStreamCreate(&other, 0));
    CLEAN(cuStreamDestroy(other));
}
