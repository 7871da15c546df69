/*
 * dlsym, interposed: the CUDA runtime dlopens libcuda.so.1 and looks up
 * cuGetProcAddress_v2 there with dlsym, which searches only the driver, so
 * preloading our cu* functions alone never reaches it. Our dlsym hands
 * out our wrapper for the driver functions livetrack wraps (and for
 * cuGetProcAddress, through which the runtime then fetches the rest), and
 * is glibc's dlsym for every other name.
 *
 * glibc's dlsym reads its caller's return address to resolve RTLD_NEXT
 * ("the next object after the caller"). A C wrapper calling it would make
 * every RTLD_NEXT lookup relative to this library, and an interposer
 * loaded after us would find itself instead of the next definition. So
 * dlsym itself is a few instructions of assembly: it asks
 * ltcu_dlsym_replacement() whether the name is one of ours and, when it is
 * not, jumps to glibc's dlsym with the caller's return address still in
 * place. Other architectures get a C wrapper (RTLD_NEXT lookups of other
 * interposers are then relative to this library; docs/cuda.md says so).
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "cuda_front_end.h"

/* Every dlsym of the process comes here first, including those a
 * sanitizer runtime makes while it initializes (AddressSanitizer looks
 * up the functions it intercepts), before instrumented code may run. So
 * the path every lookup takes, finding glibc's dlsym and telling our
 * names from others, is built without sanitizer instrumentation and
 * calls nothing but glibc. */
#define UNINSTRUMENTED __attribute__((no_sanitize_address, no_sanitize_thread, no_sanitize("undefined")))

/* glibc's dlsym: read by the assembly below, so not static. */
void *(*ltcu_glibc_dlsym)(void *handle, const char *name);

UNINSTRUMENTED static void *(*glibc_dlsym(void))(void *, const char *)
{
    void *(*found)(void *, const char *) = __atomic_load_n(&ltcu_glibc_dlsym, __ATOMIC_ACQUIRE);
    /* The versions glibc has given dlsym: 2.34 moved it into libc. Racing
     * threads find the same function. */
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !found; i++)
        found = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (found)
        __atomic_store_n(&ltcu_glibc_dlsym, found, __ATOMIC_RELEASE);
    return found;
}

void *ltcu_real_dlsym(void *handle, const char *name)
{
    void *(*real)(void *, const char *) = glibc_dlsym();
    return real ? real(handle, name) : NULL;
}

static _Atomic(void *) driver;

/* The driver library if the process has loaded it, else NULL. */
static void *loaded_driver_library(void)
{
    void *handle = atomic_load_explicit(&driver, memory_order_acquire);
    if (handle)
        return handle;
    /* Our reference is kept: the handle must stay valid for later lookups. */
    handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    void *expected = NULL;
    if (handle && !atomic_compare_exchange_strong(&driver, &expected, handle)) {
        dlclose(handle); /* another thread's reference is the one kept */
        handle = expected;
    }
    return handle;
}

void *ltcu_driver_library(void)
{
    void *handle = loaded_driver_library();
    if (handle)
        return handle;
    /* When the program has not loaded the driver yet, it is calling it,
     * so it wants it loaded. */
    handle = dlopen("libcuda.so.1", RTLD_LAZY);
    void *expected = NULL;
    if (handle && !atomic_compare_exchange_strong(&driver, &expected, handle)) {
        dlclose(handle); /* another thread's reference is the one kept */
        handle = expected;
    }
    return handle;
}

/* Whether the process has a driver loaded now, without keeping it
 * loaded (a program that dlcloses its driver must see it go). The answer
 * is kept until the loader's count of loads or unloads changes, so the
 * lookups of a program without a driver do not search the file system
 * each time (dlopen searches it even with RTLD_NOLOAD). */
typedef struct load_counts {
    unsigned long long adds, subs;
} load_counts;

static int read_load_counts(struct dl_phdr_info *info, size_t size, void *raw)
{
    load_counts *counts = raw;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        return 0; /* an old loader without counts: never equal, always asked */
    counts->adds = info->dlpi_adds;
    counts->subs = info->dlpi_subs;
    return 1; /* the same for every object: the first will do */
}

static int driver_loaded_now(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static load_counts asked_at;
    static int asked, answer;
    load_counts now = {0, 0};
    int counted = dl_iterate_phdr(read_load_counts, &now);
    pthread_mutex_lock(&lock);
    int known = asked && counted && now.adds == asked_at.adds && now.subs == asked_at.subs;
    int loaded = answer;
    pthread_mutex_unlock(&lock);
    if (known)
        return loaded;
    void *handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    loaded = handle != NULL;
    if (handle)
        dlclose(handle);
    pthread_mutex_lock(&lock);
    asked = counted;
    asked_at = now;
    answer = loaded;
    pthread_mutex_unlock(&lock);
    return loaded;
}

