/*
 * Build logs: zeModuleCreate hands one out whenever the program asks,
 * whatever the result, and the program must destroy each. livetrack
 * records every log the driver hands out, also when the program reuses
 * its variable and the driver reuses the freed address (the value after
 * the call then equals the one before), also when the driver refuses the
 * call after writing the log (as Intel's does for flags it rejects), and
 * nothing when the call was refused before a log was made.
 * zeModuleDynamicLink's link logs are build logs too. Destroying each log is then not misuse, and
 * a log not destroyed is live.
 *
 * Runs with liblivetrack_ze.so preloaded and the test driver.
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

static uint64_t misuse_count(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.misuse;
}

static int is_live_build_log(const void *handle)
{
    livetrack_object object;
    return livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)handle, &object) == LIVETRACK_OK &&
           object.type_name && strcmp(object.type_name, "ze_module_build_log_handle_t") == 0 && object.refs == 1;
}

/* A program that builds in a loop with one log variable, destroying the
 * log each time: each log is recorded and each destroy is fine. The test
 * driver hands out the address it freed last, so from the second round
 * on the log equals what the variable held before the call. */
static void build_in_a_loop(ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t *desc,
                            ze_result_t expected)
{
    ze_module_handle_t module = NULL;
    ze_module_build_log_handle_t build_log = NULL, first_log = NULL;
    uint64_t misuse_before = misuse_count();
    for (int round = 0; round < 3; round++) {
        CHECK_EQ_INT(zeModuleCreate(context, device, desc, &module, &build_log), expected);
        if (round == 0)
            first_log = build_log;
        CHECK(build_log == first_log); /* the driver did reuse the address */
        CHECK(is_live_build_log(build_log));
        CHECK_EQ_INT(zeModuleBuildLogDestroy(build_log), 0);
        CHECK(!is_live_build_log(build_log));
    }
    CHECK_EQ_INT(misuse_count(), misuse_before);
}

/* The same with zeModuleDynamicLink's link logs, linking `modules`. The
 * log belongs to the modules' driver. */
static void link_in_a_loop(ze_module_handle_t *modules, uint32_t count, ze_result_t expected, const void *driver)
{
    ze_module_build_log_handle_t link_log = NULL, first_log = NULL;
    uint64_t misuse_before = misuse_count();
    for (int round = 0; round < 3; round++) {
        CHECK_EQ_INT(zeModuleDynamicLink(count, modules, &link_log), expected);
        if (round == 0)
            first_log = link_log;
        CHECK(link_log == first_log);
        CHECK(is_live_build_log(link_log));
        livetrack_object object;
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)link_log, &object) == LIVETRACK_OK &&
              object.owner == driver);
        CHECK_EQ_INT(zeModuleBuildLogDestroy(link_log), 0);
        CHECK(!is_live_build_log(link_log));
    }
    CHECK_EQ_INT(misuse_count(), misuse_before);
}

