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
 * thread-local store and load and one read of the registry's creation
 * count to each destroy.
 *
 * A program that looks the functions up in the loader itself (dlopen and
 * dlsym, or the loader's zeGet*ProcAddrTable tables) bypasses these, as
 * it bypasses our zeInit.
 */
#include <dlfcn.h>
#include <level_zero/ze_ddi.h>
#include <stdatomic.h>

#include "ze_front_end.h"

_Thread_local int ltze_destroy_traced;

/* Every call here: X(name without "ze", type, handle, parameters, arguments). */
#define UNTRACED_DESTROYS(X)                                                                                    \
    X(ContextDestroy, LTZE_CONTEXT, context, (ze_context_handle_t context), (context))                          \
    X(CommandQueueDestroy, LTZE_COMMAND_QUEUE, queue, (ze_command_queue_handle_t queue), (queue))               \
    X(CommandListDestroy, LTZE_COMMAND_LIST, list, (ze_command_list_handle_t list), (list))                     \
    X(ModuleDestroy, LTZE_MODULE, module, (ze_module_handle_t module), (module))                                \
    X(ModuleBuildLogDestroy, LTZE_MODULE_BUILD_LOG, log, (ze_module_build_log_handle_t log), (log))             \
    X(KernelDestroy, LTZE_KERNEL, kernel, (ze_kernel_handle_t kernel), (kernel))                                \
    X(EventPoolDestroy, LTZE_EVENT_POOL, pool, (ze_event_pool_handle_t pool), (pool))                           \
    X(EventPoolCloseIpcHandle, LTZE_IPC_EVENT_POOL, pool, (ze_event_pool_handle_t pool), (pool))                \
    X(EventDestroy, LTZE_EVENT, event, (ze_event_handle_t event), (event))                                      \
    X(FenceDestroy, LTZE_FENCE, fence, (ze_fence_handle_t fence), (fence))                                      \
    X(ImageDestroy, LTZE_IMAGE, image, (ze_image_handle_t image), (image))                                      \
    X(SamplerDestroy, LTZE_SAMPLER, sampler, (ze_sampler_handle_t sampler), (sampler))                          \
    X(PhysicalMemDestroy, LTZE_PHYSICAL_MEM, memory, (ze_context_handle_t context, ze_physical_mem_handle_t memory), \
      (context, memory))                                                                                        \
    X(VirtualMemFree, LTZE_VIRTUAL_MEM, start, (ze_context_handle_t context, const void *start, size_t size),    \
      (context, start, size))                                                                                   \
    X(MemFree, LTZE_MEM, memory, (ze_context_handle_t context, void *memory), (context, memory))                \
    X(MemFreeExt, LTZE_MEM, memory,                                                                             \
      (ze_context_handle_t context, const ze_memory_free_ext_desc_t *desc, void *memory), (context, desc, memory)) \
    X(MemCloseIpcHandle, LTZE_IPC_MEM, memory, (ze_context_handle_t context, const void *memory), (context, memory))

#define CALL_INDEX(call, type, handle, params, args) CALL_##call,
enum { UNTRACED_DESTROYS(CALL_INDEX) CALL_COUNT };
#define CALL_NAME(call, type, handle, params, args) "ze" #call,
static const char *const call_names[CALL_COUNT] = {UNTRACED_DESTROYS(CALL_NAME)};

/* The loader's functions, past ours. */
static _Atomic(void *) loader_functions[CALL_COUNT];

static void *loader_function(unsigned call)
{
    void *function = atomic_load_explicit(&loader_functions[call], memory_order_acquire);
    if (!function) {
        /* Only before ltze_find_loader_destroys ran (a library's
         * constructor): later, a first dlsym could wait on the lock a
         * dlclose() holds while a destructor joins this thread. */
        function = dlsym(RTLD_NEXT, call_names[call]);
        atomic_store_explicit(&loader_functions[call], function, memory_order_release);
    }
    return function;
}

void ltze_find_loader_destroys(void)
{
    for (unsigned call = 0; call < CALL_COUNT; call++)
        loader_function(call);
}

/* One exported call. The creation count read first tells an object made
 * by another thread at the freed address, while the driver was freeing
 * ours, from the one this call let go of. The mark of an outer call (a
 * destroy made inside another tool's tracer callback) is kept. */
#define UNTRACED_DESTROY(call, type, handle, params, args)                                                      \
    LIVETRACK_API ze_result_t ZE_APICALL ze##call params                                                         \
    {                                                                                                            \
        ze_pfn##call##_t forward = (ze_pfn##call##_t)loader_function(CALL_##call);                               \
        if (!forward)                                                                                            \
            return ZE_RESULT_ERROR_UNINITIALIZED;                                                                \
        uint64_t created_before = livetrack_mark();                                                              \
        int outer_traced = ltze_destroy_traced;                                                                  \
        ltze_destroy_traced = 0;                                                                                 \
        ze_result_t result = forward args;                                                                       \
        int traced = ltze_destroy_traced;                                                                        \
        ltze_destroy_traced = outer_traced;                                                                      \
        if (result == ZE_RESULT_SUCCESS && !traced)                                                              \
            ltze_untraced_destroy("ze" #call, type, (const void *)(handle), created_before);                     \
        return result;                                                                                           \
    }

UNTRACED_DESTROYS(UNTRACED_DESTROY)
