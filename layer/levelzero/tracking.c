/*
 * The Level Zero front end's bridge to the registry: object types,
 * recording creations, and checking destroys and frees.
 *
 * Level Zero objects are not reference counted: a create gives the
 * program its one reference and a destroy or free drops it. A destroy is
 * counted in the call's prologue, before the driver frees the object:
 * once freed, the driver may hand the same address to another thread's
 * create, which must find the registry already clean. When the driver
 * then refuses the destroy, the epilogue makes the object live again.
 *
 * A parent destroyed while objects created from it are live (a context
 * with live allocations, an event pool with live events, a module with
 * live kernels, a queue with live fences) is reported, naming them.
 * They stay tracked: the program never destroyed them, so they are its
 * leaks, and the exit report shows them with the call sites that made
 * them, which is what the programmer has to fix (the
 * specification lets the driver free them with the parent, but it does
 * not make the program's handles any less forgotten). The parent is then
 * listed as released but kept alive by them, and destroying one of them
 * later is not reported again. Build logs belong to no parent, and an
 * image view does not hold its image (the specification lets the program
 * destroy the image first, which disables the view).
 *
 * Event pools and memory opened from IPC handles are closed with their
 * own calls; a destroy or free of one, or a close of a pool the program
 * created or memory it allocated, is reported as the wrong call of the
 * pair and counted as released all the same (a driver may free it either
 * way; Intel's does).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ze_front_end.h"
#include "../front_end_note.h"

static const char *const type_names[LTZE_TYPE_COUNT] = {
    [LTZE_CONTEXT] = "ze_context_handle_t",
    [LTZE_COMMAND_QUEUE] = "ze_command_queue_handle_t",
    [LTZE_COMMAND_LIST] = "ze_command_list_handle_t",
    [LTZE_MODULE] = "ze_module_handle_t",
    [LTZE_MODULE_BUILD_LOG] = "ze_module_build_log_handle_t",
    [LTZE_KERNEL] = "ze_kernel_handle_t",
    [LTZE_EVENT_POOL] = "ze_event_pool_handle_t",
    [LTZE_EVENT] = "ze_event_handle_t",
    [LTZE_FENCE] = "ze_fence_handle_t",
    [LTZE_IMAGE] = "ze_image_handle_t",
    [LTZE_SAMPLER] = "ze_sampler_handle_t",
    [LTZE_PHYSICAL_MEM] = "ze_physical_mem_handle_t",
    [LTZE_VIRTUAL_MEM] = "ze_virtual_mem",
    [LTZE_MEM] = "ze_mem",
    [LTZE_IPC_EVENT_POOL] = "ze_ipc_event_pool",
    [LTZE_IPC_MEM] = "ze_ipc_mem",
};

void ltze_declare_types(void)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_LEVEL_ZERO, "Level Zero", type_names, LTZE_TYPE_COUNT);
}

void ltze_note(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    lt_front_end_vnote("Level Zero", fmt, args);
    va_end(args);
}

void ltze_diagnostic(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    lt_front_end_vdiagnostic("Level Zero", fmt, args);
    va_end(args);
}

void ltze_record_creation(const char *call, ltze_type type, const void *handle, uint64_t bytes, const void *parent,
                          const void *second_parent, const void *owner)
{
    if (!handle)
        return;
    livetrack_new_object object = {
        .domain = LIVETRACK_DOMAIN_LEVEL_ZERO,
        .type = type,
        .handle = ltze_key(handle),
        .bytes = bytes,
        .owner = owner,
        .parent = ltze_key(parent),
        .second_parent = ltze_key(second_parent),
        .flags = 0,
        .call = call,
    };
    livetrack_create(&object);
}

const void *ltze_owner_of(const void *handle)
{
    livetrack_object object;
    return handle && livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, ltze_key(handle), &object) == LIVETRACK_OK
               ? object.owner
               : NULL;
}

/* ---- bad handles ---------------------------------------------------------- */

/* Report a handle that is not a live object of `type`. `found` is what
 * the registry knows of it (NULL: nothing). */
static void report_bad_handle(const char *call, ltze_type type, const void *handle, const livetrack_object *found)
{
    uint64_t key = ltze_key(handle);
    if (!found)
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_LEVEL_ZERO, key, "%s(%p): %s %s", call, handle, type_names[type],
                                   livetrack_status_name(LIVETRACK_UNKNOWN));
    else if (found->type != type && found->refs > 0)
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_LEVEL_ZERO, key, "%s(%p): the handle is a live %s, not a %s", call,
                                   handle, found->type_name ? found->type_name : "object of another type",
                                   type_names[type]);
    else if (found->type != type) /* still recorded only because its children hold it */
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_LEVEL_ZERO, key,
                                   "%s(%p): the handle is a %s already destroyed (objects created from it are still "
                                   "live), not a %s",
                                   call, handle, found->type_name ? found->type_name : "object of another type",
                                   type_names[type]);
    else
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_LEVEL_ZERO, key,
                                   "%s(%p): %s already destroyed (objects created from it are still live)", call, handle,
                                   type_names[type]);
}

