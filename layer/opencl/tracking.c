/*
 * The OpenCL layer's bridge to the registry: object types, recording
 * creations, and checking retain/release/free before the driver sees them.
 *
 * Order matters. Retain and release update the registry BEFORE the driver
 * call: once the driver frees an object it may hand the same address to
 * another thread's create, which must find the registry already clean.
 * Creations are recorded after the driver returns a handle.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cl_layer_internal.h"

static const char *const type_names[LTCL_TYPE_COUNT] = {
    [LTCL_CONTEXT] = "cl_context",
    [LTCL_QUEUE] = "cl_command_queue",
    [LTCL_MEM] = "cl_mem",
    [LTCL_PROGRAM] = "cl_program",
    [LTCL_KERNEL] = "cl_kernel",
    [LTCL_EVENT] = "cl_event",
    [LTCL_SAMPLER] = "cl_sampler",
    [LTCL_DEVICE] = "cl_device_id",
    [LTCL_SVM] = "cl_svm_pointer",
    [LTCL_COMMAND_BUFFER] = "cl_command_buffer_khr",
    [LTCL_SEMAPHORE] = "cl_semaphore_khr",
    [LTCL_USM] = "cl_usm_pointer",
};

void ltcl_declare_types(void) { livetrack_declare_types(LIVETRACK_DOMAIN_OPENCL, "OpenCL", type_names, LTCL_TYPE_COUNT); }

const char *ltcl_type_name(ltcl_type type) { return type < LTCL_TYPE_COUNT ? type_names[type] : "OpenCL object"; }

const char *ltcl_code_name(cl_int code)
{
    switch (code) {
#define CODE_NAME(code) \
    case code: return #code;
        CODE_NAME(CL_INVALID_CONTEXT)
        CODE_NAME(CL_INVALID_COMMAND_QUEUE)
        CODE_NAME(CL_INVALID_MEM_OBJECT)
        CODE_NAME(CL_INVALID_PROGRAM)
        CODE_NAME(CL_INVALID_KERNEL)
        CODE_NAME(CL_INVALID_EVENT)
        CODE_NAME(CL_INVALID_EVENT_WAIT_LIST)
        CODE_NAME(CL_INVALID_SAMPLER)
        CODE_NAME(CL_INVALID_DEVICE)
        CODE_NAME(CL_INVALID_DEVICE_QUEUE)
        CODE_NAME(CL_INVALID_IMAGE_DESCRIPTOR)
        CODE_NAME(CL_INVALID_COMMAND_BUFFER_KHR)
        CODE_NAME(CL_INVALID_SEMAPHORE_KHR)
        CODE_NAME(CL_INVALID_VALUE)
#undef CODE_NAME
    }
    return "an error";
}

static int adopt_held_object(const char *call, ltcl_type type, const void *handle);

/* A parent the program released that the driver still holds for the
 * callback this thread runs (its event, the SVM free's queue, their
 * context) is no longer in the registry. An object made from it there
 * (a buffer in the event's context, a marker on the queue), or the event
 * retained there, would get no parent and no platform, and the parent
 * would be refused after the callback although that object keeps it
 * alive. So it is recorded again first; returns its type, and the caller
 * drops the reference that gave it once the child holds it: the program
 * has none. LTCL_TYPE_COUNT: nothing adopted. */
static ltcl_type adopt_held_parent(const char *call, const void *parent)
{
    static const ltcl_type held_types[] = {LTCL_CONTEXT, LTCL_QUEUE, LTCL_EVENT};
    livetrack_type live;
    if (!parent || livetrack_live_type(LIVETRACK_DOMAIN_OPENCL, ltcl_key(parent), &live) != LIVETRACK_UNKNOWN)
        return LTCL_TYPE_COUNT;
    for (size_t i = 0; i < sizeof held_types / sizeof held_types[0]; i++)
        if (ltcl_held_for_callback(held_types[i], parent))
            return adopt_held_object(call, held_types[i], parent) ? held_types[i] : LTCL_TYPE_COUNT;
    return LTCL_TYPE_COUNT;
}

void ltcl_record_in_callback(const char *call, ltcl_type type, const void *handle, uint64_t bytes,
                             const void *parent, const void *second_parent, unsigned flags, const void *platform)
{
    ltcl_type adopted[2] = {adopt_held_parent(call, parent), adopt_held_parent(call, second_parent)};
    ltcl_record(call, type, handle, bytes, parent, second_parent, flags, platform);
    for (int i = 0; i < 2; i++)
        if (adopted[i] != LTCL_TYPE_COUNT)
            livetrack_release(LIVETRACK_DOMAIN_OPENCL, adopted[i], ltcl_key(i ? second_parent : parent), NULL, call);
}

static atomic_int untracked_extension_in_use;

int ltcl_untracked_extension_in_use(void) { return atomic_load_explicit(&untracked_extension_in_use, memory_order_relaxed); }

