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
 * cuGetProcAddress handed out. A program that loads its own code through
 * the runtime does so with cudaLibraryLoad*: those libraries are recorded.
 */
#include <string.h>

#include "cuda_front_end.h"
#include "handle_map.h"

static ltcu_map runtime_objects = LTCU_MAP_INIT;

int ltcu_made_for_runtime(const ltcu_call *call, ltcu_type type)
{
    if (call->origin != LTCU_FROM_RUNTIME || (type != LTCU_MODULE && type != LTCU_LIBRARY))
        return 0;
    static const char program_loads[] = "cudaLibraryLoad";
    return !(call->runtime_call && !strncmp(call->runtime_call, program_loads, sizeof program_loads - 1));
}

void ltcu_runtime_object_add(ltcu_type type, uint64_t handle)
{
    /* Out of memory: its unload is then reported, tracking is what suffers. */
    ltcu_map_put(&runtime_objects, ltcu_key(type, handle), 1);
}

int ltcu_runtime_object_take(ltcu_type type, uint64_t handle)
{
    return ltcu_map_take(&runtime_objects, ltcu_key(type, handle), NULL);
}
