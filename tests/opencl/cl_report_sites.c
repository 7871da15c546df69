/*
 * The exit report of a real OpenCL program names the exact file:line of
 * each planted leak: cl_site_leaky (built with -g, knows nothing of
 * livetrack) marks each leaking call with a LEAK:name comment; this test
 * reads those line numbers from the source and checks, in the text report
 * on stderr and in the LIVETRACK_JSON document (validated against the
 * schema), that each leak has its own site whose frame #0 is that line,
 * with the right type, count, bytes and kept-alive objects. Also:
 * LIVETRACK_EXIT_CODE, suppressions by module, function and type (a leak
 * inside libcl_site_vendor), call sites off, and leaks made inside the
 * program's callbacks (their sites start at the callback's line).
 *
 * Usage: cl_report_sites /path/to/cl_site_leaky /path/to/tests/opencl
 */
#include <stdint.h>

#include "core/report_test_util.h"

typedef struct planted {
    const char *marker, *file, *function, *type;
    unsigned objects;
    unsigned bytes;
    int line;
} planted;

/* Report order: largest first (bytes, then count, then oldest). */
static planted leaks[] = {
    {"LEAK:buffer", "cl_site_leaky.c", "main", "cl_mem", 1, 4096, 0},
    {"LEAK:vendor", "cl_site_vendor.c", "vendor_leak", "cl_mem", 1, 512, 0},
    {"LEAK:sub", "cl_site_leaky.c", "main", "cl_mem", 1, 256, 0},
    {"LEAK:events", "cl_site_leaky.c", "main", "cl_event", 10, 0, 0},
    {"LEAK:kernel", "cl_site_leaky.c", "main", "cl_kernel", 1, 0, 0},
    {"LEAK:marker", "cl_site_leaky.c", "main", "cl_event", 1, 0, 0},
};
enum { PLANTED = sizeof leaks / sizeof leaks[0] };

/* cl_site_leaky callbacks: largest first. */
static planted callback_leaks[] = {
    {"LEAK:event_callback", "cl_site_leaky.c", "leak_in_event_callback", "cl_mem", 1, 128, 0},
    {"LEAK:destructor_callback", "cl_site_leaky.c", "leak_in_destructor_callback", "cl_mem", 1, 64, 0},
};
enum { CALLBACK_PLANTED = sizeof callback_leaks / sizeof callback_leaks[0] };

static const char *leaky;
static char dir[] = "/tmp/livetrack-cl-report-sites-XXXXXX";

static int run_leaky(const char *mode, const char *const *set, rt_child *child)
{
    char *argv[] = {(char *)leaky, (char *)mode, NULL};
    int rc = rt_run(argv, set, NULL, child);
    CHECK_EQ_INT(rc, 0);
    return rc == 0;
}

/* The header line ("livetrack: ...") of the text report's site whose
 * frame #0 is at file:line; 0 when there is none. */
static int site_header(const char *text, const planted *leak, char *out, size_t size)
{
    char where[128];
    snprintf(where, sizeof where, "/%s:%d:", leak->file, leak->line);
    for (const char *at = strstr(text, where); at; at = strstr(at + 1, where)) {
        const char *line = at;
        while (line > text && line[-1] != '\n')
            line--;
        if (strncmp(line, "    #0 0x", 9) != 0)
            continue;
        char in[64];
        snprintf(in, sizeof in, " in %s ", leak->function);
        if (!strstr(line, in) || strstr(line, in) > at)
            continue;
        /* the header is the line before frame #0 */
        const char *header = line - 1;
        while (header > text && header[-1] != '\n')
            header--;
        const char *end = strchr(header, '\n');
        snprintf(out, size, "%.*s", (int)(end - header), header);
        return 1;
    }
    return 0;
}

static void expected_header(const planted *leak, char *out, size_t size)
{
    char bytes[32];
    if (leak->bytes >= 1024)
        snprintf(bytes, sizeof bytes, "%.1f KiB", leak->bytes / 1024.0);
    else
        snprintf(bytes, sizeof bytes, "%u bytes", leak->bytes);
    snprintf(out, size, "livetrack: %u leaked %s (%s) created at:", leak->objects, leak->type, bytes);
}

