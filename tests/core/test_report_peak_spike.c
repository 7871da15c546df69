/*
 * The peak set after a short spike, in one thread: the set must be the
 * one at the spike, exact, even when few objects were created since the
 * set was last made (the case the amortised copy used to skip, leaving
 * an older, lower set marked approximate).
 *
 * Each case runs in a child of its own: the peak is the whole process's.
 *   two_buffers   a context; a 1 MiB buffer made and freed; then a 64 MiB
 *                 one made and freed: the peak is the context and the big one
 *   spike         1000 small objects live, 50 of them freed, one 1 MiB
 *                 object made and freed: 950 small and the big one
 *   wrapped       100000 small objects, 20000 freed (more deaths per shard
 *                 than the registry remembers), then the spike: the set
 *                 cannot be said cheaply and stays the older one, marked
 *                 approximate, and the report says the real high
 *   keeper        a new high, then an object dies when a keeper lets it go
 *                 (no release call): the set is the high's
 *   stale_handle  a new high, then the driver hands the big object's
 *                 handle out again (the registry replaces the stale
 *                 object, a death without a release): the set is the high's
 *   most_objects  a 1 MiB object alone, then 10 small ones at once: the
 *                 peak is the big one, and the most objects live at once
 *                 10 (a high in objects that is none in bytes)
 *   shared_stacks 20 stacks each given to objects of 32 types
 *                 (livetrack_create_with_stack allows it): more sites than
 *                 the copy's table was sized for, which then never found a
 *                 free slot and hung holding every shard lock
 */
#include <inttypes.h>
#include <stdint.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

enum { T_BASE, T_SMALL, T_BIG, T_COUNT };
static const char *const type_names[T_COUNT] = {"ps_base", "ps_small", "ps_big"};

static void make(unsigned type, uint64_t handle, uint64_t bytes)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = bytes};
    CHECK(livetrack_create(&object) == LIVETRACK_OK);
}

static void free_one(uint64_t handle)
{
    CHECK(livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, NULL, NULL) == LIVETRACK_OK);
}

/* The text peak section, whole. */
static char *peak_text(void) { return rt_peak_report(NULL); }

static void expect_line(const char *text, const char *line)
{
    if (!strstr(text, line)) {
        fprintf(stderr, "  expected the line \"%s\" in:\n%s", line, text);
        CHECK(0);
    }
}

static void two_buffers(void)
{
    make(T_BASE, 0x1000, 0);
    make(T_SMALL, 0x2000, 1 << 20);
    free_one(0x2000);
    make(T_BIG, 0x3000, 64 << 20);
    free_one(0x3000);
    char *text = peak_text();
    CHECK(text != NULL);
    if (!text)
        return;
    expect_line(text, "livetrack: at peak 64.0 MiB live in 2 objects (");
    CHECK(!strstr(text, "approximate"));
    expect_line(text, "livetrack: 1 live ps_big (64.0 MiB) created at:");
    expect_line(text, "livetrack: 1 live ps_base (0 bytes) created at:");
    CHECK(!strstr(text, "ps_small"));
    free(text);
    const char *checks[] = {"r['peak']['bytes'] == 64 << 20 and r['peak']['objects'] == 2",
                            "r['peak']['approximate'] is False", NULL};
    CHECK(rt_check_own_json(0, checks));
}

static void spike(void)
{
    for (uint64_t i = 0; i < 1000; i++)
        make(T_BASE, 0x100000 + i * 64, 10);
    for (uint64_t i = 0; i < 50; i++)
        free_one(0x100000 + i * 64 * 20);
    make(T_BIG, 0x900000, 1 << 20);
    free_one(0x900000);
    /* Lower again: not a peak. */
    make(T_SMALL, 0x910000, 100);
    free_one(0x910000);
    char *text = peak_text();
    CHECK(text != NULL);
    if (!text)
        return;
    expect_line(text, "livetrack: at peak 1.0 MiB live in 951 objects (");
    CHECK(!strstr(text, "approximate"));
    expect_line(text, "livetrack: 1 live ps_big (1.0 MiB) created at:");
    expect_line(text, "livetrack: 950 live ps_base (9.3 KiB) created at:");
    CHECK(!strstr(text, "ps_small"));
    free(text);
    const char *checks[] = {"r['peak']['bytes'] == (1 << 20) + 9500 and r['peak']['objects'] == 951",
                            "r['peak']['approximate'] is False", NULL};
    CHECK(rt_check_own_json(0, checks));
}

