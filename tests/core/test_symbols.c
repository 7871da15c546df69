/*
 * The symbolizer (layer/core/symbols.c) on real addresses: a call at a
 * known line of this file (built with -g -O0), an inlined call (built
 * with -O2 in test_symbols_inline.c), libc, a dlopen()ed and dlclose()d
 * module, modules compiled from relative source paths, garbage, out of
 * memory, threads and the process exit.
 *
 * symbols.c is compiled into this test: its functions are hidden inside
 * liblivetrack.so. The allocation functions of memory.c are replaced
 * here, so allocation failures can be injected.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core_internal.h"
#include "livetrack/livetrack.h"
#include "symbols.h"

#define MAX_FRAMES 16

static atomic_int fail_allocations;

void *lt_malloc(size_t size) { return atomic_load(&fail_allocations) ? NULL : malloc(size); }
void *lt_calloc(size_t count, size_t size) { return atomic_load(&fail_allocations) ? NULL : calloc(count, size); }
void lt_free(void *pointer) { free(pointer); }

uintptr_t lt_test_capture(void);
uintptr_t lt_test_outer(unsigned *inner_line, unsigned *outer_line);

/* The return address of its call: the call site in the caller. */
__attribute__((noinline)) uintptr_t lt_test_capture(void) { return (uintptr_t)__builtin_return_address(0); }

static char exe_path[PATH_MAX];

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = s ? strlen(s) : 0, b = strlen(suffix);
    return s && a >= b && strcmp(s + a - b, suffix) == 0;
}

static void print_frames(const char *what, const livetrack_frame *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("  %s #%zu %#lx %s %s:%u:%u%s in %s+%#lx\n", what, i, (unsigned long)f[i].address,
               f[i].function ? f[i].function : "?", f[i].file ? f[i].file : "?", f[i].line, f[i].column,
               f[i].inlined ? " (inlined)" : "", f[i].module ? f[i].module : "?", (unsigned long)f[i].module_offset);
}

/* An exported libc function, from libc itself (not a sanitizer's
 * interceptor or a PLT stub of ours). */
static uintptr_t libc_function(const char *name)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *symbol = libc ? dlsym(libc, name) : NULL;
    if (libc)
        dlclose(libc);
    return (uintptr_t)symbol;
}

/* Mean time of one lookup of `address`, in microseconds. */
static double time_lookup(uintptr_t address, int rounds)
{
    livetrack_frame f[MAX_FRAMES];
    double start = now_us();
    for (int i = 0; i < rounds; i++)
        lt_symbolize_address(address, f, MAX_FRAMES);
    return (now_us() - start) / rounds;
}

static void test_timing(void)
{
    /* Runs first: the first lookup builds the module table and opens the
     * executable's DWARF. */
    uintptr_t first = lt_test_capture();
    uintptr_t second = lt_test_capture();
    double exe_cold = time_lookup(first, 1);
    double exe_uncached = time_lookup(second, 1);
    double exe_warm = time_lookup(first, 100000);

    uintptr_t libc_a = libc_function("bsearch") + 1;
    uintptr_t libc_b = libc_function("qsort") + 1;
    double libc_cold = time_lookup(libc_a, 1);
    double libc_uncached = time_lookup(libc_b, 1);
    double libc_warm = time_lookup(libc_a, 100000);

    double start = now_us();
    int internal = 0;
    for (int i = 0; i < 100000; i++)
        internal += lt_address_is_internal(first);
    double is_internal = (now_us() - start) / 100000;
    CHECK_EQ_INT(internal, 0);

    printf("lookup (us): test binary cold %.1f, uncached %.1f, warm %.3f; "
           "libc cold %.1f, uncached %.1f, warm %.3f; is_internal %.3f\n",
           exe_cold, exe_uncached, exe_warm, libc_cold, libc_uncached, libc_warm, is_internal);
    CHECK(exe_warm < 5.0);
    CHECK(libc_warm < 5.0);
    CHECK(is_internal < 5.0);
}

