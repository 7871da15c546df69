/*
 * Objects without a call stack in the peak set. A create whose stack
 * cannot be interned (out of memory, here injected with
 * LIVETRACK_FAULT_ALLOC_AFTER) records stack id 0, with call sites on and
 * with them off (the per-kind site is interned on first use, which can
 * fail the same way). Such objects were live at the peak like any other:
 * the peak set must list them, each under its own kind, so that the
 * sites add up to the peak's totals. Each case runs in a child: the fault
 * setting and the peak are the whole process's.
 */
#include <inttypes.h>
#include <stdint.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

#define WITH_STACK 4     /* created after the first, stackless one */
#define OBJECT_BYTES 100 /* each */

static uint64_t handle_of(unsigned i) { return 0x1000 + (uint64_t)i * 16; }

/* In the child: creates the objects (the first one stackless), releases
 * one with a stack so that the peak set is copied, and checks the peak
 * report. */
static void child(void)
{
    for (unsigned i = 0; i < 1 + WITH_STACK; i++) {
        livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .handle = handle_of(i), .bytes = OBJECT_BYTES};
        CHECK(livetrack_create(&object) == LIVETRACK_OK);
        livetrack_object described;
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_USER, handle_of(i), &described) == LIVETRACK_OK);
        if (i == 0)
            CHECK_EQ_INT(described.stack, 0); /* the case this test is about */
        else
            CHECK(described.stack != 0);
    }
    CHECK(livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle_of(1), NULL, NULL) ==
          LIVETRACK_OK);

    const unsigned live = 1 + WITH_STACK;
    size_t written = 0;
    char *text = rt_peak_report(&written);
    CHECK_EQ_INT(written, live);
    uint64_t listed = 0;
    char line[512];
    for (unsigned n = 1; rt_line_starting(text, "livetrack: ", n, line, sizeof line); n++) {
        uint64_t objects = 0;
        CHECK(sscanf(line, "livetrack: %" SCNu64 " live ", &objects) == 1);
        listed += objects;
    }
    CHECK_EQ_INT(listed, live);
    if (check_failed)
        fprintf(stderr, "---- the peak report:\n%s---- end\n", text);
    free(text);

    const char *checks[] = {
        "r['peak']['objects'] == sum(s['objects'] for s in r['peak']['sites']) == 5",
        "r['peak']['bytes'] == sum(s['bytes'] for s in r['peak']['sites']) == 500",
        NULL};
    CHECK(rt_check_own_json(0, checks));
}

static void run_child(const char *stack_depth)
{
    char *argv[] = {(char *)rt_self(), "child", NULL};
    char depth_setting[64];
    snprintf(depth_setting, sizeof depth_setting, "LIVETRACK_STACK_DEPTH=%s", stack_depth);
    /* 0:1: only the first allocation fails, the interning of the first
     * create's stack (the node's slab comes after it). */
    const char *const set[] = {"LIVETRACK_EXIT_REPORT=off", depth_setting, "LIVETRACK_FAULT_ALLOC_AFTER=0:1", NULL};
    rt_child result;
    CHECK_EQ_INT(rt_run(argv, set, NULL, &result), 0);
    CHECK_EQ_INT(result.status, 0);
    if (result.status != 0)
        rt_child_dump(depth_setting, &result);
    rt_child_free(&result);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "child")) {
        child();
        return check_summary("test_report_peak_nostack child");
    }
    run_child("16");
    run_child("0");
    return check_summary("test_report_peak_nostack");
}
