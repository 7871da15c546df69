/*
 * LIVETRACK_SUPPRESSIONS: type, function, module and file patterns with
 * wildcards, comments and blank lines; bad lines get one message naming
 * file:line and are ignored; an unreadable file gets one message and
 * suppresses nothing. Suppressed leaks are left out of the counts and the
 * return value, counted per pattern in the text and JSON reports, and
 * their sites marked suppressed.
 *
 * The leaks to suppress come from libreport_thirdparty (a stand-in for a
 * third-party library) and from one type; each case is a child with its
 * own suppressions file. Patterns know only `*` and `?`: names with `[`,
 * `]` and `\` (C++ ones copied from a report) match themselves; the
 * matcher (wildcard.c, compiled in) is also tried on its own.
 */
#include <inttypes.h>
#include <stdint.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"
#include "report_thirdparty.h"
#include "wildcard.h"

enum { T_BUFFER, T_EVENT, T_COUNT };
static const char *const type_names[T_COUNT] = {"rs_buffer", "rs_event"};

__attribute__((noinline)) static void make(uint64_t handle, unsigned type, uint64_t bytes)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = bytes};
    livetrack_create(&object);
    __asm__ volatile("" ::: "memory");
}

/* A child's reports: text on stdout, JSON to `json_path`; prints how many
 * leaks the report counted. */
static void write_reports(const char *json_path)
{
    size_t leaked = livetrack_write_report(stdout, LIVETRACK_FORMAT_TEXT, LIVETRACK_REPORT_ALWAYS, 0);
    FILE *file = fopen(json_path, "w");
    if (file) {
        livetrack_write_report(file, LIVETRACK_FORMAT_JSON, 0, 0);
        fclose(file);
    }
    printf("reported %zu\n", leaked);
}

/* Child: 4 buffers of 100 bytes and 3 events made here, 2 buffers of 512
 * bytes made by the "third-party" library; its reports (write_reports). */
static int child(const char *json_path)
{
    for (int i = 0; i < 4; i++)
        make(0xb000 + (uint64_t)i * 16, T_BUFFER, 100);
    for (int i = 0; i < 3; i++)
        make(0xe000 + (uint64_t)i * 16, T_EVENT, 0);
    for (int i = 0; i < 2; i++)
        third_party_leak(0x7000 + (uint64_t)i * 16, T_BUFFER);
    write_reports(json_path);
    /* the count alone (no report written) agrees */
    printf("counted %zu\n", livetrack_leaks_since(0, NULL));
    return 0;
}

/* Types named as C++ names and paths are: one object of each. */
static const char *const special_names[] = {
    "make_name[abi:cxx11](_cl_context*, _cl_mem**)",
    "operator[]",
    "we\"ird\\fn",
    "ns/sub/dir/leaf",
    "img2d",
    "img3d",
    "img22d",
    "selact",
    "operator]",
};
enum { SPECIAL_COUNT = sizeof special_names / sizeof special_names[0] };

/* Child: one object of each special type; the same outputs as child(). */
static int special_names_child(const char *json_path)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", special_names, SPECIAL_COUNT);
    for (unsigned i = 0; i < SPECIAL_COUNT; i++)
        make(0x5000 + (uint64_t)i * 16, i, 10);
    write_reports(json_path);
    return 0;
}

static char dir[] = "/tmp/livetrack-report-supp-XXXXXX";

/* Run the child with `patterns` as its suppressions file (NULL: the path
 * `file` as is). */
static void run_child_with(const char *mode, const char *patterns, const char *file, rt_child *child);

static void run_with(const char *patterns, const char *file, rt_child *child)
{
    run_child_with("child", patterns, file, child);
}