static int tracked_symbol(const char *name)
{
    for (int id = 0; id < LTCU_CALL_COUNT; id++)
        if (!strcmp(ltcu_calls[id].symbol, name))
            return id;
    return -1;
}

/* Whether `function` is the loaded driver's own `name`. */
static int is_driver_function(void *function, const char *name)
{
    void *driver = loaded_driver_library();
    return driver && function == ltcu_real_dlsym(driver, name);
}

/* Whether our wrapper of `name`, which calls `forwards_to`, calls the
 * driver's own function. When it does not, another interposer of the name
 * sits after us (a profiling shim the program links, or one preloaded
 * after us), and our wrapper calls it. That interposer reaches the driver
 * with dlsym(RTLD_NEXT), so a relative lookup must then get glibc's
 * answer for its real caller: our wrapper would send the interposer back
 * to us, and us to it, without end. Our export is still the first of the
 * chain, so its calls are tracked once. */
static int forwards_to_driver(void *forwards_to, const char *name)
{
    return forwards_to && is_driver_function(forwards_to, name);
}

/* What ltcu_dlsym_replacement returns for "this lookup fails": dlsym
 * below turns it into NULL (no function lives at address 1). */
#define LOOKUP_FAILS ((void *)1)

/* Whether `function` is in livetrack's own library. */
static int is_ours(void *function)
{
    Dl_info function_in, ours;
    return function && dladdr(function, &function_in) && dladdr((void *)is_ours, &ours) &&
           function_in.dli_fbase == ours.dli_fbase;
}

/* The handle dlopen(NULL) gives, the main program's. A lookup through it
 * searches the global scope (the program, what it was linked and
 * preloaded with, livetrack too, and what was loaded RTLD_GLOBAL), which
 * is where RTLD_DEFAULT looks first. NULL if dlopen fails. */
static void *main_program_handle(void)
{
    static _Atomic(void *) main_program;
    void *handle = atomic_load_explicit(&main_program, memory_order_acquire);
    if (!handle) {
        /* Racing threads get the same handle. Our reference is kept: the
         * program's handle lasts as long as the process. */
        handle = dlopen(NULL, RTLD_LAZY);
        atomic_store_explicit(&main_program, handle, memory_order_release);
    }
    return handle;
}

/* Whether the process has a driver loaded now and it defines `name`.
 * Without keeping the driver loaded, as driver_loaded_now(); only asked
 * once that says it is loaded, when dlopen finds it by its name among the
 * loaded objects without searching the file system. */
static int loaded_driver_defines(const char *name)
{
    if (!driver_loaded_now())
        return 0;
    void *handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        return 0; /* closed meanwhile */
    int defined = ltcu_real_dlsym(handle, name) != NULL;
    dlclose(handle);
    return defined;
}

/* dlsym(RTLD_DEFAULT, name) when nothing after livetrack defines `name`.
 * glibc would find our own export. Where the process has no driver, or
 * its driver lacks the function (an older driver, asked for a newer
 * function), that would answer "is it there?" with yes, and our wrapper,
 * with nothing to call, would fail the call: so the lookup fails as
 * without us. Once a driver that defines it is loaded, even locally (a
 * plugin linked with it, whose own scope glibc searches for that plugin's
 * lookups), our export is the answer: a caller's scope is glibc's to know.
 * A definition before ours (the program's own) is glibc's answer too. */
static void *default_scope_without_us(const char *name)
{
    if (!is_ours(ltcu_real_dlsym(RTLD_DEFAULT, name)) || loaded_driver_defines(name))
        return NULL; /* glibc's answer */
    /* Asked last, so that dlerror() tells this failure; a driver another
     * thread made global meanwhile is found here, and glibc answers. */
    return ltcu_real_dlsym(RTLD_NEXT, name) ? NULL : LOOKUP_FAILS;
}

