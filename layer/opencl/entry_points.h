/*
 * Every OpenCL entry point the layer sits on, described once.
 *
 * LTCL_DISPATCH_TABLE lists all 149 entries of the ICD dispatch table
 * (ocl-icd 2.3, OpenCL 3.0 headers), LTCL_EXTENSION_TABLE the extension
 * functions whose addresses the layer hands out instead of the driver's.
 * entry_points.c expands both into one wrapper per row and installs them;
 * nothing else in the layer defines an entry point.
 *
 * A row of the dispatch table:
 *
 *   X(name, return type, on refusal, (parameters), (arguments), checks, effect, (effect arguments))
 *
 * - on refusal: what the call gives back when a check refuses it.
 *     CODE     return the CL_INVALID_* code
 *     ERRCODE  store the code in *errcode_ret (when not NULL), return NULL
 *     NIL      return NULL (calls with no error code: clSVMAlloc)
 *     NOTHING  return (clSVMFree)
 * - checks: the object arguments, checked in order before the driver sees
 *   them; the first bad one refuses the call (see validation.c):
 *     OBJ(TYPE, param)               one handle of type LTCL_<TYPE>, the
 *                                    type's own CL_INVALID_* code
 *     OBJS(TYPE, count, array, code) an array of handles (wait lists, ...)
 *     WAITS                          the enqueue wait list:
 *                                    CL_INVALID_EVENT_WAIT_LIST
 *     DEV(param), DEVS(count, array) devices: root devices always pass
 *     IMAGE_SOURCE(desc)             desc->mem_object of clCreateImage*
 *     KERNEL_ARG(kernel, index, size, value)  the value of clSetKernelArg
 *     NO_OBJECTS                     nothing to check
 * - effect: what the call does to the registry once the checks passed.
 *     PASS, ()                       nothing: call the driver
 *     REFCOUNT, (TYPE, param, releases, untracked)  retain (0) or
 *                                    release (1), checked by the registry
 *                                    itself; untracked(param) names
 *                                    handles passed straight through
 *     CREATE, (TYPE, bytes, parent, second parent, flags)  returns a new
 *                                    object (last parameter errcode_ret)
 *     SIZED_MEM, (context, source)   returns a cl_mem whose size the
 *                                    driver knows (images, interop)
 *     EVENT, (queue)                 an enqueue: *event, when asked for,
 *                                    is a new event of the queue's context
 *     EVENT_ERRCODE, (queue)         the same for calls that report
 *                                    through errcode_ret (maps)
 *     CUSTOM, (), CUSTOM_VOID, ()    a hand-written name##_wrap in
 *                                    wrap_*.c or extension*.c does it
 *
 * Rows named N(name) have no function type on this platform (Direct3D and
 * DirectX sharing, Windows only): their entries are passed through.
 *
 * Parameter names follow the OpenCL specification, which the diagnostics
 * quote ("clEnqueueNDRangeKernel(event_wait_list[1] 0x...)").
 */
#ifndef LIVETRACK_CL_ENTRY_POINTS_H
#define LIVETRACK_CL_ENTRY_POINTS_H

#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

#include "cl_layer_internal.h"

#define LTCL_WAIT_PARAMS cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event
#define LTCL_WAIT_ARGS num_events_in_wait_list, event_wait_list, event
#define LTCL_INFO_PARAMS size_t param_value_size, void *param_value, size_t *param_value_size_ret
#define LTCL_INFO_ARGS param_value_size, param_value, param_value_size_ret
/* The `untracked` predicate of REFCOUNT rows whose handles are all tracked. */
#define LTCL_ALWAYS_TRACKED(object) 0

