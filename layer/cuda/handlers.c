/*
 * What each tracked call means for the registry. Every handler reads the
 * call's arguments from CUPTI's struct for it (<symbol>_params, fields in
 * parameter order), which CUPTI passes to its callbacks and the
 * interposed wrappers fill from their arguments.
 *
 * `before` runs ahead of the driver (destroys, frees, releases: see
 * call.c for why); `after` runs only when the call succeeded, and reads
 * the handles the driver wrote through the out-parameters.
 */
#include <stddef.h>

#include "cuda_front_end.h"

#define PARAMS(symbol) const symbol##_params *p = raw_params
#define HANDLE(value) ((uint64_t)(uintptr_t)(value))
#define KEY(type, value) ltcu_key(type, HANDLE(value))

/* A call whose twin takes the same arguments (its _ptsz twin, or an older
 * ABI of the same name) uses the same handler. */
#define SAME_ARGUMENTS(twin, symbol) \
    _Static_assert(sizeof(twin##_params) == sizeof(symbol##_params), #twin " and " #symbol " differ")

/* ---- contexts ------------------------------------------------------------ */

static void context_created(ltcu_call *call, CUcontext *made)
{
    if (made)
        ltcu_record(call, LTCU_CONTEXT, HANDLE(*made), 0, 0);
}

static void after_cuCtxCreate_v2(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuCtxCreate_v2);
    context_created(call, p->pctx);
}
SAME_ARGUMENTS(cuCtxCreate, cuCtxCreate_v2);
#define after_cuCtxCreate after_cuCtxCreate_v2

static void after_cuCtxCreate_v3(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuCtxCreate_v3);
    context_created(call, p->pctx);
}

static void after_cuCtxCreate_v4(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuCtxCreate_v4);
    context_created(call, p->pctx);
}

static void before_cuCtxDestroy_v2(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuCtxDestroy_v2);
    if (!p->ctx)
        return;
    int device = ltcu_primary_device_of(p->ctx);
    if (device >= 0) {
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_CUDA, KEY(LTCU_CONTEXT, p->ctx),
                                   "%s(%p): this is the primary context of device %d, which "
                                   "cuDevicePrimaryCtxRelease gives back; it cannot be destroyed",
                                   call->name, (void *)p->ctx, device);
        return;
    }
    if (ltcu_forget(call, LTCU_CONTEXT, LTCU_TYPE_BIT(LTCU_CONTEXT), HANDLE(p->ctx)))
        ltcu_drop_context_objects(call, p->ctx, "destroyed");
}
SAME_ARGUMENTS(cuCtxDestroy, cuCtxDestroy_v2);
#define before_cuCtxDestroy before_cuCtxDestroy_v2

static void before_cuDevicePrimaryCtxRetain(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuDevicePrimaryCtxRetain);
    ltcu_primary_retain_begin(call, p->dev);
}

static void after_cuDevicePrimaryCtxRetain(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuDevicePrimaryCtxRetain);
    if (p->pctx)
        ltcu_primary_retained(call, p->dev, *p->pctx);
}

static void before_cuDevicePrimaryCtxRelease_v2(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuDevicePrimaryCtxRelease_v2);
    ltcu_primary_release_begin(call, p->dev);
}
SAME_ARGUMENTS(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2);
#define before_cuDevicePrimaryCtxRelease before_cuDevicePrimaryCtxRelease_v2

static void before_cuDevicePrimaryCtxReset_v2(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuDevicePrimaryCtxReset_v2);
    ltcu_primary_reset_begin(call, p->dev);
}
SAME_ARGUMENTS(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2);
#define before_cuDevicePrimaryCtxReset before_cuDevicePrimaryCtxReset_v2

/* ---- a handle out, a handle destroyed ------------------------------------- */

/* after_<symbol>: record *p->field as `type`. */
#define RECORD_OUT(symbol, field, type)                                          \
    static void after_##symbol(ltcu_call *call, const void *raw_params)          \
    {                                                                            \
        PARAMS(symbol);                                                          \
        if (p->field)                                                            \
            ltcu_record(call, type, HANDLE(*p->field), 0, 0);                    \
    }

