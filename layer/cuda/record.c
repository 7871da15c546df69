/*
 * The CUDA front end's bridge to the registry: recording what a call
 * made, taking out what a call destroys, and what a context's end drops.
 *
 * Objects that belong to a context (streams, events, modules, arrays,
 * texture and surface objects, external memory and semaphores imported
 * into it, memory allocated in it and other processes' memory mapped into
 * it) are owned by
 * it: their livetrack_object owner is the CUcontext, so a snapshot by
 * owner lists them when the context goes. Libraries, graphs, memory pools
 * and virtual memory outlive contexts and have no owner.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_front_end.h"

/* Objects named one by one (with their creation stacks) when a context's
 * end destroys them; the rest are counted. */
#define DROPPED_OBJECTS_SHOWN 8

static int owned_by_context(ltcu_type type)
{
    switch (type) {
    case LTCU_STREAM:
    case LTCU_EVENT:
    case LTCU_MODULE:
    case LTCU_LINK_STATE:
    case LTCU_GRAPH_EXEC:
    case LTCU_ARRAY:
    case LTCU_MIPMAPPED_ARRAY:
    case LTCU_TEXTURE:
    case LTCU_SURFACE:
    case LTCU_DEVICE_MEMORY:
    case LTCU_HOST_PINNED:
    case LTCU_MANAGED:
    case LTCU_HOST_REGISTERED:
    case LTCU_EXTERNAL_MEMORY:
    case LTCU_EXTERNAL_SEMAPHORE:
    case LTCU_IPC_MEMORY: return 1;
    default: return 0;
    }
}

static int is_memory(ltcu_type type)
{
    switch (type) {
    case LTCU_DEVICE_MEMORY:
    case LTCU_HOST_PINNED:
    case LTCU_MANAGED:
    case LTCU_DEVICE_ASYNC:
    case LTCU_HOST_REGISTERED: return 1;
    default: return 0;
    }
}

static void record_owned_by(ltcu_call *call, ltcu_type type, uint64_t handle, uint64_t bytes, uint64_t parent_key,
                            const void *owner)
{
    livetrack_new_object object = {
        .domain = LIVETRACK_DOMAIN_CUDA,
        .type = type,
        .handle = ltcu_key(type, handle),
        .bytes = bytes,
        .owner = owner,
        .parent = parent_key,
        .second_parent = 0,
        .flags = 0,
        .call = call->name,
    };
    livetrack_create(&object);
}

void ltcu_record(ltcu_call *call, ltcu_type type, uint64_t handle, uint64_t bytes, uint64_t parent_key)
{
    if (!handle)
        return;
    const void *owner = NULL;
    if (type == LTCU_CONTEXT)
        owner = (const void *)(uintptr_t)handle;
    else if (owned_by_context(type))
        owner = ltcu_call_context(call);
    if (LTCU_DEVICE_POINTERS & LTCU_TYPE_BIT(type))
        ltcu_graph_allocation_forget(handle);
    record_owned_by(call, type, handle, bytes, parent_key, owner);
}

void ltcu_record_unowned(ltcu_call *call, ltcu_type type, uint64_t handle, uint64_t bytes)
{
    if (handle)
        record_owned_by(call, type, handle, bytes, 0, NULL);
}

/* "CUstream", or "device allocation (CUdeviceptr, managed or device_async)" */
static void describe_accepted(unsigned accepted, char *out, size_t size)
{
    if (accepted == LTCU_DEVICE_POINTERS) {
        snprintf(out, size, "device allocation (CUdeviceptr, managed or device_async)");
        return;
    }
    size_t used = 0;
    out[0] = '\0';
    for (unsigned type = 0; type < LTCU_TYPE_COUNT && used < size; type++) {
        if (!(accepted & LTCU_TYPE_BIT(type)))
            continue;
        int wrote = snprintf(out + used, size - used, "%s%s", used ? " or " : "", ltcu_type_name(type));
        used += wrote > 0 ? (size_t)wrote : 0;
    }
}

/* Report a handle that is not a live object of `accepted`. `found` is what
 * the registry knows of it (NULL: nothing). */
