/*
 * cuGetProcAddress, wrapped: the CUDA runtime dlopens libcuda.so.1 and
 * fetches every driver function through it, so plain symbol interposition
 * sees none of the runtime's calls. Both versions (cuGetProcAddress since
 * CUDA 11.3, cuGetProcAddress_v2 since 12.0) forward to the driver and
 * hand out our wrapper instead of the function returned, for the
 * functions livetrack tracks.
 *
 * The driver answers a base name and a CUDA version with the newest ABI
 * of that name that is not newer than the version (cuMemAlloc at 3020 or
 * later: cuMemAlloc_v2), and with the _ptsz twin when per-thread default
 * streams are asked for. The same choice here picks the wrapper, whose
 * arguments must be the ABI's. A version newer than the headers livetrack
 * was built with may have brought an ABI it does not know: then the
 * function is wrapped only when it is the driver's exported function of
 * the ABI expected. Whatever is not wrapped is handed out as the driver
 * returned it, and one line says that its objects are not tracked.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "cuda_front_end.h"

#define LTCU_EXPORT __attribute__((visibility("default")))

typedef struct proc_entry {
    const char *api_name;
    int since;
    int per_thread_stream;
    ltcu_call_id id;
} proc_entry;

static const proc_entry entries[] = {
#define LTCU_PROC_ENTRY(symbol, api, since, stream, params, args) {api, since, stream, LTCU_ID_##symbol},
    LTCU_TRACKED_CALLS(LTCU_PROC_ENTRY)
#undef LTCU_PROC_ENTRY
#define LTCU_ALIAS_ENTRY(api, since, symbol) {api, since, LTCU_LEGACY_STREAM, LTCU_ID_##symbol},
    LTCU_PROC_ADDRESS_ALIASES(LTCU_ALIAS_ENTRY)
#undef LTCU_ALIAS_ENTRY
};
#define ENTRY_COUNT (sizeof entries / sizeof entries[0])

/* The tracked ABI the driver answers (name, version, stream kind) with;
 * -1 when none (not tracked, or only an ABI older than those tracked).
 * *known: the name is tracked at some version. */
static int abi_for(const char *name, int version, int per_thread_stream, int *known)
{
    int best = -1, best_since = -1;
    *known = 0;
    for (int pass = per_thread_stream ? 0 : 1; pass < 2 && best < 0; pass++) {
        /* pass 0: the per-thread twins; pass 1: the legacy ABIs (what the
         * driver falls back to when there is no per-thread twin) */
        for (size_t i = 0; i < ENTRY_COUNT; i++) {
            const proc_entry *entry = &entries[i];
            if (entry->per_thread_stream != (pass == 0) || strcmp(entry->api_name, name))
                continue;
            *known = 1;
            if (entry->since <= version && entry->since > best_since) {
                best = (int)entry->id;
                best_since = entry->since;
            }
        }
    }
    return best;
}

typedef enum untracked_reason { OLDER_ABI, NEWER_VERSION, TWO_FUNCTIONS, REASON_COUNT } untracked_reason;

static void say_untracked_once(untracked_reason reason, const char *name, int version)
{
    static const char *const why[REASON_COUNT] = {
        [OLDER_ABI] = "its ABI is older than the ones livetrack tracks",
        [NEWER_VERSION] = ("that version is newer than the CUDA headers livetrack was built with, and the driver "
                           "handed out another function than the one livetrack knows"),
        [TWO_FUNCTIONS] = "the driver handed out two different functions for it",
    };
    static atomic_int said[REASON_COUNT];
    if (!atomic_exchange(&said[reason], 1))
        ltcu_note("%s for CUDA version %d is handed out unwrapped: %s; objects made through it are not tracked "
                  "(said once)",
                  name, version, why[reason]);
}

void *ltcu_wrap_proc_address(const char *symbol, void *real, int cuda_version, cuuint64_t flags)
{
    if (!symbol || !real)
        return real;
    if (symbol[0] != 'c' || symbol[1] != 'u')
        return real;
    if (!strcmp(symbol, "cuGetProcAddress")) {
        /* Looking itself up: hand out our own, or later lookups escape. */
        void *ours = ltcu_get_proc_address_wrapper(cuda_version >= 12000 ? "cuGetProcAddress_v2" : "cuGetProcAddress");
        return ours ? ours : real;
    }
    int known;
    int id = abi_for(symbol, cuda_version, (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0, &known);
    if (id < 0) {
        if (known)
            say_untracked_once(OLDER_ABI, symbol, cuda_version);
        return real;
    }
    if (cuda_version > CUDA_VERSION && real != ltcu_real_exported((ltcu_call_id)id)) {
        say_untracked_once(NEWER_VERSION, symbol, cuda_version);
        return real;
    }
    if (!ltcu_set_proc_real((ltcu_call_id)id, real)) {
        say_untracked_once(TWO_FUNCTIONS, symbol, cuda_version);
        return real;
    }
    return ltcu_proc_wrapper((ltcu_call_id)id);
}

/* ---- the two cuGetProcAddress ABIs ------------------------------------------ */

typedef CUresult(CUDAAPI *get_proc_address_v1_fn)(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
typedef CUresult(CUDAAPI *get_proc_address_v2_fn)(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                                  CUdriverProcAddressQueryResult *symbolStatus);

static _Atomic(void *) real_v1, real_v2;

static void wrap_result(CUresult result, const char *symbol, void **pfn, int cuda_version, cuuint64_t flags)
{
    if (result == CUDA_SUCCESS && pfn && *pfn && ltcu_interposing())
        *pfn = ltcu_wrap_proc_address(symbol, *pfn, cuda_version, flags);
}

LTCU_EXPORT CUresult CUDAAPI export_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                                     cuuint64_t flags) __asm__("cuGetProcAddress");
CUresult CUDAAPI export_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    get_proc_address_v1_fn real = (get_proc_address_v1_fn)ltcu_driver_function(&real_v1, "cuGetProcAddress");
    if (!real)
        return CUDA_ERROR_NOT_FOUND;
    CUresult result = real(symbol, pfn, cudaVersion, flags);
    wrap_result(result, symbol, pfn, cudaVersion, flags);
    return result;
}

LTCU_EXPORT CUresult CUDAAPI export_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                                        cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
    __asm__("cuGetProcAddress_v2");
CUresult CUDAAPI export_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult *symbolStatus)
{
    get_proc_address_v2_fn real = (get_proc_address_v2_fn)ltcu_driver_function(&real_v2, "cuGetProcAddress_v2");
    if (!real)
        return CUDA_ERROR_NOT_FOUND;
    CUresult result = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    wrap_result(result, symbol, pfn, cudaVersion, flags);
    return result;
}

void *ltcu_get_proc_address_real(const char *symbol)
{
    if (!strcmp(symbol, "cuGetProcAddress"))
        return ltcu_driver_function(&real_v1, symbol);
    if (!strcmp(symbol, "cuGetProcAddress_v2"))
        return ltcu_driver_function(&real_v2, symbol);
    return NULL;
}

void *ltcu_get_proc_address_wrapper(const char *symbol)
{
    if (!strcmp(symbol, "cuGetProcAddress"))
        return (void *)export_cuGetProcAddress;
    if (!strcmp(symbol, "cuGetProcAddress_v2"))
        return (void *)export_cuGetProcAddress_v2;
    return NULL;
}