void ltcl_note_untracked_extension(const char *name)
{
    if (!atomic_exchange(&untracked_extension_in_use, 1))
        livetrack_report_misuse("the program uses %s, which livetrack does not track: objects it creates are "
                                "invisible, so calls on unknown handles are passed to the driver from now on",
                                name);
}

static void describe_refusal(cl_int code, int pass, char *out, size_t size)
{
    if (pass)
        snprintf(out, size, "passed to the driver");
    else if (code == CL_SUCCESS)
        snprintf(out, size, "not passed to the driver");
    else
        snprintf(out, size, "refused with %s", ltcl_code_name(code));
}

/* Decide the fate of a call the registry rejected. The diagnostic carries
 * the bad call's stack and, when livetrack remembers them, the creation
 * and release stacks of the object the handle belonged to. */
static int refuse(const char *call, ltcl_type type, const void *handle, livetrack_status status, cl_int code,
                  cl_int *refused)
{
    int pass = livetrack_transparent() || (status == LIVETRACK_UNKNOWN && ltcl_untracked_extension_in_use());
    if (status == LIVETRACK_NO_MEMORY || status == LIVETRACK_BAD_ARGUMENT)
        return 1; /* our failure, not the program's: stay out of the way */
    if (status == LIVETRACK_UNKNOWN && livetrack_incomplete())
        return 1; /* after running out of memory livetrack may simply have missed it */
    char outcome[64];
    describe_refusal(code, pass, outcome, sizeof outcome);
    if (status == LIVETRACK_WRONG_TYPE) {
        livetrack_object object;
        const char *actual = livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle), &object) == LIVETRACK_OK
                                 ? object.type_name
                                 : "another type";
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle),
                                   "%s(%p): the handle is a live %s, not a %s; %s", call, handle, actual,
                                   type_names[type], outcome);
    } else {
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle), "%s(%p): %s %s; %s", call, handle,
                                   type_names[type], livetrack_status_name(status), outcome);
    }
    *refused = code;
    return pass;
}

static ltcl_verdict verdict_of(const char *call, ltcl_type type, const void *handle, livetrack_status status,
                               cl_int code, cl_int *refused)
{
    if (status == LIVETRACK_OK)
        return LTCL_COUNTED;
    return refuse(call, type, handle, status, code, refused) ? LTCL_UNCOUNTED : LTCL_REFUSED;
}

/* An object the driver holds for a callback (its event, the queue of an
 * SVM free, their context) that the program had released, retained
 * inside the callback: the program owns a reference to it again, so it
 * is tracked again, as when it was made (an event or a queue of its
 * context). */
static int adopt_held_object(const char *call, ltcl_type type, const void *handle)
{
    cl_context context = NULL;
    if (type == LTCL_EVENT && ltcl_next->clGetEventInfo((cl_event)(uintptr_t)handle, CL_EVENT_CONTEXT,
                                                        sizeof context, &context, NULL) != CL_SUCCESS)
        context = NULL;
    if (type == LTCL_QUEUE && ltcl_next->clGetCommandQueueInfo((cl_command_queue)(uintptr_t)handle, CL_QUEUE_CONTEXT,
                                                               sizeof context, &context, NULL) != CL_SUCCESS)
        context = NULL;
    if (type == LTCL_CONTEXT)
        ltcl_record_context(call, (cl_context)(uintptr_t)handle);
    else
        ltcl_record_creation(call, type, handle, 0, context, NULL, 0, NULL);
    livetrack_type live_type;
    return livetrack_live_type(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle), &live_type) == LIVETRACK_OK &&
           live_type == type;
}

ltcl_verdict ltcl_retain_not_counted(const char *call, ltcl_type type, const void *handle, livetrack_status status,
                                     cl_int *refused)
{
    if (status == LIVETRACK_UNKNOWN && ltcl_held_for_callback(type, handle))
        return adopt_held_object(call, type, handle) ? LTCL_COUNTED : LTCL_UNCOUNTED;
    return verdict_of(call, type, handle, status, ltcl_invalid_code(type), refused);
}

ltcl_verdict ltcl_release_not_counted(const char *call, ltcl_type type, const void *handle, livetrack_status status,
                                      cl_int *refused)
{
    return verdict_of(call, type, handle, status, ltcl_invalid_code(type), refused);
}

ltcl_verdict ltcl_free(const char *call, ltcl_type type, const void *handle, cl_int error_code, cl_int *refused)
{
    return verdict_of(call, type, handle, livetrack_destroy(LIVETRACK_DOMAIN_OPENCL, type, ltcl_key(handle), call),
                      error_code, refused);
}

