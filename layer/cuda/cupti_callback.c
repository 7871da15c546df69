/*
 * The CUPTI mode's one callback.
 *
 * Driver API: each tracked call arrives twice on the calling thread, at
 * entry and at exit, with CUPTI's argument struct; the handlers run as
 * they do around an interposed call (call.c). The state of a call lives
 * on a small per-thread stack between the two, and CUPTI's
 * correlationData carries its place there.
 *
 * Runtime API: every cuda* call is watched, only to know, while its
 * driver calls run, which cuda* call the program made (it names the
 * objects) and that the runtime, not the program, is calling (objects the
 * runtime makes for itself are not the program's leaks).
 *
 * Resource domain: the driver says when a context, stream, graph or
 * executable graph is about to go, including when it goes implicitly (a
 * primary context whose last reference went, a context torn down at
 * exit). A tracked destroy call has already taken its object out of the
 * registry by then; what is still there went implicitly. Module and
 * memory callbacks carry no handle the registry could use (modules are
 * named by an id there), so those come from the driver API alone.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_front_end.h"

/* Driver calls in flight on one thread at once (callbacks of nested
 * calls) whose state is kept between entry and exit; deeper ones are
 * recorded whole at their exit, once the driver has answered. */
#define MAX_NESTED_CALLS 4

/* callback id -> tracked call + 1 (0: not tracked) */
static const uint8_t call_of_callback[CUPTI_DRIVER_TRACE_CBID_SIZE] = {
#define LTCU_CBID_ENTRY(symbol, api, since, stream, params, args) \
    [CUPTI_DRIVER_TRACE_CBID_##symbol] = LTCU_ID_##symbol + 1,
    LTCU_TRACKED_CALLS(LTCU_CBID_ENTRY)
#undef LTCU_CBID_ENTRY
};
_Static_assert(LTCU_CALL_COUNT < 255, "call ids must fit call_of_callback");

static _Thread_local ltcu_call calls[MAX_NESTED_CALLS];
static _Thread_local unsigned call_depth;
static _Thread_local const char *runtime_call;
static _Thread_local unsigned runtime_depth;

size_t ltcu_cupti_driver_callbacks(CUpti_CallbackId *out, size_t max)
{
    size_t count = 0;
    for (CUpti_CallbackId cbid = 0; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++)
        if (call_of_callback[cbid] && count < max)
            out[count++] = cbid;
    return count;
}

static const CUpti_CallbackId resource_callbacks[] = {
    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING,
    CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING};

size_t ltcu_cupti_resource_callbacks(CUpti_CallbackId *out, size_t max)
{
    size_t count = 0;
    for (size_t i = 0; i < sizeof resource_callbacks / sizeof resource_callbacks[0] && count < max; i++)
        out[count++] = resource_callbacks[i];
    return count;
}

/* ---- runtime API: which cuda* call is running ----------------------------- */

/* CUPTI names runtime calls with their ABI version ("cudaMalloc_v3020");
 * the program wrote "cudaMalloc". One copy per callback id, made once. */
static _Atomic(const char *) runtime_names[CUPTI_RUNTIME_TRACE_CBID_SIZE];

static const char *program_name_of(CUpti_CallbackId cbid, const char *cupti_name)
{
    if (!cupti_name)
        return "a CUDA runtime call";
    if (cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE)
        return cupti_name;
    const char *name = atomic_load_explicit(&runtime_names[cbid], memory_order_acquire);
    if (name)
        return name;
    size_t length = strlen(cupti_name);
    /* Drop "_v<digits>", then "_ptsz"/"_ptds" (per-thread stream twins). */
    for (int pass = 0; pass < 2; pass++) {
        size_t underscore = length;
        while (underscore > 0 && cupti_name[underscore - 1] != '_')
            underscore--;
        if (underscore < 2)
            break;
        const char *suffix = cupti_name + underscore;
        size_t suffix_length = length - underscore;
        int version = suffix_length > 1 && suffix[0] == 'v' && strspn(suffix + 1, "0123456789") >= suffix_length - 1;
        int per_thread = suffix_length == 4 && (!strncmp(suffix, "ptsz", 4) || !strncmp(suffix, "ptds", 4));
        if (!version && !per_thread)
            break;
        length = underscore - 1;
    }
    char *copy = malloc(length + 1);
    if (!copy)
        return cupti_name;
    memcpy(copy, cupti_name, length);
    copy[length] = '\0';
    const char *expected = NULL;
    if (!atomic_compare_exchange_strong(&runtime_names[cbid], &expected, copy)) {
        free(copy); /* another thread was first */
        return expected;
    }
    return copy;
}

static void on_runtime_call(CUpti_CallbackId cbid, const CUpti_CallbackData *data)
{
    if (data->callbackSite == CUPTI_API_ENTER) {
        if (runtime_depth++ == 0)
            runtime_call = program_name_of(cbid, data->functionName);
    } else if (runtime_depth && --runtime_depth == 0) {
        runtime_call = NULL;
    }
}

/* ---- driver API: the tracked calls ------------------------------------------ */

static void on_driver_call(CUpti_CallbackId cbid, const CUpti_CallbackData *data)
{
    if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE || !call_of_callback[cbid])
        return;
    ltcu_call_id id = (ltcu_call_id)(call_of_callback[cbid] - 1);
    ltcu_origin origin = runtime_call ? LTCU_FROM_RUNTIME : LTCU_FROM_PROGRAM;
    if (data->callbackSite == CUPTI_API_ENTER) {
        if (call_depth >= MAX_NESTED_CALLS) {
            if (data->correlationData)
                *data->correlationData = 0;
            return;
        }
        ltcu_call *call = &calls[call_depth++];
        if (data->correlationData)
            *data->correlationData = call_depth;
        ltcu_call_begin(call, id, origin, runtime_call, 1, data->context, data->functionParams);
        return;
    }
    CUresult result = data->functionReturnValue ? *(const CUresult *)data->functionReturnValue : CUDA_ERROR_UNKNOWN;
    uint64_t place = data->correlationData ? *data->correlationData : call_depth;
    if (place == 0 || place > MAX_NESTED_CALLS || place > call_depth) {
        /* Entered too deep (or entry unseen): the call is over, so its
         * entry's work (a destroy takes its object out) is done now, when
         * the driver did it, and then its exit's (what it made). Late, a
         * destroy may find its object gone (the resource domain's
         * STARTING callbacks take streams, contexts and graphs out during
         * the call), which is no misuse; and in the moment since the driver
         * freed it, another thread may have been given the same address,
         * which this would take out: a rare loss of one object, where not
         * doing it left every such free a false leak. */
        ltcu_call call;
        ltcu_call_begin(&call, id, origin, runtime_call, 1, data->context, NULL);
        call.late = 1;
        if (result == CUDA_SUCCESS && ltcu_handlers[id].before)
            ltcu_handlers[id].before(&call, data->functionParams);
        ltcu_call_end(&call, data->functionParams, result);
        return;
    }
    ltcu_call *call = &calls[place - 1];
    /* The owner of what the call made is the context current after it
     * (cuCtxCreate makes its context current). */
    call->context = data->context;
    ltcu_call_end(call, data->functionParams, result);
    call_depth = (unsigned)(place - 1);
}

