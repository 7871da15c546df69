/*
 * A fake CUDA driver, libcuda.so.1, for tests and benchmarks on machines
 * without a GPU. It implements the subset of the driver API that
 * livetrack tracks, plus what a driver-API program needs around it (cuInit,
 * devices, current contexts, cuGetProcAddress), with the driver's rules
 * where livetrack depends on them:
 *
 *  - handles are checked: a destroyed or unknown handle gets an error, as
 *    a well-behaved driver answers, never a crash;
 *  - allocations are real host memory of the size asked for;
 *  - destroying a context (or resetting a primary context, or releasing
 *    its last reference) destroys everything made in it;
 *  - physical memory lives while referenced or mapped;
 *  - cuGetProcAddress answers a base name and CUDA version with the newest
 *    ABI not newer than the version, and the _ptsz twin for per-thread
 *    default streams; cuInit loads CUDA_INJECTION64_PATH and calls its
 *    InitializeInjection, like the real driver.
 *
 * It is linked with -Bsymbolic, so its calls to its own functions never
 * reach an interposer. Every live object stays in one table, so memory a
 * test leaks on purpose is still reachable for LeakSanitizer.
 *
 * Test controls (declared in fake_cuda.h): fake_cuda_fail_next() makes
 * the next call of one function fail without effect,
 * fake_cuda_live_objects() counts what is live, fake_cuda_direct()
 * hands out the fake's own functions past any interposer, and
 * fake_cuda_recycle_modules() hands out the handles of destroyed modules
 * again at once (a real driver may; malloc under ASan seldom does).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fake_cuda.h"

/* The driver version the fake reports: newer than the 13.0 headers, as a
 * newer driver under an older toolkit is. */
#define FAKE_DRIVER_VERSION 13020
#define FAKE_DEVICE_COUNT 2
#define MAX_CURRENT_CONTEXTS 16

#define EXPORT __attribute__((visibility("default")))
/* Define a driver function under its exact ABI name; the C name differs,
 * so cuda.h's macros (cuMemAlloc -> cuMemAlloc_v2) never rename it. */
#define FAKE_FUNCTION(symbol, params)                               \
    EXPORT CUresult CUDAAPI fake_##symbol params __asm__(#symbol); \
    CUresult CUDAAPI fake_##symbol params

/* ---- objects ------------------------------------------------------------- */

typedef enum kind {
    KIND_CONTEXT = 1,
    KIND_STREAM,
    KIND_EVENT,
    KIND_MODULE,
    KIND_LIBRARY,
    KIND_LINK,
    KIND_GRAPH,
    KIND_GRAPH_EXEC,
    KIND_POOL,
    KIND_ARRAY,
    KIND_MIPMAP,
    KIND_TEXTURE,
    KIND_SURFACE,
    KIND_DEVICE_MEMORY,
    KIND_HOST_MEMORY,
    KIND_MANAGED,
    KIND_ASYNC_MEMORY,
    KIND_HOST_REGISTERED,
    KIND_RESERVATION,
    KIND_PHYSICAL,
    KIND_MAPPING,
    KIND_EXTERNAL_MEMORY,
    KIND_EXTERNAL_SEMAPHORE,
    KIND_GREEN_CONTEXT,
    KIND_IPC_MEMORY,
    KIND_GRAPH_NODE
} kind;

typedef struct object {
    kind kind;
    uint64_t handle;          /* what the program holds */
    struct object *context;   /* the context it was made in, NULL: none */
    struct object *parent;    /* pool of an allocation, physical memory of a mapping */
    void *memory;             /* allocations: the host memory handed out */
    size_t size;
    int references;           /* physical memory, primary contexts */
    int users;                /* outstanding allocations of a pool, mappings of physical memory */
    int gone;                 /* released by the program, kept for its users */
    int capturing;            /* streams */
    uint64_t capture_graph;   /* streams: the graph cuStreamBeginCaptureToGraph captures into, 0: a new one */
    int imported;             /* pools opened from another process's handle */
    int exported_as;          /* IPC mappings: which export (the handle's first byte) */
    int primary_device;       /* primary contexts: the device, else -1 */
} object;

/* All live objects: (kind, handle) -> object, open addressing. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static object **table;
static size_t table_size, table_used;
static uint64_t next_id = 1;
static object *primary[FAKE_DEVICE_COUNT];
static _Thread_local object *current[MAX_CURRENT_CONTEXTS];
static _Thread_local int current_depth;

static size_t slot_of(kind k, uint64_t handle)
{
    uint64_t h = handle ^ ((uint64_t)k << 56);
    h ^= h >> 31;
    h *= 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 17) & (table_size - 1);
}

static void table_insert(object *o);

static void table_grow(void)
{
    object **old = table;
    size_t old_size = table_size;
    table_size = table_size ? table_size * 2 : 256;
    table = calloc(table_size, sizeof *table);
    if (!table)
        abort(); /* a test fixture: failing loudly is right */
    table_used = 0;
    for (size_t i = 0; i < old_size; i++)
        if (old[i])
            table_insert(old[i]);
    free(old);
}

static void table_insert(object *o)
{
    if ((table_used + 1) * 2 > table_size)
        table_grow();
    size_t at = slot_of(o->kind, o->handle);
    while (table[at])
        at = (at + 1) & (table_size - 1);
    table[at] = o;
    table_used++;
}

static size_t table_find_slot(kind k, uint64_t handle)
{
    if (!table_size)
        return SIZE_MAX;
    for (size_t at = slot_of(k, handle); table[at]; at = (at + 1) & (table_size - 1))
        if (table[at]->kind == k && table[at]->handle == handle)
            return at;
    return SIZE_MAX;
}

static object *find(kind k, uint64_t handle)
{
    size_t at = table_find_slot(k, handle);
    return at == SIZE_MAX ? NULL : table[at];
}

static void table_remove(object *o)
{
    size_t at = table_find_slot(o->kind, o->handle);
    if (at == SIZE_MAX)
        return;
    size_t mask = table_size - 1, hole = at;
    for (size_t next = (hole + 1) & mask; table[next]; next = (next + 1) & mask) {
        size_t home = slot_of(table[next]->kind, table[next]->handle);
        if (((next - home) & mask) >= ((next - hole) & mask)) {
            table[hole] = table[next];
            hole = next;
        }
    }
    table[hole] = NULL;
    table_used--;
}

/* A new object: handles are the object's address, except for the kinds
 * the driver numbers (texture, surface, physical memory) and allocations
 * (their memory). */
/* Modules destroyed while fake_cuda_recycle_modules() is on: the next
 * modules made reuse them, newest first, so their handles come back. */
#define RECYCLED_MODULES_MAX 16
static object *recycled_modules[RECYCLED_MODULES_MAX];
static size_t recycled_module_count;
static int recycling_modules;

static object *make(kind k, object *context, size_t size)
{
    object *o = NULL;
    if (k == KIND_MODULE && recycled_module_count) {
        o = recycled_modules[--recycled_module_count];
        memset(o, 0, sizeof *o);
    } else {
        o = calloc(1, sizeof *o);
    }
    if (!o)
        return NULL;
    o->kind = k;
    o->context = context;
    o->size = size;
    o->primary_device = -1;
    switch (k) {
    case KIND_TEXTURE:
    case KIND_SURFACE:
    case KIND_PHYSICAL: o->handle = next_id++; break;
    case KIND_DEVICE_MEMORY:
    case KIND_HOST_MEMORY:
    case KIND_MANAGED:
    case KIND_ASYNC_MEMORY:
        o->memory = malloc(size ? size : 1);
        if (!o->memory) {
            free(o);
            return NULL;
        }
        o->handle = (uint64_t)(uintptr_t)o->memory;
        break;
    default: o->handle = (uint64_t)(uintptr_t)o; break;
    }
    table_insert(o);
    return o;
}

