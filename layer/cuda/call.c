/*
 * One tracked call, from both attach modes: the prologue runs before the
 * driver (destroys, frees and releases count there), the epilogue after
 * it (creations are recorded only when the call succeeded; a failed
 * call gets back what its prologue took out of the registry).
 */
#include <stdlib.h>

#include "cuda_front_end.h"

CUresult (*ltcu_driver_current_context)(CUcontext *context);
uint64_t (*ltcu_driver_allocation_bytes)(CUdeviceptr pointer);

void ltcu_call_begin(ltcu_call *call, ltcu_call_id id, ltcu_origin origin, const char *runtime_call,
                     int context_known, CUcontext context, const void *params)
{
    call->id = id;
    call->origin = origin;
    call->runtime_call = runtime_call;
    /* The cuda* call names the objects it makes: that is what the
     * program wrote. */
    call->name = runtime_call ? runtime_call : ltcu_calls[id].api_name;
    call->context_known = context_known;
    call->context = context;
    call->primary_counted = NULL;
    call->dropped = 0;
    call->late = 0;
    call->undo_count = 0;
    call->undo_capacity = LTCU_INLINE_UNDO;
    call->undo = call->inline_undo;
    ltcu_watch_exit();
    if (params && ltcu_handlers[id].before)
        ltcu_handlers[id].before(call, params);
}

CUcontext ltcu_call_context(ltcu_call *call)
{
    if (!call->context_known) {
        call->context_known = 1;
        CUcontext current = NULL;
        if (ltcu_driver_current_context && ltcu_driver_current_context(&current) == CUDA_SUCCESS)
            call->context = current;
    }
    return call->context;
}

void ltcu_let_parents_go(livetrack_keeper *keepers[2], const ltcu_call *call)
{
    for (int i = 0; i < 2; i++) {
        livetrack_let_go_in(keepers[i], call->name);
        keepers[i] = NULL;
    }
}

void ltcu_push_undo_holding(ltcu_call *call, ltcu_undo_kind kind, const livetrack_object *object,
                            livetrack_keeper *keepers[2])
{
    if (call->undo_count == call->undo_capacity) {
        size_t capacity = call->undo_capacity * 2;
        ltcu_undo *grown = malloc(capacity * sizeof *grown);
        if (!grown) {
            /* a failed call then cannot put this one back: rare, and only tracking suffers */
            if (keepers)
                ltcu_let_parents_go(keepers, call);
            return;
        }
        for (size_t i = 0; i < call->undo_count; i++)
            grown[i] = call->undo[i];
        if (call->undo != call->inline_undo)
            free(call->undo);
        call->undo = grown;
        call->undo_capacity = capacity;
    }
    ltcu_undo *step = &call->undo[call->undo_count++];
    step->kind = kind;
    step->object = *object;
    step->parent_keepers[0] = keepers ? keepers[0] : NULL;
    step->parent_keepers[1] = keepers ? keepers[1] : NULL;
}

void ltcu_push_undo(ltcu_call *call, ltcu_undo_kind kind, const livetrack_object *object)
{
    ltcu_push_undo_holding(call, kind, object, NULL);
}

/* Put the object back as it was before the prologue took it out (or took
 * references from it): the same object, with its call site, creation
 * number and references, holding the very parents the prologue kept. One
 * whose handle another object took meanwhile stays gone. */
static void restore(const ltcu_call *call, const ltcu_undo *step)
{
    uint32_t taken = step->kind == LTCU_UNDO_DESTROY ? step->object.refs : 1;
    /* Another thread may be retaining or recording the same handle. */
    ltcu_lock_references();
    livetrack_restore(&step->object, taken, step->parent_keepers, call->name);
    ltcu_unlock_references();
}

static int puts_object_back(const ltcu_undo *step)
{
    return step->kind == LTCU_UNDO_DESTROY || step->kind == LTCU_UNDO_RELEASE;
}

static void undo(const ltcu_call *call, const ltcu_undo *step)
{
    switch (step->kind) {
    case LTCU_UNDO_DESTROY:
    case LTCU_UNDO_RELEASE: restore(call, step); break;
    case LTCU_UNDO_RUNTIME_REF: ltcu_primary_give_back_runtime_reference((CUdevice)step->object.handle); break;
    case LTCU_UNDO_MAPPING_SIZE: ltcu_mapping_add(step->object.handle, step->object.bytes); break;
    case LTCU_UNDO_RUNTIME_OBJECT:
        ltcu_runtime_object_restore(step->object.handle, (CUcontext)(uintptr_t)step->object.owner);
        break;
    case LTCU_UNDO_PRIMARY_RETAIN: ltcu_primary_undo_retain((CUcontext)(uintptr_t)step->object.handle); break;
    }
}

void ltcu_call_end(ltcu_call *call, const void *params, CUresult result)
{
    if (result == CUDA_SUCCESS) {
        if (params && ltcu_handlers[call->id].after)
            ltcu_handlers[call->id].after(call, params);
    } else {
        /* The driver refused: nothing was destroyed or released. Objects
         * go back oldest first, as a context's end pushed them: each is
         * linked in its place in creation order, and none then walks
         * past those put back before it. The other steps, newest first. */
        for (size_t i = 0; i < call->undo_count; i++)
            if (puts_object_back(&call->undo[i]))
                undo(call, &call->undo[i]);
        for (size_t i = call->undo_count; i-- > 0;)
            if (!puts_object_back(&call->undo[i]))
                undo(call, &call->undo[i]);
        /* Within the diagnostics limit: a program may retry the refused
         * call over and over. */
        if (call->dropped)
            ltcu_diagnostic("%s failed (CUDA error %d): the %zu object%s reported as going with the context %s "
                            "still there and stay%s tracked",
                            call->name, (int)result, call->dropped, call->dropped == 1 ? "" : "s",
                            call->dropped == 1 ? "is" : "are", call->dropped == 1 ? "s" : "");
    }
    /* Put back (or not) before the parents go: one that the program had
     * destroyed dies here, unless an object put back holds it again. */
    for (size_t i = 0; i < call->undo_count; i++)
        ltcu_let_parents_go(call->undo[i].parent_keepers, call);
    if (call->undo != call->inline_undo)
        free(call->undo);
    call->undo = call->inline_undo;
    call->undo_count = 0;
}
