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
 *              (a kernel holds its program, a buffer its context, ...),
 *              and keepers (livetrack_keep_alive).
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
#define LIVETRACK_VERSION_MINOR 3
#define LIVETRACK_VERSION_PATCH 3

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
    LIVETRACK_BAD_ARGUMENT = 5,
    LIVETRACK_REPLACED = 6      /* another object has the handle now
                                   (livetrack_restore) */
} livetrack_status;

/* Short text for a status ("unknown", "wrong type", ...). */
LIVETRACK_API const char *livetrack_status_name(livetrack_status status);

/* Declare the type names of a domain. `api_name` is shown in reports
 * ("OpenCL"); `type_names[i]` names type i ("cl_mem"). livetrack keeps
 * its own copies, so the caller may be unloaded before the exit report.
 * Declaring again replaces the table; every distinct table declared is
 * kept until the process ends (a report may still be reading it). */
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
    const char *call;       /* the API call that made it ("clCreateBuffer"),
                               shown in the timeline; NULL: not named */
} livetrack_new_object;

/* Record a newly created object with refs = 1 and capture its creation
 * call site (see "Call sites" below). Parents that are not live are
 * ignored. A live object with the same handle is taken to be stale (the
 * driver reused the address) and replaced: the handle names the new
 * object from now on, and the old one loses the application's
 * references. If children still hold the old one (a context destroyed
 * with live buffers), it stays in snapshots and reports, released and
 * kept alive by them (refs 0), until the last of them goes; a child's
 * parent is then told from the new object by its creation number
 * (livetrack_snapshot_parent_seqs).
 *
 * In the calls below `call` names the API function being tracked
 * ("clRetainEvent"); it is shown in the timeline and diagnostics and may
 * be NULL. */
LIVETRACK_API livetrack_status livetrack_create(const livetrack_new_object *object);

/* +1 reference. `type` is the expected type or LIVETRACK_ANY_TYPE.
 * Retaining an object kept alive only by children is allowed (the
 * application may obtain it again, e.g. CL_KERNEL_PROGRAM). */
LIVETRACK_API livetrack_status livetrack_retain(livetrack_domain domain, livetrack_type type, uint64_t handle,
                                                const char *call);

/* -1 reference. `refs_left` (may be NULL) receives the references the
 * application still holds. Refused with LIVETRACK_NOT_OWNED when the
 * application holds none. */
LIVETRACK_API livetrack_status livetrack_release(livetrack_domain domain, livetrack_type type, uint64_t handle,
                                                 uint32_t *refs_left, const char *call);

/* Drop every reference the application holds (free/destroy of objects
 * that are not reference counted). */
LIVETRACK_API livetrack_status livetrack_destroy(livetrack_domain domain, livetrack_type type, uint64_t handle,
                                                 const char *call);

/* A driver may keep an object beyond the application's last release for a
 * reason the registry cannot see as a child: an OpenCL event stays until
 * the callbacks set on it have run, and they may still use it. A keeper
 * holds the object like a child does, so after that release it is kept
 * alive (valid to use, not a leak of its own) until the keeper is let go.
 * Returns NULL when (domain, handle) is not live. */
typedef struct livetrack_keeper livetrack_keeper;
LIVETRACK_API livetrack_keeper *livetrack_keep_alive(livetrack_domain domain, uint64_t handle);

/* Drop a keeper's hold: the object dies here if nothing else keeps it.
 * Each keeper is let go once; NULL is ignored. */
LIVETRACK_API void livetrack_let_go(livetrack_keeper *keeper);

/* The same on behalf of API call `call`: an object that dies here is
 * "freed" by that call in the timeline (a front end holding a destroyed
 * object's parents until the driver answered the destroy). */
LIVETRACK_API void livetrack_let_go_in(livetrack_keeper *keeper, const char *call);

/* ---- call sites ----------------------------------------------------------
 * Each create captures the native stack (LIVETRACK_STACK_DEPTH frames,
 * default 16, 0: off) and interns it: identical stacks share one id, so
 * memory grows with unique stacks, not with events. Frames inside
 * livetrack, the API loaders and the drivers are dropped when a stack is
 * read, so frame 0 is the application's call. Symbols are looked up only
 * when asked for, each address once. */
typedef uint32_t livetrack_stack_id; /* 0: no stack */

