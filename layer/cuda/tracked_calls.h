/*
 * Every CUDA driver function livetrack tracks, one ABI per line. Both
 * attach modes are generated from this one list: the interposed wrappers
 * (interpose.c), the cuGetProcAddress table (proc_address.c) and the CUPTI
 * callback ids (cupti_callback.c).
 *
 *   X(symbol, "api name", since, stream, (parameters), (arguments))
 *
 * symbol      the exported ABI name (cuMemAlloc_v2). CUPTI names its
 *             callback id CUPTI_DRIVER_TRACE_CBID_<symbol> and its argument
 *             struct <symbol>_params, with the fields in parameter order,
 *             so one handler serves both modes. Some symbols are also
 *             macros in cuda.h (cuDevicePrimaryCtxRelease expands to
 *             ..._v2): the macros that expand this list use the symbol
 *             only with # and ##, which do not expand it.
 * "api name"  the name a program writes and asks cuGetProcAddress for.
 * since       the CUDA version (1000 * major + 10 * minor) that introduced
 *             this ABI: cuGetProcAddress(api name, version) returns the
 *             newest ABI whose `since` is not above the version asked for.
 * stream      LTCU_LEGACY_STREAM, or LTCU_PER_THREAD_STREAM for the _ptsz
 *             twin handed out for CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
 *
 * Older ABIs whose arguments are the newer one's (cuCtxCreate,
 * cuCtxDestroy, cuStreamDestroy and cuEventDestroy of CUDA 2.0,
 * cuMemHostRegister of 4.0, cuLinkCreate of 5.5) are listed too: the
 * driver still exports them under the plain names, and dlsym or an old
 * cuGetProcAddress version reaches them. Only the CUDA 2.x ABIs with
 * 32-bit sizes or addresses are not tracked (cuMemAlloc, cuMemAllocPitch,
 * cuMemFree and cuMemAllocHost, and cuArrayCreate and cuArray3DCreate
 * with their 32-bit descriptors): cuGetProcAddress hands them out
 * unwrapped and says so.
 */
#ifndef LIVETRACK_CUDA_TRACKED_CALLS_H
#define LIVETRACK_CUDA_TRACKED_CALLS_H

#define LTCU_LEGACY_STREAM 0
#define LTCU_PER_THREAD_STREAM 1