/* Run the child of `mode` ("child", "special-names") with `patterns`. */
static void run_child_with(const char *mode, const char *patterns, const char *file, rt_child *child)
{
    char path[300], setting[400], json[300];
    snprintf(path, sizeof path, "%s/patterns.supp", dir);
    if (patterns)
        CHECK(rt_write_file(path, patterns));
    snprintf(setting, sizeof setting, "LIVETRACK_SUPPRESSIONS=%s", patterns ? path : file);
    snprintf(json, sizeof json, "%s/report.json", dir);
    const char *const set[] = {setting, "LIVETRACK_EXIT_REPORT=off", NULL};
    char *argv[] = {(char *)rt_self(), (char *)mode, json, NULL};
    CHECK_EQ_INT(rt_run(argv, set, NULL, child), 0);
    CHECK_EQ_INT(child->status, 0);
}

static const char *json_path(void)
{
    static char path[300];
    snprintf(path, sizeof path, "%s/report.json", dir);
    return path;
}

/* One pattern that suppresses the two third-party buffers. */
static void expect_third_party_suppressed(const char *pattern)
{
    char patterns[256];
    snprintf(patterns, sizeof patterns, "%s\n", pattern);
    rt_child child;
    run_with(patterns, NULL, &child);
    int failed = check_failed;
    CHECK(strstr(child.out, "reported 7\ncounted 7\n") != NULL);
    CHECK_EQ_INT(rt_count_lines(child.out, "livetrack: 7 leaked objects (400 bytes) from 2 call sites in pid "), 1);
    CHECK_EQ_INT(rt_count_lines(child.out, "livetrack: suppressed: 2 objects (1.0 KiB) by LIVETRACK_SUPPRESSIONS="), 1);
    char used[300];
    snprintf(used, sizeof used, "  1.0 KiB      %s (line 1)\n", pattern);
    CHECK_EQ_INT(rt_count(child.out, used), 1);
    CHECK(!strstr(child.out, "third_party_leak")); /* its site is not shown */
    char check_pattern[400];
    snprintf(check_pattern, sizeof check_pattern,
             "r['suppression_patterns'] == [{'pattern': '%s', 'line': 1, 'objects': 2, 'bytes': 1024}]", pattern);
    char check_site[400];
    snprintf(check_site, sizeof check_site,
             "[(s['suppressed'], s['suppressed_by'], s['objects']) for s in r['sites']] == "
             "[(False, None, 4), (False, None, 3), (True, '%s', 2)]",
             pattern);
    const char *checks[] = {"r['summary']['leaked_objects'] == 7 and r['summary']['leaked_bytes'] == 400",
                            "r['summary']['suppressed_objects'] == 2 and r['summary']['suppressed_bytes'] == 1024",
                            "r['summary']['call_sites'] == 2",
                            check_pattern,
                            check_site,
                            "r['sites'][2]['frames'][0]['function'] == 'third_party_leak'",
                            "r['sites'][2]['frames'][0]['module'].endswith('libreport_thirdparty.so')",
                            "sorted(o['handle'] for o in r['objects'] if o['suppressed']) == ['0x7000', '0x7010']",
                            "r['by_type'] == [{'api': 'user', 'type': 'rs_buffer', 'objects': 4, 'bytes': 400}, "
                            "{'api': 'user', 'type': 'rs_event', 'objects': 3, 'bytes': 0}]",
                            "r['settings']['suppressions'].endswith('/patterns.supp')",
                            NULL};
    CHECK(rt_check_json(json_path(), checks));
    if (check_failed != failed) {
        fprintf(stderr, "  with the pattern \"%s\"\n", pattern);
        rt_child_dump("suppressions", &child);
    }
    rt_child_free(&child);
}

