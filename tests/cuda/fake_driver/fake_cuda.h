/*
 * Controls of the fake CUDA driver (fake_cuda.c) for tests: exported by
 * the fake libcuda.so.1 beside the driver API.
 */
#ifndef LIVETRACK_TESTS_FAKE_CUDA_H
#define LIVETRACK_TESTS_FAKE_CUDA_H

#include <cuda.h>
#include <stddef.h>

/* The next call of `symbol` (its ABI name, "cuStreamDestroy_v2") returns
 * `result` and does nothing else. */
void fake_cuda_fail_next(const char *symbol, CUresult result);

/* The fake driver's own function for a base name and CUDA version, as
 * its cuGetProcAddress answers, but reached without cuGetProcAddress or
 * dlsym: whatever interposes those does not see this. For benchmarks
 * that time the driver alone. */
void *fake_cuda_direct(const char *name, int cuda_version);

/* While on, a destroyed module's handle is the next module's (up to 16,
 * newest first), as a driver reusing memory gives a dead handle out
 * again; off frees those kept. */
void fake_cuda_recycle_modules(int on);

/* Sizes the fake driver's cuMemGetAddressRange gives memory another
 * process shares: an IPC mapping of export N (the handle's first byte)
 * has FAKE_IPC_BYTES_PER_EXPORT * (N + 1) bytes, a pointer imported from
 * a shared pool FAKE_IMPORTED_POINTER_BYTES (the exporter's sizes). */
#define FAKE_IPC_BYTES_PER_EXPORT 4096
#define FAKE_IMPORTED_POINTER_BYTES 256

/* Objects the fake driver holds for the program (primary contexts not
 * counted). */
size_t fake_cuda_live_objects(void);

#endif