static void release_user(object *o);

static void destroy(object *o)
{
    table_remove(o);
    if (o->parent)
        release_user(o->parent);
    if (o->kind == KIND_RESERVATION)
        munmap(o->memory, o->size);
    else
        free(o->memory);
    if (o->kind == KIND_MODULE && recycling_modules && recycled_module_count < RECYCLED_MODULES_MAX) {
        recycled_modules[recycled_module_count++] = o;
        return;
    }
    free(o);
}

/* A pool or physical memory loses one user; it goes when the program
 * has released it and nothing uses it. */
static void release_user(object *o)
{
    if (--o->users == 0 && o->gone)
        destroy(o);
}

/* Everything made in `context`: collected first, as destroying moves
 * entries around in the table. */
static void destroy_contents(object *context)
{
    size_t count = 0;
    object **doomed = calloc(table_used ? table_used : 1, sizeof *doomed);
    if (!doomed)
        abort();
    for (size_t i = 0; i < table_size; i++)
        if (table[i] && table[i]->context == context && table[i] != context)
            doomed[count++] = table[i];
    for (size_t i = 0; i < count; i++)
        destroy(doomed[i]);
    free(doomed);
}

static object *current_context(void) { return current_depth ? current[current_depth - 1] : NULL; }

static void forget_current(object *context)
{
    for (int i = 0; i < current_depth; i++)
        if (current[i] == context)
            current[i] = NULL;
}

/* ---- test controls ------------------------------------------------------- */

static char fail_symbol[64];
static CUresult fail_result;

EXPORT void fake_cuda_fail_next(const char *symbol, CUresult result)
{
    pthread_mutex_lock(&lock);
    strncpy(fail_symbol, symbol ? symbol : "", sizeof fail_symbol - 1);
    fail_result = result;
    pthread_mutex_unlock(&lock);
}

EXPORT void fake_cuda_recycle_modules(int on)
{
    pthread_mutex_lock(&lock);
    recycling_modules = on;
    if (!on)
        while (recycled_module_count)
            free(recycled_modules[--recycled_module_count]);
    pthread_mutex_unlock(&lock);
}

EXPORT size_t fake_cuda_live_objects(void)
{
    pthread_mutex_lock(&lock);
    size_t count = 0;
    for (size_t i = 0; i < table_size; i++)
        if (table[i] && !table[i]->gone && table[i]->primary_device < 0)
            count++;
    pthread_mutex_unlock(&lock);
    return count;
}

/* Each function body runs under the lock, after the failure control. */
#define ENTER(symbol)                                                   \
    pthread_mutex_lock(&lock);                                          \
    if (fail_symbol[0] && !strcmp(fail_symbol, #symbol)) {              \
        CUresult failed_ = fail_result;                                 \
        fail_symbol[0] = '\0';                                          \
        pthread_mutex_unlock(&lock);                                    \
        return failed_;                                                 \
    }
#define LEAVE(result)                \
    do {                             \
        CUresult result_ = (result); \
        pthread_mutex_unlock(&lock); \
        return result_;              \
    } while (0)

/* ---- initialization, devices, current context ------------------------------ */

static pthread_once_t injected = PTHREAD_ONCE_INIT;

static void load_injection(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!path || !*path)
        return;
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    int (*initialize)(void) = library ? (int (*)(void))dlsym(library, "InitializeInjection") : NULL;
    if (initialize)
        initialize();
}

FAKE_FUNCTION(cuInit, (unsigned int Flags))
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* Outside the lock: the injected library calls back into the driver. */
    pthread_once(&injected, load_injection);
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuDriverGetVersion, (int *driverVersion))
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = FAKE_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuDeviceGetCount, (int *count))
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = FAKE_DEVICE_COUNT;
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuDeviceGet, (CUdevice *device, int ordinal))
{
    if (!device || ordinal < 0 || ordinal >= FAKE_DEVICE_COUNT)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuGetErrorName, (CUresult error, const char **pStr))
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    *pStr = error == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_(fake)";
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuCtxGetCurrent, (CUcontext *pctx))
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)current_context();
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuCtxSetCurrent, (CUcontext ctx))
{
    ENTER(cuCtxSetCurrent);
    object *context = ctx ? find(KIND_CONTEXT, (uint64_t)(uintptr_t)ctx) : NULL;
    if (ctx && !context)
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    if (current_depth)
        current[current_depth - 1] = context;
    else if (context)
        current[current_depth++] = context;
    LEAVE(CUDA_SUCCESS);
}

FAKE_FUNCTION(cuCtxPushCurrent_v2, (CUcontext ctx))
{
    ENTER(cuCtxPushCurrent_v2);
    object *context = find(KIND_CONTEXT, (uint64_t)(uintptr_t)ctx);
    if (!context || current_depth == MAX_CURRENT_CONTEXTS)
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    current[current_depth++] = context;
    LEAVE(CUDA_SUCCESS);
}

FAKE_FUNCTION(cuCtxPopCurrent_v2, (CUcontext *pctx))
{
    if (!current_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    object *context = current[--current_depth];
    if (pctx)
        *pctx = (CUcontext)context;
    return CUDA_SUCCESS;
}

/* ---- contexts ------------------------------------------------------------- */

static CUresult create_context(CUcontext *pctx, CUdevice dev)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= FAKE_DEVICE_COUNT)
        return CUDA_ERROR_INVALID_DEVICE;
    if (current_depth == MAX_CURRENT_CONTEXTS)
        return CUDA_ERROR_INVALID_CONTEXT;
    object *context = make(KIND_CONTEXT, NULL, 0);
    if (!context)
        return CUDA_ERROR_OUT_OF_MEMORY;
    current[current_depth++] = context;
    *pctx = (CUcontext)context;
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev))
{
    ENTER(cuCtxCreate_v2);
    (void)flags;
    LEAVE(create_context(pctx, dev));
}

/* The CUDA 2.0 ABIs the real driver still exports under the plain names
 * (cuCtxCreate, cuCtxDestroy, cuStreamDestroy, cuEventDestroy; later
 * cuMemHostRegister of 4.0 and cuLinkCreate of 5.5) take the arguments of
 * their successors and do the same here. */
FAKE_FUNCTION(cuCtxCreate, (CUcontext *pctx, unsigned int flags, CUdevice dev))
{
    ENTER(cuCtxCreate);
    (void)flags;
    LEAVE(create_context(pctx, dev));
}

FAKE_FUNCTION(cuCtxCreate_v4, (CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev))
{
    ENTER(cuCtxCreate_v4);
    (void)ctxCreateParams;
    (void)flags;
    LEAVE(create_context(pctx, dev));
}

static CUresult destroy_context(CUcontext ctx)
{
    object *context = find(KIND_CONTEXT, (uint64_t)(uintptr_t)ctx);
    if (!context || context->primary_device >= 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    destroy_contents(context);
    forget_current(context);
    destroy(context);
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuCtxDestroy_v2, (CUcontext ctx))
{
    ENTER(cuCtxDestroy_v2);
    LEAVE(destroy_context(ctx));
}

FAKE_FUNCTION(cuCtxDestroy, (CUcontext ctx))
{
    ENTER(cuCtxDestroy);
    LEAVE(destroy_context(ctx));
}

FAKE_FUNCTION(cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev))
{
    ENTER(cuDevicePrimaryCtxRetain);
    if (!pctx)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    if (dev < 0 || dev >= FAKE_DEVICE_COUNT)
        LEAVE(CUDA_ERROR_INVALID_DEVICE);
    if (!primary[dev]) {
        /* One handle per device for the process's life, as the driver does. */
        primary[dev] = make(KIND_CONTEXT, NULL, 0);
        if (!primary[dev])
            LEAVE(CUDA_ERROR_OUT_OF_MEMORY);
        primary[dev]->primary_device = dev;
    }
    primary[dev]->references++;
    *pctx = (CUcontext)primary[dev];
    LEAVE(CUDA_SUCCESS);
}

