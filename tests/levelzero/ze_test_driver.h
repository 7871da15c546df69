/*
 * The test driver's own interface, for tests only: call counters and
 * failure injection. Tests reach these through dlsym on the driver the
 * loader loaded (ztd_find() below), never by linking the driver, so the
 * process holds exactly one copy of it: the one the loader chose.
 */
#ifndef LIVETRACK_ZE_TEST_DRIVER_H
#define LIVETRACK_ZE_TEST_DRIVER_H

#include <dlfcn.h>
#include <stdint.h>

/* How often the driver entry point `name` ("zeMemFree") was called,
 * successful or not. */
typedef uint64_t (*ztd_calls_fn)(const char *name);
/* Live objects the driver holds (handles and allocations). */
typedef uint64_t (*ztd_live_fn)(void);
/* The next destroy or free of a live object fails with
 * ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE and frees nothing. */
typedef void (*ztd_refuse_next_destroy_fn)(void);

/* zeModuleCreate with these build flags makes the build log, writes it to
 * the program's variable and then refuses the call with
 * ZE_RESULT_ERROR_INVALID_ARGUMENT, as Intel's driver does for a
 * descriptor it rejects (flags, pNext): the program must still destroy the
 * log. */
#define ZTD_REFUSED_BUILD_FLAGS "-ztd-refused-after-log"

typedef struct ztd_interface {
    ztd_calls_fn calls;
    ztd_live_fn live;
    ztd_refuse_next_destroy_fn refuse_next_destroy;
} ztd_interface;

/* The interface of the driver at `path` once the loader has loaded it;
 * returns 0 when it is not loaded (zeInit not called, or another driver). */
static inline int ztd_find(const char *path, ztd_interface *out)
{
    void *driver = path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (!driver)
        return 0;
    /* dlsym returns data pointers; POSIX guarantees the conversion. */
    *(void **)&out->calls = dlsym(driver, "ztd_calls");
    *(void **)&out->live = dlsym(driver, "ztd_live");
    *(void **)&out->refuse_next_destroy = dlsym(driver, "ztd_refuse_next_destroy");
    dlclose(driver); /* drops only the reference RTLD_NOLOAD took */
    return out->calls && out->live && out->refuse_next_destroy;
}

#endif
