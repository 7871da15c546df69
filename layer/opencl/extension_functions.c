/*
 * Extension functions that create, retain or release objects. The program
 * reaches them through clGetExtensionFunctionAddress[ForPlatform]; we hand
 * back our wrapper and keep the driver's function to call.
 *
 * Several platforms may answer the same name with different functions.
 * Each slot keeps one driver function per ICD, keyed by the ICD dispatch
 * pointer every ICD object starts with; a wrapper picks the one that
 * belongs to its first object argument (read only after the registry
 * confirms the handle is live, so a bad handle is never dereferenced).
 */
#include <stdatomic.h>
#include <string.h>

#include "cl_layer_internal.h"

#define MAX_ICDS 8

typedef enum ext_id {
#define EXT_ID(name) EXT_##name,
#define WRAPPED_EXTENSIONS(X)                                                                                  \
    X(clCreateCommandBufferKHR) X(clRetainCommandBufferKHR) X(clReleaseCommandBufferKHR)                     \
    X(clEnqueueCommandBufferKHR) X(clCreateSemaphoreWithPropertiesKHR) X(clRetainSemaphoreKHR)               \
    X(clReleaseSemaphoreKHR) X(clEnqueueWaitSemaphoresKHR) X(clEnqueueSignalSemaphoresKHR)                   \
    X(clHostMemAllocINTEL) X(clDeviceMemAllocINTEL) X(clSharedMemAllocINTEL) X(clMemFreeINTEL)               \
    X(clMemBlockingFreeINTEL) X(clEnqueueMemFillINTEL) X(clEnqueueMemcpyINTEL) X(clEnqueueMemAdviseINTEL)    \
    X(clEnqueueMigrateMemINTEL) X(clEnqueueMemsetINTEL) X(clCreateCommandQueueWithPropertiesKHR)             \
    X(clCreateProgramWithILKHR) X(clCreateFromVA_APIMediaSurfaceINTEL)                                       \
    X(clEnqueueAcquireVA_APIMediaSurfacesINTEL) X(clEnqueueReleaseVA_APIMediaSurfacesINTEL)
    WRAPPED_EXTENSIONS(EXT_ID)
#undef EXT_ID
    EXT_COUNT
} ext_id;

typedef struct ext_slot {
    atomic_uint count;
    _Atomic(const void *) icd[MAX_ICDS];
    _Atomic(void *) driver[MAX_ICDS];
} ext_slot;

static ext_slot slots[EXT_COUNT];

static const void *icd_of(const void *object) { return object ? *(const void *const *)object : NULL; }

static void remember(ext_id id, const void *icd, void *driver_function)
{
    ext_slot *slot = &slots[id];
    unsigned count = atomic_load(&slot->count);
    for (unsigned i = 0; i < count && i < MAX_ICDS; i++)
        if (atomic_load(&slot->driver[i]) == driver_function && atomic_load(&slot->icd[i]) == icd)
            return;
    unsigned at = atomic_fetch_add(&slot->count, 1);
    if (at >= MAX_ICDS)
        return;
    atomic_store(&slot->icd[at], icd);
    atomic_store(&slot->driver[at], driver_function);
}

/* The driver function for a call whose first object is `object`. */
static void *driver_for(ext_id id, const void *object)
{
    ext_slot *slot = &slots[id];
    unsigned count = atomic_load(&slot->count);
    if (count > MAX_ICDS)
        count = MAX_ICDS;
    if (count > 1 && object && livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(object), NULL) == LIVETRACK_OK) {
        const void *icd = icd_of(object);
        for (unsigned i = 0; i < count; i++)
            if (atomic_load(&slot->icd[i]) == icd)
                return atomic_load(&slot->driver[i]);
    }
    return count ? atomic_load(&slot->driver[0]) : NULL;
}

#define DRIVER(name, object) ((name##_fn)driver_for(EXT_##name, (object)))

/* ---- cl_khr_command_buffer ---------------------------------------------- */

static cl_command_buffer_khr CL_API_CALL clCreateCommandBufferKHR_wrap(cl_uint num_queues,
                                                                      const cl_command_queue *queues,
                                                                      const cl_command_buffer_properties_khr *properties,
                                                                      cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    const void *queue = num_queues && queues ? queues[0] : NULL;
    cl_command_buffer_khr buffer = DRIVER(clCreateCommandBufferKHR, queue)(num_queues, queues, properties, error_slot_);
    /* A command buffer holds its queue (drivers retain it; pocl does). */
    if (SUCCEEDED(buffer))
        ltcl_created(LTCL_COMMAND_BUFFER, buffer, 0, queue, NULL, 0, NULL);
    return buffer;
}

