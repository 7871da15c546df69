/*
 * Ties in the peak set: eight call sites with the same live objects and
 * bytes at the peak are listed in the order the program first used them,
 * in text and in JSON. The peak copy keeps its sites in a hash table keyed
 * by stack id; the report must not show that table's order, which changes
 * with the table's size. Runs in a process of its own: the peak is the
 * whole process's.
 */
#include <stdint.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

#define SITES 8
#define PER_SITE 4
static const char *const type_names[SITES] = {"tie_0", "tie_1", "tie_2", "tie_3",
                                              "tie_4", "tie_5", "tie_6", "tie_7"};
/* The order of first use: not the sites' order in the source, so only the
 * first-use rule (stack ids are given in that order) lists them so. */
static const unsigned first_use[SITES] = {5, 2, 7, 0, 3, 6, 1, 4};

/* One creating function per site, so each has a stack of its own. The
 * volatile store makes each body differ, so the compiler cannot fold the
 * eight into one (as it did eight cases of one switch). */
static volatile unsigned last_site;
#define MAKER(n)                                                                         \
    __attribute__((noinline)) static void make_##n(uint64_t handle)                      \
    {                                                                                    \
        livetrack_new_object object = {                                                  \
            .domain = LIVETRACK_DOMAIN_USER, .type = n, .handle = handle, .bytes = 100}; \
        last_site = n;                                                                   \
        livetrack_create(&object);                                                       \
        __asm__ volatile("" ::: "memory");                                               \
    }
MAKER(0)
MAKER(1)
MAKER(2)
MAKER(3)
MAKER(4)
MAKER(5)
MAKER(6)
MAKER(7)
static void (*const makers[SITES])(uint64_t) = {make_0, make_1, make_2, make_3, make_4, make_5, make_6, make_7};

int main(void)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, SITES);
    for (unsigned round = 0; round < PER_SITE; round++)
        for (unsigned i = 0; i < SITES; i++)
            makers[first_use[i]](0x10000 + (uint64_t)(round * SITES + first_use[i]) * 16);

    /* Still at the peak: the report copies the set now, exactly. */
    size_t listed = 0;
    char *text = rt_peak_report(&listed);
    CHECK_EQ_INT(listed, SITES * PER_SITE);
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: "), SITES + 1);
    for (unsigned i = 0; i < SITES; i++) {
        char expected[96], line[256] = "";
        snprintf(expected, sizeof expected, "livetrack: %d live %s (400 bytes) created at:", PER_SITE,
                 type_names[first_use[i]]);
        CHECK(rt_line_starting(text, "livetrack: ", i + 1, line, sizeof line));
        CHECK(!strcmp(line, expected));
    }
    if (check_failed)
        fprintf(stderr, "---- the peak report:\n%s---- end\n", text);
    free(text);

    char order[160] = "[s['types'][0]['type'] for s in r['peak']['sites']] == [";
    for (unsigned i = 0; i < SITES; i++)
        snprintf(order + strlen(order), sizeof order - strlen(order), "'%s'%s", type_names[first_use[i]],
                 i + 1 < SITES ? ", " : "]");
    const char *checks[] = {"r['peak']['objects'] == 32 and r['peak']['approximate'] is False", order, NULL};
    CHECK(rt_check_own_json(0, checks));
    return check_summary("test_report_peak_ties");
}
