/*
 * Questions livetrack asks the driver itself, outside the program's
 * calls: the current context (interposition: CUPTI names it), and the
 * size of memory another process shares, which the call that maps it
 * does not say; and how the driver's own functions are found.
 *
 * The driver's own functions are called, never livetrack's wrappers, so
 * nothing here is tracked; in CUPTI mode only the tracked calls have
 * callbacks enabled, so these raise none. Each function is looked up
 * once: after RTLD_NEXT (the driver linked or loaded globally after
 * livetrack), in the driver library itself (loaded locally by the
 * runtime).
 */
#include <dlfcn.h>
#include <stdatomic.h>

#include "cuda_front_end.h"

void *ltcu_driver_function(_Atomic(void *) *cache, const char *name)
{
    void *function = atomic_load_explicit(cache, memory_order_acquire);
    if (function)
        return function;
    function = ltcu_real_dlsym(RTLD_NEXT, name);
    if (!function) {
        void *driver = ltcu_driver_library();
        function = driver ? ltcu_real_dlsym(driver, name) : NULL;
    }
    if (function)
        atomic_store_explicit(cache, function, memory_order_release);
    return function;
}

CUresult ltcu_current_context_from_driver(CUcontext *context)
{
    static _Atomic(void *) found;
    CUresult (*current)(CUcontext *) = (CUresult(*)(CUcontext *))ltcu_driver_function(&found, "cuCtxGetCurrent");
    return current ? current(context) : CUDA_ERROR_NOT_FOUND;
}

uint64_t ltcu_allocation_bytes_from_driver(CUdeviceptr pointer)
{
    static _Atomic(void *) found;
    CUresult (*range)(CUdeviceptr *, size_t *, CUdeviceptr) =
        (CUresult(*)(CUdeviceptr *, size_t *, CUdeviceptr))ltcu_driver_function(&found, "cuMemGetAddressRange_v2");
    CUdeviceptr base = 0;
    size_t size = 0;
    if (!range || range(&base, &size, pointer) != CUDA_SUCCESS || base != pointer)
        return 0;
    return size;
}
