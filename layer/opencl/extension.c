/*
 * cl_altera_live_object_tracking / cl_intelfpga_live_object_tracking, the
 * platform's extension strings, and extension functions that create
 * objects (handed back wrapped, so what they create is tracked too).
 */
#include <stdlib.h>
#include <string.h>

#include "CL/cl_ext_live_object_tracking.h"
#include "entry_points.h"

/* ---- Track and Report --------------------------------------------------- */

/* Tracking starts when the layer loads (loading it is the opt-in), so
 * Track has nothing left to do; it is accepted at any time. */
static void CL_API_CALL track_live_objects(cl_platform_id platform) { (void)platform; }

typedef cl_int(CL_API_CALL *info_fn)(void *object, cl_uint param, size_t size, void *value, size_t *size_ret);

static void *extension_function_of(const void *platform, const char *name)
{
    return platform ? ltcl_next->clGetExtensionFunctionAddressForPlatform((cl_platform_id)platform, name) : NULL;
}

/* How to ask the driver for an object's count. */
typedef struct count_query {
    info_fn query;
    cl_uint param;
} count_query;

static count_query count_query_for(const livetrack_object *object)
{
#define DRIVER_QUERY(info, param) ((count_query){(info_fn)ltcl_next->info, param})
    switch ((ltcl_type)object->type) {
    case LTCL_CONTEXT: return DRIVER_QUERY(clGetContextInfo, CL_CONTEXT_REFERENCE_COUNT);
    case LTCL_QUEUE: return DRIVER_QUERY(clGetCommandQueueInfo, CL_QUEUE_REFERENCE_COUNT);
    case LTCL_MEM: return DRIVER_QUERY(clGetMemObjectInfo, CL_MEM_REFERENCE_COUNT);
    case LTCL_PROGRAM: return DRIVER_QUERY(clGetProgramInfo, CL_PROGRAM_REFERENCE_COUNT);
    case LTCL_KERNEL: return DRIVER_QUERY(clGetKernelInfo, CL_KERNEL_REFERENCE_COUNT);
    case LTCL_EVENT: return DRIVER_QUERY(clGetEventInfo, CL_EVENT_REFERENCE_COUNT);
    case LTCL_SAMPLER: return DRIVER_QUERY(clGetSamplerInfo, CL_SAMPLER_REFERENCE_COUNT);
    case LTCL_DEVICE: return DRIVER_QUERY(clGetDeviceInfo, CL_DEVICE_REFERENCE_COUNT);
    case LTCL_COMMAND_BUFFER:
        return (count_query){(info_fn)extension_function_of(object->owner, "clGetCommandBufferInfoKHR"),
                             CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR};
    case LTCL_SEMAPHORE:
        return (count_query){(info_fn)extension_function_of(object->owner, "clGetSemaphoreInfoKHR"),
                             CL_SEMAPHORE_REFERENCE_COUNT_KHR};
    case LTCL_SVM:
    case LTCL_USM:
    case LTCL_TYPE_COUNT:
        break; /* allocations have no count: one owner */
    }
#undef DRIVER_QUERY
    return (count_query){NULL, 0};
}

typedef struct count_request {
    count_query how;
    void *handle;
    cl_int result;
    cl_uint value;
} count_request;

static void ask_driver(void *context)
{
    count_request *request = context;
    request->result =
        request->how.query(request->handle, request->how.param, sizeof request->value, &request->value, NULL);
}

/* The count livetrack knows, when the driver is not asked or cannot
 * say: the program's references, and at least 1 for an object it
 * released that a child keeps alive (0 would say it is gone). */
static cl_uint known_count(const livetrack_object *object)
{
    return object->refs ? object->refs : 1;
}

/* The driver's own count of a live object, or 0 when it is gone.
 *
 * Another thread may release the object at any moment; asking a driver
 * about a freed object crashes it. So the driver is asked while the
 * registry holds the lock that any release of this handle must pass
 * (releases update the registry before the driver): either the release
 * came first and we skip the object, or it waits until we have asked.
 * Every hold we model is one the OpenCL object model guarantees, so an
 * object only kept alive by children is alive in the driver too.
 *
 * No reference of our own is taken and dropped around the query: dropping
 * one is a release, and pocl 3.1 makes clReleaseContext wait for the lock
 * it runs a context's destructor callback under; a callback that waits for
 * this report (or a report made there, on another context) then waited for
 * ever. A count query only reads: pocl takes at most the object's own
 * lock for it, and lets go of that around the program's callbacks, so no
 * thread holding it waits for the registry lock held here. The query calls
 * only the layers below, never livetrack, as livetrack_while_live asks. */
