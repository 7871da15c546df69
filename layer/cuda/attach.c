/*
 * How liblivetrack_cuda.so attaches, and which mode tracks.
 *
 *  - CUPTI: CUDA_INJECTION64_PATH names this library; the driver loads it
 *    at cuInit and calls InitializeInjection (cupti_attach.c).
 *  - Interposition: LD_PRELOAD brings it in before the driver; its cu*
 *    exports, cuGetProcAddress and dlsym then stand in front of the
 *    driver's (interpose.c, proc_address.c, dlsym_hook.c).
 *
 * Exactly one mode tracks, or objects would be counted twice. With both
 * set, interposition tracks from the start and CUPTI takes over when it
 * can subscribe (InitializeInjection runs inside the first cuInit, before
 * any object exists); the wrappers then only forward. When CUPTI cannot
 * subscribe (not installed, or another tool holds the one subscription),
 * interposition goes on tracking, and one line says so.
 */
#include <dlfcn.h>
#include <stdatomic.h>

#include "cuda_front_end.h"

typedef enum attach_mode { MODE_NONE, MODE_INTERPOSITION, MODE_CUPTI } attach_mode;

static atomic_int mode = MODE_NONE;
static int preloaded;

int ltcu_interposing(void) { return atomic_load_explicit(&mode, memory_order_relaxed) == MODE_INTERPOSITION; }

int ltcu_preloaded(void) { return preloaded; }

void ltcu_cupti_took_over(void) { atomic_store(&mode, MODE_CUPTI); }

__attribute__((constructor)) static void ltcu_attach(void)
{
    ltcu_declare_types();
    /* Call sites must start at the program's frame: ours are never its. */
    livetrack_add_internal_module((const void *)ltcu_attach);
    ltcu_driver_allocation_bytes = ltcu_allocation_bytes_from_driver;
    /* Our exports are the process's cu* functions exactly when LD_PRELOAD
     * put us ahead of the driver, not when the driver dlopened us. The
     * program's handle searches the global scope only (RTLD_DEFAULT would
     * also search ours, which holds our own exports). */
    void *program = dlopen(NULL, RTLD_LAZY);
    void *global = program ? ltcu_real_dlsym(program, "cuGetProcAddress_v2") : NULL;
    preloaded = global && global == ltcu_get_proc_address_wrapper("cuGetProcAddress_v2");
    if (program)
        dlclose(program);
    if (preloaded) {
        ltcu_driver_current_context = ltcu_current_context_from_driver;
        atomic_store(&mode, MODE_INTERPOSITION);
    }
}
