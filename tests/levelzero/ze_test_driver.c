/*
 * A Level Zero driver for tests, loaded by the real loader through
 * ZE_ENABLE_ALT_DRIVERS=/abs/path/libze_test_driver.so.
 *
 * It implements just enough of the API for livetrack's tests: one driver,
 * one device, and every object kind livetrack tracks. Each object is a
 * real heap block (so handles are distinct and reused the way a real
 * driver's are), allocations are real host memory, and virtual
 * reservations are real PROT_NONE mappings. Every handle passed in is
 * checked against the set of live objects, so a destroy of a dead handle
 * gets ZE_RESULT_ERROR_INVALID_ARGUMENT instead of crashing: misuse tests
 * can then check that livetrack leaves the driver's answer alone.
 *
 * Unlike a real driver, destroying a context does not free what was
 * created in it: those objects stay valid until destroyed themselves,
 * except that calls naming the destroyed context (zeMemFree,
 * zeVirtualMemFree, zePhysicalMemDestroy) fail with
 * ZE_RESULT_ERROR_INVALID_ARGUMENT.
 *
 * Loader 1.8 refuses a driver (zeInit fails with 0x78000001) unless all
 * 53 ze/zet/zes Get*ProcAddrTable functions are exported; entries left
 * NULL make the loader answer ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.
 */
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ze_test_driver.h"

#define TEST_DRIVER_EXPORT __attribute__((visibility("default")))

/* ---- call counters ------------------------------------------------------ */

#define ENTRY_POINTS(X)                                                                                      \
    X(zeInit) X(zeDriverGet) X(zeDriverGetApiVersion) X(zeDriverGetProperties)                               \
    X(zeDriverGetExtensionProperties) X(zeDeviceGet) X(zeDeviceGetProperties) X(zeDeviceGetSubDevices)       \
    X(zeContextCreate) X(zeContextCreateEx) X(zeContextDestroy) X(zeContextGetStatus)                        \
    X(zeCommandQueueCreate) X(zeCommandQueueDestroy) X(zeCommandQueueExecuteCommandLists)                    \
    X(zeCommandQueueSynchronize) X(zeCommandListCreate) X(zeCommandListCreateImmediate)                      \
    X(zeCommandListDestroy) X(zeCommandListClose) X(zeCommandListReset) X(zeCommandListAppendMemoryCopy)     \
    X(zeCommandListAppendSignalEvent) X(zeCommandListAppendBarrier) X(zeModuleCreate) X(zeModuleDestroy)     \
    X(zeModuleDynamicLink) X(zeModuleBuildLogDestroy) X(zeModuleBuildLogGetString)                           \
    X(zeModuleInspectLinkageExt) X(zeKernelCreate) X(zeKernelDestroy) X(zeKernelSetArgumentValue)            \
    X(zeKernelSetGroupSize) X(zeEventPoolCreate) X(zeEventPoolDestroy) X(zeEventPoolGetIpcHandle)            \
    X(zeEventPoolOpenIpcHandle) X(zeEventPoolCloseIpcHandle) X(zeEventCreate) X(zeEventDestroy)              \
    X(zeEventHostSignal) X(zeEventHostSynchronize) X(zeEventQueryStatus) X(zeEventHostReset)                 \
    X(zeFenceCreate) X(zeFenceDestroy) X(zeFenceHostSynchronize) X(zeFenceQueryStatus) X(zeFenceReset)       \
    X(zeImageCreate) X(zeImageDestroy) X(zeImageViewCreateExp) X(zeSamplerCreate) X(zeSamplerDestroy)        \
    X(zePhysicalMemCreate) X(zePhysicalMemDestroy) X(zeMemAllocShared) X(zeMemAllocDevice) X(zeMemAllocHost) \
    X(zeMemFree) X(zeMemFreeExt) X(zeMemGetAllocProperties) X(zeMemGetAddressRange) X(zeMemGetIpcHandle)     \
    X(zeMemOpenIpcHandle) X(zeMemCloseIpcHandle) X(zeVirtualMemReserve) X(zeVirtualMemFree)                  \
    X(zeVirtualMemQueryPageSize)

enum {
#define AS_INDEX(name) CALL_##name,
    ENTRY_POINTS(AS_INDEX)
#undef AS_INDEX
    CALL_COUNT
};

static const char *const entry_names[CALL_COUNT] = {
#define AS_NAME(name) #name,
    ENTRY_POINTS(AS_NAME)
#undef AS_NAME
};

static _Atomic uint64_t call_counts[CALL_COUNT];

#define COUNT_CALL(name) atomic_fetch_add_explicit(&call_counts[CALL_##name], 1, memory_order_relaxed)

TEST_DRIVER_EXPORT uint64_t ztd_calls(const char *name)
{
    for (unsigned i = 0; name && i < CALL_COUNT; i++)
        if (strcmp(entry_names[i], name) == 0)
            return atomic_load(&call_counts[i]);
    return 0;
}

static atomic_int refuse_next_destroy;

TEST_DRIVER_EXPORT void ztd_refuse_next_destroy(void) { atomic_store(&refuse_next_destroy, 1); }

/* ---- the live set ------------------------------------------------------- */

typedef enum object_kind {
    KIND_CONTEXT = 1,
    KIND_QUEUE,
    KIND_LIST,
    KIND_MODULE,
    KIND_BUILD_LOG,
    KIND_KERNEL,
    KIND_EVENT_POOL,
    KIND_EVENT,
    KIND_FENCE,
    KIND_IMAGE,
    KIND_SAMPLER,
    KIND_PHYSICAL_MEM,
    KIND_ALLOCATION,  /* host memory from zeMemAlloc* */
    KIND_RESERVATION, /* an mmap'd range from zeVirtualMemReserve */
} object_kind;

/* Every live handle or pointer, with what it is. One mutex: the driver
 * is for tests, and its cost is the same with and without livetrack. */
typedef struct live_entry {
    struct live_entry *next;
    uintptr_t address;
    object_kind kind;
    size_t size;
} live_entry;