static int driver_refcount(const livetrack_object *object, cl_uint *count)
{
    count_query how = count_query_for(object);
    if (!how.query) {
        *count = known_count(object);
        return livetrack_still_live(object);
    }
    count_request request = {how, (void *)(uintptr_t)object->handle, CL_INVALID_VALUE, 0};
    if (!livetrack_while_live(object, ask_driver, &request))
        return 0;
    if (request.result == CL_SUCCESS && request.value > 0)
        *count = request.value;
    else
        *count = known_count(object); /* the driver could not say */
    return 1;
}

/* One report calls report_fn from the calling thread, one object after
 * another: its calls never overlap ("not concurrently", the extension
 * says of one enumeration). Reports on several threads run side by side,
 * as in the Intel runtime, which lets go of its lock around each
 * callback: a callback may wait for another thread (join it, wait for an
 * event its work sets) that itself asks for a report, and one lock over
 * all reports made that wait for ever. No lock is held while report_fn
 * runs; the registry's lock for one handle only while the driver is asked
 * for its count (driver_refcount). */
static void CL_API_CALL report_live_objects(cl_platform_id platform, cl_live_object_report_fn report_fn,
                                            void *user_data)
{
    if (!report_fn)
        return;
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_OPENCL, platform);
    for (size_t i = 0; i < livetrack_snapshot_count(snapshot); i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        /* Skipped when the callback, or another thread, released it
         * (or let it die) since the snapshot. */
        cl_uint count;
        if (!driver_refcount(object, &count))
            continue;
        report_fn(user_data, (void *)(uintptr_t)object->handle, object->type_name, count);
    }
    livetrack_snapshot_free(snapshot);
}

/* ---- extension strings ------------------------------------------------- */

static const char *const our_extensions[] = {CL_ALTERA_LIVE_OBJECT_TRACKING_EXTENSION_NAME,
                                             CL_INTELFPGA_LIVE_OBJECT_TRACKING_EXTENSION_NAME};
#define OUR_EXTENSION_COUNT (sizeof our_extensions / sizeof our_extensions[0])

cl_int ltcl_answer(const void *value, size_t size, size_t value_size, void *out, size_t *size_ret)
{
    if (out) {
        if (value_size < size)
            return CL_INVALID_VALUE;
        memcpy(out, value, size);
    }
    if (size_ret)
        *size_ret = size;
    return CL_SUCCESS;
}

/* Whether `name` is one of the words of the space-separated `list`: a
 * longer name that starts with it (cl_altera_live_object_tracking_foo)
 * is another extension. */
static int lists_word(const char *list, const char *name)
{
    size_t length = strlen(name);
    for (const char *at = strstr(list, name); at; at = strstr(at + 1, name)) {
        if ((at == list || at[-1] == ' ') && (at[length] == ' ' || at[length] == '\0'))
            return 1;
    }
    return 0;
}

/* The driver's string with those of our names it does not list already:
 * the Intel FPGA runtime lists cl_intelfpga_live_object_tracking itself,
 * and so does a second tracking layer below; a name listed twice makes
 * code that counts extensions or maps them by name see it twice. */
static cl_int extension_string(cl_platform_id platform, size_t value_size, void *out, size_t *size_ret)
{
    size_t driver_size = 0;
    cl_int result = ltcl_next->clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, NULL, &driver_size);
    if (result != CL_SUCCESS)
        return result;
    size_t extra = 0;
    for (size_t i = 0; i < OUR_EXTENSION_COUNT; i++)
        extra += strlen(our_extensions[i]) + 1;
    char *text = calloc(driver_size + extra + 1, 1);
    if (!text)
        return CL_OUT_OF_HOST_MEMORY;
    result = ltcl_next->clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, driver_size, text, NULL);
    if (result == CL_SUCCESS) {
        size_t length = strlen(text);
        for (size_t i = 0; i < OUR_EXTENSION_COUNT; i++) {
            if (lists_word(text, our_extensions[i]))
                continue;
            if (length && text[length - 1] != ' ')
                text[length++] = ' ';
            strcpy(text + length, our_extensions[i]);
            length += strlen(our_extensions[i]);
        }
        result = ltcl_answer(text, length + 1, value_size, out, size_ret);
    }
    free(text);
    return result;
}

