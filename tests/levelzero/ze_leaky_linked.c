/*
 * The leak scenario in a program linked with -lze_loader.
 * Usage: ze_leaky_linked [manifest-file]
 */
#include <stdio.h>

#include "ze_leak_scenario.h"

int main(int argc, char **argv)
{
    const scenario_functions functions = {
#define LINKED(name) .name = ze##name,
        SCENARIO_FUNCTIONS(LINKED)
#undef LINKED
    };
    FILE *manifest = argc > 1 ? fopen(argv[1], "w") : NULL;
    if (argc > 1 && !manifest) {
        perror(argv[1]);
        return 2;
    }
    int status = run_leak_scenario(&functions, manifest);
    if (manifest)
        fclose(manifest);
    return status;
}
