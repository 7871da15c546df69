/*
 * The layer's entry points, expanded from the tables in entry_points.h:
 * one wrapper per row that checks the row's object arguments, then does
 * the row's effect (call the driver, record what it created, count a
 * retain or release, or hand over to a hand-written wrapper).
 *
 * Inside a generated wrapper, `call_` is the entry point's name and `bad_`
 * the verdict of the checks so far; each check runs only while the ones
 * before it passed, so a call gets at most one diagnostic.
 */
#include <stddef.h>
#include <string.h>

#include "entry_points.h"

#define LTCL_STRIP(...) __VA_ARGS__
#define LTCL_APPLY(macro, ...) macro(__VA_ARGS__)

/* ---- checks ------------------------------------------------------------- */

#define NO_OBJECTS
#define OBJ(type, param)                                                                                     \
    if (bad_ == CL_SUCCESS)                                                                                  \
        bad_ = ltcl_check_object(call_, #param, -1, LTCL_##type, (param), ltcl_invalid_code(LTCL_##type));
#define OBJS(type, count, array, code)                                                                       \
    for (cl_uint i_ = 0; bad_ == CL_SUCCESS && (array) && i_ < (count); i_++)                                \
        bad_ = ltcl_check_object(call_, #array, (long)i_, LTCL_##type, (array)[i_], (code));
/* An enqueue's wait list, checked out of line: inline, its loop kept the
 * list, its count and the index in saved registers and spilled the queue
 * and the event slot in every enqueue wrapper, though most lists are
 * empty. The same checks in the same order (OBJS). */
static __attribute__((noinline)) cl_int ltcl_check_waits(const char *call_, cl_uint num_events_in_wait_list,
                                                         const cl_event *event_wait_list)
{
    cl_int bad_ = CL_SUCCESS;
    OBJS(EVENT, num_events_in_wait_list, event_wait_list, CL_INVALID_EVENT_WAIT_LIST)
    return bad_;
}
#define WAITS                                                                                                \
    if (bad_ == CL_SUCCESS && event_wait_list && num_events_in_wait_list)                                    \
        bad_ = ltcl_check_waits(call_, num_events_in_wait_list, event_wait_list);
#define DEV(param)                                                                                           \
    if (bad_ == CL_SUCCESS)                                                                                  \
        bad_ = ltcl_check_device(call_, #param, -1, (param));
#define DEVS(count, array)                                                                                   \
    for (cl_uint i_ = 0; bad_ == CL_SUCCESS && (array) && i_ < (count); i_++)                                \
        bad_ = ltcl_check_device(call_, #array, (long)i_, (array)[i_]);
/* The buffer or image an image is made from. */
#define IMAGE_SOURCE(desc)                                                                                   \
    if (bad_ == CL_SUCCESS && (desc))                                                                        \
        bad_ = ltcl_check_object(call_, #desc "->mem_object", -1, LTCL_MEM, (desc)->mem_object,              \
                                 CL_INVALID_IMAGE_DESCRIPTOR);
#define KERNEL_ARG(kernel, index, size, value)                                                               \
    if (bad_ == CL_SUCCESS)                                                                                  \
        bad_ = ltcl_check_kernel_arg(call_, (kernel), (index), (size), (value));

/* ---- what a refused call returns ----------------------------------------- */

#define LTCL_REFUSE_CODE return bad_;
#define LTCL_REFUSE_ERRCODE                                                                                  \
    if (errcode_ret)                                                                                         \
        *errcode_ret = bad_;                                                                                 \
    return NULL;
#define LTCL_REFUSE_NIL return NULL;
#define LTCL_REFUSE_NOTHING return;

/* ---- effects --------------------------------------------------------------
 * Each gets the row's name, return type, the driver function expression
 * and the argument list, then the row's effect arguments. */

#define LTCL_EFFECT_PASS(name, ret, next, args, ...) return next args;

#define LTCL_EFFECT_CUSTOM(name, ret, next, args, ...) return name##_wrap args;

#define LTCL_EFFECT_CUSTOM_VOID(name, ret, next, args, ...) name##_wrap args;

/* Retain and release update the registry BEFORE the driver: once the
 * driver frees an object it may hand the address to another thread's
 * create, which must find the registry already clean. A call the driver
 * then rejects is undone. The registry's answer is asked for inline; any
 * answer but LIVETRACK_OK goes to the row's name##_uncounted (LTCL_BEFORE_
 * REFCOUNT), out of line and a tail call, and a rejected call's undo is a
 * tail call too: the counted call then keeps only the handle across its
 * calls (one saved register, no stack slot for a refusal code). */
#define LTCL_EFFECT_REFCOUNT(name, ret, next, args, type, object, releases, untracked)                      \
    if (!(object) || untracked(object))                                                                      \
        return next args;                                                                                    \
    livetrack_status status_ =                                                                               \
        (releases) ? livetrack_release(LIVETRACK_DOMAIN_OPENCL, LTCL_##type, ltcl_key(object), NULL, #name)   \
                   : livetrack_retain(LIVETRACK_DOMAIN_OPENCL, LTCL_##type, ltcl_key(object), #name);         \
    if (__builtin_expect(status_ != LIVETRACK_OK, 0))                                                        \
        return name##_uncounted(LTCL_STRIP args, status_);                                                  \
    cl_int result_ = next args;                                                                              \
    if (__builtin_expect(result_ != CL_SUCCESS, 0))                                                          \
        return (releases) ? ltcl_undo_release(#name, LTCL_##type, (object), result_)                         \
                          : ltcl_undo_retain(LTCL_##type, (object), result_);                                \
    return result_;

/* A retain or release the registry did not count (`status_`): the verdict
 * on it decides whether the driver sees it, as before the split. */
#define LTCL_BEFORE_REFCOUNT(name, ret, next, params, args, type, object, releases, untracked)              \
    static __attribute__((noinline)) cl_int name##_uncounted(LTCL_STRIP params, livetrack_status status_)    \
    {                                                                                                        \
        cl_int refused_ = CL_SUCCESS;                                                                        \
        ltcl_verdict verdict_ =                                                                              \
            (releases) ? ltcl_release_not_counted(#name, LTCL_##type, (object), status_, &refused_)          \
                       : ltcl_retain_not_counted(#name, LTCL_##type, (object), status_, &refused_);          \
        if (verdict_ == LTCL_REFUSED)                                                                        \
            return refused_;                                                                                 \
        cl_int result_ = next args;                                                                          \
        if (result_ != CL_SUCCESS && verdict_ == LTCL_COUNTED)                                               \
            return (releases) ? ltcl_undo_release(#name, LTCL_##type, (object), result_)                     \
                              : ltcl_undo_retain(LTCL_##type, (object), result_);                            \
        return result_;                                                                                      \
    }
/* The other effects need nothing before their wrapper. */
#define LTCL_BEFORE_PASS(...)
#define LTCL_BEFORE_CUSTOM(...)
#define LTCL_BEFORE_CUSTOM_VOID(...)
#define LTCL_BEFORE_CREATE(...)
#define LTCL_BEFORE_SIZED_MEM(...)
#define LTCL_BEFORE_EVENT(...)
#define LTCL_BEFORE_EVENT_ERRCODE(...)

#define LTCL_EFFECT_CREATE(name, ret, next, args, type, bytes, parent, second, flags)                       \
    ret created_ = next args;                                                                                \
    if (created_)                                                                                            \
        ltcl_record_creation(#name, LTCL_##type, created_, (bytes), (parent), (second), (flags), NULL);     \
    return created_;

#define LTCL_EFFECT_SIZED_MEM(name, ret, next, args, context, source)                                        \
    ret created_ = next args;                                                                                \
    if (created_)                                                                                            \
        ltcl_record_sized_mem(#name, created_, (context), (source));                                         \
    return created_;

#define LTCL_EFFECT_EVENT(name, ret, next, args, queue)                                                      \
    cl_int result_ = next args;                                                                              \
    ltcl_event_from_queue(#name, result_, event, (queue));                                                   \
    return result_;

/* The result is known even when the program passed errcode_ret = NULL:
 * the driver gets an error slot of ours then. */
#define LTCL_EFFECT_EVENT_ERRCODE(name, ret, next, args, queue)                                              \
    cl_int slot_ = CL_SUCCESS;                                                                               \
    if (!errcode_ret)                                                                                        \
        errcode_ret = &slot_;                                                                                \
    ret result_ = next args;                                                                                 \
    ltcl_event_from_queue(#name, *errcode_ret, event, (queue));                                              \
    return result_;

/* ---- the wrappers ---------------------------------------------------------- */

/* `next` is the driver function as the out-of-line halves (LTCL_BEFORE_*)
 * find it; the effect calls `resolved`, which `resolve` may set first. */
#define LTCL_WRAPPER(name, next, resolve, resolved, ret, refuse, params, args, checks, effect, effect_args)  \
    LTCL_APPLY(LTCL_BEFORE_##effect, name, ret, next, params, args, LTCL_STRIP effect_args)                  \
    static ret CL_API_CALL name##_checked params                                                             \
    {                                                                                                        \
        static const char call_[] = #name;                                                                   \
        cl_int bad_ = CL_SUCCESS;                                                                            \
        (void)call_;                                                                                         \
        checks if (bad_ != CL_SUCCESS)                                                                       \
        {                                                                                                    \
            LTCL_REFUSE_##refuse                                                                             \
        }                                                                                                    \
        resolve LTCL_APPLY(LTCL_EFFECT_##effect, name, ret, resolved, args, LTCL_STRIP effect_args)          \
    }

/* A dispatch row's driver function is one load, done where it is called. */
#define LTCL_CORE_WRAPPER(name, ret, refuse, params, args, checks, effect, effect_args) \
    LTCL_WRAPPER(name, ltcl_next->name, , ltcl_next->name, ret, refuse, params, args, checks, effect, effect_args)
/* An extension row's is the one of the ICD its object belongs to, which
 * ltcl_ext_driver reads only while the registry holds the object live: so
 * before the effect, whose release may end it in the registry (the last
 * clReleaseSemaphoreKHR went to the first ICD's driver). Unused (a custom
 * effect finds its own), the call is dropped: ltcl_ext_driver is pure. */
#define LTCL_EXT_WRAPPER(name, icd, ret, refuse, params, args, checks, effect, effect_args)                  \
    LTCL_WRAPPER(name, LTCL_EXT_DRIVER(name, icd),                                                           \
                 __attribute__((unused)) name##_fn driver_ = LTCL_EXT_DRIVER(name, icd);, driver_,           \
                 ret, refuse, params, args, checks, effect, effect_args)
#define LTCL_NO_WRAPPER(name)

LTCL_DISPATCH_TABLE(LTCL_CORE_WRAPPER, LTCL_NO_WRAPPER)
LTCL_EXTENSION_TABLE(LTCL_EXT_WRAPPER)

/* ---- the table covers the dispatch table exactly ---------------------------
 * One row per entry: a row naming no entry fails offsetof, a row given
 * twice redefines its enumerator, and the count must match the struct. */

enum {
#define LTCL_ROW(name, ...) ltcl_row_##name,
#define LTCL_ROW_N(name) ltcl_row_##name,
    LTCL_DISPATCH_TABLE(LTCL_ROW, LTCL_ROW_N)
#undef LTCL_ROW
#undef LTCL_ROW_N
    LTCL_DISPATCH_ROWS
};
_Static_assert(LTCL_DISPATCH_ROWS == sizeof(struct _cl_icd_dispatch) / sizeof(void *),
               "entry_points.h must have one row per dispatch table entry");
#define LTCL_IS_FIELD(name, ...) (void)offsetof(struct _cl_icd_dispatch, name);
#define LTCL_IS_FIELD_N(name) (void)offsetof(struct _cl_icd_dispatch, name);
static inline void ltcl_rows_are_fields(void) { LTCL_DISPATCH_TABLE(LTCL_IS_FIELD, LTCL_IS_FIELD_N) }

/* ---- installation and lookup ----------------------------------------------- */

void ltcl_install_wrappers(struct _cl_icd_dispatch *table)
{
    (void)ltcl_rows_are_fields;
#define LTCL_INSTALL(name, ...) table->name = name##_checked;
#define LTCL_KEEP(name)
    LTCL_DISPATCH_TABLE(LTCL_INSTALL, LTCL_KEEP)
#undef LTCL_INSTALL
#undef LTCL_KEEP
}

void *ltcl_dispatch_wrapper(const char *name)
{
#define LTCL_MATCH(entry, ...)     \
    if (!strcmp(name, #entry))     \
        return (void *)entry##_checked;
#define LTCL_NO_MATCH(entry)
    LTCL_DISPATCH_TABLE(LTCL_MATCH, LTCL_NO_MATCH)
#undef LTCL_MATCH
#undef LTCL_NO_MATCH
    return NULL;
}

void *ltcl_extension_wrapper(const char *name, int *id)
{
#define LTCL_MATCH(entry, ...)                    \
    if (!strcmp(name, #entry)) {                  \
        *id = LTCL_EXT_##entry;                   \
        return (void *)entry##_checked;           \
    }
    LTCL_EXTENSION_TABLE(LTCL_MATCH)
#undef LTCL_MATCH
    return NULL;
}
