/*
 * The tracing callbacks: for each Level Zero call livetrack follows, what
 * it creates, destroys or uses, described once per call below and
 * registered with the loader's tracer in ltze_register_callbacks().
 *
 * Epilogues see the call's result and pointers to its arguments
 * (`*params->phContext` is the handle passed, `**params->pphContext` the
 * handle created); only successful calls create anything, except build
 * logs (below).
 */
#include <level_zero/layers/zel_tracing_register_cb.h>

#include "ze_front_end.h"

/* The callback arguments every callback has and most ignore. */
#define CALLBACK_ARGS(params_type) \
    params_type *params, ze_result_t result, void *tracer_data, void **instance_data
#define UNUSED_CALLBACK_ARGS \
    (void)tracer_data;       \
    (void)instance_data

/* `call` made a `type` at **params->out (a pointer to the program's
 * output variable), held by `parent`. */
#define ON_CREATED(call, params_type, type, out, bytes, parent, second_parent, owner)                     \
    static void ZE_APICALL call##_created(CALLBACK_ARGS(params_type))                                       \
    {                                                                                                       \
        UNUSED_CALLBACK_ARGS;                                                                               \
        if (result == ZE_RESULT_SUCCESS && params->out && *params->out)                                     \
            ltze_record_creation("ze" #call, type, (const void *)**params->out, (bytes), (parent),          \
                                 (second_parent), (owner));                                                 \
    }

/* `call` destroys or frees the `type` named by `handle`; `context` is the
 * context it names besides, or NULL. */
#define ON_DESTROY(call, params_type, type, handle, context) \
    ON_SIZED_DESTROY(call, params_type, type, handle, context, NULL)