static CUresult release_primary(CUdevice dev)
{
    if (dev < 0 || dev >= FAKE_DEVICE_COUNT)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!primary[dev] || primary[dev]->references == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (--primary[dev]->references == 0)
        destroy_contents(primary[dev]);
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuDevicePrimaryCtxRelease_v2, (CUdevice dev))
{
    ENTER(cuDevicePrimaryCtxRelease_v2);
    LEAVE(release_primary(dev));
}

/* The CUDA 7 ABI, same arguments: lets tests ask cuGetProcAddress for an
 * older version and get another function. */
FAKE_FUNCTION(cuDevicePrimaryCtxRelease, (CUdevice dev))
{
    ENTER(cuDevicePrimaryCtxRelease);
    LEAVE(release_primary(dev));
}

FAKE_FUNCTION(cuDevicePrimaryCtxReset_v2, (CUdevice dev))
{
    ENTER(cuDevicePrimaryCtxReset_v2);
    if (dev < 0 || dev >= FAKE_DEVICE_COUNT)
        LEAVE(CUDA_ERROR_INVALID_DEVICE);
    if (primary[dev])
        destroy_contents(primary[dev]);
    LEAVE(CUDA_SUCCESS);
}

/* ---- generic create and destroy ----------------------------------------------- */

/* Objects made in the current context need one. */
static CUresult make_out(kind k, int in_context, size_t size, unsigned long long *out)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    object *context = in_context ? current_context() : NULL;
    if (in_context && !context)
        return CUDA_ERROR_INVALID_CONTEXT;
    object *o = make(k, context, size);
    if (!o)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = o->handle;
    return CUDA_SUCCESS;
}

static CUresult destroy_handle(kind k, uint64_t handle)
{
    object *o = find(k, handle);
    if (!o || o->gone)
        return k == KIND_CONTEXT ? CUDA_ERROR_INVALID_CONTEXT : CUDA_ERROR_INVALID_HANDLE;
    if (o->users) { /* a pool with allocations outstanding: goes with the last */
        o->gone = 1;
        return CUDA_SUCCESS;
    }
    destroy(o);
    return CUDA_SUCCESS;
}

#define HANDLE_OUT(pointer) ((unsigned long long *)(void *)(pointer))
_Static_assert(sizeof(CUstream) == sizeof(uint64_t), "handles are 64-bit");

/* ---- streams, events, graphs --------------------------------------------------- */

FAKE_FUNCTION(cuStreamCreate, (CUstream *phStream, unsigned int Flags))
{
    ENTER(cuStreamCreate);
    (void)Flags;
    LEAVE(make_out(KIND_STREAM, 1, 0, HANDLE_OUT(phStream)));
}

FAKE_FUNCTION(cuStreamCreateWithPriority, (CUstream *phStream, unsigned int flags, int priority))
{
    ENTER(cuStreamCreateWithPriority);
    (void)flags;
    (void)priority;
    LEAVE(make_out(KIND_STREAM, 1, 0, HANDLE_OUT(phStream)));
}

FAKE_FUNCTION(cuStreamDestroy_v2, (CUstream hStream))
{
    ENTER(cuStreamDestroy_v2);
    LEAVE(destroy_handle(KIND_STREAM, (uint64_t)(uintptr_t)hStream));
}

FAKE_FUNCTION(cuStreamDestroy, (CUstream hStream))
{
    ENTER(cuStreamDestroy);
    LEAVE(destroy_handle(KIND_STREAM, (uint64_t)(uintptr_t)hStream));
}

/* Green contexts: only what their streams need. The fake models no device
 * resources, so any descriptor makes one. A green context's stream is
 * made in it, whatever context is current, and is not destroyed with any
 * context: cuStreamDestroy ends it. */
FAKE_FUNCTION(cuGreenCtxCreate, (CUgreenCtx *phCtx, CUdevResourceDesc desc, CUdevice dev, unsigned int flags))
{
    ENTER(cuGreenCtxCreate);
    (void)desc;
    if (dev < 0 || dev >= FAKE_DEVICE_COUNT)
        LEAVE(CUDA_ERROR_INVALID_DEVICE);
    if (flags != CU_GREEN_CTX_DEFAULT_STREAM)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_GREEN_CONTEXT, 0, 0, HANDLE_OUT(phCtx)));
}

FAKE_FUNCTION(cuGreenCtxDestroy, (CUgreenCtx hCtx))
{
    ENTER(cuGreenCtxDestroy);
    LEAVE(destroy_handle(KIND_GREEN_CONTEXT, (uint64_t)(uintptr_t)hCtx));
}

FAKE_FUNCTION(cuGreenCtxStreamCreate, (CUstream *phStream, CUgreenCtx greenCtx, unsigned int flags, int priority))
{
    ENTER(cuGreenCtxStreamCreate);
    (void)priority;
    if (!find(KIND_GREEN_CONTEXT, (uint64_t)(uintptr_t)greenCtx) || !(flags & CU_STREAM_NON_BLOCKING))
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_STREAM, 0, 0, HANDLE_OUT(phStream)));
}

FAKE_FUNCTION(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode))
{
    ENTER(cuStreamBeginCapture_v2);
    (void)mode;
    object *stream = find(KIND_STREAM, (uint64_t)(uintptr_t)hStream);
    if (!stream || stream->capturing)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    stream->capturing = 1;
    LEAVE(CUDA_SUCCESS);
}

/* As the real driver: capturing into the program's graph, and
 * cuStreamEndCapture hands that same graph back. */
FAKE_FUNCTION(cuStreamBeginCaptureToGraph, (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                            const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                            CUstreamCaptureMode mode))
{
    ENTER(cuStreamBeginCaptureToGraph);
    (void)dependencies;
    (void)dependencyData;
    (void)numDependencies;
    (void)mode;
    object *stream = find(KIND_STREAM, (uint64_t)(uintptr_t)hStream);
    if (!stream || stream->capturing || !find(KIND_GRAPH, (uint64_t)(uintptr_t)hGraph))
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    stream->capturing = 1;
    stream->capture_graph = (uint64_t)(uintptr_t)hGraph;
    LEAVE(CUDA_SUCCESS);
}

static CUresult end_capture(CUstream hStream, CUgraph *phGraph)
{
    object *stream = find(KIND_STREAM, (uint64_t)(uintptr_t)hStream);
    if (!stream || !stream->capturing)
        return CUDA_ERROR_ILLEGAL_STATE;
    stream->capturing = 0;
    if (stream->capture_graph) {
        if (!phGraph)
            return CUDA_ERROR_INVALID_VALUE;
        *phGraph = (CUgraph)(uintptr_t)stream->capture_graph;
        stream->capture_graph = 0;
        return CUDA_SUCCESS;
    }
    return make_out(KIND_GRAPH, 0, 0, HANDLE_OUT(phGraph));
}

FAKE_FUNCTION(cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph))
{
    ENTER(cuStreamEndCapture);
    LEAVE(end_capture(hStream, phGraph));
}

FAKE_FUNCTION(cuStreamEndCapture_ptsz, (CUstream hStream, CUgraph *phGraph))
{
    ENTER(cuStreamEndCapture_ptsz);
    LEAVE(end_capture(hStream, phGraph));
}

FAKE_FUNCTION(cuEventCreate, (CUevent *phEvent, unsigned int Flags))
{
    ENTER(cuEventCreate);
    (void)Flags;
    LEAVE(make_out(KIND_EVENT, 1, 0, HANDLE_OUT(phEvent)));
}

