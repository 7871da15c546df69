/*
 * Interposition (LD_PRELOAD=liblivetrack_cuda.so) of a driver-API program
 * calling the driver's exported functions, on the fake libcuda.so.1.
 *
 * Every family of tracked calls is made through the exports, then checked
 * in the registry (type, size, owning context) and against the fake
 * driver's own count of what is live; failed calls record nothing; misuse
 * is reported and the driver's answer reaches the program unchanged; a
 * context's end drops what it owned; threads freeing and allocating at
 * once never confuse an address the driver hands out again.
 */
#include <pthread.h>
#include <sched.h>

#include "cuda_test_util.h"
#include "fake_cuda.h"

static CUcontext context;

/* The CUDA 11 ABI of cuGraphInstantiate, which cuda.h 13 no longer declares. */
CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                       char *logBuffer, size_t bufferSize);

#define H CUDA_TEST_HANDLE

static void check_owned(const char *type, uint64_t handle, uint64_t bytes, CUcontext owner)
{
    livetrack_object object;
    int found = cuda_live(type, handle, &object);
    if (!found)
        fprintf(stderr, "%s 0x%llx is not tracked\n", type, (unsigned long long)handle);
    CHECK(found);
    if (found) {
        CHECK_EQ_INT(object.bytes, bytes);
        CHECK(object.owner == (const void *)owner);
        CHECK_EQ_INT(object.refs, 1);
    }
}