/* Retain/release of extension objects: same checks as the core types. */
#define EXT_REFCOUNT(name, cl_type, type_id, releases) \
    LTCL_REFCOUNT_WRAPPER(name##_wrap, #name, cl_type, type_id, releases, LTCL_ALWAYS_TRACKED, DRIVER(name, object))

EXT_REFCOUNT(clRetainCommandBufferKHR, cl_command_buffer_khr, LTCL_COMMAND_BUFFER, 0)
EXT_REFCOUNT(clReleaseCommandBufferKHR, cl_command_buffer_khr, LTCL_COMMAND_BUFFER, 1)
EXT_REFCOUNT(clRetainSemaphoreKHR, cl_semaphore_khr, LTCL_SEMAPHORE, 0)
EXT_REFCOUNT(clReleaseSemaphoreKHR, cl_semaphore_khr, LTCL_SEMAPHORE, 1)

static cl_int CL_API_CALL clEnqueueCommandBufferKHR_wrap(cl_uint num_queues, cl_command_queue *queues,
                                                        cl_command_buffer_khr buffer, cl_uint num_events,
                                                        const cl_event *wait_list, cl_event *event)
{
    cl_int result = DRIVER(clEnqueueCommandBufferKHR, buffer)(num_queues, queues, buffer, num_events, wait_list, event);
    /* The event belongs to the context of the queue it ran on: the one
     * given, or the command buffer's own. */
    if (result == CL_SUCCESS && event && *event) {
        const void *queue = num_queues && queues ? (const void *)queues[0] : NULL;
        livetrack_object owner;
        if (!queue && livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(buffer), &owner) == LIVETRACK_OK)
            queue = (const void *)(uintptr_t)owner.parents[0];
        ltcl_created(LTCL_EVENT, *event, 0, queue, NULL, LIVETRACK_PARENT_VIA_FIRST_PARENT, NULL);
    }
    return result;
}

/* ---- cl_khr_semaphore ----------------------------------------------------- */

static cl_semaphore_khr CL_API_CALL clCreateSemaphoreWithPropertiesKHR_wrap(cl_context context,
                                                                           const cl_semaphore_properties_khr *props,
                                                                           cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_semaphore_khr semaphore = DRIVER(clCreateSemaphoreWithPropertiesKHR, context)(context, props, error_slot_);
    if (SUCCEEDED(semaphore))
        ltcl_created(LTCL_SEMAPHORE, semaphore, 0, context, NULL, 0, NULL);
    return semaphore;
}

#define SEMAPHORE_ENQUEUE(name)                                                                                       \
    static cl_int CL_API_CALL name##_wrap(cl_command_queue queue, cl_uint num_semaphores,                             \
                                          const cl_semaphore_khr *semaphores,                                         \
                                          const cl_semaphore_payload_khr *payloads, cl_uint num_events,               \
                                          const cl_event *wait_list, cl_event *event)                                 \
    {                                                                                                                 \
        cl_int result =                                                                                               \
            DRIVER(name, queue)(queue, num_semaphores, semaphores, payloads, num_events, wait_list, event);           \
        ltcl_event_from_queue(result, event, queue);                                                                  \
        return result;                                                                                                \
    }
SEMAPHORE_ENQUEUE(clEnqueueWaitSemaphoresKHR)
SEMAPHORE_ENQUEUE(clEnqueueSignalSemaphoresKHR)

/* ---- cl_intel_unified_shared_memory -------------------------------------- */

static void *CL_API_CALL clHostMemAllocINTEL_wrap(cl_context context, const cl_mem_properties_intel *properties,
                                                 size_t size, cl_uint alignment, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    void *pointer = DRIVER(clHostMemAllocINTEL, context)(context, properties, size, alignment, error_slot_);
    if (SUCCEEDED(pointer))
        ltcl_created(LTCL_USM, pointer, size, context, NULL, 0, NULL);
    return pointer;
}

#define USM_DEVICE_ALLOC(name)                                                                                   \
    static void *CL_API_CALL name##_wrap(cl_context context, cl_device_id device,                                \
                                         const cl_mem_properties_intel *properties, size_t size, cl_uint alignment, \
                                         cl_int *errcode_ret)                                                    \
    {                                                                                                            \
        ERROR_SLOT(errcode_ret);                                                                                 \
        void *pointer = DRIVER(name, context)(context, device, properties, size, alignment, error_slot_);        \
        if (SUCCEEDED(pointer))                                                                                  \
            ltcl_created(LTCL_USM, pointer, size, context, NULL, 0, NULL);                                       \
        return pointer;                                                                                          \
    }
