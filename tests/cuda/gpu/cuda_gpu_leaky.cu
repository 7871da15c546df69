// A CUDA runtime program that leaks known objects on known lines, for the
// GPU test (cuda_gpu_check.c, run.sh). It knows nothing of livetrack.
//
// It launches a kernel first, so the runtime loads the kernel's module (or
// library) and takes its primary context: neither is the program's to
// free, and the report must not list them. It then leaks one object of
// each kind below and frees others properly, and prints what it leaked:
//   leak <type> <handle> <bytes> <line>
// then "end". Without a usable GPU it prints "SKIP: <reason>" and exits 77.
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(int *out, int value) { out[threadIdx.x] = value; }

static int failed;

static void plant(const char *type, const void *handle, unsigned long long bytes, unsigned line, cudaError_t error)
{
    if (error != cudaSuccess) {
        std::fprintf(stderr, "line %u: %s\n", line, cudaGetErrorString(error));
        failed = 1;
        return;
    }
    std::printf("leak %s 0x%llx %llu %u\n", type, (unsigned long long)(uintptr_t)handle, bytes, line);
}

#define PLANT(type, handle, bytes, call) plant(type, (const void *)(uintptr_t)(handle), bytes, __LINE__, call)
#define CLEAN(call)                                                                     \
    do {                                                                                \
        cudaError_t error_ = (call);                                                    \
        if (error_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "line %d: %s\n", __LINE__, cudaGetErrorString(error_)); \
            failed = 1;                                                                 \
        }                                                                               \
    } while (0)

int main()
{
    int devices = 0;
    cudaError_t error = cudaGetDeviceCount(&devices);
    if (error != cudaSuccess || devices == 0) {
        std::printf("SKIP: no usable GPU (cudaGetDeviceCount: %s, %d devices)\n", cudaGetErrorString(error), devices);
        return 77;
    }

    // The runtime's own objects: its primary context, the kernel's module.
    int *scratch = nullptr;
    CLEAN(cudaMalloc(&scratch, 32 * sizeof(int)));
    fill<<<1, 32>>>(scratch, 7);
    CLEAN(cudaGetLastError());
    CLEAN(cudaDeviceSynchronize());
    CLEAN(cudaFree(scratch));

    void *device = nullptr, *pinned = nullptr, *managed = nullptr, *async = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t event = nullptr;
    cudaGraph_t graph = nullptr;
    PLANT("CUdeviceptr", device, 4096, cudaMalloc(&device, 4096));
    PLANT("host_pinned", pinned, 1000, cudaMallocHost(&pinned, 1000));
    PLANT("managed", managed, 2048, cudaMallocManaged(&managed, 2048));
    PLANT("CUstream", stream, 0, cudaStreamCreate(&stream));
    PLANT("CUevent", event, 0, cudaEventCreate(&event));
    PLANT("device_async", async, 512, cudaMallocAsync(&async, 512, stream));
    PLANT("CUgraph", graph, 0, cudaGraphCreate(&graph, 0));

    // Made and freed properly: not leaks.
    void *freed = nullptr;
    cudaStream_t other = nullptr;
    CLEAN(cudaMalloc(&freed, 64));
    CLEAN(cudaFree(freed));
    CLEAN(cudaStreamCreate(&other));
    CLEAN(cudaStreamDestroy(other));
    CLEAN(cudaStreamSynchronize(stream));

    std::printf("%s\n", failed ? "failed" : "end");
    return failed ? 1 : 0;
}
