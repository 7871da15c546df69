/*
 * The CUPTI callback handler, driven without a driver: synthetic callback
 * data built from CUPTI's own headers (CUpti_CallbackData with the
 * <symbol>_params struct of each call, CUpti_ResourceData), fed to
 * ltcu_cupti_callback exactly as CUPTI calls it (entry, then exit on the
 * same thread).
 *
 * Covers every tracked call, each at least once succeeding and once
 * failing (checked at the end against the list of tracked calls), the
 * runtime API (naming, objects the runtime makes for itself) and the
 * resource domain (contexts, streams and graphs that go implicitly).
 * Handles are made-up addresses: nothing here dereferences them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cuda_front_end.h"

static const CUpti_CallbackId callback_of_call[LTCU_CALL_COUNT] = {
#define TEST_CBID_ENTRY(symbol, api, since, stream, params, args) [LTCU_ID_##symbol] = CUPTI_DRIVER_TRACE_CBID_##symbol,
    LTCU_TRACKED_CALLS(TEST_CBID_ENTRY)
#undef TEST_CBID_ENTRY
};

static int succeeded[LTCU_CALL_COUNT], failed[LTCU_CALL_COUNT];
static CUcontext current; /* what CUPTI reports as the thread's context */
static uint64_t last_handle = 0x5a000000;

static uint64_t fresh(void) { return last_handle += 0x1000; }
#define AS(type, value) ((type)(uintptr_t)(value))

/* One driver API call as CUPTI reports it, by its callback id: entry,
 * then exit with `result`. `made` runs between the two, as the driver
 * writes the out-handles. Calls by callback id need no tracked-call id,
 * so a test of a call livetrack did not track still builds, and fails. */
static void drive_callback(CUpti_CallbackId cbid, void *params, CUresult result, void (*made)(void *),
                           void *made_context)
{
    uint64_t correlation = 0;
    CUresult returned = result;
    CUpti_CallbackData data;
    memset(&data, 0, sizeof data);
    data.callbackSite = CUPTI_API_ENTER;
    data.functionName = "a driver call";
    data.functionParams = params;
    data.functionReturnValue = &returned;
    data.context = current;
    data.correlationData = &correlation;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &data);
    if (made)
        made(made_context);
    data.callbackSite = CUPTI_API_EXIT;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &data);
    for (int id = 0; id < LTCU_CALL_COUNT; id++) {
        if (callback_of_call[id] != cbid)
            continue;
        if (result == CUDA_SUCCESS)
            succeeded[id]++;
        else
            failed[id]++;
    }
}

static void drive_with(ltcu_call_id id, void *params, CUresult result, void (*made)(void *), void *made_context)
{
    drive_callback(callback_of_call[id], params, result, made, made_context);
}

/* Whether the CUPTI mode enables the driver callback `cbid`. */
static int callback_enabled(CUpti_CallbackId cbid)
{
    CUpti_CallbackId ids[CUPTI_DRIVER_TRACE_CBID_SIZE];
    size_t count = ltcu_cupti_driver_callbacks(ids, CUPTI_DRIVER_TRACE_CBID_SIZE);
    for (size_t i = 0; i < count; i++)
        if (ids[i] == cbid)
            return 1;
    return 0;
}

static void drive(ltcu_call_id id, void *params, CUresult result) { drive_with(id, params, result, NULL, NULL); }

/* The runtime API call `name` (CUPTI's spelling) around what `body` does. */
static void in_runtime_call(CUpti_CallbackId cbid, const char *name, void (*body)(void *), void *context)
{
    CUpti_CallbackData data;
    memset(&data, 0, sizeof data);
    data.callbackSite = CUPTI_API_ENTER;
    data.functionName = name;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &data);
    body(context);
    data.callbackSite = CUPTI_API_EXIT;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &data);
}

static uint64_t misuse_count(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.misuse;
}

static int live(ltcu_type type, uint64_t handle, livetrack_object *out)
{
    livetrack_object object;
    if (livetrack_lookup(LIVETRACK_DOMAIN_CUDA, ltcu_key(type, handle), &object) != LIVETRACK_OK)
        return 0;
    if (out)
        *out = object;
    return object.type == (livetrack_type)type;
}

static void expect_live(int line, ltcu_type type, uint64_t handle, uint64_t bytes, CUcontext owner)
{
    livetrack_object object;
    if (!live(type, handle, &object)) {
        fprintf(stderr, "line %d: %s 0x%llx is not live\n", line, ltcu_type_name(type), (unsigned long long)handle);
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(object.bytes, bytes);
    CHECK(object.owner == (const void *)owner);
    CHECK(object.refs >= 1);
    CHECK(object.type_name && !strcmp(object.type_name, ltcu_type_name(type)));
}
#define EXPECT_LIVE(type, handle, bytes, owner) expect_live(__LINE__, type, handle, bytes, owner)

static void expect_gone(int line, ltcu_type type, uint64_t handle)
{
    if (live(type, handle, NULL)) {
        fprintf(stderr, "line %d: %s 0x%llx is still live\n", line, ltcu_type_name(type), (unsigned long long)handle);
        CHECK(0);
    }
}
#define EXPECT_GONE(type, handle) expect_gone(__LINE__, type, handle)

/* stderr of what `body` does, in `out`. */
static void capture_stderr(void (*body)(void *), void *context, char *out, size_t size)
{
    fflush(stderr);
    FILE *file = tmpfile();
    int saved = dup(2);
    if (!file || saved < 0) {
        body(context);
        out[0] = '\0';
        return;
    }
    dup2(fileno(file), 2);
    body(context);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(file);
    size_t length = fread(out, 1, size - 1, file);
    out[length] = '\0';
    fclose(file);
}

/* ---- a create and its destroy --------------------------------------------------- */

/* A create whose out-handle is the first field of its params struct. */
typedef struct lifecycle {
    CUpti_CallbackId create;
    void *create_params;
    uint64_t *out;    /* where the driver writes the handle */
    CUpti_CallbackId destroy;
    void *destroy_params;
    uint64_t *destroy_handle; /* the destroy's handle argument */
    ltcu_type type;
    uint64_t bytes;
    CUcontext owner;
} lifecycle;

static void write_handle(void *context)
{
    uint64_t *out = context;
    *out = fresh();
}

/* Failed create: nothing. Create. Failed destroy: still there. Destroy:
 * gone. Destroy again: misuse, still gone. */
static void check_lifecycle(const lifecycle *l)
{
    *l->out = 0;
    CHECK(callback_enabled(l->create) && callback_enabled(l->destroy));
    drive_callback(l->create, l->create_params, CUDA_ERROR_OUT_OF_MEMORY, write_handle, l->out);
    uint64_t refused = *l->out;
    EXPECT_GONE(l->type, refused);

    drive_callback(l->create, l->create_params, CUDA_SUCCESS, write_handle, l->out);
    uint64_t handle = *l->out;
    EXPECT_LIVE(l->type, handle, l->bytes, l->owner);

    *l->destroy_handle = handle;
    drive_callback(l->destroy, l->destroy_params, CUDA_ERROR_INVALID_HANDLE, NULL, NULL);
    EXPECT_LIVE(l->type, handle, l->bytes, l->owner);

    uint64_t misuse = misuse_count();
    drive_callback(l->destroy, l->destroy_params, CUDA_SUCCESS, NULL, NULL);
    EXPECT_GONE(l->type, handle);
    CHECK_EQ_INT(misuse_count(), misuse);

    drive_callback(l->destroy, l->destroy_params, CUDA_ERROR_INVALID_HANDLE, NULL, NULL);
    CHECK_EQ_INT(misuse_count(), misuse + 1);
}

/* The create's params start as the initializer given last (it may hold
 * commas); the out-handle and the destroy's handle are filled here. */
#define CHECK_LIFECYCLE(create_symbol, out_field, destroy_symbol, handle_field, object_type, size, object_owner, \
                        ...)                                                                                     \
    do {                                                                                                        \
        union {                                                                                                 \
            uint64_t as_integer;                                                                                \
            void *as_pointer;                                                                                   \
        } out_slot = {0};                                                                                       \
        create_symbol##_params create_params = __VA_ARGS__;                                                     \
        create_params.out_field = (void *)&out_slot;                                                            \
        destroy_symbol##_params destroy_params;                                                                 \
        memset(&destroy_params, 0, sizeof destroy_params);                                                      \
        _Static_assert(sizeof destroy_params.handle_field == sizeof(uint64_t), "64-bit handle");               \
        lifecycle l = {CUPTI_DRIVER_TRACE_CBID_##create_symbol,                                                 \
                       &create_params,                                                                          \
                       &out_slot.as_integer,                                                                    \
                       CUPTI_DRIVER_TRACE_CBID_##destroy_symbol,                                                \
                       &destroy_params,                                                                         \
                       (uint64_t *)(void *)&destroy_params.handle_field,                                        \
                       object_type,                                                                             \
                       size,                                                                                    \
                       object_owner};                                                                           \
        check_lifecycle(&l);                                                                                    \
    } while (0)

