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
 *
 * Two more ways the late destroys must not go wrong: "race" frees many
 * command lists at exit while a worker thread, still traced, makes and
 * destroys lists at the addresses freed (its objects must not be taken
 * for the freed ones); "dlclose" destroys a context on a thread a
 * plugin's destructor joins inside dlclose() (nothing may wait for the
 * dynamic linker's lock there).
 *
 * Usage: ze_exit_cleanup <ze_exit_plugin module>
 */
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
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

/* ---- race: late destroys beside a traced worker ------------------------ */

#define RACE_LISTS 20000
static ze_device_handle_t race_device;
static ze_command_list_handle_t race_lists[RACE_LISTS];
static atomic_int race_stop, race_worker_ready;
static atomic_long race_failures;
static pthread_t race_thread;

static void *race_worker(void *unused)
{
    (void)unused;
    while (!atomic_load(&race_stop)) {
        ze_command_list_handle_t list;
        if (zeCommandListCreate(context, race_device, &zt_list_desc, &list) != ZE_RESULT_SUCCESS) {
            atomic_fetch_add(&race_failures, 1);
            continue;
        }
        atomic_store(&race_worker_ready, 1);
        if (zeCommandListDestroy(list) != ZE_RESULT_SUCCESS)
            atomic_fetch_add(&race_failures, 1);
    }
    return NULL;
}

static void race_at_exit(void)
{
    for (int i = 0; i < RACE_LISTS; i++)
        if (zeCommandListDestroy(race_lists[i]) != ZE_RESULT_SUCCESS)
            atomic_fetch_add(&race_failures, 1);
    atomic_store(&race_stop, 1);
    pthread_join(race_thread, NULL);
    if (zeContextDestroy(context) != ZE_RESULT_SUCCESS)
        atomic_fetch_add(&race_failures, 1);
    printf("race: %ld calls failed\nrace: released\n", atomic_load(&race_failures));
    fflush(stdout);
}

static int run_race(ze_driver_handle_t driver, ze_device_handle_t device)
{
    race_device = device;
    if (zeContextCreate(driver, &zt_context_desc, &context) != ZE_RESULT_SUCCESS)
        return 2;
    for (int i = 0; i < RACE_LISTS; i++)
        if (zeCommandListCreate(context, device, &zt_list_desc, &race_lists[i]) != ZE_RESULT_SUCCESS)
            return 2;
    if (pthread_create(&race_thread, NULL, race_worker, NULL))
        return 2;
    while (!atomic_load(&race_worker_ready))
        sched_yield();
    atexit(race_at_exit);
    return 0;
}

/* ---- dlclose: a destroy inside a plugin's destructor ------------------------ */

static int run_dlclose(const char *plugin_path)
{
    alarm(30); /* a hang ends as SIGALRM */
    void *plugin = dlopen(plugin_path, RTLD_NOW);
    int (*start)(void) = plugin ? (int (*)(void))dlsym(plugin, "plugin_start") : NULL;
    if (!start || start() != 0) {
        fprintf(stderr, "could not start the plugin %s: %s\n", plugin_path, plugin ? "" : dlerror());
        return 2;
    }
    dlclose(plugin);
    printf("dlclose: released\n");
    return 0;
}

static int run_mode(const char *mode, const char *plugin_path)
{
    if (!strcmp(mode, "dlclose"))
        return run_dlclose(plugin_path);
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    zt_open(&driver, &device);
    if (!strcmp(mode, "race"))
        return run_race(driver, device);
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

static void check_mode(const char *self, const char *mode, int leaks, const char *plugin_path)
{
    char *argv[] = {(char *)self, (char *)mode, (char *)plugin_path, NULL};
    const char *set[] = {"LIVETRACK_EXIT_CODE=23", NULL};
    tc_child child;
    if (tc_run(argv, set, NULL, 0, &child) != 0) {
        CHECK(!"the child ran");
        return;
    }
    int ok = 1;
    ok &= verify(strstr(child.out, "released\n") && !strstr(child.out, "failed with") &&
                     (!strstr(child.out, "race:") || strstr(child.out, "race: 0 calls failed")),
                 "every release succeeded");
    ok &= verify(!strstr(child.err, "ERROR"), "no misuse reported");
    if (!strcmp(mode, "dlclose"))
        ok &= verify(strstr(child.out, "plugin: zeContextDestroy 0x0\n") != NULL, "the plugin's destroy succeeded");
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
    if (argc == 3)
        return run_mode(argv[1], argv[2]);
    if (argc != 2) {
        fprintf(stderr, "usage: %s <ze_exit_plugin module>\n", argv[0]);
        return 2;
    }
    if (!ze_layer_loaded())
        return 2;
    check_mode(argv[0], "atexit", 0, argv[1]);
    check_mode(argv[0], "destructor", 0, argv[1]);
    check_mode(argv[0], "thread", 0, argv[1]);
    check_mode(argv[0], "leak", 1, argv[1]);
    check_mode(argv[0], "race", 0, argv[1]);
    check_mode(argv[0], "dlclose", 0, argv[1]);
    return check_summary("ze_exit_cleanup");
}
