/*
 * Process lifecycle with the OpenCL layer on pocl. The programs know
 * nothing of livetrack: the loader brings the layer in through
 * OPENCL_LAYERS (set by the test).
 *
 *   unload     the program loads the OpenCL loader with dlopen(), leaks a
 *              context, a queue and buffers, and unloads the loader again
 *              before it exits. livetrack's exit report must still come,
 *              list those objects, and never call into the loader or the
 *              driver (either may be gone by then).
 *   exit-busy  exit() while four threads create and release buffers and
 *              events through the layer: no crash, no hang, a report.
 *
 *   test_cl_lifecycle             (driver; OPENCL_LAYERS in the environment)
 */
#include <pthread.h>
#include <stdatomic.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>

#include "rel_util.h"

#define BUFFERS 3

typedef cl_int (*get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);
typedef cl_int (*get_devices_fn)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
typedef cl_context (*create_context_fn)(const cl_context_properties *, cl_uint, const cl_device_id *,
                                        void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *,
                                        cl_int *);
typedef cl_command_queue (*create_queue_fn)(cl_context, cl_device_id, const cl_queue_properties *, cl_int *);
typedef cl_mem (*create_buffer_fn)(cl_context, cl_mem_flags, size_t, void *, cl_int *);

/* The few entry points exit-busy uses, looked up like the others: the
 * program must not link the loader, or dlclose() could not unload it. */
static struct {
    cl_event (*create_user_event)(cl_context, cl_int *);
    cl_int (*set_user_event_status)(cl_event, cl_int);
    cl_int (*retain_event)(cl_event);
    cl_int (*release_event)(cl_event);
    cl_int (*release_mem)(cl_mem);
    create_buffer_fn create_buffer;
} cl;

static int is_mapped(const char *name)
{
    char *maps = rel_read_file("/proc/self/maps");
    int found = maps && strstr(maps, name) != NULL;
    free(maps);
    return found;
}

static int unload_child(void)
{
    void *loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader)
        return 10;
    get_platforms_fn get_platforms = (get_platforms_fn)dlsym(loader, "clGetPlatformIDs");
    get_devices_fn get_devices = (get_devices_fn)dlsym(loader, "clGetDeviceIDs");
    create_context_fn create_context = (create_context_fn)dlsym(loader, "clCreateContext");
    create_queue_fn create_queue = (create_queue_fn)dlsym(loader, "clCreateCommandQueueWithProperties");
    create_buffer_fn create_buffer = (create_buffer_fn)dlsym(loader, "clCreateBuffer");
    if (!get_platforms || !get_devices || !create_context || !create_queue || !create_buffer)
        return 11;
    cl_platform_id platform;
    cl_device_id device;
    cl_int err = CL_SUCCESS;
    if (get_platforms(1, &platform, NULL) != CL_SUCCESS || get_devices(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL))
        return 12;
    cl_context context = create_context(NULL, 1, &device, NULL, NULL, &err);
    if (!context)
        return 13;
    if (!create_queue(context, device, NULL, &err))
        return 14;
    for (int i = 0; i < BUFFERS; i++)
        if (!create_buffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err))
            return 15;
    printf("layer loaded before dlclose: %d\n", is_mapped("liblivetrack_cl"));
    if (dlclose(loader) != 0)
        return 16;
    printf("loader still mapped after dlclose: %d\n", is_mapped("libOpenCL"));
    printf("layer still mapped after dlclose: %d\n", is_mapped("liblivetrack_cl"));
    fflush(stdout);
    return 0; /* exit: livetrack's report, whatever is still loaded */
}

/* ---- exit() while threads work through the layer ---------------------------------- */

static cl_context busy_context;
static atomic_int busy_started;

static void *busy(void *arg)
{
    (void)arg;
    atomic_fetch_add(&busy_started, 1);
    for (;;) {
        cl_int err;
        cl_mem buffer = cl.create_buffer(busy_context, CL_MEM_READ_WRITE, 256, NULL, &err);
        cl_event event = cl.create_user_event(busy_context, &err);
        if (event) {
            cl.retain_event(event);
            cl.release_event(event);
            cl.set_user_event_status(event, CL_COMPLETE);
            cl.release_event(event);
        }
        if (buffer)
            cl.release_mem(buffer);
    }
    return NULL;
}

