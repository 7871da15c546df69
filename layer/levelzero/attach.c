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
 *     own), with this library preloaded and a loader without
 *     zeInitDrivers (which a program could start it with instead): the
 *     first successful zeInit that reaches ours, the program's or a
 *     library constructor's. The loader starts when the program says,
 *     with its flags and with whatever it put into its environment before
 *     (ZE_AFFINITY_MASK, ZE_ENABLE_VALIDATION_LAYER), and calls made
 *     before it fail as they would without livetrack;
 *   - otherwise (it dlopens the loader and looks zeInit up there, past
 *     any interposition, or it may never use Level Zero): a zeInit(0) of
 *     our own from the constructor, before main. The program's own zeInit
 *     later gets the driver's answer as before.
 *
 * The variable is put into the environment only while the process has
 * one thread, and taken out after the loader read it if it still has one:
 * setenv and unsetenv race with other threads' getenv (glibc frees the
 * old array when a setenv grows one). A program already running threads
 * at its first zeInit is left alone, and told to set the variable itself
 * (livetrack run does).
 *
 * Without a driver or a tracing layer, one line says so and the program
 * runs untouched.
 */
#include <dlfcn.h>
#include <link.h>
#include <level_zero/layers/zel_tracing_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_front_end.h"

/* zelTracerCreate wants non-NULL user data; the callbacks do not use it. */
static int tracer_user_data;

typedef ze_result_t(ZE_APICALL *ze_init_fn)(ze_init_flags_t flags);
static ze_init_fn loader_init; /* the loader's zeInit, past our own */
/* Tracking starts once, in the first zeInit that succeeds; a failed one
 * (no driver yet, flags that match none) lets the next try again. */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int started;
static int failure_said;
/* This thread is starting tracking: a zeInit the loader or a layer makes
 * meanwhile reaches ours, and must go straight through (the lock is held). */
static _Thread_local int starting;

/* How ZE_ENABLE_TRACING_LAYER stood at the start: set by the user, set by
 * us for the loader to read, or left unset (other threads were running). */
typedef enum variable_state { VARIABLE_USERS, VARIABLE_SET_BY_US, VARIABLE_LEFT_UNSET } variable_state;

static void make_tracer(variable_state variable);

/* Whether the process has one thread: only then may the environment
 * change after start-up, since another thread's getenv could read what
 * setenv or unsetenv is rewriting (glibc marks them MT-unsafe). */
static int single_threaded(void)
{
    FILE *status = fopen("/proc/self/status", "re");
    char line[128];
    long threads = 0;
    while (status && fgets(line, sizeof line, status))
        if (sscanf(line, "Threads: %ld", &threads) == 1)
            break;
    if (status)
        fclose(status);
    return threads == 1;
}

/* Under start_lock, from the constructor or the first zeInit to reach
 * ours. Resolves the loader's zeInit on the way: a library's constructor
 * may call zeInit before ours has run. */
static void find_loader(void)
{
    if (!loader_init)
        loader_init = (ze_init_fn)dlsym(RTLD_NEXT, "zeInit");
}

/* The loader's zeInit with the tracing layer asked for; then the tracer.
 * Under start_lock, until it started once. */
static ze_result_t start_tracking(ze_init_flags_t flags)
{
    find_loader();
    if (!loader_init) {
        if (!failure_said++)
            ltze_note("the loader's zeInit was not found; no Level Zero objects are tracked");
        return ZE_RESULT_ERROR_UNINITIALIZED;
    }
    variable_state variable = VARIABLE_USERS;
    if (!getenv("ZE_ENABLE_TRACING_LAYER")) {
        variable = single_threaded() ? VARIABLE_SET_BY_US : VARIABLE_LEFT_UNSET;
        if (variable == VARIABLE_SET_BY_US)
            setenv("ZE_ENABLE_TRACING_LAYER", "1", 1);
    }
    starting = 1;
    ze_result_t result = loader_init(flags);
    /* Taken out once the loader read it, so the program and its children
     * see the environment they were given; left in if the loader's start
     * began threads of its own. */
    if (variable == VARIABLE_SET_BY_US) {
        if (single_threaded())
            unsetenv("ZE_ENABLE_TRACING_LAYER");
        else
            ltze_note("the driver started threads in zeInit, so ZE_ENABLE_TRACING_LAYER=1 stays in the environment "
                      "(unsetenv is unsafe beside other threads): child processes load the tracing layer too");
    }
    if (result == ZE_RESULT_SUCCESS) {
        started = 1;
        make_tracer(variable);
    } else if (!failure_said++ && !livetrack_quiet_absent_api()) {
        /* `livetrack run` arms every front end; it asks for silence when
         * the user did not name Level Zero, so OpenCL-only programs on a
         * machine without a Level Zero driver do not get this line. */
        ltze_note("zeInit failed (0x%x): no driver, so no Level Zero objects are tracked", (unsigned)result);
    }
    starting = 0;
    return result;
}

/* zeInit, for every caller the dynamic linker sends here: the first that
 * succeeds starts tracking (when the constructor did not: the program
 * links the loader, or a library's constructor came first); the others go
 * to the loader as they are. */
static ze_result_t ZE_APICALL programs_init(ze_init_flags_t flags)
{
    if (!starting) {
        pthread_mutex_lock(&start_lock);
        if (!started) {
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
    pthread_mutex_lock(&start_lock);
    find_loader();
    if (loader_init)
        livetrack_add_internal_module((const void *)loader_init);
    ltze_find_loader_destroys();

    int needs = 0;
    dl_iterate_phdr(main_program_needs, &needs);
    /* Ours is the zeInit the program's calls reach only when this library
     * came in before the loader (LD_PRELOAD), not when it was dlopened. A
     * loader with zeInitDrivers (spec 1.10, which deprecates zeInit) may be
     * started by that instead, past ours: start here as for any program. */
    int interposed = dlsym(RTLD_DEFAULT, "zeInit") == (void *)programs_init;
    int wait_for_program = needs == NEEDS_LOADER && interposed && !dlsym(RTLD_NEXT, "zeInitDrivers");
    if (!started && !wait_for_program)
        start_tracking(0);
    pthread_mutex_unlock(&start_lock);
}

static void make_tracer(variable_state variable)
{
    ze_result_t result;
    zel_tracer_desc_t desc = {.stype = ZEL_STRUCTURE_TYPE_TRACER_DESC, .pNext = NULL, .pUserData = &tracer_user_data};
    zel_tracer_handle_t tracer = NULL;
    result = zelTracerCreate(&desc, &tracer);
    if (result != ZE_RESULT_SUCCESS) {
        const char *setting = variable == VARIABLE_SET_BY_US ? "1 (set by livetrack)"
                              : variable == VARIABLE_LEFT_UNSET
                                  ? "unset: the first zeInit ran with other threads running, when livetrack cannot "
                                    "change the environment safely; set it to 1, or use livetrack run"
                                  : getenv("ZE_ENABLE_TRACING_LAYER");
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