USM_DEVICE_ALLOC(clDeviceMemAllocINTEL)
USM_DEVICE_ALLOC(clSharedMemAllocINTEL)

#define USM_FREE(name)                                                                                \
    static cl_int CL_API_CALL name##_wrap(cl_context context, void *pointer)                          \
    {                                                                                                 \
        cl_int refused;                                                                               \
        if (pointer && ltcl_free(#name, LTCL_USM, pointer, CL_INVALID_VALUE, &refused) == LTCL_REFUSED)                 \
            return refused;                                                                           \
        return DRIVER(name, context)(context, pointer);                                               \
    }
USM_FREE(clMemFreeINTEL)
USM_FREE(clMemBlockingFreeINTEL)

/* X(name, parameters before the wait list, their arguments) */
#define USM_ENQUEUES(X)                                                                                              \
    X(clEnqueueMemFillINTEL,                                                                                         \
      (cl_command_queue queue, void *dst, const void *pattern, size_t pattern_size, size_t size),                    \
      (queue, dst, pattern, pattern_size, size))                                                                     \
    X(clEnqueueMemcpyINTEL, (cl_command_queue queue, cl_bool blocking, void *dst, const void *src, size_t size),    \
      (queue, blocking, dst, src, size))                                                                             \
    X(clEnqueueMemAdviseINTEL, (cl_command_queue queue, const void *pointer, size_t size, cl_mem_advice_intel advice), \
      (queue, pointer, size, advice))                                                                                \
    X(clEnqueueMigrateMemINTEL,                                                                                      \
      (cl_command_queue queue, const void *pointer, size_t size, cl_mem_migration_flags flags),                      \
      (queue, pointer, size, flags))                                                                                 \
    X(clEnqueueMemsetINTEL, (cl_command_queue queue, void *dst, cl_int value, size_t size), (queue, dst, value, size))

#define STRIP_PARENS(...) __VA_ARGS__
#define DEFINE_USM_ENQUEUE(name, params, args)                                                                     \
    static cl_int CL_API_CALL name##_wrap(STRIP_PARENS params, cl_uint num_events, const cl_event *wait_list,     \
                                          cl_event *event)                                                         \
    {                                                                                                              \
        cl_int result = DRIVER(name, queue)(STRIP_PARENS args, num_events, wait_list, event);                      \
        ltcl_event_from_queue(result, event, queue);                                                               \
        return result;                                                                                             \
    }
USM_ENQUEUES(DEFINE_USM_ENQUEUE)

/* ---- KHR aliases of core creators ---------------------------------------- */

static cl_command_queue CL_API_CALL clCreateCommandQueueWithPropertiesKHR_wrap(cl_context context, cl_device_id device,
                                                                              const cl_queue_properties_khr *properties,
                                                                              cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_command_queue queue =
        DRIVER(clCreateCommandQueueWithPropertiesKHR, context)(context, device, properties, error_slot_);
    if (SUCCEEDED(queue))
        ltcl_created(LTCL_QUEUE, queue, 0, context, NULL, 0, NULL);
    return queue;
}

static cl_program CL_API_CALL clCreateProgramWithILKHR_wrap(cl_context context, const void *il, size_t length,
                                                           cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_program program = DRIVER(clCreateProgramWithILKHR, context)(context, il, length, error_slot_);
    if (SUCCEEDED(program))
        ltcl_created(LTCL_PROGRAM, program, 0, context, NULL, 0, NULL);
    return program;
}

/* ---- cl_intel_va_api_media_sharing -------------------------------------
 * Its header needs libva's; the surface is only passed through, so a
 * pointer type of our own stands in for VASurfaceID *. */

typedef cl_mem(CL_API_CALL *clCreateFromVA_APIMediaSurfaceINTEL_fn)(cl_context context, cl_mem_flags flags,
                                                                    void *surface, cl_uint plane,
                                                                    cl_int *errcode_ret);
typedef cl_int(CL_API_CALL *va_surfaces_enqueue_fn)(cl_command_queue queue, cl_uint num_objects,
                                                    const cl_mem *objects, cl_uint num_events,
                                                    const cl_event *wait_list, cl_event *event);
typedef va_surfaces_enqueue_fn clEnqueueAcquireVA_APIMediaSurfacesINTEL_fn;
typedef va_surfaces_enqueue_fn clEnqueueReleaseVA_APIMediaSurfacesINTEL_fn;

static cl_mem CL_API_CALL clCreateFromVA_APIMediaSurfaceINTEL_wrap(cl_context context, cl_mem_flags flags,
                                                                  void *surface, cl_uint plane, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_mem memory = DRIVER(clCreateFromVA_APIMediaSurfaceINTEL, context)(context, flags, surface, plane, error_slot_);
    if (SUCCEEDED(memory))
        ltcl_record_sized_mem(memory, context, NULL);
    return memory;
}

#define VA_SURFACES_ENQUEUE(name)                                                                                   \
    static cl_int CL_API_CALL name##_wrap(cl_command_queue queue, cl_uint num_objects, const cl_mem *objects,       \
                                          cl_uint num_events, const cl_event *wait_list, cl_event *event)           \
    {                                                                                                               \
        cl_int result = DRIVER(name, queue)(queue, num_objects, objects, num_events, wait_list, event);             \
        ltcl_event_from_queue(result, event, queue);                                                                \
        return result;                                                                                              \
    }
