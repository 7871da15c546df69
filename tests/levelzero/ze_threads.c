/*
 * Several threads create and destroy Level Zero objects at once, and free
 * allocations other threads made. The driver reuses freed addresses at
 * once, so a destroy counted after the driver freed the object would
 * race the next create of the same address; livetrack counts destroys
 * before the driver runs, so no handle is ever taken for stale, no misuse
 * is reported, and exactly the objects each thread leaked on purpose are
 * live at the end.
 *
 * Runs with liblivetrack_ze.so preloaded and the test driver.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "livetrack/livetrack.h"
#include "ze_layer_loaded.h"
#include "ze_test_util.h"

#define THREADS 4
#define ITERATIONS 3000
#define HANDOFF_SLOTS 64

static ze_context_handle_t context;
static ze_device_handle_t device;

/* Allocations one thread makes and another frees. */
static void *handoff[HANDOFF_SLOTS];
static pthread_mutex_t handoff_lock = PTHREAD_MUTEX_INITIALIZER;
static int failures[THREADS];

/* Put `memory` in a free slot, or take what is there (to free) instead. */
static void *swap_handoff(unsigned slot, void *memory)
{
    pthread_mutex_lock(&handoff_lock);
    void *previous = handoff[slot % HANDOFF_SLOTS];
    handoff[slot % HANDOFF_SLOTS] = memory;
    pthread_mutex_unlock(&handoff_lock);
    return previous;
}

typedef struct thread_leaks {
    void *memory;
    ze_event_pool_handle_t pool;
} thread_leaks;
static thread_leaks leaks[THREADS];

static void *work(void *argument)
{
    unsigned index = (unsigned)(uintptr_t)argument, seed = index * 7919u + 1;
    int *failed = &failures[index];
    for (unsigned i = 0; i < ITERATIONS; i++) {
        seed = seed * 1103515245u + 12345u;
        void *memory = NULL, *own = NULL;
        ze_event_pool_handle_t pool;
        ze_event_handle_t event;
        ze_command_list_handle_t list;
        size_t size = 16 + (seed >> 8) % 4096;
        *failed += zeMemAllocHost(context, &zt_host_alloc_desc, size, 0, &memory) != ZE_RESULT_SUCCESS;
        *failed += zeMemAllocDevice(context, &zt_device_alloc_desc, 64, 0, device, &own) != ZE_RESULT_SUCCESS;
        *failed += zeEventPoolCreate(context, &zt_pool_desc, 0, NULL, &pool) != ZE_RESULT_SUCCESS;
        *failed += zeEventCreate(pool, &zt_event_desc, &event) != ZE_RESULT_SUCCESS;
        *failed += zeCommandListCreate(context, device, &zt_list_desc, &list) != ZE_RESULT_SUCCESS;
        *failed += zeEventDestroy(event) != ZE_RESULT_SUCCESS;
        *failed += zeMemFree(context, own) != ZE_RESULT_SUCCESS;
        *failed += zeCommandListDestroy(list) != ZE_RESULT_SUCCESS;
        *failed += zeEventPoolDestroy(pool) != ZE_RESULT_SUCCESS;
        /* Leave this allocation for another thread; free what it left. */
        void *theirs = swap_handoff(seed >> 16, memory);
        if (theirs)
            *failed += zeMemFree(context, theirs) != ZE_RESULT_SUCCESS;
    }
    /* Two leaks per thread, on purpose. */
    *failed += zeMemAllocHost(context, &zt_host_alloc_desc, 1000 + index, 0, &leaks[index].memory) != ZE_RESULT_SUCCESS;
    *failed += zeEventPoolCreate(context, &zt_pool_desc, 0, NULL, &leaks[index].pool) != ZE_RESULT_SUCCESS;
    return NULL;
}

int main(void)
{
    if (!ze_layer_loaded())
        return 2;
    ze_driver_handle_t driver;
    zt_open(&driver, &device);
    CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &context), 0);
    livetrack_stats before;
    livetrack_get_stats(&before);
    uint64_t mark = livetrack_mark();

    pthread_t threads[THREADS];
    for (unsigned i = 0; i < THREADS; i++)
        CHECK_EQ_INT(pthread_create(&threads[i], NULL, work, (void *)(uintptr_t)i), 0);
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    for (unsigned i = 0; i < HANDOFF_SLOTS; i++)
        if (handoff[i])
            CHECK_EQ_INT(zeMemFree(context, handoff[i]), 0);
    for (unsigned i = 0; i < THREADS; i++)
        CHECK_EQ_INT(failures[i], 0);

    livetrack_stats after;
    livetrack_get_stats(&after);
    CHECK_EQ_INT(after.misuse - before.misuse, 0);
    CHECK_EQ_INT(after.replaced - before.replaced, 0);

    /* Exactly the leaks are live, with their sizes and their context. */
    livetrack_snapshot *snapshot = livetrack_snapshot_since(LIVETRACK_DOMAIN_LEVEL_ZERO, NULL, mark);
    size_t count = snapshot ? livetrack_snapshot_count(snapshot) : 0;
    CHECK_EQ_INT(count, 2 * THREADS);
    unsigned matched = 0;
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        for (unsigned t = 0; t < THREADS; t++) {
            if (object->handle == (uint64_t)(uintptr_t)leaks[t].memory) {
                CHECK(strcmp(object->type_name, "ze_mem") == 0);
                CHECK_EQ_INT(object->bytes, 1000 + t);
                matched++;
            } else if (object->handle == (uint64_t)(uintptr_t)leaks[t].pool) {
                CHECK(strcmp(object->type_name, "ze_event_pool_handle_t") == 0);
                matched++;
            } else {
                continue;
            }
            CHECK(object->parents[0] == (uint64_t)(uintptr_t)context);
        }
    }
    CHECK_EQ_INT(matched, 2 * THREADS);
    livetrack_snapshot_free(snapshot);
    livetrack_object context_object;
    CHECK(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)context, &context_object) == LIVETRACK_OK);
    CHECK_EQ_INT(context_object.holders, 2 * THREADS);

    for (unsigned t = 0; t < THREADS; t++) {
        CHECK_EQ_INT(zeMemFree(context, leaks[t].memory), 0);
        CHECK_EQ_INT(zeEventPoolDestroy(leaks[t].pool), 0);
    }
    CHECK_EQ_INT(zeContextDestroy(context), 0);
    CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);
    livetrack_get_stats(&after);
    CHECK_EQ_INT(after.misuse - before.misuse, 0);
    return check_summary("ze_threads");
}
