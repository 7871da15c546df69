/*
 * Every enqueue that can return an event. The event is recorded as a
 * child of the queue's context (events are attached to their context in
 * the OpenCL object model).
 *
 * One table describes them all: name, parameter list, argument list. The
 * wrappers and their installation are expanded from it.
 */
#include <stdlib.h>

#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

#include "cl_layer_internal.h"

#define WAIT_PARAMS cl_uint num_events, const cl_event *wait_list, cl_event *event
#define WAIT_ARGS num_events, wait_list, event

/* X(name, parameters before the wait list, their arguments) */
#define ENQUEUES_WITH_EVENT(X)                                                                                      \
    X(clEnqueueReadBuffer, (cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size,       \
                            void *ptr, WAIT_PARAMS),                                                                \
      (queue, buffer, blocking, offset, size, ptr, WAIT_ARGS))                                                      \
    X(clEnqueueWriteBuffer, (cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size,      \
                             const void *ptr, WAIT_PARAMS),                                                         \
      (queue, buffer, blocking, offset, size, ptr, WAIT_ARGS))                                                      \
    X(clEnqueueReadBufferRect, (cl_command_queue queue, cl_mem buffer, cl_bool blocking, const size_t *buffer_origin,  \
                                const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,           \
                                size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch, void *ptr,  \
                                WAIT_PARAMS),                                                                       \
      (queue, buffer, blocking, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch,             \
       host_row_pitch, host_slice_pitch, ptr, WAIT_ARGS))                                                           \
    X(clEnqueueWriteBufferRect, (cl_command_queue queue, cl_mem buffer, cl_bool blocking, const size_t *buffer_origin, \
                                 const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,          \
                                 size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,         \
                                 const void *ptr, WAIT_PARAMS),                                                     \
      (queue, buffer, blocking, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch,             \
       host_row_pitch, host_slice_pitch, ptr, WAIT_ARGS))                                                           \
    X(clEnqueueCopyBuffer, (cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset,      \
                            size_t size, WAIT_PARAMS),                                                              \
      (queue, src, dst, src_offset, dst_offset, size, WAIT_ARGS))                                                   \
    X(clEnqueueCopyBufferRect, (cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *src_origin,             \
                                const size_t *dst_origin, const size_t *region, size_t src_row_pitch,                \
                                size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch, WAIT_PARAMS), \
      (queue, src, dst, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch,              \
       dst_slice_pitch, WAIT_ARGS))                                                                                 \
    X(clEnqueueFillBuffer, (cl_command_queue queue, cl_mem buffer, const void *pattern, size_t pattern_size,           \
                            size_t offset, size_t size, WAIT_PARAMS),                                               \
      (queue, buffer, pattern, pattern_size, offset, size, WAIT_ARGS))                                              \
    X(clEnqueueReadImage, (cl_command_queue queue, cl_mem image, cl_bool blocking, const size_t *origin,               \
                           const size_t *region, size_t row_pitch, size_t slice_pitch, void *ptr, WAIT_PARAMS),     \
      (queue, image, blocking, origin, region, row_pitch, slice_pitch, ptr, WAIT_ARGS))                             \
    X(clEnqueueWriteImage, (cl_command_queue queue, cl_mem image, cl_bool blocking, const size_t *origin,              \
                            const size_t *region, size_t row_pitch, size_t slice_pitch, const void *ptr,            \
                            WAIT_PARAMS),                                                                           \
      (queue, image, blocking, origin, region, row_pitch, slice_pitch, ptr, WAIT_ARGS))                             \
    X(clEnqueueFillImage, (cl_command_queue queue, cl_mem image, const void *fill_color, const size_t *origin,         \
                           const size_t *region, WAIT_PARAMS),                                                      \
      (queue, image, fill_color, origin, region, WAIT_ARGS))                                                        \
    X(clEnqueueCopyImage, (cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *src_origin,                   \
                           const size_t *dst_origin, const size_t *region, WAIT_PARAMS),                            \
      (queue, src, dst, src_origin, dst_origin, region, WAIT_ARGS))                                                 \
    X(clEnqueueCopyImageToBuffer, (cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *src_origin,           \
                                   const size_t *region, size_t dst_offset, WAIT_PARAMS),                           \
      (queue, src, dst, src_origin, region, dst_offset, WAIT_ARGS))                                                 \
    X(clEnqueueCopyBufferToImage, (cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset,                  \
                                   const size_t *dst_origin, const size_t *region, WAIT_PARAMS),                    \
      (queue, src, dst, src_offset, dst_origin, region, WAIT_ARGS))                                                 \
    X(clEnqueueUnmapMemObject, (cl_command_queue queue, cl_mem memory, void *mapped, WAIT_PARAMS),                     \
      (queue, memory, mapped, WAIT_ARGS))                                                                           \
    X(clEnqueueMigrateMemObjects, (cl_command_queue queue, cl_uint num_objects, const cl_mem *objects,                 \
                                   cl_mem_migration_flags flags, WAIT_PARAMS),                                      \
      (queue, num_objects, objects, flags, WAIT_ARGS))                                                              \
    X(clEnqueueNDRangeKernel, (cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t *offset,       \
                               const size_t *global_size, const size_t *local_size, WAIT_PARAMS),                   \
      (queue, kernel, work_dim, offset, global_size, local_size, WAIT_ARGS))                                        \
    X(clEnqueueTask, (cl_command_queue queue, cl_kernel kernel, WAIT_PARAMS), (queue, kernel, WAIT_ARGS))             \
    X(clEnqueueNativeKernel, (cl_command_queue queue, void(CL_CALLBACK * function)(void *), void *args,               \
                              size_t args_size, cl_uint num_mem_objects, const cl_mem *mem_list,                    \
                              const void **args_mem_loc, WAIT_PARAMS),                                              \
      (queue, function, args, args_size, num_mem_objects, mem_list, args_mem_loc, WAIT_ARGS))                       \
    X(clEnqueueMarkerWithWaitList, (cl_command_queue queue, WAIT_PARAMS), (queue, WAIT_ARGS))                         \
    X(clEnqueueBarrierWithWaitList, (cl_command_queue queue, WAIT_PARAMS), (queue, WAIT_ARGS))                        \
    X(clEnqueueSVMMemcpy, (cl_command_queue queue, cl_bool blocking, void *dst, const void *src, size_t size,          \
                           WAIT_PARAMS),                                                                            \
      (queue, blocking, dst, src, size, WAIT_ARGS))                                                                 \
    X(clEnqueueSVMMemFill, (cl_command_queue queue, void *svm_ptr, const void *pattern, size_t pattern_size,           \
                            size_t size, WAIT_PARAMS),                                                              \
      (queue, svm_ptr, pattern, pattern_size, size, WAIT_ARGS))                                                     \
    X(clEnqueueSVMMap, (cl_command_queue queue, cl_bool blocking, cl_map_flags flags, void *svm_ptr, size_t size,      \
                        WAIT_PARAMS),                                                                               \
      (queue, blocking, flags, svm_ptr, size, WAIT_ARGS))                                                           \
    X(clEnqueueSVMUnmap, (cl_command_queue queue, void *svm_ptr, WAIT_PARAMS), (queue, svm_ptr, WAIT_ARGS))           \
    X(clEnqueueSVMMigrateMem, (cl_command_queue queue, cl_uint num_svm_pointers, const void **svm_pointers,            \
                               const size_t *sizes, cl_mem_migration_flags flags, WAIT_PARAMS),                     \
      (queue, num_svm_pointers, svm_pointers, sizes, flags, WAIT_ARGS))                                             \
    X(clEnqueueAcquireGLObjects, (cl_command_queue queue, cl_uint num_objects, const cl_mem *objects, WAIT_PARAMS),    \
      (queue, num_objects, objects, WAIT_ARGS))                                                                     \
    X(clEnqueueReleaseGLObjects, (cl_command_queue queue, cl_uint num_objects, const cl_mem *objects, WAIT_PARAMS),    \
      (queue, num_objects, objects, WAIT_ARGS))                                                                     \
    X(clEnqueueAcquireEGLObjectsKHR, (cl_command_queue queue, cl_uint num_objects, const cl_mem *objects,              \
                                      WAIT_PARAMS),                                                                 \
      (queue, num_objects, objects, WAIT_ARGS))                                                                     \
    X(clEnqueueReleaseEGLObjectsKHR, (cl_command_queue queue, cl_uint num_objects, const cl_mem *objects,              \
                                      WAIT_PARAMS),                                                                 \
      (queue, num_objects, objects, WAIT_ARGS))