static void test_known_line(void)
{
    uintptr_t address = lt_test_capture(); unsigned line = __LINE__;
    livetrack_frame f[MAX_FRAMES];
    size_t n = lt_symbolize_address(address, f, MAX_FRAMES);
    print_frames("known line", f, n);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(f[0].address, address);
    CHECK(f[0].function && strcmp(f[0].function, "test_known_line") == 0);
    CHECK(ends_with(f[0].file, "tests/core/test_symbols.c"));
    CHECK_EQ_INT(f[0].line, line);
    CHECK(f[0].column > 0);
    CHECK_EQ_INT(f[0].inlined, 0);
    CHECK(f[0].module && strcmp(f[0].module, exe_path) == 0);
    Dl_info info;
    CHECK(dladdr((void *)(address - 1), &info) != 0);
    CHECK_EQ_INT(f[0].module_offset, address - (uintptr_t)info.dli_fbase);

    /* Same answer from the cache, and the strings are the same. */
    livetrack_frame again[MAX_FRAMES];
    CHECK_EQ_INT(lt_symbolize_address(address, again, MAX_FRAMES), 1);
    CHECK(again[0].function == f[0].function && again[0].file == f[0].file && again[0].line == f[0].line);
}

static void test_inlined(void)
{
    unsigned inner_line = 0, outer_line = 0;
    uintptr_t address = lt_test_outer(&inner_line, &outer_line);
    livetrack_frame f[MAX_FRAMES];
    size_t n = lt_symbolize_address(address, f, MAX_FRAMES);
    print_frames("inlined", f, n);
    CHECK_EQ_INT(n, 2);
    if (n < 2)
        return;
    CHECK_EQ_INT(f[0].inlined, 1);
    CHECK(f[0].function && strcmp(f[0].function, "lt_test_inlined") == 0);
    CHECK(ends_with(f[0].file, "tests/core/test_symbols_inline.c"));
    CHECK_EQ_INT(f[0].line, inner_line);
    CHECK_EQ_INT(f[1].inlined, 0);
    CHECK(f[1].function && strcmp(f[1].function, "lt_test_outer") == 0);
    CHECK(ends_with(f[1].file, "tests/core/test_symbols_inline.c"));
    CHECK_EQ_INT(f[1].line, outer_line);
    CHECK(f[0].address == address && f[1].address == address);
    CHECK(f[0].module == f[1].module && f[0].module_offset == f[1].module_offset);

    /* Room for one frame: the innermost, with the exact line. */
    CHECK_EQ_INT(lt_symbolize_address(address, f, 1), 1);
    CHECK_EQ_INT(f[0].line, inner_line);
    CHECK_EQ_INT(f[0].inlined, 1);
}

static void test_libc(void)
{
    uintptr_t address = libc_function("bsearch") + 1;
    CHECK(address > 1);
    livetrack_frame f[MAX_FRAMES];
    size_t n = lt_symbolize_address(address, f, MAX_FRAMES);
    print_frames("libc", f, n);
    CHECK(n >= 1);
    CHECK(f[n - 1].function && strcmp(f[n - 1].function, "bsearch") == 0);
    CHECK(f[n - 1].module && strstr(f[n - 1].module, "libc"));
}

static void test_internal(void)
{
    /* livetrack's own library */
    uintptr_t in_livetrack = (uintptr_t)&livetrack_create;
    Dl_info info;
    CHECK(dladdr((void *)in_livetrack, &info) && strstr(info.dli_fname, "liblivetrack"));
    CHECK_EQ_INT(lt_address_is_internal(in_livetrack + 1), 1);
    CHECK_EQ_INT(lt_address_owner(in_livetrack + 1), LT_FRAME_LIVETRACK);
    /* the application */
    CHECK_EQ_INT(lt_address_owner(lt_test_capture()), LT_FRAME_PROGRAM);
    CHECK_EQ_INT(lt_address_is_internal((uintptr_t)&lt_test_capture + 1), 0);
    CHECK_EQ_INT(lt_address_is_internal(lt_test_capture()), 0);
    CHECK_EQ_INT(lt_address_is_internal(libc_function("bsearch") + 1), 0);
    CHECK_EQ_INT(lt_address_is_internal(0), 0);
    CHECK_EQ_INT(lt_address_is_internal(1), 0);
    CHECK_EQ_INT(lt_address_is_internal(UINTPTR_MAX), 0);
    livetrack_add_internal_module(NULL); /* ignored */
}

