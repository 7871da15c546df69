/*
 * A module built the way most Makefiles build: the compiler runs in a
 * directory and is given a relative source path (tests/core/CMakeLists.txt
 * runs it in tests/ on "core/test_symbols_relative.c"), so its DWARF has a
 * relative unit name and line-table directory. The symbolizer must still
 * report the absolute path, for the real function and for the inlined one.
 */
#include <stdint.h>

#define MODULE_API __attribute__((visibility("default")))

MODULE_API uintptr_t lt_relative_call(uintptr_t (*capture)(void), unsigned *inner_line, unsigned *outer_line);

static inline __attribute__((always_inline)) uintptr_t relative_inlined(uintptr_t (*capture)(void), unsigned *line)
{
    uintptr_t address = capture(); *line = __LINE__;
    return address;
}

MODULE_API __attribute__((noinline)) uintptr_t lt_relative_call(uintptr_t (*capture)(void), unsigned *inner_line,
                                                                 unsigned *outer_line)
{
    uintptr_t address = relative_inlined(capture, inner_line); *outer_line = __LINE__;
    return address;
}