#define DEFINE_ENQUEUE_WRAPPER(name, params, args)                   \
    static cl_int CL_API_CALL name##_wrap params                     \
    {                                                                \
        cl_int result = ltcl_next->name args;                        \
        ltcl_event_from_queue(result, event, queue);                 \
        return result;                                               \
    }
ENQUEUES_WITH_EVENT(DEFINE_ENQUEUE_WRAPPER)

/* The OpenCL 1.0 marker has no wait list. */
static cl_int CL_API_CALL clEnqueueMarker_wrap(cl_command_queue queue, cl_event *event)
{
    cl_int result = ltcl_next->clEnqueueMarker(queue, event);
    ltcl_event_from_queue(result, event, queue);
    return result;
}

/* Maps return the pointer and report errors through errcode_ret. */
static void *CL_API_CALL clEnqueueMapBuffer_wrap(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                                cl_map_flags flags, size_t offset, size_t size, WAIT_PARAMS,
                                                cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    void *mapped = ltcl_next->clEnqueueMapBuffer(queue, buffer, blocking, flags, offset, size, num_events, wait_list,
                                                 event, error_slot_);
    ltcl_event_from_queue(*error_slot_, event, queue);
    return mapped;
}

static void *CL_API_CALL clEnqueueMapImage_wrap(cl_command_queue queue, cl_mem image, cl_bool blocking,
                                               cl_map_flags flags, const size_t *origin, const size_t *region,
                                               size_t *row_pitch, size_t *slice_pitch, WAIT_PARAMS,
                                               cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    void *mapped = ltcl_next->clEnqueueMapImage(queue, image, blocking, flags, origin, region, row_pitch, slice_pitch,
                                                num_events, wait_list, event, error_slot_);
    ltcl_event_from_queue(*error_slot_, event, queue);
    return mapped;
}

