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

/* The CL_INVALID_* code a call gets for a bad handle of this type. */
cl_int ltcl_invalid_code(ltcl_type type);

/* Record a successful creation. `parent` is held by the new object
 * (via its own first parent with LIVETRACK_PARENT_VIA_FIRST_PARENT).
 * The call is named after the wrapper it is recorded in ("clCreateBuffer"
 * from clCreateBuffer_wrap; the timeline drops the "_wrap"). */
void ltcl_record_creation(const char *call, ltcl_type type, const void *handle, uint64_t bytes, const void *parent,
                          const void *second_parent, unsigned flags, const void *platform);
#define ltcl_created(...) ltcl_record_creation(__func__, __VA_ARGS__)

/* Creators call the driver with an error slot of their own when the
 * program passed errcode_ret = NULL, so the result is always known. */
#define ERROR_SLOT(user) cl_int local_error_ = CL_SUCCESS, *error_slot_ = (user) ? (user) : &local_error_
#define SUCCEEDED(object) ((object) && *error_slot_ == CL_SUCCESS)

/* Record a memory object whose size only the driver knows (images,
 * interop objects); `source` is the buffer it was made from, if any. */
void ltcl_record_sized_mem(cl_mem memory, cl_context context, const void *source);

/* Record the event an enqueue returned, attached to the queue's context. */
static inline void ltcl_event_from_queue(cl_int result, const cl_event *event, cl_command_queue queue)
{
    if (result == CL_SUCCESS && event && *event)
        ltcl_created(LTCL_EVENT, *event, 0, queue, NULL, LIVETRACK_PARENT_VIA_FIRST_PARENT, NULL);
}

/* Reference operations checked against the registry before the driver
 * sees them. LTCL_REFUSED: do not call the driver, return *refused (the
 * diagnostic is printed). LTCL_COUNTED: the registry took the change, go
 * on. LTCL_UNCOUNTED: misuse passed to the driver anyway (transparent
 * mode), the registry is unchanged. */
typedef enum ltcl_verdict { LTCL_REFUSED = 0, LTCL_COUNTED = 1, LTCL_UNCOUNTED = 2 } ltcl_verdict;
ltcl_verdict ltcl_retain(const char *call, ltcl_type type, const void *handle, cl_int *refused);
ltcl_verdict ltcl_release(const char *call, ltcl_type type, const void *handle, cl_int *refused);
/* For frees of objects that are not reference counted (SVM, USM).
 * `error_code` is what the call returns for a bad pointer; CL_SUCCESS for
 * calls that return nothing. */
ltcl_verdict ltcl_free(const char *call, ltcl_type type, const void *handle, cl_int error_code, cl_int *refused);
/* Undo a registry update when the driver rejected a call we allowed. */
void ltcl_undo_release(ltcl_type type, const void *handle);

/* A retain or release wrapper: checked against the registry before the
 * driver, undone when the driver refuses. `untracked(object)` names handles
 * passed straight through; `driver` is an expression giving the function. */
#define LTCL_REFCOUNT_WRAPPER(wrapper, call_name, cl_type, type_id, releases, untracked, driver)           \
    static cl_int CL_API_CALL wrapper(cl_type object)                                                      \
    {                                                                                                      \
        cl_int refused;                                                                                    \
        if (untracked(object))                                                                             \
            return (driver)(object);                                                                       \
        ltcl_verdict verdict = (releases) ? ltcl_release(call_name, type_id, object, &refused)              \
                                          : ltcl_retain(call_name, type_id, object, &refused);             \
        if (verdict == LTCL_REFUSED)                                                                       \
            return refused;                                                                                \
        cl_int result = (driver)(object);                                                                  \
        if (result != CL_SUCCESS && verdict == LTCL_COUNTED) {                                             \
            if (releases)                                                                                  \
                ltcl_undo_release(type_id, object);                                                        \
            else                                                                                           \
                livetrack_release(LIVETRACK_DOMAIN_OPENCL, type_id, ltcl_key(object), NULL, "undo");       \
        }                                                                                                  \
        return result;                                                                                     \
    }
#define LTCL_ALWAYS_TRACKED(object) 0

/* Root devices (not tracked, but known, so retain/release on them is not
 * taken for misuse). */
void ltcl_note_root_devices(const cl_device_id *devices, cl_uint count);
int ltcl_is_root_device(cl_device_id device);

/* Set when the program uses an extension function livetrack does not know:
 * objects it creates are invisible, so unknown handles are then passed to
 * the driver (with a diagnostic) instead of refused. */
void ltcl_note_untracked_extension(const char *name);

/* The platform of a device, or NULL. */
cl_platform_id ltcl_device_platform(cl_device_id device);

/* Our own dispatch table (wrappers included). */
const struct _cl_icd_dispatch *ltcl_layer_table(void);

/* Install wrappers into the layer's dispatch table. */
void ltcl_install_object_wrappers(struct _cl_icd_dispatch *table);
void ltcl_install_enqueue_wrappers(struct _cl_icd_dispatch *table);
void ltcl_install_extension_wrappers(struct _cl_icd_dispatch *table);

/* Answer a query with `value` the way clGet*Info does (extension.c). */
cl_int ltcl_answer(const void *value, size_t size, size_t value_size, void *out, size_t *size_ret);

/* Extension support (extension.c). */
/* Our own Track/Report functions for their four names, else NULL. */
void *ltcl_live_tracking_function(const char *name);
void *ltcl_extension_function(cl_platform_id platform, const char *name, void *driver_function);

#endif