static void wrapped(void)
{
    for (uint64_t i = 0; i < 100000; i++)
        make(T_BASE, 0x1000000 + i * 64, 1);
    for (uint64_t i = 0; i < 20000; i++)
        free_one(0x1000000 + i * 64 * 5);
    make(T_BIG, 0x9000000, 1 << 20);
    free_one(0x9000000);
    /* The rest too, so that the JSON checked below is short. */
    for (uint64_t i = 0; i < 100000; i++)
        if (i % 5)
            free_one(0x1000000 + i * 64);
    char *text = peak_text();
    CHECK(text != NULL);
    if (!text)
        return;
    /* The set copied at the first release (100000 objects), honest about
     * it, with the real high beside it. */
    expect_line(text, "livetrack: at peak 97.7 KiB live in 100000 objects (");
    expect_line(text, "(approximate: ");
    expect_line(text, "livetrack: most bytes live at once: 1.1 MiB\n");
    free(text);
    const char *checks[] = {"r['peak']['approximate'] is True and r['peak']['objects'] == 100000",
                            "r['peak']['max_bytes'] == 80000 + (1 << 20)", NULL};
    CHECK(rt_check_own_json(0, checks));
}

static void keeper(void)
{
    make(T_BASE, 0x1000, 100);
    make(T_SMALL, 0x2000, 1 << 20);
    livetrack_keeper *kept = livetrack_keep_alive(LIVETRACK_DOMAIN_USER, 0x2000);
    CHECK(kept != NULL);
    free_one(0x2000); /* released, kept alive by the keeper */
    make(T_BIG, 0x3000, 2 << 20); /* the high: 3 MiB + 100 bytes in 3 objects */
    livetrack_let_go(kept);       /* the 1 MiB object dies: no release call */
    make(T_SMALL, 0x4000, 1);
    free_one(0x4000);
    char *text = peak_text();
    CHECK(text != NULL);
    if (!text)
        return;
    expect_line(text, "livetrack: at peak 3.0 MiB live in 3 objects (");
    CHECK(!strstr(text, "approximate"));
    expect_line(text, "livetrack: 1 live ps_small (1.0 MiB) created at:");
    free(text);
}

static void stale_handle(void)
{
    make(T_BASE, 0x1000, 100);
    make(T_SMALL, 0x4000, 1);
    free_one(0x4000);              /* a set made */
    make(T_BIG, 0x2000, 1 << 20);  /* the high: 1 MiB + 100 bytes in 2 objects */
    make(T_SMALL, 0x2000, 10);     /* the same handle again: the big one ended unseen */
    make(T_SMALL, 0x5000, 1);
    free_one(0x5000);
    char *text = peak_text();
    CHECK(text != NULL);
    if (!text)
        return;
    expect_line(text, "livetrack: at peak 1.0 MiB live in 2 objects (");
    CHECK(!strstr(text, "approximate"));
    expect_line(text, "livetrack: 1 live ps_big (1.0 MiB) created at:");
    CHECK(!strstr(text, "ps_small"));
    free(text);
}

static void most_objects(void)
{
    make(T_BIG, 0x1000, 1 << 20);
    free_one(0x1000);
    for (uint64_t i = 0; i < 10; i++)
        make(T_SMALL, 0x2000 + i * 64, 10);
    for (uint64_t i = 0; i < 10; i++)
        free_one(0x2000 + i * 64);
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.peak_objects, 10);
    CHECK_EQ_INT(stats.peak_bytes, 1 << 20);
    char *text = peak_text();
    CHECK(text != NULL);
    if (!text)
        return;
    expect_line(text, "livetrack: at peak 1.0 MiB live in 1 object (");
    expect_line(text, "livetrack: most objects live at once: 10\n");
    free(text);
    const char *checks[] = {"r['peak']['max_objects'] == 10 and r['peak']['objects'] == 1", NULL};
    CHECK(rt_check_own_json(0, checks));
}