/* clang-format off */
#define LTCL_DISPATCH_TABLE(X, N)                                                                                    \
    /* ---- OpenCL 1.0 ---- */                                                                                       \
    X(clGetPlatformIDs, cl_int, CODE, (cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms),      \
      (num_entries, platforms, num_platforms), NO_OBJECTS, PASS, ())                                                 \
    X(clGetPlatformInfo, cl_int, CODE, (cl_platform_id platform, cl_platform_info param_name, LTCL_INFO_PARAMS),     \
      (platform, param_name, LTCL_INFO_ARGS), NO_OBJECTS, CUSTOM, ())                                                \
    X(clGetDeviceIDs, cl_int, CODE,                                                                                  \
      (cl_platform_id platform, cl_device_type device_type, cl_uint num_entries, cl_device_id *devices,              \
       cl_uint *num_devices),                                                                                        \
      (platform, device_type, num_entries, devices, num_devices), NO_OBJECTS, CUSTOM, ())                            \
    X(clGetDeviceInfo, cl_int, CODE, (cl_device_id device, cl_device_info param_name, LTCL_INFO_PARAMS),             \
      (device, param_name, LTCL_INFO_ARGS), DEV(device), PASS, ())                                                   \
    X(clCreateContext, cl_context, ERRCODE,                                                                          \
      (const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,                    \
       void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data,                   \
       cl_int *errcode_ret),                                                                                         \
      (properties, num_devices, devices, pfn_notify, user_data, errcode_ret), DEVS(num_devices, devices), CUSTOM, ()) \
    X(clCreateContextFromType, cl_context, ERRCODE,                                                                  \
      (const cl_context_properties *properties, cl_device_type device_type,                                          \
       void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data,                   \
       cl_int *errcode_ret),                                                                                         \
      (properties, device_type, pfn_notify, user_data, errcode_ret), NO_OBJECTS, CUSTOM, ())                         \
    X(clRetainContext, cl_int, CODE, (cl_context context), (context), NO_OBJECTS,                                    \
      REFCOUNT, (CONTEXT, context, 0, LTCL_ALWAYS_TRACKED))                                                          \
    X(clReleaseContext, cl_int, CODE, (cl_context context), (context), NO_OBJECTS,                                   \
      REFCOUNT, (CONTEXT, context, 1, LTCL_ALWAYS_TRACKED))                                                          \
    X(clGetContextInfo, cl_int, CODE, (cl_context context, cl_context_info param_name, LTCL_INFO_PARAMS),            \
      (context, param_name, LTCL_INFO_ARGS), OBJ(CONTEXT, context), PASS, ())                                        \
    X(clCreateCommandQueue, cl_command_queue, ERRCODE,                                                               \
      (cl_context context, cl_device_id device, cl_command_queue_properties properties, cl_int *errcode_ret),        \
      (context, device, properties, errcode_ret), OBJ(CONTEXT, context) DEV(device),                                 \
      CREATE, (QUEUE, 0, context, NULL, 0))                                                                          \
    X(clRetainCommandQueue, cl_int, CODE, (cl_command_queue command_queue), (command_queue), NO_OBJECTS,             \
      REFCOUNT, (QUEUE, command_queue, 0, LTCL_ALWAYS_TRACKED))                                                      \
    X(clReleaseCommandQueue, cl_int, CODE, (cl_command_queue command_queue), (command_queue), NO_OBJECTS,            \
      REFCOUNT, (QUEUE, command_queue, 1, LTCL_ALWAYS_TRACKED))                                                      \
    X(clGetCommandQueueInfo, cl_int, CODE,                                                                           \
      (cl_command_queue command_queue, cl_command_queue_info param_name, LTCL_INFO_PARAMS),                          \
      (command_queue, param_name, LTCL_INFO_ARGS), OBJ(QUEUE, command_queue), PASS, ())                              \
    X(clSetCommandQueueProperty, cl_int, CODE,                                                                       \
      (cl_command_queue command_queue, cl_command_queue_properties properties, cl_bool enable,                       \
       cl_command_queue_properties *old_properties),                                                                 \
      (command_queue, properties, enable, old_properties), OBJ(QUEUE, command_queue), PASS, ())                      \
    X(clCreateBuffer, cl_mem, ERRCODE,                                                                               \
      (cl_context context, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret),                    \
      (context, flags, size, host_ptr, errcode_ret), OBJ(CONTEXT, context), CREATE, (MEM, size, context, NULL, 0))   \
    X(clCreateImage2D, cl_mem, ERRCODE,                                                                              \
      (cl_context context, cl_mem_flags flags, const cl_image_format *image_format, size_t image_width,              \
       size_t image_height, size_t image_row_pitch, void *host_ptr, cl_int *errcode_ret),                            \
      (context, flags, image_format, image_width, image_height, image_row_pitch, host_ptr, errcode_ret),             \
      OBJ(CONTEXT, context), SIZED_MEM, (context, NULL))                                                             \
    X(clCreateImage3D, cl_mem, ERRCODE,                                                                              \
      (cl_context context, cl_mem_flags flags, const cl_image_format *image_format, size_t image_width,              \
       size_t image_height, size_t image_depth, size_t image_row_pitch, size_t image_slice_pitch, void *host_ptr,    \
       cl_int *errcode_ret),                                                                                         \
      (context, flags, image_format, image_width, image_height, image_depth, image_row_pitch, image_slice_pitch,     \
       host_ptr, errcode_ret),                                                                                       \
      OBJ(CONTEXT, context), SIZED_MEM, (context, NULL))                                                             \
    X(clRetainMemObject, cl_int, CODE, (cl_mem memobj), (memobj), NO_OBJECTS,                                        \
      REFCOUNT, (MEM, memobj, 0, LTCL_ALWAYS_TRACKED))                                                               \
    X(clReleaseMemObject, cl_int, CODE, (cl_mem memobj), (memobj), NO_OBJECTS,                                       \
      REFCOUNT, (MEM, memobj, 1, LTCL_ALWAYS_TRACKED))                                                               \
    X(clGetSupportedImageFormats, cl_int, CODE,                                                                      \
      (cl_context context, cl_mem_flags flags, cl_mem_object_type image_type, cl_uint num_entries,                   \
       cl_image_format *image_formats, cl_uint *num_image_formats),                                                  \
      (context, flags, image_type, num_entries, image_formats, num_image_formats), OBJ(CONTEXT, context), PASS, ())  \
    X(clGetMemObjectInfo, cl_int, CODE, (cl_mem memobj, cl_mem_info param_name, LTCL_INFO_PARAMS),                   \
      (memobj, param_name, LTCL_INFO_ARGS), OBJ(MEM, memobj), PASS, ())                                              \
    X(clGetImageInfo, cl_int, CODE, (cl_mem image, cl_image_info param_name, LTCL_INFO_PARAMS),                      \
      (image, param_name, LTCL_INFO_ARGS), OBJ(MEM, image), PASS, ())                                                \
    X(clCreateSampler, cl_sampler, ERRCODE,                                                                          \
      (cl_context context, cl_bool normalized_coords, cl_addressing_mode addressing_mode,                            \
       cl_filter_mode filter_mode, cl_int *errcode_ret),                                                             \
      (context, normalized_coords, addressing_mode, filter_mode, errcode_ret), OBJ(CONTEXT, context),                \
      CREATE, (SAMPLER, 0, context, NULL, 0))                                                                        \
    X(clRetainSampler, cl_int, CODE, (cl_sampler sampler), (sampler), NO_OBJECTS,                                    \
      REFCOUNT, (SAMPLER, sampler, 0, LTCL_ALWAYS_TRACKED))                                                          \
    X(clReleaseSampler, cl_int, CODE, (cl_sampler sampler), (sampler), NO_OBJECTS,                                   \
      REFCOUNT, (SAMPLER, sampler, 1, LTCL_ALWAYS_TRACKED))                                                          \
    X(clGetSamplerInfo, cl_int, CODE, (cl_sampler sampler, cl_sampler_info param_name, LTCL_INFO_PARAMS),            \
      (sampler, param_name, LTCL_INFO_ARGS), OBJ(SAMPLER, sampler), PASS, ())                                        \
    X(clCreateProgramWithSource, cl_program, ERRCODE,                                                                \
      (cl_context context, cl_uint count, const char **strings, const size_t *lengths, cl_int *errcode_ret),         \
      (context, count, strings, lengths, errcode_ret), OBJ(CONTEXT, context),                                        \
      CREATE, (PROGRAM, 0, context, NULL, 0))                                                                        \
    X(clCreateProgramWithBinary, cl_program, ERRCODE,                                                                \
      (cl_context context, cl_uint num_devices, const cl_device_id *device_list, const size_t *lengths,              \
       const unsigned char **binaries, cl_int *binary_status, cl_int *errcode_ret),                                  \
      (context, num_devices, device_list, lengths, binaries, binary_status, errcode_ret),                            \
      OBJ(CONTEXT, context) DEVS(num_devices, device_list), CREATE, (PROGRAM, 0, context, NULL, 0))                  \
    X(clRetainProgram, cl_int, CODE, (cl_program program), (program), NO_OBJECTS,                                    \
      REFCOUNT, (PROGRAM, program, 0, LTCL_ALWAYS_TRACKED))                                                          \
    X(clReleaseProgram, cl_int, CODE, (cl_program program), (program), NO_OBJECTS,                                   \
      REFCOUNT, (PROGRAM, program, 1, LTCL_ALWAYS_TRACKED))                                                          \
    X(clBuildProgram, cl_int, CODE,                                                                                  \
      (cl_program program, cl_uint num_devices, const cl_device_id *device_list, const char *options,                \
       void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data),                                          \
      (program, num_devices, device_list, options, pfn_notify, user_data),                                           \
      OBJ(PROGRAM, program) DEVS(num_devices, device_list), PASS, ())                                                \
    X(clUnloadCompiler, cl_int, CODE, (void), (), NO_OBJECTS, PASS, ())                                              \
    X(clGetProgramInfo, cl_int, CODE, (cl_program program, cl_program_info param_name, LTCL_INFO_PARAMS),            \
      (program, param_name, LTCL_INFO_ARGS), OBJ(PROGRAM, program), PASS, ())                                        \
    X(clGetProgramBuildInfo, cl_int, CODE,                                                                           \
      (cl_program program, cl_device_id device, cl_program_build_info param_name, LTCL_INFO_PARAMS),                 \
      (program, device, param_name, LTCL_INFO_ARGS), OBJ(PROGRAM, program) DEV(device), PASS, ())                    \
    X(clCreateKernel, cl_kernel, ERRCODE, (cl_program program, const char *kernel_name, cl_int *errcode_ret),        \
      (program, kernel_name, errcode_ret), OBJ(PROGRAM, program), CREATE, (KERNEL, 0, program, NULL, 0))             \
    X(clCreateKernelsInProgram, cl_int, CODE,                                                                        \
      (cl_program program, cl_uint num_kernels, cl_kernel *kernels, cl_uint *num_kernels_ret),                       \
      (program, num_kernels, kernels, num_kernels_ret), OBJ(PROGRAM, program), CUSTOM, ())                           \
    X(clRetainKernel, cl_int, CODE, (cl_kernel kernel), (kernel), NO_OBJECTS,                                        \
      REFCOUNT, (KERNEL, kernel, 0, LTCL_ALWAYS_TRACKED))                                                            \
    X(clReleaseKernel, cl_int, CODE, (cl_kernel kernel), (kernel), NO_OBJECTS,                                       \
      REFCOUNT, (KERNEL, kernel, 1, LTCL_ALWAYS_TRACKED))                                                            \
    X(clSetKernelArg, cl_int, CODE, (cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void *arg_value),   \
      (kernel, arg_index, arg_size, arg_value),                                                                      \
      OBJ(KERNEL, kernel) KERNEL_ARG(kernel, arg_index, arg_size, arg_value), PASS, ())                              \
    X(clGetKernelInfo, cl_int, CODE, (cl_kernel kernel, cl_kernel_info param_name, LTCL_INFO_PARAMS),                \
      (kernel, param_name, LTCL_INFO_ARGS), OBJ(KERNEL, kernel), PASS, ())                                           \
    X(clGetKernelWorkGroupInfo, cl_int, CODE,                                                                        \
      (cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param_name, LTCL_INFO_PARAMS),               \
      (kernel, device, param_name, LTCL_INFO_ARGS), OBJ(KERNEL, kernel) DEV(device), PASS, ())                       \
    X(clWaitForEvents, cl_int, CODE, (cl_uint num_events, const cl_event *event_list), (num_events, event_list),     \
      OBJS(EVENT, num_events, event_list, CL_INVALID_EVENT), PASS, ())                                               \
    X(clGetEventInfo, cl_int, CODE, (cl_event event, cl_event_info param_name, LTCL_INFO_PARAMS),                    \
      (event, param_name, LTCL_INFO_ARGS), OBJ(EVENT, event), PASS, ())                                              \
    X(clRetainEvent, cl_int, CODE, (cl_event event), (event), NO_OBJECTS,                                            \
      REFCOUNT, (EVENT, event, 0, LTCL_ALWAYS_TRACKED))                                                              \
    X(clReleaseEvent, cl_int, CODE, (cl_event event), (event), NO_OBJECTS,                                           \
      REFCOUNT, (EVENT, event, 1, LTCL_ALWAYS_TRACKED))                                                              \
    X(clGetEventProfilingInfo, cl_int, CODE, (cl_event event, cl_profiling_info param_name, LTCL_INFO_PARAMS),       \
      (event, param_name, LTCL_INFO_ARGS), OBJ(EVENT, event), PASS, ())                                              \
    X(clFlush, cl_int, CODE, (cl_command_queue command_queue), (command_queue), OBJ(QUEUE, command_queue), PASS, ()) \
    X(clFinish, cl_int, CODE, (cl_command_queue command_queue), (command_queue), OBJ(QUEUE, command_queue), PASS, ())\
    X(clEnqueueReadBuffer, cl_int, CODE,                                                                             \
      (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, size_t offset, size_t size, void *ptr,  \
       LTCL_WAIT_PARAMS),                                                                                            \
      (command_queue, buffer, blocking_read, offset, size, ptr, LTCL_WAIT_ARGS),                                     \
      OBJ(QUEUE, command_queue) OBJ(MEM, buffer) WAITS, EVENT, (command_queue))                                      \
    X(clEnqueueWriteBuffer, cl_int, CODE,                                                                            \
      (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, size_t offset, size_t size,            \
       const void *ptr, LTCL_WAIT_PARAMS),                                                                           \
      (command_queue, buffer, blocking_write, offset, size, ptr, LTCL_WAIT_ARGS),                                    \
      OBJ(QUEUE, command_queue) OBJ(MEM, buffer) WAITS, EVENT, (command_queue))                                      \
    X(clEnqueueCopyBuffer, cl_int, CODE,                                                                             \
      (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset, size_t dst_offset,   \
       size_t size, LTCL_WAIT_PARAMS),                                                                               \
      (command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size, LTCL_WAIT_ARGS),                         \
      OBJ(QUEUE, command_queue) OBJ(MEM, src_buffer) OBJ(MEM, dst_buffer) WAITS, EVENT, (command_queue))             \
    X(clEnqueueReadImage, cl_int, CODE,                                                                              \
      (cl_command_queue command_queue, cl_mem image, cl_bool blocking_read, const size_t *origin,                    \
       const size_t *region, size_t row_pitch, size_t slice_pitch, void *ptr, LTCL_WAIT_PARAMS),                     \
      (command_queue, image, blocking_read, origin, region, row_pitch, slice_pitch, ptr, LTCL_WAIT_ARGS),            \
      OBJ(QUEUE, command_queue) OBJ(MEM, image) WAITS, EVENT, (command_queue))                                       \
    X(clEnqueueWriteImage, cl_int, CODE,                                                                             \
      (cl_command_queue command_queue, cl_mem image, cl_bool blocking_write, const size_t *origin,                   \
       const size_t *region, size_t input_row_pitch, size_t input_slice_pitch, const void *ptr, LTCL_WAIT_PARAMS),   \
      (command_queue, image, blocking_write, origin, region, input_row_pitch, input_slice_pitch, ptr,                \
       LTCL_WAIT_ARGS),                                                                                              \
      OBJ(QUEUE, command_queue) OBJ(MEM, image) WAITS, EVENT, (command_queue))                                       \
    X(clEnqueueCopyImage, cl_int, CODE,                                                                              \
      (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_image, const size_t *src_origin,                 \
       const size_t *dst_origin, const size_t *region, LTCL_WAIT_PARAMS),                                            \
      (command_queue, src_image, dst_image, src_origin, dst_origin, region, LTCL_WAIT_ARGS),                         \
      OBJ(QUEUE, command_queue) OBJ(MEM, src_image) OBJ(MEM, dst_image) WAITS, EVENT, (command_queue))               \
    X(clEnqueueCopyImageToBuffer, cl_int, CODE,                                                                      \
      (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer, const size_t *src_origin,                \
       const size_t *region, size_t dst_offset, LTCL_WAIT_PARAMS),                                                   \
      (command_queue, src_image, dst_buffer, src_origin, region, dst_offset, LTCL_WAIT_ARGS),                        \
      OBJ(QUEUE, command_queue) OBJ(MEM, src_image) OBJ(MEM, dst_buffer) WAITS, EVENT, (command_queue))              \
    X(clEnqueueCopyBufferToImage, cl_int, CODE,                                                                      \
      (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_image, size_t src_offset,                       \
       const size_t *dst_origin, const size_t *region, LTCL_WAIT_PARAMS),                                            \
      (command_queue, src_buffer, dst_image, src_offset, dst_origin, region, LTCL_WAIT_ARGS),                        \
      OBJ(QUEUE, command_queue) OBJ(MEM, src_buffer) OBJ(MEM, dst_image) WAITS, EVENT, (command_queue))              \
    X(clEnqueueMapBuffer, void *, ERRCODE,                                                                           \
      (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_map, cl_map_flags map_flags, size_t offset,   \
       size_t size, LTCL_WAIT_PARAMS, cl_int *errcode_ret),                                                          \
      (command_queue, buffer, blocking_map, map_flags, offset, size, LTCL_WAIT_ARGS, errcode_ret),                   \
      OBJ(QUEUE, command_queue) OBJ(MEM, buffer) WAITS, EVENT_ERRCODE, (command_queue))                              \
    X(clEnqueueMapImage, void *, ERRCODE,                                                                            \
      (cl_command_queue command_queue, cl_mem image, cl_bool blocking_map, cl_map_flags map_flags,                   \
       const size_t *origin, const size_t *region, size_t *image_row_pitch, size_t *image_slice_pitch,               \
       LTCL_WAIT_PARAMS, cl_int *errcode_ret),                                                                       \
      (command_queue, image, blocking_map, map_flags, origin, region, image_row_pitch, image_slice_pitch,            \
       LTCL_WAIT_ARGS, errcode_ret),                                                                                 \
      OBJ(QUEUE, command_queue) OBJ(MEM, image) WAITS, EVENT_ERRCODE, (command_queue))                               \
    X(clEnqueueUnmapMemObject, cl_int, CODE,                                                                         \
      (cl_command_queue command_queue, cl_mem memobj, void *mapped_ptr, LTCL_WAIT_PARAMS),                           \
      (command_queue, memobj, mapped_ptr, LTCL_WAIT_ARGS),                                                           \
      OBJ(QUEUE, command_queue) OBJ(MEM, memobj) WAITS, EVENT, (command_queue))                                      \
    X(clEnqueueNDRangeKernel, cl_int, CODE,                                                                          \
      (cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim, const size_t *global_work_offset,         \
       const size_t *global_work_size, const size_t *local_work_size, LTCL_WAIT_PARAMS),                             \
      (command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size, LTCL_WAIT_ARGS),      \
      OBJ(QUEUE, command_queue) OBJ(KERNEL, kernel) WAITS, EVENT, (command_queue))                                   \
    X(clEnqueueTask, cl_int, CODE, (cl_command_queue command_queue, cl_kernel kernel, LTCL_WAIT_PARAMS),             \
      (command_queue, kernel, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) OBJ(KERNEL, kernel) WAITS,                  \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueNativeKernel, cl_int, CODE,                                                                           \
      (cl_command_queue command_queue, void(CL_CALLBACK *user_func)(void *), void *args, size_t cb_args,             \
       cl_uint num_mem_objects, const cl_mem *mem_list, const void **args_mem_loc, LTCL_WAIT_PARAMS),                \
      (command_queue, user_func, args, cb_args, num_mem_objects, mem_list, args_mem_loc, LTCL_WAIT_ARGS),            \
      OBJ(QUEUE, command_queue) OBJS(MEM, num_mem_objects, mem_list, CL_INVALID_MEM_OBJECT) WAITS,                   \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueMarker, cl_int, CODE, (cl_command_queue command_queue, cl_event *event), (command_queue, event),      \
      OBJ(QUEUE, command_queue), EVENT, (command_queue))                                                             \
    X(clEnqueueWaitForEvents, cl_int, CODE,                                                                          \
      (cl_command_queue command_queue, cl_uint num_events, const cl_event *event_list),                              \
      (command_queue, num_events, event_list),                                                                       \
      OBJ(QUEUE, command_queue) OBJS(EVENT, num_events, event_list, CL_INVALID_EVENT), PASS, ())                     \
    X(clEnqueueBarrier, cl_int, CODE, (cl_command_queue command_queue), (command_queue),                             \
      OBJ(QUEUE, command_queue), PASS, ())                                                                           \
    X(clGetExtensionFunctionAddress, void *, NIL, (const char *function_name), (function_name), NO_OBJECTS,          \
      CUSTOM, ())                                                                                                    \
    X(clCreateFromGLBuffer, cl_mem, ERRCODE,                                                                         \
      (cl_context context, cl_mem_flags flags, cl_GLuint bufobj, cl_int *errcode_ret),                               \
      (context, flags, bufobj, errcode_ret), OBJ(CONTEXT, context), SIZED_MEM, (context, NULL))                      \
    X(clCreateFromGLTexture2D, cl_mem, ERRCODE,                                                                      \
      (cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel, cl_GLuint texture,               \
       cl_int *errcode_ret),                                                                                         \
      (context, flags, target, miplevel, texture, errcode_ret), OBJ(CONTEXT, context), SIZED_MEM, (context, NULL))   \
    X(clCreateFromGLTexture3D, cl_mem, ERRCODE,                                                                      \
      (cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel, cl_GLuint texture,               \
       cl_int *errcode_ret),                                                                                         \
      (context, flags, target, miplevel, texture, errcode_ret), OBJ(CONTEXT, context), SIZED_MEM, (context, NULL))   \
    X(clCreateFromGLRenderbuffer, cl_mem, ERRCODE,                                                                   \
      (cl_context context, cl_mem_flags flags, cl_GLuint renderbuffer, cl_int *errcode_ret),                         \
      (context, flags, renderbuffer, errcode_ret), OBJ(CONTEXT, context), SIZED_MEM, (context, NULL))                \
    X(clGetGLObjectInfo, cl_int, CODE,                                                                               \
      (cl_mem memobj, cl_gl_object_type *gl_object_type, cl_GLuint *gl_object_name),                                 \
      (memobj, gl_object_type, gl_object_name), OBJ(MEM, memobj), PASS, ())                                          \
    X(clGetGLTextureInfo, cl_int, CODE, (cl_mem memobj, cl_gl_texture_info param_name, LTCL_INFO_PARAMS),            \
      (memobj, param_name, LTCL_INFO_ARGS), OBJ(MEM, memobj), PASS, ())                                              \
    X(clEnqueueAcquireGLObjects, cl_int, CODE,                                                                       \
      (cl_command_queue command_queue, cl_uint num_objects, const cl_mem *mem_objects, LTCL_WAIT_PARAMS),            \
      (command_queue, num_objects, mem_objects, LTCL_WAIT_ARGS),                                                     \
      OBJ(QUEUE, command_queue) OBJS(MEM, num_objects, mem_objects, CL_INVALID_MEM_OBJECT) WAITS,                    \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueReleaseGLObjects, cl_int, CODE,                                                                       \
      (cl_command_queue command_queue, cl_uint num_objects, const cl_mem *mem_objects, LTCL_WAIT_PARAMS),            \
      (command_queue, num_objects, mem_objects, LTCL_WAIT_ARGS),                                                     \
      OBJ(QUEUE, command_queue) OBJS(MEM, num_objects, mem_objects, CL_INVALID_MEM_OBJECT) WAITS,                    \
      EVENT, (command_queue))                                                                                        \
    X(clGetGLContextInfoKHR, cl_int, CODE,                                                                           \
      (const cl_context_properties *properties, cl_gl_context_info param_name, LTCL_INFO_PARAMS),                    \
      (properties, param_name, LTCL_INFO_ARGS), NO_OBJECTS, PASS, ())                                                \
    /* ---- cl_khr_d3d10_sharing ---- */                                                                             \
    N(clGetDeviceIDsFromD3D10KHR) N(clCreateFromD3D10BufferKHR) N(clCreateFromD3D10Texture2DKHR)                     \
    N(clCreateFromD3D10Texture3DKHR) N(clEnqueueAcquireD3D10ObjectsKHR) N(clEnqueueReleaseD3D10ObjectsKHR)           \
    /* ---- OpenCL 1.1 ---- */                                                                                       \
    X(clSetEventCallback, cl_int, CODE,                                                                              \
      (cl_event event, cl_int command_exec_callback_type, void(CL_CALLBACK *pfn_notify)(cl_event, cl_int, void *),   \
       void *user_data),                                                                                             \
      (event, command_exec_callback_type, pfn_notify, user_data), OBJ(EVENT, event), CUSTOM, ())                     \
    X(clCreateSubBuffer, cl_mem, ERRCODE,                                                                            \
      (cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type buffer_create_type, const void *buffer_create_info,  \
       cl_int *errcode_ret),                                                                                         \
      (buffer, flags, buffer_create_type, buffer_create_info, errcode_ret), OBJ(MEM, buffer),                        \
      CREATE, (MEM, ltcl_region_bytes(buffer_create_type, buffer_create_info), buffer, buffer,                       \
               LIVETRACK_PARENT_VIA_FIRST_PARENT))                                                                   \
    X(clSetMemObjectDestructorCallback, cl_int, CODE,                                                                \
      (cl_mem memobj, void(CL_CALLBACK *pfn_notify)(cl_mem, void *), void *user_data),                               \
      (memobj, pfn_notify, user_data), OBJ(MEM, memobj), PASS, ())                                                   \
    X(clCreateUserEvent, cl_event, ERRCODE, (cl_context context, cl_int *errcode_ret), (context, errcode_ret),       \
      OBJ(CONTEXT, context), CREATE, (EVENT, 0, context, NULL, 0))                                                   \
    X(clSetUserEventStatus, cl_int, CODE, (cl_event event, cl_int execution_status), (event, execution_status),      \
      OBJ(EVENT, event), PASS, ())                                                                                   \
    X(clEnqueueReadBufferRect, cl_int, CODE,                                                                         \
      (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, const size_t *buffer_origin,            \
       const size_t *host_origin, const size_t *region, size_t buffer_row_pitch, size_t buffer_slice_pitch,          \
       size_t host_row_pitch, size_t host_slice_pitch, void *ptr, LTCL_WAIT_PARAMS),                                 \
      (command_queue, buffer, blocking_read, buffer_origin, host_origin, region, buffer_row_pitch,                   \
       buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, LTCL_WAIT_ARGS),                                   \
      OBJ(QUEUE, command_queue) OBJ(MEM, buffer) WAITS, EVENT, (command_queue))                                      \
    X(clEnqueueWriteBufferRect, cl_int, CODE,                                                                        \
      (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, const size_t *buffer_origin,           \
       const size_t *host_origin, const size_t *region, size_t buffer_row_pitch, size_t buffer_slice_pitch,          \
       size_t host_row_pitch, size_t host_slice_pitch, const void *ptr, LTCL_WAIT_PARAMS),                           \
      (command_queue, buffer, blocking_write, buffer_origin, host_origin, region, buffer_row_pitch,                  \
       buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, LTCL_WAIT_ARGS),                                   \
      OBJ(QUEUE, command_queue) OBJ(MEM, buffer) WAITS, EVENT, (command_queue))                                      \
    X(clEnqueueCopyBufferRect, cl_int, CODE,                                                                         \
      (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, const size_t *src_origin,               \
       const size_t *dst_origin, const size_t *region, size_t src_row_pitch, size_t src_slice_pitch,                \
       size_t dst_row_pitch, size_t dst_slice_pitch, LTCL_WAIT_PARAMS),                                              \
      (command_queue, src_buffer, dst_buffer, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch,        \
       dst_row_pitch, dst_slice_pitch, LTCL_WAIT_ARGS),                                                              \
      OBJ(QUEUE, command_queue) OBJ(MEM, src_buffer) OBJ(MEM, dst_buffer) WAITS, EVENT, (command_queue))             \
    /* ---- cl_ext_device_fission ---- */                                                                            \
    X(clCreateSubDevicesEXT, cl_int, CODE,                                                                           \
      (cl_device_id in_device, const cl_device_partition_property_ext *partition_properties, cl_uint num_entries,    \
       cl_device_id *out_devices, cl_uint *num_devices),                                                             \
      (in_device, partition_properties, num_entries, out_devices, num_devices), DEV(in_device), CUSTOM, ())          \
    X(clRetainDeviceEXT, cl_int, CODE, (cl_device_id device), (device), NO_OBJECTS,                                  \
      REFCOUNT, (DEVICE, device, 0, ltcl_is_root_device))                                                           \
    X(clReleaseDeviceEXT, cl_int, CODE, (cl_device_id device), (device), NO_OBJECTS,                                 \
      REFCOUNT, (DEVICE, device, 1, ltcl_is_root_device))                                                           \
    /* ---- cl_khr_gl_event ---- */                                                                                  \
    X(clCreateEventFromGLsyncKHR, cl_event, ERRCODE, (cl_context context, cl_GLsync sync, cl_int *errcode_ret),      \
      (context, sync, errcode_ret), OBJ(CONTEXT, context), CREATE, (EVENT, 0, context, NULL, 0))                     \
    /* ---- OpenCL 1.2 ---- */                                                                                       \
    X(clCreateSubDevices, cl_int, CODE,                                                                              \
      (cl_device_id in_device, const cl_device_partition_property *properties, cl_uint num_devices,                  \
       cl_device_id *out_devices, cl_uint *num_devices_ret),                                                         \
      (in_device, properties, num_devices, out_devices, num_devices_ret), DEV(in_device), CUSTOM, ())                \
    X(clRetainDevice, cl_int, CODE, (cl_device_id device), (device), NO_OBJECTS,                                     \
      REFCOUNT, (DEVICE, device, 0, ltcl_is_root_device))                                                           \
    X(clReleaseDevice, cl_int, CODE, (cl_device_id device), (device), NO_OBJECTS,                                    \
      REFCOUNT, (DEVICE, device, 1, ltcl_is_root_device))                                                           \
    X(clCreateImage, cl_mem, ERRCODE,                                                                                \
      (cl_context context, cl_mem_flags flags, const cl_image_format *image_format, const cl_image_desc *image_desc, \
       void *host_ptr, cl_int *errcode_ret),                                                                         \
      (context, flags, image_format, image_desc, host_ptr, errcode_ret),                                             \
      OBJ(CONTEXT, context) IMAGE_SOURCE(image_desc), SIZED_MEM, (context, ltcl_image_source(image_desc)))           \
    X(clCreateProgramWithBuiltInKernels, cl_program, ERRCODE,                                                        \
      (cl_context context, cl_uint num_devices, const cl_device_id *device_list, const char *kernel_names,           \
       cl_int *errcode_ret),                                                                                         \
      (context, num_devices, device_list, kernel_names, errcode_ret),                                                \
      OBJ(CONTEXT, context) DEVS(num_devices, device_list), CREATE, (PROGRAM, 0, context, NULL, 0))                  \
    X(clCompileProgram, cl_int, CODE,                                                                                \
      (cl_program program, cl_uint num_devices, const cl_device_id *device_list, const char *options,                \
       cl_uint num_input_headers, const cl_program *input_headers, const char **header_include_names,                \
       void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data),                                          \
      (program, num_devices, device_list, options, num_input_headers, input_headers, header_include_names,           \
       pfn_notify, user_data),                                                                                       \
      OBJ(PROGRAM, program) DEVS(num_devices, device_list)                                                           \
          OBJS(PROGRAM, num_input_headers, input_headers, CL_INVALID_PROGRAM), PASS, ())                             \
    X(clLinkProgram, cl_program, ERRCODE,                                                                            \
      (cl_context context, cl_uint num_devices, const cl_device_id *device_list, const char *options,                \
       cl_uint num_input_programs, const cl_program *input_programs,                                                 \
       void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data, cl_int *errcode_ret),                     \
      (context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify, user_data,        \
       errcode_ret),                                                                                                 \
      OBJ(CONTEXT, context) DEVS(num_devices, device_list)                                                           \
          OBJS(PROGRAM, num_input_programs, input_programs, CL_INVALID_PROGRAM), CUSTOM, ())                         \
    X(clUnloadPlatformCompiler, cl_int, CODE, (cl_platform_id platform), (platform), NO_OBJECTS, PASS, ())           \
    X(clGetKernelArgInfo, cl_int, CODE,                                                                              \
      (cl_kernel kernel, cl_uint arg_index, cl_kernel_arg_info param_name, LTCL_INFO_PARAMS),                        \
      (kernel, arg_index, param_name, LTCL_INFO_ARGS), OBJ(KERNEL, kernel), PASS, ())                                \
    X(clEnqueueFillBuffer, cl_int, CODE,                                                                             \
      (cl_command_queue command_queue, cl_mem buffer, const void *pattern, size_t pattern_size, size_t offset,       \
       size_t size, LTCL_WAIT_PARAMS),                                                                               \
      (command_queue, buffer, pattern, pattern_size, offset, size, LTCL_WAIT_ARGS),                                  \
      OBJ(QUEUE, command_queue) OBJ(MEM, buffer) WAITS, EVENT, (command_queue))                                      \
    X(clEnqueueFillImage, cl_int, CODE,                                                                              \
      (cl_command_queue command_queue, cl_mem image, const void *fill_color, const size_t *origin,                   \
       const size_t *region, LTCL_WAIT_PARAMS),                                                                      \
      (command_queue, image, fill_color, origin, region, LTCL_WAIT_ARGS),                                            \
      OBJ(QUEUE, command_queue) OBJ(MEM, image) WAITS, EVENT, (command_queue))                                       \
    X(clEnqueueMigrateMemObjects, cl_int, CODE,                                                                      \
      (cl_command_queue command_queue, cl_uint num_mem_objects, const cl_mem *mem_objects,                           \
       cl_mem_migration_flags flags, LTCL_WAIT_PARAMS),                                                              \
      (command_queue, num_mem_objects, mem_objects, flags, LTCL_WAIT_ARGS),                                          \
      OBJ(QUEUE, command_queue) OBJS(MEM, num_mem_objects, mem_objects, CL_INVALID_MEM_OBJECT) WAITS,                \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueMarkerWithWaitList, cl_int, CODE, (cl_command_queue command_queue, LTCL_WAIT_PARAMS),                 \
      (command_queue, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS, EVENT, (command_queue))                      \
    X(clEnqueueBarrierWithWaitList, cl_int, CODE, (cl_command_queue command_queue, LTCL_WAIT_PARAMS),                \
      (command_queue, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS, EVENT, (command_queue))                      \
    X(clGetExtensionFunctionAddressForPlatform, void *, NIL, (cl_platform_id platform, const char *function_name),   \
      (platform, function_name), NO_OBJECTS, CUSTOM, ())                                                             \
    X(clCreateFromGLTexture, cl_mem, ERRCODE,                                                                        \
      (cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel, cl_GLuint texture,               \
       cl_int *errcode_ret),                                                                                         \
      (context, flags, target, miplevel, texture, errcode_ret), OBJ(CONTEXT, context), SIZED_MEM, (context, NULL))   \
    /* ---- cl_khr_d3d11_sharing, cl_khr_dx9_media_sharing ---- */                                                   \
    N(clGetDeviceIDsFromD3D11KHR) N(clCreateFromD3D11BufferKHR) N(clCreateFromD3D11Texture2DKHR)                     \
    N(clCreateFromD3D11Texture3DKHR) N(clCreateFromDX9MediaSurfaceKHR) N(clEnqueueAcquireD3D11ObjectsKHR)            \
    N(clEnqueueReleaseD3D11ObjectsKHR) N(clGetDeviceIDsFromDX9MediaAdapterKHR)                                       \
    N(clEnqueueAcquireDX9MediaSurfacesKHR) N(clEnqueueReleaseDX9MediaSurfacesKHR)                                    \
    /* ---- cl_khr_egl_image, cl_khr_egl_event ---- */                                                               \
    X(clCreateFromEGLImageKHR, cl_mem, ERRCODE,                                                                      \
      (cl_context context, CLeglDisplayKHR display, CLeglImageKHR image, cl_mem_flags flags,                         \
       const cl_egl_image_properties_khr *properties, cl_int *errcode_ret),                                          \
      (context, display, image, flags, properties, errcode_ret), OBJ(CONTEXT, context), SIZED_MEM, (context, NULL))  \
    X(clEnqueueAcquireEGLObjectsKHR, cl_int, CODE,                                                                   \
      (cl_command_queue command_queue, cl_uint num_objects, const cl_mem *mem_objects, LTCL_WAIT_PARAMS),            \
      (command_queue, num_objects, mem_objects, LTCL_WAIT_ARGS),                                                     \
      OBJ(QUEUE, command_queue) OBJS(MEM, num_objects, mem_objects, CL_INVALID_MEM_OBJECT) WAITS,                    \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueReleaseEGLObjectsKHR, cl_int, CODE,                                                                   \
      (cl_command_queue command_queue, cl_uint num_objects, const cl_mem *mem_objects, LTCL_WAIT_PARAMS),            \
      (command_queue, num_objects, mem_objects, LTCL_WAIT_ARGS),                                                     \
      OBJ(QUEUE, command_queue) OBJS(MEM, num_objects, mem_objects, CL_INVALID_MEM_OBJECT) WAITS,                    \
      EVENT, (command_queue))                                                                                        \
    X(clCreateEventFromEGLSyncKHR, cl_event, ERRCODE,                                                                \
      (cl_context context, CLeglSyncKHR sync, CLeglDisplayKHR display, cl_int *errcode_ret),                         \
      (context, sync, display, errcode_ret), OBJ(CONTEXT, context), CREATE, (EVENT, 0, context, NULL, 0))            \
    /* ---- OpenCL 2.0 ---- */                                                                                       \
    X(clCreateCommandQueueWithProperties, cl_command_queue, ERRCODE,                                                 \
      (cl_context context, cl_device_id device, const cl_queue_properties *properties, cl_int *errcode_ret),         \
      (context, device, properties, errcode_ret), OBJ(CONTEXT, context) DEV(device), CUSTOM, ())                     \
    X(clCreatePipe, cl_mem, ERRCODE,                                                                                 \
      (cl_context context, cl_mem_flags flags, cl_uint pipe_packet_size, cl_uint pipe_max_packets,                   \
       const cl_pipe_properties *properties, cl_int *errcode_ret),                                                   \
      (context, flags, pipe_packet_size, pipe_max_packets, properties, errcode_ret), OBJ(CONTEXT, context),          \
      CREATE, (MEM, (uint64_t)pipe_packet_size * pipe_max_packets, context, NULL, 0))                                \
    X(clGetPipeInfo, cl_int, CODE, (cl_mem pipe, cl_pipe_info param_name, LTCL_INFO_PARAMS),                         \
      (pipe, param_name, LTCL_INFO_ARGS), OBJ(MEM, pipe), PASS, ())                                                  \
    X(clSVMAlloc, void *, NIL, (cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment),         \
      (context, flags, size, alignment), OBJ(CONTEXT, context), CUSTOM, ())                                          \
    X(clSVMFree, void, NOTHING, (cl_context context, void *svm_pointer), (context, svm_pointer),                     \
      OBJ(CONTEXT, context), CUSTOM_VOID, ())                                                                        \
    X(clEnqueueSVMFree, cl_int, CODE,                                                                                \
      (cl_command_queue command_queue, cl_uint num_svm_pointers, void *svm_pointers[],                               \
       void(CL_CALLBACK *pfn_free_func)(cl_command_queue, cl_uint, void *[], void *), void *user_data,               \
       LTCL_WAIT_PARAMS),                                                                                            \
      (command_queue, num_svm_pointers, svm_pointers, pfn_free_func, user_data, LTCL_WAIT_ARGS),                     \
      OBJ(QUEUE, command_queue) WAITS, CUSTOM, ())                                                                   \
    X(clEnqueueSVMMemcpy, cl_int, CODE,                                                                              \
      (cl_command_queue command_queue, cl_bool blocking_copy, void *dst_ptr, const void *src_ptr, size_t size,       \
       LTCL_WAIT_PARAMS),                                                                                            \
      (command_queue, blocking_copy, dst_ptr, src_ptr, size, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS,       \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueSVMMemFill, cl_int, CODE,                                                                             \
      (cl_command_queue command_queue, void *svm_ptr, const void *pattern, size_t pattern_size, size_t size,         \
       LTCL_WAIT_PARAMS),                                                                                            \
      (command_queue, svm_ptr, pattern, pattern_size, size, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS,        \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueSVMMap, cl_int, CODE,                                                                                 \
      (cl_command_queue command_queue, cl_bool blocking_map, cl_map_flags flags, void *svm_ptr, size_t size,         \
       LTCL_WAIT_PARAMS),                                                                                            \
      (command_queue, blocking_map, flags, svm_ptr, size, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS,          \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueSVMUnmap, cl_int, CODE, (cl_command_queue command_queue, void *svm_ptr, LTCL_WAIT_PARAMS),            \
      (command_queue, svm_ptr, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS, EVENT, (command_queue))             \
    X(clCreateSamplerWithProperties, cl_sampler, ERRCODE,                                                            \
      (cl_context context, const cl_sampler_properties *sampler_properties, cl_int *errcode_ret),                    \
      (context, sampler_properties, errcode_ret), OBJ(CONTEXT, context), CREATE, (SAMPLER, 0, context, NULL, 0))     \
    X(clSetKernelArgSVMPointer, cl_int, CODE, (cl_kernel kernel, cl_uint arg_index, const void *arg_value),          \
      (kernel, arg_index, arg_value), OBJ(KERNEL, kernel), PASS, ())                                                 \
    X(clSetKernelExecInfo, cl_int, CODE,                                                                             \
      (cl_kernel kernel, cl_kernel_exec_info param_name, size_t param_value_size, const void *param_value),          \
      (kernel, param_name, param_value_size, param_value), OBJ(KERNEL, kernel), PASS, ())                            \
    /* ---- cl_khr_sub_groups ---- */                                                                                \
    X(clGetKernelSubGroupInfoKHR, cl_int, CODE,                                                                      \
      (cl_kernel in_kernel, cl_device_id in_device, cl_kernel_sub_group_info param_name, size_t input_value_size,    \
       const void *input_value, LTCL_INFO_PARAMS),                                                                   \
      (in_kernel, in_device, param_name, input_value_size, input_value, LTCL_INFO_ARGS),                             \
      OBJ(KERNEL, in_kernel) DEV(in_device), PASS, ())                                                               \
    /* ---- OpenCL 2.1 ---- */                                                                                       \
    X(clCloneKernel, cl_kernel, ERRCODE, (cl_kernel source_kernel, cl_int *errcode_ret),                             \
      (source_kernel, errcode_ret), OBJ(KERNEL, source_kernel),                                                      \
      CREATE, (KERNEL, 0, source_kernel, NULL, LIVETRACK_PARENT_VIA_FIRST_PARENT))                                   \
    X(clCreateProgramWithIL, cl_program, ERRCODE,                                                                    \
      (cl_context context, const void *il, size_t length, cl_int *errcode_ret), (context, il, length, errcode_ret),  \
      OBJ(CONTEXT, context), CREATE, (PROGRAM, 0, context, NULL, 0))                                                 \
    X(clEnqueueSVMMigrateMem, cl_int, CODE,                                                                          \
      (cl_command_queue command_queue, cl_uint num_svm_pointers, const void **svm_pointers, const size_t *sizes,     \
       cl_mem_migration_flags flags, LTCL_WAIT_PARAMS),                                                              \
      (command_queue, num_svm_pointers, svm_pointers, sizes, flags, LTCL_WAIT_ARGS),                                 \
      OBJ(QUEUE, command_queue) WAITS, EVENT, (command_queue))                                                       \
    X(clGetDeviceAndHostTimer, cl_int, CODE,                                                                         \
      (cl_device_id device, cl_ulong *device_timestamp, cl_ulong *host_timestamp),                                   \
      (device, device_timestamp, host_timestamp), DEV(device), PASS, ())                                             \
    X(clGetHostTimer, cl_int, CODE, (cl_device_id device, cl_ulong *host_timestamp), (device, host_timestamp),       \
      DEV(device), PASS, ())                                                                                         \
    X(clGetKernelSubGroupInfo, cl_int, CODE,                                                                         \
      (cl_kernel kernel, cl_device_id device, cl_kernel_sub_group_info param_name, size_t input_value_size,          \
       const void *input_value, LTCL_INFO_PARAMS),                                                                   \
      (kernel, device, param_name, input_value_size, input_value, LTCL_INFO_ARGS),                                   \
      OBJ(KERNEL, kernel) DEV(device), PASS, ())                                                                     \
    X(clSetDefaultDeviceCommandQueue, cl_int, CODE,                                                                  \
      (cl_context context, cl_device_id device, cl_command_queue command_queue), (context, device, command_queue),   \
      OBJ(CONTEXT, context) DEV(device) OBJ(QUEUE, command_queue), PASS, ())                                         \
    /* ---- OpenCL 2.2 ---- */                                                                                       \
    X(clSetProgramReleaseCallback, cl_int, CODE,                                                                     \
      (cl_program program, void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data),                      \
      (program, pfn_notify, user_data), OBJ(PROGRAM, program), PASS, ())                                             \
    X(clSetProgramSpecializationConstant, cl_int, CODE,                                                              \
      (cl_program program, cl_uint spec_id, size_t spec_size, const void *spec_value),                               \
      (program, spec_id, spec_size, spec_value), OBJ(PROGRAM, program), PASS, ())                                    \
    /* ---- OpenCL 3.0 ---- */                                                                                       \
    X(clCreateBufferWithProperties, cl_mem, ERRCODE,                                                                 \
      (cl_context context, const cl_mem_properties *properties, cl_mem_flags flags, size_t size, void *host_ptr,     \
       cl_int *errcode_ret),                                                                                         \
      (context, properties, flags, size, host_ptr, errcode_ret), OBJ(CONTEXT, context),                              \
      CREATE, (MEM, size, context, NULL, 0))                                                                         \
    X(clCreateImageWithProperties, cl_mem, ERRCODE,                                                                  \
      (cl_context context, const cl_mem_properties *properties, cl_mem_flags flags,                                  \
       const cl_image_format *image_format, const cl_image_desc *image_desc, void *host_ptr, cl_int *errcode_ret),   \
      (context, properties, flags, image_format, image_desc, host_ptr, errcode_ret),                                 \
      OBJ(CONTEXT, context) IMAGE_SOURCE(image_desc), SIZED_MEM, (context, ltcl_image_source(image_desc)))           \
    X(clSetContextDestructorCallback, cl_int, CODE,                                                                  \
      (cl_context context, void(CL_CALLBACK *pfn_notify)(cl_context, void *), void *user_data),                      \
      (context, pfn_notify, user_data), OBJ(CONTEXT, context), PASS, ())

/* The extension functions the layer wraps. A row is a dispatch row with
 * one more column after the name: the argument whose ICD serves the call
 * (extension_functions.c keeps one driver function per ICD).
 *
 *   X(name, icd object, return type, on refusal, (parameters), (arguments), checks, effect, (effect arguments))
 */
#define LTCL_EXTENSION_TABLE(X)                                                                                      \
    /* ---- cl_khr_command_buffer ---- */                                                                            \
    X(clCreateCommandBufferKHR, ltcl_first_handle(num_queues, queues), cl_command_buffer_khr, ERRCODE,               \
      (cl_uint num_queues, const cl_command_queue *queues, const cl_command_buffer_properties_khr *properties,        \
       cl_int *errcode_ret),                                                                                         \
      (num_queues, queues, properties, errcode_ret), OBJS(QUEUE, num_queues, queues, CL_INVALID_COMMAND_QUEUE),      \
      CREATE, (COMMAND_BUFFER, 0, ltcl_first_handle(num_queues, queues), NULL, 0))                                   \
    X(clFinalizeCommandBufferKHR, command_buffer, cl_int, CODE, (cl_command_buffer_khr command_buffer),              \
      (command_buffer), OBJ(COMMAND_BUFFER, command_buffer), PASS, ())                                               \
    X(clRetainCommandBufferKHR, command_buffer, cl_int, CODE, (cl_command_buffer_khr command_buffer),                \
      (command_buffer), NO_OBJECTS, REFCOUNT, (COMMAND_BUFFER, command_buffer, 0, LTCL_ALWAYS_TRACKED))              \
    X(clReleaseCommandBufferKHR, command_buffer, cl_int, CODE, (cl_command_buffer_khr command_buffer),               \
      (command_buffer), NO_OBJECTS, REFCOUNT, (COMMAND_BUFFER, command_buffer, 1, LTCL_ALWAYS_TRACKED))              \
    X(clGetCommandBufferInfoKHR, command_buffer, cl_int, CODE,                                                       \
      (cl_command_buffer_khr command_buffer, cl_command_buffer_info_khr param_name, LTCL_INFO_PARAMS),               \
      (command_buffer, param_name, LTCL_INFO_ARGS), OBJ(COMMAND_BUFFER, command_buffer), PASS, ())                   \
    X(clEnqueueCommandBufferKHR, command_buffer, cl_int, CODE,                                                       \
      (cl_uint num_queues, cl_command_queue *queues, cl_command_buffer_khr command_buffer, LTCL_WAIT_PARAMS),        \
      (num_queues, queues, command_buffer, LTCL_WAIT_ARGS),                                                          \
      OBJS(QUEUE, num_queues, queues, CL_INVALID_COMMAND_QUEUE) OBJ(COMMAND_BUFFER, command_buffer) WAITS,           \
      CUSTOM, ())                                                                                                    \
    /* ---- cl_khr_semaphore ---- */                                                                                 \
    X(clCreateSemaphoreWithPropertiesKHR, context, cl_semaphore_khr, ERRCODE,                                        \
      (cl_context context, const cl_semaphore_properties_khr *sema_props, cl_int *errcode_ret),                      \
      (context, sema_props, errcode_ret), OBJ(CONTEXT, context), CREATE, (SEMAPHORE, 0, context, NULL, 0))           \
    X(clGetSemaphoreInfoKHR, sema_object, cl_int, CODE,                                                              \
      (cl_semaphore_khr sema_object, cl_semaphore_info_khr param_name, LTCL_INFO_PARAMS),                            \
      (sema_object, param_name, LTCL_INFO_ARGS), OBJ(SEMAPHORE, sema_object), PASS, ())                              \
    X(clRetainSemaphoreKHR, sema_object, cl_int, CODE, (cl_semaphore_khr sema_object), (sema_object), NO_OBJECTS,    \
      REFCOUNT, (SEMAPHORE, sema_object, 0, LTCL_ALWAYS_TRACKED))                                                    \
    X(clReleaseSemaphoreKHR, sema_object, cl_int, CODE, (cl_semaphore_khr sema_object), (sema_object), NO_OBJECTS,   \
      REFCOUNT, (SEMAPHORE, sema_object, 1, LTCL_ALWAYS_TRACKED))                                                    \
    X(clEnqueueWaitSemaphoresKHR, command_queue, cl_int, CODE,                                                       \
      (cl_command_queue command_queue, cl_uint num_sema_objects, const cl_semaphore_khr *sema_objects,               \
       const cl_semaphore_payload_khr *sema_payload_list, LTCL_WAIT_PARAMS),                                         \
      (command_queue, num_sema_objects, sema_objects, sema_payload_list, LTCL_WAIT_ARGS),                            \
      OBJ(QUEUE, command_queue) OBJS(SEMAPHORE, num_sema_objects, sema_objects, CL_INVALID_SEMAPHORE_KHR) WAITS,     \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueSignalSemaphoresKHR, command_queue, cl_int, CODE,                                                     \
      (cl_command_queue command_queue, cl_uint num_sema_objects, const cl_semaphore_khr *sema_objects,               \
       const cl_semaphore_payload_khr *sema_payload_list, LTCL_WAIT_PARAMS),                                         \
      (command_queue, num_sema_objects, sema_objects, sema_payload_list, LTCL_WAIT_ARGS),                            \
      OBJ(QUEUE, command_queue) OBJS(SEMAPHORE, num_sema_objects, sema_objects, CL_INVALID_SEMAPHORE_KHR) WAITS,     \
      EVENT, (command_queue))                                                                                        \
    /* ---- cl_intel_unified_shared_memory ---- */                                                                   \
    X(clHostMemAllocINTEL, context, void *, ERRCODE,                                                                 \
      (cl_context context, const cl_mem_properties_intel *properties, size_t size, cl_uint alignment,                \
       cl_int *errcode_ret),                                                                                         \
      (context, properties, size, alignment, errcode_ret), OBJ(CONTEXT, context),                                    \
      CREATE, (USM, size, context, NULL, 0))                                                                         \
    X(clDeviceMemAllocINTEL, context, void *, ERRCODE,                                                               \
      (cl_context context, cl_device_id device, const cl_mem_properties_intel *properties, size_t size,              \
       cl_uint alignment, cl_int *errcode_ret),                                                                      \
      (context, device, properties, size, alignment, errcode_ret), OBJ(CONTEXT, context) DEV(device),                \
      CREATE, (USM, size, context, NULL, 0))                                                                         \
    X(clSharedMemAllocINTEL, context, void *, ERRCODE,                                                               \
      (cl_context context, cl_device_id device, const cl_mem_properties_intel *properties, size_t size,              \
       cl_uint alignment, cl_int *errcode_ret),                                                                      \
      (context, device, properties, size, alignment, errcode_ret), OBJ(CONTEXT, context) DEV(device),                \
      CREATE, (USM, size, context, NULL, 0))                                                                         \
    X(clMemFreeINTEL, context, cl_int, CODE, (cl_context context, void *ptr), (context, ptr), OBJ(CONTEXT, context), \
      CUSTOM, ())                                                                                                    \
    X(clMemBlockingFreeINTEL, context, cl_int, CODE, (cl_context context, void *ptr), (context, ptr),                \
      OBJ(CONTEXT, context), CUSTOM, ())                                                                             \
    X(clGetMemAllocInfoINTEL, context, cl_int, CODE,                                                                 \
      (cl_context context, const void *ptr, cl_mem_info_intel param_name, LTCL_INFO_PARAMS),                         \
      (context, ptr, param_name, LTCL_INFO_ARGS), OBJ(CONTEXT, context), PASS, ())                                   \
    X(clSetKernelArgMemPointerINTEL, kernel, cl_int, CODE,                                                           \
      (cl_kernel kernel, cl_uint arg_index, const void *arg_value), (kernel, arg_index, arg_value),                  \
      OBJ(KERNEL, kernel), PASS, ())                                                                                 \
    X(clEnqueueMemFillINTEL, command_queue, cl_int, CODE,                                                            \
      (cl_command_queue command_queue, void *dst_ptr, const void *pattern, size_t pattern_size, size_t size,         \
       LTCL_WAIT_PARAMS),                                                                                            \
      (command_queue, dst_ptr, pattern, pattern_size, size, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS,        \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueMemcpyINTEL, command_queue, cl_int, CODE,                                                             \
      (cl_command_queue command_queue, cl_bool blocking, void *dst_ptr, const void *src_ptr, size_t size,            \
       LTCL_WAIT_PARAMS),                                                                                            \
      (command_queue, blocking, dst_ptr, src_ptr, size, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS,            \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueMemAdviseINTEL, command_queue, cl_int, CODE,                                                          \
      (cl_command_queue command_queue, const void *ptr, size_t size, cl_mem_advice_intel advice, LTCL_WAIT_PARAMS),  \
      (command_queue, ptr, size, advice, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS, EVENT, (command_queue))   \
    X(clEnqueueMigrateMemINTEL, command_queue, cl_int, CODE,                                                         \
      (cl_command_queue command_queue, const void *ptr, size_t size, cl_mem_migration_flags flags,                   \
       LTCL_WAIT_PARAMS),                                                                                            \
      (command_queue, ptr, size, flags, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS, EVENT, (command_queue))    \
    X(clEnqueueMemsetINTEL, command_queue, cl_int, CODE,                                                             \
      (cl_command_queue command_queue, void *dst_ptr, cl_int value, size_t size, LTCL_WAIT_PARAMS),                  \
      (command_queue, dst_ptr, value, size, LTCL_WAIT_ARGS), OBJ(QUEUE, command_queue) WAITS, EVENT, (command_queue))\
    /* ---- functions of finished extensions that only read their objects ---- */                                    \
    X(clGetKernelSuggestedLocalWorkSizeKHR, kernel, cl_int, CODE,                                                    \
      (cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim, const size_t *global_work_offset,          \
       const size_t *global_work_size, size_t *suggested_local_work_size),                                           \
      (command_queue, kernel, work_dim, global_work_offset, global_work_size, suggested_local_work_size),            \
      OBJ(QUEUE, command_queue) OBJ(KERNEL, kernel), PASS, ())                                                       \
    X(clTerminateContextKHR, context, cl_int, CODE, (cl_context context), (context), OBJ(CONTEXT, context), PASS, ())\
    X(clSetContentSizeBufferPoCL, buffer, cl_int, CODE, (cl_mem buffer, cl_mem content_size_buffer),                 \
      (buffer, content_size_buffer), OBJ(MEM, buffer) OBJ(MEM, content_size_buffer), PASS, ())                       \
    /* ---- KHR spellings of core creators ---- */                                                                   \
    X(clCreateCommandQueueWithPropertiesKHR, context, cl_command_queue, ERRCODE,                                     \
      (cl_context context, cl_device_id device, const cl_queue_properties_khr *properties, cl_int *errcode_ret),     \
      (context, device, properties, errcode_ret), OBJ(CONTEXT, context) DEV(device), CUSTOM, ())                     \
    X(clCreateProgramWithILKHR, context, cl_program, ERRCODE,                                                        \
      (cl_context context, const void *il, size_t length, cl_int *errcode_ret), (context, il, length, errcode_ret),  \
      OBJ(CONTEXT, context), CREATE, (PROGRAM, 0, context, NULL, 0))                                                 \
    /* ---- cl_intel_va_api_media_sharing ---- */                                                                    \
    X(clCreateFromVA_APIMediaSurfaceINTEL, context, cl_mem, ERRCODE,                                                 \
      (cl_context context, cl_mem_flags flags, void *surface, cl_uint plane, cl_int *errcode_ret),                   \
      (context, flags, surface, plane, errcode_ret), OBJ(CONTEXT, context), SIZED_MEM, (context, NULL))              \
    X(clEnqueueAcquireVA_APIMediaSurfacesINTEL, command_queue, cl_int, CODE,                                         \
      (cl_command_queue command_queue, cl_uint num_objects, const cl_mem *mem_objects, LTCL_WAIT_PARAMS),            \
      (command_queue, num_objects, mem_objects, LTCL_WAIT_ARGS),                                                     \
      OBJ(QUEUE, command_queue) OBJS(MEM, num_objects, mem_objects, CL_INVALID_MEM_OBJECT) WAITS,                    \
      EVENT, (command_queue))                                                                                        \
    X(clEnqueueReleaseVA_APIMediaSurfacesINTEL, command_queue, cl_int, CODE,                                         \
      (cl_command_queue command_queue, cl_uint num_objects, const cl_mem *mem_objects, LTCL_WAIT_PARAMS),            \
      (command_queue, num_objects, mem_objects, LTCL_WAIT_ARGS),                                                     \
      OBJ(QUEUE, command_queue) OBJS(MEM, num_objects, mem_objects, CL_INVALID_MEM_OBJECT) WAITS,                    \
      EVENT, (command_queue))
/* clang-format on */

/* The extension functions by number (extension_functions.c keeps their
 * driver functions under it). */
typedef enum ltcl_ext_id {
#define LTCL_EXT_ID(name, ...) LTCL_EXT_##name,
    LTCL_EXTENSION_TABLE(LTCL_EXT_ID)
#undef LTCL_EXT_ID
    LTCL_EXT_COUNT
} ltcl_ext_id;

/* The driver's function for an extension call whose ICD is that of
 * `object`: a handle the registry holds live (the checks found it so, or
 * the retain or release about to be counted), or NULL. It reads the
 * object's ICD only then: any other handle gets the first ICD's. Pure
 * (it changes nothing), so an unused call is dropped. */
void *ltcl_ext_driver(ltcl_ext_id id, const void *object) __attribute__((pure));
#define LTCL_EXT_DRIVER(name, object) ((name##_fn)ltcl_ext_driver(LTCL_EXT_##name, (object)))

/* cl_intel_va_api_media_sharing's header needs libva's; the surface is
 * only passed through, so a pointer of our own stands in for VASurfaceID *. */
typedef cl_mem(CL_API_CALL *clCreateFromVA_APIMediaSurfaceINTEL_fn)(cl_context context, cl_mem_flags flags,
                                                                    void *surface, cl_uint plane,
                                                                    cl_int *errcode_ret);
typedef cl_int(CL_API_CALL *clEnqueueAcquireVA_APIMediaSurfacesINTEL_fn)(cl_command_queue command_queue,
                                                                        cl_uint num_objects,
                                                                        const cl_mem *mem_objects,
                                                                        LTCL_WAIT_PARAMS);
typedef clEnqueueAcquireVA_APIMediaSurfacesINTEL_fn clEnqueueReleaseVA_APIMediaSurfacesINTEL_fn;
/* pocl's cl_pocl_content_size is not in the Khronos headers */
typedef cl_int(CL_API_CALL *clSetContentSizeBufferPoCL_fn)(cl_mem buffer, cl_mem content_size_buffer);

/* Small helpers the table's expressions use. */
#define ltcl_first_handle(count, handles) ((count) && (handles) ? (const void *)(handles)[0] : NULL)
static inline uint64_t ltcl_region_bytes(cl_buffer_create_type type, const void *info)
{
    return type == CL_BUFFER_CREATE_TYPE_REGION && info ? ((const cl_buffer_region *)info)->size : 0;
}
static inline const void *ltcl_image_source(const cl_image_desc *desc) { return desc ? desc->mem_object : NULL; }

/* The hand-written wrappers (effect CUSTOM): declared here from the
 * tables, so the compiler holds each to its row's signature. */
#define LTCL_DECLARE_PASS(name, ret, params)
#define LTCL_DECLARE_REFCOUNT(name, ret, params)
#define LTCL_DECLARE_CREATE(name, ret, params)
#define LTCL_DECLARE_SIZED_MEM(name, ret, params)
#define LTCL_DECLARE_EVENT(name, ret, params)
#define LTCL_DECLARE_EVENT_ERRCODE(name, ret, params)
#define LTCL_DECLARE_CUSTOM(name, ret, params) ret CL_API_CALL name##_wrap params;
#define LTCL_DECLARE_CUSTOM_VOID(name, ret, params) ret CL_API_CALL name##_wrap params;
#define LTCL_DECLARE_CORE(name, ret, fail, params, args, checks, effect, effect_args) \
    LTCL_DECLARE_##effect(name, ret, params)
#define LTCL_DECLARE_EXT(name, icd, ret, fail, params, args, checks, effect, effect_args) \
    LTCL_DECLARE_##effect(name, ret, params)
#define LTCL_DECLARE_NONE(name)
LTCL_DISPATCH_TABLE(LTCL_DECLARE_CORE, LTCL_DECLARE_NONE)
LTCL_EXTENSION_TABLE(LTCL_DECLARE_EXT)

#endif
