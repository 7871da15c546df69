// A CUDA runtime program that leaks known objects on known lines, for the
// GPU test (cuda_gpu_check.c, run.sh). It knows nothing of livetrack.
//
// It launches a kernel first, so the runtime loads the kernel's module (or
// library) and takes its primary context: neither is the program's to
// free, and the report must not list them. It then leaks one object of
// each kind below and frees others properly, and prints what it leaked:
//   leak <type> <handle> <bytes> <line>
// then "end". Without a usable GPU it prints "SKIP: <reason>" and exits 77.
//
// It also shares physical memory through a file descriptor with the
// driver's virtual memory calls, reached as a runtime program reaches
// them (cudaGetDriverEntryPointByVersion, no -lcuda), and has one
// cuMemAddressFree refused (prints "refused cuMemAddressFree <address>"). Each import gives a
// new handle that needs its own cuMemRelease (seen on driver 580, in the
// same process and in another), so livetrack records each import as an
// object: releasing all but one must leave exactly that one, and no
// misuse reported.
//
// Two more roles share memory between processes (cuda_gpu_check runs
// them), each printing what it leaked the same way:
//   cuda_gpu_leaky share FILE     allocates the memory, writes its IPC
//                                 handles to FILE, frees it once FILE is
//                                 removed, and leaks nothing
//   cuda_gpu_leaky open HANDLES   maps them: the first twice (one close
//                                 leaves it mapped), the second once,
//                                 both leaked; the third mapped and closed
//
// And one role for threads (cuda_gpu_check runs it in both modes):
//   cuda_gpu_leaky threads        eight threads make and free streams,
//                                 events and memory at once, then each
//                                 leaks one event and one allocation
//   cuda_gpu_leaky reset          makes objects it never frees, then calls
//                                 cudaDeviceReset (as many CUDA samples
//                                 end), which frees them with the primary
//                                 context; prints "dropped <type> <handle>
//                                 <bytes>" for each, then leaks one
//                                 allocation on the new context
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <unistd.h>

__global__ void fill(int *out, int value) { out[threadIdx.x] = value; }

// Set by any thread of the "threads" role.
static volatile int failed;

// The handle is read through its address after the call has set it (the
// order in which a call's arguments are evaluated is unspecified).
template <typename Handle>
static void plant(const char *type, const Handle *handle, unsigned long long bytes, unsigned line, cudaError_t error)
{
    if (error != cudaSuccess) {
        std::fprintf(stderr, "line %u: %s\n", line, cudaGetErrorString(error));
        failed = 1;
        return;
    }
    std::printf("leak %s 0x%llx %llu %u\n", type, (unsigned long long)(uintptr_t)*handle, bytes, line);
}

static cudaError_t driver_result(CUresult result)
{
    return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

#define PLANT(type, handle, bytes, call) plant(type, &(handle), bytes, __LINE__, call)
#define PLANT_DRIVER(type, handle, bytes, call) plant(type, &(handle), bytes, __LINE__, driver_result(call))
#define CLEAN(call)                                                                     \
    do {                                                                                \
        cudaError_t error_ = (call);                                                    \
        if (error_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "line %d: %s\n", __LINE__, cudaGetErrorString(error_)); \
            failed = 1;                                                                 \
        }                                                                               \
    } while (0)

#define CLEAN_DRIVER(call)                                                    \
    do {                                                                      \
        CUresult result_ = (call);                                            \
        if (result_ != CUDA_SUCCESS) {                                        \
            std::fprintf(stderr, "line %d: CUresult %d\n", __LINE__, result_); \
            failed = 1;                                                       \
        }                                                                     \
    } while (0)

static void *driver_entry(const char *symbol)
{
    void *function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
        return nullptr;
    return function;
}

#define DRIVER(symbol) reinterpret_cast<decltype(&symbol)>(driver_entry(#symbol))