/* ---- the wrong one of two calls ---------------------------------------------- */

/* Objects opened from an IPC handle are let go of with a Close call, the
 * others with a destroy or free, though they are the same kind of object
 * to the driver. `type`'s counterpart of the other call, or
 * LTZE_TYPE_COUNT. */
static ltze_type counterpart_of(ltze_type type)
{
    switch (type) {
    case LTZE_EVENT_POOL: return LTZE_IPC_EVENT_POOL;
    case LTZE_IPC_EVENT_POOL: return LTZE_EVENT_POOL;
    case LTZE_MEM: return LTZE_IPC_MEM;
    case LTZE_IPC_MEM: return LTZE_MEM;
    default: return LTZE_TYPE_COUNT;
    }
}

/* For the types that have a counterpart: where such an object comes from
 * and the call that lets go of it. */
static const char *const made_and_let_go[LTZE_TYPE_COUNT] = {
    [LTZE_EVENT_POOL] = "was created by zeEventPoolCreate: destroy it with zeEventPoolDestroy",
    [LTZE_IPC_EVENT_POOL] = "was opened by zeEventPoolOpenIpcHandle: close it with zeEventPoolCloseIpcHandle",
    [LTZE_MEM] = "was allocated by zeMemAlloc*: free it with zeMemFree or zeMemFreeExt",
    [LTZE_IPC_MEM] = "was mapped by zeMemOpenIpcHandle: close it with zeMemCloseIpcHandle",
};

static int is_opened_from_ipc(ltze_type type) { return type == LTZE_IPC_EVENT_POOL || type == LTZE_IPC_MEM; }

/* Whether `object` is a live `type` the program still holds; reports it
 * when not. */
static int check_handle(const char *call, ltze_type type, const void *handle, livetrack_object *object)
{
    if (livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, ltze_key(handle), object) != LIVETRACK_OK) {
        report_bad_handle(call, type, handle, NULL);
        return 0;
    }
    if (object->type != type || object->refs == 0) {
        report_bad_handle(call, type, handle, object);
        return 0;
    }
    return 1;
}

void ltze_check_live(const char *call, ltze_type type, const void *handle)
{
    livetrack_object object;
    if (handle)
        check_handle(call, type, handle, &object);
}

/* check_handle for a destroy, free or close: a live object of *type's
 * counterpart is reported as let go of with the wrong call, and *type
 * becomes its type, so that it is counted as released (a driver may free
 * it either way). */
static int check_handle_or_counterpart(const char *call, ltze_type *type, const void *handle,
                                       livetrack_object *object)
{
    ltze_type counterpart = counterpart_of(*type);
    if (counterpart == LTZE_TYPE_COUNT ||
        livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, ltze_key(handle), object) != LIVETRACK_OK ||
        object->type != counterpart || object->refs == 0)
        return check_handle(call, *type, handle, object);
    livetrack_report_misuse_on(LIVETRACK_DOMAIN_LEVEL_ZERO, ltze_key(handle), "%s(%p): the %s %s, not with %s", call,
                               handle, type_names[counterpart], made_and_let_go[counterpart], call);
    *type = counterpart;
    return 1;
}

/* ---- destroying a parent with live children ---------------------------------- */

#define EXAMPLE_CHILDREN 2

/* How deep children the program destroyed already are looked through: a
 * context, its event pool, the pool's events. */
#define DESCENDANT_DEPTH 4

typedef struct children_text {
    char *out;
    size_t size, used, found;
} children_text;

/* The objects the program still holds that keep `parent` alive, directly
 * or through children it destroyed already (kept alive only by their
 * own): those are what it must free, so they are counted and named, not
 * the destroyed ones between.
 *
 * Children name their parent by handle, and a handle comes back: a
 * context destroyed with live children stays recorded while the driver
 * gives its address to the next context. The parent's creation number
 * tells whose children they are. */
static int is_child_of(livetrack_snapshot *snapshot, size_t index, const livetrack_object *object,
                       const livetrack_object *parent)
{
    uint64_t parent_seqs[2];
    if (livetrack_snapshot_parent_seqs(snapshot, index, parent_seqs) != LIVETRACK_OK)
        return 0;
    for (int i = 0; i < 2; i++)
        if (object->parents[i] == parent->handle && parent_seqs[i] == parent->seq)
            return 1;
    return 0;
}