/* An event another process exported with cuIpcGetEventHandle, opened in
 * the current context; cuEventDestroy ends it. The fake has no other
 * process, so any handle opens. */
FAKE_FUNCTION(cuIpcOpenEventHandle, (CUevent *phEvent, CUipcEventHandle handle))
{
    ENTER(cuIpcOpenEventHandle);
    (void)handle;
    LEAVE(make_out(KIND_EVENT, 1, 0, HANDLE_OUT(phEvent)));
}

/* Memory another process exported with cuIpcGetMemHandle, mapped in the
 * current context until cuIpcCloseMemHandle (cuMemFree refuses it). The
 * fake has no other process, so any handle opens; its first byte names
 * the exported allocation. A handle the context has open already gives
 * the same pointer and one more reference, as the driver does. */
static CUresult open_memory(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int flags)
{
    if (flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
        return CUDA_ERROR_INVALID_VALUE;
    if (!pdptr)
        return CUDA_ERROR_INVALID_VALUE;
    object *context = current_context();
    for (size_t i = 0; i < table_size; i++) {
        object *o = table[i];
        if (o && o->kind == KIND_IPC_MEMORY && o->context == context && o->exported_as == handle.reserved[0]) {
            o->references++;
            *pdptr = o->handle;
            return CUDA_SUCCESS;
        }
    }
    /* The exporter's allocation: the fake maps no memory, but says a
     * size for each export, as cuMemGetAddressRange does of a mapping. */
    size_t size = FAKE_IPC_BYTES_PER_EXPORT * (1 + (unsigned char)handle.reserved[0]);
    CUresult result = make_out(KIND_IPC_MEMORY, 1, size, pdptr);
    if (result == CUDA_SUCCESS) {
        object *o = find(KIND_IPC_MEMORY, *pdptr);
        o->exported_as = handle.reserved[0];
        o->references = 1;
    }
    return result;
}

static CUresult close_memory(CUdeviceptr dptr)
{
    object *o = find(KIND_IPC_MEMORY, dptr);
    if (!o)
        return CUDA_ERROR_INVALID_HANDLE;
    if (--o->references == 0)
        destroy(o);
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuIpcOpenMemHandle, (CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags))
{
    ENTER(cuIpcOpenMemHandle);
    LEAVE(open_memory(pdptr, handle, Flags));
}

FAKE_FUNCTION(cuIpcOpenMemHandle_v2, (CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags))
{
    ENTER(cuIpcOpenMemHandle_v2);
    LEAVE(open_memory(pdptr, handle, Flags));
}

FAKE_FUNCTION(cuIpcCloseMemHandle, (CUdeviceptr dptr))
{
    ENTER(cuIpcCloseMemHandle);
    LEAVE(close_memory(dptr));
}

FAKE_FUNCTION(cuEventDestroy_v2, (CUevent hEvent))
{
    ENTER(cuEventDestroy_v2);
    LEAVE(destroy_handle(KIND_EVENT, (uint64_t)(uintptr_t)hEvent));
}

FAKE_FUNCTION(cuEventDestroy, (CUevent hEvent))
{
    ENTER(cuEventDestroy);
    LEAVE(destroy_handle(KIND_EVENT, (uint64_t)(uintptr_t)hEvent));
}

FAKE_FUNCTION(cuGraphCreate, (CUgraph *phGraph, unsigned int flags))
{
    ENTER(cuGraphCreate);
    if (flags)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_GRAPH, 0, 0, HANDLE_OUT(phGraph)));
}

FAKE_FUNCTION(cuGraphClone, (CUgraph *phGraphClone, CUgraph originalGraph))
{
    ENTER(cuGraphClone);
    if (!find(KIND_GRAPH, (uint64_t)(uintptr_t)originalGraph))
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_GRAPH, 0, 0, HANDLE_OUT(phGraphClone)));
}

FAKE_FUNCTION(cuGraphDestroy, (CUgraph hGraph))
{
    ENTER(cuGraphDestroy);
    object *graph = find(KIND_GRAPH, (uint64_t)(uintptr_t)hGraph);
    if (graph)
        destroy_contents(graph); /* its nodes */
    LEAVE(destroy_handle(KIND_GRAPH, (uint64_t)(uintptr_t)hGraph));
}

static CUresult instantiate(CUgraphExec *phGraphExec, CUgraph hGraph)
{
    if (!find(KIND_GRAPH, (uint64_t)(uintptr_t)hGraph))
        return CUDA_ERROR_INVALID_VALUE;
    return make_out(KIND_GRAPH_EXEC, 1, 0, HANDLE_OUT(phGraphExec));
}

FAKE_FUNCTION(cuGraphInstantiateWithFlags, (CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags))
{
    ENTER(cuGraphInstantiateWithFlags);
    (void)flags;
    LEAVE(instantiate(phGraphExec, hGraph));
}

FAKE_FUNCTION(cuGraphInstantiate_v2, (CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                      char *logBuffer, size_t bufferSize))
{
    ENTER(cuGraphInstantiate_v2);
    (void)phErrorNode;
    if (logBuffer && bufferSize)
        logBuffer[0] = '\0';
    LEAVE(instantiate(phGraphExec, hGraph));
}

FAKE_FUNCTION(cuGraphInstantiateWithParams, (CUgraphExec *phGraphExec, CUgraph hGraph,
                                             CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams))
{
    ENTER(cuGraphInstantiateWithParams);
    (void)instantiateParams;
    LEAVE(instantiate(phGraphExec, hGraph));
}

FAKE_FUNCTION(cuGraphExecDestroy, (CUgraphExec hGraphExec))
{
    ENTER(cuGraphExecDestroy);
    LEAVE(destroy_handle(KIND_GRAPH_EXEC, (uint64_t)(uintptr_t)hGraphExec));
}

/* ---- modules, libraries, linker ------------------------------------------------- */

FAKE_FUNCTION(cuModuleLoad, (CUmodule *module, const char *fname))
{
    ENTER(cuModuleLoad);
    if (!fname)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_MODULE, 1, 0, HANDLE_OUT(module)));
}

FAKE_FUNCTION(cuModuleLoadData, (CUmodule *module, const void *image))
{
    ENTER(cuModuleLoadData);
    if (!image)
        LEAVE(CUDA_ERROR_INVALID_IMAGE);
    LEAVE(make_out(KIND_MODULE, 1, 0, HANDLE_OUT(module)));
}

FAKE_FUNCTION(cuModuleUnload, (CUmodule hmod))
{
    ENTER(cuModuleUnload);
    LEAVE(destroy_handle(KIND_MODULE, (uint64_t)(uintptr_t)hmod));
}

FAKE_FUNCTION(cuLibraryLoadData, (CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                  void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                                  void **libraryOptionValues, unsigned int numLibraryOptions))
{
    ENTER(cuLibraryLoadData);
    (void)jitOptions;
    (void)jitOptionsValues;
    (void)numJitOptions;
    (void)libraryOptions;
    (void)libraryOptionValues;
    (void)numLibraryOptions;
    if (!code)
        LEAVE(CUDA_ERROR_INVALID_IMAGE);
    LEAVE(make_out(KIND_LIBRARY, 0, 0, HANDLE_OUT(library)));
}

FAKE_FUNCTION(cuLibraryUnload, (CUlibrary library))
{
    ENTER(cuLibraryUnload);
    LEAVE(destroy_handle(KIND_LIBRARY, (uint64_t)(uintptr_t)library));
}

FAKE_FUNCTION(cuLinkCreate_v2, (unsigned int numOptions, CUjit_option *options, void **optionValues,
                                CUlinkState *stateOut))
{
    ENTER(cuLinkCreate_v2);
    (void)numOptions;
    (void)options;
    (void)optionValues;
    LEAVE(make_out(KIND_LINK, 1, 0, HANDLE_OUT(stateOut)));
}

