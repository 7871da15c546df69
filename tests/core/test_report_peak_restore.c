/*
 * The peak set after a refused destroy. livetrack_restore puts an object
 * back with its old creation number, so bringing the set up to date from
 * "the objects newer than the set" would miss it. Ten A objects make a
 * high (the set is copied at the first death after it); one of them is
 * destroyed and put back; one B makes a new high of eleven; B's release
 * brings the set up to date. It must hold the eleven, exactly, not nine A
 * and the B. Runs in a process of its own: the peak is the whole
 * process's.
 */
#include <stdint.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

enum { T_A, T_B, T_COUNT };
static const char *const type_names[T_COUNT] = {"restore_a", "restore_b"};

static void make(unsigned type, uint64_t handle)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = 1000};
    CHECK_EQ_INT(livetrack_create(&object), LIVETRACK_OK);
}

int main(void)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, T_COUNT);
    for (uint64_t i = 0; i < 10; i++)
        make(T_A, 0xa0000 + i * 16);
    livetrack_object before;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, 0xa0000, &before), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_A, 0xa0000, "refusedDestroy"), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_restore(&before, before.refs, NULL, "refusedDestroy"), LIVETRACK_OK);
    make(T_B, 0xb0000);
    CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, T_B, 0xb0000, NULL, NULL), LIVETRACK_OK);

    const char *checks[] = {
        "r['peak']['objects'] == 11 and r['peak']['bytes'] == 11000 and r['peak']['approximate'] is False",
        "sorted((t['type'], t['objects']) for s in r['peak']['sites'] for t in s['types']) == "
        "[('restore_a', 10), ('restore_b', 1)]",
        NULL};
    CHECK(rt_check_own_json(0, checks));
    for (uint64_t i = 0; i < 10; i++)
        CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_A, 0xa0000 + i * 16, NULL), LIVETRACK_OK);
    return check_summary("test_report_peak_restore");
}