/* before_<symbol>: take p->field, a `type`, out of the registry. */
#define FORGET_ARG(symbol, field, type)                                          \
    static void before_##symbol(ltcu_call *call, const void *raw_params)         \
    {                                                                            \
        PARAMS(symbol);                                                          \
        ltcu_forget(call, type, LTCU_TYPE_BIT(type), HANDLE(p->field));          \
    }

RECORD_OUT(cuStreamCreate, phStream, LTCU_STREAM)
RECORD_OUT(cuStreamCreateWithPriority, phStream, LTCU_STREAM)
/* A green context's stream: made in the green context, whatever context
 * is current, and not destroyed with any context (the program must
 * destroy it before the green context). Green contexts are not tracked,
 * so it belongs to no context here. */
static void after_cuGreenCtxStreamCreate(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuGreenCtxStreamCreate);
    if (p->phStream)
        ltcu_record_unowned(call, LTCU_STREAM, HANDLE(*p->phStream), 0);
}
FORGET_ARG(cuStreamDestroy_v2, hStream, LTCU_STREAM)
SAME_ARGUMENTS(cuStreamDestroy, cuStreamDestroy_v2);
#define before_cuStreamDestroy before_cuStreamDestroy_v2
/* A new graph, or the program's own one it captured into
 * (cuStreamBeginCaptureToGraph), which stays where it was made. */
static void after_cuStreamEndCapture(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuStreamEndCapture);
    if (p->phGraph)
        ltcu_record_unless_live(call, LTCU_GRAPH, HANDLE(*p->phGraph));
}
SAME_ARGUMENTS(cuStreamEndCapture_ptsz, cuStreamEndCapture);
#define after_cuStreamEndCapture_ptsz after_cuStreamEndCapture
RECORD_OUT(cuEventCreate, phEvent, LTCU_EVENT)
RECORD_OUT(cuIpcOpenEventHandle, phEvent, LTCU_EVENT)
FORGET_ARG(cuEventDestroy_v2, hEvent, LTCU_EVENT)
SAME_ARGUMENTS(cuEventDestroy, cuEventDestroy_v2);
#define before_cuEventDestroy before_cuEventDestroy_v2
RECORD_OUT(cuLinkCreate_v2, stateOut, LTCU_LINK_STATE)
SAME_ARGUMENTS(cuLinkCreate, cuLinkCreate_v2);
#define after_cuLinkCreate after_cuLinkCreate_v2
FORGET_ARG(cuLinkDestroy, state, LTCU_LINK_STATE)
RECORD_OUT(cuGraphCreate, phGraph, LTCU_GRAPH)
RECORD_OUT(cuGraphClone, phGraphClone, LTCU_GRAPH)
FORGET_ARG(cuGraphDestroy, hGraph, LTCU_GRAPH)
RECORD_OUT(cuGraphInstantiate, phGraphExec, LTCU_GRAPH_EXEC)
RECORD_OUT(cuGraphInstantiate_v2, phGraphExec, LTCU_GRAPH_EXEC)
RECORD_OUT(cuGraphInstantiateWithFlags, phGraphExec, LTCU_GRAPH_EXEC)
RECORD_OUT(cuGraphInstantiateWithParams, phGraphExec, LTCU_GRAPH_EXEC)
SAME_ARGUMENTS(cuGraphInstantiateWithParams_ptsz, cuGraphInstantiateWithParams);
#define after_cuGraphInstantiateWithParams_ptsz after_cuGraphInstantiateWithParams
FORGET_ARG(cuGraphExecDestroy, hGraphExec, LTCU_GRAPH_EXEC)

/* A graph memory node's allocation: the driver chose its address (out in
 * the node's parameters); see graph_allocations.c for why it is only
 * remembered. */
