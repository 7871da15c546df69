/*
 * Interposition of the paths the CUDA runtime takes to the driver:
 * cuGetProcAddress (both ABIs) and dlsym on a dlopened libcuda.so.1.
 * Runs with LD_PRELOAD=liblivetrack_cuda.so on the fake driver.
 *
 *  - cuGetProcAddress hands out livetrack's wrapper for tracked functions,
 *    chosen by name, version and per-thread-stream flag, as the driver
 *    chooses the ABI; untracked and too-old ABIs come out as the driver
 *    returned them (with one line saying so); the driver's answers
 *    (status, errors) are unchanged.
 *  - Calls through those wrappers are the runtime's: its modules and its
 *    primary context reference are not the program's.
 *  - The runtime's modules go with their context: a module the driver
 *    later hands the program at the same address is the program's.
 *  - dlsym hands out the wrappers for tracked names only, and keeps
 *    RTLD_NEXT relative to its real caller (two probe libraries).
 *  - A tracked name the loaded driver lacks is not found, as without
 *    livetrack: programs probe for newer functions that way.
 */
#include <dlfcn.h>

#include "cuda_test_util.h"
#include "fake_cuda.h"

int rtld_next_probe(void);
int rtld_next_probe_after_first(void);

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*device_fn)(CUdevice);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*module_load_fn)(CUmodule *, const void *);
typedef CUresult (*module_unload_fn)(CUmodule);
typedef CUresult (*library_load_fn)(CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *,
                                   void **, unsigned);
typedef CUresult (*library_unload_fn)(CUlibrary);
typedef CUresult (*instantiate_fn)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*instantiate_v2_fn)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
typedef CUresult (*get_proc_v1_fn)(const char *, void **, int, cuuint64_t);

static int is_wrapper(const void *function) { return !strcmp(cuda_module_of(function), "liblivetrack_cuda.so"); }
static int is_driver(const void *function) { return !strcmp(cuda_module_of(function), "libcuda.so.1"); }

