/*
 * The interposed driver functions: two wrappers per tracked ABI, made
 * from tracked_calls.h.
 *
 *  - export_<symbol> is exported under the driver's own name
 *    (cuMemAlloc_v2). With LD_PRELOAD it is what a program linked with
 *    -lcuda calls, and what dlsym hands out for the name (dlsym_hook.c).
 *    It calls the driver's function of the same name.
 *  - proc_<symbol> is what cuGetProcAddress hands out (proc_address.c),
 *    which is how the CUDA runtime reaches every driver function. It
 *    calls the function the driver's cuGetProcAddress returned, and marks
 *    the call as the runtime's (see runtime_objects.c).
 *
 * Both fill CUPTI's argument struct for the call and run the same
 * handlers the CUPTI mode runs. While CUPTI tracks (or nothing does),
 * they only forward.
 */
#include <dlfcn.h>
#include <stdatomic.h>

#include "cuda_front_end.h"

#define LTCU_EXPORT __attribute__((visibility("default")))
#define LTCU_UNPAREN(...) __VA_ARGS__

static _Atomic(void *) exported_real[LTCU_CALL_COUNT];
static _Atomic(void *) proc_real[LTCU_CALL_COUNT];

static void *find_in_driver(const char *name)
{
    /* Next after us: the driver the program linked, when we are preloaded. */
    void *function = ltcu_real_dlsym(RTLD_NEXT, name);
    if (!function) {
        void *driver = ltcu_driver_library();
        function = driver ? ltcu_real_dlsym(driver, name) : NULL;
    }
    return function;
}

void *ltcu_real_exported(ltcu_call_id id)
{
    void *real = atomic_load_explicit(&exported_real[id], memory_order_acquire);
    if (!real) {
        real = find_in_driver(ltcu_calls[id].symbol);
        if (real)
            atomic_store_explicit(&exported_real[id], real, memory_order_release);
    }
    return real;
}

int ltcu_set_proc_real(ltcu_call_id id, void *real)
{
    void *expected = NULL;
    if (atomic_compare_exchange_strong(&proc_real[id], &expected, real))
        return 1;
    return expected == real;
}

static CUresult driver_missing(ltcu_call_id id)
{
    static atomic_int said;
    if (!atomic_exchange(&said, 1))
        ltcu_note("the driver's %s was not found (no libcuda.so.1 loaded, or the loaded one lacks it); the call "
                  "fails with CUDA_ERROR_NOT_FOUND",
                  ltcu_calls[id].symbol);
    return CUDA_ERROR_NOT_FOUND;
}

/* The body both wrappers share once `real` is known: call it, tracked
 * unless interposing is off. It takes the pasted names, not the symbol:
 * cuda.h #defines many symbols to their _v2 names, and a symbol passed on
 * to another macro would be expanded to that. */
#define LTCU_TRACKED_CALL(params_type, call_id, args, from)                                                 \
    if (!ltcu_interposing())                                                                                 \
        return real args;                                                                                    \
    params_type tracked_params = {LTCU_UNPAREN args};                                                        \
    ltcu_call call;                                                                                          \
    ltcu_call_begin(&call, call_id, from, NULL, 0, NULL, &tracked_params);                                   \
    CUresult result = real args;                                                                             \
    ltcu_call_end(&call, &tracked_params, result);                                                           \
    return result;

#define LTCU_WRAPPERS(symbol, api, since, stream, params, args)                                             \
    typedef CUresult(CUDAAPI *pfn_##symbol) params;                                                          \
    LTCU_EXPORT CUresult CUDAAPI export_##symbol params __asm__(#symbol);                                    \
    CUresult CUDAAPI export_##symbol params                                                                  \
    {                                                                                                        \
        pfn_##symbol real = (pfn_##symbol)ltcu_real_exported(LTCU_ID_##symbol);                              \
        if (!real)                                                                                           \
            return driver_missing(LTCU_ID_##symbol);                                                         \
        LTCU_TRACKED_CALL(symbol##_params, LTCU_ID_##symbol, args, LTCU_FROM_PROGRAM)                        \
    }                                                                                                        \
    static CUresult CUDAAPI proc_##symbol params                                                             \
    {                                                                                                        \
        pfn_##symbol real = (pfn_##symbol)atomic_load_explicit(&proc_real[LTCU_ID_##symbol],                 \
                                                               memory_order_acquire);                        \
        LTCU_TRACKED_CALL(symbol##_params, LTCU_ID_##symbol, args, LTCU_FROM_RUNTIME)                        \
    }

LTCU_TRACKED_CALLS(LTCU_WRAPPERS)

static void *const exported_wrappers[LTCU_CALL_COUNT] = {
#define LTCU_EXPORTED_ENTRY(symbol, api, since, stream, params, args) [LTCU_ID_##symbol] = (void *)export_##symbol,
    LTCU_TRACKED_CALLS(LTCU_EXPORTED_ENTRY)
#undef LTCU_EXPORTED_ENTRY
};

static void *const proc_wrappers[LTCU_CALL_COUNT] = {
#define LTCU_PROC_ENTRY(symbol, api, since, stream, params, args) [LTCU_ID_##symbol] = (void *)proc_##symbol,
    LTCU_TRACKED_CALLS(LTCU_PROC_ENTRY)
#undef LTCU_PROC_ENTRY
};

void *ltcu_exported_wrapper(ltcu_call_id id) { return exported_wrappers[id]; }

void *ltcu_proc_wrapper(ltcu_call_id id) { return proc_wrappers[id]; }