FAKE_FUNCTION(cuLinkCreate, (unsigned int numOptions, CUjit_option *options, void **optionValues,
                             CUlinkState *stateOut))
{
    ENTER(cuLinkCreate);
    (void)numOptions;
    (void)options;
    (void)optionValues;
    LEAVE(make_out(KIND_LINK, 1, 0, HANDLE_OUT(stateOut)));
}

FAKE_FUNCTION(cuLinkDestroy, (CUlinkState state))
{
    ENTER(cuLinkDestroy);
    LEAVE(destroy_handle(KIND_LINK, (uint64_t)(uintptr_t)state));
}

/* ---- arrays, textures, surfaces --------------------------------------------------- */

FAKE_FUNCTION(cuArrayCreate_v2, (CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray))
{
    ENTER(cuArrayCreate_v2);
    if (!pAllocateArray || !pAllocateArray->Width)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_ARRAY, 1, 0, HANDLE_OUT(pHandle)));
}

FAKE_FUNCTION(cuArray3DCreate_v2, (CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray))
{
    ENTER(cuArray3DCreate_v2);
    if (!pAllocateArray || !pAllocateArray->Width)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_ARRAY, 1, 0, HANDLE_OUT(pHandle)));
}

FAKE_FUNCTION(cuArrayDestroy, (CUarray hArray))
{
    ENTER(cuArrayDestroy);
    LEAVE(destroy_handle(KIND_ARRAY, (uint64_t)(uintptr_t)hArray));
}

FAKE_FUNCTION(cuMipmappedArrayCreate, (CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                                       unsigned int numMipmapLevels))
{
    ENTER(cuMipmappedArrayCreate);
    if (!pMipmappedArrayDesc || !numMipmapLevels)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_MIPMAP, 1, 0, HANDLE_OUT(pHandle)));
}

FAKE_FUNCTION(cuMipmappedArrayDestroy, (CUmipmappedArray hMipmappedArray))
{
    ENTER(cuMipmappedArrayDestroy);
    LEAVE(destroy_handle(KIND_MIPMAP, (uint64_t)(uintptr_t)hMipmappedArray));
}

FAKE_FUNCTION(cuTexObjectCreate, (CUtexObject *pTexObject, const CUDA_RESOURCE_DESC *pResDesc,
                                  const CUDA_TEXTURE_DESC *pTexDesc, const CUDA_RESOURCE_VIEW_DESC *pResViewDesc))
{
    ENTER(cuTexObjectCreate);
    (void)pResViewDesc;
    if (!pResDesc || !pTexDesc)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_TEXTURE, 1, 0, pTexObject));
}

FAKE_FUNCTION(cuTexObjectDestroy, (CUtexObject texObject))
{
    ENTER(cuTexObjectDestroy);
    LEAVE(destroy_handle(KIND_TEXTURE, texObject));
}

FAKE_FUNCTION(cuSurfObjectCreate, (CUsurfObject *pSurfObject, const CUDA_RESOURCE_DESC *pResDesc))
{
    ENTER(cuSurfObjectCreate);
    if (!pResDesc)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_SURFACE, 1, 0, pSurfObject));
}

FAKE_FUNCTION(cuSurfObjectDestroy, (CUsurfObject surfObject))
{
    ENTER(cuSurfObjectDestroy);
    LEAVE(destroy_handle(KIND_SURFACE, surfObject));
}

/* ---- allocations ------------------------------------------------------------------ */

static CUresult allocate(kind k, int in_context, size_t bytes, unsigned long long *out)
{
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (bytes > ((size_t)1 << 40))
        return CUDA_ERROR_OUT_OF_MEMORY;
    return make_out(k, in_context, bytes, out);
}

/* Device memory is freed by cuMemFree and cuMemFreeAsync alike. */
static CUresult free_device(uint64_t pointer)
{
    static const kind device_kinds[] = {KIND_DEVICE_MEMORY, KIND_MANAGED, KIND_ASYNC_MEMORY};
    for (size_t i = 0; i < sizeof device_kinds / sizeof device_kinds[0]; i++) {
        object *o = find(device_kinds[i], pointer);
        if (o) {
            destroy(o);
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_INVALID_VALUE;
}

FAKE_FUNCTION(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize))
{
    ENTER(cuMemAlloc_v2);
    LEAVE(allocate(KIND_DEVICE_MEMORY, 1, bytesize, dptr));
}

/* The CUDA 2.x ABI (32-bit sizes): cuGetProcAddress hands it out for old
 * versions, which livetrack does not wrap. */
FAKE_FUNCTION(cuMemAlloc, (unsigned int *dptr, unsigned int bytesize))
{
    ENTER(cuMemAlloc);
    unsigned long long pointer = 0;
    CUresult result = allocate(KIND_DEVICE_MEMORY, 1, bytesize, &pointer);
    if (result == CUDA_SUCCESS && dptr)
        *dptr = (unsigned int)pointer; /* truncated, as that ABI was: tests never use it */
    LEAVE(result);
}

/* A CUDA 13.1 twin with cuMemAlloc_v2's arguments: what a newer driver
 * may hand out for a version newer than livetrack's headers. */
static CUresult CUDAAPI newer_cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
    ENTER(newer_cuMemAlloc);
    LEAVE(allocate(KIND_DEVICE_MEMORY, 1, bytesize, dptr));
}

FAKE_FUNCTION(cuMemAllocPitch_v2, (CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                   unsigned int ElementSizeBytes))
{
    ENTER(cuMemAllocPitch_v2);
    int element_ok = ElementSizeBytes == 4 || ElementSizeBytes == 8 || ElementSizeBytes == 16;
    if (!pPitch || !WidthInBytes || !Height || !element_ok)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    size_t pitch = (WidthInBytes + 511) & ~(size_t)511;
    CUresult result = allocate(KIND_DEVICE_MEMORY, 1, pitch * Height, dptr);
    if (result == CUDA_SUCCESS)
        *pPitch = pitch;
    LEAVE(result);
}

FAKE_FUNCTION(cuMemFree_v2, (CUdeviceptr dptr))
{
    ENTER(cuMemFree_v2);
    LEAVE(free_device(dptr));
}

/* The allocation a device pointer starts (the fake's pointers are exact:
 * livetrack asks only of the pointers calls hand out). */
FAKE_FUNCTION(cuMemGetAddressRange_v2, (CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr))
{
    ENTER(cuMemGetAddressRange_v2);
    static const kind device_pointers[] = {KIND_DEVICE_MEMORY, KIND_MANAGED, KIND_ASYNC_MEMORY, KIND_IPC_MEMORY};
    for (size_t i = 0; i < sizeof device_pointers / sizeof device_pointers[0]; i++) {
        object *o = find(device_pointers[i], dptr);
        if (o && !o->gone) {
            if (pbase)
                *pbase = o->handle;
            if (psize)
                *psize = o->size;
            LEAVE(CUDA_SUCCESS);
        }
    }
    LEAVE(CUDA_ERROR_NOT_FOUND);
}

FAKE_FUNCTION(cuMemAllocHost_v2, (void **pp, size_t bytesize))
{
    ENTER(cuMemAllocHost_v2);
    LEAVE(allocate(KIND_HOST_MEMORY, 1, bytesize, HANDLE_OUT(pp)));
}

FAKE_FUNCTION(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags))
{
    ENTER(cuMemHostAlloc);
    (void)Flags;
    LEAVE(allocate(KIND_HOST_MEMORY, 1, bytesize, HANDLE_OUT(pp)));
}

FAKE_FUNCTION(cuMemFreeHost, (void *p))
{
    ENTER(cuMemFreeHost);
    object *o = find(KIND_HOST_MEMORY, (uint64_t)(uintptr_t)p);
    if (!o)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    destroy(o);
    LEAVE(CUDA_SUCCESS);
}