static void test_kinds(void)
{
    expect_third_party_suppressed("function:third_party_*");
    expect_third_party_suppressed("module:*libreport_thirdparty.so*");
    expect_third_party_suppressed("file:*/report_thirdparty.c");
    expect_third_party_suppressed("function:third_party_lea?");

    /* by type: the events, with nothing else */
    rt_child child;
    run_with("type:rs_event\n", NULL, &child);
    CHECK(strstr(child.out, "reported 6\ncounted 6\n") != NULL);
    CHECK_EQ_INT(rt_count_lines(child.out, "livetrack: suppressed: 3 objects (0 bytes) by LIVETRACK_SUPPRESSIONS="), 1);
    CHECK_EQ_INT(rt_count_lines(child.out, "livetrack: 3 leaked rs_event"), 0);
    CHECK_EQ_INT(rt_count(child.err, "livetrack:"), 0);
    const char *checks[] = {"r['summary']['suppressed_objects'] == 3 and r['summary']['leaked_objects'] == 6",
                            "[s['suppressed_by'] for s in r['sites'] if s['suppressed']] == ['type:rs_event']",
                            NULL};
    CHECK(rt_check_json(json_path(), checks));
    rt_child_free(&child);

    /* a pattern that matches nothing */
    run_with("type:cl_*\nfunction:nothing_here\n", NULL, &child);
    CHECK(strstr(child.out, "reported 9\ncounted 9\n") != NULL);
    CHECK_EQ_INT(rt_count_lines(child.out, "livetrack: suppressed: 0 objects (0 bytes) by LIVETRACK_SUPPRESSIONS="), 1);
    rt_child_free(&child);
}

/* Two patterns match the third-party buffers: the first in the file is
 * credited, whichever kind each is; and a comment may end a line. */
static void test_order_and_comments(void)
{
    rt_child child;
    run_with("function:third_party_*   # the vendor's\ntype:rs_buffer\t# ours\n", NULL, &child);
    CHECK(strstr(child.out, "reported 3\ncounted 3\n") != NULL);
    CHECK(strstr(child.out, " function:third_party_* (line 1)\n") != NULL);
    CHECK(strstr(child.out, " type:rs_buffer (line 2)\n") != NULL);
    const char *first_function[] = {"[(p['pattern'], p['objects']) for p in r['suppression_patterns']] == "
                                    "[('function:third_party_*', 2), ('type:rs_buffer', 4)]",
                                    "sorted(s['suppressed_by'] for s in r['sites'] if s['suppressed']) == "
                                    "['function:third_party_*', 'type:rs_buffer']",
                                    NULL};
    CHECK(rt_check_json(json_path(), first_function));
    rt_child_free(&child);

    run_with("type:rs_buffer\nfunction:third_party_*\n", NULL, &child);
    CHECK(strstr(child.out, "reported 3\ncounted 3\n") != NULL);
    const char *first_type[] = {"[(p['pattern'], p['objects']) for p in r['suppression_patterns']] == "
                                "[('type:rs_buffer', 6), ('function:third_party_*', 0)]",
                                NULL};
    CHECK(rt_check_json(json_path(), first_type));
    rt_child_free(&child);

    /* a # inside a pattern, not after a blank, is part of it */
    run_with("type:rs_#event\n", NULL, &child);
    CHECK(strstr(child.out, "reported 9\ncounted 9\n") != NULL);
    const char *kept[] = {"[(p['pattern'], p['objects']) for p in r['suppression_patterns']] == "
                          "[('type:rs_#event', 0)]",
                          NULL};
    CHECK(rt_check_json(json_path(), kept));
    rt_child_free(&child);
}

