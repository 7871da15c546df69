/*
 * An ordinary driver-API program that leaks (cuda_leak_scenario.c): it
 * knows nothing of livetrack. It prints what it leaked on stdout, for the
 * tests that run it under livetrack and read the reports. cuInit twice,
 * as programs do: the injected library is initialized once.
 */
#include <cuda.h>

#include "cuda_leak_scenario.h"

int main(void)
{
    if (cuInit(0) != CUDA_SUCCESS || cuInit(0) != CUDA_SUCCESS)
        return 2;
    cuda_leaks leaks;
    cuda_plant_leaks(&leaks);
    cuda_print_leaks(&leaks, stdout);
    return leaks.failed ? 3 : 0;
}