static void share_physical_memory()
{
    auto granularity_of = DRIVER(cuMemGetAllocationGranularity);
    auto create = DRIVER(cuMemCreate);
    auto export_handle = DRIVER(cuMemExportToShareableHandle);
    auto import_handle = DRIVER(cuMemImportFromShareableHandle);
    auto reserve = DRIVER(cuMemAddressReserve);
    auto map = DRIVER(cuMemMap);
    auto retain = DRIVER(cuMemRetainAllocationHandle);
    auto unmap = DRIVER(cuMemUnmap);
    auto unreserve = DRIVER(cuMemAddressFree);
    auto release = DRIVER(cuMemRelease);
    if (!granularity_of || !create || !export_handle || !import_handle || !reserve || !map || !retain || !unmap ||
        !unreserve || !release) {
        std::fprintf(stderr, "cudaGetDriverEntryPointByVersion: the virtual memory calls are missing\n");
        failed = 1;
        return;
    }
    int device = 0;
    CLEAN(cudaGetDevice(&device));
    CUmemAllocationProp properties = {};
    properties.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    properties.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    properties.location.id = device;
    const CUmemAllocationHandleType by_descriptor = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    properties.requestedHandleTypes = by_descriptor;
    size_t size = 0;
    CUmemGenericAllocationHandle made = 0, first = 0, second = 0, retained = 0;
    if (granularity_of(&size, &properties, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS ||
        create(&made, size, &properties, 0) != CUDA_SUCCESS) {
        std::fprintf(stderr, "note: no shareable physical memory on this device; that part is left out\n");
        return;
    }
    int descriptor = -1;
    CLEAN_DRIVER(export_handle(&descriptor, made, by_descriptor, 0));
    void *shared = (void *)(intptr_t)descriptor;
    CLEAN_DRIVER(import_handle(&first, shared, by_descriptor));
    PLANT_DRIVER("CUmemGenericAllocationHandle", second, 0, import_handle(&second, shared, by_descriptor));
    if (first == second || first == made) {
        std::fprintf(stderr, "an import gave a handle already held: 0x%llx 0x%llx 0x%llx\n",
                     (unsigned long long)made, (unsigned long long)first, (unsigned long long)second);
        failed = 1;
    }
    // A mapping holds the memory; the handle retained from it is the one mapped.
    CUdeviceptr address = 0;
    CLEAN_DRIVER(reserve(&address, size, 0, 0, 0));
    CLEAN_DRIVER(map(address, size, 0, first, 0));
    CLEAN_DRIVER(retain(&retained, (void *)(uintptr_t)address));
    if (retained != first) {
        std::fprintf(stderr, "cuMemRetainAllocationHandle gave 0x%llx, not the mapped 0x%llx\n",
                     (unsigned long long)retained, (unsigned long long)first);
        failed = 1;
    }
    CLEAN_DRIVER(release(retained));
    CLEAN_DRIVER(unmap(address, size));
    CLEAN_DRIVER(unreserve(address, size));
    CLEAN_DRIVER(release(first));
    CLEAN_DRIVER(release(made));
    close(descriptor);

    // A free the driver refuses (not the size reserved): livetrack counted
    // it before the driver ran, and must put the same reservation back.
    CUdeviceptr refused = 0;
    CLEAN_DRIVER(reserve(&refused, 2 * size, 0, 0, 0));
    if (unreserve(refused, size) == CUDA_SUCCESS) {
        std::fprintf(stderr, "note: cuMemAddressFree of half a reservation succeeded; that part is left out\n");
        return;
    }
    std::printf("refused cuMemAddressFree 0x%llx\n", (unsigned long long)refused);
    CLEAN_DRIVER(unreserve(refused, 2 * size));
}

// The importer's driver says each allocation's exact size (driver 580:
// 512 bytes too), which the report must show.
static const size_t shared_sizes[] = {2u << 20, 4608, 2u << 20};
#define SHARED_COUNT (sizeof shared_sizes / sizeof shared_sizes[0])

static int share(const char *path)
{
    void *memory[SHARED_COUNT] = {};
    char text[SHARED_COUNT * (2 * sizeof(cudaIpcMemHandle_t) + 1) + 1] = "";
    size_t used = 0;
    for (size_t i = 0; i < SHARED_COUNT; i++) {
        cudaIpcMemHandle_t handle;
        CLEAN(cudaMalloc(&memory[i], shared_sizes[i]));
        CLEAN(cudaIpcGetMemHandle(&handle, memory[i]));
        for (size_t b = 0; b < sizeof handle.reserved; b++)
            used += std::snprintf(text + used, sizeof text - used, "%02x", (unsigned char)handle.reserved[b]);
        used += std::snprintf(text + used, sizeof text - used, "%s", i + 1 < SHARED_COUNT ? "," : "");
    }
    // Written whole, then renamed: the reader never sees half of it.
    char partial[4096];
    std::snprintf(partial, sizeof partial, "%s.partial", path);
    FILE *file = std::fopen(partial, "w");
    if (!file || std::fputs(failed ? "failed" : text, file) < 0 || std::fclose(file) || std::rename(partial, path)) {
        std::perror(path);
        return 1;
    }
    // The importer maps the memory meanwhile; then the checker removes the file.
    for (int waited_ms = 0; access(path, F_OK) == 0 && waited_ms < 120000; waited_ms += 10)
        usleep(10000);
    for (size_t i = 0; i < SHARED_COUNT; i++)
        CLEAN(cudaFree(memory[i]));
    std::printf("%s\n", failed ? "failed" : "end");
    return failed ? 1 : 0;
}

static int open_shared(const char *handles)
{
    cudaIpcMemHandle_t handle[SHARED_COUNT];
    for (size_t i = 0; i < SHARED_COUNT; i++) {
        const char *hex = handles + i * (2 * sizeof handle[i].reserved + 1);
        if (std::strlen(handles) < (i + 1) * (2 * sizeof handle[i].reserved + 1) - 1) {
            std::fprintf(stderr, "open: expected %zu handles, got \"%s\"\n", SHARED_COUNT, handles);
            return 1;
        }
        for (size_t b = 0; b < sizeof handle[i].reserved; b++) {
            char pair[3] = {hex[2 * b], hex[2 * b + 1], 0};
            handle[i].reserved[b] = (char)std::strtoul(pair, nullptr, 16);
        }
    }
    const unsigned peers = cudaIpcMemLazyEnablePeerAccess;
    void *twice = nullptr, *again = nullptr, *once = nullptr, *closed = nullptr;
    PLANT("ipc_memory", twice, shared_sizes[0], cudaIpcOpenMemHandle(&twice, handle[0], peers));
    // Opened again in the same context: the same mapping, one more reference.
    CLEAN(cudaIpcOpenMemHandle(&again, handle[0], peers));
    if (again != twice) {
        std::fprintf(stderr, "the second open mapped %p, the first %p\n", again, twice);
        failed = 1;
    }
    CLEAN(cudaIpcCloseMemHandle(again));
    PLANT("ipc_memory", once, shared_sizes[1], cudaIpcOpenMemHandle(&once, handle[1], peers));
    CLEAN(cudaIpcOpenMemHandle(&closed, handle[2], peers));
    CLEAN(cudaIpcCloseMemHandle(closed));
    std::printf("%s\n", failed ? "failed" : "end");
    return failed ? 1 : 0;
}

// Threads that churn at once, so the hook's maps and CUPTI's callbacks
// see creates and destroys from many threads on the real driver: any
// destroy lost or misattributed shows as a leak or a misuse.
enum { CHURN_THREADS = 8, CHURN_ROUNDS = 300 };

static void *churn(void *argument)
{
    const unsigned index = (unsigned)(uintptr_t)argument;
    for (int round = 0; round < CHURN_ROUNDS && !failed; round++) {
        cudaStream_t stream = nullptr;
        cudaEvent_t event = nullptr;
        void *memory = nullptr, *async = nullptr;
        CLEAN(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CLEAN(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
        CLEAN(cudaMalloc(&memory, 256 + 8 * index));
        CLEAN(cudaMallocAsync(&async, 128, stream));
        CLEAN(cudaEventRecord(event, stream));
        CLEAN(cudaFreeAsync(async, stream));
        CLEAN(cudaEventSynchronize(event));
        CLEAN(cudaFree(memory));
        CLEAN(cudaEventDestroy(event));
        CLEAN(cudaStreamDestroy(stream));
    }
    // One line per leak, each printed whole (stdio locks the stream).
    cudaEvent_t event = nullptr;
    void *memory = nullptr;
    PLANT("CUevent", event, 0, cudaEventCreate(&event));
    PLANT("CUdeviceptr", memory, 1024 + 16 * index, cudaMalloc(&memory, 1024 + 16 * index));
    return nullptr;
}

static int threads()
{
    pthread_t thread[CHURN_THREADS];
    for (unsigned i = 0; i < CHURN_THREADS; i++)
        if (pthread_create(&thread[i], nullptr, churn, (void *)(uintptr_t)i)) {
            std::fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    for (unsigned i = 0; i < CHURN_THREADS; i++)
        pthread_join(thread[i], nullptr);
    std::printf("%s\n", failed ? "failed" : "end");
    return failed ? 1 : 0;
}

// cudaDeviceReset ends the primary context and all it owns: those
// objects are not leaks at exit; the one made after it is.
static int reset()
{
    void *memory = nullptr, *pinned = nullptr, *after = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t event = nullptr;
    CLEAN(cudaMalloc(&memory, 4096));
    CLEAN(cudaMallocHost(&pinned, 1000));
    CLEAN(cudaStreamCreate(&stream));
    CLEAN(cudaEventCreate(&event));
    std::printf("dropped CUdeviceptr 0x%llx 4096\n", (unsigned long long)(uintptr_t)memory);
    std::printf("dropped host_pinned 0x%llx 1000\n", (unsigned long long)(uintptr_t)pinned);
    std::printf("dropped CUstream 0x%llx 0\n", (unsigned long long)(uintptr_t)stream);
    std::printf("dropped CUevent 0x%llx 0\n", (unsigned long long)(uintptr_t)event);
    CLEAN(cudaDeviceReset());
    PLANT("CUdeviceptr", after, 2048, cudaMalloc(&after, 2048));
    std::printf("%s\n", failed ? "failed" : "end");
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !std::strcmp(argv[1], "share"))
        return share(argv[2]);
    if (argc == 3 && !std::strcmp(argv[1], "open"))
        return open_shared(argv[2]);
    if (argc == 2 && !std::strcmp(argv[1], "threads"))
        return threads();
    if (argc == 2 && !std::strcmp(argv[1], "reset"))
        return reset();
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
    share_physical_memory();

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
