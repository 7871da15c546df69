/*
 * A tiny "driver" for test_unload: a shared library that names its object
 * types and records objects in livetrack, and is then dlclose()d before
 * the process exits. Its type names, its API name and the code of its
 * creation call sites all live in this library's own mappings.
 */
#include <stdint.h>
#include <stdio.h>

#include "livetrack/livetrack.h"

/* Built at run time (not string literals), so that the names are in this
 * library's writable data, which is unmapped with it. */
static char api_name[32];
static char type_name_storage[2][32];
static const char *type_names[2];

__attribute__((visibility("default"))) int unload_driver_start(unsigned objects);
__attribute__((visibility("default"))) int unload_driver_start(unsigned objects)
{
    snprintf(api_name, sizeof api_name, "%s", "UnloadedDriver");
    snprintf(type_name_storage[0], sizeof type_name_storage[0], "%s", "drv_context");
    snprintf(type_name_storage[1], sizeof type_name_storage[1], "%s", "drv_buffer");
    type_names[0] = type_name_storage[0];
    type_names[1] = type_name_storage[1];
    if (livetrack_declare_types(LIVETRACK_DOMAIN_USER, api_name, type_names, 2) != LIVETRACK_OK)
        return 1;
    livetrack_new_object context = {.domain = LIVETRACK_DOMAIN_USER, .type = 0, .handle = 0xd000, .call = "drvCreateContext"};
    if (livetrack_create(&context) != LIVETRACK_OK)
        return 1;
    for (unsigned i = 0; i < objects; i++) {
        livetrack_new_object buffer = {.domain = LIVETRACK_DOMAIN_USER, .type = 1, .handle = 0xd100 + 0x10 * (uint64_t)i,
                                       .bytes = 256, .parent = 0xd000, .call = "drvCreateBuffer"};
        if (livetrack_create(&buffer) != LIVETRACK_OK)
            return 1;
    }
    return 0;
}