#define NO_INIT {0}

static void objects_in_a_context(void)
{
    CUDA_ARRAY_DESCRIPTOR array2d = {.Width = 64, .Height = 32, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4};
    CUDA_ARRAY3D_DESCRIPTOR array3d = {.Width = 8, .Height = 8, .Depth = 2, .Format = CU_AD_FORMAT_UNSIGNED_INT16,
                                       .NumChannels = 1};
    CUDA_ARRAY3D_DESCRIPTOR mipmapped = {.Width = 8, .Height = 8, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
    /* Six faces at every level: only width and height halve. */
    CUDA_ARRAY3D_DESCRIPTOR cubemap = {.Width = 8, .Height = 8, .Depth = 6, .Format = CU_AD_FORMAT_FLOAT,
                                       .NumChannels = 1, .Flags = CUDA_ARRAY3D_CUBEMAP};
    CUDA_ARRAY3D_DESCRIPTOR compressed = {.Width = 16, .Height = 16, .Format = CU_AD_FORMAT_BC1_UNORM,
                                          .NumChannels = 4};
    /* Normalized integers: the channels and their size are in the format's name. */
    CUDA_ARRAY3D_DESCRIPTOR unorm8x4 = {.Width = 16, .Height = 16, .Format = CU_AD_FORMAT_UNORM_INT8X4,
                                        .NumChannels = 4};
    CUDA_ARRAY3D_DESCRIPTOR snorm16x2 = {.Width = 16, .Height = 16, .Format = CU_AD_FORMAT_SNORM_INT16X2,
                                         .NumChannels = 2};
    CUDA_ARRAY3D_DESCRIPTOR unorm8x1 = {.Width = 16, .Height = 16, .Format = CU_AD_FORMAT_UNORM_INT8X1,
                                        .NumChannels = 1};

    CHECK_LIFECYCLE(cuStreamCreate, phStream, cuStreamDestroy_v2, hStream, LTCU_STREAM, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuStreamCreateWithPriority, phStream, cuStreamDestroy_v2, hStream, LTCU_STREAM, 0, current,
                    NO_INIT);
    CHECK_LIFECYCLE(cuEventCreate, phEvent, cuEventDestroy_v2, hEvent, LTCU_EVENT, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuIpcOpenEventHandle, phEvent, cuEventDestroy_v2, hEvent, LTCU_EVENT, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuModuleLoad, module, cuModuleUnload, hmod, LTCU_MODULE, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuModuleLoadData, module, cuModuleUnload, hmod, LTCU_MODULE, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuModuleLoadDataEx, module, cuModuleUnload, hmod, LTCU_MODULE, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuModuleLoadFatBinary, module, cuModuleUnload, hmod, LTCU_MODULE, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuLinkCreate_v2, stateOut, cuLinkDestroy, state, LTCU_LINK_STATE, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuArrayCreate_v2, pHandle, cuArrayDestroy, hArray, LTCU_ARRAY, 64 * 32 * 16, current,
                    {.pAllocateArray = &array2d});
    CHECK_LIFECYCLE(cuArray3DCreate_v2, pHandle, cuArrayDestroy, hArray, LTCU_ARRAY, 8 * 8 * 2 * 2, current,
                    {.pAllocateArray = &array3d});
    CHECK_LIFECYCLE(cuArray3DCreate_v2, pHandle, cuArrayDestroy, hArray, LTCU_ARRAY, 0, current,
                    {.pAllocateArray = &compressed});
    CHECK_LIFECYCLE(cuArray3DCreate_v2, pHandle, cuArrayDestroy, hArray, LTCU_ARRAY, 16 * 16 * 4, current,
                    {.pAllocateArray = &unorm8x4});
    CHECK_LIFECYCLE(cuArray3DCreate_v2, pHandle, cuArrayDestroy, hArray, LTCU_ARRAY, 16 * 16 * 4, current,
                    {.pAllocateArray = &snorm16x2});
    CHECK_LIFECYCLE(cuArray3DCreate_v2, pHandle, cuArrayDestroy, hArray, LTCU_ARRAY, 16 * 16, current,
                    {.pAllocateArray = &unorm8x1});
    CHECK_LIFECYCLE(cuMipmappedArrayCreate, pHandle, cuMipmappedArrayDestroy, hMipmappedArray, LTCU_MIPMAPPED_ARRAY,
                    (64 + 16 + 4 + 1) * 4, current, {.pMipmappedArrayDesc = &mipmapped, .numMipmapLevels = 4});
    CHECK_LIFECYCLE(cuMipmappedArrayCreate, pHandle, cuMipmappedArrayDestroy, hMipmappedArray, LTCU_MIPMAPPED_ARRAY,
                    (64 + 16 + 4 + 1) * 6 * 4, current, {.pMipmappedArrayDesc = &cubemap, .numMipmapLevels = 4});
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC external = {.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, .size = 1 << 16};
    CHECK_LIFECYCLE(cuImportExternalMemory, extMem_out, cuDestroyExternalMemory, extMem, LTCU_EXTERNAL_MEMORY,
                    1 << 16, current, {.memHandleDesc = &external});
    CHECK_LIFECYCLE(cuImportExternalSemaphore, extSem_out, cuDestroyExternalSemaphore, extSem,
                    LTCU_EXTERNAL_SEMAPHORE, 0, current, NO_INIT);
    /* Mapped from external memory: counted there, freed like the program's own. */
    CHECK_LIFECYCLE(cuExternalMemoryGetMappedBuffer, devPtr, cuMemFree_v2, dptr, LTCU_DEVICE_MEMORY, 0, current,
                    NO_INIT);
    CHECK_LIFECYCLE(cuExternalMemoryGetMappedMipmappedArray, mipmap, cuMipmappedArrayDestroy, hMipmappedArray,
                    LTCU_MIPMAPPED_ARRAY, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuTexObjectCreate, pTexObject, cuTexObjectDestroy, texObject, LTCU_TEXTURE, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuSurfObjectCreate, pSurfObject, cuSurfObjectDestroy, surfObject, LTCU_SURFACE, 0, current,
                    NO_INIT);
    CHECK_LIFECYCLE(cuGraphInstantiate, phGraphExec, cuGraphExecDestroy, hGraphExec, LTCU_GRAPH_EXEC, 0, current,
                    NO_INIT);
    CHECK_LIFECYCLE(cuGraphInstantiate_v2, phGraphExec, cuGraphExecDestroy, hGraphExec, LTCU_GRAPH_EXEC, 0, current,
                    NO_INIT);
    CHECK_LIFECYCLE(cuGraphInstantiateWithFlags, phGraphExec, cuGraphExecDestroy, hGraphExec, LTCU_GRAPH_EXEC, 0,
                    current, NO_INIT);
    CHECK_LIFECYCLE(cuGraphInstantiateWithParams, phGraphExec, cuGraphExecDestroy, hGraphExec, LTCU_GRAPH_EXEC, 0,
                    current, NO_INIT);
    CHECK_LIFECYCLE(cuGraphInstantiateWithParams_ptsz, phGraphExec, cuGraphExecDestroy, hGraphExec, LTCU_GRAPH_EXEC, 0,
                    current, NO_INIT);
}

static void objects_outside_contexts(void)
{
    /* A green context's stream: whatever context is current, not its. */
    CHECK_LIFECYCLE(cuGreenCtxStreamCreate, phStream, cuStreamDestroy_v2, hStream, LTCU_STREAM, 0, NULL, NO_INIT);
    CHECK_LIFECYCLE(cuLibraryLoadData, library, cuLibraryUnload, library, LTCU_LIBRARY, 0, NULL, NO_INIT);
    CHECK_LIFECYCLE(cuLibraryLoadFromFile, library, cuLibraryUnload, library, LTCU_LIBRARY, 0, NULL, NO_INIT);
    CHECK_LIFECYCLE(cuGraphCreate, phGraph, cuGraphDestroy, hGraph, LTCU_GRAPH, 0, NULL, NO_INIT);
    CHECK_LIFECYCLE(cuMemPoolCreate, pool, cuMemPoolDestroy, pool, LTCU_MEMORY_POOL, 0, NULL, NO_INIT);
    CHECK_LIFECYCLE(cuMemPoolImportFromShareableHandle, pool_out, cuMemPoolDestroy, pool, LTCU_MEMORY_POOL, 0, NULL,
                    NO_INIT);
    CHECK_LIFECYCLE(cuMemAddressReserve, ptr, cuMemAddressFree, ptr, LTCU_VA_RESERVATION, 0, NULL, {.size = 1 << 21});
    CHECK_LIFECYCLE(cuMemImportFromShareableHandle, handle, cuMemRelease, handle, LTCU_PHYSICAL_MEMORY, 0, NULL,
                    NO_INIT);
    CHECK_LIFECYCLE(cuMemCreate, handle, cuMemRelease, handle, LTCU_PHYSICAL_MEMORY, 1 << 21, NULL, {.size = 1 << 21});
    CUmulticastObjectProp team = {.numDevices = 2, .size = 1 << 21};
    CHECK_LIFECYCLE(cuMulticastCreate, mcHandle, cuMemRelease, handle, LTCU_PHYSICAL_MEMORY, 0, NULL, {.prop = &team});

    /* Graphs from a clone and from stream capture (legacy and per-thread). */
    uint64_t original = fresh();
    cuGraphClone_params clone = {.originalGraph = AS(CUgraph, original)};
    CHECK_LIFECYCLE(cuGraphClone, phGraphClone, cuGraphDestroy, hGraph, LTCU_GRAPH, 0, NULL, clone);
    CHECK_LIFECYCLE(cuStreamEndCapture, phGraph, cuGraphDestroy, hGraph, LTCU_GRAPH, 0, NULL, NO_INIT);
    CHECK_LIFECYCLE(cuStreamEndCapture_ptsz, phGraph, cuGraphDestroy, hGraph, LTCU_GRAPH, 0, NULL, NO_INIT);
}

/* ---- older ABIs with the arguments of their successors ---------------------------- */

/* CUPTI reports the CUDA 2.0 cuCtxCreate, cuCtxDestroy, cuStreamDestroy and
 * cuEventDestroy, the 4.0 cuMemHostRegister and the 5.5 cuLinkCreate under
 * callback ids of their own, which a program reaches through dlsym or an
 * old cuGetProcAddress version. Each is enabled and does what its
 * successor does. */
static void older_abis(void)
{
    CHECK_LIFECYCLE(cuStreamCreate, phStream, cuStreamDestroy, hStream, LTCU_STREAM, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuEventCreate, phEvent, cuEventDestroy, hEvent, LTCU_EVENT, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuLinkCreate, stateOut, cuLinkDestroy, state, LTCU_LINK_STATE, 0, current, NO_INIT);

    CHECK(callback_enabled(CUPTI_DRIVER_TRACE_CBID_cuCtxCreate) &&
          callback_enabled(CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy));
    uint64_t context = fresh(), refused = fresh();
    cuCtxCreate_params create = {(CUcontext *)&refused, 0, 0};
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuCtxCreate, &create, CUDA_ERROR_INVALID_DEVICE, NULL, NULL);
    EXPECT_GONE(LTCU_CONTEXT, refused);
    create.pctx = (CUcontext *)&context;
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuCtxCreate, &create, CUDA_SUCCESS, NULL, NULL);
    EXPECT_LIVE(LTCU_CONTEXT, context, 0, AS(CUcontext, context));
    cuCtxDestroy_params destroy = {AS(CUcontext, context)};
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy, &destroy, CUDA_ERROR_INVALID_CONTEXT, NULL, NULL);
    EXPECT_LIVE(LTCU_CONTEXT, context, 0, AS(CUcontext, context));
    uint64_t misuse = misuse_count();
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy, &destroy, CUDA_SUCCESS, NULL, NULL);
    EXPECT_GONE(LTCU_CONTEXT, context);
    CHECK_EQ_INT(misuse_count(), misuse);

    CHECK(callback_enabled(CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister));
    static char buffer[128];
    uint64_t address = (uint64_t)(uintptr_t)buffer;
    cuMemHostRegister_params reg = {buffer, sizeof buffer, 0};
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister, &reg, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, NULL,
                   NULL);
    EXPECT_GONE(LTCU_HOST_REGISTERED, address);
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister, &reg, CUDA_SUCCESS, NULL, NULL);
    EXPECT_LIVE(LTCU_HOST_REGISTERED, address, sizeof buffer, current);
    cuMemHostUnregister_params unreg = {buffer};
    drive(LTCU_ID_cuMemHostUnregister, &unreg, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_HOST_REGISTERED, address);
    CHECK_EQ_INT(misuse_count(), misuse);
}

