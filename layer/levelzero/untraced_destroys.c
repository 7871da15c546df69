/*
 * The destroy, free and close calls, exported so that a program linked
 * with the loader (and the libraries it loads) reach them first, through
 * LD_PRELOAD, as they reach our zeInit.
 *
 * Why: the loader's tracing layer keeps its per-thread state in a C++
 * thread_local. glibc destroys those when a thread ends, and on the main
 * thread when exit() begins, before the atexit handlers, the destructors
 * of static C++ objects and of libraries run; a thread's pthread key
 * destructors run after them too. From then on the layer passes that
 * thread's calls to the driver without calling livetrack, so everything a
 * program lets go of while it ends (RAII objects, runtime tear-down)
 * would be reported as leaked.
 *
 * Each function forwards to the loader. The tracer's destroy prologue
 * marks the thread (ltze_before_destroy); when the call succeeded and the
 * mark is missing, the tracer did not see it, and the destroy is recorded
 * here, after the driver freed the object. There is nothing to check
 * then: the driver took the call. While the tracer works, this adds a
 * thread-local store and load to each destroy.
 *
 * A program that looks the functions up in the loader itself (dlopen and
 * dlsym) bypasses these, as it bypasses our zeInit.
 */
#include <dlfcn.h>
#include <level_zero/ze_ddi.h>
#include <stdatomic.h>

#include "ze_front_end.h"

_Thread_local int ltze_destroy_traced;

/* The loader's function `name`, past ours, looked up once. */
static void *loader_function(_Atomic(void *) *cache, const char *name)
{
    void *function = atomic_load_explicit(cache, memory_order_acquire);
    if (!function) {
        function = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(cache, function, memory_order_release);
    }
    return function;
}

/* One exported destroy: `call` with `params` (declared) and `args` (the
 * names), letting go of a `type` named by `handle`. */
#define UNTRACED_DESTROY(call, type, handle, params, args)                                             \
    LIVETRACK_API ze_result_t ZE_APICALL ze##call params                                                \
    {                                                                                                   \
        static _Atomic(void *) loader_##call;                                                           \
        ze_pfn##call##_t forward = (ze_pfn##call##_t)loader_function(&loader_##call, "ze" #call);       \
        if (!forward)                                                                                   \
            return ZE_RESULT_ERROR_UNINITIALIZED;                                                       \
        ltze_destroy_traced = 0;                                                                        \
        ze_result_t result = forward args;                                                              \
        if (result == ZE_RESULT_SUCCESS && !ltze_destroy_traced)                                        \
            ltze_untraced_destroy("ze" #call, type, (const void *)(handle));                            \
        return result;                                                                                  \
    }

UNTRACED_DESTROY(ContextDestroy, LTZE_CONTEXT, context, (ze_context_handle_t context), (context))
UNTRACED_DESTROY(CommandQueueDestroy, LTZE_COMMAND_QUEUE, queue, (ze_command_queue_handle_t queue), (queue))
UNTRACED_DESTROY(CommandListDestroy, LTZE_COMMAND_LIST, list, (ze_command_list_handle_t list), (list))
UNTRACED_DESTROY(ModuleDestroy, LTZE_MODULE, module, (ze_module_handle_t module), (module))
UNTRACED_DESTROY(ModuleBuildLogDestroy, LTZE_MODULE_BUILD_LOG, log, (ze_module_build_log_handle_t log), (log))
UNTRACED_DESTROY(KernelDestroy, LTZE_KERNEL, kernel, (ze_kernel_handle_t kernel), (kernel))
UNTRACED_DESTROY(EventPoolDestroy, LTZE_EVENT_POOL, pool, (ze_event_pool_handle_t pool), (pool))
UNTRACED_DESTROY(EventPoolCloseIpcHandle, LTZE_IPC_EVENT_POOL, pool, (ze_event_pool_handle_t pool), (pool))
UNTRACED_DESTROY(EventDestroy, LTZE_EVENT, event, (ze_event_handle_t event), (event))
UNTRACED_DESTROY(FenceDestroy, LTZE_FENCE, fence, (ze_fence_handle_t fence), (fence))
UNTRACED_DESTROY(ImageDestroy, LTZE_IMAGE, image, (ze_image_handle_t image), (image))
UNTRACED_DESTROY(SamplerDestroy, LTZE_SAMPLER, sampler, (ze_sampler_handle_t sampler), (sampler))
UNTRACED_DESTROY(PhysicalMemDestroy, LTZE_PHYSICAL_MEM, memory,
                 (ze_context_handle_t context, ze_physical_mem_handle_t memory), (context, memory))
UNTRACED_DESTROY(VirtualMemFree, LTZE_VIRTUAL_MEM, start, (ze_context_handle_t context, const void *start, size_t size),
                 (context, start, size))
UNTRACED_DESTROY(MemFree, LTZE_MEM, memory, (ze_context_handle_t context, void *memory), (context, memory))
UNTRACED_DESTROY(MemFreeExt, LTZE_MEM, memory,
                 (ze_context_handle_t context, const ze_memory_free_ext_desc_t *desc, void *memory),
                 (context, desc, memory))
UNTRACED_DESTROY(MemCloseIpcHandle, LTZE_IPC_MEM, memory, (ze_context_handle_t context, const void *memory),
                 (context, memory))
