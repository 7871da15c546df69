/*
 * Two copies of this library (PROBE_VALUE 1 and 2) define the same
 * function: the first asks dlsym(RTLD_NEXT) for it and must get the
 * second's. That is the answer glibc gives whoever calls dlsym, and a
 * dlsym interposer must keep it (see layer/cuda/dlsym_hook.c).
 */
#include <dlfcn.h>

__attribute__((visibility("default"))) int rtld_next_probe(void) { return PROBE_VALUE; }

#if PROBE_VALUE == 1
/* The value of the next rtld_next_probe after this library, or -1. */
__attribute__((visibility("default"))) int rtld_next_probe_after_first(void)
{
    int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "rtld_next_probe");
    return next ? next() : -1;
}
#endif
