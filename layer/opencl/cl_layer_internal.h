/*
 * Shared by the OpenCL layer's files: the next dispatch table, our object
 * types, and the helpers every wrapper uses to talk to the registry.
 */
#ifndef LIVETRACK_CL_LAYER_INTERNAL_H
#define LIVETRACK_CL_LAYER_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_1_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>
#include <stdint.h>

#include "livetrack/livetrack.h"

/* The table our wrappers call: the next layer or the loader's trampolines
 * to the driver. Set once by clInitLayer. */
extern const struct _cl_icd_dispatch *ltcl_next;

typedef enum ltcl_type {
    LTCL_CONTEXT,
    LTCL_QUEUE,
    LTCL_MEM,
    LTCL_PROGRAM,
    LTCL_KERNEL,
    LTCL_EVENT,
    LTCL_SAMPLER,
    LTCL_DEVICE, /* sub-devices only: root devices are not reference counted */
    LTCL_SVM,
    LTCL_COMMAND_BUFFER,
    LTCL_SEMAPHORE,
    LTCL_USM,
    LTCL_TYPE_COUNT
} ltcl_type;

static inline uint64_t ltcl_key(const void *handle) { return (uint64_t)(uintptr_t)handle; }

void ltcl_declare_types(void);
const char *ltcl_type_name(ltcl_type type);

/* The CL_INVALID_* code a call gets for a bad handle of this type. Inline,
 * so that the checks every wrapper makes fold it to a constant instead of
 * calling out for a code they almost never use. */
static inline cl_int ltcl_invalid_code(ltcl_type type)
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

/* The name of a code, for diagnostics. */
const char *ltcl_code_name(cl_int code);

/* Record a creation. `parent` is held by the new object (via its own first
 * parent with LIVETRACK_PARENT_VIA_FIRST_PARENT). `call` names the API
 * call ("clCreateBuffer"; a trailing "_wrap" is dropped by the timeline).
 *
 * Any handle the driver returns is recorded, whatever error code came
 * with it: a driver that hands out an object together with an error
 * (pocl 3.1's clCreateContextFromType(NULL, CL_DEVICE_TYPE_GPU) does)
 * still expects the program to release it, and that release must not be
 * refused. */
static inline void ltcl_record_creation(const char *call, ltcl_type type, const void *handle, uint64_t bytes,
                                        const void *parent, const void *second_parent, unsigned flags,
                                        const void *platform);
#define ltcl_created(...) ltcl_record_creation(__func__, __VA_ARGS__)

/* Record a context the driver returned, on its devices' platform. */
void ltcl_record_context(const char *call, cl_context context);

/* Record a memory object whose size only the driver knows (images,
 * interop objects); `source` is the buffer it was made from, if any. */
void ltcl_record_sized_mem(const char *call, cl_mem memory, cl_context context, const void *source);

/* Record the event an enqueue returned, attached to the queue's context. */
static inline void ltcl_event_from_queue(const char *call, cl_int result, const cl_event *event,
                                         cl_command_queue queue)
{
    if (result == CL_SUCCESS && event && *event)
        ltcl_record_creation(call, LTCL_EVENT, *event, 0, queue, NULL, LIVETRACK_PARENT_VIA_FIRST_PARENT, NULL);
}

/* Reference operations checked against the registry before the driver
 * sees them. LTCL_REFUSED: do not call the driver, return *refused (the
 * diagnostic is printed). LTCL_COUNTED: the registry took the change, go
 * on. LTCL_UNCOUNTED: misuse passed to the driver anyway (transparent
 * mode), the registry is unchanged. */
typedef enum ltcl_verdict { LTCL_REFUSED = 0, LTCL_COUNTED = 1, LTCL_UNCOUNTED = 2 } ltcl_verdict;
/* The verdict on a retain or release the registry did not count
 * (`status`): the rare half of a REFCOUNT wrapper (entry_points.c), which
 * asks the registry itself. */
ltcl_verdict ltcl_retain_not_counted(const char *call, ltcl_type type, const void *handle, livetrack_status status,
                                     cl_int *refused);
ltcl_verdict ltcl_release_not_counted(const char *call, ltcl_type type, const void *handle, livetrack_status status,
                                      cl_int *refused);
/* For frees of objects that are not reference counted (SVM, USM).
 * `error_code` is what the call returns for a bad pointer; CL_SUCCESS for
 * calls that return nothing. */
ltcl_verdict ltcl_free(const char *call, ltcl_type type, const void *handle, cl_int error_code, cl_int *refused);
/* Undo a registry update when the driver rejected a call we allowed;
 * they return the driver's `result`, so that a wrapper's undo is a tail
 * call. `call`: the refused release, which an object put back names. */
cl_int ltcl_undo_release(const char *call, ltcl_type type, const void *handle, cl_int result);
cl_int ltcl_undo_retain(ltcl_type type, const void *handle, cl_int result);

/* Root devices (not tracked, but known, so retain/release on them is not
 * taken for misuse). ltcl_is_root_device asks the platforms for their
 * devices the first time it meets a device it does not know, so a root
 * device the program obtained in a way the layer did not see
 * (CL_PROGRAM_DEVICES, CL_DEVICE_PARENT_DEVICE, ...) is still one. */
void ltcl_note_root_devices(const cl_device_id *devices, cl_uint count);
int ltcl_is_root_device(cl_device_id device);
/* 1 once every platform's root devices are known: only then can a device
 * that is neither a root device nor a live sub-device be refused. */
int ltcl_root_devices_complete(void);

/* Set when the program uses an extension function livetrack does not know:
 * objects it creates are invisible, so unknown handles are then passed to
 * the driver instead of refused. */