static void after_cuGraphAddMemAllocNode(ltcu_call *call, const void *raw_params)
{
    (void)call;
    PARAMS(cuGraphAddMemAllocNode);
    if (p->nodeParams)
        ltcu_graph_allocation_add(HANDLE(p->nodeParams->dptr));
}

static void graph_node_added(const CUgraphNodeParams *node)
{
    if (node && node->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
        ltcu_graph_allocation_add(HANDLE(node->alloc.dptr));
}

static void after_cuGraphAddNode(ltcu_call *call, const void *raw_params)
{
    (void)call;
    PARAMS(cuGraphAddNode);
    graph_node_added(p->nodeParams);
}

static void after_cuGraphAddNode_v2(ltcu_call *call, const void *raw_params)
{
    (void)call;
    PARAMS(cuGraphAddNode_v2);
    graph_node_added(p->nodeParams);
}
RECORD_OUT(cuMemPoolCreate, pool, LTCU_MEMORY_POOL)
/* Another process's pool, opened here: cuMemPoolDestroy ends it, and the
 * pointers cuMemPoolImportPointer takes from it hold it. */
RECORD_OUT(cuMemPoolImportFromShareableHandle, pool_out, LTCU_MEMORY_POOL)
FORGET_ARG(cuMemPoolDestroy, pool, LTCU_MEMORY_POOL)
FORGET_ARG(cuArrayDestroy, hArray, LTCU_ARRAY)
FORGET_ARG(cuMipmappedArrayDestroy, hMipmappedArray, LTCU_MIPMAPPED_ARRAY)
RECORD_OUT(cuTexObjectCreate, pTexObject, LTCU_TEXTURE)
FORGET_ARG(cuTexObjectDestroy, texObject, LTCU_TEXTURE)
RECORD_OUT(cuSurfObjectCreate, pSurfObject, LTCU_SURFACE)
FORGET_ARG(cuSurfObjectDestroy, surfObject, LTCU_SURFACE)

/* ---- modules and libraries: the runtime loads its own -------------------- */

/* A handle the driver has just handed out is nobody's but this call's:
 * should the runtime's record or the registry still hold it, the object
 * it named is gone unseen, and is forgotten here. */
static void code_loaded(ltcu_call *call, ltcu_type type, uint64_t handle, const void *image)
{
    if (!handle)
        return;
    if (ltcu_made_for_runtime(call, type, image)) {
        livetrack_object stale;
        uint64_t key = ltcu_key(type, handle);
        if (livetrack_lookup(LIVETRACK_DOMAIN_CUDA, key, &stale) == LIVETRACK_OK && stale.type == type)
            livetrack_destroy(LIVETRACK_DOMAIN_CUDA, type, key, call->name);
        ltcu_runtime_object_add(call, type, handle);
    } else {
        ltcu_runtime_object_take(type, handle);
        ltcu_record(call, type, handle, 0, 0);
    }
}

static void code_unloading(ltcu_call *call, ltcu_type type, uint64_t handle)
{
    if (!ltcu_runtime_object_take(type, handle))
        ltcu_forget(call, type, LTCU_TYPE_BIT(type), handle);
}

/* `image`: the code loaded, NULL when it comes from a file (see
 * fatbin_section.c for why it tells whose load it is). */
#define CODE_LOADED(symbol, field, type, image)                                  \
    static void after_##symbol(ltcu_call *call, const void *raw_params)          \
    {                                                                            \
        PARAMS(symbol);                                                          \
        if (p->field)                                                            \
            code_loaded(call, type, HANDLE(*p->field), image);                  \
    }

CODE_LOADED(cuModuleLoad, module, LTCU_MODULE, NULL)
CODE_LOADED(cuModuleLoadData, module, LTCU_MODULE, p->image)
CODE_LOADED(cuModuleLoadDataEx, module, LTCU_MODULE, p->image)
CODE_LOADED(cuModuleLoadFatBinary, module, LTCU_MODULE, p->fatCubin)
CODE_LOADED(cuLibraryLoadData, library, LTCU_LIBRARY, p->code)
CODE_LOADED(cuLibraryLoadFromFile, library, LTCU_LIBRARY, NULL)

static void before_cuModuleUnload(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuModuleUnload);
    code_unloading(call, LTCU_MODULE, HANDLE(p->hmod));
}

