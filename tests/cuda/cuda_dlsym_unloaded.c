/*
 * Before the program loads the driver, dlsym(RTLD_DEFAULT, "cu...") must
 * fail as it does without livetrack, although livetrack's preloaded
 * library exports those names: programs ask it to learn whether CUDA is
 * there. So must a lookup through the main program's handle
 * (dlopen(NULL), as Python's ctypes.CDLL(None) does), which searches the
 * same global scope. Once a driver is loaded, the lookup gets livetrack's
 * wrapper (tracked): a plugin linked with the driver and dlopened locally
 * sees it in its own scope. A name the loaded driver lacks is not found,
 * as without livetrack.
 *
 * Not linked with the driver; run with liblivetrack_cuda.so preloaded.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static const char *module_of(void *address)
{
    Dl_info info;
    if (!address || !dladdr(address, &info) || !info.dli_fname)
        return "(none)";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

static void *main_program; /* dlopen(NULL) */

static void expect_absent_in(void *handle, const char *handle_name, const char *name, const char *when)
{
    dlerror();
    void *found = dlsym(handle, name);
    if (found)
        fprintf(stderr, "%s: dlsym(%s, %s) found it in %s\n", when, handle_name, name, module_of(found));
    CHECK(found == NULL);
    CHECK(dlerror() != NULL); /* and says why, as glibc does */
}

static void expect_absent(const char *name, const char *when)
{
    expect_absent_in(RTLD_DEFAULT, "RTLD_DEFAULT", name, when);
    expect_absent_in(main_program, "dlopen(NULL)", name, when);
}

static void expect_livetrack(void *handle, const char *handle_name, const char *name)
{
    void *found = dlsym(handle, name);
    if (!found || strcmp(module_of(found), "liblivetrack_cuda.so"))
        fprintf(stderr, "dlsym(%s, %s) gave %s\n", handle_name, name, module_of(found));
    CHECK(found && !strcmp(module_of(found), "liblivetrack_cuda.so"));
}

int main(void)
{
    main_program = dlopen(NULL, RTLD_NOW);
    CHECK(main_program != NULL);
    /* livetrack is there: its own lookups work. */
    CHECK(dlsym(RTLD_DEFAULT, "livetrack_create") != NULL);
    CHECK(dlsym(main_program, "livetrack_create") != NULL);
    CHECK(dlsym(RTLD_DEFAULT, "cuda_no_such_function") == NULL);

    expect_absent("cuMemAlloc_v2", "no driver loaded");
    expect_absent("cuGetProcAddress_v2", "no driver loaded");
    expect_absent("cuStreamCreate", "no driver loaded");

    /* The plugin brings the driver in, locally, as its dependency. */
    void *plugin = dlopen(DLSYM_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    CHECK(plugin != NULL);
    void *(*plugin_lookup)(const char *) =
        plugin ? (void *(*)(const char *))dlsym(plugin, "dlsym_plugin_default_lookup") : NULL;
    CHECK(plugin_lookup != NULL);
    if (plugin_lookup) {
        void *seen = plugin_lookup("cuMemAlloc_v2");
        if (!seen || strcmp(module_of(seen), "liblivetrack_cuda.so"))
            fprintf(stderr, "the plugin's dlsym(RTLD_DEFAULT, cuMemAlloc_v2) gave %s\n", module_of(seen));
        CHECK(seen && !strcmp(module_of(seen), "liblivetrack_cuda.so"));
        /* A name livetrack wraps that the driver lacks: not found, as
         * without livetrack. */
        void *absent = plugin_lookup("cuCtxCreate_v3");
        if (absent)
            fprintf(stderr, "the plugin's dlsym(RTLD_DEFAULT, cuCtxCreate_v3) gave %s\n", module_of(absent));
        CHECK(absent == NULL);
        expect_absent("cuCtxCreate_v3", "driver loaded locally, without the function");
        /* A driver is loaded: the program's own lookups get the wrapper too. */
        expect_livetrack(RTLD_DEFAULT, "RTLD_DEFAULT", "cuMemAlloc_v2");
        expect_livetrack(main_program, "dlopen(NULL)", "cuMemAlloc_v2");
    }

    /* Closed, it takes the driver with it: livetrack's lookups keep no
     * reference, and the program's lookup fails again. */
    if (plugin)
        dlclose(plugin);
    plugin = NULL;
    void *left = dlopen(FAKE_DRIVER, RTLD_LAZY | RTLD_NOLOAD);
    CHECK(left == NULL);
    if (left)
        dlclose(left);
    expect_absent("cuMemAlloc_v2", "plugin closed");

    void *local = dlopen(FAKE_DRIVER, RTLD_NOW | RTLD_LOCAL);
    CHECK(local != NULL);
    /* Looked up in the driver itself: livetrack's wrapper. */
    void *in_driver = local ? dlsym(local, "cuMemAlloc_v2") : NULL;
    CHECK(in_driver && !strcmp(module_of(in_driver), "liblivetrack_cuda.so"));

    void *global = dlopen(FAKE_DRIVER, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    CHECK(global != NULL);
    expect_livetrack(RTLD_DEFAULT, "RTLD_DEFAULT", "cuMemAlloc_v2");
    expect_livetrack(main_program, "dlopen(NULL)", "cuMemAlloc_v2");
    expect_livetrack(main_program, "dlopen(NULL)", "cuGetProcAddress_v2");
    if (global)
        dlclose(global);
    if (local)
        dlclose(local);
    if (plugin)
        dlclose(plugin);
    if (main_program)
        dlclose(main_program);
    return check_summary("cuda_dlsym_unloaded");
}
