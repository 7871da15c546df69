/*
 * The creators and frees whose effect on the registry does not fit one of
 * the table's generic effects (entry_points.h): devices, contexts,
 * programs from a link, kernels by the batch, SVM, and the size of memory
 * objects only the driver knows. Their arguments were checked by the
 * generated wrapper before they get here.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "entry_points.h"

/* ---- devices ------------------------------------------------------------ */

cl_int CL_API_CALL clGetDeviceIDs_wrap(cl_platform_id platform, cl_device_type device_type, cl_uint num_entries,
                                       cl_device_id *devices, cl_uint *num_devices)
{
    /* The program's own arguments go to the driver unchanged: with
     * devices and num_devices both NULL the call must fail. */
    cl_int result = ltcl_next->clGetDeviceIDs(platform, device_type, num_entries, devices, num_devices);
    if (result == CL_SUCCESS && devices) {
        cl_uint count = num_entries;
        if (num_devices)
            count = *num_devices;
        else if (ltcl_next->clGetDeviceIDs(platform, device_type, 0, NULL, &count) != CL_SUCCESS)
            count = 0; /* cannot tell how many entries the driver filled */
        ltcl_note_root_devices(devices, count < num_entries ? count : num_entries);
    }
    return result;
}

static void record_sub_devices(const char *call, cl_device_id parent, const cl_device_id *devices, cl_uint count)
{
    cl_platform_id platform = ltcl_device_platform(parent);
    /* A sub-device does not hold the sub-device it was partitioned from:
     * the specification lists no such hold, and pocl 3.1 frees a
     * sub-device at its last clReleaseDevice whatever was made from it.
     * Held here, the freed parent stayed valid to the checks, and a
     * report retained it in the driver (a crash). */
    for (cl_uint i = 0; i < count; i++)
        ltcl_record_creation(call, LTCL_DEVICE, devices[i], 0, NULL, NULL, 0, platform);
}

cl_int CL_API_CALL clCreateSubDevices_wrap(cl_device_id in_device, const cl_device_partition_property *properties,
                                           cl_uint num_devices, cl_device_id *out_devices, cl_uint *num_devices_ret)
{
    /* The count goes where the program asked (a failed call leaves its
     * variable as the driver leaves it), else to a local of ours. */
    cl_uint made = 0;
    cl_uint *count = num_devices_ret ? num_devices_ret : &made;
    cl_int result = ltcl_next->clCreateSubDevices(in_device, properties, num_devices, out_devices, count);
    if (result == CL_SUCCESS && out_devices)
        record_sub_devices("clCreateSubDevices", in_device, out_devices, *count < num_devices ? *count : num_devices);
    return result;
}

cl_int CL_API_CALL clCreateSubDevicesEXT_wrap(cl_device_id in_device,
                                              const cl_device_partition_property_ext *partition_properties,
                                              cl_uint num_entries, cl_device_id *out_devices, cl_uint *num_devices)
{
    cl_uint made = 0;
    cl_uint *count = num_devices ? num_devices : &made;
    cl_int result =
        ltcl_next->clCreateSubDevicesEXT(in_device, partition_properties, num_entries, out_devices, count);
    if (result == CL_SUCCESS && out_devices)
        record_sub_devices("clCreateSubDevicesEXT", in_device, out_devices,
                           *count < num_entries ? *count : num_entries);
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

/* A context that names no platform and has no device (pocl's answer to
 * clCreateContextFromType of a type it lacks, with NULL properties) is
 * still one platform's: without it, reports for that platform left out
 * the context and all made in it. Every object of an ICD starts with
 * that ICD's dispatch table, so the one platform with the context's
 * table is it; several platforms of one ICD share a table, and then none
 * is chosen. */
static cl_platform_id platform_by_dispatch(cl_context context)
{
    cl_uint count = 0;
    if (ltcl_next->clGetPlatformIDs(0, NULL, &count) != CL_SUCCESS || !count)
        return NULL;
    cl_platform_id *platforms = calloc(count, sizeof *platforms);
    cl_platform_id found = NULL;
    unsigned matches = 0;
    if (platforms && ltcl_next->clGetPlatformIDs(count, platforms, NULL) == CL_SUCCESS)
        for (cl_uint i = 0; i < count; i++)
            if (platforms[i] && *(void *const *)platforms[i] == *(void *const *)context) {
                found = platforms[i];
                matches++;
            }
    free(platforms);
    return matches == 1 ? found : NULL;
}

static void record_context(const char *call, cl_context context, const cl_context_properties *properties)
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
    if (!platform)
        platform = platform_by_dispatch(context);
    ltcl_record_creation(call, LTCL_CONTEXT, context, 0, NULL, NULL, 0, platform);
}