static void test_bad_lines(void)
{
    rt_child child;
    run_with("# leaks we cannot fix\n"
             "\n"
             "bogus\n"
             "colour:red\n"
             "type:\n"
             "   type:rs_event   \n"
             "function: third_party_leak\n",
             NULL, &child);
    /* the good lines work (whitespace trimmed) */
    CHECK(strstr(child.out, "reported 4\ncounted 4\n") != NULL);
    CHECK(strstr(child.out, " type:rs_event (line 6)\n") != NULL);
    CHECK(strstr(child.out, " function:third_party_leak (line 7)\n") != NULL);
    CHECK(strstr(child.out, "(2 patterns)\n") != NULL);
    /* each bad one: one message naming file:line */
    char expected[600];
    snprintf(expected, sizeof expected,
             "livetrack: %s/patterns.supp:3: \"bogus\" is not a suppression (no \"kind:\" prefix; expected type:, "
             "function:, module: or file: and a pattern); line ignored\n",
             dir);
    CHECK_EQ_INT(rt_count(child.err, expected), 1);
    snprintf(expected, sizeof expected, "livetrack: %s/patterns.supp:4: \"colour:red\" is not a suppression (unknown kind;",
             dir);
    CHECK_EQ_INT(rt_count(child.err, expected), 1);
    snprintf(expected, sizeof expected, "livetrack: %s/patterns.supp:5: \"type:\" is not a suppression (empty pattern;",
             dir);
    CHECK_EQ_INT(rt_count(child.err, expected), 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 3);
    if (rt_count_lines(child.err, "livetrack:") != 3)
        rt_child_dump("bad lines", &child);
    const char *checks[] = {"[p['pattern'] for p in r['suppression_patterns']] == ['type:rs_event', "
                            "'function:third_party_leak']",
                            "[p['line'] for p in r['suppression_patterns']] == [6, 7]",
                            "[p['objects'] for p in r['suppression_patterns']] == [3, 2]", NULL};
    CHECK(rt_check_json(json_path(), checks));
    rt_child_free(&child);

    /* unreadable: one message, nothing suppressed */
    run_with(NULL, "/nonexistent-livetrack-dir/x.supp", &child);
    CHECK(strstr(child.out, "reported 9\n") != NULL);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: cannot read the suppressions file "
                                           "\"/nonexistent-livetrack-dir/x.supp\" (LIVETRACK_SUPPRESSIONS): No such "
                                           "file or directory; no leaks are suppressed"),
                 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 1);
    rt_child_free(&child);

    /* a directory: fopen takes it, reading it fails; the same message */
    run_with(NULL, "/tmp", &child);
    CHECK(strstr(child.out, "reported 9\n") != NULL);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack: cannot read the suppressions file \"/tmp\" "
                                           "(LIVETRACK_SUPPRESSIONS): Is a directory; no leaks are suppressed"),
                 1);
    CHECK_EQ_INT(rt_count_lines(child.err, "livetrack:"), 1);
    rt_child_free(&child);
}

