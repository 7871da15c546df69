/*
 * Another interposer after livetrack (interposer_shim.c, linked before
 * libcuda.so.1; livetrack preloaded): the program's calls go
 * program -> livetrack -> shim -> driver. The shim reaches the driver
 * with dlsym(RTLD_NEXT), which livetrack's dlsym must answer as glibc
 * would for the shim (the driver's function), not with livetrack's
 * wrapper: that would send the call back to livetrack, and livetrack to
 * the shim, until the stack overflows. Each call still reaches livetrack
 * once, and is tracked once.
 */
#include <dlfcn.h>

#include "cuda_test_util.h"
#include "fake_cuda.h"

int interposer_shim_alloc_calls(void);
int interposer_shim_get_proc_calls(void);
int interposer_shim_reentries(void);
void *interposer_shim_next(const char *name);

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);

static uint64_t objects_created(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.created;
}

/* One allocation through `alloc`: it passes the shim once, is tracked
 * once, and its free leaves nothing behind. */
static void allocate_once(alloc_fn alloc, int shim_calls_expected)
{
    int shim_calls = interposer_shim_alloc_calls();
    uint64_t created = objects_created(), misuse = cuda_misuse_count();
    CUdeviceptr memory = 0;
    CHECK_EQ_INT(alloc(&memory, 64), CUDA_SUCCESS);
    CHECK_EQ_INT(interposer_shim_alloc_calls() - shim_calls, shim_calls_expected);
    CHECK_EQ_INT(objects_created() - created, 1);
    CHECK_EQ_INT(cuda_refs("CUdeviceptr", memory), 1);
    CHECK_EQ_INT(cuMemFree(memory), CUDA_SUCCESS);
    CHECK(!cuda_live("CUdeviceptr", memory, NULL));
    CHECK_EQ_INT(cuda_misuse_count(), misuse);
}

int main(void)
{
    CUcontext context = NULL;
    CHECK_EQ_INT(cuInit(0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxCreate(&context, NULL, 0, 0), CUDA_SUCCESS);

    /* The shim's RTLD_NEXT is the driver, as without livetrack. */
    CHECK_EQ_INT(strcmp(cuda_module_of(interposer_shim_next("cuMemAlloc_v2")), "libcuda.so.1"), 0);
    CHECK_EQ_INT(strcmp(cuda_module_of(interposer_shim_next("cuGetProcAddress_v2")), "libcuda.so.1"), 0);

    /* The exported function, called by name and looked up: livetrack's
     * export heads the chain. */
    allocate_once(cuMemAlloc_v2, 1);
    alloc_fn looked_up = (alloc_fn)dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
    CHECK_EQ_INT(strcmp(cuda_module_of((void *)looked_up), "liblivetrack_cuda.so"), 0);
    if (looked_up)
        allocate_once(looked_up, 1);

    /* cuGetProcAddress through the shim: it passes the shim once, and
     * what it hands out is still livetrack's wrapper (of the driver's
     * function, which the shim does not wrap). */
    void *function = NULL;
    int get_proc_calls = interposer_shim_get_proc_calls();
    CHECK_EQ_INT(cuGetProcAddress("cuMemAlloc", &function, 12000, CU_GET_PROC_ADDRESS_DEFAULT, NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(interposer_shim_get_proc_calls() - get_proc_calls, 1);
    CHECK_EQ_INT(strcmp(cuda_module_of(function), "liblivetrack_cuda.so"), 0);
    if (function)
        allocate_once((alloc_fn)function, 0);

    /* The CUDA runtime's path: dlopen the driver, look cuGetProcAddress up
     * in it, fetch the rest through it. The lookup in the driver gets
     * livetrack's wrapper although the chain's next is the shim, so the
     * runtime's calls are tracked (and pass the shim). */
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CHECK(driver != NULL);
    typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    get_proc_fn runtime_get_proc = driver ? (get_proc_fn)dlsym(driver, "cuGetProcAddress_v2") : NULL;
    CHECK(runtime_get_proc && !strcmp(cuda_module_of((void *)runtime_get_proc), "liblivetrack_cuda.so"));
    if (runtime_get_proc) {
        function = NULL;
        get_proc_calls = interposer_shim_get_proc_calls();
        CHECK_EQ_INT(runtime_get_proc("cuMemAlloc", &function, 12000, CU_GET_PROC_ADDRESS_DEFAULT, NULL),
                     CUDA_SUCCESS);
        CHECK_EQ_INT(interposer_shim_get_proc_calls() - get_proc_calls, 1);
        CHECK_EQ_INT(strcmp(cuda_module_of(function), "liblivetrack_cuda.so"), 0);
        if (function)
            allocate_once((alloc_fn)function, 0);
    }
    if (driver)
        dlclose(driver);

    CHECK_EQ_INT(interposer_shim_reentries(), 0);
    CHECK_EQ_INT(cuCtxDestroy(context), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_live_count(), 0);
    CHECK_EQ_INT(fake_cuda_live_objects(), 0);
    return check_summary("cuda_interposer_chain");
}