/* ---- allocations ----------------------------------------------------------------- */

static void allocations(void)
{
    CHECK_LIFECYCLE(cuMemAlloc_v2, dptr, cuMemFree_v2, dptr, LTCU_DEVICE_MEMORY, 4096, current, {.bytesize = 4096});
    CHECK_LIFECYCLE(cuMemAllocManaged, dptr, cuMemFree_v2, dptr, LTCU_MANAGED, 100, current, {.bytesize = 100});
    CHECK_LIFECYCLE(cuMemAllocHost_v2, pp, cuMemFreeHost, p, LTCU_HOST_PINNED, 64, current, {.bytesize = 64});
    /* Another process's memory, mapped: closed, not freed; its size is not known. */
    CHECK_LIFECYCLE(cuIpcOpenMemHandle_v2, pdptr, cuIpcCloseMemHandle, dptr, LTCU_IPC_MEMORY, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuIpcOpenMemHandle, pdptr, cuIpcCloseMemHandle, dptr, LTCU_IPC_MEMORY, 0, current, NO_INIT);
    CHECK_LIFECYCLE(cuMemHostAlloc, pp, cuMemFreeHost, p, LTCU_HOST_PINNED, 65, current, {.bytesize = 65});
    CHECK_LIFECYCLE(cuMemAllocAsync, dptr, cuMemFreeAsync, dptr, LTCU_DEVICE_ASYNC, 512, NULL, {.bytesize = 512});
    CHECK_LIFECYCLE(cuMemAllocAsync_ptsz, dptr, cuMemFreeAsync_ptsz, dptr, LTCU_DEVICE_ASYNC, 513, NULL,
                    {.bytesize = 513});
    /* Either free takes any device allocation. */
    CHECK_LIFECYCLE(cuMemAllocAsync, dptr, cuMemFree_v2, dptr, LTCU_DEVICE_ASYNC, 514, NULL, {.bytesize = 514});
    CHECK_LIFECYCLE(cuMemAlloc_v2, dptr, cuMemFreeAsync, dptr, LTCU_DEVICE_MEMORY, 515, current, {.bytesize = 515});

    /* Pitch: pitch times rows. */
    size_t pitch = 0;
    uint64_t pitched = fresh();
    cuMemAllocPitch_v2_params alloc_pitch = {(CUdeviceptr *)&pitched, &pitch, 1000, 10, 4};
    pitch = 1024;
    drive(LTCU_ID_cuMemAllocPitch_v2, &alloc_pitch, CUDA_SUCCESS);
    EXPECT_LIVE(LTCU_DEVICE_MEMORY, pitched, 10240, current);
    uint64_t refused_pitch = fresh();
    alloc_pitch.dptr = (CUdeviceptr *)&refused_pitch;
    drive(LTCU_ID_cuMemAllocPitch_v2, &alloc_pitch, CUDA_ERROR_INVALID_VALUE);
    EXPECT_GONE(LTCU_DEVICE_MEMORY, refused_pitch);
    cuMemFree_v2_params free_pitched = {pitched};
    drive(LTCU_ID_cuMemFree_v2, &free_pitched, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_DEVICE_MEMORY, pitched);

    /* Pools: allocations hold their pool, as the driver keeps it. */
    uint64_t pool = fresh(), from_pool = fresh();
    cuMemPoolCreate_params create_pool = {(CUmemoryPool *)&pool, NULL};
    drive(LTCU_ID_cuMemPoolCreate, &create_pool, CUDA_SUCCESS);
    cuMemAllocFromPoolAsync_params alloc = {(CUdeviceptr *)&from_pool, 2048, AS(CUmemoryPool, pool), NULL};
    drive(LTCU_ID_cuMemAllocFromPoolAsync, &alloc, CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_GONE(LTCU_DEVICE_ASYNC, from_pool);
    drive(LTCU_ID_cuMemAllocFromPoolAsync, &alloc, CUDA_SUCCESS);
    livetrack_object object;
    CHECK(live(LTCU_DEVICE_ASYNC, from_pool, &object) && object.bytes == 2048 &&
          object.parents[0] == ltcu_key(LTCU_MEMORY_POOL, pool));
    cuMemPoolDestroy_params destroy_pool = {AS(CUmemoryPool, pool)};
    drive(LTCU_ID_cuMemPoolDestroy, &destroy_pool, CUDA_SUCCESS);
    CHECK(live(LTCU_MEMORY_POOL, pool, &object) && object.refs == 0 && object.holders == 1);
    cuMemFreeAsync_params free_async = {from_pool, NULL};
    drive(LTCU_ID_cuMemFreeAsync, &free_async, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_MEMORY_POOL, pool);

    /* A pool another process shares, and a pointer imported from it. */
    uint64_t shared_pool = fresh(), shared_pointer = fresh();
    cuMemPoolImportFromShareableHandle_params open_pool = {(CUmemoryPool *)&shared_pool, NULL,
                                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0};
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuMemPoolImportFromShareableHandle, &open_pool, CUDA_SUCCESS, NULL, NULL);
    cuMemPoolImportPointer_params take = {(CUdeviceptr *)&shared_pointer, AS(CUmemoryPool, shared_pool), NULL};
    drive(LTCU_ID_cuMemPoolImportPointer, &take, CUDA_SUCCESS);
    CHECK(live(LTCU_DEVICE_ASYNC, shared_pointer, &object) &&
          object.parents[0] == ltcu_key(LTCU_MEMORY_POOL, shared_pool));
    destroy_pool.pool = AS(CUmemoryPool, shared_pool);
    drive(LTCU_ID_cuMemPoolDestroy, &destroy_pool, CUDA_SUCCESS);
    CHECK(live(LTCU_MEMORY_POOL, shared_pool, &object) && object.refs == 0 && object.holders == 1);
    cuMemFree_v2_params free_shared = {shared_pointer};
    drive(LTCU_ID_cuMemFree_v2, &free_shared, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_MEMORY_POOL, shared_pool);

    uint64_t twin_pool = fresh(), twin = fresh(), imported = fresh();
    create_pool.pool = (CUmemoryPool *)&twin_pool;
    drive(LTCU_ID_cuMemPoolCreate, &create_pool, CUDA_SUCCESS);
    cuMemAllocFromPoolAsync_ptsz_params alloc_ptsz = {(CUdeviceptr *)&twin, 16, AS(CUmemoryPool, twin_pool), NULL};
    drive(LTCU_ID_cuMemAllocFromPoolAsync_ptsz, &alloc_ptsz, CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_GONE(LTCU_DEVICE_ASYNC, twin);
    drive(LTCU_ID_cuMemAllocFromPoolAsync_ptsz, &alloc_ptsz, CUDA_SUCCESS);
    cuMemPoolImportPointer_params import = {(CUdeviceptr *)&imported, AS(CUmemoryPool, twin_pool), NULL};
    drive(LTCU_ID_cuMemPoolImportPointer, &import, CUDA_ERROR_INVALID_VALUE);
    EXPECT_GONE(LTCU_DEVICE_ASYNC, imported);
    drive(LTCU_ID_cuMemPoolImportPointer, &import, CUDA_SUCCESS);
    EXPECT_LIVE(LTCU_DEVICE_ASYNC, twin, 16, NULL);
    EXPECT_LIVE(LTCU_DEVICE_ASYNC, imported, 0, NULL);
    cuMemFreeAsync_ptsz_params free_twin = {twin, NULL};
    drive(LTCU_ID_cuMemFreeAsync_ptsz, &free_twin, CUDA_SUCCESS);
    free_twin.dptr = imported;
    drive(LTCU_ID_cuMemFreeAsync_ptsz, &free_twin, CUDA_SUCCESS);
    destroy_pool.pool = AS(CUmemoryPool, twin_pool);
    drive(LTCU_ID_cuMemPoolDestroy, &destroy_pool, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_MEMORY_POOL, twin_pool);

    /* Registered host memory: keyed by the program's own pointer. */
    static char buffer[256];
    cuMemHostRegister_v2_params reg = {buffer, sizeof buffer, 0};
    drive(LTCU_ID_cuMemHostRegister_v2, &reg, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_GONE(LTCU_HOST_REGISTERED, (uint64_t)(uintptr_t)buffer);
    drive(LTCU_ID_cuMemHostRegister_v2, &reg, CUDA_SUCCESS);
    EXPECT_LIVE(LTCU_HOST_REGISTERED, (uint64_t)(uintptr_t)buffer, sizeof buffer, current);
    cuMemHostUnregister_params unreg = {buffer};
    drive(LTCU_ID_cuMemHostUnregister, &unreg, CUDA_ERROR_INVALID_VALUE);
    EXPECT_LIVE(LTCU_HOST_REGISTERED, (uint64_t)(uintptr_t)buffer, sizeof buffer, current);
    drive(LTCU_ID_cuMemHostUnregister, &unreg, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_HOST_REGISTERED, (uint64_t)(uintptr_t)buffer);

    /* Wrong kind: host memory given to cuMemFree is misuse, and kept. */
    uint64_t host = fresh();
    cuMemAllocHost_v2_params alloc_host = {(void **)&host, 32};
    drive(LTCU_ID_cuMemAllocHost_v2, &alloc_host, CUDA_SUCCESS);
    uint64_t misuse = misuse_count();
    cuMemFree_v2_params wrong = {host};
    drive(LTCU_ID_cuMemFree_v2, &wrong, CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(misuse_count(), misuse + 1);
    EXPECT_LIVE(LTCU_HOST_PINNED, host, 32, current);
    cuMemFreeHost_params free_host = {AS(void *, host)};
    drive(LTCU_ID_cuMemFreeHost, &free_host, CUDA_SUCCESS);

    /* A null pointer is the driver's to answer: no misuse. */
    misuse = misuse_count();
    cuMemFree_v2_params null_free = {0};
    drive(LTCU_ID_cuMemFree_v2, &null_free, CUDA_SUCCESS);
    CHECK_EQ_INT(misuse_count(), misuse);
}

/* ---- graph memory nodes ----------------------------------------------------------- */

/* The driver writes the allocation's address into the node's parameters. */
static void write_address(void *context)
{
    CUdeviceptr *address = context;
    *address = (CUdeviceptr)fresh();
}

/* A graph memory node's allocation, freed outside the graph with cuMemFree
 * or cuMemFreeAsync (once per launch): not tracked, and its frees are no
 * misuse. An address the driver later hands out for a tracked allocation
 * is checked again. */
static void graph_memory_nodes(void)
{
    uint64_t misuse = misuse_count();
    CUDA_MEM_ALLOC_NODE_PARAMS alloc = {.bytesize = 4096};
    cuGraphAddMemAllocNode_params add = {NULL, AS(CUgraph, fresh()), NULL, 0, &alloc};
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuGraphAddMemAllocNode, &add, CUDA_ERROR_OUT_OF_MEMORY, write_address,
                   &alloc.dptr);
    uint64_t refused = alloc.dptr;
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuGraphAddMemAllocNode, &add, CUDA_SUCCESS, write_address, &alloc.dptr);
    uint64_t graph_memory = alloc.dptr;
    EXPECT_GONE(LTCU_DEVICE_ASYNC, graph_memory);
    cuMemFreeAsync_params free_async = {graph_memory, NULL};
    drive(LTCU_ID_cuMemFreeAsync, &free_async, CUDA_SUCCESS);
    cuMemFree_v2_params free_memory = {graph_memory};
    drive(LTCU_ID_cuMemFree_v2, &free_memory, CUDA_SUCCESS); /* after the next launch */
    CHECK_EQ_INT(misuse_count(), misuse);
    free_memory.dptr = refused; /* the refused node allocated nothing */
    drive(LTCU_ID_cuMemFree_v2, &free_memory, CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(misuse_count(), misuse + 1);

    /* cuGraphAddNode (both ABIs) with a memory allocation node; other
     * nodes allocate nothing. */
    CUgraphNodeParams node;
    memset(&node, 0, sizeof node);
    node.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    node.alloc.bytesize = 512;
    cuGraphAddNode_params add_node = {NULL, AS(CUgraph, fresh()), NULL, 0, &node};
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode, &add_node, CUDA_ERROR_INVALID_VALUE, NULL, NULL);
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode, &add_node, CUDA_SUCCESS, write_address, &node.alloc.dptr);
    uint64_t from_add_node = node.alloc.dptr;
    cuGraphAddNode_v2_params add_node_v2 = {NULL, AS(CUgraph, fresh()), NULL, NULL, 0, &node};
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode_v2, &add_node_v2, CUDA_ERROR_INVALID_VALUE, NULL, NULL);
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode_v2, &add_node_v2, CUDA_SUCCESS, write_address,
                   &node.alloc.dptr);
    uint64_t from_add_node_v2 = node.alloc.dptr;
    misuse = misuse_count();
    free_memory.dptr = from_add_node;
    drive(LTCU_ID_cuMemFree_v2, &free_memory, CUDA_SUCCESS);
    free_async.dptr = from_add_node_v2;
    drive(LTCU_ID_cuMemFreeAsync, &free_async, CUDA_SUCCESS);
    CHECK_EQ_INT(misuse_count(), misuse);
    node.type = CU_GRAPH_NODE_TYPE_KERNEL;
    node.alloc.dptr = (CUdeviceptr)fresh(); /* not an allocation: the kernel's parameters overlap */
    drive_callback(CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode_v2, &add_node_v2, CUDA_SUCCESS, NULL, NULL);
    free_memory.dptr = node.alloc.dptr;
    drive(LTCU_ID_cuMemFree_v2, &free_memory, CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(misuse_count(), misuse + 1);

    /* The graph is gone and the driver gives its address to cuMemAlloc:
     * tracked, and freeing it twice is misuse again. */
    uint64_t reused = graph_memory;
    cuMemAlloc_v2_params alloc_again = {(CUdeviceptr *)&reused, 64};
    drive(LTCU_ID_cuMemAlloc_v2, &alloc_again, CUDA_SUCCESS);
    EXPECT_LIVE(LTCU_DEVICE_MEMORY, reused, 64, current);
    free_memory.dptr = reused;
    drive(LTCU_ID_cuMemFree_v2, &free_memory, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_DEVICE_MEMORY, reused);
    CHECK_EQ_INT(misuse_count(), misuse + 1);
    drive(LTCU_ID_cuMemFree_v2, &free_memory, CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(misuse_count(), misuse + 2);
}

/* ---- virtual memory: three lifetimes ------------------------------------------------ */

static void virtual_memory(void)
{
    const uint64_t granule = 1 << 21;
    uint64_t range = fresh() << 8, physical = 7; /* the driver numbers its handles */
    cuMemAddressReserve_params reserve = {(CUdeviceptr *)&range, 4 * granule, 0, 0, 0};
    drive(LTCU_ID_cuMemAddressReserve, &reserve, CUDA_SUCCESS);
    cuMemCreate_params create = {(CUmemGenericAllocationHandle *)&physical, 2 * granule, NULL, 0};
    drive(LTCU_ID_cuMemCreate, &create, CUDA_SUCCESS);

    /* Two mappings of the same memory, one after the other; the first
     * starts where the reservation does (their keys differ). */
    cuMemMap_params map = {range, granule, 0, physical, 0};
    drive(LTCU_ID_cuMemMap, &map, CUDA_ERROR_INVALID_VALUE);
    EXPECT_GONE(LTCU_VA_MAPPING, range);
    drive(LTCU_ID_cuMemMap, &map, CUDA_SUCCESS);
    map.ptr = range + granule;
    map.offset = granule;
    drive(LTCU_ID_cuMemMap, &map, CUDA_SUCCESS);
    EXPECT_LIVE(LTCU_VA_RESERVATION, range, 0, NULL);
    EXPECT_LIVE(LTCU_VA_MAPPING, range, 0, NULL);
    EXPECT_LIVE(LTCU_VA_MAPPING, range + granule, 0, NULL);
    livetrack_object object;
    CHECK(live(LTCU_PHYSICAL_MEMORY, physical, &object) && object.holders == 2 && object.bytes == 2 * granule);

    /* Released while mapped: kept alive by the mappings, not leaked. */
    cuMemRelease_params release = {physical};
    drive(LTCU_ID_cuMemRelease, &release, CUDA_ERROR_INVALID_VALUE);
    CHECK(live(LTCU_PHYSICAL_MEMORY, physical, &object) && object.refs == 1);
    drive(LTCU_ID_cuMemRelease, &release, CUDA_SUCCESS);
    CHECK(live(LTCU_PHYSICAL_MEMORY, physical, &object) && object.refs == 0 && object.holders == 2);

    /* The program takes it back from an address, and releases it again. */
    uint64_t retained = 0;
    cuMemRetainAllocationHandle_params retain = {(CUmemGenericAllocationHandle *)&retained,
                                                 AS(void *, range + 100)};
    retained = physical;
    drive(LTCU_ID_cuMemRetainAllocationHandle, &retain, CUDA_ERROR_INVALID_VALUE);
    CHECK(live(LTCU_PHYSICAL_MEMORY, physical, &object) && object.refs == 0);
    drive(LTCU_ID_cuMemRetainAllocationHandle, &retain, CUDA_SUCCESS);
    CHECK(live(LTCU_PHYSICAL_MEMORY, physical, &object) && object.refs == 1);
    drive(LTCU_ID_cuMemRelease, &release, CUDA_SUCCESS);

    /* One unmap of both; a failed one first changes nothing. */
    cuMemUnmap_params unmap = {range, 2 * granule};
    drive(LTCU_ID_cuMemUnmap, &unmap, CUDA_ERROR_INVALID_VALUE);
    EXPECT_LIVE(LTCU_VA_MAPPING, range, 0, NULL);
    EXPECT_LIVE(LTCU_VA_MAPPING, range + granule, 0, NULL);
    drive(LTCU_ID_cuMemUnmap, &unmap, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_VA_MAPPING, range);
    EXPECT_GONE(LTCU_VA_MAPPING, range + granule);
    EXPECT_GONE(LTCU_PHYSICAL_MEMORY, physical);

    uint64_t misuse = misuse_count();
    drive(LTCU_ID_cuMemUnmap, &unmap, CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(misuse_count(), misuse + 1);
    cuMemAddressFree_params free_range = {range, 4 * granule};
    drive(LTCU_ID_cuMemAddressFree, &free_range, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_VA_RESERVATION, range);
}

/* ---- contexts ------------------------------------------------------------------------ */

static uint64_t make_context(ltcu_call_id id)
{
    uint64_t context = fresh();
    union {
        cuCtxCreate_v2_params v2;
        cuCtxCreate_v3_params v3;
        cuCtxCreate_v4_params v4;
    } params;
    memset(&params, 0, sizeof params);
    /* pctx is the first field of all three */
    params.v2.pctx = (CUcontext *)&context;
    drive(id, &params, CUDA_SUCCESS);
    return context;
}

static void contexts(void)
{
    /* Each cuCtxCreate ABI; a failed one records nothing. */
    uint64_t refused = fresh();
    cuCtxCreate_v4_params refused_params = {(CUcontext *)&refused, NULL, 0, 0};
    drive(LTCU_ID_cuCtxCreate_v4, &refused_params, CUDA_ERROR_INVALID_DEVICE);
    EXPECT_GONE(LTCU_CONTEXT, refused);
    uint64_t v2 = make_context(LTCU_ID_cuCtxCreate_v2), v3 = make_context(LTCU_ID_cuCtxCreate_v3);
    uint64_t v4 = make_context(LTCU_ID_cuCtxCreate_v4);
    EXPECT_LIVE(LTCU_CONTEXT, v2, 0, AS(CUcontext, v2));
    EXPECT_LIVE(LTCU_CONTEXT, v3, 0, AS(CUcontext, v3));
    EXPECT_LIVE(LTCU_CONTEXT, v4, 0, AS(CUcontext, v4));
    drive(LTCU_ID_cuCtxCreate_v2, &refused_params, CUDA_ERROR_INVALID_DEVICE);
    drive(LTCU_ID_cuCtxCreate_v3, &refused_params, CUDA_ERROR_INVALID_DEVICE);

    /* Objects made in v4; destroying it drops and reports them. */
    CUcontext saved = current;
    current = AS(CUcontext, v4);
    uint64_t stream = fresh(), memory = fresh(), graph = fresh();
    cuStreamCreate_params create_stream = {(CUstream *)&stream, 0};
    drive(LTCU_ID_cuStreamCreate, &create_stream, CUDA_SUCCESS);
    cuMemAlloc_v2_params alloc = {(CUdeviceptr *)&memory, 1000};
    drive(LTCU_ID_cuMemAlloc_v2, &alloc, CUDA_SUCCESS);
    cuGraphCreate_params create_graph = {(CUgraph *)&graph, 0};
    drive(LTCU_ID_cuGraphCreate, &create_graph, CUDA_SUCCESS);
    current = saved;

    cuCtxDestroy_v2_params destroy = {AS(CUcontext, v4)};
    uint64_t misuse = misuse_count();
    drive(LTCU_ID_cuCtxDestroy_v2, &destroy, CUDA_ERROR_INVALID_CONTEXT);
    /* the driver refused: everything is back */
    EXPECT_LIVE(LTCU_CONTEXT, v4, 0, AS(CUcontext, v4));
    EXPECT_LIVE(LTCU_STREAM, stream, 0, AS(CUcontext, v4));
    EXPECT_LIVE(LTCU_DEVICE_MEMORY, memory, 1000, AS(CUcontext, v4));
    misuse = misuse_count();
    drive(LTCU_ID_cuCtxDestroy_v2, &destroy, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_CONTEXT, v4);
    EXPECT_GONE(LTCU_STREAM, stream);
    EXPECT_GONE(LTCU_DEVICE_MEMORY, memory);
    /* graphs outlive contexts */
    EXPECT_LIVE(LTCU_GRAPH, graph, 0, NULL);
    /* one summary line and one per object */
    CHECK_EQ_INT(misuse_count(), misuse + 3);
    cuGraphDestroy_params destroy_graph = {AS(CUgraph, graph)};
    drive(LTCU_ID_cuGraphDestroy, &destroy_graph, CUDA_SUCCESS);

    /* An empty context goes quietly; a second destroy is misuse. */
    destroy.ctx = AS(CUcontext, v2);
    misuse = misuse_count();
    drive(LTCU_ID_cuCtxDestroy_v2, &destroy, CUDA_SUCCESS);
    CHECK_EQ_INT(misuse_count(), misuse);
    drive(LTCU_ID_cuCtxDestroy_v2, &destroy, CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ_INT(misuse_count(), misuse + 1);
    destroy.ctx = AS(CUcontext, v3);
    drive(LTCU_ID_cuCtxDestroy_v2, &destroy, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_CONTEXT, v3);
}

/* ---- primary contexts and the runtime ------------------------------------------------ */

typedef struct primary_call {
    ltcu_call_id id;
    CUdevice device;
    uint64_t *context;
    CUresult result;
} primary_call;

static void primary(void *raw)
{
    primary_call *call = raw;
    if (call->id == LTCU_ID_cuDevicePrimaryCtxRetain) {
        cuDevicePrimaryCtxRetain_params retain = {(CUcontext *)call->context, call->device};
        drive(call->id, &retain, call->result);
    } else {
        cuDevicePrimaryCtxRelease_v2_params release = {call->device}; /* same layout for all four */
        drive(call->id, &release, call->result);
    }
}

static void resource(CUpti_CallbackId cbid, CUcontext context, CUstream stream, CUpti_GraphData *graph);

/* CUPTI reports a primary context's reset as its destruction, inside the
 * call. */
static void destruction_reported(void *context)
{
    resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, AS(CUcontext, *(uint64_t *)context), NULL, NULL);
}

static int program_references(uint64_t context)
{
    livetrack_object object;
    return live(LTCU_CONTEXT, context, &object) ? (int)object.refs : 0;
}

static void primary_contexts(void)
{
    uint64_t device_context = fresh();
    primary_call runtime_retain = {LTCU_ID_cuDevicePrimaryCtxRetain, 1, &device_context, CUDA_SUCCESS};
    /* The runtime's own reference is not the program's. */
    in_runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc_v3020", primary, &runtime_retain);
    CHECK_EQ_INT(program_references(device_context), 0);

    /* The program's references are counted. */
    primary_call retain = {LTCU_ID_cuDevicePrimaryCtxRetain, 1, &device_context, CUDA_SUCCESS};
    primary(&retain);
    primary(&retain);
    CHECK_EQ_INT(program_references(device_context), 2);
    retain.result = CUDA_ERROR_INVALID_DEVICE;
    primary(&retain);
    CHECK_EQ_INT(program_references(device_context), 2);

    /* Memory in it, made by the program. */
    uint64_t memory = fresh();
    current = AS(CUcontext, device_context);
    cuMemAlloc_v2_params alloc = {(CUdeviceptr *)&memory, 64};
    drive(LTCU_ID_cuMemAlloc_v2, &alloc, CUDA_SUCCESS);
    current = NULL;

    primary_call release = {LTCU_ID_cuDevicePrimaryCtxRelease_v2, 1, NULL, CUDA_ERROR_INVALID_CONTEXT};
    primary(&release);
    CHECK_EQ_INT(program_references(device_context), 2);
    release.result = CUDA_SUCCESS;
    primary(&release);
    release.id = LTCU_ID_cuDevicePrimaryCtxRelease; /* the CUDA 7 ABI */
    primary(&release);
    CHECK_EQ_INT(program_references(device_context), 0);
    /* the runtime still holds it: what it owns stays */
    EXPECT_LIVE(LTCU_DEVICE_MEMORY, memory, 64, AS(CUcontext, device_context));

    /* Reset destroys what it owns, references unchanged (both ABIs). */
    primary_call reset = {LTCU_ID_cuDevicePrimaryCtxReset_v2, 1, NULL, CUDA_ERROR_INVALID_DEVICE};
    primary(&reset);
    EXPECT_LIVE(LTCU_DEVICE_MEMORY, memory, 64, AS(CUcontext, device_context));
    reset.result = CUDA_SUCCESS;
    uint64_t misuse = misuse_count();
    primary(&reset);
    EXPECT_GONE(LTCU_DEVICE_MEMORY, memory);
    CHECK_EQ_INT(misuse_count(), misuse + 2);
    reset.id = LTCU_ID_cuDevicePrimaryCtxReset;
    primary(&reset);
    reset.result = CUDA_ERROR_INVALID_DEVICE;
    primary(&reset);

    /* A reset that CUPTI reports as the context's destruction keeps the
     * program's references: a reset releases none, and the program's
     * matching release is no misuse. */
    retain.result = CUDA_SUCCESS;
    primary(&retain);
    CHECK_EQ_INT(program_references(device_context), 1);
    cuDevicePrimaryCtxReset_v2_params reset_params = {1};
    drive_with(LTCU_ID_cuDevicePrimaryCtxReset_v2, &reset_params, CUDA_SUCCESS, destruction_reported, &device_context);
    CHECK_EQ_INT(program_references(device_context), 1);
    misuse = misuse_count();
    release.result = CUDA_SUCCESS;
    primary(&release);
    CHECK_EQ_INT(misuse_count(), misuse);
    CHECK_EQ_INT(program_references(device_context), 0);

    /* The runtime's release takes its own reference; with none left
     * anywhere, the context is gone, and so is what it owned. */
    current = AS(CUcontext, device_context);
    drive(LTCU_ID_cuMemAlloc_v2, &alloc, CUDA_SUCCESS);
    current = NULL;
    primary_call runtime_release = {LTCU_ID_cuDevicePrimaryCtxRelease_v2, 1, NULL, CUDA_SUCCESS};
    in_runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, "cudaDeviceReset_v3020", primary,
                    &runtime_release);
    EXPECT_GONE(LTCU_DEVICE_MEMORY, memory);

    /* Released more often than retained: misuse. */
    misuse = misuse_count();
    release.result = CUDA_ERROR_INVALID_CONTEXT;
    primary(&release);
    CHECK_EQ_INT(misuse_count(), misuse + 1);
    /* A device never retained: misuse too. */
    release.device = 0;
    primary(&release);
    CHECK_EQ_INT(misuse_count(), misuse + 2);

    /* cuCtxDestroy on a primary context: misuse, nothing dropped. */
    cuCtxDestroy_v2_params destroy = {AS(CUcontext, device_context)};
    drive(LTCU_ID_cuCtxDestroy_v2, &destroy, CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ_INT(misuse_count(), misuse + 3);
}

/* ---- modules the runtime loads for itself -------------------------------------------- */

typedef struct load {
    ltcu_call_id id;
    uint64_t handle;
    CUresult result;
    const void *image; /* the code loaded (NULL: "image", a string literal) */
} load;

/* Device code as nvcc embeds it, in sections of these names, which only
 * the CUDA runtime loads: the code, and the wrapper the runtime registers
 * and (CUDA 13) hands to cuLibraryLoadData. */
__attribute__((section(".nv_fatbin"), used)) static const unsigned char compiled_in_code[64] = {0x50, 0xed, 0x55, 0xba};
__attribute__((section(".nvFatBinSegment"), used)) static const struct {
    int magic, version;
    const void *data, *unused;
} compiled_in_wrapper[2] = {{0x466243b1, 1, compiled_in_code, NULL}, {0x466243b1, 1, compiled_in_code, NULL}};
/* Not nvcc's: a longer name that starts like one. */
__attribute__((section(".nvFatBinSegmentCopy"), used)) static const unsigned char lookalike_code[64] = {1};
/* Thread-local data: .tbss takes addresses it never occupies, which may
 * span the sections above. */
static __thread char thread_scratch[16384] __attribute__((used));

static void load_code(void *raw)
{
    load *l = raw;
    if (l->id == LTCU_ID_cuModuleLoadData) {
        cuModuleLoadData_params params = {(CUmodule *)&l->handle, "image"};
        drive(l->id, &params, l->result);
    } else if (l->id == LTCU_ID_cuLibraryLoadData) {
        /* What the runtime passes: the image is kept where it is. */
        CUlibraryOption options[] = {CU_LIBRARY_BINARY_IS_PRESERVED};
        void *values[] = {(void *)1};
        cuLibraryLoadData_params params = {(CUlibrary *)&l->handle, l->image ? l->image : "image", NULL, NULL, 0,
                                           options, values, 1};
        drive(l->id, &params, l->result);
    } else if (l->id == LTCU_ID_cuModuleUnload) {
        cuModuleUnload_params params = {AS(CUmodule, l->handle)};
        drive(l->id, &params, l->result);
    } else {
        cuLibraryUnload_params params = {AS(CUlibrary, l->handle)};
        drive(l->id, &params, l->result);
    }
}

static void runtime_code(void)
{
    /* The kernels' module, loaded lazily in a launch: not the program's;
     * its unload at the runtime's teardown (outside any runtime call) is
     * not misuse. */
    load module = {LTCU_ID_cuModuleLoadData, fresh(), CUDA_SUCCESS, NULL};
    current = AS(CUcontext, fresh());
    in_runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000", load_code, &module);
    EXPECT_GONE(LTCU_MODULE, module.handle);
    uint64_t misuse = misuse_count();
    module.id = LTCU_ID_cuModuleUnload;
    load_code(&module);
    CHECK_EQ_INT(misuse_count(), misuse);
    /* Twice is misuse. */
    load_code(&module);
    CHECK_EQ_INT(misuse_count(), misuse + 1);

    /* A library the program loads through the runtime is the program's
     * (cudaLibraryLoadData came with CUDA 12.6). */
    load library = {LTCU_ID_cuLibraryLoadData, fresh(), CUDA_SUCCESS, NULL};
#if CUDA_VERSION >= 12060
    in_runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaLibraryLoadData_v12060, "cudaLibraryLoadData_v12060", load_code,
                    &library);
#else
    load_code(&library);
#endif
    EXPECT_LIVE(LTCU_LIBRARY, library.handle, 0, NULL);
    /* ... and one the runtime loads for itself is not. */
    load own = {LTCU_ID_cuLibraryLoadData, fresh(), CUDA_SUCCESS, NULL};
    in_runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000", load_code, &own);
    EXPECT_GONE(LTCU_LIBRARY, own.handle);
    /* The CUDA 13 runtime loads a kernel's library in a launch's first
     * step, with no runtime callback around it: the image tells. */
    load lazy = {LTCU_ID_cuLibraryLoadData, fresh(), CUDA_SUCCESS, &compiled_in_wrapper[1]};
    load_code(&lazy);
    EXPECT_GONE(LTCU_LIBRARY, lazy.handle);
    load lazy_code = {LTCU_ID_cuLibraryLoadData, fresh(), CUDA_SUCCESS, compiled_in_code + 8};
    load_code(&lazy_code);
    EXPECT_GONE(LTCU_LIBRARY, lazy_code.handle);
    /* A driver API program's own library, outside any runtime call, from
     * the heap or the program's read-only data. */
    unsigned char *read_in = calloc(1, 64);
    CHECK(read_in != NULL);
    load direct = {LTCU_ID_cuLibraryLoadData, fresh(), CUDA_SUCCESS, read_in};
    load_code(&direct);
    EXPECT_LIVE(LTCU_LIBRARY, direct.handle, 0, NULL);
    load embedded = {LTCU_ID_cuLibraryLoadData, fresh(), CUDA_SUCCESS, NULL};
    load_code(&embedded);
    EXPECT_LIVE(LTCU_LIBRARY, embedded.handle, 0, NULL);
    load lookalike = {LTCU_ID_cuLibraryLoadData, fresh(), CUDA_SUCCESS, lookalike_code};
    load_code(&lookalike);
    EXPECT_LIVE(LTCU_LIBRARY, lookalike.handle, 0, NULL);
    thread_scratch[0] = 1;
    own.id = library.id = lazy.id = lazy_code.id = direct.id = embedded.id = lookalike.id = LTCU_ID_cuLibraryUnload;
    misuse = misuse_count();
    load_code(&own);
    load_code(&library);
    load_code(&lazy);
    load_code(&lazy_code);
    load_code(&direct);
    load_code(&embedded);
    load_code(&lookalike);
    free(read_in);
    EXPECT_GONE(LTCU_LIBRARY, library.handle);
    EXPECT_GONE(LTCU_LIBRARY, direct.handle);
    EXPECT_GONE(LTCU_LIBRARY, embedded.handle);
    CHECK_EQ_INT(misuse_count(), misuse);
    current = NULL;
}

/* The cuda* call names the objects and the misuse: CUPTI's versioned
 * name, without the version. */
static void free_twice_in_cudaFree(void *raw)
{
    cuMemFree_v2_params *params = raw;
    drive(LTCU_ID_cuMemFree_v2, params, CUDA_SUCCESS);
}

static void run_in_cudaFree(void *raw)
{
    in_runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, "cudaFree_v3020", free_twice_in_cudaFree, raw);
}

