/*
 * Shared by the CUDA front end's files: object types, the state of one
 * tracked call, and the helpers every handler uses to talk to the registry.
 *
 * One set of handlers serves both attach modes. Each handler reads the
 * call's arguments from CUPTI's own argument struct (<symbol>_params from
 * generated_cuda_meta.h): CUPTI hands it to its callbacks, and the
 * interposed wrappers fill one from their arguments. Like the Level Zero
 * front end, livetrack watches CUDA calls and never refuses one: misuse is
 * reported and the call still reaches the driver.
 */
#ifndef LIVETRACK_CUDA_FRONT_END_H
#define LIVETRACK_CUDA_FRONT_END_H

#include <cuda.h>
#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

#include "livetrack/livetrack.h"
#include "tracked_calls.h"

typedef enum ltcu_type {
    LTCU_CONTEXT,
    LTCU_STREAM,
    LTCU_EVENT,
    LTCU_MODULE,
    LTCU_LIBRARY,
    LTCU_LINK_STATE,
    LTCU_GRAPH,
    LTCU_GRAPH_EXEC,
    LTCU_MEMORY_POOL,
    LTCU_ARRAY,
    LTCU_MIPMAPPED_ARRAY,
    LTCU_TEXTURE,
    LTCU_SURFACE,
    LTCU_DEVICE_MEMORY,  /* cuMemAlloc, cuMemAllocPitch */
    LTCU_HOST_PINNED,    /* cuMemAllocHost, cuMemHostAlloc */
    LTCU_MANAGED,        /* cuMemAllocManaged */
    LTCU_DEVICE_ASYNC,   /* stream-ordered: cuMemAllocAsync, cuMemAllocFromPoolAsync, cuMemPoolImportPointer */
    LTCU_HOST_REGISTERED, /* cuMemHostRegister */
    LTCU_VA_RESERVATION, /* cuMemAddressReserve */
    LTCU_PHYSICAL_MEMORY, /* cuMemCreate, cuMemImportFromShareableHandle, cuMulticastCreate */
    LTCU_VA_MAPPING,     /* cuMemMap */
    LTCU_EXTERNAL_MEMORY,    /* cuImportExternalMemory: another API's memory */
    LTCU_EXTERNAL_SEMAPHORE, /* cuImportExternalSemaphore */
    LTCU_IPC_MEMORY,     /* cuIpcOpenMemHandle: another process's allocation, mapped here */
    LTCU_TYPE_COUNT
} ltcu_type;

#define LTCU_TYPE_BIT(type) (1u << (type))
/* What cuMemFree and cuMemFreeAsync accept. */
#define LTCU_DEVICE_POINTERS \
    (LTCU_TYPE_BIT(LTCU_DEVICE_MEMORY) | LTCU_TYPE_BIT(LTCU_MANAGED) | LTCU_TYPE_BIT(LTCU_DEVICE_ASYNC))

/* ---- types and keys (types.c) ---------------------------------------------- */

void ltcu_declare_types(void);
const char *ltcu_type_name(ltcu_type type);

/* The registry key of a handle. Pointers are their own keys. The handles
 * the driver numbers itself (texture and surface objects, physical memory)
 * and address reservations (which start where their first mapping does)
 * would meet other handles, so their key is the handle XOR a tag that
 * names the type in the top byte; ltcu_handle_of() undoes it. */
uint64_t ltcu_key(ltcu_type type, uint64_t handle);
uint64_t ltcu_handle_of(ltcu_type type, uint64_t key);

/* One line on stderr, "livetrack: CUDA: ...", for what is not the
 * program's misuse (how livetrack attached, what it cannot track). */
void ltcu_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same line for a note the program can cause again and again (a
 * destroy the driver refuses, retried in a loop): one of the core's
 * diagnostics, so it stops at LIVETRACK_MAX_DIAGNOSTICS with them. */
void ltcu_diagnostic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- one tracked call ------------------------------------------------------- */

/* Every tracked ABI, in the order of tracked_calls.h. */
typedef enum ltcu_call_id {
#define LTCU_ID_ENTRY(symbol, api, since, stream, params, args) LTCU_ID_##symbol,
    LTCU_TRACKED_CALLS(LTCU_ID_ENTRY)
#undef LTCU_ID_ENTRY
    LTCU_CALL_COUNT
} ltcu_call_id;

typedef struct ltcu_call_info {
    const char *symbol;   /* "cuMemAlloc_v2" */
    const char *api_name; /* "cuMemAlloc" */
    int since;            /* CUDA version of this ABI */
    int per_thread_stream;
} ltcu_call_info;
extern const ltcu_call_info ltcu_calls[LTCU_CALL_COUNT];

