/*
 * The CUPTI mode: CUDA_INJECTION64_PATH=liblivetrack_cuda.so makes the
 * driver load this library at cuInit and call InitializeInjection.
 *
 * libcupti is dlopened, not linked, so the library loads (and the
 * interposition mode works) where CUPTI is not installed. A process has
 * one CUPTI subscriber at most: under Nsight Systems, Nsight Compute or
 * compute-sanitizer cuptiSubscribe fails with
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED. Whenever CUPTI cannot
 * be used, one line says why and what tracks instead: interposition when
 * LD_PRELOAD brought the library in too, else nothing.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_front_end.h"

#define LTCU_EXPORT __attribute__((visibility("default")))
#define STRINGIFY(x) #x
#define AS_STRING(x) STRINGIFY(x)

/* Where libcupti may be: the loader's search path first (the toolkit
 * puts it in lib64, or extras/CUPTI/lib64 in older releases), then the
 * one found when livetrack was built. */
static const char *const cupti_names[] = {
    "libcupti.so",
    ("libcupti.so." AS_STRING(LTCU_CUDA_MAJOR)), /* parenthesised: one name, not a missing comma */
#ifdef LTCU_CUPTI_BUILD_PATH
    LTCU_CUPTI_BUILD_PATH,
#endif
};

typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*unsubscribe_fn)(CUpti_SubscriberHandle);
typedef CUptiResult (*enable_callback_fn)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
typedef CUptiResult (*enable_domain_fn)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
typedef CUptiResult (*result_string_fn)(CUptiResult, const char **);

typedef struct cupti_api {
    subscribe_fn subscribe;
    unsubscribe_fn unsubscribe;
    enable_callback_fn enable_callback;
    enable_domain_fn enable_domain;
    result_string_fn result_string;
} cupti_api;

static void describe_result(const cupti_api *api, const char *call, CUptiResult result, char *why, size_t size)
{
    const char *text = NULL;
    if (!api->result_string || api->result_string(result, &text) != CUPTI_SUCCESS)
        text = NULL;
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        snprintf(why, size, "%s: another CUPTI client (Nsight, compute-sanitizer, a profiler) holds the one "
                 "subscription",
                 call);
    else
        snprintf(why, size, "%s failed with %d%s%s", call, (int)result, text ? ": " : "", text ? text : "");
}

static int load_cupti(cupti_api *api, char *why, size_t size)
{
    void *library = NULL;
    /* LIVETRACK_CUPTI_LIBRARY names the one to load instead (a CUPTI
     * outside the loader's path; a missing one in tests). Read here, not
     * in the core's settings table: only this front end knows it. */
    const char *chosen = getenv("LIVETRACK_CUPTI_LIBRARY");
    if (chosen && *chosen)
        library = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
    for (size_t i = 0; i < sizeof cupti_names / sizeof cupti_names[0] && !library && !(chosen && *chosen); i++)
        library = dlopen(cupti_names[i], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(why, size, "libcupti could not be loaded (%s)", dlerror());
        return 0;
    }
    api->subscribe = (subscribe_fn)ltcu_real_dlsym(library, "cuptiSubscribe");
    api->unsubscribe = (unsubscribe_fn)ltcu_real_dlsym(library, "cuptiUnsubscribe");
    api->enable_callback = (enable_callback_fn)ltcu_real_dlsym(library, "cuptiEnableCallback");
    api->enable_domain = (enable_domain_fn)ltcu_real_dlsym(library, "cuptiEnableDomain");
    api->result_string = (result_string_fn)ltcu_real_dlsym(library, "cuptiGetResultString");
    if (!api->subscribe || !api->unsubscribe || !api->enable_callback || !api->enable_domain) {
        snprintf(why, size, "the libcupti found lacks the callback API");
        return 0;
    }
    livetrack_add_internal_module((const void *)api->subscribe);
    return 1;
}

/* Subscribe and enable everything, or nothing: a mode that saw destroys
 * without their creations would report misuse that is not there. */
static int subscribe(const cupti_api *api, char *why, size_t size)
{
    CUpti_SubscriberHandle subscriber = NULL;
    CUptiResult result = api->subscribe(&subscriber, ltcu_cupti_callback, NULL);
    if (result != CUPTI_SUCCESS) {
        describe_result(api, "cuptiSubscribe", result, why, size);
        return 0;
    }
    CUpti_CallbackId ids[CUPTI_DRIVER_TRACE_CBID_SIZE];
    size_t count = ltcu_cupti_driver_callbacks(ids, CUPTI_DRIVER_TRACE_CBID_SIZE);
    for (size_t i = 0; i < count && result == CUPTI_SUCCESS; i++)
        result = api->enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, ids[i]);
    count = ltcu_cupti_resource_callbacks(ids, CUPTI_DRIVER_TRACE_CBID_SIZE);
    for (size_t i = 0; i < count && result == CUPTI_SUCCESS; i++)
        result = api->enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, ids[i]);
    if (result == CUPTI_SUCCESS)
        result = api->enable_domain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    if (result != CUPTI_SUCCESS) {
        describe_result(api, "cuptiEnableCallback", result, why, size);
        api->unsubscribe(subscriber);
        return 0;
    }
    return 1;
}

static void fall_back(const char *why)
{
    static atomic_int said;
    if (atomic_exchange(&said, 1))
        return;
    if (ltcu_preloaded()) {
        ltcu_note("CUPTI cannot be used (%s); tracking by interposition (LD_PRELOAD) instead", why);
        return;
    }
    Dl_info self;
    const char *path =
        dladdr((const void *)fall_back, &self) && self.dli_fname ? self.dli_fname : "liblivetrack_cuda.so";
    ltcu_note("CUPTI cannot be used (%s), and interposition needs LD_PRELOAD=%s: no CUDA objects are tracked", why,
              path);
}

/* The driver calls this once, inside the first cuInit. */
LTCU_EXPORT int InitializeInjection(void);
int InitializeInjection(void)
{
    static atomic_int initialized;
    if (atomic_exchange(&initialized, 1))
        return 1;
    char why[256];
    cupti_api api;
    memset(&api, 0, sizeof api);
    if (load_cupti(&api, why, sizeof why) && subscribe(&api, why, sizeof why))
        ltcu_cupti_took_over();
    else
        fall_back(why);
    /* Whatever happened, the program runs on. */
    return 1;
}