static void runtime_names(void)
{
    uint64_t never = fresh();
    cuMemFree_v2_params params = {never};
    char text[4096];
    capture_stderr(run_in_cudaFree, &params, text, sizeof text);
    char expected[64];
    snprintf(expected, sizeof expected, "cudaFree(0x%llx)", (unsigned long long)never);
    if (!strstr(text, expected))
        fprintf(stderr, "expected \"%s\" in:\n%s\n", expected, text);
    CHECK(strstr(text, expected) != NULL);
    CHECK(strstr(text, "cudaFree_v3020") == NULL);
}

/* ---- resource domain: what goes implicitly ------------------------------------------- */

static void resource(CUpti_CallbackId cbid, CUcontext context, CUstream stream, CUpti_GraphData *graph)
{
    CUpti_ResourceData data;
    memset(&data, 0, sizeof data);
    data.context = context;
    data.resourceHandle.stream = stream;
    data.resourceDescriptor = graph;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

static void resource_domain(void)
{
    /* The callbacks the CUPTI mode enables are the ones handled here. */
    CUpti_CallbackId ids[8];
    CHECK_EQ_INT(ltcu_cupti_resource_callbacks(ids, 8), 4);
    CUpti_CallbackId driver_ids[CUPTI_DRIVER_TRACE_CBID_SIZE];
    CHECK_EQ_INT(ltcu_cupti_driver_callbacks(driver_ids, CUPTI_DRIVER_TRACE_CBID_SIZE), LTCU_CALL_COUNT);

    uint64_t context = make_context(LTCU_ID_cuCtxCreate_v4);
    current = AS(CUcontext, context);
    uint64_t stream = fresh(), event = fresh(), graph = fresh(), exec = fresh(), other_stream = fresh();
    cuStreamCreate_params create_stream = {(CUstream *)&stream, 0};
    drive(LTCU_ID_cuStreamCreate, &create_stream, CUDA_SUCCESS);
    create_stream.phStream = (CUstream *)&other_stream;
    drive(LTCU_ID_cuStreamCreate, &create_stream, CUDA_SUCCESS);
    cuEventCreate_params create_event = {(CUevent *)&event, 0};
    drive(LTCU_ID_cuEventCreate, &create_event, CUDA_SUCCESS);
    cuGraphCreate_params create_graph = {(CUgraph *)&graph, 0};
    drive(LTCU_ID_cuGraphCreate, &create_graph, CUDA_SUCCESS);
    cuGraphInstantiateWithFlags_params instantiate = {(CUgraphExec *)&exec, AS(CUgraph, graph), 0};
    drive(LTCU_ID_cuGraphInstantiateWithFlags, &instantiate, CUDA_SUCCESS);
    current = NULL;

    /* Streams, graphs and executable graphs the driver destroys: quietly. */
    uint64_t misuse = misuse_count();
    resource(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, AS(CUcontext, context), AS(CUstream, stream), NULL);
    EXPECT_GONE(LTCU_STREAM, stream);
    CUpti_GraphData graph_data = {.graph = AS(CUgraph, graph), .graphExec = AS(CUgraphExec, exec)};
    resource(CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING, NULL, NULL, &graph_data);
    EXPECT_GONE(LTCU_GRAPH_EXEC, exec);
    resource(CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, NULL, NULL, &graph_data);
    EXPECT_GONE(LTCU_GRAPH, graph);
    resource(CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, NULL, NULL, NULL); /* no data: ignored */
    CHECK_EQ_INT(misuse_count(), misuse);

    /* A context that goes without cuCtxDestroy: its objects are dropped
     * and reported (a summary, then each). */
    resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, AS(CUcontext, context), NULL, NULL);
    EXPECT_GONE(LTCU_CONTEXT, context);
    EXPECT_GONE(LTCU_STREAM, other_stream);
    EXPECT_GONE(LTCU_EVENT, event);
    CHECK_EQ_INT(misuse_count(), misuse + 3);
    /* Again: nothing left, nothing said. */
    resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, AS(CUcontext, context), NULL, NULL);
    CHECK_EQ_INT(misuse_count(), misuse + 3);
}