/* ... and `size` points to the size it names, or is NULL. */
#define ON_SIZED_DESTROY(call, params_type, type, handle, context, size)                                   \
    static void ZE_APICALL call##_before(CALLBACK_ARGS(params_type))                                        \
    {                                                                                                       \
        UNUSED_CALLBACK_ARGS;                                                                               \
        (void)result;                                                                                       \
        ltze_before_destroy("ze" #call, type, (const void *)(handle), (context), (size));                   \
    }                                                                                                       \
    static void ZE_APICALL call##_after(CALLBACK_ARGS(params_type))                                         \
    {                                                                                                       \
        UNUSED_CALLBACK_ARGS;                                                                               \
        ltze_after_destroy("ze" #call, (const void *)(handle), result);                                     \
    }

/* `call` uses the `type` named by `handle` and keeps it (resets). */
#define ON_USE(call, params_type, type, handle)                                                            \
    static void ZE_APICALL call##_before(CALLBACK_ARGS(params_type))                                        \
    {                                                                                                       \
        UNUSED_CALLBACK_ARGS;                                                                               \
        (void)result;                                                                                       \
        ltze_check_live("ze" #call, type, (const void *)(handle));                                          \
    }

/* ---- what each call does ----------------------------------------------------- */

/* Contexts are grouped by the driver they come from. */
ON_CREATED(ContextCreate, ze_context_create_params_t, LTZE_CONTEXT, pphContext, 0, NULL, NULL, *params->phDriver)
ON_CREATED(ContextCreateEx, ze_context_create_ex_params_t, LTZE_CONTEXT, pphContext, 0, NULL, NULL, *params->phDriver)
ON_DESTROY(ContextDestroy, ze_context_destroy_params_t, LTZE_CONTEXT, *params->phContext, NULL)

ON_CREATED(CommandQueueCreate, ze_command_queue_create_params_t, LTZE_COMMAND_QUEUE, pphCommandQueue, 0,
           *params->phContext, NULL, NULL)
ON_DESTROY(CommandQueueDestroy, ze_command_queue_destroy_params_t, LTZE_COMMAND_QUEUE, *params->phCommandQueue, NULL)

ON_CREATED(CommandListCreate, ze_command_list_create_params_t, LTZE_COMMAND_LIST, pphCommandList, 0,
           *params->phContext, NULL, NULL)
ON_CREATED(CommandListCreateImmediate, ze_command_list_create_immediate_params_t, LTZE_COMMAND_LIST, pphCommandList,
           0, *params->phContext, NULL, NULL)
ON_DESTROY(CommandListDestroy, ze_command_list_destroy_params_t, LTZE_COMMAND_LIST, *params->phCommandList, NULL)
ON_USE(CommandListReset, ze_command_list_reset_params_t, LTZE_COMMAND_LIST, *params->phCommandList)

ON_DESTROY(ModuleDestroy, ze_module_destroy_params_t, LTZE_MODULE, *params->phModule, NULL)
ON_DESTROY(ModuleBuildLogDestroy, ze_module_build_log_destroy_params_t, LTZE_MODULE_BUILD_LOG,
           *params->phModuleBuildLog, NULL)

ON_CREATED(KernelCreate, ze_kernel_create_params_t, LTZE_KERNEL, pphKernel, 0, *params->phModule, NULL, NULL)
ON_DESTROY(KernelDestroy, ze_kernel_destroy_params_t, LTZE_KERNEL, *params->phKernel, NULL)

ON_CREATED(EventPoolCreate, ze_event_pool_create_params_t, LTZE_EVENT_POOL, pphEventPool, 0, *params->phContext,
           NULL, NULL)
ON_DESTROY(EventPoolDestroy, ze_event_pool_destroy_params_t, LTZE_EVENT_POOL, *params->phEventPool, NULL)

/* A pool opened from another process's IPC handle belongs to the context
 * it was opened in, and its events to it, like a created pool's; it is
 * closed, not destroyed. */
ON_CREATED(EventPoolOpenIpcHandle, ze_event_pool_open_ipc_handle_params_t, LTZE_IPC_EVENT_POOL, pphEventPool, 0,
           *params->phContext, NULL, NULL)
ON_DESTROY(EventPoolCloseIpcHandle, ze_event_pool_close_ipc_handle_params_t, LTZE_IPC_EVENT_POOL,
           *params->phEventPool, NULL)

ON_CREATED(EventCreate, ze_event_create_params_t, LTZE_EVENT, pphEvent, 0, *params->phEventPool, NULL, NULL)
ON_DESTROY(EventDestroy, ze_event_destroy_params_t, LTZE_EVENT, *params->phEvent, NULL)
ON_USE(EventHostReset, ze_event_host_reset_params_t, LTZE_EVENT, *params->phEvent)

/* A fence belongs to the queue it was made for. */
ON_CREATED(FenceCreate, ze_fence_create_params_t, LTZE_FENCE, pphFence, 0, *params->phCommandQueue, NULL, NULL)
ON_DESTROY(FenceDestroy, ze_fence_destroy_params_t, LTZE_FENCE, *params->phFence, NULL)
ON_USE(FenceReset, ze_fence_reset_params_t, LTZE_FENCE, *params->phFence)

ON_CREATED(ImageCreate, ze_image_create_params_t, LTZE_IMAGE, pphImage, 0, *params->phContext, NULL, NULL)
/* A view does not keep its image alive: the spec lets the program destroy
 * the image first, which disables the view (zeImageViewCreateExp). */
ON_CREATED(ImageViewCreateExp, ze_image_view_create_exp_params_t, LTZE_IMAGE, pphImageView, 0, *params->phContext,
           NULL, NULL)
ON_DESTROY(ImageDestroy, ze_image_destroy_params_t, LTZE_IMAGE, *params->phImage, NULL)

ON_CREATED(SamplerCreate, ze_sampler_create_params_t, LTZE_SAMPLER, pphSampler, 0, *params->phContext, NULL, NULL)
ON_DESTROY(SamplerDestroy, ze_sampler_destroy_params_t, LTZE_SAMPLER, *params->phSampler, NULL)

ON_CREATED(PhysicalMemCreate, ze_physical_mem_create_params_t, LTZE_PHYSICAL_MEM, pphPhysicalMemory,
           *params->pdesc ? (*params->pdesc)->size : 0, *params->phContext, NULL, NULL)
ON_DESTROY(PhysicalMemDestroy, ze_physical_mem_destroy_params_t, LTZE_PHYSICAL_MEM, *params->phPhysicalMemory,
           *params->phContext)

ON_CREATED(VirtualMemReserve, ze_virtual_mem_reserve_params_t, LTZE_VIRTUAL_MEM, ppptr, *params->psize,
           *params->phContext, NULL, NULL)
/* A reservation is freed whole: the size named must be the one reserved. */
ON_SIZED_DESTROY(VirtualMemFree, ze_virtual_mem_free_params_t, LTZE_VIRTUAL_MEM, *params->pptr, *params->phContext,
                 params->psize)

ON_CREATED(MemAllocDevice, ze_mem_alloc_device_params_t, LTZE_MEM, ppptr, *params->psize, *params->phContext, NULL,
           NULL)
ON_CREATED(MemAllocHost, ze_mem_alloc_host_params_t, LTZE_MEM, ppptr, *params->psize, *params->phContext, NULL, NULL)
ON_CREATED(MemAllocShared, ze_mem_alloc_shared_params_t, LTZE_MEM, ppptr, *params->psize, *params->phContext, NULL,
           NULL)
ON_DESTROY(MemFree, ze_mem_free_params_t, LTZE_MEM, *params->pptr, *params->phContext)
ON_DESTROY(MemFreeExt, ze_mem_free_ext_params_t, LTZE_MEM, *params->pptr, *params->phContext)
/* Memory mapped from another process's IPC handle, closed naming its
 * context again. The handle does not say how big it is; the driver's
 * address range of the mapping does (0 bytes when it cannot say). */
static uint64_t mapping_bytes(ze_context_handle_t context, const void *mapping)
{
    size_t size = 0;
    return zeMemGetAddressRange(context, mapping, NULL, &size) == ZE_RESULT_SUCCESS ? size : 0;
}
ON_CREATED(MemOpenIpcHandle, ze_mem_open_ipc_handle_params_t, LTZE_IPC_MEM, ppptr,
           mapping_bytes(*params->phContext, **params->ppptr), *params->phContext, NULL, NULL)
ON_DESTROY(MemCloseIpcHandle, ze_mem_close_ipc_handle_params_t, LTZE_IPC_MEM, *params->pptr, *params->phContext)

/* ---- build logs ----------------------------------------------------------------- */

/* zeModuleCreate hands out a build log whenever the program asks for one,
 * also when the build fails (the log says why), zeModuleDynamicLink a
 * link log and zeModuleInspectLinkageExt a linkage report (build logs too,
 * destroyed the same way); the program must destroy each whatever the
 * result. Whether the driver made one cannot be told from the result or
 * from the value the variable holds afterwards: Intel's driver writes the
 * log before it checks the module's descriptor and then refuses the call
 * with ZE_RESULT_ERROR_INVALID_ARGUMENT, other refusals leave the variable
 * alone, and a program that destroyed its log and reuses the variable gets
 * the freed address back. So the prologue puts a value into the program's
 * variable that no driver hands out (the address of an object of ours),
 * and the epilogue looks: still that value, nothing was written, and the
 * program's own value goes back, so the program sees the variable as
 * without livetrack; anything else the driver (or the loader under the
 * tracing layer) wrote, and a non-NULL value written is a new log.
 *
 * The loader's tracing layer runs every prologue, the call and every
 * epilogue back to back on the calling thread (a call made inside a
 * callback is not traced), so one slot per thread holds the call in
 * flight. Our tracer is enabled in the first zeInit, before any tracer
 * the program makes, and the layer calls tracers in the order they were
 * enabled: the program's own epilogues see its variable put back. These
 * calls have no exported replacement (untraced_destroys.c covers destroys
 * only): one the tracer does not report (during exit) is not seen, and
 * its variable is not touched, as with any create. */
static char build_log_not_written; /* its address is the value no driver hands out */
#define BUILD_LOG_NOT_WRITTEN ((ze_module_build_log_handle_t)(void *)&build_log_not_written)

typedef struct build_log_call {
    ze_module_build_log_handle_t *variable; /* the program's, NULL when it asked for no log */
    ze_module_build_log_handle_t program_value;
} build_log_call;
static _Thread_local build_log_call build_log_in_flight;

/* In the prologue: `out` points to the argument holding the address of
 * the program's variable. */
static void mark_build_log_unwritten(ze_module_build_log_handle_t *const *out)
{
    build_log_call *call = &build_log_in_flight;
    call->variable = *out;
    if (call->variable) {
        call->program_value = *call->variable;
        *call->variable = BUILD_LOG_NOT_WRITTEN;
    }
}

/* In the epilogue: record the log `call_name` handed out, if it wrote one. The
 * variable is the one the prologue marked, even if another tracer's
 * prologue pointed the call elsewhere. A log outlives its module and is no
 * context's child: destroying the module or the context first is not
 * misuse. */
static void record_build_log(const char *call_name, const void *owner)
{
    build_log_call *call = &build_log_in_flight;
    ze_module_build_log_handle_t *variable = call->variable;
    call->variable = NULL;
    if (!variable)
        return;
    ze_module_build_log_handle_t written = *variable;
    if (written == BUILD_LOG_NOT_WRITTEN)
        *variable = call->program_value;
    else if (written)
        ltze_record_creation(call_name, LTZE_MODULE_BUILD_LOG, written, 0, NULL, NULL, owner);
}

static void ZE_APICALL ModuleCreate_before(CALLBACK_ARGS(ze_module_create_params_t))
{
    UNUSED_CALLBACK_ARGS;
    (void)result;
    mark_build_log_unwritten(params->pphBuildLog);
}

static void ZE_APICALL ModuleCreate_created(CALLBACK_ARGS(ze_module_create_params_t))
{
    UNUSED_CALLBACK_ARGS;
    if (result == ZE_RESULT_SUCCESS && *params->pphModule)
        ltze_record_creation("zeModuleCreate", LTZE_MODULE, **params->pphModule, 0, *params->phContext, NULL, NULL);
    record_build_log("zeModuleCreate", ltze_owner_of(*params->phContext));
}

/* A link log belongs to the driver of the modules linked. */
static void ZE_APICALL ModuleDynamicLink_before(CALLBACK_ARGS(ze_module_dynamic_link_params_t))
{
    UNUSED_CALLBACK_ARGS;
    (void)result;
    mark_build_log_unwritten(params->pphLinkLog);
}

/* The driver owning the modules of a call (the first one's). */
static const void *owner_of_modules(const uint32_t *count, ze_module_handle_t *const *modules)
{
    return ltze_owner_of(*count && *modules ? (*modules)[0] : NULL);
}

static void ZE_APICALL ModuleDynamicLink_created(CALLBACK_ARGS(ze_module_dynamic_link_params_t))
{
    UNUSED_CALLBACK_ARGS;
    (void)result; /* a log can come with any result */
    record_build_log("zeModuleDynamicLink", owner_of_modules(params->pnumModules, params->pphModules));
}

/* The linkage report, like a link log, belongs to the modules' driver. */
static void ZE_APICALL ModuleInspectLinkageExt_before(CALLBACK_ARGS(ze_module_inspect_linkage_ext_params_t))
{
    UNUSED_CALLBACK_ARGS;
    (void)result;
    mark_build_log_unwritten(params->pphLog);
}

static void ZE_APICALL ModuleInspectLinkageExt_created(CALLBACK_ARGS(ze_module_inspect_linkage_ext_params_t))
{
    UNUSED_CALLBACK_ARGS;
    (void)result; /* a log can come with any result */
    record_build_log("zeModuleInspectLinkageExt", owner_of_modules(params->pnumModules, params->pphModules));
}

/* ---- registration ------------------------------------------------------------- */

#define REGISTER(call, kind, callback)                                                                      \
    do {                                                                                                    \
        if (zelTracer##call##RegisterCallback(tracer, ZEL_REGISTER_##kind, callback) != ZE_RESULT_SUCCESS)  \
            return "zelTracer" #call "RegisterCallback";                                                    \
    } while (0)

#define REGISTER_CREATE(call) REGISTER(call, EPILOGUE, call##_created)
#define REGISTER_DESTROY(call)                   \
    do {                                         \
        REGISTER(call, PROLOGUE, call##_before); \
        REGISTER(call, EPILOGUE, call##_after);  \
    } while (0)
#define REGISTER_USE(call) REGISTER(call, PROLOGUE, call##_before)

const char *ltze_register_callbacks(zel_tracer_handle_t tracer)
{
    REGISTER_CREATE(ContextCreate);
    REGISTER_CREATE(ContextCreateEx);
    REGISTER_DESTROY(ContextDestroy);
    REGISTER_CREATE(CommandQueueCreate);
    REGISTER_DESTROY(CommandQueueDestroy);
    REGISTER_CREATE(CommandListCreate);
    REGISTER_CREATE(CommandListCreateImmediate);
    REGISTER_DESTROY(CommandListDestroy);
    REGISTER_USE(CommandListReset);
    REGISTER(ModuleCreate, PROLOGUE, ModuleCreate_before);
    REGISTER_CREATE(ModuleCreate);
    REGISTER_DESTROY(ModuleDestroy);
    REGISTER(ModuleDynamicLink, PROLOGUE, ModuleDynamicLink_before);
    REGISTER_CREATE(ModuleDynamicLink);
    REGISTER(ModuleInspectLinkageExt, PROLOGUE, ModuleInspectLinkageExt_before);
    REGISTER_CREATE(ModuleInspectLinkageExt);
    REGISTER_DESTROY(ModuleBuildLogDestroy);
    REGISTER_CREATE(KernelCreate);
    REGISTER_DESTROY(KernelDestroy);
    REGISTER_CREATE(EventPoolCreate);
    REGISTER_DESTROY(EventPoolDestroy);
    REGISTER_CREATE(EventPoolOpenIpcHandle);
    REGISTER_DESTROY(EventPoolCloseIpcHandle);
    REGISTER_CREATE(EventCreate);
    REGISTER_DESTROY(EventDestroy);
    REGISTER_USE(EventHostReset);
    REGISTER_CREATE(FenceCreate);
    REGISTER_DESTROY(FenceDestroy);
    REGISTER_USE(FenceReset);
    REGISTER_CREATE(ImageCreate);
    REGISTER_CREATE(ImageViewCreateExp);
    REGISTER_DESTROY(ImageDestroy);
    REGISTER_CREATE(SamplerCreate);
    REGISTER_DESTROY(SamplerDestroy);
    REGISTER_CREATE(PhysicalMemCreate);
    REGISTER_DESTROY(PhysicalMemDestroy);
    REGISTER_CREATE(VirtualMemReserve);
    REGISTER_DESTROY(VirtualMemFree);
    REGISTER_CREATE(MemAllocDevice);
    REGISTER_CREATE(MemAllocHost);
    REGISTER_CREATE(MemAllocShared);
    REGISTER_DESTROY(MemFree);
    REGISTER_DESTROY(MemFreeExt);
    REGISTER_CREATE(MemOpenIpcHandle);
    REGISTER_DESTROY(MemCloseIpcHandle);
    return NULL;
}
