/*
 * A driver-API scenario that leaks known objects on known lines, for the
 * exit report, JSON and native API checks. It also makes and frees
 * objects properly, which must not be reported.
 */
#ifndef LIVETRACK_TESTS_CUDA_LEAK_SCENARIO_H
#define LIVETRACK_TESTS_CUDA_LEAK_SCENARIO_H

#include "cuda_leak_manifest.h"

/* Run the scenario (cuInit first); lines are in cuda_leak_scenario.c. */
void cuda_plant_leaks(cuda_leaks *out);

#endif
