/*
 * A module the symbolizer test dlopen()s and dlclose()s: its calls back
 * into the test leave return addresses inside it.
 */
#include <stdint.h>

#define PLUGIN_API __attribute__((visibility("default")))

PLUGIN_API uintptr_t lt_plugin_call(uintptr_t (*capture)(void), int which, unsigned *line);

/* Two call sites, so one can be looked up for the first time after the
 * module is gone. */
PLUGIN_API __attribute__((noinline)) uintptr_t lt_plugin_call(uintptr_t (*capture)(void), int which, unsigned *line)
{
    uintptr_t address;
    if (which == 0) {
        address = capture(); *line = __LINE__;
    } else {
        address = capture(); *line = __LINE__;
    }
    return address;
}