int main(void)
{
    if (!ze_layer_loaded())
        return 2;
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    zt_open(&driver, &device);
    ztd_interface test_driver;
    CHECK(ztd_find(getenv("ZE_ENABLE_ALT_DRIVERS"), &test_driver));
    ze_context_handle_t context;
    CHECK_EQ_INT(zeContextCreate(driver, &zt_context_desc, &context), 0);
    uint64_t mark = livetrack_mark();
    uint64_t misuse_before = misuse_count();

    /* Failed builds, and a failure other than a failed build. */
    build_in_a_loop(context, device, &zt_failing_module_desc, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    build_in_a_loop(context, device, &zt_invalid_module_desc, ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);

    /* A log handed out on a failure and never destroyed is a leak. */
    {
        ze_module_handle_t module = NULL;
        ze_module_build_log_handle_t build_log = NULL;
        CHECK_EQ_INT(zeModuleCreate(context, device, &zt_invalid_module_desc, &module, &build_log),
                     ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
        CHECK(is_live_build_log(build_log));
        CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 1);
        CHECK_EQ_INT(zeModuleBuildLogDestroy(build_log), 0);
        CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);
    }

    /* A call refused for its arguments before the driver made a log makes
     * none: the destroyed log the variable still holds is not taken for a
     * new one, and the variable keeps what the program put there. */
    {
        ze_module_handle_t module = NULL;
        ze_module_build_log_handle_t build_log = NULL;
        CHECK_EQ_INT(zeModuleCreate(context, device, &zt_failing_module_desc, &module, &build_log),
                     ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
        CHECK_EQ_INT(zeModuleBuildLogDestroy(build_log), 0);
        ze_module_build_log_handle_t destroyed_log = build_log;
        ze_module_desc_t empty = zt_module_desc;
        empty.inputSize = 0;
        CHECK_EQ_INT(zeModuleCreate(context, device, &empty, &module, &build_log), ZE_RESULT_ERROR_INVALID_SIZE);
        CHECK(build_log == destroyed_log);
        CHECK(!is_live_build_log(build_log));
        build_log = NULL;
        CHECK_EQ_INT(zeModuleCreate(context, device, &empty, &module, &build_log), ZE_RESULT_ERROR_INVALID_SIZE);
        CHECK(build_log == NULL);
        CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);
    }

    /* A call refused for its arguments after the driver made the log (Intel's
     * driver writes it before it checks the descriptor's flags and pNext):
     * the log is new although the variable holds the address of the log
     * destroyed before, which the driver reused. Destroying it is not
     * misuse; forgetting it is a leak. */
    {
        ze_module_handle_t module = NULL;
        ze_module_build_log_handle_t build_log = NULL;
        CHECK_EQ_INT(zeModuleCreate(context, device, &zt_module_desc, &module, &build_log), 0);
        CHECK_EQ_INT(zeModuleBuildLogDestroy(build_log), 0);
        ze_module_build_log_handle_t destroyed_log = build_log;
        ze_module_desc_t refused = zt_module_desc;
        refused.pBuildFlags = ZTD_REFUSED_BUILD_FLAGS;
        ze_module_handle_t not_made = NULL;
        uint64_t misuse_before_refusal = misuse_count();
        for (int round = 0; round < 2; round++) {
            CHECK_EQ_INT(zeModuleCreate(context, device, &refused, &not_made, &build_log),
                         ZE_RESULT_ERROR_INVALID_ARGUMENT);
            CHECK(build_log == destroyed_log); /* the driver did reuse the address */
            CHECK(is_live_build_log(build_log));
            CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 2); /* the module and the log */
            CHECK_EQ_INT(zeModuleBuildLogDestroy(build_log), 0);
        }
        CHECK_EQ_INT(misuse_count(), misuse_before_refusal);
        CHECK_EQ_INT(zeModuleCreate(context, device, &refused, &not_made, &build_log),
                     ZE_RESULT_ERROR_INVALID_ARGUMENT);
        CHECK_EQ_INT(zeModuleDestroy(module), 0);
        CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 1); /* the forgotten log */
        CHECK_EQ_INT(zeModuleBuildLogDestroy(build_log), 0);
        CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);
        /* Without a log variable: nothing to record. */
        CHECK_EQ_INT(zeModuleCreate(context, device, &refused, &not_made, NULL), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);
    }

    /* A successful build reusing the variable of a destroyed log. */
    {
        ze_module_handle_t module = NULL;
        ze_module_build_log_handle_t build_log = NULL;
        CHECK_EQ_INT(zeModuleCreate(context, device, &zt_module_desc, &module, &build_log), 0);
        CHECK_EQ_INT(zeModuleBuildLogDestroy(build_log), 0);
        CHECK_EQ_INT(zeModuleDestroy(module), 0);
        CHECK_EQ_INT(zeModuleCreate(context, device, &zt_module_desc, &module, &build_log), 0);
        CHECK(is_live_build_log(build_log));
        CHECK_EQ_INT(zeModuleBuildLogDestroy(build_log), 0);
        CHECK_EQ_INT(zeModuleDestroy(module), 0);
    }

    /* Link logs: of a link that works, of one that fails, and one never
     * destroyed. */
    {
        ze_module_handle_t modules[2];
        CHECK_EQ_INT(zeModuleCreate(context, device, &zt_module_desc, &modules[0], NULL), 0);
        CHECK_EQ_INT(zeModuleCreate(context, device, &zt_importing_module_desc, &modules[1], NULL), 0);
        link_in_a_loop(modules, 1, ZE_RESULT_SUCCESS, driver);
        link_in_a_loop(modules, 2, ZE_RESULT_ERROR_MODULE_LINK_FAILURE, driver);
        ze_module_build_log_handle_t link_log = NULL;
        CHECK_EQ_INT(zeModuleDynamicLink(2, modules, &link_log), ZE_RESULT_ERROR_MODULE_LINK_FAILURE);
        CHECK(is_live_build_log(link_log));
        CHECK_EQ_INT(zeModuleDestroy(modules[0]), 0);
        CHECK_EQ_INT(zeModuleDestroy(modules[1]), 0);
        CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 1);
        CHECK_EQ_INT(zeModuleBuildLogDestroy(link_log), 0);
        /* Linking nothing, without a log: nothing to record. */
        CHECK_EQ_INT(zeModuleDynamicLink(0, modules, NULL), 0);
        if (test_driver.calls)
            CHECK_EQ_INT(test_driver.calls("zeModuleDynamicLink"), 8);
    }

    /* zeModuleInspectLinkageExt's linkage report is a build log: destroyed,
     * no misuse; kept, a leak. */
    {
        ze_module_handle_t module;
        CHECK_EQ_INT(zeModuleCreate(context, device, &zt_importing_module_desc, &module, NULL), 0);
        ze_linkage_inspection_ext_desc_t inspect = {.stype = ZE_STRUCTURE_TYPE_LINKAGE_INSPECTION_EXT_DESC,
                                                    .flags = ZE_LINKAGE_INSPECTION_EXT_FLAG_IMPORTS};
        ze_module_build_log_handle_t report = NULL;
        CHECK_EQ_INT(zeModuleInspectLinkageExt(&inspect, 1, &module, &report), 0);
        CHECK(is_live_build_log(report));
        livetrack_object object;
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_LEVEL_ZERO, (uint64_t)(uintptr_t)report, &object) == LIVETRACK_OK &&
              object.owner == driver);
        CHECK_EQ_INT(zeModuleBuildLogDestroy(report), 0);
        CHECK_EQ_INT(zeModuleInspectLinkageExt(&inspect, 1, &module, &report), 0);
        CHECK_EQ_INT(zeModuleDestroy(module), 0);
        CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 1);
        CHECK_EQ_INT(zeModuleBuildLogDestroy(report), 0);
        CHECK(!is_live_build_log(report));
    }

    CHECK_EQ_INT(misuse_count(), misuse_before);
    CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);
    CHECK_EQ_INT(zeContextDestroy(context), 0);
    if (test_driver.live)
        CHECK_EQ_INT(test_driver.live(), 0);
    return check_summary("ze_build_logs");
}