typedef struct livetrack_frame {
    uintptr_t address;       /* return address as captured */
    const char *function;    /* NULL when unknown */
    const char *file;        /* source file, NULL without debug info */
    unsigned line;           /* 0 when unknown */
    unsigned column;
    const char *module;      /* path of the executable or shared object */
    uintptr_t module_offset; /* address - module load base */
    int inlined;             /* 1: inlined into the frame that follows */
} livetrack_frame;

/* The calling thread's stack, interned; 0 when capture is off. */
LIVETRACK_API livetrack_stack_id livetrack_capture_stack(void);
/* The application's return addresses of a stack, innermost first. */
LIVETRACK_API size_t livetrack_stack_addresses(livetrack_stack_id stack, uintptr_t *out, size_t max);
/* The same frames symbolized, inlined calls expanded (so there may be
 * more frames than addresses). Strings stay valid until exit. */
LIVETRACK_API size_t livetrack_stack_symbolize(livetrack_stack_id stack, livetrack_frame *out, size_t max);
/* Frames inside the module (shared object) that contains `address` are
 * not the application's: front ends name their loader and driver here. */
LIVETRACK_API void livetrack_add_internal_module(const void *address);

/* livetrack_create, but with `stack` as the creation call site instead of
 * the caller's stack (0: none): for an object a front end learns of only
 * after the call that made it, whose call site it took then. A stack
 * livetrack never handed out is LIVETRACK_BAD_ARGUMENT. */
LIVETRACK_API livetrack_status livetrack_create_with_stack(const livetrack_new_object *object,
                                                           livetrack_stack_id stack);

/* Everything known about one live object. */
typedef struct livetrack_object {
    livetrack_domain domain;
    livetrack_type type;
    const char *type_name;
    uint64_t handle;
    uint64_t seq;     /* creation number: unique, increasing, not always consecutive (LIVETRACK_CREATION_ORDER) */
    uint64_t time_ns; /* creation time, ns since livetrack started */
    uint64_t bytes;
    uint32_t refs;
    uint32_t holders;
    const void *owner;
    uint64_t parents[2];
    livetrack_type parent_types[2];
    livetrack_stack_id stack; /* creation call site, 0: not captured */
} livetrack_object;

LIVETRACK_API livetrack_status livetrack_lookup(livetrack_domain domain, uint64_t handle, livetrack_object *out);

/* Keepers (see livetrack_keep_alive) on the very objects `object` (a
 * livetrack_lookup or snapshot answer) holds as its parents, out[i] NULL
 * where it has none: not on what their handles name now, which is
 * another object once the program destroyed a parent and the driver gave
 * its address out again. LIVETRACK_UNKNOWN, with both NULL, when that
 * object is not live any more; LIVETRACK_BAD_ARGUMENT for a NULL
 * argument or an object livetrack never described (no creation number). */
LIVETRACK_API livetrack_status livetrack_keep_parents(const livetrack_object *object, livetrack_keeper *out[2]);

/* Undo a release or destroy that the API then refused. Front ends count
 * them before the driver call (once it has freed an object, the driver
 * may give its address to another thread), so a refusal must put the
 * object back: as `before` says it was (livetrack_lookup's answer just
 * before the release), with its creation number, time, call site, owner
 * and parents, and the `refs_taken` references the call took (1 for a
 * release, before->refs for a destroy). It is the same object, not a new
 * one: the created count, marks (livetrack_mark) and the newest-first
 * order do not change, and the timeline gets a `restore` row.
 * `parents`: the keepers livetrack_keep_parents gave before the release;
 * the object then holds those very objects again (a NULL one: no parent
 * there). NULL: each parent is looked up by its handle, and one not live,
 * or made after the object (the handle names another now), is left out.
 * An object still in the registry (its children kept it, or the release
 * left references) gets back the references taken, however many others
 * took or gave meanwhile. Returns LIVETRACK_OK; LIVETRACK_REPLACED,
 * changing nothing, when another object has the handle now (the driver
 * gave it out again); LIVETRACK_BAD_ARGUMENT for a `before` livetrack
 * never described (no handle or creation number, a creation number the
 * handle's shard never gave out, refs_taken 0); LIVETRACK_NO_MEMORY when
 * no node could be had. */
LIVETRACK_API livetrack_status livetrack_restore(const livetrack_object *before, uint32_t refs_taken,
                                                 livetrack_keeper *const parents[2], const char *call);

