/*
 * livetrack: the public C API of the live-object registry.
 *
 * One registry exists per process (in liblivetrack.so). Every front end
 * (the OpenCL layer, later Level Zero and CUDA) records the objects it sees
 * here, and host code or test suites may read it back.
 *
 * Vocabulary:
 *   refs     - references the application holds through the API
 *              (create = 1, +1 per retain, -1 per release).
 *   holders  - live child objects that keep this object alive implicitly
 *              (a kernel holds its program, a buffer its context, ...).
 *   An object is live while refs + holders > 0. An object with refs == 0
 *   and holders > 0 was released by the application and is only "kept
 *   alive" by its children: it is not a leak of its own.
 */
#ifndef LIVETRACK_LIVETRACK_H
#define LIVETRACK_LIVETRACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LIVETRACK_API __attribute__((visibility("default")))
#else
#define LIVETRACK_API
#endif

#define LIVETRACK_VERSION_MAJOR 0
#define LIVETRACK_VERSION_MINOR 1
#define LIVETRACK_VERSION_PATCH 0

/* The API an object belongs to. Handles are keyed by (domain, handle). */
typedef enum livetrack_domain {
    LIVETRACK_DOMAIN_ANY = 0, /* only as a filter */
    LIVETRACK_DOMAIN_OPENCL = 1,
    LIVETRACK_DOMAIN_LEVEL_ZERO = 2,
    LIVETRACK_DOMAIN_CUDA = 3,
    LIVETRACK_DOMAIN_USER = 4, /* free for host code and tests */
    LIVETRACK_DOMAIN_COUNT
} livetrack_domain;

/* Per-domain object type: a small index whose name the front end
 * declares with livetrack_declare_types(). */
typedef unsigned livetrack_type;
#define LIVETRACK_MAX_TYPES 32u
#define LIVETRACK_ANY_TYPE 0xffu

typedef enum livetrack_status {
    LIVETRACK_OK = 0,
    LIVETRACK_UNKNOWN = 1,      /* not live: never created, or fully released */
    LIVETRACK_WRONG_TYPE = 2,   /* live, but of another type than expected */
    LIVETRACK_NOT_OWNED = 3,    /* live only through its children; the
                                   application holds no reference to release */
    LIVETRACK_NO_MEMORY = 4,    /* livetrack ran out of memory: tracking is
                                   incomplete from now on */
    LIVETRACK_BAD_ARGUMENT = 5
} livetrack_status;

/* Short text for a status ("unknown", "wrong type", ...). */
LIVETRACK_API const char *livetrack_status_name(livetrack_status status);

/* Declare the type names of a domain. `api_name` is shown in reports
 * ("OpenCL"); `type_names[i]` names type i ("cl_mem"). The strings must
 * live for the whole process. Declaring again replaces the table. */
LIVETRACK_API livetrack_status livetrack_declare_types(livetrack_domain domain, const char *api_name,
                                                       const char *const *type_names, unsigned count);
LIVETRACK_API const char *livetrack_type_name(livetrack_domain domain, livetrack_type type);
LIVETRACK_API const char *livetrack_domain_name(livetrack_domain domain);

/* How a new object relates to its first parent. */
enum {
    /* hold the parent's own first parent instead of the parent itself
     * (an event enqueued on a queue is attached to the queue's context) */
    LIVETRACK_PARENT_VIA_FIRST_PARENT = 1u << 0
};

typedef struct livetrack_new_object {
    livetrack_domain domain;
    livetrack_type type;
    uint64_t handle;        /* must not be 0 */
    uint64_t bytes;         /* 0 when the object has no size */
    const void *owner;      /* platform/driver grouping; NULL: inherit from the first parent */
    uint64_t parent;        /* first parent (kept alive by this object), 0: none */
    uint64_t second_parent; /* e.g. the buffer a sub-buffer or image comes from */
    unsigned flags;         /* LIVETRACK_PARENT_* */
} livetrack_new_object;

