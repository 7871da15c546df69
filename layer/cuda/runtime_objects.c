/*
 * Objects the CUDA runtime makes for itself: the modules (or, since CUDA
 * 12, libraries) holding the program's kernels, loaded lazily inside
 * whatever runtime call first needs them and unloaded by the runtime's
 * own teardown at exit. They are not the program's to unload, so they
 * are not recorded; their handles are kept here so that the runtime's
 * unload is not taken for the unload of an unknown module.
 *
 * A call counts as the runtime's when CUPTI says it ran inside a cuda*
 * call, or (interposition) when it came through a function pointer that
 * cuGetProcAddress handed out, or when the image loaded is one nvcc
 * compiled into the program or a library (fatbin_section.c). The last is
 * all CUPTI mode has for the CUDA 13 runtime, which loads a kernel's
 * library in a launch's first step, before CUPTI's runtime callback for
 * the launch (seen on an H200, driver 580). A program that loads its own code through
 * the runtime does so with cudaLibraryLoad*: those libraries are recorded
 * when CUPTI names that call. Interposition cannot tell them from the
 * runtime's: the runtime makes both through the pointers cuGetProcAddress
 * handed it, and its cudaLibraryLoad* is usually linked into the program
 * (static cudart), where preloading does not reach. They are taken for
 * the runtime's there, which misses a leaked one rather than reporting
 * the runtime's own libraries, in every program, as leaks.
 *
 * A module goes with its context without an unload (cuCtxDestroy, a
 * primary context's reset or last release), so each is kept with the
 * context it was loaded in and forgotten with it. Else the driver may hand
 * the program a module at the same address, whose unload would then be
 * taken for the runtime's and never leave the registry.
 */
#include <string.h>

#include "cuda_front_end.h"
#include "handle_map.h"

static ltcu_map runtime_objects = LTCU_MAP_INIT;

int ltcu_made_for_runtime(const ltcu_call *call, ltcu_type type, const void *image)
{
    if (type != LTCU_MODULE && type != LTCU_LIBRARY)
        return 0;
    static const char program_loads[] = "cudaLibraryLoad";
    if (call->runtime_call && !strncmp(call->runtime_call, program_loads, sizeof program_loads - 1))
        return 0;
    return call->origin == LTCU_FROM_RUNTIME || ltcu_code_compiled_in(image);
}

/* The value kept with a runtime object: its context, or this for
 * libraries, which outlive contexts (the map keeps no 0 key, but a 0
 * value would do; a distinct one reads better when debugging). */
#define NO_CONTEXT ((uint64_t)1)

static uint64_t owner_value(CUcontext context)
{
    return context ? (uint64_t)(uintptr_t)context : NO_CONTEXT;
}

void ltcu_runtime_object_add(ltcu_call *call, ltcu_type type, uint64_t handle)
{
    CUcontext owner = type == LTCU_MODULE ? ltcu_call_context(call) : NULL;
    /* Out of memory: its unload is then reported, tracking is what suffers. */
    ltcu_map_put(&runtime_objects, ltcu_key(type, handle), owner_value(owner));
}

typedef struct context_end {
    ltcu_call *call;
    CUcontext context;
} context_end;

/* Kept to put back should the driver refuse to end the context. */
static void remember_dropped(uint64_t key, void *raw_end)
{
    const context_end *end = raw_end;
    livetrack_object dropped = {.handle = key, .owner = (const void *)end->context};
    ltcu_push_undo(end->call, LTCU_UNDO_RUNTIME_OBJECT, &dropped);
}

void ltcu_runtime_objects_drop_context(ltcu_call *call, CUcontext context)
{
    if (!context)
        return;
    context_end end = {call, context};
    ltcu_map_take_all_of(&runtime_objects, owner_value(context), remember_dropped, &end);
}

void ltcu_runtime_object_restore(uint64_t key, CUcontext context)
{
    ltcu_map_put(&runtime_objects, key, owner_value(context));
}

int ltcu_runtime_object_take(ltcu_type type, uint64_t handle)
{
    return ltcu_map_take(&runtime_objects, ltcu_key(type, handle), NULL);
}