/* Each planted leak has a site in the text report whose frame #0 is its
 * line, with its header. */
static void check_planted_sites(const char *text, const planted *planted_leaks, int count)
{
    for (int i = 0; i < count; i++) {
        char header[256], expected[256];
        expected_header(&planted_leaks[i], expected, sizeof expected);
        int found = site_header(text, &planted_leaks[i], header, sizeof header);
        CHECK(found);
        if (!found)
            fprintf(stderr, "  no site with frame #0 in %s at %s:%d (%s)\n", planted_leaks[i].function,
                    planted_leaks[i].file, planted_leaks[i].line, planted_leaks[i].marker);
        else if (strcmp(header, expected) != 0) {
            CHECK(!"site header differs");
            fprintf(stderr, "  %s: got \"%s\", expected \"%s\"\n", planted_leaks[i].marker, header, expected);
        }
    }
}

static void test_sites(void)
{
    char json_setting[300], path[300];
    snprintf(json_setting, sizeof json_setting, "LIVETRACK_JSON=%s/sites-%%p.json", dir);
    const char *const set[] = {json_setting, NULL};
    rt_child child;
    if (!run_leaky("leak", set, &child))
        return;
    CHECK_EQ_INT(child.status, 0);
    int failed = check_failed;
    /* text: each leak at its line, with its header */
    check_planted_sites(child.err, leaks, PLANTED);
    char first[256];
    snprintf(first, sizeof first, "livetrack: 15 leaked objects (4.8 KiB) from 6 call sites at exit of pid %ld",
             (long)child.pid);
    CHECK_EQ_INT(rt_count_lines(child.err, first), 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: total: 15 leaked objects, 4864 bytes (4.8 KiB), from 6 call sites"), 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: 3 objects (1.0 KiB) the program released are kept alive by leaked objects"), 1);
    /* the kernel keeps its released program alive; the sub-buffer its parent */
    char *block = rt_block_after(child.err, "livetrack: 1 leaked cl_kernel");
    CHECK(block && strstr(block, "  keeps alive 2 objects the program released: ") && strstr(block, "cl_program 0x"));
    free(block);
    block = rt_block_after(child.err, "livetrack: 1 leaked cl_mem (256 bytes)");
    CHECK(block && strstr(block, "  keeps alive 2 objects (1.0 KiB) the program released: ") && strstr(block, "cl_mem 0x"));
    free(block);
    /* the vendor's site: frame #1 is main's call into the library */
    block = rt_block_after(child.err, "livetrack: 1 leaked cl_mem (512 bytes)");
    CHECK(block && strstr(block, "    #1 0x") && strstr(strstr(block, "    #1 0x"), " in main "));
    free(block);

    /* JSON: the same, validated */
    snprintf(path, sizeof path, "%s/sites-%ld.json", dir, (long)child.pid);
    const char *checks[32];
    size_t n = 0;
    static char texts[PLANTED][2][400];
    for (int i = 0; i < PLANTED; i++) {
        snprintf(texts[i][0], sizeof texts[i][0],
                 "[(s['types'][0]['type'], s['objects'], s['bytes'], s['frames'][0]['function']) for s in "
                 "sites_at('%s', %d) if site_lines(s)[0] == ('%s', %d)] == [('%s', %u, %u, '%s')]",
                 leaks[i].file, leaks[i].line, leaks[i].file, leaks[i].line, leaks[i].type, leaks[i].objects,
                 leaks[i].bytes, leaks[i].function);
        checks[n++] = texts[i][0];
        snprintf(texts[i][1], sizeof texts[i][1], "site_lines(r['sites'][%d])[0] == ('%s', %d)", i, leaks[i].file,
                 leaks[i].line);
        checks[n++] = texts[i][1];
    }
    checks[n++] = "len(r['sites']) == 6 and r['at_exit'] is True";
    checks[n++] = "r['summary']['leaked_objects'] == 15 and r['summary']['leaked_bytes'] == 4864";
    checks[n++] = "r['summary']['kept_alive_objects'] == 3";
    /* the text's "3 objects (1.0 KiB)": the sub-buffer's released parent */
    checks[n++] = "r['summary']['kept_by_leaks_objects'] == 3 and r['summary']['kept_by_leaks_bytes'] == 1024";
    checks[n++] = "r['sites'][2]['keeps_alive_bytes'] == 1024 and r['sites'][4]['keeps_alive_bytes'] == 0";
    checks[n++] = "r['by_api'] == [{'api': 'OpenCL', 'objects': 15, 'bytes': 4864}]";
    checks[n++] = "sorted(k['type'] for k in r['sites'][4]['keeps_alive']) == ['cl_context', 'cl_program']";
    checks[n++] = "sorted(k['type'] for k in r['sites'][2]['keeps_alive']) == ['cl_context', 'cl_mem']";
    checks[n++] = "r['sites'][1]['frames'][0]['module'].endswith('libcl_site_vendor.so')";
    checks[n++] = "sorted(o['type'] for o in r['objects'] if not o['leaked']) == "
                  "['cl_context', 'cl_mem', 'cl_program']";
    checks[n] = NULL;
    CHECK(rt_check_json(path, checks));
    unlink(path);
    if (check_failed != failed)
        rt_child_dump("cl_site_leaky leak", &child);
    rt_child_free(&child);
}