/* Twenty distinct call sites, each returning the stack captured there. */
#define CAPTURE_AT(n)                                                                                         \
    static __attribute__((noinline)) livetrack_stack_id capture_##n(void)                                      \
    {                                                                                                         \
        livetrack_stack_id stack = livetrack_capture_stack();                                                 \
        __asm__ volatile("" ::: "memory");                                                                    \
        return stack;                                                                                         \
    }
CAPTURE_AT(0) CAPTURE_AT(1) CAPTURE_AT(2) CAPTURE_AT(3) CAPTURE_AT(4) CAPTURE_AT(5) CAPTURE_AT(6) CAPTURE_AT(7)
CAPTURE_AT(8) CAPTURE_AT(9) CAPTURE_AT(10) CAPTURE_AT(11) CAPTURE_AT(12) CAPTURE_AT(13) CAPTURE_AT(14)
CAPTURE_AT(15) CAPTURE_AT(16) CAPTURE_AT(17) CAPTURE_AT(18) CAPTURE_AT(19)

static void shared_stacks(void)
{
    static const char *const many_names[LIVETRACK_MAX_TYPES] = {
        "s0",  "s1",  "s2",  "s3",  "s4",  "s5",  "s6",  "s7",  "s8",  "s9",  "s10", "s11", "s12", "s13", "s14", "s15",
        "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31"};
    livetrack_declare_types(LIVETRACK_DOMAIN_CUDA, "many", many_names, LIVETRACK_MAX_TYPES);
    livetrack_stack_id (*const captures[])(void) = {
        capture_0,  capture_1,  capture_2,  capture_3,  capture_4,  capture_5,  capture_6,
        capture_7,  capture_8,  capture_9,  capture_10, capture_11, capture_12, capture_13,
        capture_14, capture_15, capture_16, capture_17, capture_18, capture_19};
    uint64_t handle = 0x100000;
    for (size_t i = 0; i < sizeof captures / sizeof captures[0]; i++) {
        livetrack_stack_id stack = captures[i]();
        for (unsigned type = 0; type < LIVETRACK_MAX_TYPES; type++) {
            livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_CUDA, .type = type, .handle = handle += 64,
                                           .bytes = 1};
            CHECK(livetrack_create_with_stack(&object, stack) == LIVETRACK_OK);
        }
    }
    /* The first death copies the set (the whole of it: nothing was
     * copied before). */
    CHECK(livetrack_release(LIVETRACK_DOMAIN_CUDA, LIVETRACK_ANY_TYPE, handle, NULL, NULL) == LIVETRACK_OK);
    char *text = peak_text();
    CHECK(text != NULL);
    if (!text)
        return;
    expect_line(text, "livetrack: at peak 640 bytes live in 640 objects (");
    CHECK(!strstr(text, "approximate"));
    free(text);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } cases[] = {
        {"two_buffers", two_buffers}, {"spike", spike},       {"wrapped", wrapped},
        {"keeper", keeper},           {"stale_handle", stale_handle}, {"most_objects", most_objects},
        {"shared_stacks", shared_stacks}};
    if (argc == 2) {
        livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, T_COUNT);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            if (!strcmp(argv[1], cases[i].name))
                cases[i].run();
        return check_summary(argv[1]);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *child_argv[] = {(char *)rt_self(), (char *)cases[i].name, NULL};
        const char *const set[] = {"LIVETRACK_EXIT_REPORT=off", NULL};
        rt_child child;
        CHECK(rt_run(child_argv, set, NULL, &child) == 0);
        if (child.status != 0) {
            fprintf(stderr, "case %s failed:\n", cases[i].name);
            rt_child_dump(cases[i].name, &child);
            CHECK(0);
        }
        rt_child_free(&child);
    }
    return check_summary("test_report_peak_spike");
}
