/*
 * The peak set in the reports: create 100 A and 50 B, free them all,
 * create 10 C; the peak report lists the sites of A and B (largest first,
 * at their exact lines) and not C, in text (livetrack_write_peak_report
 * and the LIVETRACK_REPORT_PEAK section) and in JSON. Runs in a process of
 * its own: the peak is the whole process's.
 */
#include <inttypes.h>
#include <stdint.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

enum { T_A, T_B, T_C, T_COUNT };
static const char *const type_names[T_COUNT] = {"rp_a", "rp_b", "rp_c"};
static int lines[T_COUNT];

__attribute__((noinline)) static void make(unsigned type, uint64_t handle, uint64_t bytes)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = bytes};
    switch (type) {
    case T_A:
        lines[T_A] = __LINE__ + 1;
        livetrack_create(&object);
        break;
    case T_B:
        lines[T_B] = __LINE__ + 1;
        livetrack_create(&object);
        break;
    default:
        lines[T_C] = __LINE__ + 1;
        livetrack_create(&object);
        break;
    }
    __asm__ volatile("" ::: "memory");
}

static void expect_frame0(const char *text, const char *header, int line)
{
    char *block = rt_block_after(text, header);
    char frame[512] = "", where[96];
    CHECK(block && rt_line_starting(block, "    #0 0x", 0, frame, sizeof frame));
    snprintf(where, sizeof where, "test_report_peak.c:%d:", line);
    CHECK(strstr(frame, " in make ") && strstr(frame, where));
    free(block);
}

int main(void)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, T_COUNT);
    for (uint64_t i = 0; i < 100; i++)
        make(T_A, 0xa0000 + i * 16, 1000);
    for (uint64_t i = 0; i < 50; i++)
        make(T_B, 0xb0000 + i * 16, 3000);
    for (uint64_t i = 0; i < 100; i++)
        CHECK(livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0xa0000 + i * 16, NULL, NULL) == LIVETRACK_OK);
    for (uint64_t i = 0; i < 50; i++)
        CHECK(livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0xb0000 + i * 16, NULL, NULL) == LIVETRACK_OK);
    for (uint64_t i = 0; i < 10; i++)
        make(T_C, 0xc0000 + i * 16, 1000);

    /* the peak alone */
    size_t listed = 0;
    char *text = rt_peak_report(&listed);
    CHECK_EQ_INT(listed, 150);
    char expected[128];
    snprintf(expected, sizeof expected, "livetrack: at peak 244.1 KiB live in 150 objects (pid %ld, ", (long)getpid());
    CHECK_EQ_INT(rt_count_lines(text, expected), 1);
    CHECK(strstr(text, " ms after start):\n") != NULL);
    char line[256];
    CHECK(rt_line_starting(text, "livetrack: ", 1, line, sizeof line) &&
          !strcmp(line, "livetrack: 50 live rp_b (146.5 KiB) created at:"));
    CHECK(rt_line_starting(text, "livetrack: ", 2, line, sizeof line) &&
          !strcmp(line, "livetrack: 100 live rp_a (97.7 KiB) created at:"));
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: "), 3);
    CHECK(!strstr(text, "rp_c"));
    expect_frame0(text, "livetrack: 50 live rp_b", lines[T_B]);
    expect_frame0(text, "livetrack: 100 live rp_a", lines[T_A]);
    if (check_failed)
        fprintf(stderr, "---- the peak report:\n%s---- end\n", text);
    free(text);

    /* the leak report with the peak section: C leaked, A and B at peak */
    size_t leaked = 0;
    text = rt_report(LIVETRACK_FORMAT_TEXT, LIVETRACK_REPORT_PEAK, 0, &leaked);
    CHECK_EQ_INT(leaked, 10);
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: 10 leaked rp_c (9.8 KiB) created at:"), 1);
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: at peak 244.1 KiB live in 150 objects ("), 1);
    CHECK(strstr(text, "livetrack: total:") < strstr(text, "livetrack: at peak"));
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: 50 live rp_b (146.5 KiB) created at:"), 1);
    free(text);

    /* JSON */
    char check_b[160], check_a[160];
    snprintf(check_b, sizeof check_b, "site_lines(r['peak']['sites'][0])[0] == ('test_report_peak.c', %d)", lines[T_B]);
    snprintf(check_a, sizeof check_a, "site_lines(r['peak']['sites'][1])[0] == ('test_report_peak.c', %d)", lines[T_A]);
    const char *checks[] = {
        "r['peak']['objects'] == 150 and r['peak']['bytes'] == 250000 and r['peak']['approximate'] is False",
        "r['peak']['max_objects'] == 150 and r['peak']['max_bytes'] == 250000 and r['peak']['time_ms'] > 0",
        "[(s['types'][0]['type'], s['objects'], s['bytes']) for s in r['peak']['sites']] == "
        "[('rp_b', 50, 150000), ('rp_a', 100, 100000)]",
        check_b,
        check_a,
        "r['summary']['leaked_objects'] == 10",
        NULL};
    CHECK(rt_check_own_json(0, checks));
    return check_summary("test_report_peak");
}