static void report_bad_handle(const ltcu_call *call, ltcu_type key_type, unsigned accepted, uint64_t handle,
                              const livetrack_object *found)
{
    char wanted[128];
    describe_accepted(accepted, wanted, sizeof wanted);
    uint64_t key = ltcu_key(key_type, handle);
    if (!found)
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_CUDA, key,
                                   "%s(0x%" PRIx64 "): no live %s has this %s (never %s, or already %s)", call->name,
                                   handle, wanted, is_memory(key_type) ? "address" : "handle",
                                   is_memory(key_type) ? "allocated" : "created",
                                   is_memory(key_type) ? "freed" : "destroyed");
    else if (!(accepted & LTCU_TYPE_BIT(found->type)))
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_CUDA, key, "%s(0x%" PRIx64 "): the handle is a live %s, not a %s",
                                   call->name, handle, found->type_name ? found->type_name : "object of another type",
                                   wanted);
    else
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_CUDA, key,
                                   "%s(0x%" PRIx64 "): %s already %s (objects made from it are still live)", call->name,
                                   handle, wanted, is_memory(key_type) ? "freed" : "destroyed");
}

int ltcu_forget(ltcu_call *call, ltcu_type key_type, unsigned accepted, uint64_t handle)
{
    if (!handle)
        return 0; /* the driver answers a null handle itself */
    uint64_t key = ltcu_key(key_type, handle);
    livetrack_object object;
    if (livetrack_lookup(LIVETRACK_DOMAIN_CUDA, key, &object) != LIVETRACK_OK) {
        /* A late destroy of a stream, context or graph finds it gone: the
         * driver's resource callback took it out during the call. */
        if (!call->late)
            report_bad_handle(call, key_type, accepted, handle, NULL);
        return 0;
    }
    if (!(accepted & LTCU_TYPE_BIT(object.type)) || object.refs == 0) {
        report_bad_handle(call, key_type, accepted, handle, &object);
        return 0;
    }
    livetrack_keeper *parents[2];
    livetrack_keep_parents(&object, parents);
    livetrack_status status = livetrack_destroy(LIVETRACK_DOMAIN_CUDA, object.type, key, call->name);
    if (status != LIVETRACK_OK) {
        ltcu_let_parents_go(parents, call);
        /* Another thread destroyed it between the lookup and now. */
        report_bad_handle(call, key_type, accepted, handle, NULL);
        return 0;
    }
    ltcu_push_undo_holding(call, LTCU_UNDO_DESTROY, &object, parents);
    return 1;
}

int ltcu_release_reference(ltcu_call *call, ltcu_type type, uint64_t handle)
{
    if (!handle)
        return 0;
    uint64_t key = ltcu_key(type, handle);
    livetrack_object object;
    if (livetrack_lookup(LIVETRACK_DOMAIN_CUDA, key, &object) != LIVETRACK_OK) {
        if (!call->late)
            report_bad_handle(call, type, LTCU_TYPE_BIT(type), handle, NULL);
        return 0;
    }
    if (object.type != type) {
        report_bad_handle(call, type, LTCU_TYPE_BIT(type), handle, &object);
        return 0;
    }
    livetrack_keeper *parents[2];
    livetrack_keep_parents(&object, parents);
    livetrack_status status = livetrack_release(LIVETRACK_DOMAIN_CUDA, type, key, NULL, call->name);
    if (status == LIVETRACK_OK) {
        ltcu_push_undo_holding(call, LTCU_UNDO_RELEASE, &object, parents);
        return 1;
    }
    ltcu_let_parents_go(parents, call);
    if (status == LIVETRACK_NOT_OWNED)
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_CUDA, key,
                                   "%s(0x%" PRIx64 "): the program holds no reference to this %s (released already; "
                                   "kept alive by what uses it)",
                                   call->name, handle, ltcu_type_name(type));
    else
        report_bad_handle(call, type, LTCU_TYPE_BIT(type), handle, NULL);
    return 0;
}

