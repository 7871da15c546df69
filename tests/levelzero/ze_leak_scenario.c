/*
 * The leak scenario (see ze_leak_scenario.h). Built with -O0 -g: each
 * leaking call stays on its own line, and the manifest records that line
 * with __LINE__ in the same statement.
 *
 * Every object kind livetrack tracks is made twice: once in a context
 * that is cleaned up properly (nothing of it may be reported), and once
 * leaked. Calls that fail must not be tracked. The process opens IPC
 * handles it exported itself: the test driver maps them anew, as an
 * importing process would get them.
 */
#include "ze_leak_scenario.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ze_test_util.h"

static int failures;

/* Call and compare with the answer the test driver must give. */
#define EXPECT(expected, call)                                                                          \
    do {                                                                                                \
        ze_result_t result_ = (call);                                                                   \
        if (result_ != (expected)) {                                                                    \
            fprintf(stderr, "%s:%d: %s returned 0x%x, expected 0x%x\n", __FILE__, __LINE__, #call,      \
                    (unsigned)result_, (unsigned)(expected));                                           \
            failures++;                                                                                 \
        }                                                                                               \
    } while (0)
#define OK(call) EXPECT(ZE_RESULT_SUCCESS, call)

/* Show a result on stdout, where runs with and without livetrack must agree. */
#define SHOW(call) printf("%s -> 0x%x\n", #call, (unsigned)(call))

static FILE *manifest_file;

static void leaked(const char *type, const void *handle, size_t bytes, int line)
{
    if (manifest_file)
        fprintf(manifest_file, "%s 0x%llx %zu %d\n", type, (unsigned long long)(uintptr_t)handle, bytes, line);
}

/* Every kind of object, created and destroyed properly; a small copy
 * through an immediate command list gives a result to print. */