static void add_held_descendants(livetrack_snapshot *snapshot, size_t count, const livetrack_object *parent,
                                 unsigned depth, children_text *text)
{
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        if (!is_child_of(snapshot, i, object, parent))
            continue;
        if (object->refs == 0) {
            if (depth < DESCENDANT_DEPTH)
                add_held_descendants(snapshot, count, object, depth + 1, text);
            continue;
        }
        if (text->found < EXAMPLE_CHILDREN && text->used < text->size) {
            int wrote = snprintf(text->out + text->used, text->size - text->used, "%s%s 0x%llx",
                                 text->found ? ", " : "", object->type_name ? object->type_name : "object",
                                 (unsigned long long)object->handle);
            text->used += wrote > 0 ? (size_t)wrote : 0;
        }
        text->found++;
    }
}

/* "ze_mem 0x1000, ze_event_handle_t 0x2000 and 4 more": what holds
 * `parent` (add_held_descendants). Only on the misuse path: it walks a
 * snapshot of the whole live set. Returns how many there are. */
static size_t describe_children(const livetrack_object *parent, char *out, size_t size)
{
    children_text text = {out, size, 0, 0};
    out[0] = '\0';
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_LEVEL_ZERO, NULL);
    size_t count = snapshot ? livetrack_snapshot_count(snapshot) : 0;
    add_held_descendants(snapshot, count, parent, 1, &text);
    if (text.found > EXAMPLE_CHILDREN && text.used < size)
        snprintf(out + text.used, size - text.used, " and %zu more", text.found - EXAMPLE_CHILDREN);
    livetrack_snapshot_free(snapshot);
    return text.found;
}

/* `closing`: the call is a Close (of an opened IPC object), not a destroy. */
static void report_live_children(const char *call, ltze_type type, int closing, const void *handle,
                                 const livetrack_object *object)
{
    char children[160];
    size_t found = describe_children(object, children, sizeof children);
    if (!found) /* they went while we looked */
        found = object->holders;
    livetrack_report_misuse_on(LIVETRACK_DOMAIN_LEVEL_ZERO, ltze_key(handle),
                               "%s(%p): %s %s while %zu object%s created from it %s live%s%s%s", call, handle,
                               type_names[type], closing ? "closed" : "destroyed", found, found == 1 ? "" : "s",
                               found == 1 ? "is" : "are", children[0] ? " (" : "", children, children[0] ? ")" : "");
}

/* ---- destroy and free ---------------------------------------------------------- */

/* What a destroy's prologue counted, for its epilogue on the same thread
 * (a call's prologue and epilogue run on the calling thread, and the
 * tracing layer does not trace calls made inside a call, so they never
 * nest). */
typedef struct pending_destroy {
    uint64_t handle;
    int counted;
    /* The object as it was (its type: the call's or its counterpart), to
     * put back should the driver refuse. */
    livetrack_object object;
    /* The parents, held until the epilogue: one the program destroyed
     * already, kept alive only by this object, would otherwise die with
     * it, and the object put back would lose it (or hold another object
     * the driver gave its handle meanwhile). */
    livetrack_keeper *parent_keepers[2];
} pending_destroy;

static _Thread_local pending_destroy pending;

static void let_parents_go(const char *call)
{
    for (int i = 0; i < 2; i++) {
        livetrack_let_go_in(pending.parent_keepers[i], call);
        pending.parent_keepers[i] = NULL;
    }
}

void ltze_before_destroy(const char *call, ltze_type type, const void *handle, const void *context,
                         const size_t *size)
{
    ltze_destroy_traced = 1;
    let_parents_go(NULL); /* nothing is left from an earlier call, unless its epilogue never ran */
    pending.counted = 0;
    pending.handle = ltze_key(handle);
    if (!handle)
        return; /* the driver answers a NULL handle itself */
    livetrack_object object;
    int closing = is_opened_from_ipc(type);
    if (!check_handle_or_counterpart(call, &type, handle, &object))
        return;
    /* Allocations, IPC mappings, reservations and physical memory name
     * their context again when freed; their first parent is the context
     * they came from. */
    if (context && object.parents[0] && object.parents[0] != ltze_key(context))
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_LEVEL_ZERO, ltze_key(handle),
                                   "%s(%p, %p): the %s belongs to context 0x%llx, not to the one named", call, context,
                                   handle, type_names[type], (unsigned long long)object.parents[0]);
    if (size && *size != object.bytes)
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_LEVEL_ZERO, ltze_key(handle),
                                   "%s(%p, %p, %zu): the %s has %llu bytes, not the %zu named", call, context, handle,
                                   *size, type_names[type], (unsigned long long)object.bytes, *size);
    if (object.holders)
        report_live_children(call, type, closing, handle, &object);
    /* The very parents, not what their handles name now (a destroyed
     * parent's address may belong to a new object). */
    livetrack_keep_parents(&object, pending.parent_keepers);
    livetrack_status status = livetrack_destroy(LIVETRACK_DOMAIN_LEVEL_ZERO, type, ltze_key(handle), call);
    if (status == LIVETRACK_OK) {
        pending.counted = 1;
        pending.object = object;
        return;
    }
    let_parents_go(call);
    if (status == LIVETRACK_UNKNOWN || status == LIVETRACK_NOT_OWNED) {
        /* Another thread destroyed it between our lookup and now. */
        report_bad_handle(call, type, handle, NULL);
    }
}

