/*
 * Extension functions the program reaches through
 * clGetExtensionFunctionAddress[ForPlatform]: we hand back our wrapper
 * (generated from LTCL_EXTENSION_TABLE) and keep the driver's function to
 * call.
 *
 * Several platforms may answer the same name with different functions.
 * Each slot keeps one driver function per ICD, keyed by the ICD dispatch
 * pointer every ICD object starts with; a wrapper picks the one that
 * belongs to its first object argument (read only after the registry
 * confirms the handle is live, so a bad handle is never dereferenced).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "entry_points.h"

#define MAX_ICDS 8

/* Readers take no lock: an entry is written before the count that
 * publishes it. Writers (clGetExtensionFunctionAddress*, rare) take
 * slots_lock, so two of them cannot fill the same entry. */
typedef struct ext_slot {
    atomic_uint count; /* published entries, at most MAX_ICDS */
    _Atomic(const void *) icd[MAX_ICDS];
    _Atomic(void *) driver[MAX_ICDS];
} ext_slot;

static ext_slot slots[LTCL_EXT_COUNT];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

static const void *icd_of(const void *object) { return object ? *(const void *const *)object : NULL; }

static void remember(ltcl_ext_id id, const void *icd, void *driver_function)
{
    ext_slot *slot = &slots[id];
    pthread_mutex_lock(&slots_lock);
    unsigned count = atomic_load(&slot->count);
    int known = 0;
    for (unsigned i = 0; i < count && !known; i++)
        known = atomic_load(&slot->driver[i]) == driver_function && atomic_load(&slot->icd[i]) == icd;
    if (!known && count < MAX_ICDS) {
        atomic_store(&slot->icd[count], icd);
        atomic_store(&slot->driver[count], driver_function);
        atomic_store(&slot->count, count + 1);
    }
    pthread_mutex_unlock(&slots_lock);
}

void *ltcl_ext_driver(ltcl_ext_id id, const void *object)
{
    ext_slot *slot = &slots[id];
    unsigned count = atomic_load(&slot->count);
    if (count > 1 && object && livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(object), NULL) == LIVETRACK_OK) {
        const void *icd = icd_of(object);
        for (unsigned i = 0; i < count; i++)
            if (atomic_load(&slot->icd[i]) == icd)
                return atomic_load(&slot->driver[i]);
    }
    return count ? atomic_load(&slot->driver[0]) : NULL;
}

/* ---- wrappers the table cannot generate ----------------------------------- */

/* The event belongs to the context of the queue it ran on: the one given,
 * or the command buffer's own. */
cl_int CL_API_CALL clEnqueueCommandBufferKHR_wrap(cl_uint num_queues, cl_command_queue *queues,
                                                  cl_command_buffer_khr command_buffer, LTCL_WAIT_PARAMS)
{
    cl_int result = LTCL_EXT_DRIVER(clEnqueueCommandBufferKHR, command_buffer)(num_queues, queues, command_buffer,
                                                                             LTCL_WAIT_ARGS);
    if (result == CL_SUCCESS && event && *event) {
        const void *queue = ltcl_first_handle(num_queues, queues);
        livetrack_object owner;
        if (!queue && livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(command_buffer), &owner) == LIVETRACK_OK)
            queue = (const void *)(uintptr_t)owner.parents[0];
        ltcl_created(LTCL_EVENT, *event, 0, queue, NULL, LIVETRACK_PARENT_VIA_FIRST_PARENT, NULL);
    }
    return result;
}

#define USM_FREE(name)                                                                                       \
    cl_int CL_API_CALL name##_wrap(cl_context context, void *ptr)                                            \
    {                                                                                                        \
        cl_int refused;                                                                                      \
        if (ptr && ltcl_free(#name, LTCL_USM, ptr, CL_INVALID_VALUE, &refused) == LTCL_REFUSED)             \
            return refused;                                                                                  \
        return LTCL_EXT_DRIVER(name, context)(context, ptr);                                                 \
    }
USM_FREE(clMemFreeINTEL)
USM_FREE(clMemBlockingFreeINTEL)

/* ---- lookup ----------------------------------------------------------------- */

/* Extension functions known to create, retain and release nothing: the
 * program may use them without weakening misuse checks. (Their object
 * arguments are not checked: the layer hands out the driver's function.)
 * The recording functions of cl_khr_command_buffer stay here: the
 * extension is provisional and its signatures changed between versions
 * (a later version added an argument to each), so a wrapper built from
 * one header would misplace the arguments of a program built with
 * another, where handing out the driver's own function cannot. */
static const char *const harmless[] = {
    "clCommandBarrierWithWaitListKHR", "clCommandCopyBufferKHR", "clCommandCopyBufferRectKHR",
    "clCommandCopyBufferToImageKHR", "clCommandCopyImageKHR", "clCommandCopyImageToBufferKHR",
    "clCommandFillBufferKHR", "clCommandFillImageKHR", "clCommandNDRangeKernelKHR", "clCommandSVMMemcpyKHR",
    "clCommandSVMMemFillKHR", "clGetMutableCommandInfoKHR", "clUpdateMutableCommandsKHR",
    "clGetSemaphoreHandleForTypeKHR", "clGetDeviceIDsFromVA_APIMediaAdapterINTEL", "clIcdGetPlatformIDsKHR",
    "clGetDeviceImageInfoQCOM",
    /* ocl-icd's own: what the loader is (clinfo asks) */
    "clGetICDLoaderInfoOCLICD",
};

void *ltcl_extension_function(cl_platform_id platform, const char *name, void *driver_function)
{
    if (!driver_function)
        return ltcl_live_tracking_function(name);
    /* Names the dispatch table has (clCreateSubDevicesEXT,
     * clGetKernelSubGroupInfoKHR, the GL and EGL functions, ...): the
     * program gets the same wrapper whichever way it asks. */
    void *entry = ltcl_dispatch_wrapper(name);
    if (entry)
        return entry;
    int id;
    void *wrapper = ltcl_extension_wrapper(name, &id);
    if (wrapper) {
        remember((ltcl_ext_id)id, platform ? icd_of(platform) : NULL, driver_function);
        return wrapper;
    }
    for (size_t i = 0; i < sizeof harmless / sizeof harmless[0]; i++)
        if (!strcmp(harmless[i], name))
            return driver_function;
    ltcl_note_untracked_extension(name);
    return driver_function;
}