/* Whether one of the driver's `count` entries is named `name` exactly.
 * strncmp: a driver's name may fill the whole field without its NUL. */
static int lists_name(const cl_name_version *entries, size_t count, const char *name)
{
    for (size_t i = 0; i < count; i++) {
        if (strncmp(entries[i].name, name, CL_NAME_VERSION_MAX_NAME_SIZE) == 0)
            return 1;
    }
    return 0;
}

/* As extension_string: our entries are added only for names the driver
 * does not list already (its entry, and its version, stay). */
static cl_int extension_versions(cl_platform_id platform, size_t value_size, void *out, size_t *size_ret)
{
    size_t driver_size = 0;
    cl_int result = ltcl_next->clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, 0, NULL, &driver_size);
    if (result != CL_SUCCESS)
        return result; /* a platform before OpenCL 3.0: leave it as it is */
    cl_name_version *list = calloc(1, driver_size + OUR_EXTENSION_COUNT * sizeof(cl_name_version));
    if (!list)
        return CL_OUT_OF_HOST_MEMORY;
    result = ltcl_next->clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, driver_size, list, NULL);
    if (result == CL_SUCCESS) {
        size_t driver_count = driver_size / sizeof(cl_name_version);
        size_t total = driver_size;
        for (size_t i = 0; i < OUR_EXTENSION_COUNT; i++) {
            if (lists_name(list, driver_count, our_extensions[i]))
                continue;
            cl_name_version *ours = (cl_name_version *)((char *)list + total);
            ours->version = CL_LIVE_OBJECT_TRACKING_EXTENSION_VERSION;
            strncpy(ours->name, our_extensions[i], CL_NAME_VERSION_MAX_NAME_SIZE - 1);
            total += sizeof(cl_name_version);
        }
        result = ltcl_answer(list, total, value_size, out, size_ret);
    }
    free(list);
    return result;
}

cl_int CL_API_CALL clGetPlatformInfo_wrap(cl_platform_id platform, cl_platform_info param_name, size_t param_value_size,
                                          void *param_value, size_t *param_value_size_ret)
{
    if (param_name == CL_PLATFORM_EXTENSIONS)
        return extension_string(platform, param_value_size, param_value, param_value_size_ret);
    if (param_name == CL_PLATFORM_EXTENSIONS_WITH_VERSION)
        return extension_versions(platform, param_value_size, param_value, param_value_size_ret);
    return ltcl_next->clGetPlatformInfo(platform, param_name, param_value_size, param_value, param_value_size_ret);
}

/* ---- extension functions ----------------------------------------------- */

void *CL_API_CALL clGetExtensionFunctionAddressForPlatform_wrap(cl_platform_id platform, const char *name)
{
    if (!name)
        return ltcl_next->clGetExtensionFunctionAddressForPlatform(platform, name);
    void *ours = ltcl_extension_function(platform, name, NULL);
    if (ours)
        return ours;
    void *driver_function = ltcl_next->clGetExtensionFunctionAddressForPlatform(platform, name);
    return driver_function ? ltcl_extension_function(platform, name, driver_function) : NULL;
}

void *CL_API_CALL clGetExtensionFunctionAddress_wrap(const char *name)
{
    if (!name)
        return ltcl_next->clGetExtensionFunctionAddress(name);
    void *ours = ltcl_extension_function(NULL, name, NULL);
    if (ours)
        return ours;
    void *driver_function = ltcl_next->clGetExtensionFunctionAddress(name);
    return driver_function ? ltcl_extension_function(NULL, name, driver_function) : NULL;
}

void *ltcl_live_tracking_function(const char *name)
{
    if (!strcmp(name, "clTrackLiveObjectsIntelFPGA") || !strcmp(name, "clTrackLiveObjectsAltera"))
        return (void *)track_live_objects;
    if (!strcmp(name, "clReportLiveObjectsIntelFPGA") || !strcmp(name, "clReportLiveObjectsAltera"))
        return (void *)report_live_objects;
    return NULL;
}
