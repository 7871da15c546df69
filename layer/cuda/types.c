/*
 * The CUDA front end's object types, their registry keys, the table of
 * tracked calls, and the one line it prints about itself.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuda_front_end.h"
#include "../front_end_note.h"

/* Handles are named by their CUDA types; allocations, which are all
 * CUdeviceptr or void * in the API, by their kind. */
static const char *const type_names[LTCU_TYPE_COUNT] = {
    [LTCU_CONTEXT] = "CUcontext",
    [LTCU_STREAM] = "CUstream",
    [LTCU_EVENT] = "CUevent",
    [LTCU_MODULE] = "CUmodule",
    [LTCU_LIBRARY] = "CUlibrary",
    [LTCU_LINK_STATE] = "CUlinkState",
    [LTCU_GRAPH] = "CUgraph",
    [LTCU_GRAPH_EXEC] = "CUgraphExec",
    [LTCU_MEMORY_POOL] = "CUmemoryPool",
    [LTCU_ARRAY] = "CUarray",
    [LTCU_MIPMAPPED_ARRAY] = "CUmipmappedArray",
    [LTCU_TEXTURE] = "CUtexObject",
    [LTCU_SURFACE] = "CUsurfObject",
    [LTCU_DEVICE_MEMORY] = "CUdeviceptr",
    [LTCU_HOST_PINNED] = "host_pinned",
    [LTCU_MANAGED] = "managed",
    [LTCU_DEVICE_ASYNC] = "device_async",
    [LTCU_HOST_REGISTERED] = "host_registered",
    [LTCU_VA_RESERVATION] = "va_reservation",
    [LTCU_PHYSICAL_MEMORY] = "CUmemGenericAllocationHandle",
    [LTCU_VA_MAPPING] = "va_mapping",
    [LTCU_EXTERNAL_MEMORY] = "CUexternalMemory",
    [LTCU_EXTERNAL_SEMAPHORE] = "CUexternalSemaphore",
    [LTCU_IPC_MEMORY] = "ipc_memory",
};

_Static_assert(LTCU_TYPE_COUNT <= LIVETRACK_MAX_TYPES, "more CUDA types than the registry holds");
_Static_assert(LTCU_TYPE_COUNT <= 32, "type masks are 32 bits");

void ltcu_declare_types(void) { livetrack_declare_types(LIVETRACK_DOMAIN_CUDA, "CUDA", type_names, LTCU_TYPE_COUNT); }

const char *ltcu_type_name(ltcu_type type) { return type < LTCU_TYPE_COUNT ? type_names[type] : "object"; }

const ltcu_call_info ltcu_calls[LTCU_CALL_COUNT] = {
#define LTCU_INFO_ENTRY(symbol, api, since, stream, params, args) [LTCU_ID_##symbol] = {#symbol, api, since, stream},
    LTCU_TRACKED_CALLS(LTCU_INFO_ENTRY)
#undef LTCU_INFO_ENTRY
};

/* 0x80 | type in the top byte: user-space pointers never have it set, so
 * tagged keys meet no pointer, and XOR keeps every handle value distinct. */
static uint64_t key_tag(ltcu_type type)
{
    switch (type) {
    case LTCU_TEXTURE:
    case LTCU_SURFACE:
    case LTCU_PHYSICAL_MEMORY:
    case LTCU_VA_RESERVATION: return (uint64_t)(0x80u | (unsigned)type) << 56;
    default: return 0;
    }
}

uint64_t ltcu_key(ltcu_type type, uint64_t handle) { return handle ? handle ^ key_tag(type) : 0; }

uint64_t ltcu_handle_of(ltcu_type type, uint64_t key) { return key ? key ^ key_tag(type) : 0; }

void ltcu_note(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    lt_front_end_vnote("CUDA", fmt, args);
    va_end(args);
}

void ltcu_diagnostic(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    lt_front_end_vdiagnostic("CUDA", fmt, args);
    va_end(args);
}