static void clean_context(const scenario_functions *ze, ze_driver_handle_t driver, ze_device_handle_t device)
{
    ze_context_handle_t context;
    OK(ze->ContextCreate(driver, &zt_context_desc, &context));
    ze_command_queue_handle_t queue;
    OK(ze->CommandQueueCreate(context, device, &zt_queue_desc, &queue));
    ze_fence_handle_t fence;
    OK(ze->FenceCreate(queue, &zt_fence_desc, &fence));
    ze_command_list_handle_t list, immediate;
    OK(ze->CommandListCreate(context, device, &zt_list_desc, &list));
    OK(ze->CommandListCreateImmediate(context, device, &zt_queue_desc, &immediate));
    ze_module_handle_t module;
    ze_module_build_log_handle_t build_log;
    OK(ze->ModuleCreate(context, device, &zt_module_desc, &module, &build_log));
    ze_kernel_handle_t kernel, no_kernel = NULL;
    OK(ze->KernelCreate(module, &zt_kernel_desc, &kernel));
    SHOW(ze->KernelCreate(module, &zt_missing_kernel_desc, &no_kernel));
    ze_event_pool_handle_t pool;
    OK(ze->EventPoolCreate(context, &zt_pool_desc, 1, &device, &pool));
    ze_event_handle_t event;
    OK(ze->EventCreate(pool, &zt_event_desc, &event));
    ze_image_handle_t image;
    OK(ze->ImageCreate(context, device, &zt_image_desc, &image));
    ze_sampler_handle_t sampler;
    OK(ze->SamplerCreate(context, device, &zt_sampler_desc, &sampler));
    ze_physical_mem_desc_t physical_desc = {.stype = ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC, .size = ZT_PAGE_SIZE};
    ze_physical_mem_handle_t physical;
    OK(ze->PhysicalMemCreate(context, device, &physical_desc, &physical));
    void *reservation, *device_memory, *source, *destination, *no_memory = NULL;
    OK(ze->VirtualMemReserve(context, NULL, ZT_PAGE_SIZE, &reservation));
    OK(ze->MemAllocDevice(context, &zt_device_alloc_desc, 256, 0, device, &device_memory));
    SHOW(ze->MemAllocDevice(context, &zt_device_alloc_desc, 0, 0, device, &no_memory));
    OK(ze->MemAllocHost(context, &zt_host_alloc_desc, 1024, 0, &source));
    OK(ze->MemAllocShared(context, &zt_device_alloc_desc, &zt_host_alloc_desc, 1024, 0, device, &destination));

    /* Opened from IPC handles and closed again; an event lives in the
     * opened pool meanwhile. A handle no call gave opens nothing. */
    ze_ipc_event_pool_handle_t pool_ipc;
    ze_ipc_mem_handle_t memory_ipc, no_ipc;
    memset(&no_ipc, 0, sizeof no_ipc);
    ze_event_pool_handle_t ipc_pool;
    ze_event_handle_t ipc_event;
    void *mapped;
    OK(ze->EventPoolGetIpcHandle(pool, &pool_ipc));
    OK(ze->EventPoolOpenIpcHandle(context, pool_ipc, &ipc_pool));
    OK(ze->EventCreate(ipc_pool, &zt_event_desc, &ipc_event));
    OK(ze->MemGetIpcHandle(context, device_memory, &memory_ipc));
    OK(ze->MemOpenIpcHandle(context, device, memory_ipc, 0, &mapped));
    SHOW(ze->MemOpenIpcHandle(context, device, no_ipc, 0, &no_memory));
    OK(ze->EventDestroy(ipc_event));
    OK(ze->EventPoolCloseIpcHandle(ipc_pool));
    OK(ze->MemCloseIpcHandle(context, mapped));

    for (unsigned i = 0; i < 1024; i++)
        ((uint8_t *)source)[i] = (uint8_t)(i * 7u);
    OK(ze->CommandListAppendMemoryCopy(immediate, destination, source, 1024, event, 0, NULL));
    unsigned checksum = 0;
    for (unsigned i = 0; i < 1024; i++)
        checksum = checksum * 31u + ((uint8_t *)destination)[i];
    printf("copied 1024 bytes, checksum %08x\n", checksum);
    OK(ze->CommandListClose(list));
    OK(ze->CommandQueueExecuteCommandLists(queue, 1, &list, fence));
    SHOW(ze->FenceHostSynchronize(fence, UINT64_MAX));
    OK(ze->CommandListReset(list));

    OK(ze->MemFree(context, destination));
    OK(ze->MemFree(context, source));
    OK(ze->MemFree(context, device_memory));
    OK(ze->VirtualMemFree(context, reservation, ZT_PAGE_SIZE));
    OK(ze->PhysicalMemDestroy(context, physical));
    OK(ze->SamplerDestroy(sampler));
    OK(ze->ImageDestroy(image));
    OK(ze->EventDestroy(event));
    OK(ze->EventPoolDestroy(pool));
    OK(ze->KernelDestroy(kernel));
    OK(ze->ModuleBuildLogDestroy(build_log));
    OK(ze->ModuleDestroy(module));
    OK(ze->CommandListDestroy(immediate));
    OK(ze->CommandListDestroy(list));
    OK(ze->FenceDestroy(fence));
    OK(ze->CommandQueueDestroy(queue));
    OK(ze->ContextDestroy(context));
}