/* Who made the call. Objects the CUDA runtime makes for itself (its
 * primary context reference, the modules of the program's kernels) are
 * not the program's to release. */
typedef enum ltcu_origin {
    LTCU_FROM_PROGRAM, /* the driver API, called directly */
    LTCU_FROM_RUNTIME  /* inside a CUDA runtime call (CUPTI), or through a
                          function cuGetProcAddress handed out (interposition) */
} ltcu_origin;

/* An object a destroy or release took out of the registry before the
 * driver ran, kept to put it back when the driver refuses the call. */
typedef enum ltcu_undo_kind {
    LTCU_UNDO_DESTROY,      /* give the object its references back, re-creating it if it died */
    LTCU_UNDO_RELEASE,      /* the same, after a release of one reference */
    LTCU_UNDO_RUNTIME_REF,  /* give the runtime its primary context reference back */
    LTCU_UNDO_MAPPING_SIZE, /* remember a mapping's size again */
    LTCU_UNDO_RUNTIME_OBJECT, /* know a runtime module (.handle: its key) of context .owner again */
    LTCU_UNDO_PRIMARY_RETAIN  /* give back the reference a primary retain counted (.handle: the context) */
} ltcu_undo_kind;

typedef struct ltcu_undo {
    ltcu_undo_kind kind;
    livetrack_object object; /* what the registry knew; for RUNTIME_REF only .handle
                                (the device) is used; for MAPPING_SIZE .handle, .bytes */
    /* DESTROY, RELEASE: the object's parents, held until the call ends. A
     * parent the program destroyed already, kept alive only by this
     * object, would die with it, and the object put back would lose it. */
    livetrack_keeper *parent_keepers[2];
} ltcu_undo;

#define LTCU_INLINE_UNDO 2

typedef struct ltcu_call {
    ltcu_call_id id;
    const char *name;   /* shown as the call that made or ended an object */
    ltcu_origin origin;
    const char *runtime_call; /* the cuda* call this driver call serves, NULL: none known */
    int context_known;
    CUcontext context;  /* the thread's current context (the owner of what the call makes) */
    CUcontext primary_counted; /* the primary context a retain counted in its prologue */
    size_t dropped;     /* objects a context's end destroyed in this call (reported) */
    int late;           /* recorded after the driver answered: a handle already gone is not misuse */
    size_t undo_count;
    size_t undo_capacity;
    ltcu_undo *undo;    /* inline_undo, or a heap array for a context's objects */
    ltcu_undo inline_undo[LTCU_INLINE_UNDO];
} ltcu_call;

/* Start a tracked call: fill `call` and run the handler's prologue
 * (destroys and releases count here, before the driver frees anything:
 * once freed, the driver may hand the same address to another thread).
 * `context`: the current context when the caller knows it (CUPTI), else
 * NULL and `context_known` 0 (fetched from the driver when needed). */
void ltcu_call_begin(ltcu_call *call, ltcu_call_id id, ltcu_origin origin, const char *runtime_call,
                     int context_known, CUcontext context, const void *params);
/* Finish it: on success record what it made; on failure put back what
 * the prologue took out. */
void ltcu_call_end(ltcu_call *call, const void *params, CUresult result);

/* The current context, asked of the driver (interposition) at most once
 * per call. */
CUcontext ltcu_call_context(ltcu_call *call);
/* Set by the interposition mode: how to ask the driver. */
extern CUresult (*ltcu_driver_current_context)(CUcontext *context);
/* Set when the library loads (NULL in the unit tests, which have no
 * driver): the size of the allocation that starts at `pointer`, asked of
 * the driver; 0 when it cannot say. */
extern uint64_t (*ltcu_driver_allocation_bytes)(CUdeviceptr pointer);

/* ---- the registry (record.c) ---------------------------------------------- */

/* Record an object a successful call made. `parent_key` is kept alive by
 * it (0: none). Objects of a context are owned by it (livetrack_object's
 * owner is the CUcontext) and go with it. */
void ltcu_record(ltcu_call *call, ltcu_type type, uint64_t handle, uint64_t bytes, uint64_t parent_key);
/* The same for an object of a type contexts own that belongs to no
 * tracked context (a stream of a green context): no context's end drops
 * it. */
void ltcu_record_unowned(ltcu_call *call, ltcu_type type, uint64_t handle, uint64_t bytes);

