/*
 * Shared by the Level Zero front end's files: our object types and the
 * helpers the tracing callbacks use to talk to the registry.
 *
 * The front end sees the program's calls through the loader's tracing
 * layer, which can watch a call but not refuse it: misuse is reported,
 * and the call still reaches the driver.
 */
#ifndef LIVETRACK_ZE_FRONT_END_H
#define LIVETRACK_ZE_FRONT_END_H

#include <level_zero/layers/zel_tracing_api.h>
#include <level_zero/ze_api.h>
#include <stddef.h>
#include <stdint.h>

#include "livetrack/livetrack.h"

typedef enum ltze_type {
    LTZE_CONTEXT,
    LTZE_COMMAND_QUEUE,
    LTZE_COMMAND_LIST, /* regular and immediate */
    LTZE_MODULE,
    LTZE_MODULE_BUILD_LOG,
    LTZE_KERNEL,
    LTZE_EVENT_POOL,
    LTZE_EVENT,
    LTZE_FENCE,
    LTZE_IMAGE, /* images and image views */
    LTZE_SAMPLER,
    LTZE_PHYSICAL_MEM,
    LTZE_VIRTUAL_MEM, /* a reservation from zeVirtualMemReserve, keyed by its start */
    LTZE_MEM,         /* an allocation from zeMemAlloc{Device,Host,Shared}, keyed by its pointer */
    /* Opened from another process's IPC handle and let go of with the
     * matching Close call, not with a destroy or free: types of their own,
     * so that reports say what they are and a mix-up of the calls is told
     * apart from a bad handle. */
    LTZE_IPC_EVENT_POOL, /* from zeEventPoolOpenIpcHandle */
    LTZE_IPC_MEM,        /* a mapping from zeMemOpenIpcHandle, keyed by its pointer */
    LTZE_TYPE_COUNT
} ltze_type;

static inline uint64_t ltze_key(const void *handle) { return (uint64_t)(uintptr_t)handle; }

/* Give the registry our type names (tracking.c). */
void ltze_declare_types(void);

/* Record an object a successful call created. `parent` (and
 * `second_parent`, for an image view's image) is kept alive by it;
 * `owner` groups objects by driver (NULL: inherit from the parent). */
void ltze_record_creation(const char *call, ltze_type type, const void *handle, uint64_t bytes, const void *parent,
                          const void *second_parent, const void *owner);

/* The driver a live object comes from (its owner), or NULL. */
const void *ltze_owner_of(const void *handle);

/* In a destroy, free or close's prologue, before the driver frees
 * anything: report a handle that is not a live object of `type`, and a
 * parent destroyed while objects created from it are live; then count the
 * destroy. An object of the type the other call lets go of (zeMemFree of
 * a mapping zeMemOpenIpcHandle made, zeMemCloseIpcHandle of an
 * allocation; the same for event pools) is reported as the wrong call and
 * counted as released all the same: a driver may free it either way
 * (Intel's does), and one that refuses makes it live again.
 * `context` is the context the call names for objects that belong to one
 * (allocations, IPC mappings, reservations, physical memory), else NULL;
 * `size` points to the size it names for objects freed whole with their
 * size (reservations), else NULL: another size is reported.
 * The registry is updated before the driver runs so that another thread
 * that gets the same address from the driver finds it clean. */
void ltze_before_destroy(const char *call, ltze_type type, const void *handle, const void *context,
                         const size_t *size);

/* Set by ltze_before_destroy: the tracer reported this thread's destroy
 * (untraced_destroys.c clears it before each call and reads it after). */
extern _Thread_local int ltze_destroy_traced;

/* After a destroy, free or close of `type` that succeeded without the
 * tracer reporting it (a thread past its thread_local destructors, the
 * main thread inside exit()): forget the object, if it is one of ours of
 * that type (or of its counterpart's) that existed when the call began
 * (`created_before`: livetrack_mark() then). */
void ltze_untraced_destroy(const char *call, ltze_type type, const void *handle, uint64_t created_before);

/* Look up the loader's destroy calls behind ours, once, from the
 * constructor (untraced_destroys.c). */
void ltze_find_loader_destroys(void);

/* In the same call's epilogue: when the driver refused the destroy, the
 * object is live again, with its type, parents and creation call site. */
void ltze_after_destroy(const char *call, const void *handle, ze_result_t result);

/* In the prologue of a call that uses an object without destroying it
 * (a reset): report a handle that is not a live object of `type`. */
void ltze_check_live(const char *call, ltze_type type, const void *handle);

/* Register every callback with the tracer (callbacks.c). Returns the
 * name of the first registration that failed, or NULL. */
const char *ltze_register_callbacks(zel_tracer_handle_t tracer);

/* One line on stderr, "livetrack: Level Zero: ...", for what is not the
 * program's misuse (no driver, no tracing layer). */
void ltze_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same line for a note the program can cause again and again (a
 * destroy the driver refuses, retried in a loop): one of the core's
 * diagnostics, so it stops at LIVETRACK_MAX_DIAGNOSTICS with them. */
void ltze_diagnostic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
