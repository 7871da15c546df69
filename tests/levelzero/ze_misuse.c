/*
 * Misuse of Level Zero handles: destroying or freeing what is unknown,
 * already destroyed, or of another type; destroying a parent while
 * objects created from it are live; freeing through the wrong context;
 * resetting a destroyed object; letting go of an object opened from an
 * IPC handle with a destroy or free, or of another with a Close call.
 * Each is reported once, with the bad call's stack and the object's
 * creation and release stacks, and the call still gets the driver's own
 * answer (the tracing layer cannot refuse calls). A destroy the driver
 * refuses leaves the object live.
 *
 * The notes on refused destroys stop at LIVETRACK_MAX_DIAGNOSTICS with
 * the misuse diagnostics (checked in a child of this program).
 *
 * Runs with liblivetrack_ze.so preloaded, the test driver, and
 * LIVETRACK_RELEASE_STACKS=1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "livetrack/livetrack.h"
#include "ze_layer_loaded.h"
#include "ze_test_driver.h"
#include "ze_test_util.h"

#define THIS_FILE "ze_misuse.c"

static const char *directory;
static zt_stderr_capture capture;
static uint64_t misuse_before;
static char *diagnostics;

static uint64_t misuse_count(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.misuse;
}

static void begin(void)
{
    free(diagnostics);
    diagnostics = NULL;
    misuse_before = misuse_count();
    zt_capture_stderr_begin(&capture, directory);
}

/* End a case: it reported `reports` misuses, and its diagnostics are in
 * `diagnostics` (echoed when a check fails, to see why). */
static void end(unsigned reports, int line)
{
    diagnostics = zt_capture_stderr_end(&capture);
    uint64_t reported = misuse_count() - misuse_before;
    if (reported != reports)
        fprintf(stderr, "case at line %d: %llu misuse reports, expected %u; it printed:\n%s", line,
                (unsigned long long)reported, reports, diagnostics);
    CHECK_EQ_INT(reported, reports);
}

static int mentions(const char *text)
{
    int found = diagnostics && strstr(diagnostics, text) != NULL;
    if (!found)
        fprintf(stderr, "the diagnostics lack \"%s\":\n%s", text, diagnostics ? diagnostics : "");
    return found;
}

/* The diagnostics show a frame at THIS_FILE:line. */
static int mentions_line(int line)
{
    char site[64];
    snprintf(site, sizeof site, THIS_FILE ":%d:", line);
    return mentions(site);
}

static int is_live(const void *handle)
{
    return livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)handle, NULL) == LIVETRACK_OK;
}

/* An event whose pool the program destroyed while the event lives: the
 * destroy is reported once, and both stay live until the event goes. */
static void orphaned_event(ze_context_handle_t context, ze_event_pool_handle_t *pool, ze_event_handle_t *event)
{
    CHECK_EQ_INT(zeEventPoolCreate(context, &zt_pool_desc, 0, NULL, pool), 0);
    CHECK_EQ_INT(zeEventCreate(*pool, &zt_event_desc, event), 0);
    begin();
    CHECK_EQ_INT(zeEventPoolDestroy(*pool), 0);
    end(1, __LINE__);
}

/* The report of what was made since `mark`, in `format`, as text. */
static char *report_since(uint64_t mark, livetrack_format format)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    CHECK(out != NULL);
    if (!out)
        return NULL;
    livetrack_write_report(out, format, 0, mark);
    CHECK_EQ_INT(fclose(out), 0);
    return text;
}

/* The line of a JSON report's object with this handle and creation number. */
static char *json_object_line(const char *json, const void *handle, uint64_t seq)
{
    char key[128];
    snprintf(key, sizeof key, "\"handle\": \"0x%llx\", \"seq\": %llu,", (unsigned long long)(uintptr_t)handle,
             (unsigned long long)seq);
    const char *at = json ? strstr(json, key) : NULL;
    if (!at)
        return NULL;
    const char *start = at, *end = strchr(at, '\n');
    while (start > json && start[-1] != '\n')
        start--;
    return strndup(start, end ? (size_t)(end - start) : strlen(start));
}

static int contains(const char *text, const char *needle, const char *what)
{
    int found = text && strstr(text, needle) != NULL;
    if (!found)
        fprintf(stderr, "the %s lacks \"%s\":\n%s\n", what, needle, text ? text : "(none)");
    return found;
}

/* The line of THIS_FILE where the live object was made, or 0. */
static int created_at_line(const void *handle)
{
    livetrack_object object;
    livetrack_frame frames[4];
    if (livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)handle, &object) != LIVETRACK_OK ||
        livetrack_stack_symbolize(object.stack, frames, 4) == 0 || !frames[0].file ||
        !strstr(frames[0].file, THIS_FILE))
        return 0;
    return (int)frames[0].line;
}

