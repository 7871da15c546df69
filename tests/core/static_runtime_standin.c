/* Stands in for a statically linked CUDA runtime (nvcc's default): code
 * in the program's own module, built without debug information, whose
 * internal functions are named libcudart_static_<hash> and lead up to the
 * cuda* entry point the program called. Built with -g0 (CMakeLists.txt). */
#include "static_runtime_standin.h"

#include "livetrack/livetrack.h"

/* Each function calls livetrack_create itself, as the runtime's innermost
 * function calls the driver: no other frame of this module lies between. */
#define MAKE(handle)                                                                                           \
    do {                                                                                                       \
        livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = 0, .handle = (handle), .bytes = 64}; \
        livetrack_create(&object);                                                                             \
    } while (0)

__attribute__((noinline)) void libcudart_static_0123456789abcdef0123456789abcdef01234567(uint64_t handle)
{
    MAKE(handle);
    __asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
}

__attribute__((noinline)) void libcudart_static_89abcdef0123456789abcdef0123456789abcdef(uint64_t handle)
{
    libcudart_static_0123456789abcdef0123456789abcdef01234567(handle);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void cudaStandInMalloc(uint64_t handle)
{
    libcudart_static_89abcdef0123456789abcdef0123456789abcdef(handle);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void cudaHelperOfTheProgram(uint64_t handle)
{
    MAKE(handle);
    __asm__ volatile("" ::: "memory");
}

/* A program's own wrapper, built without debug information too: kept. */
__attribute__((noinline)) void cuda_alloc_checked(uint64_t handle)
{
    cudaStandInMalloc(handle);
    __asm__ volatile("" ::: "memory");
}
