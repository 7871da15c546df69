/*
 * The guard of the Level Zero tests that need livetrack's layer in the
 * process (LD_PRELOAD, as ctest runs them): run by hand without it, they
 * would fail on their first check with nothing saying why. A separate
 * header from ze_test_util.h, which the leaky samples also compile
 * without livetrack's include path.
 */
#ifndef LIVETRACK_ZE_LAYER_LOADED_H
#define LIVETRACK_ZE_LAYER_LOADED_H

#include <stdio.h>
#include <string.h>

#include "livetrack/livetrack.h"

/* 1 if liblivetrack_ze.so registered its types; else says how to run the
 * test and returns 0. The layer's types start with "ze_". */
static inline int ze_layer_loaded(void)
{
    const char *first_type = livetrack_type_name(LIVETRACK_DOMAIN_LEVEL_ZERO, 0);
    if (first_type && strncmp(first_type, "ze_", 3) == 0)
        return 1;
    fprintf(stderr, "liblivetrack_ze.so is not loaded: run with LD_PRELOAD=.../liblivetrack_ze.so\n");
    return 0;
}

#endif
