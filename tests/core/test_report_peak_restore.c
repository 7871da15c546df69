/*
 * The peak set after refused destroys. livetrack_restore puts an object
 * back with its old creation number, so bringing the set up to date from
 * "the objects newer than the set" would miss it; the set takes it from
 * the shard's ring of restores, as deaths from the graveyard. Three
 * phases, each ending with a death after a new high (the moment the set
 * is brought up to date), each checked exact:
 *   1. ten A (a high: the set is copied at the next death); one A is
 *      destroyed and put back; one B makes a new high of eleven.
 *   2. an A destroyed after that set, then C objects and a new high, the A
 *      put back during it: the set must hold it again (died and came back
 *      since the set).
 *   3. an A destroyed before a set is made, put back after it, then a new
 *      high (died before the set, came back after).
 * Runs in a process of its own: the peak is the whole process's.
 */
#include <stdint.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

enum { T_A, T_B, T_C, T_D, T_E, T_COUNT };
static const char *const type_names[T_COUNT] = {"restore_a", "restore_b", "restore_c", "restore_d", "restore_e"};

static void make(unsigned type, uint64_t handle)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = 1000};
    CHECK_EQ_INT(livetrack_create(&object), LIVETRACK_OK);
}

static void drop(unsigned type, uint64_t handle)
{
    CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, type, handle, NULL), LIVETRACK_OK);
}

static uint64_t a(int i) { return 0xa0000 + (uint64_t)i * 16; }

/* Destroy A i, refused at once (put back), or later: its description. */
static livetrack_object destroy_a(int i)
{
    livetrack_object before;
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, a(i), &before), LIVETRACK_OK);
    drop(T_A, a(i));
    return before;
}

static void put_back(const livetrack_object *before)
{
    CHECK_EQ_INT(livetrack_restore(before, before->refs, NULL, "refusedDestroy"), LIVETRACK_OK);
}

static void expect_peak(const char *phase, const char *totals, const char *sites)
{
    const char *checks[] = {totals, sites, NULL};
    int held = rt_check_own_json(0, checks);
    CHECK(held);
    if (!held)
        fprintf(stderr, "  (phase %s)\n", phase);
}

int main(void)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, T_COUNT);
    const char *by_type = "sorted((t['type'], t['objects']) for s in r['peak']['sites'] for t in s['types']) == ";

    for (int i = 0; i < 10; i++)
        make(T_A, a(i));
    livetrack_object before = destroy_a(0); /* the first death after the high: the set is copied */
    put_back(&before);
    make(T_B, 0xb0000);
    drop(T_B, 0xb0000); /* brings the set up to date: 10 A and the B */
    char sites[300];
    snprintf(sites, sizeof sites, "%s[('restore_a', 10), ('restore_b', 1)]", by_type);
    expect_peak("1", "r['peak']['objects'] == 11 and r['peak']['bytes'] == 11000 and r['peak']['approximate'] is False",
                sites);

    before = destroy_a(2);
    for (int i = 0; i < 3; i++)
        make(T_C, 0xc0000 + (uint64_t)i * 16); /* 12 live: a new high */
    put_back(&before);                         /* 13 */
    drop(T_C, 0xc0000 + 2 * 16);
    snprintf(sites, sizeof sites, "%s[('restore_a', 10), ('restore_c', 3)]", by_type);
    expect_peak("2", "r['peak']['objects'] == 13 and r['peak']['approximate'] is False", sites);

    before = destroy_a(3); /* 11 live */
    for (int i = 0; i < 3; i++)
        make(T_D, 0xd0000 + (uint64_t)i * 16); /* 14: a new high */
    drop(T_D, 0xd0000 + 2 * 16);             /* the set: 9 A, 2 C, 3 D */
    put_back(&before);                       /* 14 again */
    make(T_E, 0xe0000);                      /* 15: a new high */
    drop(T_E, 0xe0000);
    snprintf(sites, sizeof sites, "%s[('restore_a', 10), ('restore_c', 2), ('restore_d', 2), ('restore_e', 1)]",
             by_type);
    expect_peak("3", "r['peak']['objects'] == 15 and r['peak']['approximate'] is False", sites);

    for (int i = 0; i < 10; i++)
        drop(T_A, a(i));
    for (int i = 0; i < 2; i++) {
        drop(T_C, 0xc0000 + (uint64_t)i * 16);
        drop(T_D, 0xd0000 + (uint64_t)i * 16);
    }
    return check_summary("test_report_peak_restore");
}