static void streams_events_graphs(void)
{
    CUstream stream = NULL, priority = NULL;
    CHECK_EQ_INT(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamCreateWithPriority(&priority, 0, -1), CUDA_SUCCESS);
    check_owned("CUstream", H(stream), 0, context);
    check_owned("CUstream", H(priority), 0, context);

    CUevent event = NULL;
    CHECK_EQ_INT(cuEventCreate(&event, 0), CUDA_SUCCESS);
    check_owned("CUevent", H(event), 0, context);

    CUgraph graph = NULL, clone = NULL, captured = NULL;
    CHECK_EQ_INT(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphClone(&clone, graph), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamEndCapture(stream, &captured), CUDA_SUCCESS);
    check_owned("CUgraph", H(graph), 0, NULL);
    check_owned("CUgraph", H(clone), 0, NULL);
    check_owned("CUgraph", H(captured), 0, NULL);
    /* Captured into the program's own graph: handed back, and still
     * recorded where it was made (its creation sequence unchanged). */
    livetrack_object before, after;
    CUgraph recaptured = NULL;
    CHECK(cuda_live("CUgraph", H(graph), &before));
    CHECK_EQ_INT(cuStreamBeginCaptureToGraph(stream, graph, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamEndCapture(stream, &recaptured), CUDA_SUCCESS);
    CHECK(recaptured == graph);
    CHECK(cuda_live("CUgraph", H(graph), &after));
    CHECK_EQ_INT(after.seq, before.seq);
    check_owned("CUgraph", H(graph), 0, NULL);

    CUgraphExec exec = NULL, with_params = NULL, legacy = NULL;
    CHECK_EQ_INT(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS); /* cuGraphInstantiateWithFlags */
    CUDA_GRAPH_INSTANTIATE_PARAMS params = {0};
    CHECK_EQ_INT(cuGraphInstantiateWithParams(&with_params, clone, &params), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphInstantiate_v2(&legacy, captured, NULL, NULL, 0), CUDA_SUCCESS);
    check_owned("CUgraphExec", H(exec), 0, context);
    check_owned("CUgraphExec", H(with_params), 0, context);
    check_owned("CUgraphExec", H(legacy), 0, context);

    CHECK_EQ_INT(cuGraphExecDestroy(exec), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphExecDestroy(with_params), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphExecDestroy(legacy), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphDestroy(graph), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphDestroy(clone), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphDestroy(captured), CUDA_SUCCESS);
    CHECK_EQ_INT(cuEventDestroy(event), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamDestroy(priority), CUDA_SUCCESS);

    /* A destroy the driver refuses: the program gets the driver's error
     * and the stream stays tracked, where it was made. */
    livetrack_object made;
    CHECK(cuda_live("CUstream", H(stream), &made));
    fake_cuda_fail_next("cuStreamDestroy_v2", CUDA_ERROR_NOT_READY);
    CHECK_EQ_INT(cuStreamDestroy(stream), CUDA_ERROR_NOT_READY);
    check_owned("CUstream", H(stream), 0, context);
    livetrack_object again;
    CHECK(cuda_live("CUstream", H(stream), &again) && again.stack == made.stack && again.refs == made.refs);
    CHECK_EQ_INT(cuStreamDestroy(stream), CUDA_SUCCESS);
    CHECK(!cuda_live("CUstream", H(stream), NULL));
}

/* A green context's stream is made in the green context and destroyed
 * with cuStreamDestroy; it belongs to no context livetrack tracks. */
static void green_context_stream(void)
{
    size_t before = cuda_live_count();
    uint64_t misuse = cuda_misuse_count();
    CUgreenCtx green = NULL;
    CHECK_EQ_INT(cuGreenCtxCreate(&green, NULL, 0, CU_GREEN_CTX_DEFAULT_STREAM), CUDA_SUCCESS);
    CUstream stream = NULL;
    CHECK_EQ_INT(cuGreenCtxStreamCreate(&stream, green, 0, 0), CUDA_ERROR_INVALID_VALUE); /* must not block */
    CHECK_EQ_INT(cuda_live_count(), before);
    CHECK_EQ_INT(cuGreenCtxStreamCreate(&stream, green, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
    check_owned("CUstream", H(stream), 0, NULL);
    CHECK_EQ_INT(cuStreamDestroy(stream), CUDA_SUCCESS);
    CHECK(!cuda_live("CUstream", H(stream), NULL));
    CHECK_EQ_INT(cuGreenCtxDestroy(green), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_live_count(), before);
    CHECK_EQ_INT(cuda_misuse_count(), misuse);
}

/* An event another process shares is opened here with
 * cuIpcOpenEventHandle and ended with cuEventDestroy, like one made here. */
static void ipc_event(void)
{
    CUipcEventHandle shared;
    memset(&shared, 0, sizeof shared);
    CUevent opened = NULL;
    size_t before = cuda_live_count();
    fake_cuda_fail_next("cuIpcOpenEventHandle", CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuIpcOpenEventHandle(&opened, shared), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuda_live_count(), before);
    uint64_t misuse = cuda_misuse_count();
    CHECK_EQ_INT(cuIpcOpenEventHandle(&opened, shared), CUDA_SUCCESS);
    check_owned("CUevent", H(opened), 0, context);
    CHECK_EQ_INT(cuEventDestroy(opened), CUDA_SUCCESS);
    CHECK(!cuda_live("CUevent", H(opened), NULL));
    CHECK_EQ_INT(cuda_misuse_count(), misuse);
}

/* Memory another process shares is mapped here with cuIpcOpenMemHandle
 * and unmapped with cuIpcCloseMemHandle; cuMemFree of it is misuse (the
 * driver refuses it too), and the mapping stays. */
static void ipc_memory(void)
{
    CUipcMemHandle shared;
    memset(&shared, 0, sizeof shared);
    CUdeviceptr mapped = 0;
    livetrack_object object;
    size_t before = cuda_live_count();
    CHECK_EQ_INT(cuIpcOpenMemHandle(&mapped, shared, 0x80), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuda_live_count(), before);
    uint64_t misuse = cuda_misuse_count();
    CHECK_EQ_INT(cuIpcOpenMemHandle(&mapped, shared, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
    /* The handle does not say the size: the driver is asked. */
    check_owned("ipc_memory", H(mapped), FAKE_IPC_BYTES_PER_EXPORT, context);
    CHECK(cuMemFree(mapped) != CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_misuse_count(), misuse + 1);
    check_owned("ipc_memory", H(mapped), FAKE_IPC_BYTES_PER_EXPORT, context);
    CHECK_EQ_INT(cuIpcCloseMemHandle(mapped), CUDA_SUCCESS);
    CHECK(!cuda_live("ipc_memory", H(mapped), NULL));
    CHECK_EQ_INT(cuIpcCloseMemHandle(mapped), CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ_INT(cuda_misuse_count(), misuse + 2);
    CHECK_EQ_INT(cuda_live_count(), before);

    /* Opened twice, the same mapping with two references: one close
     * leaves it mapped (a leak if it stays so), the second ends it. */
    shared.reserved[0] = 7;
    CUdeviceptr first = 0, second = 0;
    CHECK_EQ_INT(cuIpcOpenMemHandle(&first, shared, 0), CUDA_SUCCESS);
    /* The second open adds a reference and keeps the size, even when the
     * driver cannot say it this time. */
    fake_cuda_fail_next("cuMemGetAddressRange_v2", CUDA_ERROR_NOT_FOUND);
    CHECK_EQ_INT(cuIpcOpenMemHandle(&second, shared, 0), CUDA_SUCCESS);
    CHECK(first == second);
    CHECK(cuda_live("ipc_memory", H(first), &object) && object.refs == 2 &&
          object.bytes == FAKE_IPC_BYTES_PER_EXPORT * 8);
    CHECK_EQ_INT(cuIpcCloseMemHandle(first), CUDA_SUCCESS);
    check_owned("ipc_memory", H(first), FAKE_IPC_BYTES_PER_EXPORT * 8, context);
    CHECK_EQ_INT(cuIpcCloseMemHandle(second), CUDA_SUCCESS);
    CHECK(!cuda_live("ipc_memory", H(first), NULL));
    CHECK_EQ_INT(cuda_misuse_count(), misuse + 2);
    CHECK_EQ_INT(cuda_live_count(), before);

    /* The driver cannot say the size: the mapping is tracked, with 0 bytes. */
    shared.reserved[0] = 9;
    fake_cuda_fail_next("cuMemGetAddressRange_v2", CUDA_ERROR_NOT_FOUND);
    CHECK_EQ_INT(cuIpcOpenMemHandle(&mapped, shared, 0), CUDA_SUCCESS);
    check_owned("ipc_memory", H(mapped), 0, context);
    CHECK_EQ_INT(cuIpcCloseMemHandle(mapped), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_live_count(), before);
}

static void code_and_arrays(void)
{
    static const char image[] = "not really a cubin";
    CUmodule module = NULL, from_file = NULL;
    CHECK_EQ_INT(cuModuleLoadData(&module, image), CUDA_SUCCESS);
    CHECK_EQ_INT(cuModuleLoad(&from_file, "kernels.cubin"), CUDA_SUCCESS);
    check_owned("CUmodule", H(module), 0, context);
    CUlibrary library = NULL;
    CHECK_EQ_INT(cuLibraryLoadData(&library, image, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
    check_owned("CUlibrary", H(library), 0, NULL);
    CUlinkState link = NULL;
    CHECK_EQ_INT(cuLinkCreate(0, NULL, NULL, &link), CUDA_SUCCESS);
    check_owned("CUlinkState", H(link), 0, context);

    CUDA_ARRAY_DESCRIPTOR flat = {.Width = 128, .Height = 4, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 2};
    CUDA_ARRAY3D_DESCRIPTOR volume = {.Width = 4, .Height = 4, .Depth = 4, .Format = CU_AD_FORMAT_FLOAT,
                                      .NumChannels = 1};
    CUarray array = NULL, array3d = NULL;
    CUmipmappedArray mipmapped = NULL;
    CHECK_EQ_INT(cuArrayCreate(&array, &flat), CUDA_SUCCESS);
    CHECK_EQ_INT(cuArray3DCreate(&array3d, &volume), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMipmappedArrayCreate(&mipmapped, &volume, 3), CUDA_SUCCESS);
    check_owned("CUarray", H(array), 128 * 4 * 2, context);
    check_owned("CUarray", H(array3d), 4 * 4 * 4 * 4, context);
    check_owned("CUmipmappedArray", H(mipmapped), (64 + 8 + 1) * 4, context);
    /* Layered and cubemap arrays: Depth counts layers or faces, and every
     * level has all of them; only width and height halve. */
    CUDA_ARRAY3D_DESCRIPTOR layers = {.Width = 8, .Height = 8, .Depth = 6, .Format = CU_AD_FORMAT_FLOAT,
                                      .NumChannels = 1, .Flags = CUDA_ARRAY3D_LAYERED};
    CUDA_ARRAY3D_DESCRIPTOR cube = layers;
    cube.Flags = CUDA_ARRAY3D_CUBEMAP;
    CUDA_ARRAY3D_DESCRIPTOR cube_layers = layers;
    cube_layers.Depth = 12;
    cube_layers.Flags = CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED;
    CUmipmappedArray layered_mipmapped = NULL, cube_mipmapped = NULL, cube_layered_mipmapped = NULL;
    CHECK_EQ_INT(cuMipmappedArrayCreate(&layered_mipmapped, &layers, 3), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMipmappedArrayCreate(&cube_mipmapped, &cube, 3), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMipmappedArrayCreate(&cube_layered_mipmapped, &cube_layers, 3), CUDA_SUCCESS);
    check_owned("CUmipmappedArray", H(layered_mipmapped), (64 + 16 + 4) * 6 * 4, context);
    check_owned("CUmipmappedArray", H(cube_mipmapped), (64 + 16 + 4) * 6 * 4, context);
    check_owned("CUmipmappedArray", H(cube_layered_mipmapped), (64 + 16 + 4) * 12 * 4, context);

    CUDA_RESOURCE_DESC resource = {.resType = CU_RESOURCE_TYPE_ARRAY, .res.array.hArray = array};
    CUDA_TEXTURE_DESC texture_desc = {0};
    CUtexObject texture = 0;
    CUsurfObject surface = 0;
    CHECK_EQ_INT(cuTexObjectCreate(&texture, &resource, &texture_desc, NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuSurfObjectCreate(&surface, &resource), CUDA_SUCCESS);
    /* The driver numbers these from 1: their keys carry the type. */
    check_owned("CUtexObject", texture, 0, context);
    check_owned("CUsurfObject", surface, 0, context);

    CHECK_EQ_INT(cuTexObjectDestroy(texture), CUDA_SUCCESS);
    CHECK_EQ_INT(cuSurfObjectDestroy(surface), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMipmappedArrayDestroy(cube_layered_mipmapped), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMipmappedArrayDestroy(cube_mipmapped), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMipmappedArrayDestroy(layered_mipmapped), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMipmappedArrayDestroy(mipmapped), CUDA_SUCCESS);
    CHECK_EQ_INT(cuArrayDestroy(array3d), CUDA_SUCCESS);
    CHECK_EQ_INT(cuArrayDestroy(array), CUDA_SUCCESS);
    CHECK_EQ_INT(cuLinkDestroy(link), CUDA_SUCCESS);
    CHECK_EQ_INT(cuLibraryUnload(library), CUDA_SUCCESS);
    CHECK_EQ_INT(cuModuleUnload(from_file), CUDA_SUCCESS);
    CHECK_EQ_INT(cuModuleUnload(module), CUDA_SUCCESS);
    CHECK(!cuda_live("CUmodule", H(module), NULL));
    CHECK(!cuda_live("CUtexObject", texture, NULL));
}

static void allocations(void)
{
    CUdeviceptr device = 0, pitched = 0, managed = 0, async = 0, pooled = 0;
    void *pinned = NULL, *host = NULL;
    size_t pitch = 0;
    CHECK_EQ_INT(cuMemAlloc(&device, 1000), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocPitch(&pitched, &pitch, 100, 3, 4), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocManaged(&managed, 300, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocHost(&pinned, 400), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemHostAlloc(&host, 500, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocAsync(&async, 600, NULL), CUDA_SUCCESS);
    check_owned("CUdeviceptr", device, 1000, context);
    check_owned("CUdeviceptr", pitched, pitch * 3, context);
    check_owned("managed", managed, 300, context);
    check_owned("host_pinned", H(pinned), 400, context);
    check_owned("host_pinned", H(host), 500, context);
    check_owned("device_async", async, 600, NULL);

    CUmemPoolProps props = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                            .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUmemoryPool pool = NULL;
    CHECK_EQ_INT(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocFromPoolAsync(&pooled, 700, pool, NULL), CUDA_SUCCESS);
    livetrack_object object;
    CHECK(cuda_live("device_async", pooled, &object) && object.bytes == 700 &&
          object.parents[0] == cuda_key("CUmemoryPool", H(pool)));
    /* The pool outlives its destroy while memory from it is out. */
    CHECK_EQ_INT(cuMemPoolDestroy(pool), CUDA_SUCCESS);
    CHECK(cuda_live("CUmemoryPool", H(pool), &object) && object.refs == 0 && object.holders == 1);

    static char buffer[4096];
    CHECK_EQ_INT(cuMemHostRegister(buffer, sizeof buffer, 0), CUDA_SUCCESS);
    check_owned("host_registered", H(buffer), sizeof buffer, context);

    /* A failed allocation records nothing, and the program gets the
     * driver's error. */
    size_t before = cuda_live_count();
    CUdeviceptr nothing = 0;
    CHECK_EQ_INT(cuMemAlloc(&nothing, 0), CUDA_ERROR_INVALID_VALUE);
    fake_cuda_fail_next("cuMemAllocHost_v2", CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ_INT(cuMemAllocHost(&host, 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ_INT(cuda_live_count(), before);

    CHECK_EQ_INT(cuMemHostUnregister(buffer), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFreeAsync(pooled, NULL), CUDA_SUCCESS);
    CHECK(!cuda_live("CUmemoryPool", H(pool), NULL));
    CHECK_EQ_INT(cuMemFree(async), CUDA_SUCCESS); /* either free takes any device allocation */
    CHECK_EQ_INT(cuMemFreeAsync(managed, NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFreeHost(host), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFreeHost(pinned), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFree(pitched), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFree(device), CUDA_SUCCESS);
    CHECK(!cuda_live("CUdeviceptr", device, NULL));
}

/* A pool another process shares, opened here: cuMemPoolDestroy ends it,
 * and a pointer imported from it holds it until freed. */
static void imported_pool(void)
{
    size_t before = cuda_live_count();
    uint64_t misuse = cuda_misuse_count();
    void *shared_fd = (void *)(intptr_t)3;
    CUmemoryPool pool = NULL;
    fake_cuda_fail_next("cuMemPoolImportFromShareableHandle", CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemPoolImportFromShareableHandle(&pool, shared_fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                 CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuda_live_count(), before);
    CHECK_EQ_INT(cuMemPoolImportFromShareableHandle(&pool, shared_fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                 CUDA_SUCCESS);
    check_owned("CUmemoryPool", H(pool), 0, NULL);

    CUmemPoolPtrExportData exported;
    memset(&exported, 0, sizeof exported);
    CUdeviceptr imported = 0;
    CHECK_EQ_INT(cuMemPoolImportPointer(&imported, pool, &exported), CUDA_SUCCESS);
    livetrack_object object;
    CHECK(cuda_live("device_async", imported, &object) && object.parents[0] == cuda_key("CUmemoryPool", H(pool)));
    CHECK_EQ_INT(object.bytes, FAKE_IMPORTED_POINTER_BYTES); /* the exporter's size, asked of the driver */
    CHECK_EQ_INT(cuMemPoolDestroy(pool), CUDA_SUCCESS);
    CHECK(cuda_live("CUmemoryPool", H(pool), &object) && object.refs == 0 && object.holders == 1);
    CHECK_EQ_INT(cuMemFree(imported), CUDA_SUCCESS);
    CHECK(!cuda_live("CUmemoryPool", H(pool), NULL));
    CHECK_EQ_INT(cuda_live_count(), before);
    CHECK_EQ_INT(cuda_misuse_count(), misuse);
}

/* A free or destroy the driver refuses puts the object back as it was,
 * with its parents: one the program destroyed already, which only this
 * object kept alive, must not die with it in between. */
static void refused_destroys_keep_parents(void)
{
    size_t before = cuda_live_count();
    uint64_t misuse = cuda_misuse_count();
    livetrack_object object;

    CUmemPoolProps props = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                            .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUmemoryPool pool = NULL;
    CUdeviceptr from_pool = 0;
    CHECK_EQ_INT(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocFromPoolAsync(&from_pool, 4096, pool, NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemPoolDestroy(pool), CUDA_SUCCESS);
    fake_cuda_fail_next("cuMemFreeAsync", CUDA_ERROR_LAUNCH_FAILED);
    CHECK_EQ_INT(cuMemFreeAsync(from_pool, NULL), CUDA_ERROR_LAUNCH_FAILED);
    CHECK(cuda_live("CUmemoryPool", H(pool), &object) && object.refs == 0 && object.holders == 1);
    CHECK(cuda_live("device_async", from_pool, &object) && object.parents[0] == cuda_key("CUmemoryPool", H(pool)));
    CHECK_EQ_INT(cuMemFreeAsync(from_pool, NULL), CUDA_SUCCESS);
    CHECK(!cuda_live("CUmemoryPool", H(pool), NULL));

    /* The same allocation back, not a new one: its creation number, and
     * no creation counted (marks and "newest first" stay right). */
    CUdeviceptr kept = 0;
    CHECK_EQ_INT(cuMemAlloc(&kept, 64), CUDA_SUCCESS);
    livetrack_object made;
    CHECK(cuda_live("CUdeviceptr", kept, &made));
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    uint64_t created = stats.created;
    fake_cuda_fail_next("cuMemFree_v2", CUDA_ERROR_LAUNCH_FAILED);
    CHECK_EQ_INT(cuMemFree(kept), CUDA_ERROR_LAUNCH_FAILED);
    CHECK(cuda_live("CUdeviceptr", kept, &object) && object.seq == made.seq && object.stack == made.stack &&
          object.bytes == 64);
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.created, created);
    CHECK_EQ_INT(cuMemFree(kept), CUDA_SUCCESS);

    /* A context's end, refused: a buffer mapped from external memory
     * still holds it, so destroying the external memory keeps it. */
    CUcontext other = NULL;
    CHECK_EQ_INT(cuCtxCreate(&other, NULL, 0, 0), CUDA_SUCCESS);
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC imported = {.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, .size = 1 << 20};
    CUexternalMemory external = NULL;
    CHECK_EQ_INT(cuImportExternalMemory(&external, &imported), CUDA_SUCCESS);
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC part = {.offset = 0, .size = 4096};
    CUdeviceptr mapped = 0;
    CHECK_EQ_INT(cuExternalMemoryGetMappedBuffer(&mapped, external, &part), CUDA_SUCCESS);
    fake_cuda_fail_next("cuCtxDestroy_v2", CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CHECK_EQ_INT(cuCtxDestroy(other), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    uint64_t reported = cuda_misuse_count() - misuse; /* the context's end names what it held */
    CHECK(cuda_live("CUexternalMemory", H(external), &object) && object.refs == 1 && object.holders == 1);
    CHECK(cuda_live("CUdeviceptr", mapped, &object) &&
          object.parents[0] == cuda_key("CUexternalMemory", H(external)));
    CHECK_EQ_INT(cuDestroyExternalMemory(external), CUDA_SUCCESS);
    CHECK(cuda_live("CUexternalMemory", H(external), &object) && object.refs == 0 && object.holders == 1);
    CHECK_EQ_INT(cuMemFree(mapped), CUDA_SUCCESS);
    CHECK(!cuda_live("CUexternalMemory", H(external), NULL));
    CHECK_EQ_INT(cuCtxDestroy(other), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSetCurrent(context), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_live_count(), before);
    CHECK_EQ_INT(cuda_misuse_count(), misuse + reported);
}

/* Memory and semaphores another API made, imported: objects of their own,
 * leaked when never destroyed. A buffer or mipmapped array mapped from
 * external memory is freed like one the program allocated, and holds the
 * external memory, whose bytes are counted there once. */
static void external_memory(void)
{
    size_t before = cuda_live_count();
    uint64_t misuse = cuda_misuse_count();
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC handle = {.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, .size = 1 << 20};
    handle.handle.fd = 3;
    CUexternalMemory imported = NULL;
    fake_cuda_fail_next("cuImportExternalMemory", CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuImportExternalMemory(&imported, &handle), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuda_live_count(), before);
    CHECK_EQ_INT(cuImportExternalMemory(&imported, &handle), CUDA_SUCCESS);
    check_owned("CUexternalMemory", H(imported), 1 << 20, context);

    CUDA_EXTERNAL_MEMORY_BUFFER_DESC buffer_desc = {.offset = 4096, .size = 8192};
    CUdeviceptr buffer = 0;
    CHECK_EQ_INT(cuExternalMemoryGetMappedBuffer(&buffer, imported, &buffer_desc), CUDA_SUCCESS);
    CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC array_desc = {
        .arrayDesc = {.Width = 64, .Height = 64, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1}, .numLevels = 1};
    CUmipmappedArray array = NULL;
    CHECK_EQ_INT(cuExternalMemoryGetMappedMipmappedArray(&array, imported, &array_desc), CUDA_SUCCESS);
    check_owned("CUdeviceptr", buffer, 0, context);
    check_owned("CUmipmappedArray", H(array), 0, context);
    livetrack_object object;
    uint64_t imported_key = cuda_key("CUexternalMemory", H(imported));
    CHECK(cuda_live("CUdeviceptr", buffer, &object) && object.parents[0] == imported_key);
    CHECK(cuda_live("CUmipmappedArray", H(array), &object) && object.parents[0] == imported_key);

    /* Destroyed before what was mapped from it: kept for them, no misuse. */
    CHECK_EQ_INT(cuDestroyExternalMemory(imported), CUDA_SUCCESS);
    CHECK(cuda_live("CUexternalMemory", H(imported), &object) && object.refs == 0 && object.holders == 2);
    CHECK_EQ_INT(cuMemFree(buffer), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMipmappedArrayDestroy(array), CUDA_SUCCESS);
    CHECK(!cuda_live("CUexternalMemory", H(imported), NULL));

    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC semaphore_desc = {.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD};
    semaphore_desc.handle.fd = 4;
    CUexternalSemaphore semaphore = NULL;
    CHECK_EQ_INT(cuImportExternalSemaphore(&semaphore, &semaphore_desc), CUDA_SUCCESS);
    check_owned("CUexternalSemaphore", H(semaphore), 0, context);
    CHECK_EQ_INT(cuDestroyExternalSemaphore(semaphore), CUDA_SUCCESS);
    CHECK(!cuda_live("CUexternalSemaphore", H(semaphore), NULL));
    CHECK_EQ_INT(cuda_live_count(), before);
    CHECK_EQ_INT(cuda_misuse_count(), misuse);

    /* Never destroyed: a leak, reported when its context goes. */
    CUcontext doomed = NULL;
    CHECK_EQ_INT(cuCtxCreate(&doomed, NULL, 0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuImportExternalMemory(&imported, &handle), CUDA_SUCCESS);
    cuda_capture capture;
    cuda_capture_begin(&capture);
    CHECK_EQ_INT(cuCtxDestroy(doomed), CUDA_SUCCESS);
    char *text = cuda_capture_end(&capture);
    CHECK(strstr(text, "held 1 object the program never freed (1048576 bytes)") != NULL);
    CHECK(strstr(text, "CUexternalMemory 0x") != NULL);
    free(text);
    CHECK_EQ_INT(cuda_misuse_count(), misuse + 2);
    CHECK_EQ_INT(cuCtxSetCurrent(context), CUDA_SUCCESS);
}

static void virtual_memory(void)
{
    const size_t granule = 2 << 20;
    CUdeviceptr range = 0;
    CHECK_EQ_INT(cuMemAddressReserve(&range, 4 * granule, 0, 0, 0), CUDA_SUCCESS);
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUmemGenericAllocationHandle physical = 0;
    CHECK_EQ_INT(cuMemCreate(&physical, 2 * granule, &prop, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemMap(range, granule, 0, physical, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemMap(range + granule, granule, granule, physical, 0), CUDA_SUCCESS);
    check_owned("va_reservation", range, 0, NULL);
    check_owned("CUmemGenericAllocationHandle", physical, 2 * granule, NULL);
    check_owned("va_mapping", range, 0, NULL);
    check_owned("va_mapping", range + granule, 0, NULL);

    /* Released while mapped: kept alive by its mappings. */
    CHECK_EQ_INT(cuMemRelease(physical), CUDA_SUCCESS);
    livetrack_object object;
    CHECK(cuda_live("CUmemGenericAllocationHandle", physical, &object) && object.refs == 0 && object.holders == 2);
    CUmemGenericAllocationHandle again = 0;
    CHECK_EQ_INT(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(range + granule + 8)), CUDA_SUCCESS);
    CHECK(again == physical);
    CHECK_EQ_INT(cuda_refs("CUmemGenericAllocationHandle", physical), 1);
    CHECK_EQ_INT(cuMemRelease(again), CUDA_SUCCESS);

    /* One unmap for both mappings: the memory goes with the last. */
    CHECK_EQ_INT(cuMemUnmap(range, 2 * granule), CUDA_SUCCESS);
    CHECK(!cuda_live("va_mapping", range, NULL));
    CHECK(!cuda_live("va_mapping", range + granule, NULL));
    CHECK(!cuda_live("CUmemGenericAllocationHandle", physical, NULL));
    CHECK_EQ_INT(cuMemAddressFree(range, 4 * granule), CUDA_SUCCESS);
    CHECK(!cuda_live("va_reservation", range, NULL));
}

/* A graph memory node's allocation may be freed outside the graph with
 * cuMemFree or cuMemFreeAsync. It is not tracked (its memory comes and
 * goes with each launch), and its free is no misuse. */
static void graph_memory_nodes(void)
{
    size_t before = cuda_live_count();
    uint64_t misuse = cuda_misuse_count();
    CUgraph graph = NULL;
    CHECK_EQ_INT(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CUDA_MEM_ALLOC_NODE_PARAMS params = {
        .poolProps = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                      .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}},
        .bytesize = 1 << 16};
    CUgraphNode first = NULL, second = NULL;
    CHECK_EQ_INT(cuGraphAddMemAllocNode(&first, graph, NULL, 0, &params), CUDA_SUCCESS);
    CUdeviceptr freed_async = params.dptr;
    CHECK_EQ_INT(cuGraphAddMemAllocNode(&second, graph, &first, 1, &params), CUDA_SUCCESS);
    CUdeviceptr freed = params.dptr;
    CHECK(freed_async && freed && freed != freed_async);
    CHECK_EQ_INT(cuda_live_count(), before + 1); /* the graph */
    CHECK_EQ_INT(cuMemFreeAsync(freed_async, NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFree(freed), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_misuse_count(), misuse);
    CHECK_EQ_INT(cuGraphDestroy(graph), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_live_count(), before);
    /* Other addresses are still checked. */
    CHECK_EQ_INT(cuMemFree((CUdeviceptr)0x1234560), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuda_misuse_count(), misuse + 1);

    /* Host memory the driver later puts at a graph's old address is not
     * the graph's: cuMemFree of it is misuse (registered at that very
     * address here: the fake driver only records the pointer). */
    CHECK_EQ_INT(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphAddMemAllocNode(&first, graph, NULL, 0, &params), CUDA_SUCCESS);
    CUdeviceptr graph_address = params.dptr;
    CHECK_EQ_INT(cuMemFree(graph_address), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphDestroy(graph), CUDA_SUCCESS);
    void *registered = (void *)(uintptr_t)graph_address;
    CHECK_EQ_INT(cuMemHostRegister(registered, 64, 0), CUDA_SUCCESS);
    misuse = cuda_misuse_count();
    CHECK_EQ_INT(cuMemFree(graph_address), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuda_misuse_count(), misuse + 1);
    CHECK(cuda_live("host_registered", graph_address, NULL));
    CHECK_EQ_INT(cuMemHostUnregister(registered), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_misuse_count(), misuse + 1);
    CHECK_EQ_INT(cuda_live_count(), before);
}

/* A multicast object (CUDA 12.1) is a CUmemGenericAllocationHandle that
 * cuMemRelease frees, like cuMemCreate's; it is bound memory, not memory. */
static void multicast(void)
{
    CUmulticastObjectProp prop = {.numDevices = 2, .size = 2 << 20};
    CUmemGenericAllocationHandle refused = 0, team = 0;
    fake_cuda_fail_next("cuMulticastCreate", CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ_INT(cuMulticastCreate(&refused, &prop), CUDA_ERROR_OUT_OF_MEMORY);
    size_t live_before = cuda_live_count();
    uint64_t misuse = cuda_misuse_count();
    CHECK_EQ_INT(cuMulticastCreate(&team, &prop), CUDA_SUCCESS);
    check_owned("CUmemGenericAllocationHandle", team, 0, NULL);
    CHECK_EQ_INT(cuda_live_count(), live_before + 1);
    CHECK_EQ_INT(cuMemRelease(team), CUDA_SUCCESS);
    CHECK(!cuda_live("CUmemGenericAllocationHandle", team, NULL));
    CHECK_EQ_INT(cuda_misuse_count(), misuse);
}

static void misuse(void)
{
    CUdeviceptr memory = 0;
    CHECK_EQ_INT(cuMemAlloc(&memory, 64), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFree(memory), CUDA_SUCCESS);
    uint64_t count = cuda_misuse_count();
    cuda_capture capture;
    cuda_capture_begin(&capture);
    /* Freed twice, a stream never created: reported, and the driver's
     * answer is what the program gets. */
    CUresult twice = cuMemFree(memory);
    CUresult unknown = cuStreamDestroy((CUstream)(uintptr_t)0x1234560);
    void *pinned = NULL;
    CHECK_EQ_INT(cuMemAllocHost(&pinned, 8), CUDA_SUCCESS);
    CUresult wrong_kind = cuMemFree(H(pinned));
    char *text = cuda_capture_end(&capture);
    CHECK_EQ_INT(twice, CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(unknown, CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ_INT(wrong_kind, CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuda_misuse_count(), count + 3);
    char expected[128];
    snprintf(expected, sizeof expected, "cuMemFree(0x%llx): no live device allocation", (unsigned long long)memory);
    CHECK(strstr(text, expected) != NULL);
    CHECK(strstr(text, "cuStreamDestroy(0x1234560): no live CUstream") != NULL);
    CHECK(strstr(text, "is a live host_pinned, not a device allocation") != NULL);
    free(text);
    check_owned("host_pinned", H(pinned), 8, context);
    CHECK_EQ_INT(cuMemFreeHost(pinned), CUDA_SUCCESS);
}

/* How many objects `text` names as going with a context, each as the
 * program left it: its creation stack, and no "and released" line (the
 * context's end is not the program's release of it, whatever
 * LIVETRACK_RELEASE_STACKS says). -1 when one is named otherwise. */
static int dropped_named_as_live(const char *text)
{
    static const char error[] = "livetrack: ERROR: ";
    /* With call sites off (the TSan run) the creation stack is the line
     * that says there is none. */
    const char *depth = getenv("LIVETRACK_STACK_DEPTH");
    const char *creation = depth && !strcmp(depth, "0") ? "(no stack: LIVETRACK_STACK_DEPTH=0)" : "cuda_interpose.c";
    int named = 0;
    for (const char *at = strstr(text, error); at; at = strstr(at + 1, error)) {
        const char *line_end = strchr(at, '\n');
        const char *next = strstr(at + 1, error);
        size_t length = next ? (size_t)(next - at) : strlen(at);
        char *block = strndup(at, length);
        CHECK(block != NULL);
        if (!block)
            return -1;
        const char *goes = strstr(block, "never freed, goes with context");
        if (goes && (!line_end || goes < block + (line_end - at))) {
            named++;
            if (!strstr(block, "was created at:") || !strstr(block, creation) ||
                strstr(block, "livetrack: and ")) {
                fprintf(stderr, "cuda_interpose: a dropped object is not named as live:\n%s", block);
                named = -1;
            }
        }
        free(block);
        if (named < 0)
            return -1;
    }
    return named;
}

/* A context's end takes what it owned with it, and says so. */
static void context_end(void)
{
    CUcontext doomed = NULL;
    CHECK_EQ_INT(cuCtxCreate(&doomed, NULL, 0, 0), CUDA_SUCCESS);
    check_owned("CUcontext", H(doomed), 0, doomed);
    CUstream stream = NULL;
    CUdeviceptr memory = 0;
    CUgraph graph = NULL;
    CHECK_EQ_INT(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&memory, 4096), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    check_owned("CUstream", H(stream), 0, doomed);

    uint64_t count = cuda_misuse_count();
    cuda_capture capture;
    cuda_capture_begin(&capture);
    CHECK_EQ_INT(cuCtxDestroy(doomed), CUDA_SUCCESS);
    char *text = cuda_capture_end(&capture);
    CHECK_EQ_INT(cuda_misuse_count(), count + 3);
    CHECK(strstr(text, "destroyed while it held 2 objects the program never freed (4096 bytes)") != NULL);
    CHECK_EQ_INT(dropped_named_as_live(text), 2);
    free(text);
    CHECK(!cuda_live("CUcontext", H(doomed), NULL));
    CHECK(!cuda_live("CUstream", H(stream), NULL));
    CHECK(!cuda_live("CUdeviceptr", memory, NULL));
    CHECK(cuda_live("CUgraph", H(graph), NULL)); /* graphs outlive contexts */
    CHECK_EQ_INT(cuGraphDestroy(graph), CUDA_SUCCESS);

    /* Many objects: the first 8 are named with their creation stacks, the
     * rest counted in one line (docs/cuda.md says so). */
    CHECK_EQ_INT(cuCtxCreate(&doomed, NULL, 0, 0), CUDA_SUCCESS);
    for (int i = 0; i < 11; i++) {
        CUevent event = NULL;
        CHECK_EQ_INT(cuEventCreate(&event, 0), CUDA_SUCCESS);
    }
    count = cuda_misuse_count();
    cuda_capture_begin(&capture);
    CHECK_EQ_INT(cuCtxDestroy(doomed), CUDA_SUCCESS);
    text = cuda_capture_end(&capture);
    CHECK(strstr(text, "destroyed while it held 11 objects the program never freed (0 bytes)") != NULL);
    CHECK_EQ_INT(cuda_count(text, "never freed, goes with context"), 8);
    CHECK_EQ_INT(dropped_named_as_live(text), 8);
    CHECK_EQ_INT(cuda_count(text, "was created at:"), 8 + 1); /* the events named, and the context */
    CHECK(strstr(text, "... and 3 more objects go with context") != NULL);
    CHECK_EQ_INT(cuda_misuse_count(), count + 1 + 8 + 1);
    free(text);
    CHECK_EQ_INT(cuda_live_count(), 1);
    CHECK_EQ_INT(cuCtxSetCurrent(context), CUDA_SUCCESS);

    /* A primary context the program holds twice; its last release ends it. */
    CUcontext primary = NULL, same = NULL;
    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&primary, 1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&same, 1), CUDA_SUCCESS);
    CHECK(primary == same);
    CHECK_EQ_INT(cuda_refs("CUcontext", H(primary)), 2);
    CHECK_EQ_INT(cuCtxPushCurrent(primary), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&memory, 16), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxPopCurrent(&same), CUDA_SUCCESS);
    check_owned("CUdeviceptr", memory, 16, primary);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_refs("CUcontext", H(primary)), 1);
    CHECK(cuda_live("CUdeviceptr", memory, NULL));
    count = cuda_misuse_count();
    cuda_capture_begin(&capture);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
    text = cuda_capture_end(&capture);
    CHECK_EQ_INT(dropped_named_as_live(text), 1);
    free(text);
    CHECK(!cuda_live("CUcontext", H(primary), NULL));
    CHECK(!cuda_live("CUdeviceptr", memory, NULL));
    CHECK_EQ_INT(cuda_misuse_count(), count + 2);
    /* One release too many: the driver says no, and so do we. */
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(1), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ_INT(cuda_misuse_count(), count + 3);
}

/* Threads allocating and freeing at once: the driver hands an address
 * freed on one thread to another at once. Frees leave the registry
 * before the driver runs, so no allocation is lost or misreported. */
#define THREADS 4
#define ROUNDS 3000

static void *churn(void *unused)
{
    (void)unused; /* CHECK counts are not thread-safe: failures are returned */
    if (cuCtxSetCurrent(context) != CUDA_SUCCESS)
        return (void *)1;
    for (int i = 0; i < ROUNDS; i++) {
        CUdeviceptr memory = 0;
        if (cuMemAlloc(&memory, 32 + (size_t)(i % 7) * 16) != CUDA_SUCCESS || cuMemFree(memory) != CUDA_SUCCESS)
            return (void *)1;
    }
    return NULL;
}

/* THREADS threads running `work`, each returning NULL when all went well. */
static void run_workers(void *(*work)(void *))
{
    pthread_t workers[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ_INT(pthread_create(&workers[i], NULL, work, NULL), 0);
    for (int i = 0; i < THREADS; i++) {
        void *failed = NULL;
        pthread_join(workers[i], &failed);
        CHECK(failed == NULL);
    }
}

static void threads(void)
{
    uint64_t count = cuda_misuse_count();
    size_t live = cuda_live_count();
    run_workers(churn);
    CHECK_EQ_INT(cuda_misuse_count(), count);
    CHECK_EQ_INT(cuda_live_count(), live);
}

/* Threads each holding the primary context while they use it: retain,
 * make it current, allocate, free, release. A correct program: whatever
 * the interleaving of one thread's release with another's retain, no
 * misuse is reported, no record is replaced, and nothing is left. */
#define PRIMARY_ROUNDS 3000

static pthread_barrier_t primary_start;

static void *primary_user(void *unused)
{
    (void)unused;
    pthread_barrier_wait(&primary_start); /* all at once, and yielding: calls interleave */
    for (int i = 0; i < PRIMARY_ROUNDS; i++) {
        CUcontext primary = NULL;
        CUdeviceptr memory = 0;
        if (cuDevicePrimaryCtxRetain(&primary, 0) != CUDA_SUCCESS)
            return (void *)1;
        sched_yield();
        if (cuCtxSetCurrent(primary) != CUDA_SUCCESS || cuMemAlloc(&memory, 64) != CUDA_SUCCESS ||
            cuMemFree(memory) != CUDA_SUCCESS || cuCtxSetCurrent(NULL) != CUDA_SUCCESS)
            return (void *)1;
        sched_yield();
        if (cuDevicePrimaryCtxRelease(0) != CUDA_SUCCESS)
            return (void *)1;
    }
    return NULL;
}

static void primary_threads(void)
{
    livetrack_stats before, after;
    livetrack_get_stats(&before);
    size_t live = cuda_live_count();
    CHECK_EQ_INT(pthread_barrier_init(&primary_start, NULL, THREADS), 0);
    run_workers(primary_user);
    pthread_barrier_destroy(&primary_start);
    livetrack_get_stats(&after);
    CHECK_EQ_INT(after.misuse, before.misuse);
    CHECK_EQ_INT(after.replaced, before.replaced);
    CHECK_EQ_INT(cuda_live_count(), live);
}

/* Threads retaining and releasing the primary context in a tight loop,
 * each leaving an allocation in it now and then: every release that leaves
 * no reference ends the context, and such last releases overlap (one
 * thread's, while another retains the context anew and releases it
 * again). Both see the same leaked allocations; each must be reported
 * once, by the release that took it. */
#define LEAK_ROUNDS 2000
#define LEAKS_PER_THREAD 5 /* each leak another chance for the overlap */

static void *primary_leaker(void *unused)
{
    (void)unused;
    pthread_barrier_wait(&primary_start);
    for (int i = 0; i < LEAK_ROUNDS; i++) {
        CUcontext primary = NULL;
        CUdeviceptr memory = 0;
        if (cuDevicePrimaryCtxRetain(&primary, 0) != CUDA_SUCCESS)
            return (void *)1;
        int leak = i % (LEAK_ROUNDS / LEAKS_PER_THREAD) == 20;
        if (leak && (cuCtxSetCurrent(primary) != CUDA_SUCCESS || cuMemAlloc(&memory, 16) != CUDA_SUCCESS ||
                     cuCtxSetCurrent(NULL) != CUDA_SUCCESS))
            return (void *)1;
        if (cuDevicePrimaryCtxRelease(0) != CUDA_SUCCESS)
            return (void *)1;
    }
    return NULL;
}

/* The sum of the numbers that follow each `needle` in `text`. */
static size_t sum_after(const char *text, const char *needle)
{
    size_t sum = 0;
    for (const char *at = text; (at = strstr(at, needle)); at += strlen(needle))
        sum += strtoul(at + strlen(needle), NULL, 10);
    return sum;
}

/* One run of the leakers; returns 0 when a leaked allocation was
 * reported twice or not at all (the report's counts do not add up). */
static int leakers_report_each_once(void)
{
    const size_t leaked = THREADS * LEAKS_PER_THREAD;
    uint64_t count = cuda_misuse_count();
    size_t live = cuda_live_count();
    livetrack_stats before, after;
    livetrack_get_stats(&before);
    CHECK_EQ_INT(pthread_barrier_init(&primary_start, NULL, THREADS), 0);
    cuda_capture capture;
    cuda_capture_begin(&capture);
    run_workers(primary_leaker);
    char *text = cuda_capture_end(&capture);
    pthread_barrier_destroy(&primary_start);
    livetrack_get_stats(&after);
    /* A leaked allocation the registry still held when the driver had
     * already ended the context and handed its address out again is
     * replaced by the new one, not reported (a separate, rarer race). */
    size_t replaced = (size_t)(after.replaced - before.replaced);
    int context_lines = cuda_count(text, "lost its last reference while it held");
    int named = cuda_count(text, "never freed, goes with context");
    size_t unnamed = sum_after(text, "... and ");
    /* Every leaked allocation once: in the contexts' counts, and named or counted. */
    int once = sum_after(text, "lost its last reference while it held ") == (size_t)named + unnamed &&
               (size_t)named + unnamed + replaced == leaked && (size_t)context_lines <= leaked &&
               cuda_misuse_count() == count + (uint64_t)context_lines + (uint64_t)named +
                                          (uint64_t)cuda_count(text, "... and ");
    if (!once)
        fprintf(stderr, "primary_threads_leaking: %zu allocations leaked, reported in %d context lines holding %zu, "
                        "%d named and %zu counted, %zu replaced\n",
                leaked, context_lines, sum_after(text, "lost its last reference while it held "), named, unnamed,
                replaced);
    free(text);
    CHECK_EQ_INT(cuda_live_count(), live);
    return once;
}

/* The overlap is a race: a few runs make it likely enough that, without
 * the fix, one of them reports an allocation twice. */
#define LEAK_RUNS 12

static void primary_threads_leaking(void)
{
    for (int run = 0; run < LEAK_RUNS; run++)
        if (!leakers_report_each_once()) {
            CHECK(!"each leaked allocation reported once");
            return;
        }
}

/* Threads opening the same IPC handle at once, then closing it: the
 * driver maps it once and counts the references. Each open that finds no
 * record makes one; two at once must not both make one (the second would
 * replace the first, and a close would then find nothing). */
#define IPC_ROUNDS 5000

static pthread_barrier_t ipc_start;

static void *ipc_user(void *unused)
{
    (void)unused;
    if (cuCtxSetCurrent(context) != CUDA_SUCCESS)
        return (void *)1;
    CUipcMemHandle shared;
    memset(&shared, 0, sizeof shared);
    shared.reserved[0] = 9;
    for (int i = 0; i < IPC_ROUNDS; i++) {
        CUdeviceptr mapped = 0;
        pthread_barrier_wait(&ipc_start); /* every open of a round at once */
        if (cuIpcOpenMemHandle(&mapped, shared, 0) != CUDA_SUCCESS)
            return (void *)1;
        pthread_barrier_wait(&ipc_start); /* all opened before any closes */
        if (cuIpcCloseMemHandle(mapped) != CUDA_SUCCESS)
            return (void *)1;
    }
    return NULL;
}

static void ipc_threads(void)
{
    livetrack_stats before, after;
    livetrack_get_stats(&before);
    size_t live = cuda_live_count();
    CHECK_EQ_INT(pthread_barrier_init(&ipc_start, NULL, THREADS), 0);
    run_workers(ipc_user);
    pthread_barrier_destroy(&ipc_start);
    livetrack_get_stats(&after);
    CHECK_EQ_INT(after.misuse, before.misuse);
    CHECK_EQ_INT(after.replaced, before.replaced);
    CHECK_EQ_INT(cuda_live_count(), live);
}

int main(void)
{
    CHECK_EQ_INT(cuInit(0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxCreate(&context, NULL, 0, 0), CUDA_SUCCESS);
    size_t driver_baseline = fake_cuda_live_objects();
    streams_events_graphs();
    green_context_stream();
    ipc_event();
    ipc_memory();
    code_and_arrays();
    allocations();
    imported_pool();
    refused_destroys_keep_parents();
    external_memory();
    virtual_memory();
    multicast();
    graph_memory_nodes();
    CHECK_EQ_INT(fake_cuda_live_objects(), driver_baseline);
    /* the context is all that is left, in the registry as in the driver */
    CHECK_EQ_INT(cuda_live_count(), 1);
    misuse();
    context_end();
    threads();
    primary_threads();
    primary_threads_leaking();
    ipc_threads();
    CHECK_EQ_INT(cuda_live_count(), 1);
    CHECK_EQ_INT(cuCtxDestroy(context), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_live_count(), 0);
    CHECK_EQ_INT(fake_cuda_live_objects(), 0);
    return check_summary("cuda_interpose");
}