#define LIVE_BUCKETS 4096u
static live_entry *live_buckets[LIVE_BUCKETS];
static uint64_t live_count;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned bucket_of(uintptr_t address) { return (unsigned)((address >> 4) * 0x9e3779b1u) % LIVE_BUCKETS; }

static int live_add(const void *address, object_kind kind, size_t size)
{
    live_entry *entry = malloc(sizeof *entry);
    if (!entry)
        return 0;
    entry->address = (uintptr_t)address;
    entry->kind = kind;
    entry->size = size;
    pthread_mutex_lock(&live_lock);
    unsigned bucket = bucket_of(entry->address);
    entry->next = live_buckets[bucket];
    live_buckets[bucket] = entry;
    live_count++;
    pthread_mutex_unlock(&live_lock);
    return 1;
}

/* Whether `address` is live and of `kind`; *size gets its size. */
static int live_find(const void *address, object_kind kind, size_t *size)
{
    int found = 0;
    pthread_mutex_lock(&live_lock);
    for (live_entry *entry = live_buckets[bucket_of((uintptr_t)address)]; entry; entry = entry->next) {
        if (entry->address == (uintptr_t)address && entry->kind == kind) {
            if (size)
                *size = entry->size;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&live_lock);
    return found;
}

/* Remove `address` if it is live and of `kind`; returns 1 when removed. */
static int live_remove(const void *address, object_kind kind, size_t *size)
{
    live_entry *removed = NULL;
    pthread_mutex_lock(&live_lock);
    for (live_entry **link = &live_buckets[bucket_of((uintptr_t)address)]; *link; link = &(*link)->next) {
        if ((*link)->address == (uintptr_t)address && (*link)->kind == kind) {
            removed = *link;
            *link = removed->next;
            live_count--;
            break;
        }
    }
    pthread_mutex_unlock(&live_lock);
    if (removed && size)
        *size = removed->size;
    free(removed);
    return removed != NULL;
}

TEST_DRIVER_EXPORT uint64_t ztd_live(void)
{
    pthread_mutex_lock(&live_lock);
    uint64_t count = live_count;
    pthread_mutex_unlock(&live_lock);
    return count;
}

/* ---- objects ------------------------------------------------------------ */

/* What a handle points to. The text holds a kernel's name or a build
 * log's contents. */
typedef struct test_object {
    object_kind kind;
    int signaled;
    char text[64];
} test_object;

static struct test_object the_driver_object, the_device_object;
#define THE_DRIVER ((ze_driver_handle_t)&the_driver_object)
#define THE_DEVICE ((ze_device_handle_t)&the_device_object)

#define REQUIRE_HANDLE(handle, kind)                                                                       \
    do {                                                                                                   \
        if (!(handle))                                                                                     \
            return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;                                                    \
        if (!live_find((handle), (kind), NULL))                                                            \
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;                                                       \
    } while (0)

#define REQUIRE_POINTER(pointer)                                                                           \
    do {                                                                                                   \
        if (!(pointer))                                                                                    \
            return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                                                   \
    } while (0)

/* Destroyed objects go to one shared list and the next create, on any
 * thread, takes the most recent: handles are reused at once and across
 * threads, as a driver's object pools do. With ZTD_YIELD_AFTER_DESTROY=1
 * a destroy yields the processor after the handle is free and before it
 * returns, which widens the window in which another thread's create gets
 * the same handle while the destroy is still in progress. */
typedef union pooled_object {
    union pooled_object *next;
    test_object object;
} pooled_object;
static pooled_object *free_objects;
static pthread_mutex_t free_objects_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int yield_after_destroy; /* set by zeInit */

static test_object *take_object(void)
{
    pthread_mutex_lock(&free_objects_lock);
    pooled_object *pooled = free_objects;
    if (pooled)
        free_objects = pooled->next;
    pthread_mutex_unlock(&free_objects_lock);
    if (!pooled)
        pooled = malloc(sizeof *pooled);
    if (pooled)
        memset(pooled, 0, sizeof *pooled);
    return pooled ? &pooled->object : NULL;
}

static void give_object(test_object *object)
{
    pooled_object *pooled = (pooled_object *)object;
    pthread_mutex_lock(&free_objects_lock);
    pooled->next = free_objects;
    free_objects = pooled;
    pthread_mutex_unlock(&free_objects_lock);
    if (yield_after_destroy)
        sched_yield();
}

static ze_result_t new_object(object_kind kind, const char *text, void *out)
{
    test_object *object = take_object();
    if (!object)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    object->kind = kind;
    if (text)
        strncpy(object->text, text, sizeof object->text - 1);
    if (!live_add(object, kind, 0)) {
        give_object(object);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    memcpy(out, &object, sizeof object); /* every ze_*_handle_t is a pointer */
    return ZE_RESULT_SUCCESS;
}

static ze_result_t destroy_object(const void *handle, object_kind kind)
{
    if (!handle)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!live_find(handle, kind, NULL))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (atomic_exchange(&refuse_next_destroy, 0))
        return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    if (!live_remove(handle, kind, NULL))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* another thread won */
    give_object((test_object *)handle);
    return ZE_RESULT_SUCCESS;
}

/* ---- global, driver, device --------------------------------------------- */

/* A thread of the driver's own, as real drivers start in zeInit. */
static void *driver_thread(void *unused)
{
    (void)unused;
    for (;;)
        pause();
    return NULL;
}

static ze_result_t ZE_APICALL driver_init(ze_init_flags_t flags)
{
    (void)flags;
    COUNT_CALL(zeInit);
    const char *yield = getenv("ZTD_YIELD_AFTER_DESTROY");
    yield_after_destroy = yield && strcmp(yield, "1") == 0;
    /* ZTD_START_THREAD=1: start one, once. */
    static atomic_int thread_started;
    const char *start_thread = getenv("ZTD_START_THREAD");
    pthread_t thread;
    if (start_thread && !strcmp(start_thread, "1") && !atomic_exchange(&thread_started, 1) &&
        pthread_create(&thread, NULL, driver_thread, NULL) == 0)
        pthread_detach(thread);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL driver_get(uint32_t *count, ze_driver_handle_t *drivers)
{
    COUNT_CALL(zeDriverGet);
    REQUIRE_POINTER(count);
    if (*count > 0 && drivers)
        drivers[0] = THE_DRIVER;
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL driver_get_api_version(ze_driver_handle_t driver, ze_api_version_t *version)
{
    COUNT_CALL(zeDriverGetApiVersion);
    if (driver != THE_DRIVER)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(version);
    *version = ZE_API_VERSION_CURRENT;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL driver_get_properties(ze_driver_handle_t driver, ze_driver_properties_t *properties)
{
    COUNT_CALL(zeDriverGetProperties);
    if (driver != THE_DRIVER)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(properties);
    memset(properties->uuid.id, 0x1e, sizeof properties->uuid.id);
    properties->driverVersion = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL driver_get_extension_properties(ze_driver_handle_t driver, uint32_t *count,
                                                              ze_driver_extension_properties_t *properties)
{
    (void)properties;
    COUNT_CALL(zeDriverGetExtensionProperties);
    if (driver != THE_DRIVER)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(count);
    *count = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL device_get(ze_driver_handle_t driver, uint32_t *count, ze_device_handle_t *devices)
{
    COUNT_CALL(zeDeviceGet);
    if (driver != THE_DRIVER)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(count);
    if (*count > 0 && devices)
        devices[0] = THE_DEVICE;
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL device_get_properties(ze_device_handle_t device, ze_device_properties_t *properties)
{
    COUNT_CALL(zeDeviceGetProperties);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(properties);
    properties->type = ZE_DEVICE_TYPE_GPU;
    properties->vendorId = 0x1e1e;
    properties->maxMemAllocSize = (uint64_t)1 << 32;
    strncpy(properties->name, "livetrack test device", sizeof properties->name - 1);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL device_get_sub_devices(ze_device_handle_t device, uint32_t *count,
                                                     ze_device_handle_t *sub_devices)
{
    (void)sub_devices;
    COUNT_CALL(zeDeviceGetSubDevices);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(count);
    *count = 0;
    return ZE_RESULT_SUCCESS;
}

/* ---- contexts, queues, lists -------------------------------------------- */

static ze_result_t ZE_APICALL context_create(ze_driver_handle_t driver, const ze_context_desc_t *desc,
                                             ze_context_handle_t *context)
{
    COUNT_CALL(zeContextCreate);
    if (driver != THE_DRIVER)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(context);
    return new_object(KIND_CONTEXT, NULL, context);
}

static ze_result_t ZE_APICALL context_create_ex(ze_driver_handle_t driver, const ze_context_desc_t *desc,
                                                uint32_t device_count, ze_device_handle_t *devices,
                                                ze_context_handle_t *context)
{
    COUNT_CALL(zeContextCreateEx);
    if (driver != THE_DRIVER)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(context);
    for (uint32_t i = 0; devices && i < device_count; i++)
        if (devices[i] != THE_DEVICE)
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return new_object(KIND_CONTEXT, NULL, context);
}

static ze_result_t ZE_APICALL context_destroy(ze_context_handle_t context)
{
    COUNT_CALL(zeContextDestroy);
    return destroy_object(context, KIND_CONTEXT);
}

static ze_result_t ZE_APICALL context_get_status(ze_context_handle_t context)
{
    COUNT_CALL(zeContextGetStatus);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL queue_create(ze_context_handle_t context, ze_device_handle_t device,
                                           const ze_command_queue_desc_t *desc, ze_command_queue_handle_t *queue)
{
    COUNT_CALL(zeCommandQueueCreate);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(queue);
    return new_object(KIND_QUEUE, NULL, queue);
}

static ze_result_t ZE_APICALL queue_destroy(ze_command_queue_handle_t queue)
{
    COUNT_CALL(zeCommandQueueDestroy);
    return destroy_object(queue, KIND_QUEUE);
}

static ze_result_t ZE_APICALL queue_execute(ze_command_queue_handle_t queue, uint32_t list_count,
                                            ze_command_list_handle_t *lists, ze_fence_handle_t fence)
{
    COUNT_CALL(zeCommandQueueExecuteCommandLists);
    REQUIRE_HANDLE(queue, KIND_QUEUE);
    for (uint32_t i = 0; i < list_count; i++)
        REQUIRE_HANDLE(lists ? lists[i] : NULL, KIND_LIST);
    if (fence) {
        REQUIRE_HANDLE(fence, KIND_FENCE);
        ((test_object *)fence)->signaled = 1; /* the work is done at append time */
    }
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL queue_synchronize(ze_command_queue_handle_t queue, uint64_t timeout)
{
    (void)timeout;
    COUNT_CALL(zeCommandQueueSynchronize);
    REQUIRE_HANDLE(queue, KIND_QUEUE);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL list_create(ze_context_handle_t context, ze_device_handle_t device,
                                          const ze_command_list_desc_t *desc, ze_command_list_handle_t *list)
{
    COUNT_CALL(zeCommandListCreate);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(list);
    return new_object(KIND_LIST, NULL, list);
}

static ze_result_t ZE_APICALL list_create_immediate(ze_context_handle_t context, ze_device_handle_t device,
                                                    const ze_command_queue_desc_t *desc, ze_command_list_handle_t *list)
{
    COUNT_CALL(zeCommandListCreateImmediate);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(list);
    return new_object(KIND_LIST, NULL, list);
}

static ze_result_t ZE_APICALL list_destroy(ze_command_list_handle_t list)
{
    COUNT_CALL(zeCommandListDestroy);
    return destroy_object(list, KIND_LIST);
}

static ze_result_t ZE_APICALL list_close(ze_command_list_handle_t list)
{
    COUNT_CALL(zeCommandListClose);
    REQUIRE_HANDLE(list, KIND_LIST);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL list_reset(ze_command_list_handle_t list)
{
    COUNT_CALL(zeCommandListReset);
    REQUIRE_HANDLE(list, KIND_LIST);
    return ZE_RESULT_SUCCESS;
}

/* Host memory only: the copy happens when it is appended. */
static ze_result_t ZE_APICALL list_append_memory_copy(ze_command_list_handle_t list, void *destination,
                                                      const void *source, size_t size, ze_event_handle_t signal,
                                                      uint32_t wait_count, ze_event_handle_t *wait_events)
{
    (void)wait_events;
    (void)wait_count;
    COUNT_CALL(zeCommandListAppendMemoryCopy);
    REQUIRE_HANDLE(list, KIND_LIST);
    REQUIRE_POINTER(destination);
    REQUIRE_POINTER(source);
    if (signal) {
        REQUIRE_HANDLE(signal, KIND_EVENT);
        ((test_object *)signal)->signaled = 1;
    }
    memmove(destination, source, size);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL list_append_signal_event(ze_command_list_handle_t list, ze_event_handle_t event)
{
    COUNT_CALL(zeCommandListAppendSignalEvent);
    REQUIRE_HANDLE(list, KIND_LIST);
    REQUIRE_HANDLE(event, KIND_EVENT);
    ((test_object *)event)->signaled = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL list_append_barrier(ze_command_list_handle_t list, ze_event_handle_t signal,
                                                  uint32_t wait_count, ze_event_handle_t *wait_events)
{
    (void)wait_count;
    (void)wait_events;
    COUNT_CALL(zeCommandListAppendBarrier);
    REQUIRE_HANDLE(list, KIND_LIST);
    if (signal)
        REQUIRE_HANDLE(signal, KIND_EVENT);
    return ZE_RESULT_SUCCESS;
}

/* ---- modules, build logs, kernels ---------------------------------------- */

/* The text of a module with an import no module exports. */
#define UNRESOLVED_IMPORT "unresolved import"

/* A module whose input starts with "fail" does not build: the call fails
 * with ZE_RESULT_ERROR_MODULE_BUILD_FAILURE and still hands out a build
 * log, as real drivers do. One whose input starts with "invalid" fails
 * with ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, also with a log: a real
 * driver makes the log before it looks at the input. Calls refused for
 * their arguments (an empty input) hand out nothing, except that build
 * flags ZTD_REFUSED_BUILD_FLAGS are refused with
 * ZE_RESULT_ERROR_INVALID_ARGUMENT after the log is handed out, as Intel's
 * driver refuses a descriptor it rejects. A module whose input starts
 * with "imports" builds but cannot be linked. */
static ze_result_t ZE_APICALL module_create(ze_context_handle_t context, ze_device_handle_t device,
                                            const ze_module_desc_t *desc, ze_module_handle_t *module,
                                            ze_module_build_log_handle_t *build_log)
{
    COUNT_CALL(zeModuleCreate);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(module);
    if (!desc->pInputModule || desc->inputSize == 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    int fails = desc->inputSize >= 4 && memcmp(desc->pInputModule, "fail", 4) == 0;
    int invalid = desc->inputSize >= 7 && memcmp(desc->pInputModule, "invalid", 7) == 0;
    if (build_log) {
        const char *text = fails ? "error: the module says fail" : invalid ? "error: not a module" : "";
        ze_result_t made = new_object(KIND_BUILD_LOG, text, build_log);
        if (made != ZE_RESULT_SUCCESS)
            return made;
    }
    if (desc->pBuildFlags && strcmp(desc->pBuildFlags, ZTD_REFUSED_BUILD_FLAGS) == 0)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (fails)
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    if (invalid)
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    int imports = desc->inputSize >= 7 && memcmp(desc->pInputModule, "imports", 7) == 0;
    return new_object(KIND_MODULE, imports ? UNRESOLVED_IMPORT : NULL, module);
}

/* Hands out a link log whenever asked, as zeModuleCreate does with build
 * logs; fails with ZE_RESULT_ERROR_MODULE_LINK_FAILURE when a module
 * imports something (none of them exports anything). */
static ze_result_t ZE_APICALL module_dynamic_link(uint32_t count, ze_module_handle_t *modules,
                                                  ze_module_build_log_handle_t *link_log)
{
    COUNT_CALL(zeModuleDynamicLink);
    REQUIRE_POINTER(modules);
    int unresolved = 0;
    for (uint32_t i = 0; i < count; i++) {
        REQUIRE_HANDLE(modules[i], KIND_MODULE);
        unresolved |= strcmp(((const test_object *)modules[i])->text, UNRESOLVED_IMPORT) == 0;
    }
    if (link_log) {
        ze_result_t made = new_object(KIND_BUILD_LOG, unresolved ? "error: " UNRESOLVED_IMPORT : "", link_log);
        if (made != ZE_RESULT_SUCCESS)
            return made;
    }
    return unresolved ? ZE_RESULT_ERROR_MODULE_LINK_FAILURE : ZE_RESULT_SUCCESS;
}

/* The linkage report is a build log too, always handed out: the modules'
 * imports (one module imports a function) and exports (none). */
static ze_result_t ZE_APICALL module_inspect_linkage(ze_linkage_inspection_ext_desc_t *desc, uint32_t count,
                                                     ze_module_handle_t *modules, ze_module_build_log_handle_t *log)
{
    COUNT_CALL(zeModuleInspectLinkageExt);
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(modules);
    REQUIRE_POINTER(log);
    int imports = 0;
    for (uint32_t i = 0; i < count; i++) {
        REQUIRE_HANDLE(modules[i], KIND_MODULE);
        imports |= strcmp(((const test_object *)modules[i])->text, UNRESOLVED_IMPORT) == 0;
    }
    return new_object(KIND_BUILD_LOG, imports ? "imports: " UNRESOLVED_IMPORT : "imports: none", log);
}

static ze_result_t ZE_APICALL module_destroy(ze_module_handle_t module)
{
    COUNT_CALL(zeModuleDestroy);
    return destroy_object(module, KIND_MODULE);
}

static ze_result_t ZE_APICALL build_log_destroy(ze_module_build_log_handle_t build_log)
{
    COUNT_CALL(zeModuleBuildLogDestroy);
    return destroy_object(build_log, KIND_BUILD_LOG);
}

static ze_result_t ZE_APICALL build_log_get_string(ze_module_build_log_handle_t build_log, size_t *size, char *text)
{
    COUNT_CALL(zeModuleBuildLogGetString);
    REQUIRE_HANDLE(build_log, KIND_BUILD_LOG);
    REQUIRE_POINTER(size);
    const char *contents = ((const test_object *)build_log)->text;
    size_t needed = strlen(contents) + 1;
    if (text && *size >= needed)
        memcpy(text, contents, needed);
    *size = needed;
    return ZE_RESULT_SUCCESS;
}

/* Every kernel name exists except "no_such_kernel". */
static ze_result_t ZE_APICALL kernel_create(ze_module_handle_t module, const ze_kernel_desc_t *desc,
                                            ze_kernel_handle_t *kernel)
{
    COUNT_CALL(zeKernelCreate);
    REQUIRE_HANDLE(module, KIND_MODULE);
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(desc->pKernelName);
    REQUIRE_POINTER(kernel);
    if (strcmp(desc->pKernelName, "no_such_kernel") == 0)
        return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    return new_object(KIND_KERNEL, desc->pKernelName, kernel);
}

static ze_result_t ZE_APICALL kernel_destroy(ze_kernel_handle_t kernel)
{
    COUNT_CALL(zeKernelDestroy);
    return destroy_object(kernel, KIND_KERNEL);
}

static ze_result_t ZE_APICALL kernel_set_argument_value(ze_kernel_handle_t kernel, uint32_t index, size_t size,
                                                        const void *value)
{
    (void)index;
    (void)size;
    (void)value;
    COUNT_CALL(zeKernelSetArgumentValue);
    REQUIRE_HANDLE(kernel, KIND_KERNEL);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL kernel_set_group_size(ze_kernel_handle_t kernel, uint32_t x, uint32_t y, uint32_t z)
{
    COUNT_CALL(zeKernelSetGroupSize);
    REQUIRE_HANDLE(kernel, KIND_KERNEL);
    return x && y && z ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
}

/* ---- events and fences ---------------------------------------------------- */

static ze_result_t ZE_APICALL event_pool_create(ze_context_handle_t context, const ze_event_pool_desc_t *desc,
                                                uint32_t device_count, ze_device_handle_t *devices,
                                                ze_event_pool_handle_t *pool)
{
    COUNT_CALL(zeEventPoolCreate);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(pool);
    if (desc->count == 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; devices && i < device_count; i++)
        if (devices[i] != THE_DEVICE)
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return new_object(KIND_EVENT_POOL, NULL, pool);
}

static ze_result_t ZE_APICALL event_pool_destroy(ze_event_pool_handle_t pool)
{
    COUNT_CALL(zeEventPoolDestroy);
    return destroy_object(pool, KIND_EVENT_POOL);
}

/* IPC: a handle carries the exporting pool; opening it makes another
 * pool, as an importing process gets its own. Like Intel's driver, this
 * one frees an opened pool with zeEventPoolDestroy too (its close is a
 * destroy), so misuse tests see the driver accept what the specification
 * forbids. Exporter and importer are one process here: opening needs the
 * exported pool still live. */
static ze_result_t ZE_APICALL event_pool_get_ipc_handle(ze_event_pool_handle_t pool, ze_ipc_event_pool_handle_t *ipc)
{
    COUNT_CALL(zeEventPoolGetIpcHandle);
    REQUIRE_HANDLE(pool, KIND_EVENT_POOL);
    REQUIRE_POINTER(ipc);
    memset(ipc, 0, sizeof *ipc);
    memcpy(ipc->data, &pool, sizeof pool);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL event_pool_open_ipc_handle(ze_context_handle_t context, ze_ipc_event_pool_handle_t ipc,
                                                         ze_event_pool_handle_t *pool)
{
    COUNT_CALL(zeEventPoolOpenIpcHandle);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    REQUIRE_POINTER(pool);
    ze_event_pool_handle_t exported;
    memcpy(&exported, ipc.data, sizeof exported);
    if (!exported || !live_find(exported, KIND_EVENT_POOL, NULL))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return new_object(KIND_EVENT_POOL, NULL, pool);
}

static ze_result_t ZE_APICALL event_pool_close_ipc_handle(ze_event_pool_handle_t pool)
{
    COUNT_CALL(zeEventPoolCloseIpcHandle);
    return destroy_object(pool, KIND_EVENT_POOL);
}

static ze_result_t ZE_APICALL event_create(ze_event_pool_handle_t pool, const ze_event_desc_t *desc,
                                           ze_event_handle_t *event)
{
    COUNT_CALL(zeEventCreate);
    REQUIRE_HANDLE(pool, KIND_EVENT_POOL);
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(event);
    return new_object(KIND_EVENT, NULL, event);
}

static ze_result_t ZE_APICALL event_destroy(ze_event_handle_t event)
{
    COUNT_CALL(zeEventDestroy);
    return destroy_object(event, KIND_EVENT);
}

static ze_result_t ZE_APICALL event_host_signal(ze_event_handle_t event)
{
    COUNT_CALL(zeEventHostSignal);
    REQUIRE_HANDLE(event, KIND_EVENT);
    ((test_object *)event)->signaled = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL event_host_synchronize(ze_event_handle_t event, uint64_t timeout)
{
    (void)timeout;
    COUNT_CALL(zeEventHostSynchronize);
    REQUIRE_HANDLE(event, KIND_EVENT);
    return ((test_object *)event)->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t ZE_APICALL event_query_status(ze_event_handle_t event)
{
    COUNT_CALL(zeEventQueryStatus);
    REQUIRE_HANDLE(event, KIND_EVENT);
    return ((test_object *)event)->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t ZE_APICALL event_host_reset(ze_event_handle_t event)
{
    COUNT_CALL(zeEventHostReset);
    REQUIRE_HANDLE(event, KIND_EVENT);
    ((test_object *)event)->signaled = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fence_create(ze_command_queue_handle_t queue, const ze_fence_desc_t *desc,
                                           ze_fence_handle_t *fence)
{
    COUNT_CALL(zeFenceCreate);
    REQUIRE_HANDLE(queue, KIND_QUEUE);
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(fence);
    return new_object(KIND_FENCE, NULL, fence);
}

static ze_result_t ZE_APICALL fence_destroy(ze_fence_handle_t fence)
{
    COUNT_CALL(zeFenceDestroy);
    return destroy_object(fence, KIND_FENCE);
}

static ze_result_t ZE_APICALL fence_host_synchronize(ze_fence_handle_t fence, uint64_t timeout)
{
    (void)timeout;
    COUNT_CALL(zeFenceHostSynchronize);
    REQUIRE_HANDLE(fence, KIND_FENCE);
    return ((test_object *)fence)->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t ZE_APICALL fence_query_status(ze_fence_handle_t fence)
{
    COUNT_CALL(zeFenceQueryStatus);
    REQUIRE_HANDLE(fence, KIND_FENCE);
    return ((test_object *)fence)->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t ZE_APICALL fence_reset(ze_fence_handle_t fence)
{
    COUNT_CALL(zeFenceReset);
    REQUIRE_HANDLE(fence, KIND_FENCE);
    ((test_object *)fence)->signaled = 0;
    return ZE_RESULT_SUCCESS;
}

/* ---- images and samplers --------------------------------------------------- */

static ze_result_t ZE_APICALL image_create(ze_context_handle_t context, ze_device_handle_t device,
                                           const ze_image_desc_t *desc, ze_image_handle_t *image)
{
    COUNT_CALL(zeImageCreate);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(image);
    if (desc->width == 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    return new_object(KIND_IMAGE, NULL, image);
}

static ze_result_t ZE_APICALL image_destroy(ze_image_handle_t image)
{
    COUNT_CALL(zeImageDestroy);
    return destroy_object(image, KIND_IMAGE);
}

static ze_result_t ZE_APICALL image_view_create_exp(ze_context_handle_t context, ze_device_handle_t device,
                                                    const ze_image_desc_t *desc, ze_image_handle_t image,
                                                    ze_image_handle_t *view)
{
    COUNT_CALL(zeImageViewCreateExp);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    REQUIRE_HANDLE(image, KIND_IMAGE);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(view);
    return new_object(KIND_IMAGE, NULL, view);
}

static ze_result_t ZE_APICALL sampler_create(ze_context_handle_t context, ze_device_handle_t device,
                                             const ze_sampler_desc_t *desc, ze_sampler_handle_t *sampler)
{
    COUNT_CALL(zeSamplerCreate);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(sampler);
    return new_object(KIND_SAMPLER, NULL, sampler);
}

static ze_result_t ZE_APICALL sampler_destroy(ze_sampler_handle_t sampler)
{
    COUNT_CALL(zeSamplerDestroy);
    return destroy_object(sampler, KIND_SAMPLER);
}

/* ---- memory ------------------------------------------------------------------ */

#define PAGE_SIZE_FOR_TESTS 65536u

static ze_result_t ZE_APICALL physical_mem_create(ze_context_handle_t context, ze_device_handle_t device,
                                                  ze_physical_mem_desc_t *desc, ze_physical_mem_handle_t *memory)
{
    COUNT_CALL(zePhysicalMemCreate);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(desc);
    REQUIRE_POINTER(memory);
    if (desc->size == 0 || desc->size % PAGE_SIZE_FOR_TESTS)
        return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    return new_object(KIND_PHYSICAL_MEM, NULL, memory);
}

static ze_result_t ZE_APICALL physical_mem_destroy(ze_context_handle_t context, ze_physical_mem_handle_t memory)
{
    COUNT_CALL(zePhysicalMemDestroy);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    return destroy_object(memory, KIND_PHYSICAL_MEM);
}

static ze_result_t allocate(size_t size, size_t alignment, void **out)
{
    REQUIRE_POINTER(out);
    if (size == 0)
        return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (alignment & (alignment - 1))
        return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    void *memory = NULL;
    if (posix_memalign(&memory, alignment > 64 ? alignment : 64, size) != 0)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    if (!live_add(memory, KIND_ALLOCATION, size)) {
        free(memory);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *out = memory;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL mem_alloc_shared(ze_context_handle_t context, const ze_device_mem_alloc_desc_t *device_desc,
                                               const ze_host_mem_alloc_desc_t *host_desc, size_t size,
                                               size_t alignment, ze_device_handle_t device, void **out)
{
    COUNT_CALL(zeMemAllocShared);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    REQUIRE_POINTER(device_desc);
    REQUIRE_POINTER(host_desc);
    if (device && device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return allocate(size, alignment, out);
}

static ze_result_t ZE_APICALL mem_alloc_device(ze_context_handle_t context, const ze_device_mem_alloc_desc_t *desc,
                                               size_t size, size_t alignment, ze_device_handle_t device, void **out)
{
    COUNT_CALL(zeMemAllocDevice);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    REQUIRE_POINTER(desc);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return allocate(size, alignment, out);
}

static ze_result_t ZE_APICALL mem_alloc_host(ze_context_handle_t context, const ze_host_mem_alloc_desc_t *desc,
                                             size_t size, size_t alignment, void **out)
{
    COUNT_CALL(zeMemAllocHost);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    REQUIRE_POINTER(desc);
    return allocate(size, alignment, out);
}

static ze_result_t release_allocation(ze_context_handle_t context, void *pointer)
{
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    REQUIRE_POINTER(pointer);
    if (!live_find(pointer, KIND_ALLOCATION, NULL))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (atomic_exchange(&refuse_next_destroy, 0))
        return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    if (!live_remove(pointer, KIND_ALLOCATION, NULL))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    free(pointer);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL mem_free(ze_context_handle_t context, void *pointer)
{
    COUNT_CALL(zeMemFree);
    return release_allocation(context, pointer);
}

static ze_result_t ZE_APICALL mem_free_ext(ze_context_handle_t context, const ze_memory_free_ext_desc_t *desc,
                                           void *pointer)
{
    COUNT_CALL(zeMemFreeExt);
    REQUIRE_POINTER(desc);
    return release_allocation(context, pointer);
}

static ze_result_t ZE_APICALL mem_get_alloc_properties(ze_context_handle_t context, const void *pointer,
                                                       ze_memory_allocation_properties_t *properties,
                                                       ze_device_handle_t *device)
{
    COUNT_CALL(zeMemGetAllocProperties);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    REQUIRE_POINTER(properties);
    properties->type = live_find(pointer, KIND_ALLOCATION, NULL) ? ZE_MEMORY_TYPE_HOST : ZE_MEMORY_TYPE_UNKNOWN;
    properties->id = (uint64_t)(uintptr_t)pointer;
    properties->pageSize = PAGE_SIZE_FOR_TESTS;
    if (device)
        *device = properties->type == ZE_MEMORY_TYPE_UNKNOWN ? NULL : THE_DEVICE;
    return ZE_RESULT_SUCCESS;
}

/* Only the start of an allocation is known here (what livetrack asks). */
static ze_result_t ZE_APICALL mem_get_address_range(ze_context_handle_t context, const void *pointer, void **base,
                                                    size_t *size)
{
    COUNT_CALL(zeMemGetAddressRange);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    size_t found = 0;
    if (!live_find(pointer, KIND_ALLOCATION, &found))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (base)
        *base = (void *)pointer;
    if (size)
        *size = found;
    return ZE_RESULT_SUCCESS;
}

/* IPC: a handle carries the exported allocation's size; opening it maps
 * a fresh block of that size, at another address as in an importing
 * process. zeMemFree frees a mapping too and zeMemCloseIpcHandle an
 * allocation, as Intel's driver does (its close is a free). */
static ze_result_t ZE_APICALL mem_get_ipc_handle(ze_context_handle_t context, const void *pointer,
                                                 ze_ipc_mem_handle_t *ipc)
{
    COUNT_CALL(zeMemGetIpcHandle);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    REQUIRE_POINTER(ipc);
    size_t size = 0;
    if (!pointer || !live_find(pointer, KIND_ALLOCATION, &size))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    memset(ipc, 0, sizeof *ipc);
    memcpy(ipc->data, &size, sizeof size);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL mem_open_ipc_handle(ze_context_handle_t context, ze_device_handle_t device,
                                                  ze_ipc_mem_handle_t ipc, ze_ipc_memory_flags_t flags, void **out)
{
    (void)flags;
    COUNT_CALL(zeMemOpenIpcHandle);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(out);
    size_t size;
    memcpy(&size, ipc.data, sizeof size);
    if (size == 0) /* no handle zeMemGetIpcHandle gave */
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return allocate(size, 0, out);
}

static ze_result_t ZE_APICALL mem_close_ipc_handle(ze_context_handle_t context, const void *pointer)
{
    COUNT_CALL(zeMemCloseIpcHandle);
    return release_allocation(context, (void *)pointer);
}

static ze_result_t ZE_APICALL virtual_mem_reserve(ze_context_handle_t context, const void *start, size_t size,
                                                  void **out)
{
    COUNT_CALL(zeVirtualMemReserve);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    REQUIRE_POINTER(out);
    if (size == 0 || size % PAGE_SIZE_FOR_TESTS)
        return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    void *range = mmap((void *)start, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (range == MAP_FAILED)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    if (!live_add(range, KIND_RESERVATION, size)) {
        munmap(range, size);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *out = range;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL virtual_mem_free(ze_context_handle_t context, const void *pointer, size_t size)
{
    COUNT_CALL(zeVirtualMemFree);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    size_t reserved = 0;
    if (!pointer || !live_find(pointer, KIND_RESERVATION, &reserved) || reserved != size)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (atomic_exchange(&refuse_next_destroy, 0))
        return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    if (!live_remove(pointer, KIND_RESERVATION, NULL))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    munmap((void *)pointer, size);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL virtual_mem_query_page_size(ze_context_handle_t context, ze_device_handle_t device,
                                                          size_t size, size_t *page_size)
{
    (void)size;
    COUNT_CALL(zeVirtualMemQueryPageSize);
    REQUIRE_HANDLE(context, KIND_CONTEXT);
    if (device != THE_DEVICE)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    REQUIRE_POINTER(page_size);
    *page_size = PAGE_SIZE_FOR_TESTS;
    return ZE_RESULT_SUCCESS;
}

/* ---- the tables the loader asks for ------------------------------------- */

/* Each table is cleared first: entries this driver lacks stay NULL. */
#define BEGIN_TABLE(table)                                                                                  \
    if (!(table))                                                                                           \
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                                                        \
    memset((table), 0, sizeof *(table))

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t version, ze_global_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnInit = driver_init;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t version, ze_driver_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnGet = driver_get;
    table->pfnGetApiVersion = driver_get_api_version;
    table->pfnGetProperties = driver_get_properties;
    table->pfnGetExtensionProperties = driver_get_extension_properties;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t version, ze_device_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnGet = device_get;
    table->pfnGetProperties = device_get_properties;
    table->pfnGetSubDevices = device_get_sub_devices;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t version, ze_context_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = context_create;
    table->pfnCreateEx = context_create_ex;
    table->pfnDestroy = context_destroy;
    table->pfnGetStatus = context_get_status;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetCommandQueueProcAddrTable(ze_api_version_t version,
                                                                        ze_command_queue_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = queue_create;
    table->pfnDestroy = queue_destroy;
    table->pfnExecuteCommandLists = queue_execute;
    table->pfnSynchronize = queue_synchronize;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetCommandListProcAddrTable(ze_api_version_t version,
                                                                       ze_command_list_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = list_create;
    table->pfnCreateImmediate = list_create_immediate;
    table->pfnDestroy = list_destroy;
    table->pfnClose = list_close;
    table->pfnReset = list_reset;
    table->pfnAppendMemoryCopy = list_append_memory_copy;
    table->pfnAppendSignalEvent = list_append_signal_event;
    table->pfnAppendBarrier = list_append_barrier;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetModuleProcAddrTable(ze_api_version_t version, ze_module_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = module_create;
    table->pfnDestroy = module_destroy;
    table->pfnDynamicLink = module_dynamic_link;
    table->pfnInspectLinkageExt = module_inspect_linkage;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetModuleBuildLogProcAddrTable(ze_api_version_t version,
                                                                          ze_module_build_log_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnDestroy = build_log_destroy;
    table->pfnGetString = build_log_get_string;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetKernelProcAddrTable(ze_api_version_t version, ze_kernel_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = kernel_create;
    table->pfnDestroy = kernel_destroy;
    table->pfnSetArgumentValue = kernel_set_argument_value;
    table->pfnSetGroupSize = kernel_set_group_size;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetEventPoolProcAddrTable(ze_api_version_t version,
                                                                     ze_event_pool_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = event_pool_create;
    table->pfnDestroy = event_pool_destroy;
    table->pfnGetIpcHandle = event_pool_get_ipc_handle;
    table->pfnOpenIpcHandle = event_pool_open_ipc_handle;
    table->pfnCloseIpcHandle = event_pool_close_ipc_handle;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetEventProcAddrTable(ze_api_version_t version, ze_event_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = event_create;
    table->pfnDestroy = event_destroy;
    table->pfnHostSignal = event_host_signal;
    table->pfnHostSynchronize = event_host_synchronize;
    table->pfnQueryStatus = event_query_status;
    table->pfnHostReset = event_host_reset;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetFenceProcAddrTable(ze_api_version_t version, ze_fence_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = fence_create;
    table->pfnDestroy = fence_destroy;
    table->pfnHostSynchronize = fence_host_synchronize;
    table->pfnQueryStatus = fence_query_status;
    table->pfnReset = fence_reset;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetImageProcAddrTable(ze_api_version_t version, ze_image_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = image_create;
    table->pfnDestroy = image_destroy;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetImageExpProcAddrTable(ze_api_version_t version,
                                                                    ze_image_exp_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnViewCreateExp = image_view_create_exp;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetSamplerProcAddrTable(ze_api_version_t version, ze_sampler_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = sampler_create;
    table->pfnDestroy = sampler_destroy;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetPhysicalMemProcAddrTable(ze_api_version_t version,
                                                                       ze_physical_mem_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnCreate = physical_mem_create;
    table->pfnDestroy = physical_mem_destroy;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetMemProcAddrTable(ze_api_version_t version, ze_mem_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnAllocShared = mem_alloc_shared;
    table->pfnAllocDevice = mem_alloc_device;
    table->pfnAllocHost = mem_alloc_host;
    table->pfnFree = mem_free;
    table->pfnFreeExt = mem_free_ext;
    table->pfnGetAllocProperties = mem_get_alloc_properties;
    table->pfnGetAddressRange = mem_get_address_range;
    table->pfnGetIpcHandle = mem_get_ipc_handle;
    table->pfnOpenIpcHandle = mem_open_ipc_handle;
    table->pfnCloseIpcHandle = mem_close_ipc_handle;
    return ZE_RESULT_SUCCESS;
}

TEST_DRIVER_EXPORT ze_result_t ZE_APICALL zeGetVirtualMemProcAddrTable(ze_api_version_t version,
                                                                      ze_virtual_mem_dditable_t *table)
{
    (void)version;
    BEGIN_TABLE(table);
    table->pfnReserve = virtual_mem_reserve;
    table->pfnFree = virtual_mem_free;
    table->pfnQueryPageSize = virtual_mem_query_page_size;
    return ZE_RESULT_SUCCESS;
}

/* The tables this driver leaves empty: the loader only needs them to exist. */
#define EMPTY_TABLES(X)                                                                                     \
    X(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)                                                \
    X(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)                                                  \
    X(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)                                                \
    X(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)                                   \
    X(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)                                       \
    X(zetGetDeviceProcAddrTable, zet_device_dditable_t)                                                     \
    X(zetGetContextProcAddrTable, zet_context_dditable_t)                                                   \
    X(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)                                          \
    X(zetGetModuleProcAddrTable, zet_module_dditable_t)                                                     \
    X(zetGetKernelProcAddrTable, zet_kernel_dditable_t)                                                     \
    X(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)                                          \
    X(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)                                   \
    X(zetGetMetricProcAddrTable, zet_metric_dditable_t)                                                     \
    X(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)                                    \
    X(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)                                 \
    X(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)                                          \
    X(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)                                              \
    X(zetGetDebugProcAddrTable, zet_debug_dditable_t)                                                       \
    X(zesGetDriverProcAddrTable, zes_driver_dditable_t)                                                     \
    X(zesGetDeviceProcAddrTable, zes_device_dditable_t)                                                     \
    X(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)                                               \
    X(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)                              \
    X(zesGetPowerProcAddrTable, zes_power_dditable_t)                                                       \
    X(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)                                               \
    X(zesGetEngineProcAddrTable, zes_engine_dditable_t)                                                     \
    X(zesGetStandbyProcAddrTable, zes_standby_dditable_t)                                                   \
    X(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)                                                 \
    X(zesGetMemoryProcAddrTable, zes_memory_dditable_t)                                                     \
    X(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)                                            \
    X(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)                                           \
    X(zesGetPsuProcAddrTable, zes_psu_dditable_t)                                                           \
    X(zesGetFanProcAddrTable, zes_fan_dditable_t)                                                           \
    X(zesGetLedProcAddrTable, zes_led_dditable_t)                                                           \
    X(zesGetRasProcAddrTable, zes_ras_dditable_t)                                                           \
    X(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)

#define DEFINE_EMPTY_TABLE(function, table_type)                                                            \
    TEST_DRIVER_EXPORT ze_result_t ZE_APICALL function(ze_api_version_t version, table_type *table)         \
    {                                                                                                       \
        (void)version;                                                                                      \
        BEGIN_TABLE(table);                                                                                 \
        return ZE_RESULT_SUCCESS;                                                                           \
    }
EMPTY_TABLES(DEFINE_EMPTY_TABLE)
