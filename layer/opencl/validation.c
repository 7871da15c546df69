/*
 * Argument validation: the slow path of the checks every wrapper makes
 * before the driver sees an object argument (the fast path, a live handle
 * of the expected type, is inline in cl_layer_internal.h).
 *
 * A handle is valid while the registry holds it live: the program holds a
 * reference, or a live child keeps it alive (refs == 0, holders > 0). The
 * OpenCL object model (every version since 1.0) deletes an object only
 * once its count is zero *and* the objects attached to it are gone, and
 * clGet*Info hands such objects back without a retain (CL_KERNEL_PROGRAM,
 * CL_QUEUE_CONTEXT, CL_MEM_ASSOCIATED_MEMOBJECT, CL_EVENT_CONTEXT, ...),
 * so they are valid arguments; only releasing one is refused (tracking.c:
 * the program holds no reference to give back). docs/validation.md says
 * the same for users.
 *
 * Not live, or live as another type, is misuse: the call gets the
 * function's documented CL_INVALID_* code and the driver never sees it,
 * unless LIVETRACK_TRANSPARENT=1 (then it goes on after the diagnostic).
 * Four things make an unknown handle pass silently instead, because the
 * registry cannot vouch for it:
 *   - it is the event whose callback this thread is running (the driver
 *     holds it for the callback, though the program may have released it);
 *   - the program uses an extension function livetrack does not wrap (its
 *     objects are invisible to us);
 *   - livetrack ran out of memory (tracking incomplete);
 *   - a device that is not a live sub-device while the root devices of
 *     every platform are not known (see tracking.c).
 */
#include <stdio.h>
#include <string.h>

#include "cl_layer_internal.h"

/* The registry cannot vouch for handles it does not know. */
static int unknown_handles_pass(void) { return ltcl_untracked_extension_in_use() || livetrack_incomplete(); }

static void name_argument(char *out, size_t size, const char *what, long index)
{
    if (index >= 0)
        snprintf(out, size, "%s[%ld]", what, index);
    else
        snprintf(out, size, "%s", what);
}

/* Print the diagnostic for a bad argument; returns what the call does
 * with it: CL_SUCCESS (go on, transparent mode) or `code`. */
static cl_int report_bad_argument(const char *call, const char *argument, ltcl_type type, const void *handle,
                                  const livetrack_object *live_as, cl_int code)
{
    int pass = livetrack_transparent();
    char outcome[64];
    if (pass)
        snprintf(outcome, sizeof outcome, "passed to the driver");
    else
        snprintf(outcome, sizeof outcome, "refused with %s", ltcl_code_name(code));
    if (live_as)
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle),
                                   "%s(%s %p): the handle is a live %s, not a %s; %s", call, argument, handle,
                                   live_as->type_name ? live_as->type_name : "object of another type",
                                   ltcl_type_name(type), outcome);
    else
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle),
                                   "%s(%s %p): not a live %s (never created, or already released); %s", call,
                                   argument, handle, ltcl_type_name(type), outcome);
    return pass ? CL_SUCCESS : code;
}

cl_int ltcl_refuse_argument(const char *call, const char *what, long index, ltcl_type type, const void *handle,
                            cl_int code)
{
    livetrack_object object;
    livetrack_status status = livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle), &object);
    if (status == LIVETRACK_OK && object.type == type)
        return CL_SUCCESS; /* made live since the fast path looked */
    if (status != LIVETRACK_OK && (unknown_handles_pass() || ltcl_held_for_callback(type, handle)))
        return CL_SUCCESS;
    char argument[96];
    name_argument(argument, sizeof argument, what, index);
    return report_bad_argument(call, argument, type, handle, status == LIVETRACK_OK ? &object : NULL, code);
}

cl_int ltcl_check_device_slow(const char *call, const char *what, long index, const void *device)
{
    livetrack_object object;
    livetrack_status status = livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(device), &object);
    if (status == LIVETRACK_OK && object.type == LTCL_DEVICE)
        return CL_SUCCESS;
    /* A live object of another type is certainly no device. Otherwise it
     * is a released sub-device or never was a device, as far as the
     * registry knows, which is only good enough when every root device is
     * known too. */
    if (status != LIVETRACK_OK && (!ltcl_root_devices_complete() || unknown_handles_pass()))
        return CL_SUCCESS;
    char argument[96];
    name_argument(argument, sizeof argument, what, index);
    return report_bad_argument(call, argument, LTCL_DEVICE, device, status == LIVETRACK_OK ? &object : NULL,
                               CL_INVALID_DEVICE);
}