/* A buffer made in an event callback (on pocl's thread, run by
 * livetrack's callback wrapper) and one made in a destructor callback
 * (run inside the program's clReleaseMemObject, through livetrack's
 * wrapper of it): frame #0 of each site is the callback's own line, not
 * a driver frame nor the program's release. The frames further out say
 * who ran the callback: the program's clReleaseMemObject for the
 * destructor. */
static void test_callback_sites(void)
{
    rt_child child;
    if (!run_leaky("callbacks", NULL, &child))
        return;
    int failed = check_failed;
    CHECK_EQ_INT(child.status, 0);
    check_planted_sites(child.err, callback_leaks, CALLBACK_PLANTED);
    const char *total = "livetrack: total: 2 leaked objects, 192 bytes (192 bytes), from 2 call sites";
    CHECK_EQ_INT(rt_count_lines(child.err, total), 1);
    char *block = rt_block_after(child.err, "livetrack: 1 leaked cl_mem (64 bytes)");
    CHECK(block && strstr(block, "    #1 0x") && strstr(strstr(block, "    #1 0x"), " in leak_in_callbacks "));
    free(block);
    if (check_failed != failed)
        rt_child_dump("cl_site_leaky callbacks", &child);
    rt_child_free(&child);
}

static void test_exit_code(void)
{
    rt_child child;
    const char *const set[] = {"LIVETRACK_EXIT_CODE=42", NULL};
    if (run_leaky("leak", set, &child)) {
        CHECK_EQ_INT(child.status, 42);
        CHECK(strstr(child.out, "cl_site_leaky: done\n") != NULL);
        CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: total: 15 leaked objects"), 1);
    }
    rt_child_free(&child);
    if (run_leaky("clean", set, &child)) {
        CHECK_EQ_INT(child.status, 0);
        CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 0);
        if (child.status != 0 || rt_count_lines(child.err, "livetrack:"))
            rt_child_dump("cl_site_leaky clean", &child);
    }
    rt_child_free(&child);
}