typedef uintptr_t (*plugin_call_fn)(uintptr_t (*capture)(void), int which, unsigned *line);

static plugin_call_fn open_plugin_at(const char *path, void **handle)
{
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK(*handle != NULL);
    if (!*handle) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return NULL;
    }
    void *symbol = dlsym(*handle, "lt_plugin_call");
    plugin_call_fn call;
    memcpy(&call, &symbol, sizeof call);
    CHECK(call != NULL);
    return call;
}

static plugin_call_fn open_plugin(void **handle) { return open_plugin_at(LT_TEST_PLUGIN, handle); }

/* `address` is the plugin's call at `line`, one frame in its module. */
static void expect_plugin_frame(const char *what, uintptr_t address, unsigned line)
{
    livetrack_frame f[MAX_FRAMES];
    size_t n = lt_symbolize_address(address, f, MAX_FRAMES);
    print_frames(what, f, n);
    CHECK_EQ_INT(n, 1);
    CHECK(f[0].function && strcmp(f[0].function, "lt_plugin_call") == 0);
    CHECK(ends_with(f[0].file, "tests/core/test_symbols_plugin.c"));
    CHECK_EQ_INT(f[0].line, line);
    CHECK(f[0].column > 0);
    CHECK(f[0].module && strstr(f[0].module, "test_symbols_plugin"));
}

/* A module whose DWARF has no .debug_aranges (clang writes none): its
 * frames still get their file and line, from the units' own ranges. */
static void test_plugin_without_aranges(void)
{
    void *handle;
    plugin_call_fn call = open_plugin_at(LT_TEST_PLUGIN_NOARANGES, &handle);
    if (!call)
        return;
    unsigned line = 0;
    uintptr_t address = call(lt_test_capture, 1, &line);
    expect_plugin_frame("plugin without aranges", address, line);
    dlclose(handle);
}

/* A module loaded after the table was built, registered as internal,
 * unloaded (its addresses still symbolize) and loaded again. */
static void test_plugin(void)
{
    void *handle;
    plugin_call_fn call = open_plugin(&handle);
    if (!call)
        return;
    unsigned line_a = 0, line_b = 0;
    uintptr_t a = call(lt_test_capture, 0, &line_a);
    uintptr_t b = call(lt_test_capture, 1, &line_b);

    expect_plugin_frame("plugin", a, line_a);

    CHECK_EQ_INT(lt_address_is_internal(a), 0);
    livetrack_add_internal_module((const void *)a);
    CHECK_EQ_INT(lt_address_is_internal(a), 1);
    CHECK_EQ_INT(lt_address_owner(a), LT_FRAME_RUNTIME); /* registered: a loader's or runtime's, as far as we know */
    CHECK_EQ_INT(lt_address_is_internal(b), 1);
    CHECK_EQ_INT(lt_address_is_internal(lt_test_capture()), 0);

    dlclose(handle);
    /* b is looked up for the first time after the module is gone. */
    expect_plugin_frame("unloaded plugin", b, line_b);
    CHECK_EQ_INT(lt_address_is_internal(b), 1);

    /* Loaded again: still internal (by name), still symbolized. */
    call = open_plugin(&handle);
    if (!call)
        return;
    unsigned line_c = 0;
    uintptr_t c = call(lt_test_capture, 0, &line_c);
    CHECK_EQ_INT(lt_address_is_internal(c), 1);
    expect_plugin_frame("plugin loaded again", c, line_c);
    dlclose(handle);
}

#define RELATIVE_SOURCE "core/test_symbols_relative.c" /* as given to the compiler */

/* `file` is the absolute path of test_symbols_relative.c: the compilation
 * directory joined with the relative path, and no more (realpath() only
 * for a source directory reached through a link). */
static int is_relative_module_source(const char *file)
{
    if (!file || file[0] != '/' || !ends_with(file, "/" RELATIVE_SOURCE))
        return 0;
    const char *expected = LT_TEST_RELATIVE_DIRECTORY "/" RELATIVE_SOURCE;
    char resolved_file[PATH_MAX], resolved_expected[PATH_MAX];
    return strcmp(file, expected) == 0 || (realpath(file, resolved_file) && realpath(expected, resolved_expected) &&
                                           strcmp(resolved_file, resolved_expected) == 0);
}