/* Frees SVM pointers when the command runs. With a callback the program
 * frees them itself (usually through clSVMFree, which we see).
 * The registry forgets the pointers before the driver call (the command
 * may run, and the address be handed out again, before the call returns);
 * when the driver rejects the call they are put back. A refused call
 * leaves the registry as it was. */
#define SVM_FREE_BATCH 64
static cl_int CL_API_CALL clEnqueueSVMFree_wrap(cl_command_queue queue, cl_uint num_pointers, void *pointers[],
                                               void(CL_CALLBACK *free_fn)(cl_command_queue, cl_uint, void *[], void *),
                                               void *user_data, WAIT_PARAMS)
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
    for (cl_uint i = 0; tracked && i < num_pointers; i++) {
        livetrack_object object;
        if (!pointers[i] || livetrack_lookup(LIVETRACK_DOMAIN_OPENCL, ltcl_key(pointers[i]), &object) != LIVETRACK_OK)
            continue;
        if (livetrack_destroy(LIVETRACK_DOMAIN_OPENCL, LTCL_SVM, ltcl_key(pointers[i]), NULL) == LIVETRACK_OK &&
            forgotten < capacity)
            saved[forgotten++] = object;
    }
    cl_int result = ltcl_next->clEnqueueSVMFree(queue, num_pointers, pointers, free_fn, user_data, WAIT_ARGS);
    if (result != CL_SUCCESS) {
        /* Nothing was freed: the program still owns every pointer. */
        for (cl_uint i = 0; i < forgotten; i++)
            ltcl_created(LTCL_SVM, (void *)(uintptr_t)saved[i].handle, saved[i].bytes,
                         (void *)(uintptr_t)saved[i].parents[0], NULL, 0, saved[i].owner);
    }
    if (saved != batch)
        free(saved);
    ltcl_event_from_queue(result, event, queue);
    return result;
}

void ltcl_install_enqueue_wrappers(struct _cl_icd_dispatch *table)
{
#define INSTALL(name, params, args) table->name = name##_wrap;
    ENQUEUES_WITH_EVENT(INSTALL)
#undef INSTALL
    table->clEnqueueMarker = clEnqueueMarker_wrap;
    table->clEnqueueMapBuffer = clEnqueueMapBuffer_wrap;
    table->clEnqueueMapImage = clEnqueueMapImage_wrap;
    table->clEnqueueSVMFree = clEnqueueSVMFree_wrap;
}