static void expect_suppressed(const char *pattern, unsigned objects, const char *size, const char *left)
{
    char supp[300], setting[400], line[300];
    snprintf(supp, sizeof supp, "%s/x.supp", dir);
    snprintf(line, sizeof line, "# third-party\n%s\n", pattern);
    CHECK(rt_write_file(supp, line));
    snprintf(setting, sizeof setting, "LIVETRACK_SUPPRESSIONS=%s", supp);
    const char *const set[] = {setting, "LIVETRACK_EXIT_CODE=42", NULL};
    rt_child child;
    if (run_leaky("leak", set, &child)) {
        int failed = check_failed;
        CHECK_EQ_INT(child.status, 42);
        char text[700];
        snprintf(text, sizeof text, "livetrack: suppressed: %u object%s (%s) by LIVETRACK_SUPPRESSIONS=%s (1 pattern)",
                 objects, objects == 1 ? "" : "s", size, supp);
        CHECK_EQ_INT(rt_count_lines(child.err, text), 1);
        snprintf(text, sizeof text, " %s (line 2)\n", pattern);
        CHECK_EQ_INT(rt_count(child.err, text), 1);
        CHECK_EQ_INT(rt_count_lines(child.err, left), 1);
        if (failed != check_failed)
            rt_child_dump(pattern, &child);
    }
    rt_child_free(&child);
    unlink(supp);
}

static void test_suppressions(void)
{
    expect_suppressed("module:*libcl_site_vendor.so", 1, "512 bytes",
                      "livetrack: total: 14 leaked objects, 4352 bytes (4.2 KiB), from 5 call sites");
    expect_suppressed("function:vendor_*", 1, "512 bytes",
                      "livetrack: total: 14 leaked objects, 4352 bytes (4.2 KiB), from 5 call sites");
    expect_suppressed("type:cl_event", 11, "0 bytes",
                      "livetrack: total: 4 leaked objects, 4864 bytes (4.8 KiB), from 4 call sites");
}

static void test_call_sites_off(void)
{
    const char *const set[] = {"LIVETRACK_STACK_DEPTH=0", NULL};
    rt_child child;
    if (run_leaky("leak", set, &child)) {
        CHECK_EQ_INT(child.status, 0);
        CHECK_EQ_INT(rt_count_lines(child.err, "    #"), 0);
        CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: call sites are off"), 1);
        char line[256];
        CHECK(rt_line_starting(child.err, "livetrack: 3 leaked cl_mem", 0, line, sizeof line) &&
              !strcmp(line, "livetrack: 3 leaked cl_mem (4.8 KiB)"));
        CHECK(rt_line_starting(child.err, "livetrack: 11 leaked cl_event", 0, line, sizeof line) &&
              !strcmp(line, "livetrack: 11 leaked cl_event (0 bytes)"));
        CHECK(rt_line_starting(child.err, "livetrack: 1 leaked cl_kernel", 0, line, sizeof line) &&
              !strcmp(line, "livetrack: 1 leaked cl_kernel (0 bytes)"));
        CHECK(rt_line_starting(child.err, "livetrack: total:", 0, line, sizeof line) &&
              !strcmp(line, "livetrack: total: 15 leaked objects, 4864 bytes (4.8 KiB)"));
    }
    rt_child_free(&child);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cl_report_sites /path/to/cl_site_leaky /path/to/tests/opencl\n");
        return 2;
    }
    leaky = argv[1];
    char source[600];
    for (int i = 0; i < PLANTED; i++) {
        snprintf(source, sizeof source, "%s/%s", argv[2], leaks[i].file);
        leaks[i].line = rt_marker_line(source, leaks[i].marker);
        CHECK(leaks[i].line > 0);
    }
    for (int i = 0; i < CALLBACK_PLANTED; i++) {
        snprintf(source, sizeof source, "%s/%s", argv[2], callback_leaks[i].file);
        callback_leaks[i].line = rt_marker_line(source, callback_leaks[i].marker);
        CHECK(callback_leaks[i].line > 0);
    }
    CHECK(getenv("OPENCL_LAYERS") && *getenv("OPENCL_LAYERS"));
    CHECK(mkdtemp(dir) != NULL);
    test_sites();
    test_exit_code();
    test_suppressions();
    test_call_sites_off();
    test_callback_sites();
    rmdir(dir);
    return check_summary("cl_report_sites");
}