/* ---- resource domain: objects that go implicitly ---------------------------- */

/* Forget an object the driver is destroying on its own (no call of the
 * program's destroys it, so there is nothing to report or undo). */
static void forget_quietly(ltcu_type type, uint64_t handle)
{
    if (handle && !ltcu_process_exiting())
        livetrack_destroy(LIVETRACK_DOMAIN_CUDA, type, ltcu_key(type, handle), "destroyed by the driver");
}

static void on_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *data)
{
    const CUpti_GraphData *graph = data->resourceDescriptor;
    switch (cbid) {
    case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING: {
        /* A tracked cuCtxDestroy, or the release of a primary context's
         * last reference, has already dropped what it owned. A primary
         * context's reset comes here too, and keeps the program's
         * references (a reset releases none: the program still owes its
         * cuDevicePrimaryCtxRelease); only its release forgets it. */
        if (!data->context || ltcu_process_exiting())
            break;
        ltcu_call call;
        ltcu_call_begin(&call, LTCU_ID_cuCtxDestroy_v2, runtime_call ? LTCU_FROM_RUNTIME : LTCU_FROM_PROGRAM,
                        runtime_call, 1, data->context, NULL);
        call.name = runtime_call ? runtime_call : "the CUDA driver";
        ltcu_drop_context_objects(&call, data->context, "destroyed");
        if (ltcu_primary_device_of(data->context) < 0)
            forget_quietly(LTCU_CONTEXT, (uint64_t)(uintptr_t)data->context);
        ltcu_call_end(&call, NULL, CUDA_SUCCESS);
        break;
    }
    case CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING:
        forget_quietly(LTCU_STREAM, (uint64_t)(uintptr_t)data->resourceHandle.stream);
        break;
    case CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING:
        if (graph)
            forget_quietly(LTCU_GRAPH, (uint64_t)(uintptr_t)graph->graph);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING:
        if (graph)
            forget_quietly(LTCU_GRAPH_EXEC, (uint64_t)(uintptr_t)graph->graphExec);
        break;
    default: break;
    }
}

void CUPTIAPI ltcu_cupti_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void *cbdata)
{
    (void)userdata;
    if (!cbdata)
        return;
    switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API: on_driver_call(cbid, cbdata); break;
    case CUPTI_CB_DOMAIN_RUNTIME_API: on_runtime_call(cbid, cbdata); break;
    case CUPTI_CB_DOMAIN_RESOURCE: on_resource(cbid, cbdata); break;
    default: break;
    }
}
