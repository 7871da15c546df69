/*
 * leaky_ze: a Level Zero program with the kind of leak livetrack finds.
 *
 * Each frame uploads data through a staging buffer and signals an event.
 * Frames whose data did not change take a shortcut that skips the clean-up
 * at the end of the loop, so their staging buffer and event are never
 * freed. Run it under livetrack:
 *
 *   LD_PRELOAD=<build>/layer/levelzero/liblivetrack_ze.so ./leaky_ze
 *
 * (without a Level Zero GPU, add
 *  ZE_ENABLE_ALT_DRIVERS=<build>/tests/levelzero/libze_test_driver.so)
 */
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <string.h>

#define FRAMES 8
#define STAGING_BYTES (64 * 1024)

#define CALL(call)                                                                   \
    do {                                                                             \
        ze_result_t result_ = (call);                                                \
        if (result_ != ZE_RESULT_SUCCESS) {                                          \
            fprintf(stderr, "leaky_ze: %s failed: 0x%x\n", #call, (unsigned)result_); \
            return 1;                                                                \
        }                                                                            \
    } while (0)

static int frame_changed(int frame) { return frame % 3 != 0; }

int main(void)
{
    CALL(zeInit(0));
    uint32_t count = 1;
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    CALL(zeDriverGet(&count, &driver));
    count = 1;
    CALL(zeDeviceGet(driver, &count, &device));

    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                          .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                      .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = FRAMES};
    ze_device_mem_alloc_desc_t device_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    ze_context_handle_t context;
    ze_command_list_handle_t list;
    ze_event_pool_handle_t pool;
    void *frame_buffer;
    CALL(zeContextCreate(driver, &context_desc, &context));
    CALL(zeCommandListCreateImmediate(context, device, &queue_desc, &list));
    CALL(zeEventPoolCreate(context, &pool_desc, 1, &device, &pool));
    CALL(zeMemAllocShared(context, &device_desc, &host_desc, STAGING_BYTES, 0, device, &frame_buffer));

    unsigned checksum = 0;
    for (int frame = 0; frame < FRAMES; frame++) {
        void *staging;
        ze_event_handle_t uploaded;
        ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = (uint32_t)frame,
                                      .signal = ZE_EVENT_SCOPE_FLAG_HOST};
        CALL(zeMemAllocHost(context, &host_desc, STAGING_BYTES, 0, &staging));
        CALL(zeEventCreate(pool, &event_desc, &uploaded));
        memset(staging, frame, STAGING_BYTES);
        CALL(zeCommandListAppendMemoryCopy(list, frame_buffer, staging, STAGING_BYTES, uploaded, 0, NULL));
        CALL(zeEventHostSynchronize(uploaded, UINT64_MAX));
        checksum += ((unsigned char *)frame_buffer)[frame];
        if (!frame_changed(frame))
            continue; /* the bug: skips the clean-up below */
        CALL(zeEventDestroy(uploaded));
        CALL(zeMemFree(context, staging));
    }
    printf("leaky_ze: %d frames, checksum %u\n", FRAMES, checksum);

    CALL(zeMemFree(context, frame_buffer));
    CALL(zeCommandListDestroy(list));
    /* The pool and the context go while the leaked events and buffers made
     * from them are still live: livetrack reports both destroys. */
    CALL(zeEventPoolDestroy(pool));
    CALL(zeContextDestroy(context));
    return 0;
}
