/*
 * The native API sees Level Zero objects: after livetrack_mark(),
 * livetrack_snapshot_since() lists exactly the objects this test created
 * and still holds (what it opened from IPC handles too), with their
 * types, sizes, parents, owners and the file:line of the creating call;
 * failed calls create nothing; a reset keeps the object; destroying
 * everything empties the set again. Every call reaches the driver exactly
 * once.
 *
 * Runs with liblivetrack_ze.so preloaded and the test driver.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "livetrack/livetrack.h"
#include "ze_layer_loaded.h"
#include "ze_test_driver.h"
#include "ze_test_util.h"

#define THIS_FILE "ze_native_api.c"
#define MAX_EXPECTED 32

typedef struct expected_object {
    const char *type;
    uint64_t handle;
    uint64_t bytes;
    uint64_t parents[2];
    uint32_t holders;
    int line;
} expected_object;

static expected_object expected[MAX_EXPECTED];
static size_t expected_count;

static uint64_t key(const void *handle) { return (uint64_t)(uintptr_t)handle; }

static void expect(const char *type, const void *handle, uint64_t bytes, const void *parent, const void *second_parent,
                   int line)
{
    expected[expected_count++] = (expected_object){type, key(handle), bytes, {key(parent), key(second_parent)}, 0, line};
}

static expected_object *expected_for(uint64_t handle)
{
    for (size_t i = 0; i < expected_count; i++)
        if (expected[i].handle == handle)
            return &expected[i];
    return NULL;
}

static void forget(const void *handle)
{
    expected_object *object = expected_for(key(handle));
    if (object)
        *object = expected[--expected_count];
}

static int ends_with(const char *text, const char *suffix)
{
    size_t length = text ? strlen(text) : 0, suffix_length = strlen(suffix);
    return length >= suffix_length && strcmp(text + length - suffix_length, suffix) == 0;
}

/* The live set since `mark` must be exactly `expected`. */
static void check_live_set(uint64_t mark, const void *owner)
{
    for (size_t i = 0; i < expected_count; i++) {
        expected[i].holders = 0;
        for (size_t j = 0; j < expected_count; j++)
            expected[i].holders += (expected[j].parents[0] == expected[i].handle) +
                                   (expected[j].parents[1] == expected[i].handle);
    }
    livetrack_snapshot *snapshot = livetrack_snapshot_since(LIVETRACK_DOMAIN_LEVEL_ZERO, NULL, mark);
    CHECK(snapshot != NULL);
    size_t count = snapshot ? livetrack_snapshot_count(snapshot) : 0;
    CHECK_EQ_INT(count, expected_count);
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        expected_object *want = expected_for(object->handle);
        if (!want) {
            fprintf(stderr, "unexpected live %s 0x%llx\n", object->type_name, (unsigned long long)object->handle);
            CHECK(want != NULL);
            continue;
        }
        CHECK(object->domain == LIVETRACK_DOMAIN_LEVEL_ZERO);
        CHECK(object->type_name && strcmp(object->type_name, want->type) == 0);
        CHECK_EQ_INT(object->bytes, want->bytes);
        CHECK_EQ_INT(object->refs, 1);
        CHECK_EQ_INT(object->holders, want->holders);
        CHECK(object->parents[0] == want->parents[0]);
        CHECK(object->parents[1] == want->parents[1]);
        CHECK(object->owner == owner);
        livetrack_frame frames[8];
        size_t frame_count = livetrack_stack_symbolize(object->stack, frames, 8);
        CHECK(frame_count > 0);
        if (frame_count > 0) {
            if (!ends_with(frames[0].file, THIS_FILE) || (int)frames[0].line != want->line)
                fprintf(stderr, "%s 0x%llx: created at %s:%u, expected " THIS_FILE ":%d\n", want->type,
                        (unsigned long long)want->handle, frames[0].file ? frames[0].file : "?", frames[0].line,
                        want->line);
            CHECK(ends_with(frames[0].file, THIS_FILE));
            CHECK_EQ_INT(frames[0].line, want->line);
        }
    }
    livetrack_snapshot_free(snapshot);
}

