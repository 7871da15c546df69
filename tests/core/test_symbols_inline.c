/*
 * Built with -O2 (see CMakeLists.txt): an always_inline function whose
 * call into the test lands inside lt_test_outer, so the symbolizer must
 * report an inlined frame (lt_test_inlined at its line) before the real
 * one (lt_test_outer at the line that "called" it).
 */
#include <stdint.h>

uintptr_t lt_test_capture(void);
uintptr_t lt_test_outer(unsigned *inner_line, unsigned *outer_line);

static inline __attribute__((always_inline)) uintptr_t lt_test_inlined(unsigned *line)
{
    uintptr_t address = lt_test_capture(); *line = __LINE__;
    return address;
}

__attribute__((noinline)) uintptr_t lt_test_outer(unsigned *inner_line, unsigned *outer_line)
{
    uintptr_t address = lt_test_inlined(inner_line); *outer_line = __LINE__;
    return address;
}