/* In a destroy or free's prologue: take `handle` (keyed as `key_type`)
 * out of the registry if it is a live object of one of `accepted` (a
 * mask of LTCU_TYPE_BIT), remembering it for ltcu_call_end; report it
 * otherwise. A 0 handle is left to the driver. Returns 1 when taken. */
int ltcu_forget(ltcu_call *call, ltcu_type key_type, unsigned accepted, uint64_t handle);

/* In a release's prologue: drop one reference (reference-counted objects:
 * physical memory). Reports a handle the program holds no reference to. */
int ltcu_release_reference(ltcu_call *call, ltcu_type type, uint64_t handle);

/* Take one more reference on a live object, or record it when livetrack
 * has not seen it (the driver handed out a handle it made earlier), as
 * one step however many threads do so at once. */
void ltcu_retain_or_record(ltcu_call *call, ltcu_type type, uint64_t handle, uint64_t bytes);

/* Record `handle`, a `type` a call handed out, unless it is live as one
 * already: a call that may give back the program's own object (the graph
 * cuStreamEndCapture returns after cuStreamBeginCaptureToGraph) must not
 * move its creation to that call. */
void ltcu_record_unless_live(ltcu_call *call, ltcu_type type, uint64_t handle);

/* Around a registry retain-or-create (and a lookup-then-create) of an
 * object the driver hands out more than once (reference_lock.c). */
void ltcu_lock_references(void);
void ltcu_unlock_references(void);

/* Remember an undo step for ltcu_call_end. */
void ltcu_push_undo(ltcu_call *call, ltcu_undo_kind kind, const livetrack_object *object);

/* Before destroying or releasing `object`: hold its very parents
 * (livetrack_keep_parents), then hand them to ltcu_push_undo_holding,
 * which lets them go when the call ends (at once if it cannot remember),
 * or, when the destroy did not happen, let them go on behalf of `call`. */
void ltcu_let_parents_go(livetrack_keeper *keepers[2], const ltcu_call *call);
void ltcu_push_undo_holding(ltcu_call *call, ltcu_undo_kind kind, const livetrack_object *object,
                            livetrack_keeper *keepers[2]);

/* Drop every object `context` owns (not the context itself): report each
 * one the program still held, as gone with the context, and remember them
 * so a failed call can put them back. `event` says what happens to the
 * context ("destroyed", "reset", ...). */
void ltcu_drop_context_objects(ltcu_call *call, CUcontext context, const char *event);
/* The same for the objects made up to `mark` (livetrack_mark()) only. */
void ltcu_drop_context_objects_made_by(ltcu_call *call, CUcontext context, const char *event, uint64_t mark);

/* Objects the CUDA runtime made for itself (the modules of the program's
 * kernels): not recorded, but known, so the runtime's own unload later is
 * not taken for misuse. `image`: the code loaded (NULL: from a file). */
int ltcu_made_for_runtime(const ltcu_call *call, ltcu_type type, const void *image);
/* Whether `image` lies in a section nvcc made in a loaded object
 * (.nvFatBinSegment, .nv_fatbin): device code compiled in, which only
 * the CUDA runtime loads (reads the object's section headers). */
int ltcu_code_compiled_in(const void *image);
void ltcu_runtime_object_add(ltcu_call *call, ltcu_type type, uint64_t handle);
int ltcu_runtime_object_take(ltcu_type type, uint64_t handle);
/* A context's end: forget the runtime's modules loaded in it (the driver
 * destroys them), to be put back (undo) if the driver refuses the call. */
void ltcu_runtime_objects_drop_context(ltcu_call *call, CUcontext context);
void ltcu_runtime_object_restore(uint64_t key, CUcontext context);

/* Set when the process is exiting (the runtime and driver tear down their
 * contexts then): what they still hold is the program's leaks, for the
 * exit report, not objects a context's end destroyed. */
void ltcu_watch_exit(void);
int ltcu_process_exiting(void);

/* ---- primary contexts (primary_context.c) --------------------------------- */

/* A retain counts the program's reference in its prologue when the
 * device's handle is known (else after the driver, in _retained). */
void ltcu_primary_retain_begin(ltcu_call *call, CUdevice device);
void ltcu_primary_retained(ltcu_call *call, CUdevice device, CUcontext context);
/* Undo of a retain the driver refused (LTCU_UNDO_PRIMARY_RETAIN). */
void ltcu_primary_undo_retain(CUcontext context);
void ltcu_primary_release_begin(ltcu_call *call, CUdevice device);
void ltcu_primary_reset_begin(ltcu_call *call, CUdevice device);
/* Undo of a release the driver refused (LTCU_UNDO_RUNTIME_REF). */
void ltcu_primary_give_back_runtime_reference(CUdevice device);
/* The device whose primary context this is, or -1. */
int ltcu_primary_device_of(CUcontext context);