void ltcl_record_context(const char *call, cl_context context) { record_context(call, context, NULL); }

/* Any context returned is recorded (see ltcl_record_creation). */
cl_context CL_API_CALL clCreateContext_wrap(const cl_context_properties *properties, cl_uint num_devices,
                                            const cl_device_id *devices,
                                            void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
                                            void *user_data, cl_int *errcode_ret)
{
    cl_context context = ltcl_next->clCreateContext(properties, num_devices, devices, pfn_notify, user_data, errcode_ret);
    if (context)
        record_context("clCreateContext", context, properties);
    return context;
}

cl_context CL_API_CALL clCreateContextFromType_wrap(const cl_context_properties *properties, cl_device_type device_type,
                                                    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t,
                                                                                  void *),
                                                    void *user_data, cl_int *errcode_ret)
{
    cl_context context = ltcl_next->clCreateContextFromType(properties, device_type, pfn_notify, user_data, errcode_ret);
    if (context)
        record_context("clCreateContextFromType", context, properties);
    return context;
}

/* ---- command queues ------------------------------------------------------ */

/* A device queue asked for while the device's default device queue exists
 * is that queue, retained (the specification, clCreateCommandQueueWith-
 * Properties, footnote on CL_QUEUE_ON_DEVICE[_DEFAULT]): a handle livetrack
 * already holds live as a queue is then a retain, not a new queue. */
static int asks_for_device_queue(const cl_queue_properties *properties)
{
    for (const cl_queue_properties *p = properties; p && p[0]; p += 2)
        if (p[0] == CL_QUEUE_PROPERTIES && (p[1] & CL_QUEUE_ON_DEVICE))
            return 1;
    return 0;
}

static void record_queue(const char *call, cl_command_queue queue, cl_context context,
                         const cl_queue_properties *properties)
{
    livetrack_type type;
    if (queue && asks_for_device_queue(properties) &&
        livetrack_live_type(LIVETRACK_DOMAIN_OPENCL, ltcl_key(queue), &type) == LIVETRACK_OK && type == LTCL_QUEUE &&
        livetrack_retain(LIVETRACK_DOMAIN_OPENCL, LTCL_QUEUE, ltcl_key(queue), call) == LIVETRACK_OK)
        return;
    ltcl_record_creation(call, LTCL_QUEUE, queue, 0, context, NULL, 0, NULL);
}

cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties_wrap(cl_context context, cl_device_id device,
                                                                     const cl_queue_properties *properties,
                                                                     cl_int *errcode_ret)
{
    cl_command_queue queue = ltcl_next->clCreateCommandQueueWithProperties(context, device, properties, errcode_ret);
    record_queue("clCreateCommandQueueWithProperties", queue, context, properties);
    return queue;
}

cl_command_queue CL_API_CALL clCreateCommandQueueWithPropertiesKHR_wrap(cl_context context, cl_device_id device,
                                                                        const cl_queue_properties_khr *properties,
                                                                        cl_int *errcode_ret)
{
    cl_command_queue queue =
        LTCL_EXT_DRIVER(clCreateCommandQueueWithPropertiesKHR, context)(context, device, properties, errcode_ret);
    record_queue("clCreateCommandQueueWithPropertiesKHR", queue, context, properties);
    return queue;
}

/* ---- memory objects ----------------------------------------------------- */

void ltcl_record_sized_mem(const char *call, cl_mem memory, cl_context context, const void *source)
{
    size_t bytes = 0;
    if (ltcl_next->clGetMemObjectInfo(memory, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) != CL_SUCCESS)
        bytes = 0;
    ltcl_record_creation(call, LTCL_MEM, memory, bytes, context, source, 0, NULL);
}

/* ---- programs and kernels -------------------------------------------------- */

/* The linked program reaches pfn_notify before clLinkProgram returns it:
 * pocl calls the notification inside the call, an asynchronous driver
 * may call it on a thread of its own meanwhile. What the notification
 * does with the program (read its build log) must find it live, so
 * whichever comes first, the notification or the return, records it, and
 * the other waits until that is done.
 *
 * A link that fails may notify with a program and then drop its own
 * reference and return NULL (pocl does): the return drops the reference
 * the notification's recording gave (the program stays live if the
 * notification retained it), or, first, keeps a later notification from
 * recording it (LINK_NONE). */
enum { LINK_UNRECORDED, LINK_RECORDING, LINK_RECORDED, LINK_NONE };

typedef struct link_notice {
    void(CL_CALLBACK *notify)(cl_program, void *);
    void *user_data;
    cl_context context;
    cl_program program;   /* the one recorded, once LINK_RECORDED */
    atomic_int recorded;  /* LINK_* */
    atomic_int notified;  /* the program's notification has started */
    atomic_int users;     /* the wrapper and the notification: the last frees */
} link_notice;