/* ---- robustness ------------------------------------------------------------------------ */

static void odd_callbacks(void)
{
    /* Untracked ids, other domains, no data, exit without entry. */
    CUpti_CallbackData data;
    memset(&data, 0, sizeof data);
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuInit, &data);
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE + 5, &data);
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_SYNCHRONIZE, 1, &data);
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, NULL);
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE + 5, &data);
    data.callbackSite = CUPTI_API_EXIT;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, 1, &data); /* exit of nothing */

    /* An exit whose entry was never seen still records what it made. */
    uint64_t memory = fresh(), correlation = 0;
    CUresult ok = CUDA_SUCCESS;
    cuMemAlloc_v2_params alloc = {(CUdeviceptr *)&memory, 8};
    data.functionParams = &alloc;
    data.functionReturnValue = &ok;
    data.correlationData = &correlation;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &data);
    EXPECT_LIVE(LTCU_DEVICE_MEMORY, memory, 8, NULL);
    /* and no return value reads as a failure */
    uint64_t unseen = fresh();
    alloc.dptr = (CUdeviceptr *)&unseen;
    data.functionReturnValue = NULL;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &data);
    EXPECT_GONE(LTCU_DEVICE_MEMORY, unseen);
    /* A null out-pointer is skipped. */
    cuMemAlloc_v2_params no_out = {NULL, 8};
    drive(LTCU_ID_cuMemAlloc_v2, &no_out, CUDA_SUCCESS);
}