static int exit_busy_child(void)
{
    void *loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader)
        return 10;
    get_platforms_fn get_platforms = (get_platforms_fn)dlsym(loader, "clGetPlatformIDs");
    get_devices_fn get_devices = (get_devices_fn)dlsym(loader, "clGetDeviceIDs");
    create_context_fn create_context = (create_context_fn)dlsym(loader, "clCreateContext");
    *(void **)&cl.create_user_event = dlsym(loader, "clCreateUserEvent");
    *(void **)&cl.set_user_event_status = dlsym(loader, "clSetUserEventStatus");
    *(void **)&cl.retain_event = dlsym(loader, "clRetainEvent");
    *(void **)&cl.release_event = dlsym(loader, "clReleaseEvent");
    *(void **)&cl.release_mem = dlsym(loader, "clReleaseMemObject");
    *(void **)&cl.create_buffer = dlsym(loader, "clCreateBuffer");
    if (!get_platforms || !get_devices || !create_context || !cl.create_user_event || !cl.set_user_event_status ||
        !cl.retain_event || !cl.release_event || !cl.release_mem || !cl.create_buffer)
        return 11;
    cl_platform_id platform;
    cl_device_id device;
    cl_int err = CL_SUCCESS;
    if (get_platforms(1, &platform, NULL) != CL_SUCCESS ||
        get_devices(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
        return 12;
    busy_context = create_context(NULL, 1, &device, NULL, NULL, &err);
    if (!busy_context)
        return 13;
    pthread_t thread;
    for (int t = 0; t < 4; t++)
        pthread_create(&thread, NULL, busy, NULL);
    while (atomic_load(&busy_started) < 4)
        sched_yield();
    struct timespec nap = {0, 50 * 1000 * 1000};
    nanosleep(&nap, NULL);
    exit(0); /* the context leaks, and whatever the threads hold right now */
}

/* ---- the driver ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "unload"))
        return unload_child();
    if (argc > 1 && !strcmp(argv[1], "exit-busy"))
        return exit_busy_child();
    const char *layers = getenv("OPENCL_LAYERS");
    if (!layers || !*layers) {
        fprintf(stderr, "test_cl_lifecycle: OPENCL_LAYERS is not set\n");
        return 2;
    }
    const char *env[] = {"LIVETRACK_EXIT_REPORT=auto", "LIVETRACK_OUTPUT=", NULL};
    char *unload_args[] = {(char *)rel_self(), "unload", NULL};
    rel_run run = rel_spawn(unload_args, env, 120);
    CHECK(rel_exited(&run, 0));
    CHECK(strstr(run.out, "layer loaded before dlclose: 1") != NULL);
    CHECK(strstr(run.err, "total: 5 leaked objects,") != NULL);
    CHECK(strstr(run.err, "cl_context") && strstr(run.err, "cl_command_queue") && strstr(run.err, "cl_mem"));
    if (check_failed)
        rel_dump("OpenCL loader unloaded before exit", &run);
    else
        printf("%s", run.out);
    rel_run_free(&run);

    int rounds = argc > 1 ? atoi(argv[1]) : 6, clean = 0;
    char *busy_args[] = {(char *)rel_self(), "exit-busy", NULL};
    for (int r = 0; r < rounds; r++) {
        int failed_before = check_failed;
        run = rel_spawn(busy_args, env, 60);
        CHECK(rel_exited(&run, 0));
        CHECK(strstr(run.err, "cl_context") && strstr(run.err, "\nlivetrack: total: "));
        if (check_failed != failed_before)
            rel_dump("exit() while threads work through the OpenCL layer", &run);
        else
            clean++;
        rel_run_free(&run);
    }
    printf("exit while 4 threads work through the layer: %d of %d runs clean\n", clean, rounds);
    return check_summary("reliability.cl_lifecycle");
}