FAKE_FUNCTION(cuMemAllocManaged, (CUdeviceptr *dptr, size_t bytesize, unsigned int flags))
{
    ENTER(cuMemAllocManaged);
    (void)flags;
    LEAVE(allocate(KIND_MANAGED, 1, bytesize, dptr));
}

static CUresult allocate_from_pool(CUdeviceptr *dptr, size_t bytesize, object *pool)
{
    CUresult result = allocate(KIND_ASYNC_MEMORY, 0, bytesize, dptr);
    if (result == CUDA_SUCCESS && pool) {
        find(KIND_ASYNC_MEMORY, *dptr)->parent = pool;
        pool->users++;
    }
    return result;
}

FAKE_FUNCTION(cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream))
{
    ENTER(cuMemAllocAsync);
    (void)hStream;
    LEAVE(allocate_from_pool(dptr, bytesize, NULL));
}

FAKE_FUNCTION(cuMemAllocAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream))
{
    ENTER(cuMemAllocAsync_ptsz);
    (void)hStream;
    LEAVE(allocate_from_pool(dptr, bytesize, NULL));
}

FAKE_FUNCTION(cuMemPoolCreate, (CUmemoryPool *pool, const CUmemPoolProps *poolProps))
{
    ENTER(cuMemPoolCreate);
    if (!poolProps)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_POOL, 0, 0, HANDLE_OUT(pool)));
}

/* Another process's pool, opened from its shareable handle (the fake has
 * no other process: any handle of a real handle type opens). Imported
 * pools make no allocations; cuMemPoolImportPointer takes the exporter's
 * from them. */
FAKE_FUNCTION(cuMemPoolImportFromShareableHandle, (CUmemoryPool *pool_out, void *handle,
                                                   CUmemAllocationHandleType handleType, unsigned long long flags))
{
    ENTER(cuMemPoolImportFromShareableHandle);
    (void)handle;
    (void)flags;
    if (handleType == CU_MEM_HANDLE_TYPE_NONE)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    CUresult result = make_out(KIND_POOL, 0, 0, HANDLE_OUT(pool_out));
    if (result == CUDA_SUCCESS)
        find(KIND_POOL, (uint64_t)(uintptr_t)*pool_out)->imported = 1;
    LEAVE(result);
}

/* An allocation of the exporting process, from an imported pool: its
 * size is the exporter's (a fixed one here). */

FAKE_FUNCTION(cuMemPoolImportPointer, (CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *shareData))
{
    ENTER(cuMemPoolImportPointer);
    object *o = find(KIND_POOL, (uint64_t)(uintptr_t)pool);
    if (!o || o->gone || !o->imported || !shareData)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(allocate_from_pool(ptr_out, FAKE_IMPORTED_POINTER_BYTES, o));
}

FAKE_FUNCTION(cuMemPoolDestroy, (CUmemoryPool pool))
{
    ENTER(cuMemPoolDestroy);
    LEAVE(destroy_handle(KIND_POOL, (uint64_t)(uintptr_t)pool));
}

FAKE_FUNCTION(cuMemAllocFromPoolAsync, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream))
{
    ENTER(cuMemAllocFromPoolAsync);
    (void)hStream;
    object *o = find(KIND_POOL, (uint64_t)(uintptr_t)pool);
    if (!o || o->gone || o->imported)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(allocate_from_pool(dptr, bytesize, o));
}

FAKE_FUNCTION(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream))
{
    ENTER(cuMemFreeAsync);
    (void)hStream;
    LEAVE(free_device(dptr));
}

FAKE_FUNCTION(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream))
{
    ENTER(cuMemFreeAsync_ptsz);
    (void)hStream;
    LEAVE(free_device(dptr));
}

/* A memory allocation node (a node is the graph's: it goes with it). The
 * driver gives the allocation its address when the node is added, and
 * its memory when the graph runs; the fake runs no graphs, so the memory
 * is there at once, as after a launch. A free node frees it in the graph,
 * or the program outside it with cuMemFree or cuMemFreeAsync. */
FAKE_FUNCTION(cuGraphAddMemAllocNode, (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                       size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams))
{
    ENTER(cuGraphAddMemAllocNode);
    (void)dependencies;
    object *graph = find(KIND_GRAPH, (uint64_t)(uintptr_t)hGraph);
    if (!graph || !phGraphNode || !nodeParams || (numDependencies && !dependencies))
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    CUresult result = allocate(KIND_ASYNC_MEMORY, 0, nodeParams->bytesize, &nodeParams->dptr);
    if (result != CUDA_SUCCESS)
        LEAVE(result);
    object *node = make(KIND_GRAPH_NODE, graph, 0);
    if (!node)
        LEAVE(CUDA_ERROR_OUT_OF_MEMORY);
    *phGraphNode = (CUgraphNode)node;
    LEAVE(CUDA_SUCCESS);
}

static CUresult register_host(void *p, size_t bytesize)
{
    if (!p || !bytesize || find(KIND_HOST_REGISTERED, (uint64_t)(uintptr_t)p))
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    object *context = current_context();
    if (!context)
        return CUDA_ERROR_INVALID_CONTEXT;
    object *o = calloc(1, sizeof *o);
    if (!o)
        return CUDA_ERROR_OUT_OF_MEMORY;
    o->kind = KIND_HOST_REGISTERED;
    o->handle = (uint64_t)(uintptr_t)p;
    o->context = context;
    o->size = bytesize;
    o->primary_device = -1;
    table_insert(o);
    return CUDA_SUCCESS;
}

FAKE_FUNCTION(cuMemHostRegister_v2, (void *p, size_t bytesize, unsigned int Flags))
{
    ENTER(cuMemHostRegister_v2);
    (void)Flags;
    LEAVE(register_host(p, bytesize));
}

FAKE_FUNCTION(cuMemHostRegister, (void *p, size_t bytesize, unsigned int Flags))
{
    ENTER(cuMemHostRegister);
    (void)Flags;
    LEAVE(register_host(p, bytesize));
}

FAKE_FUNCTION(cuMemHostUnregister, (void *p))
{
    ENTER(cuMemHostUnregister);
    object *o = find(KIND_HOST_REGISTERED, (uint64_t)(uintptr_t)p);
    if (!o)
        LEAVE(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    destroy(o);
    LEAVE(CUDA_SUCCESS);
}

/* ---- external memory and semaphores --------------------------------------------------- */

/* Memory and semaphores another API made, imported into the current
 * context. The fake has no other API: any descriptor of a size opens. A
 * buffer or mipmapped array mapped from external memory is the program's
 * to free (cuMemFree, cuMipmappedArrayDestroy), before or after
 * cuDestroyExternalMemory. */
FAKE_FUNCTION(cuImportExternalMemory, (CUexternalMemory *extMem_out,
                                       const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *memHandleDesc))
{
    ENTER(cuImportExternalMemory);
    if (!memHandleDesc || !memHandleDesc->size)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_EXTERNAL_MEMORY, 1, memHandleDesc->size, HANDLE_OUT(extMem_out)));
}

FAKE_FUNCTION(cuExternalMemoryGetMappedBuffer, (CUdeviceptr *devPtr, CUexternalMemory extMem,
                                                const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *bufferDesc))
{
    ENTER(cuExternalMemoryGetMappedBuffer);
    object *memory = find(KIND_EXTERNAL_MEMORY, (uint64_t)(uintptr_t)extMem);
    if (!memory || !bufferDesc || bufferDesc->offset + bufferDesc->size > memory->size)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(allocate(KIND_DEVICE_MEMORY, 1, bufferDesc->size, devPtr));
}

