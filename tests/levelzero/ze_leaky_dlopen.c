/*
 * The leak scenario in a program that is not linked with the loader: it
 * dlopens libze_loader.so.1 and looks every function up with dlsym, as
 * language bindings and plugin hosts do.
 * Usage: ze_leaky_dlopen [manifest-file]
 */
#include <dlfcn.h>
#include <stdio.h>

#include "ze_leak_scenario.h"

int main(int argc, char **argv)
{
    void *loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader) {
        fprintf(stderr, "ze_leaky_dlopen: %s\n", dlerror());
        return 2;
    }
    scenario_functions functions;
    int missing = 0;
    /* dlsym returns a data pointer; POSIX guarantees the conversion. */
#define LOOK_UP(name)                                                   \
    *(void **)&functions.name = dlsym(loader, "ze" #name);              \
    if (!functions.name) {                                              \
        fprintf(stderr, "ze_leaky_dlopen: no ze%s in the loader\n", #name); \
        missing++;                                                      \
    }
    SCENARIO_FUNCTIONS(LOOK_UP)
#undef LOOK_UP
    if (missing)
        return 2;
    FILE *manifest = argc > 1 ? fopen(argv[1], "w") : NULL;
    if (argc > 1 && !manifest) {
        perror(argv[1]);
        return 2;
    }
    int status = run_leak_scenario(&functions, manifest);
    if (manifest)
        fclose(manifest);
    /* The loader stays loaded: objects leaked on purpose still refer to it. */
    return status;
}