/* The last release of a handle that is not live now, as the registry
 * remembers it (each of its 64 shards keeps its last 128 deaths): domain,
 * type, handle, creation number, time, bytes, owner and call site, with
 * no references, holders or parents (a dead object holds none).
 * LIVETRACK_OK; LIVETRACK_UNKNOWN when the handle is live, was never seen
 * or was released too long ago; LIVETRACK_BAD_ARGUMENT for a bad domain
 * or a NULL `out`. For a front end whose last release of an object the
 * driver refused after livetrack counted it, with no livetrack_lookup
 * answer from before: livetrack_restore(&out, 1, NULL, call) puts the
 * object back as it was, but holding no parents. */
LIVETRACK_API livetrack_status livetrack_released(livetrack_domain domain, uint64_t handle, livetrack_object *out);

/* Whether a handle is live, and its type: the cheap check a front end
 * makes on every object argument (nothing converted; objects the thread
 * checked lately are answered without a lock). */
LIVETRACK_API livetrack_status livetrack_live_type(livetrack_domain domain, uint64_t handle, livetrack_type *type);

/* Whether a handle that is not live now was released lately, and the
 * type it had: LIVETRACK_OK with *type, or LIVETRACK_UNKNOWN (live, never
 * seen, or released too long ago: each of the registry's 64 shards
 * remembers its last 128 deaths). Front ends use it to tell a released
 * handle from a number where an argument could be either. */
LIVETRACK_API livetrack_status livetrack_released_type(livetrack_domain domain, uint64_t handle,
                                                       livetrack_type *type);

/* True while the very object described (same handle and creation number)
 * is still live and its handle names it: not for a replaced one (see
 * livetrack_create), which a snapshot still lists while its children
 * keep it, but whose handle names a newer object. */
LIVETRACK_API int livetrack_still_live(const livetrack_object *object);

/* livetrack_destroy of the very object described, in one step: when the
 * driver may have freed it and handed its address out again, another
 * thread's new object recorded there meanwhile is left alone
 * (LIVETRACK_UNKNOWN). */
LIVETRACK_API livetrack_status livetrack_destroy_object(const livetrack_object *object, const char *call);

/* Run fn(context) only while `object` (that very incarnation) is live,
 * holding the registry lock that releasing or destroying its handle must
 * take: fn may, for instance, ask the driver about the object, which a
 * concurrent release then cannot free meanwhile. fn must not call into
 * livetrack, nor wait for a thread that may (a driver's release can wait
 * for the thread running one of its callbacks). Returns 1 when fn ran. */
LIVETRACK_API int livetrack_while_live(const livetrack_object *object, void (*fn)(void *context), void *context);

/* A copy of the live set, newest first, taken under the registry's locks
 * and read after they are dropped: callers may create and release objects
 * while walking it. */
typedef struct livetrack_snapshot livetrack_snapshot;
LIVETRACK_API livetrack_snapshot *livetrack_snapshot_take(livetrack_domain domain, const void *owner);
LIVETRACK_API size_t livetrack_snapshot_count(const livetrack_snapshot *snapshot);
LIVETRACK_API const livetrack_object *livetrack_snapshot_at(const livetrack_snapshot *snapshot, size_t index);
LIVETRACK_API void livetrack_snapshot_free(livetrack_snapshot *snapshot);

/* The creation numbers (seq) of the objects the snapshot's object at
 * `index` holds as its parents, in the order of its `parents`, 0 where it
 * has none. A parent's handle may name two objects of one snapshot: a
 * parent the program released while its children kept it alive, whose
 * handle the driver then gave to a new object (see livetrack_create), and
 * that new object; the creation number tells which one this object holds.
 * LIVETRACK_BAD_ARGUMENT for a NULL argument or an index past the end. */
LIVETRACK_API livetrack_status livetrack_snapshot_parent_seqs(const livetrack_snapshot *snapshot, size_t index,
                                                              uint64_t out[2]);

/* ---- scoped checks ----------------------------------------------------
 * mark = livetrack_mark(); run code; then livetrack_snapshot_since(mark)
 * lists only the objects created after the mark that are still live, and
 * livetrack_leaks_since(mark, out) counts (and reports) those the program
 * still holds: a unit test can assert that a function leaks nothing.
 * Without memory for the snapshot, which objects leaked is not known and
 * every live object counts (never 0 on a guess). A mark is a creation
 * number: at or above the seq of every object created before it, below
 * that of every object created after it, across threads too (as the
 * program's own synchronization orders them). */