void ltcl_note_untracked_extension(const char *name);
int ltcl_untracked_extension_in_use(void);
/* Whether this thread is running the callback of event `handle`, which the
 * driver holds for it (wrap_callbacks.c). */
int ltcl_event_in_callback(const void *handle);
/* Whether the driver holds `handle` for a callback this thread is running:
 * its event, the queue of an SVM free, or the context of either
 * (wrap_callbacks.c). Checks of it pass, and a retain tracks it again. */
int ltcl_held_for_callback(ltcl_type type, const void *handle);
/* How many such callbacks this thread is running (nested ones count):
 * read on every creation, so a variable, not a call. */
extern _Thread_local unsigned ltcl_callbacks_running;
/* The registry's record of a creation (ltcl_record_creation without its
 * checks). */
static inline void ltcl_record(const char *call, ltcl_type type, const void *handle, uint64_t bytes,
                               const void *parent, const void *second_parent, unsigned flags, const void *platform)
{
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

/* A creation inside a callback: its parents may need adopting first
 * (tracking.c). Out of line, so that the common creation pays one
 * thread-local test. */
void ltcl_record_in_callback(const char *call, ltcl_type type, const void *handle, uint64_t bytes,
                             const void *parent, const void *second_parent, unsigned flags, const void *platform);

/* Inline: the wrapper then fills the registry's description itself,
 * mostly with constants, and makes one call. */
static inline void ltcl_record_creation(const char *call, ltcl_type type, const void *handle, uint64_t bytes,
                                        const void *parent, const void *second_parent, unsigned flags,
                                        const void *platform)
{
    if (!handle)
        return;
    if (__builtin_expect(ltcl_callbacks_running != 0, 0))
        ltcl_record_in_callback(call, type, handle, bytes, parent, second_parent, flags, platform);
    else
        ltcl_record(call, type, handle, bytes, parent, second_parent, flags, platform);
}

/* clEnqueueSVMFree's free function as the driver gets it: a trampoline
 * that marks its thread while the program's function runs, and in `data`
 * the trampoline's record (or the program's own function and data when
 * there is no memory for one). When the driver refuses the call, the
 * record is dropped with ltcl_svm_free_callback_unused. */
typedef void(CL_CALLBACK *ltcl_svm_free_fn)(cl_command_queue, cl_uint, void *[], void *);
ltcl_svm_free_fn ltcl_svm_free_callback(ltcl_svm_free_fn free_fn, void *user_data, void **data);
void ltcl_svm_free_callback_unused(ltcl_svm_free_fn given, void *data);

/* The platform of a device, or NULL. */
cl_platform_id ltcl_device_platform(cl_device_id device);

/* Our own dispatch table (wrappers included). */
const struct _cl_icd_dispatch *ltcl_layer_table(void);

/* Install the wrappers of every dispatch entry (entry_points.c). */
void ltcl_install_wrappers(struct _cl_icd_dispatch *table);
/* Our wrapper of a dispatch entry by name (extension lookups of names the
 * dispatch table has), or NULL. */
void *ltcl_dispatch_wrapper(const char *name);
/* Our wrapper of a wrapped extension function, or NULL (entry_points.c). */
void *ltcl_extension_wrapper(const char *name, int *id);

/* Answer a query with `value` the way clGet*Info does (extension.c). */
cl_int ltcl_answer(const void *value, size_t size, size_t value_size, void *out, size_t *size_ret);

/* Extension support (extension.c, extension_functions.c). */
/* Our own Track/Report functions for their four names, else NULL. */
void *ltcl_live_tracking_function(const char *name);
void *ltcl_extension_function(cl_platform_id platform, const char *name, void *driver_function);

/* ---- validation (validation.c) -------------------------------------------
 * Every object argument is checked before the driver sees it. The common
 * case (a live handle of the right type) costs one registry lookup, inline
 * here; everything else goes to the out-of-line slow path, which decides,
 * prints the diagnostic and returns CL_SUCCESS (pass the call on: the
 * handle is fine after all, or LIVETRACK_TRANSPARENT=1) or the code to
 * refuse it with. `what` names the parameter, `index` the element of an
 * array parameter (-1: not an array). NULL handles are the driver's
 * business and always pass. */
cl_int ltcl_refuse_argument(const char *call, const char *what, long index, ltcl_type type, const void *handle,
                            cl_int code);
cl_int ltcl_check_device_slow(const char *call, const char *what, long index, const void *device);
cl_int ltcl_check_kernel_arg(const char *call, cl_kernel kernel, cl_uint index, size_t size, const void *value);

/* Whether `handle` is live, and as what: one shard lock, nothing else
 * (livetrack_lookup would also describe the whole object). */
static inline int ltcl_live_type(const void *handle, ltcl_type *type)
{
    livetrack_type found;
    if (livetrack_live_type(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle), &found) != LIVETRACK_OK)
        return 0;
    *type = (ltcl_type)found;
    return 1;
}

static inline cl_int ltcl_check_object(const char *call, const char *what, long index, ltcl_type type,
                                       const void *handle, cl_int code)
{
    ltcl_type live_as;
    if (!handle || (ltcl_live_type(handle, &live_as) && live_as == type))
        return CL_SUCCESS;
    return ltcl_refuse_argument(call, what, index, type, handle, code);
}

static inline cl_int ltcl_check_device(const char *call, const char *what, long index, const void *device)
{
    ltcl_type live_as;
    if (!device || ltcl_is_root_device((cl_device_id)device) ||
        (ltcl_live_type(device, &live_as) && live_as == LTCL_DEVICE))
        return CL_SUCCESS;
    return ltcl_check_device_slow(call, what, index, device);
}

#endif