static void record_linked(link_notice *notice, cl_program program)
{
    int expected = LINK_UNRECORDED;
    if (atomic_compare_exchange_strong(&notice->recorded, &expected, LINK_RECORDING)) {
        ltcl_record_creation("clLinkProgram", LTCL_PROGRAM, program, 0, notice->context, NULL, 0, NULL);
        notice->program = program;
        atomic_store(&notice->recorded, LINK_RECORDED);
        return;
    }
    while (expected == LINK_RECORDING)
        sched_yield(), expected = atomic_load(&notice->recorded);
}

/* clLinkProgram returned no program: none stays recorded. */
static void forget_linked(link_notice *notice)
{
    int expected = LINK_UNRECORDED;
    if (atomic_compare_exchange_strong(&notice->recorded, &expected, LINK_NONE))
        return;
    while (expected == LINK_RECORDING)
        sched_yield(), expected = atomic_load(&notice->recorded);
    /* The driver dropped the reference recording gave the program: only
     * that one goes. A notification that retained the program keeps it
     * live (the driver too); one that released it made it gone already
     * (a misuse the release reported), so a failure here is no news. */
    livetrack_release(LIVETRACK_DOMAIN_OPENCL, LTCL_PROGRAM, ltcl_key(notice->program), NULL, NULL);
}

static void let_go_of_notice(link_notice *notice)
{
    if (atomic_fetch_sub(&notice->users, 1) == 1)
        free(notice);
}

static void CL_CALLBACK notify_linked(cl_program program, void *data)
{
    link_notice *notice = data;
    atomic_store(&notice->notified, 1);
    if (program)
        record_linked(notice, program);
    notice->notify(program, notice->user_data);
    let_go_of_notice(notice);
}

/* A link that fails may still return a program (to read its log), which
 * the program must release: recorded like any other returned handle. */
cl_program CL_API_CALL clLinkProgram_wrap(cl_context context, cl_uint num_devices, const cl_device_id *device_list,
                                          const char *options, cl_uint num_input_programs,
                                          const cl_program *input_programs,
                                          void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data,
                                          cl_int *errcode_ret)
{
    link_notice *notice = pfn_notify ? malloc(sizeof *notice) : NULL;
    if (notice) {
        *notice = (link_notice){.notify = pfn_notify, .user_data = user_data, .context = context};
        atomic_init(&notice->recorded, LINK_UNRECORDED);
        atomic_init(&notice->notified, 0);
        atomic_init(&notice->users, 2);
    }
    cl_program program = ltcl_next->clLinkProgram(context, num_devices, device_list, options, num_input_programs,
                                                  input_programs, notice ? notify_linked : pfn_notify,
                                                  notice ? (void *)notice : user_data, errcode_ret);
    if (!notice) {
        if (program)
            ltcl_created(LTCL_PROGRAM, program, 0, context, NULL, 0, NULL);
        return program;
    }
    if (program)
        record_linked(notice, program);
    else
        forget_linked(notice);
    if (!program && !atomic_load(&notice->notified))
        let_go_of_notice(notice); /* no program, no notification to come: its share too */
    let_go_of_notice(notice);
    return program;
}

cl_int CL_API_CALL clCreateKernelsInProgram_wrap(cl_program program, cl_uint num_kernels, cl_kernel *kernels,
                                                 cl_uint *num_kernels_ret)
{
    cl_uint made = 0;
    cl_uint *count = num_kernels_ret ? num_kernels_ret : &made;
    cl_int result = ltcl_next->clCreateKernelsInProgram(program, num_kernels, kernels, count);
    if (result == CL_SUCCESS && kernels)
        for (cl_uint i = 0; i < *count && i < num_kernels; i++)
            ltcl_created(LTCL_KERNEL, kernels[i], 0, program, NULL, 0, NULL);
    return result;
}

/* ---- shared virtual memory ---------------------------------------------- */

void *CL_API_CALL clSVMAlloc_wrap(cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment)
{
    void *pointer = ltcl_next->clSVMAlloc(context, flags, size, alignment);
    if (pointer)
        ltcl_created(LTCL_SVM, pointer, size, context, NULL, 0, NULL);
    return pointer;
}

void CL_API_CALL clSVMFree_wrap(cl_context context, void *svm_pointer)
{
    cl_int refused;
    /* Freeing NULL is a no-op the API allows. */
    if (svm_pointer && ltcl_free("clSVMFree", LTCL_SVM, svm_pointer, CL_SUCCESS, &refused) == LTCL_REFUSED)
        return;
    ltcl_next->clSVMFree(context, svm_pointer);
}