/* clang-format off */
#define LTCU_TRACKED_CALLS(X) \
    /* contexts */ \
    X(cuCtxCreate, "cuCtxCreate", 2000, LTCU_LEGACY_STREAM, \
      (CUcontext *pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev)) \
    X(cuCtxCreate_v2, "cuCtxCreate", 3020, LTCU_LEGACY_STREAM, \
      (CUcontext *pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev)) \
    X(cuCtxCreate_v3, "cuCtxCreate", 11040, LTCU_LEGACY_STREAM, \
      (CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags, CUdevice dev), \
      (pctx, paramsArray, numParams, flags, dev)) \
    X(cuCtxCreate_v4, "cuCtxCreate", 12050, LTCU_LEGACY_STREAM, \
      (CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev), \
      (pctx, ctxCreateParams, flags, dev)) \
    X(cuCtxDestroy, "cuCtxDestroy", 2000, LTCU_LEGACY_STREAM, (CUcontext ctx), (ctx)) \
    X(cuCtxDestroy_v2, "cuCtxDestroy", 4000, LTCU_LEGACY_STREAM, (CUcontext ctx), (ctx)) \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, LTCU_LEGACY_STREAM, \
      (CUcontext *pctx, CUdevice dev), (pctx, dev)) \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 7000, LTCU_LEGACY_STREAM, (CUdevice dev), (dev)) \
    X(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease", 11000, LTCU_LEGACY_STREAM, (CUdevice dev), (dev)) \
    X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset", 7000, LTCU_LEGACY_STREAM, (CUdevice dev), (dev)) \
    X(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset", 11000, LTCU_LEGACY_STREAM, (CUdevice dev), (dev)) \
    /* streams and events */ \
    X(cuStreamCreate, "cuStreamCreate", 2000, LTCU_LEGACY_STREAM, \
      (CUstream *phStream, unsigned int Flags), (phStream, Flags)) \
    X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority", 5050, LTCU_LEGACY_STREAM, \
      (CUstream *phStream, unsigned int flags, int priority), (phStream, flags, priority)) \
    X(cuGreenCtxStreamCreate, "cuGreenCtxStreamCreate", 12050, LTCU_LEGACY_STREAM, \
      (CUstream *phStream, CUgreenCtx greenCtx, unsigned int flags, int priority), \
      (phStream, greenCtx, flags, priority)) \
    X(cuStreamDestroy, "cuStreamDestroy", 2000, LTCU_LEGACY_STREAM, (CUstream hStream), (hStream)) \
    X(cuStreamDestroy_v2, "cuStreamDestroy", 4000, LTCU_LEGACY_STREAM, (CUstream hStream), (hStream)) \
    X(cuStreamEndCapture, "cuStreamEndCapture", 10000, LTCU_LEGACY_STREAM, \
      (CUstream hStream, CUgraph *phGraph), (hStream, phGraph)) \
    X(cuStreamEndCapture_ptsz, "cuStreamEndCapture", 10000, LTCU_PER_THREAD_STREAM, \
      (CUstream hStream, CUgraph *phGraph), (hStream, phGraph)) \
    X(cuEventCreate, "cuEventCreate", 2000, LTCU_LEGACY_STREAM, \
      (CUevent *phEvent, unsigned int Flags), (phEvent, Flags)) \
    /* an event another process made with CU_EVENT_INTERPROCESS: cuEventDestroy ends it here */ \
    X(cuIpcOpenEventHandle, "cuIpcOpenEventHandle", 4010, LTCU_LEGACY_STREAM, \
      (CUevent *phEvent, CUipcEventHandle handle), (phEvent, handle)) \
    X(cuEventDestroy, "cuEventDestroy", 2000, LTCU_LEGACY_STREAM, (CUevent hEvent), (hEvent)) \
    X(cuEventDestroy_v2, "cuEventDestroy", 4000, LTCU_LEGACY_STREAM, (CUevent hEvent), (hEvent)) \
    /* modules, libraries, linker states */ \
    X(cuModuleLoad, "cuModuleLoad", 2000, LTCU_LEGACY_STREAM, \
      (CUmodule *module, const char *fname), (module, fname)) \
    X(cuModuleLoadData, "cuModuleLoadData", 2000, LTCU_LEGACY_STREAM, \
      (CUmodule *module, const void *image), (module, image)) \
    X(cuModuleLoadDataEx, "cuModuleLoadDataEx", 2010, LTCU_LEGACY_STREAM, \
      (CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues), \
      (module, image, numOptions, options, optionValues)) \
    X(cuModuleLoadFatBinary, "cuModuleLoadFatBinary", 2000, LTCU_LEGACY_STREAM, \
      (CUmodule *module, const void *fatCubin), (module, fatCubin)) \
    X(cuModuleUnload, "cuModuleUnload", 2000, LTCU_LEGACY_STREAM, (CUmodule hmod), (hmod)) \
    X(cuLibraryLoadData, "cuLibraryLoadData", 12000, LTCU_LEGACY_STREAM, \
      (CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues, \
       unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues, \
       unsigned int numLibraryOptions), \
      (library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues, \
       numLibraryOptions)) \
    X(cuLibraryLoadFromFile, "cuLibraryLoadFromFile", 12000, LTCU_LEGACY_STREAM, \
      (CUlibrary *library, const char *fileName, CUjit_option *jitOptions, void **jitOptionsValues, \
       unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues, \
       unsigned int numLibraryOptions), \
      (library, fileName, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues, \
       numLibraryOptions)) \
    X(cuLibraryUnload, "cuLibraryUnload", 12000, LTCU_LEGACY_STREAM, (CUlibrary library), (library)) \
    X(cuLinkCreate, "cuLinkCreate", 5050, LTCU_LEGACY_STREAM, \
      (unsigned int numOptions, CUjit_option *options, void **optionValues, CUlinkState *stateOut), \
      (numOptions, options, optionValues, stateOut)) \
    X(cuLinkCreate_v2, "cuLinkCreate", 6050, LTCU_LEGACY_STREAM, \
      (unsigned int numOptions, CUjit_option *options, void **optionValues, CUlinkState *stateOut), \
      (numOptions, options, optionValues, stateOut)) \
    X(cuLinkDestroy, "cuLinkDestroy", 5050, LTCU_LEGACY_STREAM, (CUlinkState state), (state)) \
    /* graphs */ \
    X(cuGraphCreate, "cuGraphCreate", 10000, LTCU_LEGACY_STREAM, \
      (CUgraph *phGraph, unsigned int flags), (phGraph, flags)) \
    X(cuGraphClone, "cuGraphClone", 10000, LTCU_LEGACY_STREAM, \
      (CUgraph *phGraphClone, CUgraph originalGraph), (phGraphClone, originalGraph)) \
    X(cuGraphDestroy, "cuGraphDestroy", 10000, LTCU_LEGACY_STREAM, (CUgraph hGraph), (hGraph)) \
    X(cuGraphInstantiate, "cuGraphInstantiate", 10000, LTCU_LEGACY_STREAM, \
      (CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize), \
      (phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize)) \
    X(cuGraphInstantiate_v2, "cuGraphInstantiate", 11000, LTCU_LEGACY_STREAM, \
      (CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize), \
      (phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize)) \
    X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 11040, LTCU_LEGACY_STREAM, \
      (CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags), (phGraphExec, hGraph, flags)) \
    X(cuGraphInstantiateWithParams, "cuGraphInstantiateWithParams", 12000, LTCU_LEGACY_STREAM, \
      (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams), \
      (phGraphExec, hGraph, instantiateParams)) \
    X(cuGraphInstantiateWithParams_ptsz, "cuGraphInstantiateWithParams", 12000, LTCU_PER_THREAD_STREAM, \
      (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams), \
      (phGraphExec, hGraph, instantiateParams)) \
    /* graph memory nodes: their addresses are remembered, not tracked (graph_allocations.c) */ \
    X(cuGraphAddMemAllocNode, "cuGraphAddMemAllocNode", 11040, LTCU_LEGACY_STREAM, \
      (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, \
       CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams), \
      (phGraphNode, hGraph, dependencies, numDependencies, nodeParams)) \
    X(cuGraphAddNode, "cuGraphAddNode", 12020, LTCU_LEGACY_STREAM, \
      (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, \
       CUgraphNodeParams *nodeParams), \
      (phGraphNode, hGraph, dependencies, numDependencies, nodeParams)) \
    X(cuGraphAddNode_v2, "cuGraphAddNode", 12030, LTCU_LEGACY_STREAM, \
      (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, \
       const CUgraphEdgeData *dependencyData, size_t numDependencies, CUgraphNodeParams *nodeParams), \
      (phGraphNode, hGraph, dependencies, dependencyData, numDependencies, nodeParams)) \
    X(cuGraphExecDestroy, "cuGraphExecDestroy", 10000, LTCU_LEGACY_STREAM, (CUgraphExec hGraphExec), (hGraphExec)) \
    /* memory pools */ \
    X(cuMemPoolCreate, "cuMemPoolCreate", 11020, LTCU_LEGACY_STREAM, \
      (CUmemoryPool *pool, const CUmemPoolProps *poolProps), (pool, poolProps)) \
    X(cuMemPoolImportFromShareableHandle, "cuMemPoolImportFromShareableHandle", 11020, LTCU_LEGACY_STREAM, \
      (CUmemoryPool *pool_out, void *handle, CUmemAllocationHandleType handleType, unsigned long long flags), \
      (pool_out, handle, handleType, flags)) \
    X(cuMemPoolDestroy, "cuMemPoolDestroy", 11020, LTCU_LEGACY_STREAM, (CUmemoryPool pool), (pool)) \
    /* external memory and semaphores: what another API (Vulkan, Direct3D, ...) made, imported */ \
    X(cuImportExternalMemory, "cuImportExternalMemory", 10000, LTCU_LEGACY_STREAM, \
      (CUexternalMemory *extMem_out, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *memHandleDesc), \
      (extMem_out, memHandleDesc)) \
    X(cuExternalMemoryGetMappedBuffer, "cuExternalMemoryGetMappedBuffer", 10000, LTCU_LEGACY_STREAM, \
      (CUdeviceptr *devPtr, CUexternalMemory extMem, const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *bufferDesc), \
      (devPtr, extMem, bufferDesc)) \
    X(cuExternalMemoryGetMappedMipmappedArray, "cuExternalMemoryGetMappedMipmappedArray", 10000, LTCU_LEGACY_STREAM, \
      (CUmipmappedArray *mipmap, CUexternalMemory extMem, \
       const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC *mipmapDesc), \
      (mipmap, extMem, mipmapDesc)) \
    X(cuDestroyExternalMemory, "cuDestroyExternalMemory", 10000, LTCU_LEGACY_STREAM, \
      (CUexternalMemory extMem), (extMem)) \
    X(cuImportExternalSemaphore, "cuImportExternalSemaphore", 10000, LTCU_LEGACY_STREAM, \
      (CUexternalSemaphore *extSem_out, const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC *semHandleDesc), \
      (extSem_out, semHandleDesc)) \
    X(cuDestroyExternalSemaphore, "cuDestroyExternalSemaphore", 10000, LTCU_LEGACY_STREAM, \
      (CUexternalSemaphore extSem), (extSem)) \
    /* arrays, textures, surfaces */ \
    X(cuArrayCreate_v2, "cuArrayCreate", 3020, LTCU_LEGACY_STREAM, \
      (CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray), (pHandle, pAllocateArray)) \
    X(cuArray3DCreate_v2, "cuArray3DCreate", 3020, LTCU_LEGACY_STREAM, \
      (CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray), (pHandle, pAllocateArray)) \
    X(cuArrayDestroy, "cuArrayDestroy", 2000, LTCU_LEGACY_STREAM, (CUarray hArray), (hArray)) \
    X(cuMipmappedArrayCreate, "cuMipmappedArrayCreate", 5000, LTCU_LEGACY_STREAM, \
      (CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc, unsigned int numMipmapLevels), \
      (pHandle, pMipmappedArrayDesc, numMipmapLevels)) \
    X(cuMipmappedArrayDestroy, "cuMipmappedArrayDestroy", 5000, LTCU_LEGACY_STREAM, \
      (CUmipmappedArray hMipmappedArray), (hMipmappedArray)) \
    X(cuTexObjectCreate, "cuTexObjectCreate", 5000, LTCU_LEGACY_STREAM, \
      (CUtexObject *pTexObject, const CUDA_RESOURCE_DESC *pResDesc, const CUDA_TEXTURE_DESC *pTexDesc, \
       const CUDA_RESOURCE_VIEW_DESC *pResViewDesc), \
      (pTexObject, pResDesc, pTexDesc, pResViewDesc)) \
    X(cuTexObjectDestroy, "cuTexObjectDestroy", 5000, LTCU_LEGACY_STREAM, (CUtexObject texObject), (texObject)) \
    X(cuSurfObjectCreate, "cuSurfObjectCreate", 5000, LTCU_LEGACY_STREAM, \
      (CUsurfObject *pSurfObject, const CUDA_RESOURCE_DESC *pResDesc), (pSurfObject, pResDesc)) \
    X(cuSurfObjectDestroy, "cuSurfObjectDestroy", 5000, LTCU_LEGACY_STREAM, (CUsurfObject surfObject), (surfObject)) \
    /* allocations */ \
    X(cuMemAlloc_v2, "cuMemAlloc", 3020, LTCU_LEGACY_STREAM, \
      (CUdeviceptr *dptr, size_t bytesize), (dptr, bytesize)) \
    X(cuMemAllocPitch_v2, "cuMemAllocPitch", 3020, LTCU_LEGACY_STREAM, \
      (CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height, unsigned int ElementSizeBytes), \
      (dptr, pPitch, WidthInBytes, Height, ElementSizeBytes)) \
    X(cuMemFree_v2, "cuMemFree", 3020, LTCU_LEGACY_STREAM, (CUdeviceptr dptr), (dptr)) \
    X(cuMemAllocHost_v2, "cuMemAllocHost", 3020, LTCU_LEGACY_STREAM, (void **pp, size_t bytesize), (pp, bytesize)) \
    X(cuMemHostAlloc, "cuMemHostAlloc", 2020, LTCU_LEGACY_STREAM, \
      (void **pp, size_t bytesize, unsigned int Flags), (pp, bytesize, Flags)) \
    X(cuMemFreeHost, "cuMemFreeHost", 2000, LTCU_LEGACY_STREAM, (void *p), (p)) \
    X(cuMemAllocManaged, "cuMemAllocManaged", 6000, LTCU_LEGACY_STREAM, \
      (CUdeviceptr *dptr, size_t bytesize, unsigned int flags), (dptr, bytesize, flags)) \
    X(cuMemAllocAsync, "cuMemAllocAsync", 11020, LTCU_LEGACY_STREAM, \
      (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), (dptr, bytesize, hStream)) \
    X(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020, LTCU_PER_THREAD_STREAM, \
      (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), (dptr, bytesize, hStream)) \
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020, LTCU_LEGACY_STREAM, \
      (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream), (dptr, bytesize, pool, hStream)) \
    X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 11020, LTCU_PER_THREAD_STREAM, \
      (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream), (dptr, bytesize, pool, hStream)) \
    X(cuMemFreeAsync, "cuMemFreeAsync", 11020, LTCU_LEGACY_STREAM, \
      (CUdeviceptr dptr, CUstream hStream), (dptr, hStream)) \
    X(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 11020, LTCU_PER_THREAD_STREAM, \
      (CUdeviceptr dptr, CUstream hStream), (dptr, hStream)) \
    X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle", 4010, LTCU_LEGACY_STREAM, \
      (CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags), (pdptr, handle, Flags)) \
    X(cuIpcOpenMemHandle_v2, "cuIpcOpenMemHandle", 11000, LTCU_LEGACY_STREAM, \
      (CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags), (pdptr, handle, Flags)) \
    X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", 4010, LTCU_LEGACY_STREAM, (CUdeviceptr dptr), (dptr)) \
    X(cuMemPoolImportPointer, "cuMemPoolImportPointer", 11020, LTCU_LEGACY_STREAM, \
      (CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *shareData), (ptr_out, pool, shareData)) \
    X(cuMemHostRegister, "cuMemHostRegister", 4000, LTCU_LEGACY_STREAM, \
      (void *p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags)) \
    X(cuMemHostRegister_v2, "cuMemHostRegister", 6050, LTCU_LEGACY_STREAM, \
      (void *p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags)) \
    X(cuMemHostUnregister, "cuMemHostUnregister", 4000, LTCU_LEGACY_STREAM, (void *p), (p)) \
    /* virtual memory: reservations, physical memory, mappings */ \
    X(cuMemAddressReserve, "cuMemAddressReserve", 10020, LTCU_LEGACY_STREAM, \
      (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags), \
      (ptr, size, alignment, addr, flags)) \
    X(cuMemAddressFree, "cuMemAddressFree", 10020, LTCU_LEGACY_STREAM, (CUdeviceptr ptr, size_t size), (ptr, size)) \
    X(cuMemCreate, "cuMemCreate", 10020, LTCU_LEGACY_STREAM, \
      (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop, unsigned long long flags), \
      (handle, size, prop, flags)) \
    X(cuMemRelease, "cuMemRelease", 10020, LTCU_LEGACY_STREAM, (CUmemGenericAllocationHandle handle), (handle)) \
    X(cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle", 10020, LTCU_LEGACY_STREAM, \
      (CUmemGenericAllocationHandle *handle, void *osHandle, CUmemAllocationHandleType shHandleType), \
      (handle, osHandle, shHandleType)) \
    X(cuMemRetainAllocationHandle, "cuMemRetainAllocationHandle", 11000, LTCU_LEGACY_STREAM, \
      (CUmemGenericAllocationHandle *handle, void *addr), (handle, addr)) \
    X(cuMulticastCreate, "cuMulticastCreate", 12010, LTCU_LEGACY_STREAM, \
      (CUmemGenericAllocationHandle *mcHandle, const CUmulticastObjectProp *prop), (mcHandle, prop)) \
    X(cuMemMap, "cuMemMap", 10020, LTCU_LEGACY_STREAM, \
      (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags), \
      (ptr, size, offset, handle, flags)) \
    X(cuMemUnmap, "cuMemUnmap", 10020, LTCU_LEGACY_STREAM, (CUdeviceptr ptr, size_t size), (ptr, size))
/* clang-format on */

/* Names cuGetProcAddress also answers with one of the ABIs above:
 * X("api name", since, symbol). CUDA 12 gave cuGraphInstantiate the
 * three-argument signature of cuGraphInstantiateWithFlags. */
#define LTCU_PROC_ADDRESS_ALIASES(X) X("cuGraphInstantiate", 12000, cuGraphInstantiateWithFlags)

#endif