cl_int ltcl_undo_release(const char *call, ltcl_type type, const void *handle, cl_int result)
{
    /* Still in the registry (references were left, or children keep it):
     * the reference comes back. */
    if (livetrack_retain(LIVETRACK_DOMAIN_OPENCL, type, ltcl_key(handle), NULL) == LIVETRACK_OK)
        return result;
    /* The release was its last, and the registry ended the object, which
     * the driver keeps: it is put back from the registry's record of that
     * release, with its creation number, time, size and call site, but
     * holding no parents (the record keeps none). A description taken
     * before every release would keep them, at a lookup per release on
     * the hot path, for what drivers do only when out of resources. */
    livetrack_object dead;
    if (livetrack_released(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle), &dead) == LIVETRACK_OK && dead.type == type &&
        livetrack_restore(&dead, 1, NULL, call) == LIVETRACK_OK)
        return result;
    livetrack_report_misuse("the driver refused a release livetrack had already counted for %s %p; "
                            "it is no longer tracked", type_names[type], handle);
    return result;
}

cl_int ltcl_undo_retain(ltcl_type type, const void *handle, cl_int result)
{
    livetrack_release(LIVETRACK_DOMAIN_OPENCL, type, ltcl_key(handle), NULL, "undo");
    return result;
}

/* ---- root devices ------------------------------------------------------
 * Root devices are not reference counted, so they are never in the
 * registry: the layer notes each one it sees (clGetDeviceIDs, a context's
 * devices) and, the first time it meets a device it has not noted, asks
 * every platform for all its devices. Root devices do not come and go, so
 * after that a device that is neither noted nor a live sub-device was
 * never a device (or was a sub-device, now released). */

#define MAX_ROOT_DEVICES 256
static _Atomic(cl_device_id) root_devices[MAX_ROOT_DEVICES];
static atomic_uint root_device_count;
static atomic_int root_devices_enumerated; /* 1: every platform answered */
static pthread_once_t enumeration_once = PTHREAD_ONCE_INIT;

static int noted_root_device(cl_device_id device)
{
    unsigned count = atomic_load(&root_device_count);
    for (unsigned i = 0; i < count && i < MAX_ROOT_DEVICES; i++)
        if (atomic_load(&root_devices[i]) == device)
            return 1;
    return 0;
}

void ltcl_note_root_devices(const cl_device_id *devices, cl_uint count)
{
    for (cl_uint i = 0; devices && i < count; i++) {
        cl_device_id device = devices[i];
        if (!device || noted_root_device(device) ||
            livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(device), NULL) == LIVETRACK_OK)
            continue; /* known already, or a sub-device */
        unsigned slot = atomic_fetch_add(&root_device_count, 1);
        if (slot < MAX_ROOT_DEVICES)
            atomic_store(&root_devices[slot], device);
    }
}

/* Note the devices of one platform of one type; 1 when the platform
 * answered (having none of that type is an answer). */
static int note_platform_devices(cl_platform_id platform, cl_device_type type)
{
    cl_uint count = 0;
    cl_int result = ltcl_next->clGetDeviceIDs(platform, type, 0, NULL, &count);
    if (result == CL_DEVICE_NOT_FOUND || (result == CL_SUCCESS && count == 0))
        return 1;
    if (result != CL_SUCCESS)
        return 0;
    cl_device_id *devices = calloc(count, sizeof *devices);
    if (!devices)
        return 0;
    cl_uint got = 0;
    int ok = ltcl_next->clGetDeviceIDs(platform, type, count, devices, &got) == CL_SUCCESS;
    if (ok)
        ltcl_note_root_devices(devices, got < count ? got : count);
    free(devices);
    return ok;
}

static void enumerate_root_devices(void)
{
    cl_uint count = 0;
    if (ltcl_next->clGetPlatformIDs(0, NULL, &count) != CL_SUCCESS || count == 0)
        return;
    cl_platform_id *platforms = calloc(count, sizeof *platforms);
    if (!platforms)
        return;
    int complete = ltcl_next->clGetPlatformIDs(count, platforms, NULL) == CL_SUCCESS;
    /* CL_DEVICE_TYPE_ALL leaves out custom devices. */
    for (cl_uint i = 0; complete && i < count; i++)
        complete = note_platform_devices(platforms[i], CL_DEVICE_TYPE_ALL) &&
                   note_platform_devices(platforms[i], CL_DEVICE_TYPE_CUSTOM);
    free(platforms);
    atomic_store(&root_devices_enumerated, complete && atomic_load(&root_device_count) <= MAX_ROOT_DEVICES);
}

int ltcl_is_root_device(cl_device_id device)
{
    if (!device)
        return 0;
    if (noted_root_device(device))
        return 1;
    pthread_once(&enumeration_once, enumerate_root_devices);
    return noted_root_device(device);
}

int ltcl_root_devices_complete(void)
{
    pthread_once(&enumeration_once, enumerate_root_devices);
    return atomic_load(&root_devices_enumerated);
}

cl_platform_id ltcl_device_platform(cl_device_id device)
{
    cl_platform_id platform = NULL;
    if (device && ltcl_next->clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) != CL_SUCCESS)
        platform = NULL;
    return platform;
}
