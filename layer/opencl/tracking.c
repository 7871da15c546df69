/*
 * The OpenCL layer's bridge to the registry: object types, recording
 * creations, and checking retain/release/free before the driver sees them.
 *
 * Order matters. Retain and release update the registry BEFORE the driver
 * call: once the driver frees an object it may hand the same address to
 * another thread's create, which must find the registry already clean.
 * Creations are recorded after the driver returns a handle.
 */
#include <stdatomic.h>
#include <stdio.h>

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

cl_int ltcl_invalid_code(ltcl_type type)
{
    switch (type) {
    case LTCL_CONTEXT: return CL_INVALID_CONTEXT;
    case LTCL_QUEUE: return CL_INVALID_COMMAND_QUEUE;
    case LTCL_MEM: return CL_INVALID_MEM_OBJECT;
    case LTCL_PROGRAM: return CL_INVALID_PROGRAM;
    case LTCL_KERNEL: return CL_INVALID_KERNEL;
    case LTCL_EVENT: return CL_INVALID_EVENT;
    case LTCL_SAMPLER: return CL_INVALID_SAMPLER;
    case LTCL_DEVICE: return CL_INVALID_DEVICE;
    case LTCL_COMMAND_BUFFER: return CL_INVALID_COMMAND_BUFFER_KHR;
    case LTCL_SEMAPHORE: return CL_INVALID_SEMAPHORE_KHR;
    case LTCL_SVM:
    case LTCL_USM:
    case LTCL_TYPE_COUNT: break;
    }
    return CL_INVALID_VALUE;
}

static const char *code_name(cl_int code)
{
    switch (code) {
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
    case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
    case CL_INVALID_EVENT: return "CL_INVALID_EVENT";
    case CL_INVALID_SAMPLER: return "CL_INVALID_SAMPLER";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_COMMAND_BUFFER_KHR: return "CL_INVALID_COMMAND_BUFFER_KHR";
    case CL_INVALID_SEMAPHORE_KHR: return "CL_INVALID_SEMAPHORE_KHR";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    }
    return "an error";
}

void ltcl_record_creation(const char *call, ltcl_type type, const void *handle, uint64_t bytes, const void *parent,
                          const void *second_parent, unsigned flags, const void *platform)
{
    if (!handle)
        return;
    livetrack_new_object object = {
        .domain = LIVETRACK_DOMAIN_OPENCL,
        .type = type,
        .handle = ltcl_key(handle),
        .bytes = bytes,
        .owner = platform,
        .parent = ltcl_key(parent),
        .second_parent = ltcl_key(second_parent),
        .flags = flags,
        .call = call,
    };
    livetrack_create(&object);
}

static atomic_int untracked_extension_in_use;

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
        snprintf(out, size, "refused with %s", code_name(code));
}

/* Decide the fate of a call the registry rejected. */
static int refuse(const char *call, ltcl_type type, const void *handle, livetrack_status status, cl_int code,
                  cl_int *refused)
{
    int pass = livetrack_transparent() || (status == LIVETRACK_UNKNOWN && atomic_load(&untracked_extension_in_use));
    if (status == LIVETRACK_NO_MEMORY || status == LIVETRACK_BAD_ARGUMENT)
        return 1; /* our failure, not the program's: stay out of the way */
    char outcome[64];
    describe_refusal(code, pass, outcome, sizeof outcome);
    if (status == LIVETRACK_WRONG_TYPE) {
        livetrack_object object;
        const char *actual = livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle), &object) == LIVETRACK_OK
                                 ? object.type_name
                                 : "another type";
        livetrack_report_misuse("%s(%p): the handle is a live %s, not a %s; %s", call, handle, actual,
                                type_names[type], outcome);
    } else {
        livetrack_report_misuse("%s(%p): %s %s; %s", call, handle, type_names[type], livetrack_status_name(status),
                                outcome);
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

ltcl_verdict ltcl_retain(const char *call, ltcl_type type, const void *handle, cl_int *refused)
{
    return verdict_of(call, type, handle, livetrack_retain(LIVETRACK_DOMAIN_OPENCL, type, ltcl_key(handle), call),
                      ltcl_invalid_code(type), refused);
}

ltcl_verdict ltcl_release(const char *call, ltcl_type type, const void *handle, cl_int *refused)
{
    return verdict_of(call, type, handle, livetrack_release(LIVETRACK_DOMAIN_OPENCL, type, ltcl_key(handle), NULL, call),
                      ltcl_invalid_code(type), refused);
}

ltcl_verdict ltcl_free(const char *call, ltcl_type type, const void *handle, cl_int error_code, cl_int *refused)
{
    return verdict_of(call, type, handle, livetrack_destroy(LIVETRACK_DOMAIN_OPENCL, type, ltcl_key(handle), call),
                      error_code, refused);
}

void ltcl_undo_release(ltcl_type type, const void *handle)
{
    /* Only possible while something else keeps the node: otherwise the
     * object drops out of tracking, which we say. */
    if (livetrack_retain(LIVETRACK_DOMAIN_OPENCL, type, ltcl_key(handle), NULL) != LIVETRACK_OK)
        livetrack_report_misuse("the driver refused a release livetrack had already counted for %s %p; "
                                "it is no longer tracked", type_names[type], handle);
}

/* ---- root devices ------------------------------------------------------ */

#define MAX_ROOT_DEVICES 256
static _Atomic(cl_device_id) root_devices[MAX_ROOT_DEVICES];
static atomic_uint root_device_count;

int ltcl_is_root_device(cl_device_id device)
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
        if (!device || ltcl_is_root_device(device) ||
            livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(device), NULL) == LIVETRACK_OK)
            continue; /* known already, or a sub-device */
        unsigned slot = atomic_fetch_add(&root_device_count, 1);
        if (slot < MAX_ROOT_DEVICES)
            atomic_store(&root_devices[slot], device);
    }
}

cl_platform_id ltcl_device_platform(cl_device_id device)
{
    cl_platform_id platform = NULL;
    if (device && ltcl_next->clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) != CL_SUCCESS)
        platform = NULL;
    return platform;
}
