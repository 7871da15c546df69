/*
 * Stack interning seen from the reports: a million live objects created at
 * two call sites give exactly two sites in the text and JSON reports, with
 * the right counts, bytes and lines. Prints how long each report took (the
 * numbers quoted in the closing notes of issue 3).
 */
#include <inttypes.h>
#include <stdint.h>
#include <time.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

enum { T_BUFFER, T_EVENT, T_COUNT };
static const char *const type_names[T_COUNT] = {"rs_buffer", "rs_event"};
enum { OBJECTS = 1000000, KEEP = 1000 };

static int line_a, line_b;

__attribute__((noinline)) static void site_a(uint64_t handle)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = T_BUFFER, .handle = handle, .bytes = 64};
    line_a = __LINE__ + 1;
    livetrack_create(&object);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_b(uint64_t handle)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = T_EVENT, .handle = handle};
    line_b = __LINE__ + 1;
    livetrack_create(&object);
    __asm__ volatile("" ::: "memory");
}

static uint64_t handle_of(uint64_t i) { return 0x10000000 + i * 16; }

static double seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* The "sites" array of a JSON report: how many entries it has. */
static size_t json_site_count(const char *json)
{
    const char *start = json ? strstr(json, "\"sites\": [") : NULL;
    const char *end = start ? strstr(start, "\"objects\": [") : NULL;
    size_t count = 0;
    for (const char *at = start; at && at < end && (at = strstr(at, "{\"id\": ")) && at < end; at++)
        count++;
    return count;
}

int main(void)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, T_COUNT);
    livetrack_stats before, after;
    livetrack_get_stats(&before);
    double start = seconds();
    for (uint64_t i = 0; i < OBJECTS; i++) {
        if (i & 1)
            site_b(handle_of(i));
        else
            site_a(handle_of(i));
    }
    double created = seconds();
    livetrack_get_stats(&after);
    CHECK_EQ_INT(after.live_objects - before.live_objects, OBJECTS);
    CHECK_EQ_INT(after.unique_stacks - before.unique_stacks, 2);

    /* text: two sites, largest (bytes) first */
    size_t leaked = 0;
    double text_start = seconds();
    char *text = rt_report(LIVETRACK_FORMAT_TEXT, 0, 0, &leaked);
    double text_end = seconds();
    CHECK_EQ_INT(leaked, OBJECTS);
    CHECK_EQ_INT(rt_count(text, " created at:\n"), 2);
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: 500000 leaked rs_buffer (30.5 MiB) created at:"), 1);
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: 500000 leaked rs_event (0 bytes) created at:"), 1);
    char where[128];
    snprintf(where, sizeof where, " in site_a /");
    CHECK(strstr(text, where));
    snprintf(where, sizeof where, "test_report_sites.c:%d:", line_a);
    CHECK(strstr(text, where));
    snprintf(where, sizeof where, "test_report_sites.c:%d:", line_b);
    CHECK(strstr(text, where));
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: total: 1000000 leaked objects, 32000000 bytes (30.5 MiB), from 2 call sites"), 1);
    free(text);

    /* JSON of the million: two sites */
    char dir[] = "/tmp/livetrack-report-sites-XXXXXX", path[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/million.json", dir);
    FILE *file = fopen(path, "w");
    CHECK(file != NULL);
    double json_start = seconds();
    if (file) {
        CHECK_EQ_INT(livetrack_write_report(file, LIVETRACK_FORMAT_JSON, 0, 0), OBJECTS);
        fclose(file);
    }
    double json_end = seconds();
    char *json = rt_read_file(path);
    CHECK(json != NULL);
    CHECK_EQ_INT(json_site_count(json), 2);
    CHECK_EQ_INT(rt_count(json, "\"leaked\": true"), OBJECTS);
    free(json);
    unlink(path);
    printf("%d creates from 2 call sites: %.3f s; text report %.3f s; JSON report %.3f s\n", OBJECTS,
           created - start, text_end - text_start, json_end - json_start);

    /* Keep a thousand of each and validate that document fully. */
    size_t refused = 0;
    for (uint64_t i = 2 * KEEP; i < OBJECTS; i++)
        refused += livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle_of(i), NULL, NULL) != LIVETRACK_OK;
    CHECK_EQ_INT(refused, 0);
    snprintf(path, sizeof path, "%s/kept.json", dir);
    file = fopen(path, "w");
    if (file) {
        livetrack_write_report(file, LIVETRACK_FORMAT_JSON, 0, 0);
        fclose(file);
    }
    char check_a[160], check_b[160];
    snprintf(check_a, sizeof check_a,
             "r['sites'][0]['objects'] == %d and site_lines(r['sites'][0])[0] == ('test_report_sites.c', %d)", KEEP,
             line_a);
    snprintf(check_b, sizeof check_b,
             "r['sites'][1]['objects'] == %d and site_lines(r['sites'][1])[0] == ('test_report_sites.c', %d)", KEEP,
             line_b);
    const char *checks[] = {"len(r['sites']) == 2", check_a, check_b,
                            "r['sites'][0]['types'][0]['type'] == 'rs_buffer' and r['sites'][0]['bytes'] == 64000",
                            "len(r['objects']) == 2000 and set(o['site'] for o in r['objects']) == {1, 2}", NULL};
    CHECK(rt_check_json(path, checks));
    for (uint64_t i = 0; i < 2 * KEEP; i++)
        refused += livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle_of(i), NULL, NULL) != LIVETRACK_OK;
    CHECK_EQ_INT(refused, 0);
    if (!check_failed) {
        unlink(path);
        rmdir(dir);
    }
    return check_summary("test_report_sites");
}