static void before_cuLibraryUnload(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuLibraryUnload);
    code_unloading(call, LTCU_LIBRARY, HANDLE(p->library));
}

/* ---- arrays: their size as the program asked for it ------------------------ */

/* Bytes per texel: a component's size times the descriptor's channels,
 * except for the normalized integer formats, whose name says both (the
 * descriptor repeats the count). 0 for packed and compressed formats. */
static uint64_t texel_bytes(CUarray_format format, unsigned channels)
{
    switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8: return channels;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF: return 2 * (uint64_t)channels;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT: return 4 * (uint64_t)channels;
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1: return 1;
    case CU_AD_FORMAT_UNORM_INT8X2:
    case CU_AD_FORMAT_SNORM_INT8X2:
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1: return 2;
    case CU_AD_FORMAT_UNORM_INT8X4:
    case CU_AD_FORMAT_SNORM_INT8X4:
    case CU_AD_FORMAT_UNORM_INT16X2:
    case CU_AD_FORMAT_SNORM_INT16X2: return 4;
    case CU_AD_FORMAT_UNORM_INT16X4:
    case CU_AD_FORMAT_SNORM_INT16X4: return 8;
    default: return 0; /* packed and compressed formats: size unknown */
    }
}

/* Texels times texel size; the driver's padding is not known. 0 when the
 * format's size is not known. Each mipmap level halves the extents, but
 * the depth of a layered or cubemap array (CUDA_ARRAY3D_* `flags`) counts
 * its layers or faces, and every level has all of them: only a true 3D
 * array's depth halves. */
static uint64_t array_bytes(size_t width, size_t height, size_t depth, unsigned flags, unsigned channels,
                            CUarray_format format, unsigned levels)
{
    uint64_t texel = texel_bytes(format, channels), total = 0;
    uint64_t w = width, h = height ? height : 1, d = depth ? depth : 1;
    int depth_is_layers = (flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
    for (unsigned level = 0; level < (levels ? levels : 1); level++) {
        total += w * h * d * texel;
        w = w > 1 ? w / 2 : 1;
        h = h > 1 ? h / 2 : 1;
        if (!depth_is_layers)
            d = d > 1 ? d / 2 : 1;
    }
    return total;
}

static void after_cuArrayCreate_v2(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuArrayCreate_v2);
    if (!p->pHandle || !p->pAllocateArray)
        return;
    const CUDA_ARRAY_DESCRIPTOR *desc = p->pAllocateArray;
    ltcu_record(call, LTCU_ARRAY, HANDLE(*p->pHandle),
                array_bytes(desc->Width, desc->Height, 1, 0, desc->NumChannels, desc->Format, 1), 0);
}

static void after_cuArray3DCreate_v2(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuArray3DCreate_v2);
    if (!p->pHandle || !p->pAllocateArray)
        return;
    const CUDA_ARRAY3D_DESCRIPTOR *desc = p->pAllocateArray;
    ltcu_record(call, LTCU_ARRAY, HANDLE(*p->pHandle),
                array_bytes(desc->Width, desc->Height, desc->Depth, desc->Flags, desc->NumChannels, desc->Format, 1),
                0);
}

static void after_cuMipmappedArrayCreate(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMipmappedArrayCreate);
    if (!p->pHandle || !p->pMipmappedArrayDesc)
        return;
    const CUDA_ARRAY3D_DESCRIPTOR *desc = p->pMipmappedArrayDesc;
    ltcu_record(call, LTCU_MIPMAPPED_ARRAY, HANDLE(*p->pHandle),
                array_bytes(desc->Width, desc->Height, desc->Depth, desc->Flags, desc->NumChannels, desc->Format,
                            p->numMipmapLevels),
                0);
}

