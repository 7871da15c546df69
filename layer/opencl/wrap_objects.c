/*
 * Wrappers for the dispatch entries that create, retain and release
 * objects (everything except enqueues and extension functions).
 *
 * Each creator calls the driver with an error slot of its own, so the
 * result is known even when the program passed errcode_ret = NULL, and
 * records the object only when the call succeeded.
 */
#include <stdlib.h>

#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

#include "cl_layer_internal.h"

/* ---- retain / release pairs ------------------------------------------ */

/* The API accepts root devices and ignores retain/release on them, so only
 * sub-devices are counted. */
#define REFCOUNT_PAIR(retain_fn, release_fn, cl_type, type_id, untracked)                                     \
    LTCL_REFCOUNT_WRAPPER(retain_fn##_wrap, #retain_fn, cl_type, type_id, 0, untracked, ltcl_next->retain_fn)   \
    LTCL_REFCOUNT_WRAPPER(release_fn##_wrap, #release_fn, cl_type, type_id, 1, untracked, ltcl_next->release_fn)

REFCOUNT_PAIR(clRetainContext, clReleaseContext, cl_context, LTCL_CONTEXT, LTCL_ALWAYS_TRACKED)
REFCOUNT_PAIR(clRetainCommandQueue, clReleaseCommandQueue, cl_command_queue, LTCL_QUEUE, LTCL_ALWAYS_TRACKED)
REFCOUNT_PAIR(clRetainMemObject, clReleaseMemObject, cl_mem, LTCL_MEM, LTCL_ALWAYS_TRACKED)
REFCOUNT_PAIR(clRetainSampler, clReleaseSampler, cl_sampler, LTCL_SAMPLER, LTCL_ALWAYS_TRACKED)
REFCOUNT_PAIR(clRetainProgram, clReleaseProgram, cl_program, LTCL_PROGRAM, LTCL_ALWAYS_TRACKED)
REFCOUNT_PAIR(clRetainKernel, clReleaseKernel, cl_kernel, LTCL_KERNEL, LTCL_ALWAYS_TRACKED)
REFCOUNT_PAIR(clRetainEvent, clReleaseEvent, cl_event, LTCL_EVENT, LTCL_ALWAYS_TRACKED)
REFCOUNT_PAIR(clRetainDevice, clReleaseDevice, cl_device_id, LTCL_DEVICE, ltcl_is_root_device)
REFCOUNT_PAIR(clRetainDeviceEXT, clReleaseDeviceEXT, cl_device_id, LTCL_DEVICE, ltcl_is_root_device)

/* ---- devices ------------------------------------------------------------ */

static cl_int CL_API_CALL clGetDeviceIDs_wrap(cl_platform_id platform, cl_device_type type, cl_uint num_entries,
                                             cl_device_id *devices, cl_uint *num_devices)
{
    cl_uint found = 0;
    cl_int result = ltcl_next->clGetDeviceIDs(platform, type, num_entries, devices, num_devices ? num_devices : &found);
    if (result == CL_SUCCESS && devices) {
        cl_uint count = num_devices ? *num_devices : found;
        ltcl_note_root_devices(devices, count < num_entries ? count : num_entries);
    }
    return result;
}

static void record_sub_devices(cl_device_id parent, const cl_device_id *devices, cl_uint count)
{
    cl_platform_id platform = ltcl_device_platform(parent);
    /* A sub-device holds its parent only when the parent is itself a
     * sub-device; root devices are not counted. */
    const void *held = ltcl_is_root_device(parent) ? NULL : parent;
    for (cl_uint i = 0; i < count; i++)
        ltcl_created(LTCL_DEVICE, devices[i], 0, held, NULL, 0, platform);
}

static cl_int CL_API_CALL clCreateSubDevices_wrap(cl_device_id in_device, const cl_device_partition_property *properties,
                                                 cl_uint num_devices, cl_device_id *out_devices, cl_uint *num_devices_ret)
{
    cl_uint made = 0;
    cl_int result = ltcl_next->clCreateSubDevices(in_device, properties, num_devices, out_devices, &made);
    if (num_devices_ret)
        *num_devices_ret = made;
    if (result == CL_SUCCESS && out_devices)
        record_sub_devices(in_device, out_devices, made < num_devices ? made : num_devices);
    return result;
}

static cl_int CL_API_CALL clCreateSubDevicesEXT_wrap(cl_device_id in_device,
                                                    const cl_device_partition_property_ext *properties,
                                                    cl_uint num_entries, cl_device_id *out_devices, cl_uint *num_devices)
{
    cl_uint made = 0;
    cl_int result = ltcl_next->clCreateSubDevicesEXT(in_device, properties, num_entries, out_devices, &made);
    if (num_devices)
        *num_devices = made;
    if (result == CL_SUCCESS && out_devices)
        record_sub_devices(in_device, out_devices, made < num_entries ? made : num_entries);
    return result;
}

/* ---- contexts ----------------------------------------------------------- */

static cl_platform_id platform_from_properties(const cl_context_properties *properties)
{
    for (const cl_context_properties *p = properties; p && p[0]; p += 2)
        if (p[0] == CL_CONTEXT_PLATFORM)
            return (cl_platform_id)p[1];
    return NULL;
}

static void record_context(cl_context context, const cl_context_properties *properties)
{
    cl_platform_id platform = platform_from_properties(properties);
    cl_uint count = 0;
    if (ltcl_next->clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof count, &count, NULL) == CL_SUCCESS &&
        count) {
        cl_device_id *devices = calloc(count, sizeof *devices);
        if (devices &&
            ltcl_next->clGetContextInfo(context, CL_CONTEXT_DEVICES, count * sizeof *devices, devices, NULL) == CL_SUCCESS) {
            ltcl_note_root_devices(devices, count);
            if (!platform)
                platform = ltcl_device_platform(devices[0]);
        }
        free(devices);
    }
    ltcl_created(LTCL_CONTEXT, context, 0, NULL, NULL, 0, platform);
}

static cl_context CL_API_CALL clCreateContext_wrap(const cl_context_properties *properties, cl_uint num_devices,
                                                  const cl_device_id *devices,
                                                  void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                                  void *user_data, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_context context = ltcl_next->clCreateContext(properties, num_devices, devices, notify, user_data, error_slot_);
    if (SUCCEEDED(context))
        record_context(context, properties);
    return context;
}

static cl_context CL_API_CALL clCreateContextFromType_wrap(const cl_context_properties *properties,
                                                          cl_device_type device_type,
                                                          void(CL_CALLBACK *notify)(const char *, const void *, size_t,
                                                                                    void *),
                                                          void *user_data, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_context context = ltcl_next->clCreateContextFromType(properties, device_type, notify, user_data, error_slot_);
    if (SUCCEEDED(context))
        record_context(context, properties);
    return context;
}

/* ---- command queues ----------------------------------------------------- */

static cl_command_queue CL_API_CALL clCreateCommandQueue_wrap(cl_context context, cl_device_id device,
                                                             cl_command_queue_properties properties, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_command_queue queue = ltcl_next->clCreateCommandQueue(context, device, properties, error_slot_);
    if (SUCCEEDED(queue))
        ltcl_created(LTCL_QUEUE, queue, 0, context, NULL, 0, NULL);
    return queue;
}

static cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties_wrap(cl_context context, cl_device_id device,
                                                                           const cl_queue_properties *properties,
                                                                           cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_command_queue queue = ltcl_next->clCreateCommandQueueWithProperties(context, device, properties, error_slot_);
    if (SUCCEEDED(queue))
        ltcl_created(LTCL_QUEUE, queue, 0, context, NULL, 0, NULL);
    return queue;
}

/* ---- memory objects ----------------------------------------------------- */

void ltcl_record_sized_mem(cl_mem memory, cl_context context, const void *source)
{
    size_t bytes = 0;
    if (ltcl_next->clGetMemObjectInfo(memory, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) != CL_SUCCESS)
        bytes = 0;
    ltcl_created(LTCL_MEM, memory, bytes, context, source, 0, NULL);
}

static cl_mem CL_API_CALL clCreateBuffer_wrap(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                                             cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_mem buffer = ltcl_next->clCreateBuffer(context, flags, size, host_ptr, error_slot_);
    if (SUCCEEDED(buffer))
        ltcl_created(LTCL_MEM, buffer, size, context, NULL, 0, NULL);
    return buffer;
}

static cl_mem CL_API_CALL clCreateBufferWithProperties_wrap(cl_context context, const cl_mem_properties *properties,
                                                           cl_mem_flags flags, size_t size, void *host_ptr,
                                                           cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_mem buffer = ltcl_next->clCreateBufferWithProperties(context, properties, flags, size, host_ptr, error_slot_);
    if (SUCCEEDED(buffer))
        ltcl_created(LTCL_MEM, buffer, size, context, NULL, 0, NULL);
    return buffer;
}

static cl_mem CL_API_CALL clCreateSubBuffer_wrap(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type,
                                                const void *info, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_mem sub = ltcl_next->clCreateSubBuffer(buffer, flags, type, info, error_slot_);
    if (SUCCEEDED(sub)) {
        size_t bytes = type == CL_BUFFER_CREATE_TYPE_REGION && info ? ((const cl_buffer_region *)info)->size : 0;
        /* Attached to the parent's context, and keeps the parent alive. */
        ltcl_created(LTCL_MEM, sub, bytes, buffer, buffer, LIVETRACK_PARENT_VIA_FIRST_PARENT, NULL);
    }
    return sub;
}

static cl_mem CL_API_CALL clCreateImage_wrap(cl_context context, cl_mem_flags flags, const cl_image_format *format,
                                            const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_mem image = ltcl_next->clCreateImage(context, flags, format, desc, host_ptr, error_slot_);
    if (SUCCEEDED(image))
        ltcl_record_sized_mem(image, context, desc ? desc->mem_object : NULL);
    return image;
}

static cl_mem CL_API_CALL clCreateImageWithProperties_wrap(cl_context context, const cl_mem_properties *properties,
                                                          cl_mem_flags flags, const cl_image_format *format,
                                                          const cl_image_desc *desc, void *host_ptr,
                                                          cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_mem image =
        ltcl_next->clCreateImageWithProperties(context, properties, flags, format, desc, host_ptr, error_slot_);
    if (SUCCEEDED(image))
        ltcl_record_sized_mem(image, context, desc ? desc->mem_object : NULL);
    return image;
}

static cl_mem CL_API_CALL clCreateImage2D_wrap(cl_context context, cl_mem_flags flags, const cl_image_format *format,
                                              size_t width, size_t height, size_t row_pitch, void *host_ptr,
                                              cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_mem image = ltcl_next->clCreateImage2D(context, flags, format, width, height, row_pitch, host_ptr, error_slot_);
    if (SUCCEEDED(image))
        ltcl_record_sized_mem(image, context, NULL);
    return image;
}

static cl_mem CL_API_CALL clCreateImage3D_wrap(cl_context context, cl_mem_flags flags, const cl_image_format *format,
                                              size_t width, size_t height, size_t depth, size_t row_pitch,
                                              size_t slice_pitch, void *host_ptr, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_mem image = ltcl_next->clCreateImage3D(context, flags, format, width, height, depth, row_pitch, slice_pitch,
                                              host_ptr, error_slot_);
    if (SUCCEEDED(image))
        ltcl_record_sized_mem(image, context, NULL);
    return image;
}

static cl_mem CL_API_CALL clCreatePipe_wrap(cl_context context, cl_mem_flags flags, cl_uint packet_size,
                                           cl_uint max_packets, const cl_pipe_properties *properties,
                                           cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_mem pipe = ltcl_next->clCreatePipe(context, flags, packet_size, max_packets, properties, error_slot_);
    if (SUCCEEDED(pipe))
        ltcl_created(LTCL_MEM, pipe, (uint64_t)packet_size * max_packets, context, NULL, 0, NULL);
    return pipe;
}

/* OpenGL and EGL interop: the same shape, sized by the driver. */
#define INTEROP_MEM(name, params, args)                                      \
    static cl_mem CL_API_CALL name##_wrap params                             \
    {                                                                        \
        ERROR_SLOT(errcode_ret);                                             \
        cl_mem memory = ltcl_next->name args;                                \
        if (SUCCEEDED(memory))                                               \
            ltcl_record_sized_mem(memory, context, NULL);                   \
        return memory;                                                       \
    }

INTEROP_MEM(clCreateFromGLBuffer, (cl_context context, cl_mem_flags flags, cl_GLuint bufobj, cl_int *errcode_ret),
            (context, flags, bufobj, error_slot_))
INTEROP_MEM(clCreateFromGLTexture,
            (cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel, cl_GLuint texture,
             cl_int *errcode_ret),
            (context, flags, target, miplevel, texture, error_slot_))
INTEROP_MEM(clCreateFromGLTexture2D,
            (cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel, cl_GLuint texture,
             cl_int *errcode_ret),
            (context, flags, target, miplevel, texture, error_slot_))
INTEROP_MEM(clCreateFromGLTexture3D,
            (cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel, cl_GLuint texture,
             cl_int *errcode_ret),
            (context, flags, target, miplevel, texture, error_slot_))
INTEROP_MEM(clCreateFromGLRenderbuffer,
            (cl_context context, cl_mem_flags flags, cl_GLuint renderbuffer, cl_int *errcode_ret),
            (context, flags, renderbuffer, error_slot_))
INTEROP_MEM(clCreateFromEGLImageKHR,
            (cl_context context, CLeglDisplayKHR display, CLeglImageKHR image, cl_mem_flags flags,
             const cl_egl_image_properties_khr *properties, cl_int *errcode_ret),
            (context, display, image, flags, properties, error_slot_))

/* ---- samplers ------------------------------------------------------------ */

static cl_sampler CL_API_CALL clCreateSampler_wrap(cl_context context, cl_bool normalized, cl_addressing_mode addressing,
                                                  cl_filter_mode filter, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_sampler sampler = ltcl_next->clCreateSampler(context, normalized, addressing, filter, error_slot_);
    if (SUCCEEDED(sampler))
        ltcl_created(LTCL_SAMPLER, sampler, 0, context, NULL, 0, NULL);
    return sampler;
}

static cl_sampler CL_API_CALL clCreateSamplerWithProperties_wrap(cl_context context,
                                                                const cl_sampler_properties *properties,
                                                                cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_sampler sampler = ltcl_next->clCreateSamplerWithProperties(context, properties, error_slot_);
    if (SUCCEEDED(sampler))
        ltcl_created(LTCL_SAMPLER, sampler, 0, context, NULL, 0, NULL);
    return sampler;
}

/* ---- programs ------------------------------------------------------------ */

static cl_program CL_API_CALL clCreateProgramWithSource_wrap(cl_context context, cl_uint count, const char **strings,
                                                            const size_t *lengths, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_program program = ltcl_next->clCreateProgramWithSource(context, count, strings, lengths, error_slot_);
    if (SUCCEEDED(program))
        ltcl_created(LTCL_PROGRAM, program, 0, context, NULL, 0, NULL);
    return program;
}

static cl_program CL_API_CALL clCreateProgramWithBinary_wrap(cl_context context, cl_uint num_devices,
                                                            const cl_device_id *devices, const size_t *lengths,
                                                            const unsigned char **binaries, cl_int *binary_status,
                                                            cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_program program = ltcl_next->clCreateProgramWithBinary(context, num_devices, devices, lengths, binaries,
                                                              binary_status, error_slot_);
    if (SUCCEEDED(program))
        ltcl_created(LTCL_PROGRAM, program, 0, context, NULL, 0, NULL);
    return program;
}

static cl_program CL_API_CALL clCreateProgramWithBuiltInKernels_wrap(cl_context context, cl_uint num_devices,
                                                                    const cl_device_id *devices,
                                                                    const char *kernel_names, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_program program =
        ltcl_next->clCreateProgramWithBuiltInKernels(context, num_devices, devices, kernel_names, error_slot_);
    if (SUCCEEDED(program))
        ltcl_created(LTCL_PROGRAM, program, 0, context, NULL, 0, NULL);
    return program;
}

static cl_program CL_API_CALL clCreateProgramWithIL_wrap(cl_context context, const void *il, size_t length,
                                                        cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_program program = ltcl_next->clCreateProgramWithIL(context, il, length, error_slot_);
    if (SUCCEEDED(program))
        ltcl_created(LTCL_PROGRAM, program, 0, context, NULL, 0, NULL);
    return program;
}

static cl_program CL_API_CALL clLinkProgram_wrap(cl_context context, cl_uint num_devices, const cl_device_id *devices,
                                                const char *options, cl_uint num_inputs, const cl_program *inputs,
                                                void(CL_CALLBACK *notify)(cl_program, void *), void *user_data,
                                                cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_program program = ltcl_next->clLinkProgram(context, num_devices, devices, options, num_inputs, inputs, notify,
                                                  user_data, error_slot_);
    /* A link that fails may still return a program (to read its log),
     * which the program must release: any handle returned is recorded. */
    if (program)
        ltcl_created(LTCL_PROGRAM, program, 0, context, NULL, 0, NULL);
    return program;
}

/* ---- kernels ------------------------------------------------------------- */

static cl_kernel CL_API_CALL clCreateKernel_wrap(cl_program program, const char *name, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_kernel kernel = ltcl_next->clCreateKernel(program, name, error_slot_);
    if (SUCCEEDED(kernel))
        ltcl_created(LTCL_KERNEL, kernel, 0, program, NULL, 0, NULL);
    return kernel;
}

static cl_int CL_API_CALL clCreateKernelsInProgram_wrap(cl_program program, cl_uint num_kernels, cl_kernel *kernels,
                                                       cl_uint *num_kernels_ret)
{
    cl_uint made = 0;
    cl_int result = ltcl_next->clCreateKernelsInProgram(program, num_kernels, kernels, &made);
    if (num_kernels_ret)
        *num_kernels_ret = made;
    if (result == CL_SUCCESS && kernels)
        for (cl_uint i = 0; i < made && i < num_kernels; i++)
            ltcl_created(LTCL_KERNEL, kernels[i], 0, program, NULL, 0, NULL);
    return result;
}

static cl_kernel CL_API_CALL clCloneKernel_wrap(cl_kernel source, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_kernel kernel = ltcl_next->clCloneKernel(source, error_slot_);
    /* The clone belongs to the source kernel's program. */
    if (SUCCEEDED(kernel))
        ltcl_created(LTCL_KERNEL, kernel, 0, source, NULL, LIVETRACK_PARENT_VIA_FIRST_PARENT, NULL);
    return kernel;
}

/* ---- events made outside a queue --------------------------------------- */

static cl_event CL_API_CALL clCreateUserEvent_wrap(cl_context context, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_event event = ltcl_next->clCreateUserEvent(context, error_slot_);
    if (SUCCEEDED(event))
        ltcl_created(LTCL_EVENT, event, 0, context, NULL, 0, NULL);
    return event;
}

static cl_event CL_API_CALL clCreateEventFromGLsyncKHR_wrap(cl_context context, cl_GLsync sync, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_event event = ltcl_next->clCreateEventFromGLsyncKHR(context, sync, error_slot_);
    if (SUCCEEDED(event))
        ltcl_created(LTCL_EVENT, event, 0, context, NULL, 0, NULL);
    return event;
}

static cl_event CL_API_CALL clCreateEventFromEGLSyncKHR_wrap(cl_context context, CLeglSyncKHR sync,
                                                            CLeglDisplayKHR display, cl_int *errcode_ret)
{
    ERROR_SLOT(errcode_ret);
    cl_event event = ltcl_next->clCreateEventFromEGLSyncKHR(context, sync, display, error_slot_);
    if (SUCCEEDED(event))
        ltcl_created(LTCL_EVENT, event, 0, context, NULL, 0, NULL);
    return event;
}

/* ---- shared virtual memory ---------------------------------------------- */

static void *CL_API_CALL clSVMAlloc_wrap(cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment)
{
    void *pointer = ltcl_next->clSVMAlloc(context, flags, size, alignment);
    if (pointer)
        ltcl_created(LTCL_SVM, pointer, size, context, NULL, 0, NULL);
    return pointer;
}

static void CL_API_CALL clSVMFree_wrap(cl_context context, void *pointer)
{
    cl_int refused;
    /* Freeing NULL is a no-op the API allows. */
    if (pointer && ltcl_free("clSVMFree", LTCL_SVM, pointer, CL_SUCCESS, &refused) == LTCL_REFUSED)
        return;
    ltcl_next->clSVMFree(context, pointer);
}

/* ---- installation ----------------------------------------------------- */

void ltcl_install_object_wrappers(struct _cl_icd_dispatch *table)
{
#define WRAP(name) table->name = name##_wrap
    WRAP(clRetainContext);
    WRAP(clReleaseContext);
    WRAP(clRetainCommandQueue);
    WRAP(clReleaseCommandQueue);
    WRAP(clRetainMemObject);
    WRAP(clReleaseMemObject);
    WRAP(clRetainSampler);
    WRAP(clReleaseSampler);
    WRAP(clRetainProgram);
    WRAP(clReleaseProgram);
    WRAP(clRetainKernel);
    WRAP(clReleaseKernel);
    WRAP(clRetainEvent);
    WRAP(clReleaseEvent);
    WRAP(clRetainDevice);
    WRAP(clReleaseDevice);
    WRAP(clRetainDeviceEXT);
    WRAP(clReleaseDeviceEXT);
    WRAP(clGetDeviceIDs);
    WRAP(clCreateSubDevices);
    WRAP(clCreateSubDevicesEXT);
    WRAP(clCreateContext);
    WRAP(clCreateContextFromType);
    WRAP(clCreateCommandQueue);
    WRAP(clCreateCommandQueueWithProperties);
    WRAP(clCreateBuffer);
    WRAP(clCreateBufferWithProperties);
    WRAP(clCreateSubBuffer);
    WRAP(clCreateImage);
    WRAP(clCreateImageWithProperties);
    WRAP(clCreateImage2D);
    WRAP(clCreateImage3D);
    WRAP(clCreatePipe);
    WRAP(clCreateFromGLBuffer);
    WRAP(clCreateFromGLTexture);
    WRAP(clCreateFromGLTexture2D);
    WRAP(clCreateFromGLTexture3D);
    WRAP(clCreateFromGLRenderbuffer);
    WRAP(clCreateFromEGLImageKHR);
    WRAP(clCreateSampler);
    WRAP(clCreateSamplerWithProperties);
    WRAP(clCreateProgramWithSource);
    WRAP(clCreateProgramWithBinary);
    WRAP(clCreateProgramWithBuiltInKernels);
    WRAP(clCreateProgramWithIL);
    WRAP(clLinkProgram);
    WRAP(clCreateKernel);
    WRAP(clCreateKernelsInProgram);
    WRAP(clCloneKernel);
    WRAP(clCreateUserEvent);
    WRAP(clCreateEventFromGLsyncKHR);
    WRAP(clCreateEventFromEGLSyncKHR);
    WRAP(clSVMAlloc);
    WRAP(clSVMFree);
#undef WRAP
}