static uint64_t seq_of(const void *handle)
{
    livetrack_object object;
    return livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, key(handle), &object) == LIVETRACK_OK ? object.seq : 0;
}

int main(void)
{
    if (!ze_layer_loaded())
        return 2;
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    zt_open(&driver, &device);
    ztd_interface test_driver;
    CHECK(ztd_find(getenv("ZE_ENABLE_ALT_DRIVERS"), &test_driver));
    livetrack_stats before;
    livetrack_get_stats(&before);
    uint64_t mark = livetrack_mark();

    ze_context_handle_t context, context_ex;
    ze_command_queue_handle_t queue;
    ze_fence_handle_t fence;
    ze_command_list_handle_t list, immediate;
    ze_module_handle_t module, no_module = NULL;
    ze_module_build_log_handle_t build_log;
    ze_kernel_handle_t kernel, no_kernel = NULL;
    ze_event_pool_handle_t pool, ipc_pool;
    ze_event_handle_t event, ipc_event;
    ze_ipc_event_pool_handle_t pool_ipc;
    ze_ipc_mem_handle_t memory_ipc, no_ipc;
    memset(&no_ipc, 0, sizeof no_ipc);
    ze_image_handle_t image, view;
    ze_sampler_handle_t sampler;
    ze_physical_mem_handle_t physical;
    ze_physical_mem_desc_t physical_desc = {.stype = ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC, .size = 3 * ZT_PAGE_SIZE};
    void *reservation, *device_memory, *host_memory, *shared_memory, *mapped, *no_memory = NULL;

    CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &context), 0); expect("ze_context_handle_t", context, 0, NULL, NULL, __LINE__);
    CHECK_EQ_INT(zeContextCreateEx(driver, &zt_context_desc, 1, &device, &context_ex), 0); expect("ze_context_handle_t", context_ex, 0, NULL, NULL, __LINE__);
    CHECK_EQ_INT(zeCommandQueueCreate(context, device, &zt_queue_desc, &queue), 0); expect("ze_command_queue_handle_t", queue, 0, context, NULL, __LINE__);
    CHECK_EQ_INT(zeFenceCreate(queue, &zt_fence_desc, &fence), 0); expect("ze_fence_handle_t", fence, 0, queue, NULL, __LINE__);
    CHECK_EQ_INT(zeCommandListCreate(context, device, &zt_list_desc, &list), 0); expect("ze_command_list_handle_t", list, 0, context, NULL, __LINE__);
    CHECK_EQ_INT(zeCommandListCreateImmediate(context_ex, device, &zt_queue_desc, &immediate), 0); expect("ze_command_list_handle_t", immediate, 0, context_ex, NULL, __LINE__);
    CHECK_EQ_INT(zeModuleCreate(context, device, &zt_module_desc, &module, &build_log), 0); expect("ze_module_handle_t", module, 0, context, NULL, __LINE__); expect("ze_module_build_log_handle_t", build_log, 0, NULL, NULL, __LINE__);
    CHECK_EQ_INT(zeKernelCreate(module, &zt_kernel_desc, &kernel), 0); expect("ze_kernel_handle_t", kernel, 0, module, NULL, __LINE__);
    CHECK_EQ_INT(zeEventPoolCreate(context, &zt_pool_desc, 0, NULL, &pool), 0); expect("ze_event_pool_handle_t", pool, 0, context, NULL, __LINE__);
    CHECK_EQ_INT(zeEventCreate(pool, &zt_event_desc, &event), 0); expect("ze_event_handle_t", event, 0, pool, NULL, __LINE__);
    CHECK_EQ_INT(zeImageCreate(context, device, &zt_image_desc, &image), 0); expect("ze_image_handle_t", image, 0, context, NULL, __LINE__);
    CHECK_EQ_INT(zeImageViewCreateExp(context, device, &zt_image_desc, image, &view), 0); expect("ze_image_handle_t", view, 0, context, NULL, __LINE__);
    CHECK_EQ_INT(zeSamplerCreate(context, device, &zt_sampler_desc, &sampler), 0); expect("ze_sampler_handle_t", sampler, 0, context, NULL, __LINE__);
    CHECK_EQ_INT(zePhysicalMemCreate(context, device, &physical_desc, &physical), 0); expect("ze_physical_mem_handle_t", physical, 3 * ZT_PAGE_SIZE, context, NULL, __LINE__);
    CHECK_EQ_INT(zeVirtualMemReserve(context, NULL, 4 * ZT_PAGE_SIZE, &reservation), 0); expect("ze_virtual_mem", reservation, 4 * ZT_PAGE_SIZE, context, NULL, __LINE__);
    CHECK_EQ_INT(zeMemAllocDevice(context, &zt_device_alloc_desc, 1 << 20, 0, device, &device_memory), 0); expect("ze_mem", device_memory, 1 << 20, context, NULL, __LINE__);
    CHECK_EQ_INT(zeMemAllocHost(context_ex, &zt_host_alloc_desc, 777, 0, &host_memory), 0); expect("ze_mem", host_memory, 777, context_ex, NULL, __LINE__);
    CHECK_EQ_INT(zeMemAllocShared(context, &zt_device_alloc_desc, &zt_host_alloc_desc, 4000, 4096, device, &shared_memory), 0); expect("ze_mem", shared_memory, 4000, context, NULL, __LINE__);
    /* Opened from IPC handles this process exported (the test driver maps
     * them anew): they belong to the context they were opened in, and an
     * event of the opened pool to the pool, so all have the driver as
     * owner. A mapping's size is the driver's address range of it. */
    CHECK_EQ_INT(zeEventPoolGetIpcHandle(pool, &pool_ipc), 0);
    CHECK_EQ_INT(zeEventPoolOpenIpcHandle(context_ex, pool_ipc, &ipc_pool), 0); expect("ze_ipc_event_pool", ipc_pool, 0, context_ex, NULL, __LINE__);
    CHECK_EQ_INT(zeEventCreate(ipc_pool, &zt_event_desc, &ipc_event), 0); expect("ze_event_handle_t", ipc_event, 0, ipc_pool, NULL, __LINE__);
    CHECK_EQ_INT(zeMemGetIpcHandle(context, device_memory, &memory_ipc), 0);
    CHECK_EQ_INT(zeMemOpenIpcHandle(context_ex, device, memory_ipc, 0, &mapped), 0); expect("ze_ipc_mem", mapped, 1 << 20, context_ex, NULL, __LINE__);

    /* Failed calls create nothing (a failed build's log is the exception,
     * and here none was asked for). */
    CHECK_EQ_INT(zeKernelCreate(module, &zt_missing_kernel_desc, &no_kernel), ZE_RESULT_ERROR_INVALID_KERNEL_NAME);
    CHECK_EQ_INT(zeMemAllocDevice(context, &zt_device_alloc_desc, 0, 0, device, &no_memory), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    CHECK_EQ_INT(zeModuleCreate(context, device, &zt_failing_module_desc, &no_module, NULL), ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    CHECK_EQ_INT(zeMemOpenIpcHandle(context, device, no_ipc, 0, &no_memory), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    check_live_set(mark, driver);
    CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), expected_count);

    /* Resets keep the object: the same one, not a new one. */
    uint64_t list_seq = seq_of(list), fence_seq = seq_of(fence), event_seq = seq_of(event);
    CHECK_EQ_INT(zeCommandListReset(list), 0);
    CHECK_EQ_INT(zeFenceReset(fence), 0);
    CHECK_EQ_INT(zeEventHostReset(event), 0);
    CHECK(list_seq != 0 && seq_of(list) == list_seq);
    CHECK(fence_seq != 0 && seq_of(fence) == fence_seq);
    CHECK(event_seq != 0 && seq_of(event) == event_seq);
    check_live_set(mark, driver);

    /* The owner filter: every object here comes from this driver. */
    livetrack_snapshot *by_owner = livetrack_snapshot_take(LIVETRACK_DOMAIN_LEVEL_ZERO, driver);
    CHECK(by_owner && livetrack_snapshot_count(by_owner) >= expected_count);
    livetrack_snapshot_free(by_owner);

    /* Children first, then parents: each destroy leaves exactly the rest. */
    ze_memory_free_ext_desc_t free_desc = {.stype = ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC,
                                           .freePolicy = ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE};
    CHECK_EQ_INT(zeMemFreeExt(context, &free_desc, shared_memory), 0); forget(shared_memory);
    CHECK_EQ_INT(zeMemFree(context_ex, host_memory), 0); forget(host_memory);
    CHECK_EQ_INT(zeMemCloseIpcHandle(context_ex, mapped), 0); forget(mapped);
    CHECK_EQ_INT(zeMemFree(context, device_memory), 0); forget(device_memory);
    CHECK_EQ_INT(zeVirtualMemFree(context, reservation, 4 * ZT_PAGE_SIZE), 0); forget(reservation);
    CHECK_EQ_INT(zePhysicalMemDestroy(context, physical), 0); forget(physical);
    check_live_set(mark, driver);
    CHECK_EQ_INT(zeSamplerDestroy(sampler), 0); forget(sampler);
    CHECK_EQ_INT(zeImageDestroy(view), 0); forget(view);
    CHECK_EQ_INT(zeImageDestroy(image), 0); forget(image);
    CHECK_EQ_INT(zeEventDestroy(event), 0); forget(event);
    CHECK_EQ_INT(zeEventDestroy(ipc_event), 0); forget(ipc_event);
    CHECK_EQ_INT(zeEventPoolCloseIpcHandle(ipc_pool), 0); forget(ipc_pool);
    CHECK_EQ_INT(zeEventPoolDestroy(pool), 0); forget(pool);
    CHECK_EQ_INT(zeKernelDestroy(kernel), 0); forget(kernel);
    CHECK_EQ_INT(zeModuleDestroy(module), 0); forget(module);
    CHECK_EQ_INT(zeModuleBuildLogDestroy(build_log), 0); forget(build_log);
    check_live_set(mark, driver);
    CHECK_EQ_INT(zeCommandListDestroy(immediate), 0); forget(immediate);
    CHECK_EQ_INT(zeCommandListDestroy(list), 0); forget(list);
    CHECK_EQ_INT(zeFenceDestroy(fence), 0); forget(fence);
    CHECK_EQ_INT(zeCommandQueueDestroy(queue), 0); forget(queue);
    CHECK_EQ_INT(zeContextDestroy(context_ex), 0); forget(context_ex);
    CHECK_EQ_INT(zeContextDestroy(context), 0); forget(context);
    check_live_set(mark, driver);
    CHECK_EQ_INT(expected_count, 0);
    CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);

    /* No misuse, and every call reached the driver exactly once. */
    livetrack_stats after;
    livetrack_get_stats(&after);
    CHECK_EQ_INT(after.misuse, before.misuse);
    if (test_driver.calls) {
        CHECK_EQ_INT(test_driver.calls("zeMemFree"), 2);
        CHECK_EQ_INT(test_driver.calls("zeMemFreeExt"), 1);
        CHECK_EQ_INT(test_driver.calls("zeContextDestroy"), 2);
        CHECK_EQ_INT(test_driver.calls("zeImageDestroy"), 2);
        CHECK_EQ_INT(test_driver.calls("zeCommandListReset"), 1);
        CHECK_EQ_INT(test_driver.calls("zeModuleCreate"), 2);
        CHECK_EQ_INT(test_driver.calls("zeEventPoolOpenIpcHandle"), 1);
        CHECK_EQ_INT(test_driver.calls("zeEventPoolCloseIpcHandle"), 1);
        CHECK_EQ_INT(test_driver.calls("zeMemOpenIpcHandle"), 2);
        CHECK_EQ_INT(test_driver.calls("zeMemCloseIpcHandle"), 1);
        CHECK_EQ_INT(test_driver.live(), 0);
    }
    return check_summary("ze_native_api");
}