/* ---- clSetKernelArg ----------------------------------------------------- */

/* The object types a kernel argument can take: memory objects (buffers,
 * images, pipes), samplers and device queues. */
static int takes_kernel_argument(unsigned type)
{
    return type == LTCL_MEM || type == LTCL_SAMPLER || type == LTCL_QUEUE;
}

/* The type of a memory object, sampler or queue handle the program
 * released lately, or LTCL_TYPE_COUNT: the registry remembers recent
 * deaths (its graveyard), which answers the one question a live lookup
 * cannot here: is this pointer-sized kernel argument a released handle
 * or just a number? Nothing is recorded for it on the release path. */
static ltcl_type released_type(const void *handle)
{
    livetrack_type type;
    if (livetrack_released_type(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle), &type) != LIVETRACK_OK)
        return LTCL_TYPE_COUNT;
    return takes_kernel_argument(type) ? (ltcl_type)type : LTCL_TYPE_COUNT;
}

typedef enum arg_kind { ARG_UNKNOWN, ARG_VALUE, ARG_OBJECT } arg_kind;

static int is_builtin_image_name(const char *name)
{
    static const char *const images[] = {
        "image1d_t",       "image1d_array_t",      "image1d_buffer_t",     "image2d_t",
        "image2d_array_t", "image2d_depth_t",      "image2d_array_depth_t", "image2d_msaa_t",
        "image3d_t",       "image2d_array_msaa_t", "image2d_msaa_depth_t", "image2d_array_msaa_depth_t",
    };
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++)
        if (!strcmp(name, images[i]))
            return 1;
    return 0;
}

/* Image arguments are the ones with an access qualifier. The type name
 * alone would also take a program's own by-value type ("image_size", 8
 * bytes) for an image; it decides only when the driver cannot say. */
static int is_image_argument(cl_kernel kernel, cl_uint index, const char *name)
{
    cl_kernel_arg_access_qualifier access = CL_KERNEL_ARG_ACCESS_NONE;
    if (ltcl_next->clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof access, &access, NULL) ==
        CL_SUCCESS)
        return access != CL_KERNEL_ARG_ACCESS_NONE;
    return is_builtin_image_name(name);
}

/* What kernel argument `index` takes, from the driver's argument info
 * (*type: the object type for ARG_OBJECT). ARG_UNKNOWN when the driver
 * cannot say (drivers must answer only for programs built with
 * -cl-kernel-arg-info; pocl answers for programs built from source). pocl
 * reports no address qualifier for global pointers, so the type name
 * decides. */
static arg_kind kernel_argument_kind(cl_kernel kernel, cl_uint index, ltcl_type *type)
{
    char name[64] = "";
    cl_int info = ltcl_next->clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_TYPE_NAME, sizeof name - 1, name, NULL);
    if (info != CL_SUCCESS) {
        /* No such argument: the driver's CL_INVALID_ARG_INDEX is the
         * answer, whatever the value, so nothing is checked here. */
        cl_uint arguments = 0;
        if (info == CL_INVALID_ARG_INDEX ||
            (ltcl_next->clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof arguments, &arguments, NULL) ==
                 CL_SUCCESS &&
             index >= arguments))
            return ARG_VALUE;
        return ARG_UNKNOWN;
    }
    cl_kernel_arg_type_qualifier qualifier = 0;
    size_t length = strlen(name);
    /* A __local pointer takes a size and no value: a value is the driver's
     * CL_INVALID_ARG_VALUE to give, not a memory object to check. */
    cl_kernel_arg_address_qualifier address = 0;
    if (ltcl_next->clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address,
                                      NULL) == CL_SUCCESS &&
        address == CL_KERNEL_ARG_ADDRESS_LOCAL)
        return ARG_VALUE;
    *type = LTCL_MEM;
    if ((length && name[length - 1] == '*') || is_image_argument(kernel, index, name))
        return ARG_OBJECT; /* buffers and images */
    if (ltcl_next->clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof qualifier, &qualifier,
                                      NULL) == CL_SUCCESS &&
        (qualifier & CL_KERNEL_ARG_TYPE_PIPE))
        return ARG_OBJECT;
    *type = !strcmp(name, "sampler_t") ? LTCL_SAMPLER : !strcmp(name, "queue_t") ? LTCL_QUEUE : LTCL_TYPE_COUNT;
    return *type == LTCL_TYPE_COUNT ? ARG_VALUE : ARG_OBJECT;
}

