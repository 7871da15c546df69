/*
 * How liblivetrack_ze.so attaches, once LD_PRELOAD brought it in.
 *
 * The loader's tracing layer sees every call the program makes. Loader
 * 1.8 loads that layer only when ZE_ENABLE_TRACING_LAYER=1 is set at the
 * first zeInit, and zelTracerCreate fails before zeInit, so tracking
 * starts inside a zeInit with the variable set (unless the user set it
 * either way), and the tracer is made right after it.
 *
 * Which zeInit depends on how the program reaches the loader:
 *   - linked with -lze_loader (the main program names libze_loader in
 *     DT_NEEDED, and not the SYCL runtime, which starts the loader on its
 *     own): the program's own first zeInit, which this library
 *     interposes. The loader starts when the program says, with its
 *     flags and with whatever it put into its environment before
 *     (ZE_AFFINITY_MASK, ZE_ENABLE_VALIDATION_LAYER), and calls made
 *     before it fail as they would without livetrack;
 *   - otherwise (it dlopens the loader and looks zeInit up there, past
 *     any interposition, or it may never use Level Zero): a zeInit(0) of
 *     our own from the constructor, before main. The program's own zeInit
 *     later gets the driver's answer as before.
 *
 * Without a driver or a tracing layer, one line says so and the program
 * runs untouched.
 */
#include <dlfcn.h>
#include <link.h>
#include <level_zero/layers/zel_tracing_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ze_front_end.h"

/* zelTracerCreate wants non-NULL user data; the callbacks do not use it. */
static int tracer_user_data;

typedef ze_result_t(ZE_APICALL *ze_init_fn)(ze_init_flags_t flags);
static ze_init_fn loader_init; /* the loader's zeInit, past our own */
/* Tracking starts once, in whichever zeInit comes first. */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int start_tried;
static int start_at_programs_init; /* the program links the loader: wait for its zeInit */
/* This thread is starting tracking: a zeInit the loader or a layer makes
 * meanwhile reaches ours, and must go straight through (the lock is held). */
static _Thread_local int starting;

static void make_tracer(int we_set_it);

/* The loader's zeInit with the tracing layer asked for; then the tracer.
 * Called once, under start_lock. */
static ze_result_t start_tracking(ze_init_flags_t flags)
{
    start_tried = 1;
    if (!loader_init) {
        ltze_note("the loader's zeInit was not found; no Level Zero objects are tracked");
        return ZE_RESULT_ERROR_UNINITIALIZED;
    }
    /* Set only for the loader's start-up below: the program and its
     * children then see the environment they were given. */
    int we_set_it = getenv("ZE_ENABLE_TRACING_LAYER") == NULL;
    if (we_set_it)
        setenv("ZE_ENABLE_TRACING_LAYER", "1", 1);
    starting = 1;
    ze_result_t result = loader_init(flags);
    if (we_set_it)
        unsetenv("ZE_ENABLE_TRACING_LAYER");
    if (result != ZE_RESULT_SUCCESS) {
        /* `livetrack run` arms every front end; it asks for silence when
         * the user did not name Level Zero, so OpenCL-only programs on a
         * machine without a Level Zero driver do not get this line. */
        if (!livetrack_quiet_absent_api())
            ltze_note("zeInit failed (0x%x): no driver, so no Level Zero objects are tracked", (unsigned)result);
        starting = 0;
        return result;
    }
    make_tracer(we_set_it);
    starting = 0;
    return result;
}

/* The program's zeInit, when it links the loader: its first call starts
 * tracking; the others (and all of them once the constructor started it)
 * go to the loader as they are. */
static ze_result_t ZE_APICALL programs_init(ze_init_flags_t flags)
{
    if (start_at_programs_init && !starting) {
        pthread_mutex_lock(&start_lock);
        if (!start_tried) {
            ze_result_t result = start_tracking(flags);
            pthread_mutex_unlock(&start_lock);
            return result;
        }
        pthread_mutex_unlock(&start_lock);
    }
    return loader_init ? loader_init(flags) : ZE_RESULT_ERROR_UNINITIALIZED;
}
/* Exported under the loader's name; compared by its local name below,
 * whose address no other library's zeInit can stand in for. */
