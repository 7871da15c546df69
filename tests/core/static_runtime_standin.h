/* A stand-in for a statically linked CUDA runtime (static_runtime_standin.c). */
#ifndef LIVETRACK_TESTS_STATIC_RUNTIME_STANDIN_H
#define LIVETRACK_TESTS_STATIC_RUNTIME_STANDIN_H

#include <stdint.h>

/* A runtime entry point: creates a USER object (type 0) through two
 * libcudart_static_* functions. */
void cudaStandInMalloc(uint64_t handle);
/* A function of the program without debug information whose name starts
 * with "cuda", creating the same object itself: no runtime frames. */
void cudaHelperOfTheProgram(uint64_t handle);

/* The program's wrapper of cudaStandInMalloc, without debug information. */
void cuda_alloc_checked(uint64_t handle);

#endif