/* ---- external memory and semaphores ------------------------------------------ */

/* Memory another API allocated (Vulkan, Direct3D, a file descriptor),
 * imported into the current context: its size is counted here, once. The
 * buffers and mipmapped arrays mapped from it count nothing and hold it:
 * cuDestroyExternalMemory may come first (they must still be freed with
 * cuMemFree and cuMipmappedArrayDestroy), and the last of them ends it. */
static void after_cuImportExternalMemory(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuImportExternalMemory);
    if (p->extMem_out)
        ltcu_record(call, LTCU_EXTERNAL_MEMORY, HANDLE(*p->extMem_out),
                    p->memHandleDesc ? p->memHandleDesc->size : 0, 0);
}
FORGET_ARG(cuDestroyExternalMemory, extMem, LTCU_EXTERNAL_MEMORY)

static void after_cuExternalMemoryGetMappedBuffer(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuExternalMemoryGetMappedBuffer);
    if (p->devPtr)
        ltcu_record(call, LTCU_DEVICE_MEMORY, HANDLE(*p->devPtr), 0, KEY(LTCU_EXTERNAL_MEMORY, p->extMem));
}

static void after_cuExternalMemoryGetMappedMipmappedArray(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuExternalMemoryGetMappedMipmappedArray);
    if (p->mipmap)
        ltcu_record(call, LTCU_MIPMAPPED_ARRAY, HANDLE(*p->mipmap), 0, KEY(LTCU_EXTERNAL_MEMORY, p->extMem));
}

RECORD_OUT(cuImportExternalSemaphore, extSem_out, LTCU_EXTERNAL_SEMAPHORE)
FORGET_ARG(cuDestroyExternalSemaphore, extSem, LTCU_EXTERNAL_SEMAPHORE)

/* ---- allocations ------------------------------------------------------------ */

/* after_<symbol>: record *p->pointer, p->bytes long, as `type`. */
#define ALLOCATED(symbol, pointer, bytes, type)                                  \
    static void after_##symbol(ltcu_call *call, const void *raw_params)          \
    {                                                                            \
        PARAMS(symbol);                                                          \
        if (p->pointer)                                                          \
            ltcu_record(call, type, HANDLE(*p->pointer), p->bytes, 0);           \
    }

ALLOCATED(cuMemAlloc_v2, dptr, bytesize, LTCU_DEVICE_MEMORY)
ALLOCATED(cuMemAllocHost_v2, pp, bytesize, LTCU_HOST_PINNED)
ALLOCATED(cuMemHostAlloc, pp, bytesize, LTCU_HOST_PINNED)
ALLOCATED(cuMemAllocManaged, dptr, bytesize, LTCU_MANAGED)
ALLOCATED(cuMemAllocAsync, dptr, bytesize, LTCU_DEVICE_ASYNC)
SAME_ARGUMENTS(cuMemAllocAsync_ptsz, cuMemAllocAsync);
#define after_cuMemAllocAsync_ptsz after_cuMemAllocAsync

static void after_cuMemAllocPitch_v2(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemAllocPitch_v2);
    if (p->dptr && p->pPitch)
        ltcu_record(call, LTCU_DEVICE_MEMORY, HANDLE(*p->dptr), (uint64_t)*p->pPitch * p->Height, 0);
}

/* A pool is kept alive by its outstanding allocations, as the driver does. */
static void after_cuMemAllocFromPoolAsync(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemAllocFromPoolAsync);
    if (p->dptr)
        ltcu_record(call, LTCU_DEVICE_ASYNC, HANDLE(*p->dptr), p->bytesize, KEY(LTCU_MEMORY_POOL, p->pool));
}
SAME_ARGUMENTS(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync);
#define after_cuMemAllocFromPoolAsync_ptsz after_cuMemAllocFromPoolAsync

/* The size of memory another process shares: the call that maps it
 * does not say, so the driver is asked (0 when it cannot say). */