/* The same kinds again, never destroyed: SCENARIO_LEAKED_OBJECTS objects. */
static void leaky_context(const scenario_functions *ze, ze_driver_handle_t driver, ze_device_handle_t device)
{
    ze_context_handle_t context;
    ze_command_queue_handle_t queue;
    ze_fence_handle_t fence;
    ze_command_list_handle_t list, immediate;
    ze_module_handle_t module, failed_module = NULL;
    ze_module_build_log_handle_t build_log, failed_build_log = NULL;
    ze_kernel_handle_t kernel;
    ze_event_pool_handle_t pool, ipc_pool;
    ze_event_handle_t event, ipc_event;
    ze_image_handle_t image;
    ze_sampler_handle_t sampler;
    ze_physical_mem_handle_t physical;
    ze_physical_mem_desc_t physical_desc = {.stype = ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC, .size = ZT_PAGE_SIZE};
    void *reservation, *device_memory, *host_memory, *shared_memory, *mapped;
    ze_ipc_event_pool_handle_t pool_ipc;
    ze_ipc_mem_handle_t memory_ipc;

    OK(ze->ContextCreate(driver, &zt_context_desc, &context)); leaked("ze_context_handle_t", context, 0, __LINE__);
    OK(ze->CommandQueueCreate(context, device, &zt_queue_desc, &queue)); leaked("ze_command_queue_handle_t", queue, 0, __LINE__);
    OK(ze->FenceCreate(queue, &zt_fence_desc, &fence)); leaked("ze_fence_handle_t", fence, 0, __LINE__);
    OK(ze->CommandListCreate(context, device, &zt_list_desc, &list)); leaked("ze_command_list_handle_t", list, 0, __LINE__);
    OK(ze->CommandListReset(list)); /* a reset keeps the list */
    OK(ze->CommandListCreateImmediate(context, device, &zt_queue_desc, &immediate)); leaked("ze_command_list_handle_t", immediate, 0, __LINE__);
    OK(ze->ModuleCreate(context, device, &zt_module_desc, &module, &build_log)); leaked("ze_module_handle_t", module, 0, __LINE__); leaked("ze_module_build_log_handle_t", build_log, 0, __LINE__);
    OK(ze->KernelCreate(module, &zt_kernel_desc, &kernel)); leaked("ze_kernel_handle_t", kernel, 0, __LINE__);
    EXPECT(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, ze->ModuleCreate(context, device, &zt_failing_module_desc, &failed_module, &failed_build_log)); leaked("ze_module_build_log_handle_t", failed_build_log, 0, __LINE__);
    OK(ze->EventPoolCreate(context, &zt_pool_desc, 1, &device, &pool)); leaked("ze_event_pool_handle_t", pool, 0, __LINE__);
    OK(ze->EventCreate(pool, &zt_event_desc, &event)); leaked("ze_event_handle_t", event, 0, __LINE__);
    OK(ze->ImageCreate(context, device, &zt_image_desc, &image)); leaked("ze_image_handle_t", image, 0, __LINE__);
    OK(ze->SamplerCreate(context, device, &zt_sampler_desc, &sampler)); leaked("ze_sampler_handle_t", sampler, 0, __LINE__);
    OK(ze->PhysicalMemCreate(context, device, &physical_desc, &physical)); leaked("ze_physical_mem_handle_t", physical, ZT_PAGE_SIZE, __LINE__);
    OK(ze->VirtualMemReserve(context, NULL, 2 * ZT_PAGE_SIZE, &reservation)); leaked("ze_virtual_mem", reservation, 2 * ZT_PAGE_SIZE, __LINE__);
    OK(ze->MemAllocDevice(context, &zt_device_alloc_desc, 4096, 0, device, &device_memory)); leaked("ze_mem", device_memory, 4096, __LINE__);
    OK(ze->MemAllocHost(context, &zt_host_alloc_desc, 1000, 0, &host_memory)); leaked("ze_mem", host_memory, 1000, __LINE__);
    OK(ze->MemAllocShared(context, &zt_device_alloc_desc, &zt_host_alloc_desc, 12345, 64, device, &shared_memory)); leaked("ze_mem", shared_memory, 12345, __LINE__);
    /* Opened from IPC handles and never closed; a mapping's size is the driver's address range of it. */
    OK(ze->EventPoolGetIpcHandle(pool, &pool_ipc));
    OK(ze->EventPoolOpenIpcHandle(context, pool_ipc, &ipc_pool)); leaked("ze_ipc_event_pool", ipc_pool, 0, __LINE__);
    OK(ze->EventCreate(ipc_pool, &zt_event_desc, &ipc_event)); leaked("ze_event_handle_t", ipc_event, 0, __LINE__);
    OK(ze->MemGetIpcHandle(context, device_memory, &memory_ipc));
    OK(ze->MemOpenIpcHandle(context, device, memory_ipc, 0, &mapped)); leaked("ze_ipc_mem", mapped, 4096, __LINE__);
    printf("leaked %d objects\n", SCENARIO_LEAKED_OBJECTS);
}

int run_leak_scenario(const scenario_functions *ze, FILE *manifest)
{
    manifest_file = manifest;
    /* livetrack sets this for the loader's start-up only: the program must
     * see the environment it was given. */
    const char *tracing = getenv("ZE_ENABLE_TRACING_LAYER");
    printf("ZE_ENABLE_TRACING_LAYER=%s\n", tracing ? tracing : "(unset)");
    ze_result_t initialized = ze->Init(0);
    if (initialized != ZE_RESULT_SUCCESS) {
        printf("zeInit -> 0x%x: no driver, nothing to do\n", (unsigned)initialized);
        return 0;
    }
    uint32_t count = 1;
    ze_driver_handle_t driver = NULL;
    ze_device_handle_t device = NULL;
    OK(ze->DriverGet(&count, &driver));
    count = 1;
    OK(ze->DeviceGet(driver, &count, &device));
    if (failures)
        return 1;
    clean_context(ze, driver, device);
    leaky_context(ze, driver, device);
    if (manifest)
        fflush(manifest);
    return failures ? 1 : 0;
}
