/*
 * Objects a program lets go of while it ends: in an atexit handler, in a
 * destructor, and on a thread at its end (in a pthread key destructor).
 * By then the loader's tracing layer no longer calls livetrack on that
 * thread (its per-thread state is a C++ thread_local, destroyed before
 * atexit handlers and key destructors run), so the front end's exported
 * destroy calls must see them. None of them is a leak.
 *
 * Without an argument, runs itself in each mode with the exit report and
 * LIVETRACK_EXIT_CODE=23, and checks the status and the report; "leak"
 * keeps one allocation, to show the report still counts what stays.
 */
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ze_layer_loaded.h"
#include "ze_test_util.h"

static ze_context_handle_t context;
static ze_event_pool_handle_t pool;
static ze_event_handle_t event;
static ze_command_list_handle_t list;
static void *memory, *kept_memory;

static void make_objects(ze_driver_handle_t driver, ze_device_handle_t device)
{
    if (zeContextCreate(driver, &zt_context_desc, &context) ||
        zeEventPoolCreate(context, &zt_pool_desc, 1, &device, &pool) ||
        zeEventCreate(pool, &zt_event_desc, &event) || zeCommandListCreate(context, device, &zt_list_desc, &list) ||
        zeMemAllocHost(context, &zt_host_alloc_desc, 4096, 0, &memory)) {
        fprintf(stderr, "could not make the objects\n");
        exit(2);
    }
}

/* Every object let go of, children first; each call must succeed. */
static void release_objects(const char *where)
{
    ze_result_t results[] = {zeMemFree(context, memory), zeCommandListDestroy(list), zeEventDestroy(event),
                             zeEventPoolDestroy(pool), kept_memory ? ZE_RESULT_SUCCESS : zeContextDestroy(context)};
    for (size_t i = 0; i < sizeof results / sizeof results[0]; i++)
        if (results[i] != ZE_RESULT_SUCCESS)
            printf("%s: call %zu failed with 0x%x\n", where, i, (unsigned)results[i]);
    printf("%s: released\n", where);
    fflush(stdout);
}

static void at_exit(void) { release_objects("atexit"); }

static int release_in_destructor;
__attribute__((destructor)) static void program_destructor(void)
{
    if (release_in_destructor)
        release_objects("destructor");
}

static pthread_key_t thread_end_key;
static void at_thread_end(void *unused)
{
    (void)unused;
    release_objects("thread end");
}

static void *thread_main(void *arg)
{
    ze_driver_handle_t *handles = arg;
    make_objects(handles[0], (ze_device_handle_t)handles[1]);
    pthread_setspecific(thread_end_key, &thread_end_key);
    return NULL;
}

static int run_mode(const char *mode)
{
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    zt_open(&driver, &device);
    if (!strcmp(mode, "thread")) {
        pthread_key_create(&thread_end_key, at_thread_end);
        void *handles[2] = {driver, device};
        pthread_t thread;
        if (pthread_create(&thread, NULL, thread_main, handles) || pthread_join(thread, NULL))
            return 2;
        return 0;
    }
    make_objects(driver, device);
    if (!strcmp(mode, "leak") &&
        zeMemAllocHost(context, &zt_host_alloc_desc, 512, 0, &kept_memory) != ZE_RESULT_SUCCESS)
        return 2;
    if (!strcmp(mode, "destructor"))
        release_in_destructor = 1;
    else
        atexit(at_exit);
    return 0;
}

static int verify(int condition, const char *what)
{
    CHECK(condition);
    if (!condition)
        fprintf(stderr, "  expected: %s\n", what);
    return condition;
}

static void check_mode(const char *self, const char *mode, int leaks)
{
    char *argv[] = {(char *)self, (char *)mode, NULL};
    const char *set[] = {"LIVETRACK_EXIT_CODE=23", NULL};
    tc_child child;
    if (tc_run(argv, set, NULL, 0, &child) != 0) {
        CHECK(!"the child ran");
        return;
    }
    int ok = 1;
    ok &= verify(strstr(child.out, "released\n") && !strstr(child.out, "failed"), "every release succeeded");
    ok &= verify(child.status == (leaks ? 23 : 0), leaks ? "exit status 23 (a leak)" : "exit status 0");
    if (leaks)
        ok &= verify(strstr(child.err, "2 leaked objects (512 bytes)") != NULL,
                     "the context and one allocation leaked");
    else
        ok &= verify(!strstr(child.err, "leaked"), "no leak reported");
    if (!ok) {
        fprintf(stderr, "mode %s:\n", mode);
        tc_child_dump(mode, &child);
    }
    tc_child_free(&child);
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return run_mode(argv[1]);
    if (!ze_layer_loaded())
        return 2;
    check_mode(argv[0], "atexit", 0);
    check_mode(argv[0], "destructor", 0);
    check_mode(argv[0], "thread", 0);
    check_mode(argv[0], "leak", 1);
    return check_summary("ze_exit_cleanup");
}
