/*
 * Extension functions served by two ICDs (layer/opencl/extension_functions.c):
 * the layer keeps one driver function per ICD for each extension function
 * and calls the one of the ICD that the call's object belongs to.
 *
 * No second installed driver offers cl_khr_semaphore (pocl has none), so
 * this test builds the layer's sources into itself and hands the layer two
 * ICDs' functions the way clGetExtensionFunctionAddressForPlatform does
 * for each platform. The objects are the test's own, each starting with
 * its ICD's dispatch pointer, as every ICD object does (that pointer is
 * how the layer tells the ICDs apart). It checks that:
 *  1. the program gets one wrapper for both platforms;
 *  2. retains and releases of the second ICD's semaphore reach the second
 *     ICD's functions, its last release too (that one went to the first
 *     ICD's, with the second's object: the driver was picked after the
 *     registry had ended the object, when its ICD could no longer be
 *     read safely);
 *  3. the first ICD's semaphore reaches the first ICD's functions, and
 *     the registry follows both objects' references exactly.
 */
#include <stdint.h>
#include <stdio.h>

#include "cl_layer_internal.h"
#include "check.h"
#include "livetrack/livetrack.h"

/* What a driver's semaphore is here: its ICD's dispatch pointer first,
 * then the driver's own reference count. */
typedef struct fake_semaphore {
    const void *dispatch;
    int refs;
} fake_semaphore;

typedef struct fake_platform {
    const void *dispatch;
} fake_platform;

/* Two ICDs: distinct dispatch pointers, each with its own functions that
 * count the calls they get and refuse an object of the other ICD, as a
 * driver would (or worse). */
static const int dispatch_a, dispatch_b;
static int calls_a, calls_b, foreign_calls;

static cl_int refcount_change(const void *dispatch, int *calls, cl_semaphore_khr sema, int change)
{
    fake_semaphore *semaphore = (fake_semaphore *)(void *)sema;
    ++*calls;
    if (semaphore->dispatch != dispatch) {
        foreign_calls++;
        return CL_INVALID_SEMAPHORE_KHR;
    }
    semaphore->refs += change;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL retain_a(cl_semaphore_khr sema) { return refcount_change(&dispatch_a, &calls_a, sema, 1); }
static cl_int CL_API_CALL release_a(cl_semaphore_khr sema) { return refcount_change(&dispatch_a, &calls_a, sema, -1); }
static cl_int CL_API_CALL retain_b(cl_semaphore_khr sema) { return refcount_change(&dispatch_b, &calls_b, sema, 1); }
static cl_int CL_API_CALL release_b(cl_semaphore_khr sema) { return refcount_change(&dispatch_b, &calls_b, sema, -1); }

/* The registry's references to a semaphore, 0 when it is not live. */
static uint32_t tracked_refs(const fake_semaphore *semaphore)
{
    livetrack_object object;
    return livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(semaphore), &object) == LIVETRACK_OK ? object.refs : 0;
}

int main(void)
{
    ltcl_declare_types();
    fake_platform platform_a = {&dispatch_a}, platform_b = {&dispatch_b};

    /* 1: one wrapper, whichever platform the program asked. */
    clRetainSemaphoreKHR_fn retain = (clRetainSemaphoreKHR_fn)ltcl_extension_function(
        (cl_platform_id)(void *)&platform_a, "clRetainSemaphoreKHR", (void *)retain_a);
    clReleaseSemaphoreKHR_fn release = (clReleaseSemaphoreKHR_fn)ltcl_extension_function(
        (cl_platform_id)(void *)&platform_a, "clReleaseSemaphoreKHR", (void *)release_a);
    CHECK(retain && (void *)retain != (void *)retain_a && release && (void *)release != (void *)release_a);
    CHECK((void *)ltcl_extension_function((cl_platform_id)(void *)&platform_b, "clRetainSemaphoreKHR",
                                          (void *)retain_b) == (void *)retain);
    CHECK((void *)ltcl_extension_function((cl_platform_id)(void *)&platform_b, "clReleaseSemaphoreKHR",
                                          (void *)release_b) == (void *)release);
    if (!retain || !release)
        return check_summary("cl_ext_two_icds");

    /* Each driver made a semaphore; the layer recorded both, as its
     * clCreateSemaphoreWithPropertiesKHR wrapper does. */
    fake_semaphore semaphore_a = {&dispatch_a, 1}, semaphore_b = {&dispatch_b, 1};
    ltcl_record_creation("clCreateSemaphoreWithPropertiesKHR", LTCL_SEMAPHORE, &semaphore_a, 0, NULL, NULL, 0, NULL);
    ltcl_record_creation("clCreateSemaphoreWithPropertiesKHR", LTCL_SEMAPHORE, &semaphore_b, 0, NULL, NULL, 0, NULL);
    cl_semaphore_khr sema_a = (cl_semaphore_khr)(void *)&semaphore_a, sema_b = (cl_semaphore_khr)(void *)&semaphore_b;

    /* 2: the second ICD's semaphore, to its last release. */
    CHECK_EQ_INT(retain(sema_b), CL_SUCCESS);
    CHECK_EQ_INT(tracked_refs(&semaphore_b), 2);
    CHECK_EQ_INT(release(sema_b), CL_SUCCESS);
    CHECK_EQ_INT(release(sema_b), CL_SUCCESS); /* the last */
    CHECK_EQ_INT(calls_b, 3);
    CHECK_EQ_INT(semaphore_b.refs, 0);
    CHECK_EQ_INT(tracked_refs(&semaphore_b), 0);

    /* 3: the first ICD's, likewise. */
    CHECK_EQ_INT(retain(sema_a), CL_SUCCESS);
    CHECK_EQ_INT(release(sema_a), CL_SUCCESS);
    CHECK_EQ_INT(release(sema_a), CL_SUCCESS);
    CHECK_EQ_INT(calls_a, 3);
    CHECK_EQ_INT(semaphore_a.refs, 0);
    CHECK_EQ_INT(tracked_refs(&semaphore_a), 0);
    CHECK_EQ_INT(foreign_calls, 0);
    return check_summary("cl_ext_two_icds");
}
