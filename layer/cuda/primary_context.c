/*
 * Primary contexts: one per device, reference counted by
 * cuDevicePrimaryCtxRetain/Release; the driver destroys it (and all it
 * owns) when the last reference goes, and cuDevicePrimaryCtxReset
 * destroys what it owns without touching the count.
 *
 * The program's references are the CUcontext's refs in the registry, so
 * a primary context the program retained and never released is a leak.
 * The CUDA runtime takes a reference of its own on first use and never
 * gives it back before exit: that one is counted here, per device, not
 * in the registry, so it is never reported. When neither the program nor
 * the runtime holds a reference any more, the context is gone and what it
 * owned is dropped and reported (not while the process exits: the
 * runtime's teardown then releases it, and what it still owns is the
 * program's leaks, for the exit report).
 *
 * Threads: the program's retains count in their prologue, like its
 * releases, once the device's handle is known (it stays the same for the
 * process's life). Counted after the driver, a retain on one thread let a
 * release on another bring the registry's count to 0 while the driver
 * still held the first thread's reference: the context's live objects
 * were reported gone with it. Counted before, a count of 0 means no
 * thread holds the context or is retaining it.
 *
 * Locking: one mutex over the table, and the references lock
 * (reference_lock.c) around the registry calls that count the program's
 * references: a retain that finds the context's record gone records it
 * anew. Neither lock is held across a driver call or a report
 * (symbolizing takes the dynamic loader's lock, which a library
 * constructor calling in here may hold), and the call site of a new
 * record is captured before the lock is taken.
 */
#include <pthread.h>

#include "cuda_front_end.h"

#define MAX_DEVICES 64

typedef struct primary_context {
    CUcontext context; /* NULL until retained once */
    uint32_t runtime_references;
} primary_context;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static primary_context devices[MAX_DEVICES];

static int valid_device(CUdevice device) { return device >= 0 && device < MAX_DEVICES; }

static uint64_t key_of(CUcontext context) { return ltcu_key(LTCU_CONTEXT, (uint64_t)(uintptr_t)context); }

static CUcontext context_of(CUdevice device)
{
    pthread_mutex_lock(&lock);
    CUcontext context = devices[device].context;
    pthread_mutex_unlock(&lock);
    return context;
}

/* One more reference of the program's: retained, or recorded anew when
 * the record is gone. */
static void count_retain(ltcu_call *call, CUcontext context)
{
    livetrack_stack_id stack = livetrack_capture_stack(); /* outside the lock: it may walk the stack */
    livetrack_new_object object = {
        .domain = LIVETRACK_DOMAIN_CUDA,
        .type = LTCU_CONTEXT,
        .handle = key_of(context),
        .owner = context,
        .call = call->name,
    };
    ltcu_lock_references();
    if (livetrack_retain(LIVETRACK_DOMAIN_CUDA, LTCU_CONTEXT, key_of(context), call->name) != LIVETRACK_OK)
        livetrack_create_with_stack(&object, stack);
    ltcu_unlock_references();
}

void ltcu_primary_retain_begin(ltcu_call *call, CUdevice device)
{
    call->primary_counted = NULL;
    if (call->origin == LTCU_FROM_RUNTIME || !valid_device(device))
        return;
    CUcontext context = context_of(device);
    if (!context)
        return; /* the first retain: the handle comes from the driver */
    count_retain(call, context);
    call->primary_counted = context;
    livetrack_object counted = {.handle = (uint64_t)(uintptr_t)context};
    ltcu_push_undo(call, LTCU_UNDO_PRIMARY_RETAIN, &counted);
}

void ltcu_primary_undo_retain(CUcontext context)
{
    ltcu_lock_references();
    livetrack_release(LIVETRACK_DOMAIN_CUDA, LTCU_CONTEXT, key_of(context), NULL, "cuDevicePrimaryCtxRetain");
    ltcu_unlock_references();
}

void ltcu_primary_retained(ltcu_call *call, CUdevice device, CUcontext context)
{
    if (!context)
        return;
    int for_runtime = call->origin == LTCU_FROM_RUNTIME && valid_device(device);
    if (valid_device(device)) {
        pthread_mutex_lock(&lock);
        devices[device].context = context;
        if (for_runtime)
            devices[device].runtime_references++;
        pthread_mutex_unlock(&lock);
    }
    if (for_runtime)
        return;
    if (call->primary_counted != context) {
        if (call->primary_counted) /* another handle than the device had: not expected of a driver */
            ltcu_primary_undo_retain(call->primary_counted);
        count_retain(call, context);
    }
}