/* Our wrapper for a cu* name the driver has, else NULL. */
static void *tracked_replacement(void *handle, const char *name)
{
    if (!ltcu_interposing())
        return NULL;
    void *wrapper = ltcu_get_proc_address_wrapper(name);
    int id = -1;
    if (!wrapper) {
        id = tracked_symbol(name);
        if (id < 0)
            return NULL;
        wrapper = ltcu_exported_wrapper((ltcu_call_id)id);
    }
    /* The main program's handle searches the global scope, as
     * RTLD_DEFAULT does first (Python's ctypes.CDLL(None) asks through it
     * whether CUDA is there). When our export is the first definition
     * there, the lookup is answered as RTLD_DEFAULT's is; glibc's answer
     * for either handle is then that export. Other handles whose scope
     * holds livetrack (its own, a library linked with it) are not. */
    if (handle != RTLD_DEFAULT && handle != RTLD_NEXT && handle == main_program_handle() &&
        is_ours(ltcu_real_dlsym(handle, name)))
        handle = RTLD_DEFAULT;
    /* Only where the object searched has the driver's function: a
     * lookup that fails must fail as it would without us. */
    int relative = handle == RTLD_NEXT || handle == RTLD_DEFAULT;
    void *found = ltcu_real_dlsym(relative ? RTLD_NEXT : handle, name);
    if (!found && handle == RTLD_DEFAULT)
        return default_scope_without_us(name);
    if (!found || found == wrapper)
        return found;
    void *forwards_to = id >= 0 ? ltcu_real_exported((ltcu_call_id)id) : ltcu_get_proc_address_real(name);
    if (relative && !forwards_to_driver(forwards_to, name))
        return NULL;
    if (id >= 0 && found != forwards_to)
        return NULL; /* another driver than the one our wrapper calls */
    /* cuGetProcAddress: our wrapper calls the next in the chain, which is
     * the driver or an interposer before it. Looked up in the driver, it
     * stands for the driver's (the runtime's path, a shim then included);
     * looked up in another library (a stub or a shim dlopened on its own,
     * in no chain), that library's own is the answer. */
    if (id < 0 && found != forwards_to && !is_driver_function(found, name))
        return NULL;
    return wrapper;
}

/* Called by dlsym below for every lookup: our wrapper for `name` when it
 * is one, LOOKUP_FAILS when the answer is NULL, else NULL (then glibc's
 * dlsym answers). */
void *ltcu_dlsym_replacement(void *handle, const char *name);
UNINSTRUMENTED void *ltcu_dlsym_replacement(void *handle, const char *name)
{
    if (!glibc_dlsym() || !name || name[0] != 'c' || name[1] != 'u')
        return NULL;
    return tracked_replacement(handle, name);
}

#if defined(__x86_64__)
/* rdi = handle, rsi = name. Keep them across the call (and the stack
 * 16-byte aligned at it); then return the wrapper, or tail-jump. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        ".p2align 4\n"
        "dlsym:\n"
        ".cfi_startproc\n"
#if defined(__CET__)
        "endbr64\n"
#endif
        "pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "call ltcu_dlsym_replacement\n"
        "addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "testq %rax, %rax\n"
        "jz 2f\n"
        "cmpq $1, %rax\n" /* LOOKUP_FAILS: answer NULL */
        "jne 1f\n"
        "xorl %eax, %eax\n"
        "1:\n"
        "ret\n"
        "2:\n"
        "jmpq *ltcu_glibc_dlsym(%rip)\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
/* x0 = handle, x1 = name; the frame record keeps x29/x30 for the call. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, %function\n"
        ".p2align 2\n"
        "dlsym:\n"
        ".cfi_startproc\n"
        "stp x29, x30, [sp, #-32]!\n"
        ".cfi_def_cfa_offset 32\n"
        ".cfi_offset 29, -32\n"
        ".cfi_offset 30, -24\n"
        "mov x29, sp\n"
        "stp x0, x1, [sp, #16]\n"
        "bl ltcu_dlsym_replacement\n"
        "cbnz x0, 1f\n"
        "ldp x0, x1, [sp, #16]\n"
        "ldp x29, x30, [sp], #32\n"
        ".cfi_remember_state\n"
        ".cfi_def_cfa_offset 0\n"
        ".cfi_restore 29\n"
        ".cfi_restore 30\n"
        "adrp x16, ltcu_glibc_dlsym\n"
        "ldr x16, [x16, #:lo12:ltcu_glibc_dlsym]\n"
        "br x16\n"
        "1:\n"
        ".cfi_restore_state\n"
        "cmp x0, #1\n" /* LOOKUP_FAILS: answer NULL */
        "csel x0, xzr, x0, eq\n"
        "ldp x29, x30, [sp], #32\n"
        ".cfi_def_cfa_offset 0\n"
        ".cfi_restore 29\n"
        ".cfi_restore 30\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n");
#else
__attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
    void *wrapper = ltcu_dlsym_replacement(handle, name);
    if (wrapper == LOOKUP_FAILS)
        return NULL;
    return wrapper ? wrapper : ltcu_real_dlsym(handle, name);
}
#endif