/* The matcher alone: `*` and `?` are its only special bytes. */
static void test_matcher(void)
{
    static const struct {
        const char *pattern, *text;
        int matches;
    } cases[] = {
        {"make_name[abi:cxx11](_cl_context*, _cl_mem**)", "make_name[abi:cxx11](_cl_context*, _cl_mem**)", 1},
        {"make_name[abi:cxx11]*", "make_name[abi:cxx11](_cl_context*, _cl_mem**)", 1},
        {"make_name[abi:cxx11]*", "make_namea(_cl_context*)", 0}, /* not a bracket expression */
        {"operator[]", "operator[]", 1},
        {"std::vector<int>::operator[](unsigned long)", "std::vector<int>::operator[](unsigned long)", 1},
        {"x[ab]y", "xay", 0},
        {"x[!a]y", "xby", 0},
        {"[", "[", 1},
        {"]", "]", 1},
        {"we\"ird\\fn", "we\"ird\\fn", 1}, /* a backslash is itself */
        {"we\"ird\\fn", "we\"irdfn", 0},
        {"C:\\src\\*", "C:\\src\\lib.c", 1},
        {"\\*", "*", 0},
        {"\\*", "\\anything", 1},
        {"*/external/*", "/src/proj/external/lib.c", 1}, /* `*` spans `/` */
        {"*/external/*", "external/lib.c", 0},
        {"/opt/app[1]/*", "/opt/app[1]/lib.so", 1},
        {"fz_?", "fz_a", 1},
        {"fz_?", "fz_", 0},
        {"fz_?", "fz_ab", 0},
        {"a?c", "a/c", 1}, /* `?` takes `/` too */
        {"*", "", 1},
        {"", "", 1},
        {"", "a", 0},
        {"**a**", "bab", 1},
        {"*a*b*c", "xaxbxcxc", 1}, /* the last `*` comes back for the second c */
        {"*ab", "aab", 1},
        {"a*b?d", "axxbbd", 1},
        {"a*b?d", "axxbd", 0},
        {"*.so*", "/usr/lib/libfoo.so.1", 1},
        {"{lambda()#1}", "{lambda()#1}", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (lt_wildcard_matches(cases[i].pattern, cases[i].text) != cases[i].matches) {
            fprintf(stderr, "  \"%s\" against \"%s\": expected %d\n", cases[i].pattern, cases[i].text,
                    cases[i].matches);
            CHECK(0);
        }
    CHECK(!lt_wildcard_matches("*", NULL));

    /* a long name against many stars: quick, and no recursion to run out of stack */
    enum { LONG = 1 << 16 };
    static char text[LONG + 1], pattern[4 * 64 + 2];
    memset(text, 'a', LONG);
    text[LONG] = '\0';
    size_t at = 0;
    for (int star = 0; star < 64; star++) {
        memcpy(pattern + at, "*a?a", 4);
        at += 4;
    }
    pattern[at++] = 'b'; /* never there: every way is tried and fails */
    pattern[at] = '\0';
    CHECK(!lt_wildcard_matches(pattern, text));
    pattern[at - 1] = '*';
    CHECK(lt_wildcard_matches(pattern, text));
}

/* Names with `[`, `]` and `\` suppress themselves, as the docs say; the
 * patterns that only a glob would read as a bracket expression or an
 * escape match nothing. */
static void test_special_characters(void)
{
    rt_child child;
    run_child_with("special-names",
                   "type:sel[ab]ct\n"   /* a glob takes selact */
                   "type:operator[]]\n" /* a glob takes operator] */
                   "type:img\\2d\n"     /* a glob takes img2d */
                   "type:make_name[abi:cxx11](_cl_context*, _cl_mem**)\n"
                   "type:operator[]\n"
                   "type:we\"ird\\fn\n"
                   "type:ns/*/leaf\n" /* `*` spans sub/dir */
                   "type:img?d\n",    /* img2d and img3d, not img22d */
                   NULL, &child);
    int failed = check_failed;
    CHECK(strstr(child.out, "reported 3\n") != NULL);
    CHECK_EQ_INT(rt_count_lines(child.out, "livetrack: suppressed: 6 objects (60 bytes) by LIVETRACK_SUPPRESSIONS="),
                 1);
    CHECK_EQ_INT(rt_count(child.err, "livetrack:"), 0);
    const char *checks[] = {"[p['objects'] for p in r['suppression_patterns']] == [0, 0, 0, 1, 1, 1, 1, 2]",
                            "[p['line'] for p in r['suppression_patterns']] == [1, 2, 3, 4, 5, 6, 7, 8]",
                            "r['suppression_patterns'][5]['pattern'] == 'type:we\"ird' + chr(92) + 'fn'",
                            "sorted(t['type'] for t in r['by_type']) == ['img22d', 'operator]', 'selact']",
                            "r['summary']['leaked_objects'] == 3 and r['summary']['suppressed_objects'] == 6",
                            NULL};
    CHECK(rt_check_json(json_path(), checks));
    if (check_failed != failed)
        rt_child_dump("special characters", &child);
    rt_child_free(&child);
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "special-names"))
        return special_names_child(argv[2]);
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, T_COUNT);
    if (argc > 2 && !strcmp(argv[1], "child"))
        return child(argv[2]);
    CHECK(mkdtemp(dir) != NULL);
    test_matcher();
    test_kinds();
    test_order_and_comments();
    test_bad_lines();
    test_special_characters();
    if (!check_failed) {
        char path[300];
        snprintf(path, sizeof path, "%s/patterns.supp", dir);
        unlink(path);
        unlink(json_path());
        rmdir(dir);
    }
    return check_summary("test_report_suppressions");
}