/* ---- mapped ranges (vm_mappings.c) ------------------------------------------ */

/* The size of each cuMemMap mapping, by start address: cuMemUnmap names a
 * range, which may cover several mappings. */
void ltcu_mapping_add(uint64_t start, uint64_t size);
/* Remove the mapping starting at `start`; returns its size, 0 when none. */
uint64_t ltcu_mapping_take(uint64_t start);

/* ---- graph memory nodes (graph_allocations.c) ------------------------------ */

/* The addresses graph memory nodes allocate: not tracked (their memory
 * comes and goes with each launch), remembered so that a cuMemFree or
 * cuMemFreeAsync of one outside the graph is no misuse. */
void ltcu_graph_allocation_add(uint64_t address);
int ltcu_graph_allocation_known(uint64_t address);
/* The driver handed the address out for a tracked allocation: not the
 * graph's any more. */
void ltcu_graph_allocation_forget(uint64_t address);

/* ---- handlers (handlers.c) ------------------------------------------------- */

typedef struct ltcu_handler {
    /* before the driver: destroys, frees, releases; may be NULL */
    void (*before)(ltcu_call *call, const void *params);
    /* after the driver succeeded: creations; may be NULL */
    void (*after)(ltcu_call *call, const void *params);
} ltcu_handler;
extern const ltcu_handler ltcu_handlers[LTCU_CALL_COUNT];

/* ---- CUPTI (cupti_callback.c) ---------------------------------------------- */

/* The one CUPTI callback: driver API calls, runtime API calls (to name
 * the cuda* call that made an object) and the resource domain. */
void CUPTIAPI ltcu_cupti_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void *cbdata);

/* What to enable: the driver callback ids of the tracked calls, and the
 * resource callbacks handled. */
size_t ltcu_cupti_driver_callbacks(CUpti_CallbackId *out, size_t max);
size_t ltcu_cupti_resource_callbacks(CUpti_CallbackId *out, size_t max);

/* ---- attach modes (attach.c, interpose.c) ------------------------------------ */

/* 1 while the interposed wrappers track (LD_PRELOAD and no CUPTI); 0: they
 * only forward. */
int ltcu_interposing(void);
/* CUPTI took over: the wrappers only forward from now on. */
void ltcu_cupti_took_over(void);
/* 1 when this library's exports are the process's cu* functions
 * (LD_PRELOAD brought it in before the driver). */
int ltcu_preloaded(void);

/* The driver's own functions, for the wrappers. */
void *ltcu_real_exported(ltcu_call_id id);
/* The wrappers handed out for `id`: the program's (exported) one and the
 * one handed out through cuGetProcAddress. */
void *ltcu_exported_wrapper(ltcu_call_id id);
void *ltcu_proc_wrapper(ltcu_call_id id);
/* Store the driver function cuGetProcAddress returned for `id`. Returns 0
 * when another, different one is already stored (then the driver's is
 * handed out unwrapped). */
int ltcu_set_proc_real(ltcu_call_id id, void *real);

/* The driver library (libcuda.so.1) when loaded, else NULL; and the real
 * dlsym (dlsym_hook.c). */
void *ltcu_driver_library(void);
void *ltcu_real_dlsym(void *handle, const char *name);

/* The driver's own function `name` (driver_queries.c), looked up once
 * into *cache: after RTLD_NEXT, in the driver library; NULL when neither
 * has it (looked up again next time). */
void *ltcu_driver_function(_Atomic(void *) *cache, const char *name);
/* The driver's answers (driver_queries.c), behind the pointers above. */
CUresult ltcu_current_context_from_driver(CUcontext *context);
uint64_t ltcu_allocation_bytes_from_driver(CUdeviceptr pointer);

/* The cuGetProcAddress wrappers (proc_address.c): what to hand out for a
 * name the program or runtime looks up in the driver. */
void *ltcu_wrap_proc_address(const char *symbol, void *real, int cuda_version, cuuint64_t flags);
/* Our cuGetProcAddress wrappers, for dlsym and cuGetProcAddress itself. */
void *ltcu_get_proc_address_wrapper(const char *symbol);
/* What our cuGetProcAddress wrapper of that name calls: the next
 * definition after us, else the driver's. */
void *ltcu_get_proc_address_real(const char *symbol);

#endif