/* The ze_result_t a destroy or free can answer with: the errors any call
 * may return (device state, memory), and the validation errors of their
 * arguments (a NULL descriptor to zeMemFreeExt, a wrong size to
 * zeVirtualMemFree). NULL for another value. */
static const char *result_name(ze_result_t result)
{
    switch (result) {
    case ZE_RESULT_ERROR_DEVICE_LOST: return "ZE_RESULT_ERROR_DEVICE_LOST";
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: return "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY";
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY";
    case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET: return "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET";
    case ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE: return "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE";
    case ZE_RESULT_ERROR_UNINITIALIZED: return "ZE_RESULT_ERROR_UNINITIALIZED";
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION: return "ZE_RESULT_ERROR_UNSUPPORTED_VERSION";
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: return "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE";
    case ZE_RESULT_ERROR_INVALID_ARGUMENT: return "ZE_RESULT_ERROR_INVALID_ARGUMENT";
    case ZE_RESULT_ERROR_INVALID_NULL_HANDLE: return "ZE_RESULT_ERROR_INVALID_NULL_HANDLE";
    case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE: return "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE";
    case ZE_RESULT_ERROR_INVALID_NULL_POINTER: return "ZE_RESULT_ERROR_INVALID_NULL_POINTER";
    case ZE_RESULT_ERROR_INVALID_SIZE: return "ZE_RESULT_ERROR_INVALID_SIZE";
    case ZE_RESULT_ERROR_UNSUPPORTED_SIZE: return "ZE_RESULT_ERROR_UNSUPPORTED_SIZE";
    case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT: return "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT";
    case ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT: return "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT";
    case ZE_RESULT_ERROR_INVALID_ENUMERATION: return "ZE_RESULT_ERROR_INVALID_ENUMERATION";
    case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION: return "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION";
    case ZE_RESULT_ERROR_UNKNOWN: return "ZE_RESULT_ERROR_UNKNOWN";
    default: return NULL;
    }
}

/* The driver refused the destroy the prologue counted: the object is
 * live again, the same one (its call site, creation number, parents).
 * The note goes through the diagnostics limit: a program that retries a
 * destroy the driver keeps refusing would otherwise fill stderr. */
static void undo_destroy(const char *call, ltze_type type, const void *handle, ze_result_t result)
{
    if (livetrack_restore(&pending.object, pending.object.refs, pending.parent_keepers, call) != LIVETRACK_OK)
        return; /* another object has the handle now */
    const char *name = result_name(result);
    if (name)
        ltze_diagnostic("%s(%p) failed with %s (0x%x): the %s is live again", call, handle, name, (unsigned)result,
                        type_names[type]);
    else
        ltze_diagnostic("%s(%p) failed with result 0x%x: the %s is live again", call, handle, (unsigned)result,
                        type_names[type]);
}

void ltze_after_destroy(const char *call, const void *handle, ze_result_t result)
{
    if (pending.counted && pending.handle == ltze_key(handle) && result != ZE_RESULT_SUCCESS)
        undo_destroy(call, pending.object.type, handle, result);
    pending.counted = 0;
    /* A parent the program destroyed before, held only by this object,
     * dies here unless the object is live again. */
    let_parents_go(call);
}

void ltze_untraced_destroy(const char *call, ltze_type type, const void *handle, uint64_t created_before)
{
    livetrack_object object;
    if (!handle || livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, ltze_key(handle), &object) != LIVETRACK_OK ||
        (object.type != type && object.type != counterpart_of(type)) || object.refs == 0)
        return; /* not tracked (made before tracking, or by an untraced create), or already destroyed */
    /* Made after the call began: another thread's, at the address the
     * driver freed; ours left the registry before (or never was in it). */
    if (object.seq > created_before)
        return;
    livetrack_destroy_object(&object, call);
}
