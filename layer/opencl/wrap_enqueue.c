/*
 * clEnqueueSVMFree, the one enqueue whose effect on the registry is not
 * the table's generic "the event it returns" (entry_points.h): it also
 * frees SVM pointers. Every other enqueue is generated from the table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "entry_points.h"

/* Frees SVM pointers when the command runs. With a callback the program
 * frees them itself (usually through clSVMFree, which we see).
 * The registry forgets the pointers once the driver took the command, and
 * only the very objects it knew before the call: the command may run, and
 * an address be handed out again and recorded, before the call returns
 * (that record replaces the old one, which then is already gone). A call
 * the driver rejects, or that is refused, leaves the registry as it was:
 * the allocations keep their creation numbers and call sites. */
#define SVM_FREE_BATCH 64

static int compare_pointers(const void *left, const void *right)
{
    uintptr_t a = (uintptr_t)*(void *const *)left, b = (uintptr_t)*(void *const *)right;
    return a < b ? -1 : a > b;
}

/* A pointer listed twice, or NULL. The driver frees each entry: the
 * second free of one is a double free (pocl 3.1 aborts on it), and each
 * entry alone looks live to the registry. */
static void *listed_twice(void *const pointers[], cl_uint count)
{
    if (count <= SVM_FREE_BATCH) {
        for (cl_uint i = 1; i < count; i++)
            for (cl_uint j = 0; j < i; j++)
                if (pointers[i] && pointers[i] == pointers[j])
                    return pointers[i];
        return NULL;
    }
    void **sorted = malloc(count * sizeof *sorted);
    if (!sorted)
        return NULL; /* not checked: only the diagnostic is lost */
    memcpy(sorted, pointers, count * sizeof *sorted);
    qsort(sorted, count, sizeof *sorted, compare_pointers);
    void *twice = NULL;
    for (cl_uint i = 1; i < count && !twice; i++)
        if (sorted[i] && sorted[i] == sorted[i - 1])
            twice = sorted[i];
    free(sorted);
    return twice;
}

cl_int CL_API_CALL clEnqueueSVMFree_wrap(cl_command_queue queue, cl_uint num_pointers, void *pointers[],
                                         void(CL_CALLBACK *free_fn)(cl_command_queue, cl_uint, void *[], void *),
                                         void *user_data, LTCL_WAIT_PARAMS)
{
    livetrack_object batch[SVM_FREE_BATCH], *saved = batch;
    cl_uint forgotten = 0, capacity = SVM_FREE_BATCH;
    int tracked = !free_fn && pointers;
    if (tracked && num_pointers > SVM_FREE_BATCH) {
        livetrack_object *large = malloc(num_pointers * sizeof *large);
        if (large) {
            saved = large;
            capacity = num_pointers;
        }
    }
    void *twice = tracked ? listed_twice(pointers, num_pointers) : NULL;
    if (twice) {
        int pass = livetrack_transparent();
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_OPENCL, ltcl_key(twice),
                                   "clEnqueueSVMFree(%p): SVM pointer %p is listed more than once; %s", (void *)queue,
                                   twice, pass ? "passed to the driver" : "refused with CL_INVALID_VALUE");
        if (!pass) {
            if (saved != batch)
                free(saved);
            return CL_INVALID_VALUE;
        }
    }
    for (cl_uint i = 0; tracked && i < num_pointers; i++) {
        livetrack_object object;
        if (!pointers[i] ||
            (livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(pointers[i]), &object) == LIVETRACK_OK &&
             object.type == LTCL_SVM && object.refs))
            continue;
        cl_int refused;
        if (ltcl_free("clEnqueueSVMFree", LTCL_SVM, pointers[i], CL_INVALID_VALUE, &refused) == LTCL_REFUSED) {
            if (saved != batch)
                free(saved);
            return refused;
        }
    }
    cl_uint looked_at = 0; /* pointers past it were not saved (no memory for more) */
    for (; tracked && looked_at < num_pointers && forgotten < capacity; looked_at++) {
        void *pointer = pointers[looked_at];
        if (pointer &&
            livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(pointer), &saved[forgotten]) == LIVETRACK_OK &&
            saved[forgotten].type == LTCL_SVM)
            forgotten++;
    }
    /* The free function may use its queue after the program released it. */
    void *data;
    ltcl_svm_free_fn given = ltcl_svm_free_callback(free_fn, user_data, &data);
    cl_int result = ltcl_next->clEnqueueSVMFree(queue, num_pointers, pointers, given, data, LTCL_WAIT_ARGS);
    if (result != CL_SUCCESS)
        ltcl_svm_free_callback_unused(given, data);
    /* Freed (or about to be): forget each object still recorded as it
     * was, not one another thread recorded anew at a reused address. */
    for (cl_uint i = 0; result == CL_SUCCESS && i < forgotten; i++)
        livetrack_destroy_object(&saved[i], "clEnqueueSVMFree");
    for (cl_uint i = looked_at; result == CL_SUCCESS && tracked && i < num_pointers; i++)
        if (pointers[i])
            livetrack_destroy(LIVETRACK_DOMAIN_OPENCL, LTCL_SVM, ltcl_key(pointers[i]), "clEnqueueSVMFree");
    if (saved != batch)
        free(saved);
    ltcl_event_from_queue("clEnqueueSVMFree", result, event, queue);
    return result;
}