FAKE_FUNCTION(cuExternalMemoryGetMappedMipmappedArray, (CUmipmappedArray *mipmap, CUexternalMemory extMem,
                                                        const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC *mipmapDesc))
{
    ENTER(cuExternalMemoryGetMappedMipmappedArray);
    object *memory = find(KIND_EXTERNAL_MEMORY, (uint64_t)(uintptr_t)extMem);
    if (!memory || !mipmapDesc || !mipmapDesc->numLevels || mipmapDesc->offset >= memory->size)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_MIPMAP, 1, 0, HANDLE_OUT(mipmap)));
}

FAKE_FUNCTION(cuDestroyExternalMemory, (CUexternalMemory extMem))
{
    ENTER(cuDestroyExternalMemory);
    LEAVE(destroy_handle(KIND_EXTERNAL_MEMORY, (uint64_t)(uintptr_t)extMem));
}

FAKE_FUNCTION(cuImportExternalSemaphore, (CUexternalSemaphore *extSem_out,
                                          const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC *semHandleDesc))
{
    ENTER(cuImportExternalSemaphore);
    if (!semHandleDesc)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(make_out(KIND_EXTERNAL_SEMAPHORE, 1, 0, HANDLE_OUT(extSem_out)));
}

FAKE_FUNCTION(cuDestroyExternalSemaphore, (CUexternalSemaphore extSem))
{
    ENTER(cuDestroyExternalSemaphore);
    LEAVE(destroy_handle(KIND_EXTERNAL_SEMAPHORE, (uint64_t)(uintptr_t)extSem));
}

/* ---- virtual memory ----------------------------------------------------------------- */

FAKE_FUNCTION(cuMemAddressReserve, (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                    unsigned long long flags))
{
    ENTER(cuMemAddressReserve);
    (void)alignment;
    (void)addr;
    (void)flags;
    if (!ptr || !size)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    void *range = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (range == MAP_FAILED)
        LEAVE(CUDA_ERROR_OUT_OF_MEMORY);
    object *o = calloc(1, sizeof *o);
    if (!o) {
        munmap(range, size);
        LEAVE(CUDA_ERROR_OUT_OF_MEMORY);
    }
    o->kind = KIND_RESERVATION;
    o->memory = range;
    o->handle = (uint64_t)(uintptr_t)range;
    o->size = size;
    o->primary_device = -1;
    table_insert(o);
    *ptr = o->handle;
    LEAVE(CUDA_SUCCESS);
}

FAKE_FUNCTION(cuMemAddressFree, (CUdeviceptr ptr, size_t size))
{
    ENTER(cuMemAddressFree);
    object *o = find(KIND_RESERVATION, ptr);
    if (!o || o->size != size)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    destroy(o);
    LEAVE(CUDA_SUCCESS);
}

FAKE_FUNCTION(cuMemCreate, (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                            unsigned long long flags))
{
    ENTER(cuMemCreate);
    (void)flags;
    if (!handle || !prop || !size)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    object *o = make(KIND_PHYSICAL, NULL, size);
    if (!o)
        LEAVE(CUDA_ERROR_OUT_OF_MEMORY);
    o->references = 1;
    *handle = o->handle;
    LEAVE(CUDA_SUCCESS);
}

/* A multicast object is a CUmemGenericAllocationHandle as well: cuMemRelease
 * frees it and cuMemMap maps it, so it is physical memory here. */
FAKE_FUNCTION(cuMulticastCreate, (CUmemGenericAllocationHandle *mcHandle, const CUmulticastObjectProp *prop))
{
    ENTER(cuMulticastCreate);
    if (!mcHandle || !prop || !prop->numDevices || !prop->size)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    object *o = make(KIND_PHYSICAL, NULL, prop->size);
    if (!o)
        LEAVE(CUDA_ERROR_OUT_OF_MEMORY);
    o->references = 1;
    *mcHandle = o->handle;
    LEAVE(CUDA_SUCCESS);
}

FAKE_FUNCTION(cuMemRelease, (CUmemGenericAllocationHandle handle))
{
    ENTER(cuMemRelease);
    object *o = find(KIND_PHYSICAL, handle);
    if (!o || o->gone)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    if (--o->references == 0) {
        o->gone = 1;
        if (!o->users)
            destroy(o);
    }
    LEAVE(CUDA_SUCCESS);
}

static object *reservation_holding(uint64_t start, uint64_t size)
{
    for (size_t i = 0; i < table_size; i++) {
        object *o = table[i];
        if (o && o->kind == KIND_RESERVATION && start >= o->handle && start + size <= o->handle + o->size)
            return o;
    }
    return NULL;
}

FAKE_FUNCTION(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                         unsigned long long flags))
{
    ENTER(cuMemMap);
    (void)flags;
    object *physical = find(KIND_PHYSICAL, handle);
    if (!physical || physical->gone || offset + size > physical->size || !reservation_holding(ptr, size) ||
        find(KIND_MAPPING, ptr))
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    object *mapping = calloc(1, sizeof *mapping);
    if (!mapping)
        LEAVE(CUDA_ERROR_OUT_OF_MEMORY);
    mapping->kind = KIND_MAPPING;
    mapping->handle = ptr;
    mapping->size = size;
    mapping->parent = physical;
    mapping->primary_device = -1;
    physical->users++;
    table_insert(mapping);
    LEAVE(CUDA_SUCCESS);
}