/* kernel_argument_kind, remembered per thread for the arguments set
 * lately: a program sets the same arguments of the same kernels again and
 * again, and asking the driver takes up to five calls. A kernel is named
 * by its handle and creation number, so a kernel made later at a freed
 * kernel's address is asked anew. */
typedef struct remembered_kind {
    const void *kernel;
    uint64_t kernel_seq;
    cl_uint index;
    arg_kind kind;
    ltcl_type type;
} remembered_kind;

static arg_kind argument_kind(cl_kernel kernel, uint64_t kernel_seq, cl_uint index, ltcl_type *type)
{
    static _Thread_local remembered_kind remembered[32];
    uintptr_t key = ((uintptr_t)kernel >> 4) * 31 + index;
    remembered_kind *slot = &remembered[key % (sizeof remembered / sizeof remembered[0])];
    if (slot->kernel == (const void *)kernel && slot->kernel_seq == kernel_seq && slot->index == index) {
        *type = slot->type;
        return slot->kind;
    }
    ltcl_type found = LTCL_TYPE_COUNT;
    arg_kind kind = kernel_argument_kind(kernel, index, &found);
    *slot = (remembered_kind){kernel, kernel_seq, index, kind, found};
    *type = found;
    return kind;
}

static cl_int code_for_argument(ltcl_type type)
{
    return type == LTCL_MEM ? CL_INVALID_MEM_OBJECT : type == LTCL_SAMPLER ? CL_INVALID_SAMPLER
                                                                           : CL_INVALID_DEVICE_QUEUE;
}

/* A memory object, sampler or device queue argument is passed as a
 * pointer to the handle, so only an argument of pointer size can hold
 * one. A live cl_mem, cl_sampler or cl_command_queue is accepted unless
 * the driver says the argument takes another of the three (a sampler
 * given to a buffer argument crashes pocl). Any other value of that size
 * is a number, a bad handle, or a live object of another type:
 *   - when the driver says what the argument is, an object argument gets
 *     refused unless it is a live handle of its type;
 *   - when it cannot, only a value that is a handle the program recently
 *     released (released_type) is refused: a never-created pointer cannot
 *     be told from a number then. */
cl_int ltcl_check_kernel_arg(const char *call, cl_kernel kernel, cl_uint index, size_t size, const void *value)
{
    if (!value || size != sizeof(void *))
        return CL_SUCCESS;
    const void *handle;
    memcpy(&handle, value, sizeof handle);
    if (!handle)
        return CL_SUCCESS; /* a NULL buffer is allowed */
    livetrack_object object;
    livetrack_status status = livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(handle), &object);
    int live_argument_object = status == LIVETRACK_OK && takes_kernel_argument(object.type);
    /* Asking the driver needs a kernel it still has: in transparent mode
     * a bad kernel got this far. */
    livetrack_object owner;
    if (!kernel || livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(kernel), &owner) != LIVETRACK_OK ||
        owner.type != LTCL_KERNEL)
        return CL_SUCCESS;
    ltcl_type expected = LTCL_TYPE_COUNT;
    arg_kind kind = argument_kind(kernel, owner.seq, index, &expected);
    if (kind == ARG_VALUE)
        return CL_SUCCESS;
    if (live_argument_object && (kind == ARG_UNKNOWN || object.type == expected))
        return CL_SUCCESS;
    if (kind == ARG_UNKNOWN) {
        expected = status == LIVETRACK_OK ? LTCL_TYPE_COUNT : released_type(handle);
        if (expected == LTCL_TYPE_COUNT)
            return CL_SUCCESS;
    }
    if (status != LIVETRACK_OK && unknown_handles_pass())
        return CL_SUCCESS;
    char argument[96];
    snprintf(argument, sizeof argument, "arg_value of argument %u", index);
    return report_bad_argument(call, argument, expected, handle, status == LIVETRACK_OK ? &object : NULL,
                               code_for_argument(expected));
}