__attribute__((visibility("default"), alias("programs_init"))) ze_result_t ZE_APICALL zeInit(ze_init_flags_t flags);

/* What the main program names among the libraries it needs: the Level
 * Zero loader (its zeInit calls then reach ours), and the SYCL runtime,
 * which starts the loader itself, past ours, from a handle it dlopens; a
 * program using both may never call zeInit itself. dl_iterate_phdr visits
 * the main program first. */
enum { NEEDS_LOADER = 1, NEEDS_SYCL = 2 };

static int main_program_needs(struct dl_phdr_info *info, size_t size, void *answer)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        const ElfW(Dyn) *dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        uintptr_t strings = 0;
        for (const ElfW(Dyn) *entry = dynamic; entry->d_tag != DT_NULL; entry++)
            if (entry->d_tag == DT_STRTAB)
                strings = entry->d_un.d_ptr;
        /* glibc relocates the in-memory DT_STRTAB where the dynamic
         * section is writable (x86-64, AArch64); an unrelocated one is
         * below the load address. */
        if (strings && strings < info->dlpi_addr)
            strings += info->dlpi_addr;
        for (const ElfW(Dyn) *entry = dynamic; strings && entry->d_tag != DT_NULL; entry++) {
            const char *name = entry->d_tag == DT_NEEDED ? (const char *)(strings + entry->d_un.d_val) : "";
            if (!strncmp(name, "libze_loader.so", 15))
                *(int *)answer |= NEEDS_LOADER;
            if (!strncmp(name, "libsycl.so", 10))
                *(int *)answer |= NEEDS_SYCL;
        }
    }
    return 1; /* the main program only */
}

__attribute__((constructor)) static void ltze_attach(void)
{
    ltze_declare_types();
    /* Creation call sites must start at the program's frame: our own
     * frames and the loader's are not the program's, whatever the files
     * are called on this system. */
    livetrack_add_internal_module((const void *)ltze_attach);
    loader_init = (ze_init_fn)dlsym(RTLD_NEXT, "zeInit");
    if (loader_init)
        livetrack_add_internal_module((const void *)loader_init);

    int needs = 0;
    dl_iterate_phdr(main_program_needs, &needs);
    /* Ours is the zeInit the program's calls reach only when this library
     * came in before the loader (LD_PRELOAD), not when it was dlopened. */
    int interposed = dlsym(RTLD_DEFAULT, "zeInit") == (void *)programs_init;
    pthread_mutex_lock(&start_lock);
    start_at_programs_init = needs == NEEDS_LOADER && interposed;
    if (!start_at_programs_init && !start_tried)
        start_tracking(0);
    pthread_mutex_unlock(&start_lock);
}

static void make_tracer(int we_set_it)
{
    ze_result_t result;
    zel_tracer_desc_t desc = {.stype = ZEL_STRUCTURE_TYPE_TRACER_DESC, .pNext = NULL, .pUserData = &tracer_user_data};
    zel_tracer_handle_t tracer = NULL;
    result = zelTracerCreate(&desc, &tracer);
    if (result != ZE_RESULT_SUCCESS) {
        const char *setting = we_set_it ? "1 (set by livetrack)" : getenv("ZE_ENABLE_TRACING_LAYER");
        ltze_note("the loader's tracing layer is not available (zelTracerCreate: 0x%x, ZE_ENABLE_TRACING_LAYER=%s); "
                  "no Level Zero objects are tracked",
                  (unsigned)result, setting ? setting : "");
        return;
    }
    /* All or nothing: seeing destroys without their creates would report
     * misuse that is not there. */
    const char *failed = ltze_register_callbacks(tracer);
    if (failed || (result = zelTracerSetEnabled(tracer, 1)) != ZE_RESULT_SUCCESS) {
        ltze_note("%s failed; no Level Zero objects are tracked", failed ? failed : "zelTracerSetEnabled");
        zelTracerDestroy(tracer);
    }
}