/* Record a newly created object with refs = 1. Parents that are not live
 * are ignored. A live object with the same handle is taken to be stale
 * (the driver reused the address) and replaced. */
LIVETRACK_API livetrack_status livetrack_create(const livetrack_new_object *object);

/* +1 reference. `type` is the expected type or LIVETRACK_ANY_TYPE.
 * Retaining an object kept alive only by children is allowed (the
 * application may obtain it again, e.g. CL_KERNEL_PROGRAM). */
LIVETRACK_API livetrack_status livetrack_retain(livetrack_domain domain, livetrack_type type, uint64_t handle);

/* -1 reference. `refs_left` (may be NULL) receives the references the
 * application still holds. Refused with LIVETRACK_NOT_OWNED when the
 * application holds none. */
LIVETRACK_API livetrack_status livetrack_release(livetrack_domain domain, livetrack_type type, uint64_t handle,
                                                 uint32_t *refs_left);

/* Drop every reference the application holds (free/destroy of objects
 * that are not reference counted). */
LIVETRACK_API livetrack_status livetrack_destroy(livetrack_domain domain, livetrack_type type, uint64_t handle);

/* Everything known about one live object. */
typedef struct livetrack_object {
    livetrack_domain domain;
    livetrack_type type;
    const char *type_name;
    uint64_t handle;
    uint64_t seq;     /* creation sequence number, unique and increasing */
    uint64_t time_ns; /* creation time, ns since livetrack started */
    uint64_t bytes;
    uint32_t refs;
    uint32_t holders;
    const void *owner;
    uint64_t parents[2];
    livetrack_type parent_types[2];
} livetrack_object;

LIVETRACK_API livetrack_status livetrack_lookup(livetrack_domain domain, uint64_t handle, livetrack_object *out);

/* True while the very object described (same handle and creation number)
 * is still live. */
LIVETRACK_API int livetrack_still_live(const livetrack_object *object);

/* Run fn(context) only while `object` (that very incarnation) is live,
 * holding the registry lock that releasing or destroying its handle must
 * take: fn may, for instance, take a driver reference that a concurrent
 * release then cannot race. fn must not call into livetrack. Returns 1
 * when fn ran. */
LIVETRACK_API int livetrack_while_live(const livetrack_object *object, void (*fn)(void *context), void *context);

/* A copy of the live set, newest first, taken under the registry's locks
 * and read after they are dropped: callers may create and release objects
 * while walking it. */
typedef struct livetrack_snapshot livetrack_snapshot;
LIVETRACK_API livetrack_snapshot *livetrack_snapshot_take(livetrack_domain domain, const void *owner);
LIVETRACK_API size_t livetrack_snapshot_count(const livetrack_snapshot *snapshot);
LIVETRACK_API const livetrack_object *livetrack_snapshot_at(const livetrack_snapshot *snapshot, size_t index);
LIVETRACK_API void livetrack_snapshot_free(livetrack_snapshot *snapshot);

typedef struct livetrack_stats {
    uint64_t live_objects;
    uint64_t live_bytes;
    uint64_t created;           /* objects recorded since start */
    uint64_t misuse;            /* refused or reported bad calls */
    uint64_t replaced;          /* stale handles the driver reused */
    uint64_t node_bytes;        /* memory the registry holds for nodes */
    int incomplete;             /* 1 after livetrack ran out of memory */
} livetrack_stats;
LIVETRACK_API void livetrack_get_stats(livetrack_stats *out);

/* Count a misuse and print one diagnostic line ("livetrack: ..."). */
LIVETRACK_API void livetrack_report_misuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Write the leak report (what the exit report prints) to `out`.
 * Returns the number of leaked objects. `always` prints a report even
 * when nothing leaked. */
LIVETRACK_API size_t livetrack_write_leak_report(FILE *out, int always);

/* 1 when LIVETRACK_TRANSPARENT asks to pass misuse to the driver. */
LIVETRACK_API int livetrack_transparent(void);

#ifdef __cplusplus
}
#endif

#endif /* LIVETRACK_LIVETRACK_H */