static uint64_t shared_allocation_bytes(CUdeviceptr pointer)
{
    return ltcu_driver_allocation_bytes && pointer ? ltcu_driver_allocation_bytes(pointer) : 0;
}

/* Imported from another process's pool: the exporter's allocation. */
static void after_cuMemPoolImportPointer(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemPoolImportPointer);
    if (p->ptr_out)
        ltcu_record(call, LTCU_DEVICE_ASYNC, HANDLE(*p->ptr_out), shared_allocation_bytes(*p->ptr_out),
                    KEY(LTCU_MEMORY_POOL, p->pool));
}

/* Another process's allocation (its cuIpcGetMemHandle), mapped here until
 * cuIpcCloseMemHandle; cuMemFree does not free it. The handle does not say
 * its size: the driver does, as for an imported pool pointer. Opening a
 * handle the context has open already returns the same pointer with one
 * more reference, and each close drops one, so the mapping is reference
 * counted. cuIpcOpenMemHandle is also cuda.h's macro for the _v2 ABI, so
 * the handler is written for that one and the CUDA 4.1 ABI, with the same
 * arguments, shares it. */
static void after_cuIpcOpenMemHandle_v2(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuIpcOpenMemHandle_v2);
    if (p->pdptr)
        ltcu_retain_or_record(call, LTCU_IPC_MEMORY, HANDLE(*p->pdptr), shared_allocation_bytes(*p->pdptr));
}
SAME_ARGUMENTS(cuIpcOpenMemHandle, cuIpcOpenMemHandle_v2);
#define after_cuIpcOpenMemHandle after_cuIpcOpenMemHandle_v2

static void before_cuIpcCloseMemHandle(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuIpcCloseMemHandle);
    ltcu_release_reference(call, LTCU_IPC_MEMORY, HANDLE(p->dptr));
}

/* cuMemFree and cuMemFreeAsync free any device allocation, and the
 * memory of a graph's allocation that the graph did not free, which is
 * remembered, not tracked: its free passes unchecked. Only while nothing
 * else lives at the address, though (or a device allocation the program
 * freed, which the graph's memory took the place of): pinned host, IPC or
 * registered memory the driver later puts there is checked, as anywhere. */
static void device_pointer_freed(ltcu_call *call, ltcu_type key_type, uint64_t address)
{
    if (ltcu_graph_allocation_known(address)) {
        livetrack_object tracked;
        int nothing_live =
            livetrack_lookup(LIVETRACK_DOMAIN_CUDA, ltcu_key(key_type, address), &tracked) != LIVETRACK_OK;
        if (nothing_live || ((LTCU_DEVICE_POINTERS & LTCU_TYPE_BIT(tracked.type)) && !tracked.refs))
            return;
    }
    ltcu_forget(call, key_type, LTCU_DEVICE_POINTERS, address);
}

static void before_cuMemFree_v2(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemFree_v2);
    device_pointer_freed(call, LTCU_DEVICE_MEMORY, HANDLE(p->dptr));
}

static void before_cuMemFreeAsync(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemFreeAsync);
    device_pointer_freed(call, LTCU_DEVICE_ASYNC, HANDLE(p->dptr));
}
SAME_ARGUMENTS(cuMemFreeAsync_ptsz, cuMemFreeAsync);
#define before_cuMemFreeAsync_ptsz before_cuMemFreeAsync

FORGET_ARG(cuMemFreeHost, p, LTCU_HOST_PINNED)

static void after_cuMemHostRegister_v2(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemHostRegister_v2);
    ltcu_record(call, LTCU_HOST_REGISTERED, HANDLE(p->p), p->bytesize, 0);
}
SAME_ARGUMENTS(cuMemHostRegister, cuMemHostRegister_v2);
#define after_cuMemHostRegister after_cuMemHostRegister_v2
FORGET_ARG(cuMemHostUnregister, p, LTCU_HOST_REGISTERED)