/* The child of the case at the end of main, run with
 * LIVETRACK_MAX_DIAGNOSTICS=2: one misuse, then a destroy the driver
 * refuses five times, as a program that retries it would see. */
static int refuse_repeatedly(void)
{
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    zt_open(&driver, &device);
    ztd_interface test_driver;
    CHECK(ztd_find(getenv("ZE_ENABLE_ALT_DRIVERS"), &test_driver));
    ze_context_handle_t context;
    CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &context), 0);
    ze_sampler_handle_t destroyed, refused;
    CHECK_EQ_INT(zeSamplerCreate(context, device, &zt_sampler_desc, &destroyed), 0);
    CHECK_EQ_INT(zeSamplerCreate(context, device, &zt_sampler_desc, &refused), 0);
    CHECK_EQ_INT(zeSamplerDestroy(destroyed), 0);
    CHECK_EQ_INT(zeSamplerDestroy(destroyed), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    for (int attempt = 0; attempt < 5; attempt++) {
        test_driver.refuse_next_destroy();
        CHECK_EQ_INT(zeSamplerDestroy(refused), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    }
    CHECK(is_live(refused));
    CHECK_EQ_INT(zeSamplerDestroy(refused), 0);
    CHECK_EQ_INT(zeContextDestroy(context), 0);
    CHECK_EQ_INT(misuse_count(), 1); /* a refused destroy is no misuse */
    return check_summary("ze_misuse (refused destroys)");
}

int main(int argc, char **argv)
{
    if (!ze_layer_loaded())
        return 2;
    if (argc > 1 && strcmp(argv[1], "refuse-repeatedly") == 0)
        return refuse_repeatedly();
    directory = zt_temp_dir("ze-misuse");
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    zt_open(&driver, &device);
    ztd_interface test_driver;
    CHECK(ztd_find(getenv("ZE_ENABLE_ALT_DRIVERS"), &test_driver));
    ze_context_handle_t context, other_context;
    CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &context), 0);
    CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &other_context), 0);
    ze_event_pool_handle_t pool;
    CHECK_EQ_INT(zeEventPoolCreate(context, &zt_pool_desc, 0, NULL, &pool), 0);

    /* Destroying an event twice: the second destroy is reported with its
     * stack, where the event was made and where it was destroyed. */
    {
        ze_event_handle_t event;
        int created = __LINE__; CHECK_EQ_INT(zeEventCreate(pool, &zt_event_desc, &event), 0);
        begin();
        int destroyed = __LINE__; CHECK_EQ_INT(zeEventDestroy(event), 0);
        int again = __LINE__; CHECK_EQ_INT(zeEventDestroy(event), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(1, __LINE__);
        CHECK(mentions("zeEventDestroy("));
        CHECK(mentions("ze_event_handle_t not a live object"));
        CHECK(mentions_line(again));
        CHECK(mentions("was created at:"));
        CHECK(mentions_line(created));
        CHECK(mentions("released at:"));
        CHECK(mentions_line(destroyed));
    }

    /* Freeing memory twice, and memory Level Zero never allocated. */
    {
        void *memory;
        int created = __LINE__; CHECK_EQ_INT(zeMemAllocHost(context, &zt_host_alloc_desc, 64, 0, &memory), 0);
        CHECK_EQ_INT(zeMemFree(context, memory), 0);
        begin();
        int again = __LINE__; CHECK_EQ_INT(zeMemFree(context, memory), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(1, __LINE__);
        CHECK(mentions("zeMemFree("));
        CHECK(mentions("ze_mem not a live object"));
        CHECK(mentions_line(again));
        CHECK(mentions_line(created));

        static char not_from_level_zero[64];
        begin();
        int unknown = __LINE__; CHECK_EQ_INT(zeMemFree(context, not_from_level_zero), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(1, __LINE__);
        CHECK(mentions("ze_mem not a live object"));
        CHECK(mentions("was never created"));
        CHECK(mentions_line(unknown));
    }

    /* A handle of another type: reported, and the event stays tracked. */
    {
        ze_event_handle_t event;
        CHECK_EQ_INT(zeEventCreate(pool, &zt_event_desc, &event), 0);
        begin();
        CHECK_EQ_INT(zeMemFree(context, event), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        CHECK_EQ_INT(zeFenceReset((ze_fence_handle_t)event), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(2, __LINE__);
        CHECK(mentions("the handle is a live ze_event_handle_t, not a ze_mem"));
        CHECK(mentions("the handle is a live ze_event_handle_t, not a ze_fence_handle_t"));
        CHECK(is_live(event));
        begin();
        CHECK_EQ_INT(zeEventDestroy(event), 0);
        end(0, __LINE__);
        CHECK(!is_live(event));
    }

    /* Freeing through another context than the one that allocated. */
    {
        void *memory;
        CHECK_EQ_INT(zeMemAllocDevice(context, &zt_device_alloc_desc, 128, 0, device, &memory), 0);
        begin();
        CHECK_EQ_INT(zeMemFree(other_context, memory), 0);
        end(1, __LINE__);
        CHECK(mentions("belongs to context"));
        CHECK(!is_live(memory));
    }

    /* Resetting a destroyed command list. */
    {
        ze_command_list_handle_t list;
        CHECK_EQ_INT(zeCommandListCreate(context, device, &zt_list_desc, &list), 0);
        CHECK_EQ_INT(zeCommandListDestroy(list), 0);
        begin();
        int reset = __LINE__; CHECK_EQ_INT(zeCommandListReset(list), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(1, __LINE__);
        CHECK(mentions("zeCommandListReset("));
        CHECK(mentions_line(reset));
    }

    /* A context destroyed with live children: reported once, naming them.
     * They stay tracked (the program never destroyed them: they are its
     * leaks, shown at exit where they were made), the context is kept
     * alive by them, and destroying them later is not reported again. */
    {
        ze_context_handle_t doomed;
        CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &doomed), 0);
        void *memory;
        ze_command_queue_handle_t queue;
        ze_fence_handle_t fence;
        ze_module_handle_t module;
        ze_module_build_log_handle_t build_log;
        CHECK_EQ_INT(zeMemAllocShared(doomed, &zt_device_alloc_desc, &zt_host_alloc_desc, 256, 0, device, &memory), 0);
        CHECK_EQ_INT(zeCommandQueueCreate(doomed, device, &zt_queue_desc, &queue), 0);
        CHECK_EQ_INT(zeFenceCreate(queue, &zt_fence_desc, &fence), 0);
        CHECK_EQ_INT(zeModuleCreate(doomed, device, &zt_module_desc, &module, &build_log), 0);
        begin();
        int destroyed = __LINE__; CHECK_EQ_INT(zeContextDestroy(doomed), 0);
        end(1, __LINE__);
        CHECK(mentions("zeContextDestroy("));
        /* the memory, the queue and the module; the fence is the queue's,
         * the build log nobody's */
        CHECK(mentions("ze_context_handle_t destroyed while 3 objects created from it are live ("));
        CHECK(mentions(" and 1 more)"));
        CHECK(mentions_line(destroyed));
        livetrack_object object;
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)doomed, &object) == LIVETRACK_OK &&
              object.refs == 0 && object.holders == 3);
        CHECK(is_live(memory) && is_live(queue) && is_live(fence) && is_live(module) && is_live(build_log));

        /* Destroying it again is reported; its children, once, are not. */
        begin();
        CHECK_EQ_INT(zeContextDestroy(doomed), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(1, __LINE__);
        CHECK(mentions("ze_context_handle_t already destroyed (objects created from it are still live)"));
        begin();
        CHECK_EQ_INT(zeFenceDestroy(fence), 0);
        CHECK_EQ_INT(zeCommandQueueDestroy(queue), 0);
        CHECK_EQ_INT(zeModuleDestroy(module), 0);
        CHECK_EQ_INT(zeModuleBuildLogDestroy(build_log), 0);
        end(0, __LINE__);
        CHECK(!is_live(fence) && !is_live(queue) && !is_live(module) && !is_live(build_log));
        /* The test driver refuses to free memory of a destroyed context:
         * the program gets that answer and the memory stays tracked. */
        begin();
        CHECK_EQ_INT(zeMemFree(doomed, memory), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(0, __LINE__);
        CHECK(is_live(memory));
        CHECK(mentions("live again"));
    }

    /* A context destroyed with a live sampler stays recorded, and the
     * test driver gives its address to the next context at once. That
     * one destroyed with a queue of its own names the queue only. */
    {
        ze_context_handle_t first, second;
        CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &first), 0);
        ze_sampler_handle_t sampler;
        CHECK_EQ_INT(zeSamplerCreate(first, device, &zt_sampler_desc, &sampler), 0);
        begin();
        CHECK_EQ_INT(zeContextDestroy(first), 0);
        end(1, __LINE__);
        CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &second), 0);
        CHECK(second == first);
        ze_command_queue_handle_t queue;
        CHECK_EQ_INT(zeCommandQueueCreate(second, device, &zt_queue_desc, &queue), 0);
        begin();
        CHECK_EQ_INT(zeContextDestroy(second), 0);
        end(1, __LINE__);
        CHECK(mentions("ze_context_handle_t destroyed while 1 object created from it is live "
                       "(ze_command_queue_handle_t 0x"));
        CHECK(!mentions("ze_sampler_handle_t"));
        begin();
        CHECK_EQ_INT(zeCommandQueueDestroy(queue), 0);
        CHECK_EQ_INT(zeSamplerDestroy(sampler), 0);
        end(0, __LINE__);
        CHECK(!is_live(first) && !is_live(queue) && !is_live(sampler));
    }

    /* A context destroyed while memory allocated in it lives, and the
     * test driver (as Level Zero drivers do) gives its address to the
     * next context at once. The exit report still lists the memory as
     * leaked where it was made and the destroyed context as kept alive by
     * it, not as if the memory belonged to the new context: the report
     * once lost the old context at the reuse and pointed the memory's
     * parent at the new one. */
    {
        uint64_t mark = livetrack_mark();
        ze_context_handle_t destroyed, reused;
        CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &destroyed), 0);
        void *memory;
        CHECK_EQ_INT(zeMemAllocHost(destroyed, &zt_host_alloc_desc, 4096, 0, &memory), 0);
        livetrack_object old_context, leak;
        CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)destroyed, &old_context),
                     LIVETRACK_OK);
        CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)memory, &leak), LIVETRACK_OK);
        begin();
        CHECK_EQ_INT(zeContextDestroy(destroyed), 0);
        end(1, __LINE__);
        CHECK(mentions("ze_context_handle_t destroyed while 1 object created from it is live (ze_mem 0x"));
        CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &reused), 0);
        CHECK(reused == destroyed);
        livetrack_object new_context;
        CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)reused, &new_context),
                     LIVETRACK_OK);
        CHECK(new_context.seq != old_context.seq && new_context.refs == 1 && new_context.holders == 0);

        char expected[256];
        char *text = report_since(mark, LIVETRACK_FORMAT_TEXT);
        snprintf(expected, sizeof expected,
                 "keeps alive 1 object the program released: ze_context_handle_t 0x%016llx\n",
                 (unsigned long long)(uintptr_t)destroyed);
        CHECK(contains(text, expected, "text report"));
        CHECK(contains(text, "livetrack: 1 object the program released is kept alive by leaked objects\n",
                       "text report"));
        CHECK(contains(text, "livetrack: 2 leaked objects (4.0 KiB) from 2 call sites", "text report"));
        free(text);

        char *json = report_since(mark, LIVETRACK_FORMAT_JSON);
        CHECK(contains(json, "\"kept_alive_objects\": 1,", "JSON report"));
        CHECK(contains(json, "\"leaked_objects\": 2,", "JSON report"));
        char *line = json_object_line(json, memory, leak.seq);
        snprintf(expected, sizeof expected, "\"parents\": [\"0x%llx\"], \"parent_seqs\": [%llu]}",
                 (unsigned long long)(uintptr_t)destroyed, (unsigned long long)old_context.seq);
        CHECK(contains(line, expected, "memory's JSON object"));
        free(line);
        line = json_object_line(json, destroyed, old_context.seq);
        CHECK(contains(line, "\"refs\": 0, \"holders\": 1,", "destroyed context's JSON object"));
        CHECK(contains(line, "\"site\": null, \"leaked\": false", "destroyed context's JSON object"));
        free(line);
        snprintf(expected, sizeof expected,
                 "\"keeps_alive\": [{\"api\": \"Level Zero\", \"type\": \"ze_context_handle_t\", "
                 "\"handle\": \"0x%llx\", \"seq\": %llu}]",
                 (unsigned long long)(uintptr_t)destroyed, (unsigned long long)old_context.seq);
        CHECK(contains(json, expected, "JSON report"));
        free(json);

        /* The memory goes, and the destroyed context with it. */
        begin();
        CHECK_EQ_INT(zeMemFree(reused, memory), 0);
        CHECK_EQ_INT(zeContextDestroy(reused), 0);
        end(0, __LINE__);
        CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);
        livetrack_snapshot *left = livetrack_snapshot_since(LIVETRACK_DOMAIN_LEVEL_ZERO, NULL, mark);
        CHECK_EQ_INT(livetrack_snapshot_count(left), 0);
        livetrack_snapshot_free(left);
    }

    /* An image destroyed before its view: allowed (the view is disabled),
     * so nothing is reported, and the view's destroy is fine after it. */
    {
        ze_image_handle_t image, view;
        CHECK_EQ_INT(zeImageCreate(context, device, &zt_image_desc, &image), 0);
        CHECK_EQ_INT(zeImageViewCreateExp(context, device, &zt_image_desc, image, &view), 0);
        begin();
        CHECK_EQ_INT(zeImageDestroy(image), 0);
        CHECK(!is_live(image) && is_live(view));
        CHECK_EQ_INT(zeImageDestroy(view), 0);
        end(0, __LINE__);
        CHECK(!is_live(view));
    }

    /* An event pool destroyed with a live event, and the event after it. */
    {
        ze_event_pool_handle_t doomed_pool;
        ze_event_handle_t event;
        orphaned_event(context, &doomed_pool, &event);
        CHECK(mentions("ze_event_pool_handle_t destroyed while 1 object created from it is live (ze_event_handle_t 0x"));
        CHECK(is_live(doomed_pool) && is_live(event));
        /* Closing it as if opened: the pool is named as destroyed (its event
         * keeps it recorded), not as live, and stays as it was. */
        begin();
        CHECK_EQ_INT(zeEventPoolCloseIpcHandle(doomed_pool), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(1, __LINE__);
        CHECK(mentions("zeEventPoolCloseIpcHandle("));
        CHECK(mentions("the handle is a ze_event_pool_handle_t already destroyed (objects created from it are still "
                       "live), not a ze_ipc_event_pool"));
        CHECK(!strstr(diagnostics, "the handle is a live"));
        CHECK(is_live(doomed_pool) && is_live(event));
        begin();
        CHECK_EQ_INT(zeEventDestroy(event), 0);
        end(0, __LINE__);
        CHECK(!is_live(doomed_pool) && !is_live(event));
    }

    /* The driver refuses to destroy an event whose pool the program
     * destroyed before: the event is live again and still holds the pool,
     * which dies with the event's next destroy. */
    if (test_driver.refuse_next_destroy) {
        ze_event_pool_handle_t doomed_pool;
        ze_event_handle_t event;
        orphaned_event(context, &doomed_pool, &event);
        livetrack_object made;
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)event, &made) == LIVETRACK_OK);
        livetrack_stats stats;
        livetrack_get_stats(&stats);
        uint64_t created = stats.created;
        begin();
        test_driver.refuse_next_destroy();
        CHECK_EQ_INT(zeEventDestroy(event), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        end(0, __LINE__);
        CHECK(mentions("live again"));
        livetrack_object object;
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)event, &object) == LIVETRACK_OK &&
              object.refs == 1 && object.parents[0] == (uint64_t)(uintptr_t)doomed_pool);
        /* The same event, not a new one: its creation number, and no
         * creation counted (marks and "newest first" stay right). */
        CHECK_EQ_INT(object.seq, made.seq);
        CHECK_EQ_INT(object.stack, made.stack);
        livetrack_get_stats(&stats);
        CHECK_EQ_INT(stats.created, created);
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)doomed_pool, &object) == LIVETRACK_OK &&
              object.refs == 0 && object.holders == 1);
        begin();
        CHECK_EQ_INT(zeEventDestroy(event), 0);
        end(0, __LINE__);
        CHECK(!is_live(doomed_pool) && !is_live(event));
    }

    /* The same, but the test driver gave the destroyed pool's address to a
     * new pool before the event's destroy: the event put back holds its
     * own pool again, not the new one (which would then be reported as
     * destroyed while an event made from it is live). */
    if (test_driver.refuse_next_destroy) {
        ze_event_pool_handle_t doomed_pool, new_pool;
        ze_event_handle_t event;
        orphaned_event(context, &doomed_pool, &event);
        CHECK_EQ_INT(zeEventPoolCreate(context, &zt_pool_desc, 0, NULL, &new_pool), 0);
        CHECK(new_pool == doomed_pool); /* else this case tests nothing */
        begin();
        test_driver.refuse_next_destroy();
        CHECK_EQ_INT(zeEventDestroy(event), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        end(0, __LINE__);
        livetrack_object object;
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)new_pool, &object) == LIVETRACK_OK &&
              object.refs == 1 && object.holders == 0);
        begin();
        CHECK_EQ_INT(zeEventDestroy(event), 0);
        CHECK_EQ_INT(zeEventPoolDestroy(new_pool), 0);
        end(0, __LINE__);
        CHECK(!is_live(event) && !is_live(new_pool));
    }

    /* Freeing a reservation with another size than it has: reported; the
     * test driver refuses the free, and the reservation is live again
     * where it was made, not at the free. */
    {
        void *reservation;
        int reserved = __LINE__; CHECK_EQ_INT(zeVirtualMemReserve(context, NULL, 4 * ZT_PAGE_SIZE, &reservation), 0);
        begin();
        int freed = __LINE__ + 1;
        CHECK_EQ_INT(zeVirtualMemFree(context, reservation, ZT_PAGE_SIZE), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(1, __LINE__);
        CHECK(mentions("zeVirtualMemFree("));
        CHECK(mentions("the ze_virtual_mem has 262144 bytes, not the 65536 named"));
        CHECK(mentions_line(freed));
        CHECK(mentions_line(reserved));
        CHECK(mentions("live again"));
        CHECK(is_live(reservation));
        CHECK_EQ_INT(created_at_line(reservation), reserved);
        begin();
        CHECK_EQ_INT(zeVirtualMemFree(context, reservation, 4 * ZT_PAGE_SIZE), 0);
        end(0, __LINE__);
        CHECK(!is_live(reservation));
    }

    /* A destroy the driver refuses: the object is live again where it was
     * made, the program gets the driver's error, and a later destroy is
     * fine. */
    if (test_driver.refuse_next_destroy) {
        ze_sampler_handle_t sampler;
        int created = __LINE__; CHECK_EQ_INT(zeSamplerCreate(context, device, &zt_sampler_desc, &sampler), 0);
        void *memory;
        CHECK_EQ_INT(zeMemAllocHost(context, &zt_host_alloc_desc, 100, 0, &memory), 0);
        begin();
        test_driver.refuse_next_destroy();
        CHECK_EQ_INT(zeSamplerDestroy(sampler), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        test_driver.refuse_next_destroy();
        CHECK_EQ_INT(zeMemFree(context, memory), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        /* The driver refuses a free without a descriptor: the note names
         * the result. */
        CHECK_EQ_INT(zeMemFreeExt(context, NULL, memory), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        end(0, __LINE__);
        CHECK(mentions("zeSamplerDestroy("));
        CHECK(mentions("live again"));
        CHECK(mentions("ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE (0x78000006)"));
        CHECK(mentions("zeMemFreeExt("));
        CHECK(mentions("ZE_RESULT_ERROR_INVALID_NULL_POINTER (0x78000007)"));
        CHECK(is_live(sampler) && is_live(memory));
        CHECK_EQ_INT(created_at_line(sampler), created);
        livetrack_object object;
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)memory, &object) == LIVETRACK_OK &&
              object.bytes == 100 && object.refs == 1 && object.parents[0] == (uint64_t)(uintptr_t)context);
        begin();
        CHECK_EQ_INT(zeSamplerDestroy(sampler), 0);
        CHECK_EQ_INT(zeMemFree(context, memory), 0);
        end(0, __LINE__);
        CHECK(!is_live(sampler) && !is_live(memory));
    }

    /* A pool opened from an IPC handle closed while an event of it is
     * live: reported like a destroyed pool, and the event still holds it. */
    {
        ze_ipc_event_pool_handle_t pool_ipc;
        ze_event_pool_handle_t opened;
        ze_event_handle_t event;
        CHECK_EQ_INT(zeEventPoolGetIpcHandle(pool, &pool_ipc), 0);
        int opened_at = __LINE__; CHECK_EQ_INT(zeEventPoolOpenIpcHandle(context, pool_ipc, &opened), 0);
        CHECK_EQ_INT(zeEventCreate(opened, &zt_event_desc, &event), 0);
        begin();
        int closed = __LINE__; CHECK_EQ_INT(zeEventPoolCloseIpcHandle(opened), 0);
        end(1, __LINE__);
        CHECK(mentions("zeEventPoolCloseIpcHandle("));
        CHECK(mentions("ze_ipc_event_pool closed while 1 object created from it is live (ze_event_handle_t 0x"));
        CHECK(mentions_line(closed));
        CHECK(mentions_line(opened_at));
        CHECK(is_live(opened) && is_live(event));
        begin();
        CHECK_EQ_INT(zeEventDestroy(event), 0);
        end(0, __LINE__);
        CHECK(!is_live(opened) && !is_live(event));
    }

    /* A context destroyed after its event pool, whose event lives on:
     * the event is what holds the context, not the pool the program
     * destroyed already, so the event is named and counted. */
    {
        ze_context_handle_t doomed;
        ze_event_pool_handle_t doomed_pool;
        ze_event_handle_t event;
        CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &doomed), 0);
        orphaned_event(doomed, &doomed_pool, &event);
        begin();
        CHECK_EQ_INT(zeContextDestroy(doomed), 0);
        end(1, __LINE__);
        char expected[160];
        snprintf(expected, sizeof expected,
                 "ze_context_handle_t destroyed while 1 object created from it is live (ze_event_handle_t %p)",
                 (void *)event);
        CHECK(mentions(expected));
        begin();
        CHECK_EQ_INT(zeEventDestroy(event), 0);
        end(0, __LINE__);
        CHECK(!is_live(event) && !is_live(doomed_pool) && !is_live(doomed));
    }

    /* A context destroyed with an opened pool and an opened mapping:
     * they are its children like what was created in it. */
    {
        ze_context_handle_t doomed;
        CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &doomed), 0);
        ze_ipc_event_pool_handle_t pool_ipc;
        ze_event_pool_handle_t opened;
        void *memory, *mapped;
        ze_ipc_mem_handle_t memory_ipc;
        CHECK_EQ_INT(zeEventPoolGetIpcHandle(pool, &pool_ipc), 0);
        CHECK_EQ_INT(zeEventPoolOpenIpcHandle(doomed, pool_ipc, &opened), 0);
        CHECK_EQ_INT(zeMemAllocDevice(context, &zt_device_alloc_desc, 512, 0, device, &memory), 0);
        CHECK_EQ_INT(zeMemGetIpcHandle(context, memory, &memory_ipc), 0);
        CHECK_EQ_INT(zeMemOpenIpcHandle(doomed, device, memory_ipc, 0, &mapped), 0);
        begin();
        CHECK_EQ_INT(zeContextDestroy(doomed), 0);
        end(1, __LINE__);
        CHECK(mentions("ze_context_handle_t destroyed while 2 objects created from it are live ("));
        CHECK(mentions("ze_ipc_event_pool 0x"));
        CHECK(mentions("ze_ipc_mem 0x"));
        CHECK(is_live(opened) && is_live(mapped));
        /* Closing them later is not reported again; the test driver
         * refuses the mapping's close naming the destroyed context, and
         * the mapping stays tracked. */
        begin();
        CHECK_EQ_INT(zeEventPoolCloseIpcHandle(opened), 0);
        CHECK_EQ_INT(zeMemCloseIpcHandle(doomed, mapped), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(0, __LINE__);
        CHECK(!is_live(opened) && is_live(mapped));
        CHECK_EQ_INT(zeMemFree(context, memory), 0);
    }

    /* The wrong call of the two: an opened pool or mapping destroyed or
     * freed, a created pool or an allocation closed. Each is reported
     * naming the call to use, and counted as released: the test driver,
     * like Intel's, frees it either way, and the program gets its answer. */
    {
        ze_ipc_event_pool_handle_t pool_ipc;
        ze_event_pool_handle_t opened, created;
        void *memory, *mapped, *allocated;
        ze_ipc_mem_handle_t memory_ipc;
        CHECK_EQ_INT(zeEventPoolGetIpcHandle(pool, &pool_ipc), 0);
        int opened_at = __LINE__; CHECK_EQ_INT(zeEventPoolOpenIpcHandle(context, pool_ipc, &opened), 0);
        CHECK_EQ_INT(zeEventPoolCreate(context, &zt_pool_desc, 0, NULL, &created), 0);
        CHECK_EQ_INT(zeMemAllocDevice(context, &zt_device_alloc_desc, 512, 0, device, &memory), 0);
        CHECK_EQ_INT(zeMemGetIpcHandle(context, memory, &memory_ipc), 0);
        CHECK_EQ_INT(zeMemOpenIpcHandle(context, device, memory_ipc, 0, &mapped), 0);
        CHECK_EQ_INT(zeMemAllocHost(context, &zt_host_alloc_desc, 64, 0, &allocated), 0);
        begin();
        int destroyed = __LINE__; CHECK_EQ_INT(zeEventPoolDestroy(opened), 0);
        end(1, __LINE__);
        CHECK(mentions("zeEventPoolDestroy("));
        CHECK(mentions("the ze_ipc_event_pool was opened by zeEventPoolOpenIpcHandle: "
                       "close it with zeEventPoolCloseIpcHandle, not with zeEventPoolDestroy"));
        CHECK(mentions_line(destroyed));
        CHECK(mentions_line(opened_at));
        CHECK(!is_live(opened));
        begin();
        CHECK_EQ_INT(zeEventPoolCloseIpcHandle(created), 0);
        CHECK_EQ_INT(zeMemFree(context, mapped), 0);
        CHECK_EQ_INT(zeMemCloseIpcHandle(context, allocated), 0);
        end(3, __LINE__);
        CHECK(mentions("zeEventPoolCloseIpcHandle(") && mentions("zeMemFree(") && mentions("zeMemCloseIpcHandle("));
        CHECK(mentions("the ze_event_pool_handle_t was created by zeEventPoolCreate: "
                       "destroy it with zeEventPoolDestroy, not with zeEventPoolCloseIpcHandle"));
        CHECK(mentions("the ze_ipc_mem was mapped by zeMemOpenIpcHandle: "
                       "close it with zeMemCloseIpcHandle, not with zeMemFree"));
        CHECK(mentions("the ze_mem was allocated by zeMemAlloc*: "
                       "free it with zeMemFree or zeMemFreeExt, not with zeMemCloseIpcHandle"));
        CHECK(!strstr(diagnostics, "not a live object"));
        CHECK(!is_live(created) && !is_live(mapped) && !is_live(allocated));
        /* Closed once, a second close is a dead handle. */
        begin();
        CHECK_EQ_INT(zeEventPoolCloseIpcHandle(opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(1, __LINE__);
        CHECK(mentions("ze_ipc_event_pool not a live object"));
        CHECK_EQ_INT(zeMemFree(context, memory), 0);
    }

    /* The driver refuses a free of an opened mapping: reported as the
     * wrong call, and the mapping is live again as what it was. */
    if (test_driver.refuse_next_destroy) {
        void *memory, *mapped;
        ze_ipc_mem_handle_t memory_ipc;
        CHECK_EQ_INT(zeMemAllocDevice(context, &zt_device_alloc_desc, 512, 0, device, &memory), 0);
        CHECK_EQ_INT(zeMemGetIpcHandle(context, memory, &memory_ipc), 0);
        int mapped_at = __LINE__; CHECK_EQ_INT(zeMemOpenIpcHandle(context, device, memory_ipc, 0, &mapped), 0);
        begin();
        test_driver.refuse_next_destroy();
        CHECK_EQ_INT(zeMemFree(context, mapped), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        end(1, __LINE__);
        CHECK(mentions("close it with zeMemCloseIpcHandle, not with zeMemFree"));
        CHECK(mentions("the ze_ipc_mem is live again"));
        livetrack_object object;
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)mapped, &object) == LIVETRACK_OK &&
              object.refs == 1 && object.type_name && strcmp(object.type_name, "ze_ipc_mem") == 0 &&
              object.parents[0] == (uint64_t)(uintptr_t)context);
        CHECK_EQ_INT(created_at_line(mapped), mapped_at);
        begin();
        CHECK_EQ_INT(zeMemCloseIpcHandle(context, mapped), 0);
        CHECK_EQ_INT(zeMemFree(context, memory), 0);
        end(0, __LINE__);
        CHECK(!is_live(mapped) && !is_live(memory));
    }

    /* Opening a handle no call gave fails and opens nothing; the program
     * gets the driver's answer. */
    {
        ze_ipc_event_pool_handle_t no_pool_ipc;
        ze_ipc_mem_handle_t no_memory_ipc;
        memset(&no_pool_ipc, 0, sizeof no_pool_ipc);
        memset(&no_memory_ipc, 0, sizeof no_memory_ipc);
        ze_event_pool_handle_t no_pool = NULL;
        void *no_memory = NULL;
        uint64_t mark = livetrack_mark();
        begin();
        CHECK_EQ_INT(zeEventPoolOpenIpcHandle(context, no_pool_ipc, &no_pool), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        CHECK_EQ_INT(zeMemOpenIpcHandle(context, device, no_memory_ipc, 0, &no_memory),
                     ZE_RESULT_ERROR_INVALID_ARGUMENT);
        end(0, __LINE__);
        CHECK(no_pool == NULL && no_memory == NULL);
        CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);
    }

    /* NULL handles are the driver's to answer: nothing from livetrack. */
    {
        begin();
        CHECK_EQ_INT(zeEventDestroy(NULL) != ZE_RESULT_SUCCESS, 1);
        CHECK_EQ_INT(zeMemFree(context, NULL) != ZE_RESULT_SUCCESS, 1);
        end(0, __LINE__);
        CHECK_EQ_INT(zt_count(diagnostics, "livetrack"), 0);
    }

    /* The notes on refused destroys share LIVETRACK_MAX_DIAGNOSTICS with
     * the misuse diagnostics: with a limit of 2, the misuse and one note
     * are printed, then the "suppressed" line, then nothing more. In a
     * child, since the limit is read when livetrack starts. */
    if (test_driver.refuse_next_destroy) {
        char child_stderr[600];
        snprintf(child_stderr, sizeof child_stderr, "%s/refuse-repeatedly.txt", directory);
        char *child_argv[] = {"/proc/self/exe", "refuse-repeatedly", NULL};
        const char *const limit[] = {"LIVETRACK_MAX_DIAGNOSTICS=2", NULL};
        CHECK_EQ_INT(zt_run(child_argv, limit, NULL, child_stderr), 0);
        char *printed = zt_read_file(child_stderr);
        size_t notes = zt_count(printed, "is live again");
        if (notes != 1)
            fprintf(stderr, "%zu notes on refused destroys with LIVETRACK_MAX_DIAGNOSTICS=2, expected 1:\n%s", notes,
                    printed ? printed : "");
        CHECK_EQ_INT(notes, 1);
        CHECK_EQ_INT(zt_count(printed, "not a live object"), 1);
        CHECK_EQ_INT(zt_count(printed, "livetrack: further diagnostics suppressed (LIVETRACK_MAX_DIAGNOSTICS=2)"), 1);
        free(printed);
    }

    /* Clean up; nothing of this test is left. */
    begin();
    CHECK_EQ_INT(zeEventPoolDestroy(pool), 0);
    CHECK_EQ_INT(zeContextDestroy(other_context), 0);
    CHECK_EQ_INT(zeContextDestroy(context), 0);
    end(0, __LINE__);
    free(diagnostics);
    if (test_driver.live)
        CHECK_EQ_INT(test_driver.live(), 2); /* the memory and the IPC mapping of the destroyed contexts */
    if (!check_failed)
        zt_remove_dir(directory);
    return check_summary("ze_misuse");
}