FAKE_FUNCTION(cuMemUnmap, (CUdeviceptr ptr, size_t size))
{
    ENTER(cuMemUnmap);
    int unmapped = 0;
    for (uint64_t at = ptr; at < ptr + size;) {
        object *mapping = find(KIND_MAPPING, at);
        if (!mapping)
            break;
        at += mapping->size;
        destroy(mapping);
        unmapped++;
    }
    LEAVE(unmapped ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

FAKE_FUNCTION(cuMemRetainAllocationHandle, (CUmemGenericAllocationHandle *handle, void *addr))
{
    ENTER(cuMemRetainAllocationHandle);
    uint64_t address = (uint64_t)(uintptr_t)addr;
    for (size_t i = 0; handle && i < table_size; i++) {
        object *o = table[i];
        if (o && o->kind == KIND_MAPPING && address >= o->handle && address < o->handle + o->size) {
            o->parent->references++;
            o->parent->gone = 0;
            *handle = o->parent->handle;
            LEAVE(CUDA_SUCCESS);
        }
    }
    LEAVE(CUDA_ERROR_INVALID_VALUE);
}

/* ---- cuGetProcAddress ------------------------------------------------------------------ */

typedef struct proc_entry {
    const char *name;
    int since;
    int per_thread;
    void *function;
} proc_entry;

#define PROC(name, since, symbol) {name, since, 0, (void *)fake_##symbol}
#define PROC_PTSZ(name, since, symbol) {name, since, 1, (void *)fake_##symbol}

static CUresult CUDAAPI fake_get_proc_address_v1(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
static CUresult CUDAAPI fake_get_proc_address_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                                 CUdriverProcAddressQueryResult *symbolStatus);

static const proc_entry proc_table[] = {
    PROC("cuInit", 2000, cuInit),
    PROC("cuDriverGetVersion", 2020, cuDriverGetVersion),
    PROC("cuDeviceGet", 2000, cuDeviceGet),
    PROC("cuDeviceGetCount", 2000, cuDeviceGetCount),
    PROC("cuGetErrorName", 6000, cuGetErrorName),
    PROC("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    PROC("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    PROC("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    PROC("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    PROC("cuCtxCreate", 2000, cuCtxCreate),
    PROC("cuCtxCreate", 3020, cuCtxCreate_v2),
    PROC("cuCtxCreate", 12050, cuCtxCreate_v4),
    PROC("cuCtxDestroy", 2000, cuCtxDestroy),
    PROC("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    PROC("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    PROC("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
    PROC("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    PROC("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
    PROC("cuStreamCreate", 2000, cuStreamCreate),
    PROC("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority),
    PROC("cuStreamDestroy", 2000, cuStreamDestroy),
    PROC("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    PROC("cuGreenCtxCreate", 12040, cuGreenCtxCreate),
    PROC("cuGreenCtxDestroy", 12040, cuGreenCtxDestroy),
    PROC("cuGreenCtxStreamCreate", 12050, cuGreenCtxStreamCreate),
    PROC("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2),
    PROC("cuStreamEndCapture", 10000, cuStreamEndCapture),
    PROC_PTSZ("cuStreamEndCapture", 10000, cuStreamEndCapture_ptsz),
    PROC("cuEventCreate", 2000, cuEventCreate),
    PROC("cuIpcOpenEventHandle", 4010, cuIpcOpenEventHandle),
    PROC("cuIpcOpenMemHandle", 4010, cuIpcOpenMemHandle),
    PROC("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2),
    PROC("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle),
    PROC("cuEventDestroy", 2000, cuEventDestroy),
    PROC("cuEventDestroy", 4000, cuEventDestroy_v2),
    PROC("cuModuleLoad", 2000, cuModuleLoad),
    PROC("cuModuleLoadData", 2000, cuModuleLoadData),
    PROC("cuModuleUnload", 2000, cuModuleUnload),
    PROC("cuLibraryLoadData", 12000, cuLibraryLoadData),
    PROC("cuLibraryUnload", 12000, cuLibraryUnload),
    PROC("cuLinkCreate", 5050, cuLinkCreate),
    PROC("cuLinkCreate", 6050, cuLinkCreate_v2),
    PROC("cuLinkDestroy", 5050, cuLinkDestroy),
    PROC("cuGraphCreate", 10000, cuGraphCreate),
    PROC("cuGraphClone", 10000, cuGraphClone),
    PROC("cuGraphDestroy", 10000, cuGraphDestroy),
    PROC("cuGraphAddMemAllocNode", 11040, cuGraphAddMemAllocNode),
    PROC("cuGraphInstantiate", 11000, cuGraphInstantiate_v2),
    PROC("cuGraphInstantiate", 12000, cuGraphInstantiateWithFlags),
    PROC("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags),
    PROC("cuGraphInstantiateWithParams", 12000, cuGraphInstantiateWithParams),
    PROC("cuGraphExecDestroy", 10000, cuGraphExecDestroy),
    PROC("cuArrayCreate", 3020, cuArrayCreate_v2),
    PROC("cuArray3DCreate", 3020, cuArray3DCreate_v2),
    PROC("cuArrayDestroy", 2000, cuArrayDestroy),
    PROC("cuMipmappedArrayCreate", 5000, cuMipmappedArrayCreate),
    PROC("cuMipmappedArrayDestroy", 5000, cuMipmappedArrayDestroy),
    PROC("cuTexObjectCreate", 5000, cuTexObjectCreate),
    PROC("cuTexObjectDestroy", 5000, cuTexObjectDestroy),
    PROC("cuSurfObjectCreate", 5000, cuSurfObjectCreate),
    PROC("cuSurfObjectDestroy", 5000, cuSurfObjectDestroy),
    PROC("cuMemAlloc", 2000, cuMemAlloc),
    PROC("cuMemAlloc", 3020, cuMemAlloc_v2),
    {"cuMemAlloc", 13010, 0, (void *)newer_cuMemAlloc},
    PROC("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
    PROC("cuMemFree", 3020, cuMemFree_v2),
    PROC("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
    PROC("cuMemAllocHost", 3020, cuMemAllocHost_v2),
    PROC("cuMemHostAlloc", 2020, cuMemHostAlloc),
    PROC("cuMemFreeHost", 2000, cuMemFreeHost),
    PROC("cuMemAllocManaged", 6000, cuMemAllocManaged),
    PROC("cuMemAllocAsync", 11020, cuMemAllocAsync),
    PROC_PTSZ("cuMemAllocAsync", 11020, cuMemAllocAsync_ptsz),
    PROC("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync),
    PROC("cuMemFreeAsync", 11020, cuMemFreeAsync),
    PROC_PTSZ("cuMemFreeAsync", 11020, cuMemFreeAsync_ptsz),
    PROC("cuMemPoolCreate", 11020, cuMemPoolCreate),
    PROC("cuMemPoolDestroy", 11020, cuMemPoolDestroy),
    PROC("cuMemPoolImportFromShareableHandle", 11020, cuMemPoolImportFromShareableHandle),
    PROC("cuMemPoolImportPointer", 11020, cuMemPoolImportPointer),
    PROC("cuMemHostRegister", 4000, cuMemHostRegister),
    PROC("cuMemHostRegister", 6050, cuMemHostRegister_v2),
    PROC("cuMemHostUnregister", 4000, cuMemHostUnregister),
    PROC("cuImportExternalMemory", 10000, cuImportExternalMemory),
    PROC("cuExternalMemoryGetMappedBuffer", 10000, cuExternalMemoryGetMappedBuffer),
    PROC("cuExternalMemoryGetMappedMipmappedArray", 10000, cuExternalMemoryGetMappedMipmappedArray),
    PROC("cuDestroyExternalMemory", 10000, cuDestroyExternalMemory),
    PROC("cuImportExternalSemaphore", 10000, cuImportExternalSemaphore),
    PROC("cuDestroyExternalSemaphore", 10000, cuDestroyExternalSemaphore),
    PROC("cuMemAddressReserve", 10020, cuMemAddressReserve),
    PROC("cuMemAddressFree", 10020, cuMemAddressFree),
    PROC("cuMemCreate", 10020, cuMemCreate),
    PROC("cuMemRelease", 10020, cuMemRelease),
    PROC("cuMemMap", 10020, cuMemMap),
    PROC("cuMemUnmap", 10020, cuMemUnmap),
    PROC("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle),
    PROC("cuMulticastCreate", 12010, cuMulticastCreate),
    {"cuGetProcAddress", 11030, 0, (void *)fake_get_proc_address_v1},
    {"cuGetProcAddress", 12000, 0, (void *)fake_get_proc_address_v2},
};

static CUresult look_up(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (cudaVersion > FAKE_DRIVER_VERSION)
        return CUDA_ERROR_INVALID_VALUE;
    int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0, known = 0, best_since = -1;
    for (int pass = per_thread ? 0 : 1; pass < 2 && !*pfn; pass++)
        for (size_t i = 0; i < sizeof proc_table / sizeof proc_table[0]; i++) {
            const proc_entry *entry = &proc_table[i];
            if (entry->per_thread != (pass == 0) || strcmp(entry->name, symbol))
                continue;
            known = 1;
            if (entry->since <= cudaVersion && entry->since > best_since) {
                *pfn = entry->function;
                best_since = entry->since;
            }
        }
    if (status)
        *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS
                       : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
}

static CUresult CUDAAPI fake_get_proc_address_v1(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return look_up(symbol, pfn, cudaVersion, flags, NULL);
}

static CUresult CUDAAPI fake_get_proc_address_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                                 CUdriverProcAddressQueryResult *symbolStatus)
{
    return look_up(symbol, pfn, cudaVersion, flags, symbolStatus);
}

EXPORT void *fake_cuda_direct(const char *name, int cuda_version)
{
    void *function = NULL;
    return look_up(name, &function, cuda_version, 0, NULL) == CUDA_SUCCESS ? function : NULL;
}

FAKE_FUNCTION(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags))
{
    return look_up(symbol, pfn, cudaVersion, flags, NULL);
}

FAKE_FUNCTION(cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *symbolStatus))
{
    return look_up(symbol, pfn, cudaVersion, flags, symbolStatus);
}