typedef uintptr_t (*relative_call_fn)(uintptr_t (*capture)(void), unsigned *inner_line, unsigned *outer_line);

/* A module compiled from a relative source path (as `cc -g external/lib.c`
 * does): libdw names its file relative to the compilation directory, the
 * report must not (a `file:` suppression of an "external" directory would
 * miss "external/lib.c"). Checks the line-table file (inlined frame) and
 * the call-site file (its caller). Returns the module still loaded, so the
 * next one gets addresses of its own, never this one's cached answers. */
static void *test_relative_source_path(const char *path)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK(handle != NULL);
    if (!handle) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return NULL;
    }
    void *symbol = dlsym(handle, "lt_relative_call");
    relative_call_fn call;
    memcpy(&call, &symbol, sizeof call);
    CHECK(call != NULL);
    if (!call)
        return handle;
    unsigned inner_line = 0, outer_line = 0;
    uintptr_t address = call(lt_test_capture, &inner_line, &outer_line);
    livetrack_frame f[MAX_FRAMES];
    size_t n = lt_symbolize_address(address, f, MAX_FRAMES);
    print_frames("relative source path", f, n);
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        CHECK(f[0].inlined == 1 && f[0].function && strcmp(f[0].function, "relative_inlined") == 0);
        CHECK(is_relative_module_source(f[0].file));
        CHECK_EQ_INT(f[0].line, inner_line);
        CHECK(f[1].inlined == 0 && f[1].function && strcmp(f[1].function, "lt_relative_call") == 0);
        CHECK(is_relative_module_source(f[1].file));
        CHECK_EQ_INT(f[1].line, outer_line);
    }
    return handle;
}

/* With .debug_aranges and without (the two lookup paths), and built from
 * an absolute path below the compiler's directory (clang's case). */
static void test_relative_source_paths(void)
{
    const char *const modules[] = {LT_TEST_RELATIVE_MODULE, LT_TEST_RELATIVE_NOARANGES, LT_TEST_RELATIVE_BELOW_CWD};
    void *handles[sizeof modules / sizeof modules[0]];
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++)
        handles[i] = test_relative_source_path(modules[i]);
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++)
        if (handles[i])
            dlclose(handles[i]);
}

static void test_garbage(void)
{
    int on_stack = 0;
    void *on_heap = malloc(16);
    const uintptr_t addresses[] = {
        0, 1, 2, 4096, UINTPTR_MAX, UINTPTR_MAX - 1, (uintptr_t)0xffffffff81000000ull,
        (uintptr_t)0xffffffffff600400ull, (uintptr_t)&on_stack, (uintptr_t)on_heap, (uintptr_t)0x00007fffffffe000ull,
    };
    for (size_t i = 0; i < sizeof addresses / sizeof addresses[0]; i++) {
        livetrack_frame f[MAX_FRAMES];
        memset(f, 0xa5, sizeof f);
        size_t n = lt_symbolize_address(addresses[i], f, MAX_FRAMES);
        CHECK_EQ_INT(n, 1);
        CHECK_EQ_INT(f[0].address, addresses[i]);
        CHECK(f[0].line == 0 && f[0].inlined == 0);
        CHECK_EQ_INT(lt_address_is_internal(addresses[i]), 0);
    }
    livetrack_frame f[1];
    CHECK_EQ_INT(lt_symbolize_address(0, f, 1), 1);
    CHECK(f[0].function == NULL && f[0].module == NULL && f[0].file == NULL);
    CHECK_EQ_INT(lt_symbolize_address((uintptr_t)&lt_test_capture, f, 0), 0);
    CHECK_EQ_INT(lt_symbolize_address((uintptr_t)&lt_test_capture, NULL, 4), 0);
    /* An address in the executable outside any function (its ELF header). */
    Dl_info info;
    if (dladdr((void *)&lt_test_capture, &info)) {
        CHECK_EQ_INT(lt_symbolize_address((uintptr_t)info.dli_fbase + 1, f, 1), 1);
        CHECK(f[0].module && strcmp(f[0].module, exe_path) == 0);
    }
    free(on_heap);
}