/* ---- virtual memory: reservation, physical memory, mapping ------------------ */

/* A reservation is address space, not memory: no bytes. */
RECORD_OUT(cuMemAddressReserve, ptr, LTCU_VA_RESERVATION)
FORGET_ARG(cuMemAddressFree, ptr, LTCU_VA_RESERVATION)

static void after_cuMemCreate(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemCreate);
    if (p->handle)
        ltcu_record(call, LTCU_PHYSICAL_MEMORY, HANDLE(*p->handle), p->size, 0);
}

RECORD_OUT(cuMemImportFromShareableHandle, handle, LTCU_PHYSICAL_MEMORY)

/* A multicast object is released with cuMemRelease and mapped with
 * cuMemMap like physical memory, so it is one. It holds no memory of its
 * own: each device binds memory made by cuMemCreate (counted there), up
 * to prop->size, so it counts 0 bytes, as a reservation does. */
RECORD_OUT(cuMulticastCreate, mcHandle, LTCU_PHYSICAL_MEMORY)

/* Physical memory is reference counted: cuMemRetainAllocationHandle adds
 * one, cuMemRelease drops one, and each mapping holds it. */
static void before_cuMemRelease(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemRelease);
    ltcu_release_reference(call, LTCU_PHYSICAL_MEMORY, HANDLE(p->handle));
}

static void after_cuMemRetainAllocationHandle(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemRetainAllocationHandle);
    if (p->handle)
        ltcu_retain_or_record(call, LTCU_PHYSICAL_MEMORY, HANDLE(*p->handle), 0);
}

/* The mapping holds the physical memory it maps; its memory is counted
 * there, once. */
static void after_cuMemMap(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemMap);
    ltcu_record(call, LTCU_VA_MAPPING, HANDLE(p->ptr), 0, KEY(LTCU_PHYSICAL_MEMORY, p->handle));
    ltcu_mapping_add(HANDLE(p->ptr), p->size);
}

/* The range may cover several mappings made one after another. */
static void before_cuMemUnmap(ltcu_call *call, const void *raw_params)
{
    PARAMS(cuMemUnmap);
    uint64_t start = HANDLE(p->ptr), end = start + p->size;
    for (uint64_t at = start; at < end;) {
        uint64_t size = ltcu_mapping_take(at);
        if (!size) {
            if (at == start) /* nothing mapped there: say so */
                ltcu_forget(call, LTCU_VA_MAPPING, LTCU_TYPE_BIT(LTCU_VA_MAPPING), at);
            break;
        }
        livetrack_object range = {.handle = at, .bytes = size};
        ltcu_push_undo(call, LTCU_UNDO_MAPPING_SIZE, &range);
        ltcu_forget(call, LTCU_VA_MAPPING, LTCU_TYPE_BIT(LTCU_VA_MAPPING), at);
        at += size;
    }
}

/* ---- the table ------------------------------------------------------------- */

/* Calls without a `before` or `after` handler get NULL there: the names
 * below exist only for them. */