LIVETRACK_API uint64_t livetrack_mark(void);
LIVETRACK_API livetrack_snapshot *livetrack_snapshot_since(livetrack_domain domain, const void *owner, uint64_t mark);
LIVETRACK_API size_t livetrack_leaks_since(uint64_t mark, FILE *report);

typedef struct livetrack_stats {
    uint64_t live_objects;
    uint64_t live_bytes;
    uint64_t created;           /* objects recorded since start */
    uint64_t misuse;            /* refused or reported bad calls */
    uint64_t replaced;          /* stale handles the driver reused */
    uint64_t node_bytes;        /* memory the registry holds for nodes */
    int incomplete;             /* 1 after livetrack ran out of memory */
    uint64_t peak_objects;      /* high-water mark of live objects */
    uint64_t peak_bytes;        /* high-water mark of live bytes */
    uint64_t unique_stacks;     /* interned call stacks */
    uint64_t stack_bytes;       /* memory the stack table holds */
    uint64_t stack_walks;       /* stacks walked by the unwinder (the others were recognised) */
} livetrack_stats;
LIVETRACK_API void livetrack_get_stats(livetrack_stats *out);

/* Count a misuse and print one diagnostic line ("livetrack: ..."). */
LIVETRACK_API void livetrack_report_misuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print one diagnostic line ("livetrack: ...") that reports no misuse:
 * nothing is counted or recorded, but the line shares the misuse
 * diagnostics' LIVETRACK_MAX_DIAGNOSTICS budget, so a note a program can
 * cause over and over (a destroy the driver refuses, retried) stops with
 * them. */
LIVETRACK_API void livetrack_diagnostic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Count and report a misuse of one object, in the style of
 * AddressSanitizer: the message, the stack of the bad call, then the
 * object's creation stack and (with LIVETRACK_RELEASE_STACKS=1) the stack
 * of the release that freed it, when livetrack still remembers them. */
LIVETRACK_API void livetrack_report_misuse_on(livetrack_domain domain, uint64_t handle, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like livetrack_report_misuse_on, for an object described by
 * livetrack_lookup or a snapshot: names it with the creation stack of
 * that description, as live, without looking its handle up again. For
 * an object the caller has just destroyed and still has to name (the
 * handle would read as released, the caller's destroy as its release). */
LIVETRACK_API void livetrack_report_misuse_of(const livetrack_object *object, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- reports ---------------------------------------------------------- */
typedef enum livetrack_format {
    LIVETRACK_FORMAT_TEXT = 0, /* grouped by call site, for people */
    LIVETRACK_FORMAT_JSON = 1  /* docs/report-schema.md, for tools and CI */
} livetrack_format;

enum {
    LIVETRACK_REPORT_ALWAYS = 1u << 0, /* write a report even when nothing leaked */
    LIVETRACK_REPORT_PEAK = 1u << 1    /* text: add the live set at the peak */
};

/* Write the leak report of objects created after `since_mark` (0: all)
 * in `format`. Returns the number of leaked objects (suppressed ones not
 * counted). */
LIVETRACK_API size_t livetrack_write_report(FILE *out, livetrack_format format, unsigned flags, uint64_t since_mark);

/* Same as livetrack_write_report(out, LIVETRACK_FORMAT_TEXT, always ? LIVETRACK_REPORT_ALWAYS : 0, 0). */
LIVETRACK_API size_t livetrack_write_leak_report(FILE *out, int always);

/* "at peak 1.2 GiB live in 3400 objects:" and the live set at that moment
 * grouped by call site. Returns the objects live at the peak. */
LIVETRACK_API size_t livetrack_write_peak_report(FILE *out);

/* 1 once livetrack ran out of memory: objects may be missing, so a front
 * end must not refuse handles the registry does not know. */
LIVETRACK_API int livetrack_incomplete(void);

/* 1 when LIVETRACK_TRANSPARENT asks to pass misuse to the driver. */
LIVETRACK_API int livetrack_transparent(void);

/* 1 when LIVETRACK_QUIET_ABSENT_API asks a front end that finds no driver
 * for its API to say nothing about it. */
LIVETRACK_API int livetrack_quiet_absent_api(void);

#ifdef __cplusplus
}
#endif

#endif /* LIVETRACK_LIVETRACK_H */