/* Out of memory inside livetrack: still one frame, no crash. */
static void test_out_of_memory(void)
{
    uintptr_t address = lt_test_capture();
    atomic_store(&fail_allocations, 1);
    livetrack_frame f[MAX_FRAMES];
    size_t n = lt_symbolize_address(address, f, MAX_FRAMES);
    CHECK(n >= 1);
    CHECK_EQ_INT(f[0].address, address);
    CHECK_EQ_INT(lt_address_is_internal(address), 0);
    livetrack_add_internal_module((const void *)address); /* dropped: no memory */
    atomic_store(&fail_allocations, 0);
    CHECK_EQ_INT(lt_address_is_internal(address), 0);
    n = lt_symbolize_address(address, f, MAX_FRAMES);
    CHECK(n == 1 && f[0].function && strcmp(f[0].function, "test_out_of_memory") == 0);
}

#define THREADS 4
#define THREAD_ADDRESSES 8

static uintptr_t thread_addresses[THREAD_ADDRESSES];
static const char *thread_expected[THREAD_ADDRESSES];
static atomic_int thread_mismatches;

static void *symbolize_many(void *arg)
{
    (void)arg;
    for (int round = 0; round < 500; round++) {
        for (int i = 0; i < THREAD_ADDRESSES; i++) {
            livetrack_frame f[MAX_FRAMES];
            size_t n = lt_symbolize_address(thread_addresses[i], f, MAX_FRAMES);
            if (n < 1 || f[n - 1].function != thread_expected[i] || lt_address_is_internal(thread_addresses[i]))
                atomic_fetch_add(&thread_mismatches, 1);
        }
    }
    return NULL;
}

static void test_threads(void)
{
    static const char *const libc_names[] = {"malloc", "free", "strlen", "memcpy"};
    thread_addresses[0] = lt_test_capture();
    thread_addresses[1] = lt_test_capture();
    thread_addresses[2] = lt_test_capture();
    thread_addresses[3] = lt_test_capture();
    for (int i = 0; i < 4; i++)
        thread_addresses[4 + i] = libc_function(libc_names[i]) + 1;
    /* The expected answers, interned once: later lookups return the same
     * pointers, cached or not. */
    for (int i = 0; i < THREAD_ADDRESSES; i++) {
        livetrack_frame f[MAX_FRAMES];
        size_t n = lt_symbolize_address(thread_addresses[i], f, MAX_FRAMES);
        thread_expected[i] = n ? f[n - 1].function : NULL;
    }
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&threads[i], NULL, symbolize_many, NULL) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    CHECK_EQ_INT(atomic_load(&thread_mismatches), 0);
}

/* Reports run from destructors: a first lookup there must work too. */
static uintptr_t exit_address;
static unsigned exit_line;

__attribute__((destructor)) static void lookup_at_exit(void)
{
    if (!exit_address)
        return;
    livetrack_frame f[MAX_FRAMES];
    size_t n = lt_symbolize_address(exit_address, f, MAX_FRAMES);
    size_t m = lt_symbolize_address(libc_function("getenv") + 1, f + n, MAX_FRAMES - n);
    if (n != 1 || f[0].line != exit_line || !f[0].function || strcmp(f[0].function, "main") != 0 || m < 1 ||
        !f[n + m - 1].function || lt_address_is_internal(exit_address)) {
        fprintf(stderr, "test_symbols: lookup at exit failed\n");
        _exit(1);
    }
    printf("at exit: %s:%u in %s; %s in %s\n", f[0].file, f[0].line, f[0].function, f[n + m - 1].function,
           f[n + m - 1].module);
}

int main(void)
{
    if (!realpath("/proc/self/exe", exe_path))
        return 1;
    test_timing();
    test_known_line();
    test_inlined();
    test_libc();
    test_internal();
    test_plugin();
    test_plugin_without_aranges();
    test_relative_source_paths();
    test_garbage();
    test_out_of_memory();
    test_threads();
    exit_address = lt_test_capture(); exit_line = __LINE__;
    return check_summary("core_symbols");
}