/* Driver calls nested deeper than the handler keeps state for (a driver
 * call made from inside another's callbacks): a destroy down there still
 * takes its object out, a failed one leaves it, and the outer calls still
 * record what they made. */
static void deep_calls(void)
{
    enum { OUTER = 6 };
    uint64_t outer[OUTER], correlation[OUTER];
    cuMemAlloc_v2_params allocs[OUTER];
    CUpti_CallbackData data[OUTER];
    CUresult ok = CUDA_SUCCESS, refused = CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < OUTER; i++) {
        outer[i] = 0;
        correlation[i] = 0;
        allocs[i] = (cuMemAlloc_v2_params){(CUdeviceptr *)&outer[i], 16};
        memset(&data[i], 0, sizeof data[i]);
        data[i].callbackSite = CUPTI_API_ENTER;
        data[i].functionName = "an outer driver call";
        data[i].functionParams = &allocs[i];
        data[i].functionReturnValue = &ok;
        data[i].context = current;
        data[i].correlationData = &correlation[i];
        ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &data[i]);
    }
    /* made before the nesting, freed inside it */
    uint64_t freed = fresh(), kept = fresh();
    cuMemAlloc_v2_params make_freed = {(CUdeviceptr *)&freed, 32}, make_kept = {(CUdeviceptr *)&kept, 48};
    CUpti_CallbackData inner;
    uint64_t inner_correlation = 0;
    memset(&inner, 0, sizeof inner);
    inner.callbackSite = CUPTI_API_EXIT; /* their entries came before the nesting */
    inner.functionReturnValue = &ok;
    inner.context = current;
    inner.correlationData = &inner_correlation;
    inner.functionParams = &make_freed;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &inner);
    inner.functionParams = &make_kept;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &inner);
    EXPECT_LIVE(LTCU_DEVICE_MEMORY, freed, 32, current);
    EXPECT_LIVE(LTCU_DEVICE_MEMORY, kept, 48, current);

    cuMemFree_v2_params free_params = {freed};
    inner.functionParams = &free_params;
    inner.callbackSite = CUPTI_API_ENTER;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &inner);
    inner.callbackSite = CUPTI_API_EXIT;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &inner);
    EXPECT_GONE(LTCU_DEVICE_MEMORY, freed);

    cuMemFree_v2_params refused_free = {kept};
    inner.functionParams = &refused_free;
    inner.functionReturnValue = &refused;
    inner.callbackSite = CUPTI_API_ENTER;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &inner);
    inner.callbackSite = CUPTI_API_EXIT;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &inner);
    EXPECT_LIVE(LTCU_DEVICE_MEMORY, kept, 48, current);

    /* A deep stream destroy: the resource domain takes the stream out
     * during the call, and the late exit finds it gone: no misuse. */
    uint64_t stream = fresh(), misuse = misuse_count();
    cuStreamCreate_params create_stream = {(CUstream *)&stream, 0};
    inner.functionParams = &create_stream;
    inner.functionReturnValue = &ok;
    inner.callbackSite = CUPTI_API_EXIT;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, &inner);
    EXPECT_LIVE(LTCU_STREAM, stream, 0, current);
    cuStreamDestroy_v2_params destroy_stream = {AS(CUstream, stream)};
    inner.functionParams = &destroy_stream;
    inner.callbackSite = CUPTI_API_ENTER;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy_v2, &inner);
    resource(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, current, AS(CUstream, stream), NULL);
    inner.callbackSite = CUPTI_API_EXIT;
    ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy_v2, &inner);
    EXPECT_GONE(LTCU_STREAM, stream);
    CHECK_EQ_INT(misuse_count(), misuse);

    for (int i = OUTER; i-- > 0;) {
        outer[i] = fresh();
        data[i].callbackSite = CUPTI_API_EXIT;
        ltcu_cupti_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &data[i]);
        EXPECT_LIVE(LTCU_DEVICE_MEMORY, outer[i], 16, current);
    }
    for (int i = 0; i < OUTER; i++) {
        cuMemFree_v2_params release = {outer[i]};
        drive(LTCU_ID_cuMemFree_v2, &release, CUDA_SUCCESS);
    }
    drive(LTCU_ID_cuMemFree_v2, &refused_free, CUDA_SUCCESS);
    EXPECT_GONE(LTCU_DEVICE_MEMORY, kept);
}

int main(void)
{
    /* cuda.cuda_cupti_handler_deleted: this program's file is removed
     * first, as when a program is rebuilt while it runs; its sections
     * must still be read (runtime_code). */
    if (getenv("CUDA_TEST_UNLINK_SELF")) {
        char self[4096];
        ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
        CHECK(length > 0);
        if (length > 0) {
            self[length] = '\0';
            CHECK(unlink(self) == 0);
        }
    }
    ltcu_declare_types();
    current = AS(CUcontext, fresh());
    objects_in_a_context();
    objects_outside_contexts();
    older_abis();
    allocations();
    graph_memory_nodes();
    current = AS(CUcontext, fresh());
    virtual_memory();
    contexts();
    primary_contexts();
    runtime_code();
    runtime_names();
    resource_domain();
    odd_callbacks();
    deep_calls();

    /* Every tracked call, both ways. */
    for (int id = 0; id < LTCU_CALL_COUNT; id++) {
        if (!succeeded[id] || !failed[id])
            fprintf(stderr, "%s: %d successful, %d failed calls driven\n", ltcu_calls[id].symbol, succeeded[id],
                    failed[id]);
        CHECK(succeeded[id] > 0 && failed[id] > 0);
    }
    return check_summary("cuda_cupti_handler");
}