#define before_cuCtxCreate NULL
#define before_cuCtxCreate_v2 NULL
#define before_cuCtxCreate_v3 NULL
#define before_cuCtxCreate_v4 NULL
#define after_cuCtxDestroy NULL
#define after_cuCtxDestroy_v2 NULL
#define after_cuDevicePrimaryCtxRelease NULL
#define after_cuDevicePrimaryCtxRelease_v2 NULL
#define after_cuDevicePrimaryCtxReset NULL
#define after_cuDevicePrimaryCtxReset_v2 NULL
#define before_cuStreamCreate NULL
#define before_cuStreamCreateWithPriority NULL
#define before_cuGreenCtxStreamCreate NULL
#define after_cuStreamDestroy NULL
#define after_cuStreamDestroy_v2 NULL
#define before_cuStreamEndCapture NULL
#define before_cuStreamEndCapture_ptsz NULL
#define before_cuEventCreate NULL
#define before_cuIpcOpenEventHandle NULL
#define after_cuEventDestroy NULL
#define after_cuEventDestroy_v2 NULL
#define before_cuModuleLoad NULL
#define before_cuModuleLoadData NULL
#define before_cuModuleLoadDataEx NULL
#define before_cuModuleLoadFatBinary NULL
#define after_cuModuleUnload NULL
#define before_cuLibraryLoadData NULL
#define before_cuLibraryLoadFromFile NULL
#define after_cuLibraryUnload NULL
#define before_cuLinkCreate NULL
#define before_cuLinkCreate_v2 NULL
#define after_cuLinkDestroy NULL
#define before_cuGraphCreate NULL
#define before_cuGraphClone NULL
#define after_cuGraphDestroy NULL
#define before_cuGraphInstantiate NULL
#define before_cuGraphInstantiate_v2 NULL
#define before_cuGraphInstantiateWithFlags NULL
#define before_cuGraphInstantiateWithParams NULL
#define before_cuGraphInstantiateWithParams_ptsz NULL
#define after_cuGraphExecDestroy NULL
#define before_cuGraphAddMemAllocNode NULL
#define before_cuGraphAddNode NULL
#define before_cuGraphAddNode_v2 NULL
#define before_cuMemPoolCreate NULL
#define before_cuMemPoolImportFromShareableHandle NULL
#define after_cuMemPoolDestroy NULL
#define before_cuImportExternalMemory NULL
#define before_cuExternalMemoryGetMappedBuffer NULL
#define before_cuExternalMemoryGetMappedMipmappedArray NULL
#define after_cuDestroyExternalMemory NULL
#define before_cuImportExternalSemaphore NULL
#define after_cuDestroyExternalSemaphore NULL
#define before_cuArrayCreate_v2 NULL
#define before_cuArray3DCreate_v2 NULL
#define after_cuArrayDestroy NULL
#define before_cuMipmappedArrayCreate NULL
#define after_cuMipmappedArrayDestroy NULL
#define before_cuTexObjectCreate NULL
#define after_cuTexObjectDestroy NULL
#define before_cuSurfObjectCreate NULL
#define after_cuSurfObjectDestroy NULL
#define before_cuMemAlloc_v2 NULL
#define before_cuMemAllocPitch_v2 NULL
#define after_cuMemFree_v2 NULL
#define before_cuMemAllocHost_v2 NULL
#define before_cuMemHostAlloc NULL
#define after_cuMemFreeHost NULL
#define before_cuMemAllocManaged NULL
#define before_cuMemAllocAsync NULL
#define before_cuMemAllocAsync_ptsz NULL
#define before_cuMemAllocFromPoolAsync NULL
#define before_cuMemAllocFromPoolAsync_ptsz NULL
#define after_cuMemFreeAsync NULL
#define after_cuMemFreeAsync_ptsz NULL
#define before_cuMemPoolImportPointer NULL
#define before_cuIpcOpenMemHandle NULL
#define before_cuIpcOpenMemHandle_v2 NULL
#define after_cuIpcCloseMemHandle NULL
#define before_cuMemHostRegister NULL
#define before_cuMemHostRegister_v2 NULL
#define after_cuMemHostUnregister NULL
#define before_cuMemAddressReserve NULL
#define after_cuMemAddressFree NULL
#define before_cuMemCreate NULL
#define after_cuMemRelease NULL
#define before_cuMemImportFromShareableHandle NULL
#define before_cuMemRetainAllocationHandle NULL
#define before_cuMulticastCreate NULL
#define before_cuMemMap NULL
#define after_cuMemUnmap NULL

const ltcu_handler ltcu_handlers[LTCU_CALL_COUNT] = {
#define LTCU_HANDLER_ENTRY(symbol, api, since, stream, params, args) \
    [LTCU_ID_##symbol] = {before_##symbol, after_##symbol},
    LTCU_TRACKED_CALLS(LTCU_HANDLER_ENTRY)
#undef LTCU_HANDLER_ENTRY
};