static void *proc(const char *name, int version, cuuint64_t flags)
{
    void *function = NULL;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult result = cuGetProcAddress(name, &function, version, flags, &status);
    CHECK_EQ_INT(result, CUDA_SUCCESS);
    CHECK_EQ_INT(status, function ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    return function;
}

static void proc_address_choices(void)
{
    alloc_fn alloc = (alloc_fn)proc("cuMemAlloc", 12000, CU_GET_PROC_ADDRESS_DEFAULT);
    free_fn release = (free_fn)proc("cuMemFree", 12000, CU_GET_PROC_ADDRESS_DEFAULT);
    CHECK(is_wrapper((void *)alloc) && is_wrapper((void *)release));
    /* Not the exported wrapper: this one marks the runtime's calls. */
    CHECK((void *)alloc != (void *)cuMemAlloc_v2);
    CUdeviceptr memory = 0;
    CHECK_EQ_INT(alloc(&memory, 123), CUDA_SUCCESS);
    livetrack_object object;
    CHECK(cuda_live("CUdeviceptr", memory, &object) && object.bytes == 123);
    CHECK_EQ_INT(release(memory), CUDA_SUCCESS);
    CHECK(!cuda_live("CUdeviceptr", memory, NULL));

    /* Per-thread default stream: the _ptsz twin, wrapped apart. */
    alloc_async_fn legacy = (alloc_async_fn)proc("cuMemAllocAsync", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
    alloc_async_fn per_thread =
        (alloc_async_fn)proc("cuMemAllocAsync", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    CHECK(is_wrapper((void *)legacy) && is_wrapper((void *)per_thread) && (void *)legacy != (void *)per_thread);
    CHECK_EQ_INT(per_thread(&memory, 77, NULL), CUDA_SUCCESS);
    CHECK(cuda_live("device_async", memory, &object) && object.bytes == 77);
    /* No per-thread twin: the legacy function, as the driver answers. */
    CHECK(proc("cuMemAlloc", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) == (void *)alloc);
    free_fn free_again = (free_fn)proc("cuMemFree", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    CHECK((void *)free_again == (void *)release);
    CHECK_EQ_INT(free_again(memory), CUDA_SUCCESS);

    /* The version picks the ABI. */
    void *release_v1 = proc("cuDevicePrimaryCtxRelease", 10000, 0);
    void *release_v2 = proc("cuDevicePrimaryCtxRelease", 11000, 0);
    CHECK(is_wrapper(release_v1) && is_wrapper(release_v2) && release_v1 != release_v2);
    instantiate_fn instantiate = (instantiate_fn)proc("cuGraphInstantiate", 12000, 0);
    instantiate_v2_fn instantiate_v2 = (instantiate_v2_fn)proc("cuGraphInstantiate", 11000, 0);
    CHECK(is_wrapper((void *)instantiate) && is_wrapper((void *)instantiate_v2));
    CHECK((void *)instantiate == proc("cuGraphInstantiateWithFlags", 12000, 0));
    CUgraph graph = NULL;
    CUgraphExec exec = NULL, exec_v2 = NULL;
    char log[16];
    CHECK_EQ_INT(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(instantiate(&exec, graph, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(instantiate_v2(&exec_v2, graph, NULL, log, sizeof log), CUDA_SUCCESS);
    CHECK(cuda_live("CUgraphExec", CUDA_TEST_HANDLE(exec), NULL));
    CHECK(cuda_live("CUgraphExec", CUDA_TEST_HANDLE(exec_v2), NULL));
    CHECK_EQ_INT(cuGraphExecDestroy(exec), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphExecDestroy(exec_v2), CUDA_SUCCESS);
    CHECK_EQ_INT(cuGraphDestroy(graph), CUDA_SUCCESS);

    /* cuGetProcAddress itself: ours, so later lookups stay wrapped. */
    void *self_v2 = proc("cuGetProcAddress", 12000, 0), *self_v1 = proc("cuGetProcAddress", 11030, 0);
    CHECK(self_v2 == (void *)cuGetProcAddress_v2 && is_wrapper(self_v2));
    CHECK(is_wrapper(self_v1) && self_v1 != self_v2);
    void *through_v1 = NULL;
    CHECK_EQ_INT(((get_proc_v1_fn)self_v1)("cuMemFree", &through_v1, 12000, 0), CUDA_SUCCESS);
    CHECK(through_v1 == (void *)release);

    /* CUDA 12.1's multicast objects are physical memory handles: wrapped. */
    CHECK(is_wrapper(proc("cuMulticastCreate", 12010, 0)));

    /* Untracked: the driver's own function. Unknown: NULL, as the driver says. */
    CHECK(is_driver(proc("cuCtxGetCurrent", 12000, 0)));
    CHECK(proc("cuNoSuchFunction", 12000, 0) == NULL);
    void *none = (void *)1;
    CHECK_EQ_INT(cuGetProcAddress("cuMemAlloc", &none, 99000, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK(none == NULL);

    /* Too old an ABI, or a version newer than livetrack's headers whose
     * function livetrack does not know: unwrapped, said once each. */
    cuda_capture capture;
    cuda_capture_begin(&capture);
    void *ancient = proc("cuMemAlloc", 2000, 0);
    void *newer = proc("cuMemAlloc", 13010, 0);
    void *ancient_again = proc("cuMemAlloc", 2000, 0);
    /* Newer than the headers, but the very function livetrack knows: wrapped. */
    void *newer_known = proc("cuMemFree", 13010, 0);
    char *text = cuda_capture_end(&capture);
    CHECK(is_driver(ancient) && ancient == ancient_again);
    CHECK(is_driver(newer) && newer != (void *)alloc);
    CHECK(newer_known == (void *)release);
    CHECK_EQ_INT(cuda_count(text, "is handed out unwrapped"), 2);
    CHECK_EQ_INT(cuda_count(text, "its ABI is older than the ones livetrack tracks"), 1);
    CHECK_EQ_INT(cuda_count(text, "newer than the CUDA headers"), 1);
    free(text);
}

/* What the runtime makes for itself, through the functions it fetched. */
static void runtime_origin(void)
{
    static const char image[] = "kernels";
    module_load_fn load = (module_load_fn)proc("cuModuleLoadData", 12000, 0);
    module_unload_fn unload = (module_unload_fn)proc("cuModuleUnload", 12000, 0);
    CUmodule kernels = NULL, programs_own = NULL;
    CHECK_EQ_INT(load(&kernels, image), CUDA_SUCCESS);
    CHECK(!cuda_live("CUmodule", CUDA_TEST_HANDLE(kernels), NULL));
    CHECK_EQ_INT(cuModuleLoadData(&programs_own, image), CUDA_SUCCESS);
    CHECK(cuda_live("CUmodule", CUDA_TEST_HANDLE(programs_own), NULL));
    uint64_t misuse = cuda_misuse_count();
    CHECK_EQ_INT(unload(kernels), CUDA_SUCCESS); /* known, so not misuse */
    CHECK_EQ_INT(cuda_misuse_count(), misuse);
    CHECK_EQ_INT(cuModuleUnload(programs_own), CUDA_SUCCESS);

    /* The runtime's primary context reference is not the program's. */
    retain_fn retain = (retain_fn)proc("cuDevicePrimaryCtxRetain", 12000, 0);
    device_fn release = (device_fn)proc("cuDevicePrimaryCtxRelease", 12000, 0);
    CUcontext primary = NULL, popped = NULL;
    CHECK_EQ_INT(retain(&primary, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_refs("CUcontext", CUDA_TEST_HANDLE(primary)), 0);
    CHECK_EQ_INT(cuCtxPushCurrent(primary), CUDA_SUCCESS);
    CUdeviceptr memory = 0;
    alloc_fn alloc = (alloc_fn)proc("cuMemAlloc", 12000, 0);
    CHECK_EQ_INT(alloc(&memory, 10), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    CHECK(cuda_live("CUdeviceptr", memory, NULL));
    /* Its release is the last: the context goes, and what it owned. */
    CHECK_EQ_INT(release(0), CUDA_SUCCESS);
    CHECK(!cuda_live("CUdeviceptr", memory, NULL));
    CHECK_EQ_INT(cuda_misuse_count(), misuse + 2);
}

/* Interposition alone cannot tell a library the program loads with
 * cudaLibraryLoad* from one the runtime loads for the program's kernels:
 * both come through the runtime's cuGetProcAddress pointer, with no cuda*
 * call named (only CUPTI names it). Both are taken for the runtime's
 * (docs/cuda.md): not recorded, and their unload is no misuse. A library
 * loaded through the driver's export is the program's. */
static void runtime_libraries(void)
{
    static const char image[] = "kernels";
    library_load_fn load = (library_load_fn)proc("cuLibraryLoadData", 12000, 0);
    library_unload_fn unload = (library_unload_fn)proc("cuLibraryUnload", 12000, 0);
    CHECK(is_wrapper((void *)load) && is_wrapper((void *)unload));
    CUlibrary through_runtime = NULL, programs_own = NULL;
    uint64_t misuse = cuda_misuse_count();
    CHECK_EQ_INT(load(&through_runtime, image, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
    CHECK(!cuda_live("CUlibrary", CUDA_TEST_HANDLE(through_runtime), NULL));
    CHECK_EQ_INT(cuLibraryLoadData(&programs_own, image, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_refs("CUlibrary", CUDA_TEST_HANDLE(programs_own)), 1);
    CHECK_EQ_INT(unload(through_runtime), CUDA_SUCCESS);
    CHECK_EQ_INT(cuLibraryUnload(programs_own), CUDA_SUCCESS);
    CHECK(!cuda_live("CUlibrary", CUDA_TEST_HANDLE(programs_own), NULL));
    CHECK_EQ_INT(cuda_misuse_count(), misuse);
}

/* The runtime's modules go with their context (it never unloads those).
 * When the driver then hands the program a module at the same address,
 * that module is the program's: tracked, and ended by its unload. A
 * context destroy the driver refuses leaves the runtime's modules known. */
static void runtime_modules_end_with_context(void)
{
    static const char image[] = "kernels";
    module_load_fn load = (module_load_fn)proc("cuModuleLoadData", 12000, 0);
    module_unload_fn unload = (module_unload_fn)proc("cuModuleUnload", 12000, 0);
    CUcontext previous = NULL, doomed = NULL, next = NULL;
    CHECK_EQ_INT(cuCtxGetCurrent(&previous), CUDA_SUCCESS);
    fake_cuda_recycle_modules(1);
    uint64_t misuse = cuda_misuse_count();
    CHECK_EQ_INT(cuCtxCreate(&doomed, NULL, 0, 0), CUDA_SUCCESS);
    CUmodule kernels = NULL, more_kernels = NULL;
    CHECK_EQ_INT(load(&kernels, image), CUDA_SUCCESS);
    fake_cuda_fail_next("cuCtxDestroy_v2", CUDA_ERROR_UNKNOWN);
    CHECK_EQ_INT(cuCtxDestroy(doomed), CUDA_ERROR_UNKNOWN);
    CHECK_EQ_INT(unload(kernels), CUDA_SUCCESS); /* still known after the refused destroy */
    CHECK_EQ_INT(load(&more_kernels, image), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDestroy(doomed), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_misuse_count(), misuse); /* the runtime's module is no leak of the program */

    CHECK_EQ_INT(cuCtxCreate(&next, NULL, 0, 0), CUDA_SUCCESS);
    CUmodule programs_own = NULL;
    CHECK_EQ_INT(cuModuleLoadData(&programs_own, image), CUDA_SUCCESS);
    CHECK(programs_own == more_kernels); /* the driver gave the dead module's handle out again */
    CHECK_EQ_INT(cuda_refs("CUmodule", CUDA_TEST_HANDLE(programs_own)), 1);
    CHECK_EQ_INT(cuModuleUnload(programs_own), CUDA_SUCCESS);
    CHECK(!cuda_live("CUmodule", CUDA_TEST_HANDLE(programs_own), NULL));
    CHECK_EQ_INT(cuCtxDestroy(next), CUDA_SUCCESS); /* with nothing the program left in it */
    CHECK_EQ_INT(cuda_misuse_count(), misuse);
    fake_cuda_recycle_modules(0);
    CHECK_EQ_INT(cuCtxSetCurrent(previous), CUDA_SUCCESS);
}

/* The driver still exports the older ABIs of some tracked functions under
 * the plain names (cuStreamDestroy, cuEventDestroy, cuCtxCreate and
 * cuCtxDestroy of CUDA 2.0, cuMemHostRegister of 4.0, cuLinkCreate of
 * 5.5), with the arguments of their successors: a program that looks them
 * up (dlsym, ctypes, an old cuGetProcAddress version) gets them. They
 * make and end the same objects, so they are tracked as well. */
typedef CUresult (*stream_destroy_fn)(CUstream);
typedef CUresult (*event_destroy_fn)(CUevent);
typedef CUresult (*context_create_fn)(CUcontext *, unsigned int, CUdevice);
typedef CUresult (*context_destroy_fn)(CUcontext);
typedef CUresult (*host_register_fn)(void *, size_t, unsigned int);
typedef CUresult (*link_create_fn)(unsigned int, CUjit_option *, void **, CUlinkState *);

static void older_abis_of_the_same_arguments(void)
{
    stream_destroy_fn stream_destroy = (stream_destroy_fn)dlsym(RTLD_DEFAULT, "cuStreamDestroy");
    event_destroy_fn event_destroy = (event_destroy_fn)dlsym(RTLD_DEFAULT, "cuEventDestroy");
    context_create_fn context_create = (context_create_fn)dlsym(RTLD_DEFAULT, "cuCtxCreate");
    context_destroy_fn context_destroy = (context_destroy_fn)dlsym(RTLD_DEFAULT, "cuCtxDestroy");
    host_register_fn host_register = (host_register_fn)proc("cuMemHostRegister", 4000, 0);
    link_create_fn link_create = (link_create_fn)proc("cuLinkCreate", 6000, 0);
    CHECK(stream_destroy && event_destroy && context_create && context_destroy && host_register && link_create);
    if (!stream_destroy || !event_destroy || !context_create || !context_destroy || !host_register || !link_create)
        return;
    CHECK(is_wrapper((void *)stream_destroy) && is_wrapper((void *)event_destroy));
    CHECK(is_wrapper((void *)context_create) && is_wrapper((void *)context_destroy));
    CHECK(is_wrapper((void *)host_register) && is_wrapper((void *)link_create));
    /* Not the newer ABI's wrapper: each calls its own driver function. */
    CHECK(proc("cuStreamDestroy", 2000, 0) != proc("cuStreamDestroy", 4000, 0));
    CHECK(host_register != (host_register_fn)proc("cuMemHostRegister", 6050, 0));

    uint64_t misuse = cuda_misuse_count();
    CUcontext previous = NULL, made = NULL;
    CHECK_EQ_INT(cuCtxGetCurrent(&previous), CUDA_SUCCESS);
    CHECK_EQ_INT(context_create(&made, 0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_refs("CUcontext", CUDA_TEST_HANDLE(made)), 1);
    CUstream stream = NULL;
    CUevent event = NULL;
    CHECK_EQ_INT(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuEventCreate(&event, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(stream_destroy(stream), CUDA_SUCCESS);
    CHECK_EQ_INT(event_destroy(event), CUDA_SUCCESS);
    CHECK(!cuda_live("CUstream", CUDA_TEST_HANDLE(stream), NULL));
    CHECK(!cuda_live("CUevent", CUDA_TEST_HANDLE(event), NULL));

    static char buffer[8192];
    CHECK_EQ_INT(host_register(buffer, sizeof buffer, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_refs("host_registered", CUDA_TEST_HANDLE(buffer)), 1);
    CHECK_EQ_INT(cuMemHostUnregister(buffer), CUDA_SUCCESS);
    CUlinkState link = NULL;
    CHECK_EQ_INT(link_create(0, NULL, NULL, &link), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_refs("CUlinkState", CUDA_TEST_HANDLE(link)), 1);
    CHECK_EQ_INT(cuLinkDestroy(link), CUDA_SUCCESS);

    /* Left in the context on purpose: its end, by the old cuCtxDestroy,
     * drops and reports it (a summary and the event itself). */
    CUevent forgotten = NULL;
    CHECK_EQ_INT(cuEventCreate(&forgotten, 0), CUDA_SUCCESS);
    cuda_capture capture;
    cuda_capture_begin(&capture);
    CHECK_EQ_INT(context_destroy(made), CUDA_SUCCESS);
    free(cuda_capture_end(&capture));
    CHECK(!cuda_live("CUcontext", CUDA_TEST_HANDLE(made), NULL));
    CHECK(!cuda_live("CUevent", CUDA_TEST_HANDLE(forgotten), NULL));
    CHECK_EQ_INT(cuda_misuse_count(), misuse + 2);
    CHECK_EQ_INT(cuCtxSetCurrent(previous), CUDA_SUCCESS);
}

/* Names livetrack wraps that the fake driver does not define. A program
 * probes for a newer function with dlsym and takes the new path when it
 * is found; livetrack's wrapper, with no driver function to call, would
 * answer it with CUDA_ERROR_NOT_FOUND. */
static void probes_for_functions_the_driver_lacks(void)
{
    static const char *const absent[] = {"cuCtxCreate_v3", "cuLibraryLoadFromFile", "cuModuleLoadDataEx",
                                         "cuGraphAddNode_v2", "cuMemImportFromShareableHandle"};
    void *main_program = dlopen(NULL, RTLD_NOW);
    CHECK(main_program != NULL);
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++) {
        void *handles[] = {RTLD_DEFAULT, main_program};
        const char *handle_names[] = {"RTLD_DEFAULT", "dlopen(NULL)"};
        for (int h = 0; h < 2; h++) {
            dlerror();
            void *found = dlsym(handles[h], absent[i]);
            if (found)
                fprintf(stderr, "dlsym(%s, %s) found it in %s; the driver has none\n", handle_names[h], absent[i],
                        cuda_module_of(found));
            CHECK(found == NULL);
            CHECK(dlerror() != NULL); /* and says why, as glibc does */
        }
    }
    /* A name the driver has is still the wrapper, through either handle. */
    CHECK(dlsym(RTLD_DEFAULT, "cuMemAlloc_v2") == (void *)cuMemAlloc_v2);
    CHECK(main_program && dlsym(main_program, "cuMemAlloc_v2") == (void *)cuMemAlloc_v2);
    if (main_program)
        dlclose(main_program);
}

static void dlsym_paths(void)
{
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK(driver != NULL);
    if (!driver)
        return;
    /* Tracked names: the exported wrappers, the program's own functions. */
    void *alloc = dlsym(driver, "cuMemAlloc_v2");
    CHECK(alloc == (void *)cuMemAlloc_v2 && is_wrapper(alloc));
    CHECK(dlsym(driver, "cuGetProcAddress_v2") == (void *)cuGetProcAddress_v2);
    void *v1 = dlsym(driver, "cuGetProcAddress");
    CHECK(is_wrapper(v1));
    CHECK(dlsym(RTLD_DEFAULT, "cuMemFree_v2") == (void *)cuMemFree_v2);
    CHECK(dlsym(RTLD_NEXT, "cuMemFree_v2") == (void *)cuMemFree_v2);
    /* Other names: what glibc answers. */
    CHECK(is_driver(dlsym(driver, "cuCtxGetCurrent")));
    CHECK(is_driver(dlsym(driver, "cuMemAlloc"))); /* the CUDA 2 ABI, not tracked */
    dlerror();
    CHECK(dlsym(driver, "cuNoSuchFunction") == NULL);
    CHECK(dlerror() != NULL);
    CHECK(dlsym(driver, "fake_cuda_live_objects") == (void *)fake_cuda_live_objects);

    /* Through dlsym and cuGetProcAddress, as libcudart goes. */
    CUresult (*get_proc)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
        (CUresult(*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))dlsym(
            driver, "cuGetProcAddress_v2");
    void *fetched = NULL;
    CHECK(get_proc && get_proc("cuEventCreate", &fetched, 13000, 0, NULL) == CUDA_SUCCESS && is_wrapper(fetched));
    CUevent event = NULL;
    CHECK_EQ_INT(((CUresult(*)(CUevent *, unsigned))fetched)(&event, 0), CUDA_SUCCESS);
    CHECK(cuda_live("CUevent", CUDA_TEST_HANDLE(event), NULL));
    CHECK_EQ_INT(cuEventDestroy(event), CUDA_SUCCESS);
    dlclose(driver);

    /* RTLD_NEXT is relative to the caller, not to the interposer. */
    CHECK_EQ_INT(rtld_next_probe_after_first(), 2);
    int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "rtld_next_probe");
    CHECK(next && next() == 1);
    /* A library that is not the driver and not in the chain to it (a
     * shim or stub dlopened on its own): looked up by its handle, its
     * cuGetProcAddress is its own, not livetrack's wrapper of the driver's. */
    void *other = dlopen(CUDA_OTHER_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    CHECK(other != NULL);
    if (other) {
        void *get_proc_other = dlsym(other, "cuGetProcAddress_v2");
        CHECK(get_proc_other && !strcmp(cuda_module_of(get_proc_other), "libcuda_interposer_shim.so"));
        if (!get_proc_other || strcmp(cuda_module_of(get_proc_other), "libcuda_interposer_shim.so"))
            fprintf(stderr, "dlsym(other library, cuGetProcAddress_v2) is in %s\n", cuda_module_of(get_proc_other));
        dlclose(other);
    }
}

int main(void)
{
    CUcontext context = NULL;
    CHECK_EQ_INT(cuInit(0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxCreate(&context, NULL, 0, 0), CUDA_SUCCESS);
    proc_address_choices();
    runtime_origin();
    runtime_modules_end_with_context();
    runtime_libraries();
    older_abis_of_the_same_arguments();
    dlsym_paths();
    probes_for_functions_the_driver_lacks();
    CHECK_EQ_INT(cuCtxDestroy(context), CUDA_SUCCESS);
    CHECK_EQ_INT(cuda_live_count(), 0);
    CHECK_EQ_INT(fake_cuda_live_objects(), 0);
    return check_summary("cuda_proc_address");
}
