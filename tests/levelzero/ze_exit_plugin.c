/*
 * A plugin for ze_exit_cleanup: its worker thread makes a context and
 * waits; the plugin's destructor (run inside the host's dlclose(), which
 * holds the dynamic linker's lock) wakes it and joins it, and the worker
 * destroys the context then, the process's first zeContextDestroy. A
 * destroy that needed the dynamic linker at that moment would wait for
 * the lock forever.
 */
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdio.h>

static pthread_t worker;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int ready, stopping;
static ze_driver_handle_t driver;
static ze_result_t destroy_result = ZE_RESULT_ERROR_UNKNOWN;

static void *work(void *unused)
{
    (void)unused;
    ze_context_handle_t context;
    ze_context_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_result_t made = zeContextCreate(driver, &desc, &context);
    pthread_mutex_lock(&lock);
    ready = 1;
    pthread_cond_broadcast(&changed);
    while (!stopping)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    if (made == ZE_RESULT_SUCCESS)
        destroy_result = zeContextDestroy(context);
    return NULL;
}

/* Exported: the project builds with hidden visibility. */
__attribute__((visibility("default"))) int plugin_start(void);

int plugin_start(void)
{
    uint32_t count = 1;
    if (zeInit(0) != ZE_RESULT_SUCCESS || zeDriverGet(&count, &driver) != ZE_RESULT_SUCCESS ||
        pthread_create(&worker, NULL, work, NULL))
        return -1;
    pthread_mutex_lock(&lock);
    while (!ready)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    return 0;
}

__attribute__((destructor)) static void plugin_stop(void)
{
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    pthread_join(worker, NULL);
    printf("plugin: zeContextDestroy 0x%x\n", (unsigned)destroy_result);
    fflush(stdout);
}