/* References left after a release: the program's (registry) and the runtime's. */
static int still_referenced(CUdevice device, CUcontext context)
{
    livetrack_object object;
    if (livetrack_lookup(LIVETRACK_DOMAIN_CUDA, key_of(context), &object) == LIVETRACK_OK && object.refs)
        return 1;
    pthread_mutex_lock(&lock);
    int runtime = devices[device].runtime_references != 0;
    pthread_mutex_unlock(&lock);
    return runtime;
}

void ltcu_primary_release_begin(ltcu_call *call, CUdevice device)
{
    if (!valid_device(device))
        return; /* the driver answers a bad device itself */
    pthread_mutex_lock(&lock);
    CUcontext context = devices[device].context;
    /* The runtime's own release takes its reference first; the program's
     * comes out of the registry. Either way, when one side holds none,
     * the other's is taken. */
    int took_runtime = 0;
    if (context && call->origin == LTCU_FROM_RUNTIME && devices[device].runtime_references) {
        devices[device].runtime_references--;
        took_runtime = 1;
    }
    pthread_mutex_unlock(&lock);
    if (!context) {
        livetrack_report_misuse("%s(device %d): the device's primary context was never retained", call->name,
                                (int)device);
        return;
    }
    livetrack_object device_as_object = {.handle = (uint64_t)device};
    /* When the count reaches 0 here, a thread that retains the context
     * after it records it anew, and what that thread then makes is not
     * what went with the context: only objects made up to now go. */
    uint64_t decided = livetrack_mark();
    if (!took_runtime) {
        livetrack_object object;
        ltcu_lock_references();
        int released = livetrack_lookup(LIVETRACK_DOMAIN_CUDA, key_of(context), &object) == LIVETRACK_OK &&
                       livetrack_release(LIVETRACK_DOMAIN_CUDA, LTCU_CONTEXT, key_of(context), NULL, call->name) ==
                           LIVETRACK_OK;
        decided = livetrack_mark();
        ltcu_unlock_references();
        if (released) {
            ltcu_push_undo(call, LTCU_UNDO_RELEASE, &object);
        } else {
            pthread_mutex_lock(&lock);
            if (devices[device].runtime_references) {
                devices[device].runtime_references--;
                took_runtime = 1;
            }
            pthread_mutex_unlock(&lock);
            if (!took_runtime) {
                livetrack_report_misuse_on(LIVETRACK_DOMAIN_CUDA, key_of(context),
                                           "%s(device %d): no reference to the primary context %p is held: it was "
                                           "released more often than retained",
                                           call->name, (int)device, (void *)context);
                return;
            }
        }
    }
    if (took_runtime)
        ltcu_push_undo(call, LTCU_UNDO_RUNTIME_REF, &device_as_object);
    if (!still_referenced(device, context) && !ltcu_process_exiting())
        ltcu_drop_context_objects_made_by(call, context, "(a primary context) lost its last reference", decided);
}

void ltcu_primary_give_back_runtime_reference(CUdevice device)
{
    if (!valid_device(device))
        return;
    pthread_mutex_lock(&lock);
    devices[device].runtime_references++;
    pthread_mutex_unlock(&lock);
}

void ltcu_primary_reset_begin(ltcu_call *call, CUdevice device)
{
    if (!valid_device(device))
        return;
    pthread_mutex_lock(&lock);
    CUcontext context = devices[device].context;
    pthread_mutex_unlock(&lock);
    /* Reset keeps the context and its references; what it owned goes. */
    if (context)
        ltcu_drop_context_objects(call, context, "(a primary context) reset");
}

int ltcu_primary_device_of(CUcontext context)
{
    int found = -1;
    pthread_mutex_lock(&lock);
    for (int device = 0; device < MAX_DEVICES && found < 0; device++)
        if (context && devices[device].context == context)
            found = device;
    pthread_mutex_unlock(&lock);
    return found;
}