void ltcu_retain_or_record(ltcu_call *call, ltcu_type type, uint64_t handle, uint64_t bytes)
{
    if (!handle)
        return;
    livetrack_new_object object = {
        .domain = LIVETRACK_DOMAIN_CUDA,
        .type = type,
        .handle = ltcu_key(type, handle),
        .bytes = bytes,
        .owner = owned_by_context(type) ? ltcu_call_context(call) : NULL,
        .call = call->name,
    };
    livetrack_stack_id stack = livetrack_capture_stack(); /* outside the lock: it may walk the stack */
    ltcu_lock_references();
    int recorded = livetrack_retain(LIVETRACK_DOMAIN_CUDA, type, object.handle, call->name) != LIVETRACK_OK &&
                   livetrack_create_with_stack(&object, stack) == LIVETRACK_OK;
    ltcu_unlock_references();
    if (recorded && (LTCU_DEVICE_POINTERS & LTCU_TYPE_BIT(type)))
        ltcu_graph_allocation_forget(handle); /* as ltcu_record does */
}

void ltcu_record_unless_live(ltcu_call *call, ltcu_type type, uint64_t handle)
{
    livetrack_type live;
    if (handle && livetrack_live_type(LIVETRACK_DOMAIN_CUDA, ltcu_key(type, handle), &live) == LIVETRACK_OK &&
        live == type)
        return;
    ltcu_record(call, type, handle, 0, 0);
}

/* ---- a context's end ---------------------------------------------------- */

void ltcu_drop_context_objects(ltcu_call *call, CUcontext context, const char *event)
{
    ltcu_drop_context_objects_made_by(call, context, event, UINT64_MAX);
}

void ltcu_drop_context_objects_made_by(ltcu_call *call, CUcontext context, const char *event, uint64_t mark)
{
    if (!context)
        return;
    const void *owner = (const void *)context;
    uint64_t context_key = ltcu_key(LTCU_CONTEXT, (uint64_t)(uintptr_t)context);
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_CUDA, owner);
    size_t count = livetrack_snapshot_count(snapshot), taken = 0;
    uint64_t bytes = 0;
    /* Oldest first, as the program made them. Two calls may end the same
     * context at once (a primary context's last release, while another
     * thread retains it anew and releases it again), and their snapshots
     * list the same objects: only the call whose destroy took an object
     * names and counts it, so each is reported once. It is named from
     * the snapshot's description, as it was before the destroy: looked up
     * again, its handle would read as released, by this very call. */
    for (size_t i = count; i-- > 0;) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        if (object->handle == context_key || !object->refs || object->seq > mark)
            continue;
        livetrack_keeper *parents[2];
        livetrack_keep_parents(object, parents);
        /* This very object: another recorded at its handle since stays. */
        if (livetrack_destroy_object(object, call->name) != LIVETRACK_OK) {
            ltcu_let_parents_go(parents, call);
            continue;
        }
        ltcu_push_undo_holding(call, LTCU_UNDO_DESTROY, object, parents);
        bytes += object->bytes;
        if (taken++ < DROPPED_OBJECTS_SHOWN)
            livetrack_report_misuse_of(object,
                                       "%s: %s 0x%" PRIx64 " (%" PRIu64 " bytes), never freed, goes with context %p",
                                       call->name, object->type_name ? object->type_name : "object",
                                       ltcu_handle_of(object->type, object->handle), object->bytes, (void *)context);
    }
    if (taken > DROPPED_OBJECTS_SHOWN)
        livetrack_report_misuse("%s: ... and %zu more objects go with context %p", call->name,
                                taken - DROPPED_OBJECTS_SHOWN, (void *)context);
    if (taken)
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_CUDA, context_key,
                                   "%s: context %p %s while it held %zu object%s the program never freed (%" PRIu64
                                   " bytes); they go with it",
                                   call->name, (void *)context, event, taken, taken == 1 ? "" : "s", bytes);
    call->dropped += taken;
    livetrack_snapshot_free(snapshot);
    ltcu_runtime_objects_drop_context(call, context);
}

/* ---- process exit ------------------------------------------------------- */

static atomic_int exit_watched;
static atomic_int exiting;

static void note_exit(void) { atomic_store(&exiting, 1); }

void ltcu_watch_exit(void)
{
    /* Registered at the first tracked call, so it runs before the atexit
     * handlers the CUDA runtime registered when the program started (they
     * run in reverse order): the runtime's teardown then finds it set. */
    if (!atomic_load_explicit(&exit_watched, memory_order_relaxed) && !atomic_exchange(&exit_watched, 1))
        atexit(note_exit);
}

int ltcu_process_exiting(void) { return atomic_load(&exiting); }