VA_SURFACES_ENQUEUE(clEnqueueAcquireVA_APIMediaSurfacesINTEL)
VA_SURFACES_ENQUEUE(clEnqueueReleaseVA_APIMediaSurfacesINTEL)

/* ---- lookup ----------------------------------------------------------------- */

typedef struct ext_entry {
    const char *name;
    void *wrapper;
} ext_entry;

static const ext_entry wrapped[EXT_COUNT] = {
#define EXT_ENTRY(name) [EXT_##name] = {#name, (void *)name##_wrap},
    WRAPPED_EXTENSIONS(EXT_ENTRY)
#undef EXT_ENTRY
};

/* Extension functions known to create, retain and release nothing: the
 * program may use them without weakening misuse checks. */
static const char *const harmless[] = {
    "clGetCommandBufferInfoKHR", "clFinalizeCommandBufferKHR", "clCommandBarrierWithWaitListKHR",
    "clCommandCopyBufferKHR", "clCommandCopyBufferRectKHR", "clCommandCopyBufferToImageKHR", "clCommandCopyImageKHR",
    "clCommandCopyImageToBufferKHR", "clCommandFillBufferKHR", "clCommandFillImageKHR", "clCommandNDRangeKernelKHR",
    "clCommandSVMMemcpyKHR", "clCommandSVMMemFillKHR", "clGetMutableCommandInfoKHR", "clUpdateMutableCommandsKHR",
    "clGetSemaphoreInfoKHR", "clGetSemaphoreHandleForTypeKHR", "clGetMemAllocInfoINTEL",
    "clGetDeviceIDsFromVA_APIMediaAdapterINTEL",
    "clSetKernelArgMemPointerINTEL", "clIcdGetPlatformIDsKHR", "clGetKernelSubGroupInfoKHR",
    "clGetKernelSuggestedLocalWorkSizeKHR", "clTerminateContextKHR", "clGetGLContextInfoKHR",
    "clSetContentSizeBufferPoCL", "clGetDeviceImageInfoQCOM", "clGetKernelSubGroupInfo",
};

/* Extension functions that also have a dispatch-table entry: the program
 * gets the same wrapper whichever way it asks. */
static void *dispatch_entry(const char *name)
{
    const struct _cl_icd_dispatch *table = ltcl_layer_table();
#define SAME_AS_TABLE(entry)            \
    if (!strcmp(name, #entry))          \
        return (void *)table->entry;
    SAME_AS_TABLE(clCreateSubDevicesEXT)
    SAME_AS_TABLE(clRetainDeviceEXT)
    SAME_AS_TABLE(clReleaseDeviceEXT)
    SAME_AS_TABLE(clCreateEventFromGLsyncKHR)
    SAME_AS_TABLE(clCreateFromEGLImageKHR)
    SAME_AS_TABLE(clCreateEventFromEGLSyncKHR)
    SAME_AS_TABLE(clEnqueueAcquireEGLObjectsKHR)
    SAME_AS_TABLE(clEnqueueReleaseEGLObjectsKHR)
#undef SAME_AS_TABLE
    return NULL;
}

void *ltcl_extension_function(cl_platform_id platform, const char *name, void *driver_function)
{
    if (!driver_function)
        return ltcl_live_tracking_function(name);
    void *entry = dispatch_entry(name);
    if (entry)
        return entry;
    for (unsigned i = 0; i < EXT_COUNT; i++) {
        if (!strcmp(wrapped[i].name, name)) {
            remember((ext_id)i, platform ? icd_of(platform) : NULL, driver_function);
            return wrapped[i].wrapper;
        }
    }
    for (size_t i = 0; i < sizeof harmless / sizeof harmless[0]; i++)
        if (!strcmp(harmless[i], name))
            return driver_function;
    ltcl_note_untracked_extension(name);
    return driver_function;
}
