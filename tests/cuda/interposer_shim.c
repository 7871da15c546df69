/*
 * Another interposer of the driver, as a profiling shim would be: it
 * defines cuMemAlloc_v2 and cuGetProcAddress_v2, counts the calls, and
 * forwards each to dlsym(RTLD_NEXT) of the same name. The test program
 * links it before libcuda.so.1, so with livetrack preloaded the chain is
 * program -> livetrack -> this shim -> driver.
 *
 * Should RTLD_NEXT lead back into the chain, the shim is entered again
 * before its first call returns: it counts that and fails the call
 * instead of following the loop until the stack overflows, so the test
 * fails with a message rather than a crash.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

#define SHIM_EXPORT __attribute__((visibility("default")))

static int alloc_calls, get_proc_calls, reentries;
static int alloc_depth, get_proc_depth;

SHIM_EXPORT int interposer_shim_alloc_calls(void) { return alloc_calls; }
SHIM_EXPORT int interposer_shim_get_proc_calls(void) { return get_proc_calls; }
SHIM_EXPORT int interposer_shim_reentries(void) { return reentries; }

/* What this shim gets from dlsym(RTLD_NEXT, name). The volatile keeps the
 * compiler from making the call a tail jump, which would leave the test
 * program, not this library, as dlsym's caller. */
SHIM_EXPORT void *interposer_shim_next(const char *name)
{
    void *volatile next = dlsym(RTLD_NEXT, name);
    return next;
}

static int entered_again(int *depth, const char *name, void *next)
{
    if (*depth == 0)
        return 0;
    reentries++;
    Dl_info info = {0};
    fprintf(stderr, "interposer_shim: %s entered again: dlsym(RTLD_NEXT) gave %p in %s\n", name, next,
            dladdr(next, &info) && info.dli_fname ? info.dli_fname : "?");
    return 1;
}

SHIM_EXPORT CUresult CUDAAPI shim_cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes) __asm__("cuMemAlloc_v2");
CUresult CUDAAPI shim_cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    CUresult(CUDAAPI * next)(CUdeviceptr *, size_t) =
        (CUresult(CUDAAPI *)(CUdeviceptr *, size_t))dlsym(RTLD_NEXT, "cuMemAlloc_v2");
    if (entered_again(&alloc_depth, "cuMemAlloc_v2", (void *)next) || !next)
        return CUDA_ERROR_UNKNOWN;
    alloc_calls++;
    alloc_depth++;
    CUresult result = next(dptr, bytes);
    alloc_depth--;
    return result;
}

typedef CUresult(CUDAAPI *get_proc_v2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

SHIM_EXPORT CUresult CUDAAPI shim_cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version,
                                                      cuuint64_t flags, CUdriverProcAddressQueryResult *status)
    __asm__("cuGetProcAddress_v2");
CUresult CUDAAPI shim_cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *status)
{
    get_proc_v2_fn next = (get_proc_v2_fn)dlsym(RTLD_NEXT, "cuGetProcAddress_v2");
    if (entered_again(&get_proc_depth, "cuGetProcAddress_v2", (void *)next) || !next)
        return CUDA_ERROR_UNKNOWN;
    get_proc_calls++;
    get_proc_depth++;
    CUresult result = next(symbol, pfn, cuda_version, flags, status);
    get_proc_depth--;
    return result;
}
