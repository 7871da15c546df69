/*
 * Unit tests of the livetrack command's building blocks: the JSON and
 * CSV readers, human units, string interning and min/max bucketing.
 * The sources are compiled in (tools/ has no library of its own).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "csv_reader.h"
#include "escape.h"
#include "json_reader.h"
#include "json_write.h"
#include "run_log.h"
#include "series.h"
#include "string_map.h"

static json_document *parse(const char *text, char *error)
{
    return json_parse_text(text, strlen(text), error, 256);
}

static void test_json(void)
{
    char error[256];
    json_document *doc = parse(" {\"a\": [1, -2.5e2, true, false, null], \"s\": \"x\\\"\\\\\\/\\n\\u00e9\\ud83d\\ude00\","
                               " \"big\": 9007199254740993, \"hex\": \"0x55d0c0de1234\", \"a\": {\"b\": {\"c\": 7}}} ",
                               error);
    CHECK(doc != NULL);
    const json_value *root = json_root(doc);
    /* the last of repeated keys wins */
    CHECK_EQ_INT(json_int(json_path(root, "a.b.c"), 0), 7);
    CHECK_EQ_INT(json_int(json_get(root, "big"), 0), 9007199254740993LL);
    CHECK_EQ_INT(json_u64(json_get(root, "hex"), 0), 0x55d0c0de1234ULL);
    CHECK(!strcmp(json_str(json_get(root, "s"), ""), "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80"));
    CHECK(json_get(root, "missing") == NULL);
    CHECK_EQ_INT(json_int(json_get(root, "missing"), 42), 42);
    CHECK_EQ_INT(json_count(json_get(root, "s")), 0);
    CHECK(json_str(json_get(root, "big"), NULL) == NULL);
    json_free(doc);

    doc = parse("[1, -2.5e2, true, false, null, {}, []]", error);
    const json_value *array = json_root(doc);
    CHECK_EQ_INT(json_count(array), 7);
    CHECK(json_num(json_at(array, 1), 0) == -250.0);
    CHECK(!json_at(array, 1)->is_integer);
    CHECK_EQ_INT(json_bool(json_at(array, 2), 0), 1);
    CHECK_EQ_INT(json_bool(json_at(array, 3), 1), 0);
    CHECK(json_at(array, 4)->kind == JSON_NULL);
    CHECK(json_at(array, 7) == NULL);
    json_free(doc);

    static const struct {
        const char *text, *error;
    } bad[] = {
        {"{\"a\": 1,}", "line 1, column 9: expected a string key"},
        {"{\"a\" 1}", "expected ':'"},
        {"[1, 2", "expected ',' or ']'"},
        {"\"abc", "unterminated string"},
        {"01", "text after the end"},
        {"1.", "bad number"},
        {"2.5e", "bad number"},
        {"1e+x", "column 4: bad number"},
        {"-", "bad number"},
        {"tru", "unexpected character"},
        {"\"\\x\"", "bad escape"},
        {"\"a\nb\"", "control character"},
        {"{}\n\n  x", "line 3, column 3"},
        {"", "unexpected end of input"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        doc = parse(bad[i].text, error);
        CHECK(doc == NULL);
        if (!strstr(error, bad[i].error))
            fprintf(stderr, "  json error for case %zu: \"%s\", wanted \"%s\"\n", i, error, bad[i].error);
        CHECK(strstr(error, bad[i].error) != NULL);
        json_free(doc);
    }

    /* Deep nesting is refused, not a stack overflow. */
    size_t depth = 100000;
    char *deep = malloc(depth + 1);
    memset(deep, '[', depth);
    deep[depth] = '\0';
    doc = parse(deep, error);
    CHECK(doc == NULL && strstr(error, "nested too deeply"));
    free(deep);

    /* A large array exercises the arena and the scratch stack. */
    size_t count = 200000, used = 1;
    char *large = malloc(count * 8 + 16);
    large[0] = '[';
    for (size_t i = 0; i < count; i++)
        used += (size_t)sprintf(large + used, "%s%zu", i ? "," : "", i);
    strcpy(large + used, "]");
    doc = parse(large, error);
    CHECK(doc != NULL);
    CHECK_EQ_INT(json_count(json_root(doc)), count);
    CHECK_EQ_INT(json_int(json_at(json_root(doc), count - 1), 0), count - 1);
    json_free(doc);
    free(large);
}

/* Object keys seen before are shared, not stored again: an escaped key,
 * a long one, and more distinct keys than are remembered must all still
 * be found, in every object. Values of each kind keep their own fields
 * though they share storage. */
static void test_json_keys(void)
{
    char error[256];
    size_t keys = 1500, size = 64 + 2 * keys * 32 + 512, used = 0;
    char *text = malloc(size);
    static const char long_key[] = "a_key_longer_than_the_sixty_four_bytes_that_are_remembered_at_most_0123";
    used += (size_t)sprintf(text + used, "[");
    for (int copy = 0; copy < 2; copy++) {
        used += (size_t)sprintf(text + used, "%s{\"a\\u0062\": %d, \"ab\": \"s%d\", \"%s\": [%d]", copy ? "," : "",
                                copy, copy, long_key, copy);
        for (size_t k = 0; k < keys; k++)
            used += (size_t)sprintf(text + used, ", \"k%zu\": %zu", k, k * 2 + (size_t)copy);
        used += (size_t)sprintf(text + used, "}");
    }
    sprintf(text + used, "]");
    json_document *doc = parse(text, error);
    CHECK(doc != NULL);
    for (size_t copy = 0; doc && copy < 2; copy++) {
        const json_value *object = json_at(json_root(doc), copy);
        char expected[8];
        snprintf(expected, sizeof expected, "s%zu", copy);
        /* "a\u0062" is "ab": the later member wins */
        CHECK(!strcmp(json_str(json_get(object, "ab"), ""), expected));
        CHECK_EQ_INT(json_count(json_get(object, "ab")), 0);
        CHECK_EQ_INT(json_int(json_at(json_get(object, long_key), 0), -1), copy);
        CHECK_EQ_INT(json_count(object), keys + 3);
        int all = 1;
        for (size_t k = 0; k < keys; k++) {
            char key[32];
            snprintf(key, sizeof key, "k%zu", k);
            all &= json_int(json_get(object, key), -1) == (int64_t)(k * 2 + copy);
        }
        CHECK(all);
    }
    json_free(doc);
    free(text);
    CHECK(sizeof(json_value) <= 32);
}

/* The core writes sizes unsigned: 2^63 and above must read exactly, not
 * as 0 or as a malformed row. */
static void test_huge_sizes(void)
{
    char error[256];
    json_document *doc = parse("{\"max\": 18446744073709551615, \"big\": 10000000000000000001, \"over\": "
                               "18446744073709551616, \"neg\": -1}",
                               error);
    CHECK(doc != NULL);
    const json_value *root = json_root(doc);
    CHECK(json_u64(json_get(root, "max"), 0) == UINT64_MAX);
    CHECK(json_u64(json_get(root, "big"), 0) == 10000000000000000001ull);
    CHECK(json_u64(json_get(root, "over"), 7) == 7);
    CHECK(json_u64(json_get(root, "neg"), 7) == 7);
    CHECK(json_int(json_get(root, "big"), 7) == 7);
    json_free(doc);
}

/* Writes `size` bytes, NULs included, to a file under $TMPDIR. */
static const char *write_bytes(const char *name, const char *bytes, size_t size)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    FILE *out = fopen(path, "w");
    fwrite(bytes, 1, size, out);
    fclose(out);
    return path;
}

static const char *write_file(const char *name, const char *text)
{
    return write_bytes(name, text, strlen(text));
}

static void test_csv(void)
{
    char error[256];
    timeline t;
    /* Columns in another order, one extra, a quoted call, a malformed row,
     * a release the driver refused (restore), and a last row cut short. */
    const char *path = write_file("cli_units_timeline.csv",
                                  "extra,time_ms,seq,event,api,type,handle,bytes,type_live,live_objects,live_bytes,call\n"
                                  "x,0.5,1,create,OpenCL,cl_mem,0x10,4096,1,1,4096,clCreateBuffer\n"
                                  "x,0.75,2,create,OpenCL,cl_event,0x20,0,1,2,4096,\"clEnqueue,odd\"\n"
                                  "x,oops,3,create,OpenCL,cl_event,0x30,0,2,3,4096,clCreateUserEvent\n"
                                  "x,1.0,4,misuse,OpenCL,cl_mem,0x99,0,1,2,4096,clReleaseMemObject\n"
                                  "x,1.25,5,release,OpenCL,cl_mem,0x10,4096,0,1,0,clReleaseMemObject\n"
                                  "x,1.3,6,restore,OpenCL,cl_mem,0x10,4096,1,2,4096,clReleaseMemObject\n"
                                  "x,1.5,7,rel");
    CHECK(timeline_read(path, &t, error, sizeof error));
    CHECK_EQ_INT(t.count, 5);
    CHECK_EQ_INT(t.skipped, 1);
    CHECK(t.partial_last_line);
    CHECK(!t.has_vm);
    CHECK_EQ_INT(t.series_count, 2);
    CHECK(!strcmp(t.strings[t.rows[1].call], "clEnqueue,odd"));
    CHECK_EQ_INT(t.rows[0].handle, 0x10);
    CHECK_EQ_INT(t.rows[0].bytes, 4096);
    CHECK(t.rows[2].event == TIMELINE_MISUSE);
    CHECK(t.rows[3].time_ms == 1.25);
    CHECK(t.rows[4].event == TIMELINE_RESTORE);
    CHECK_EQ_INT(t.series[t.rows[0].series].peak, 1);
    CHECK_EQ_INT(t.series[t.rows[0].series].last, 1);
    char name[64];
    timeline_series_name(&t, t.rows[1].series, name, sizeof name);
    CHECK(!strcmp(name, "OpenCL cl_event"));
    /* names are interned: one copy however many rows */
    CHECK(t.rows[0].api == t.rows[3].api);
    timeline_free(&t);

    /* NUL bytes: a line starting with one (it once read before the
     * buffer) and one inside a row (it once merged the row with the next)
     * are malformed rows; the rows around them are kept. */
    static const char with_nuls[] = "seq,time_ms,event,api,type,live_objects,live_bytes\n"
                                    "1,0.5,create,OpenCL,cl_mem,1,64\n"
                                    "\0abc\n"
                                    "2,0.6,create,OpenCL,cl_mem,2,128\0junk\n"
                                    "3,0.7,create,OpenCL,cl_mem,3,192\n";
    path = write_bytes("cli_units_nul.csv", with_nuls, sizeof with_nuls - 1);
    CHECK(timeline_read(path, &t, error, sizeof error));
    CHECK_EQ_INT(t.count, 2);
    CHECK_EQ_INT(t.skipped, 2);
    CHECK_EQ_INT(t.count == 2 ? t.rows[1].seq : 0, 3);
    CHECK(!t.partial_last_line);
    timeline_free(&t);
    path = write_bytes("cli_units_nul_header.csv", "seq\0,time_ms\n", 14);
    CHECK(!timeline_read(path, &t, error, sizeof error));

    /* Quoted names as the writer quotes them (RFC 4180), a line break in
     * one included: still one row each. */
    path = write_file("cli_units_quoted.csv", "seq,time_ms,event,call,api,type,live_objects,live_bytes\n"
                                              "1,0.5,create,\"a,\"\"b\"\"\nc\",\"api,x\",\"nl\ntype\",1,8\n"
                                              "2,0.6,create,plain,\"api,x\",\"nl\ntype\",2,16\n");
    CHECK(timeline_read(path, &t, error, sizeof error));
    CHECK_EQ_INT(t.count, 2);
    CHECK_EQ_INT(t.skipped, 0);
    CHECK(t.count == 2 && !strcmp(t.strings[t.rows[0].call], "a,\"b\"\nc"));
    CHECK(t.count == 2 && !strcmp(t.strings[t.rows[1].type], "nl\ntype"));
    CHECK(t.count == 2 && t.rows[1].seq == 2);
    timeline_free(&t);

    /* Times no clock gives (strtod takes them) are malformed rows. */
    path = write_file("cli_units_times.csv", "seq,time_ms,event,api,type,live_objects,live_bytes\n"
                                             "1,nan,create,OpenCL,cl_mem,1,64\n"
                                             "2,inf,create,OpenCL,cl_mem,2,128\n"
                                             "3,-inf,create,OpenCL,cl_mem,3,192\n"
                                             "4,1e308,create,OpenCL,cl_mem,4,256\n"
                                             "5,2.5,create,OpenCL,cl_mem,5,320\n"
                                             "6,-1.5,create,OpenCL,cl_mem,6,384\n"
                                             "7,-0.000,create,OpenCL,cl_mem,7,448\n");
    CHECK(timeline_read(path, &t, error, sizeof error));
    CHECK_EQ_INT(t.count, 2);
    CHECK_EQ_INT(t.skipped, 5);
    timeline_free(&t);

    path = write_file("cli_units_huge.csv", "seq,time_ms,event,api,type,bytes,live_objects,live_bytes\n"
                                            "1,0.5,create,user,big,10000000000000000000,1,10000000000000000000\n"
                                            "2,0.6,create,user,small,4096,2,10000000000000004096\n"
                                            "3,0.7,create,user,small,-1,3,4096\n");
    CHECK(timeline_read(path, &t, error, sizeof error));
    CHECK_EQ_INT(t.count, 2);
    CHECK_EQ_INT(t.skipped, 1); /* a negative size is malformed, not 2^64 - 1 */
    CHECK(t.count == 2 && (uint64_t)t.rows[0].bytes == 10000000000000000000ull);
    CHECK(t.count == 2 && (uint64_t)t.rows[1].live_bytes == 10000000000000004096ull);
    timeline_free(&t);

    path = write_file("cli_units_bad.csv", "seq,time_ms,event\n1,0.5,create\n");
    CHECK(!timeline_read(path, &t, error, sizeof error));
    CHECK(strstr(error, "no 'api' column") != NULL);
    path = write_file("cli_units_empty.csv", "");
    CHECK(!timeline_read(path, &t, error, sizeof error));
    CHECK(!timeline_read("/nonexistent/timeline.csv", &t, error, sizeof error));
}

/* escape_xml's output for `text`, into a static buffer. */
static const char *xml_of(const char *text)
{
    static char result[256];
    FILE *out = fmemopen(result, sizeof result, "w");
    escape_xml(out, text);
    fclose(out);
    return result;
}

/* A name as the report's writer writes it (lt_json_string) and the
 * report's reader then holds it (json_parse_text, then '?' for controls as
 * report_load does): what cli_name_as_reported must give for the raw
 * name of the timeline. */
static char *name_through_report(const char *name)
{
    char *written = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&written, &size);
    lt_json_string(out, name);
    fclose(out);
    char error[256];
    json_document *document = json_parse_text(written, size, error, sizeof error);
    free(written);
    CHECK(document != NULL);
    if (!document)
        return cli_strdup("");
    const json_value *value = json_root(document);
    char *read = cli_strdup(json_str(value, ""));
    cli_make_printable(read, strlen(read));
    json_free(document);
    return read;
}

static void test_name_as_reported(void)
{
    static const char *const names[] = {
        "cl_mem", "a,b \"q\"", "new\nline", "tab\there", "\x1b[31mred", "del\x7f", "c1\xc2\x85" "control",
        "caf\xc3\xa9", "\xff\xfe" "-bad", "cut\xc3", "overlong\xc0\xaf", "surrogate\xed\xa0\x80", "\xf4\x90\x80\x80",
        "emoji\xf0\x9f\x98\x80", "",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *expected = name_through_report(names[i]), *got = cli_name_as_reported(names[i]);
        if (strcmp(got, expected))
            fprintf(stderr, "name %zu: cli_name_as_reported gave \"%s\", the report holds \"%s\"\n", i, got, expected);
        CHECK(!strcmp(got, expected));
        free(expected);
        free(got);
    }
    char *bad = cli_name_as_reported("new\nline\xff");
    CHECK(!strcmp(bad, "new?line\xef\xbf\xbd"));
    free(bad);
}

static void test_escape_xml(void)
{
    CHECK(!strcmp(xml_of("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;"));
    /* valid UTF-8 is kept; control characters XML forbids are dropped */
    CHECK(!strcmp(xml_of("caf\xc3\xa9 \xf0\x9f\x98\x80\x01\t"), "caf\xc3\xa9 \xf0\x9f\x98\x80\t"));
    /* Latin-1, a cut sequence, an overlong form, a surrogate, U+FFFF:
     * each invalid byte (or non-character) is one U+FFFD */
    CHECK(!strcmp(xml_of("caf\xe9"), "caf\xef\xbf\xbd"));
    CHECK(!strcmp(xml_of("x\xc3"), "x\xef\xbf\xbd"));
    CHECK(!strcmp(xml_of("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd"));
    CHECK(!strcmp(xml_of("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));
    CHECK(!strcmp(xml_of("\xef\xbf\xbf."), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd."));
}

static void test_units(void)
{
    char text[64];
    units_bytes(0, text, sizeof text);
    CHECK(!strcmp(text, "0 B"));
    units_bytes(1023, text, sizeof text);
    CHECK(!strcmp(text, "1023 B"));
    units_bytes(4096, text, sizeof text);
    CHECK(!strcmp(text, "4.00 KiB"));
    units_bytes(1288490188, text, sizeof text);
    CHECK(!strcmp(text, "1.20 GiB"));
    units_bytes(-1.75 * 1024 * 1024, text, sizeof text);
    CHECK(!strcmp(text, "-1.75 MiB"));
    units_time_ms(0.25, text, sizeof text);
    CHECK(!strcmp(text, "0.25 ms"));
    units_time_ms(10.5, text, sizeof text);
    CHECK(!strcmp(text, "10.5 ms"));
    units_time_ms(812.5, text, sizeof text);
    CHECK(!strcmp(text, "812 ms") || !strcmp(text, "813 ms"));
    units_time_ms(1500, text, sizeof text);
    CHECK(!strcmp(text, "1.50 s"));
    units_time_ms(125000, text, sizeof text);
    CHECK(!strcmp(text, "2 min 5 s"));
    /* rounded first, then split or given a unit: no "2 min 60 s", no "1024 KiB" */
    units_time_ms(179600, text, sizeof text);
    CHECK(!strcmp(text, "3 min 0 s"));
    units_time_ms(999.6, text, sizeof text);
    CHECK(!strcmp(text, "1.00 s"));
    units_bytes(1048575, text, sizeof text);
    CHECK(!strcmp(text, "1.00 MiB"));
    units_bytes(1023.7, text, sizeof text);
    CHECK(!strcmp(text, "1.00 KiB"));
    units_bytes(9.996 * 1024, text, sizeof text);
    CHECK(!strcmp(text, "10.0 KiB"));
    units_bytes(99.96 * 1024, text, sizeof text);
    CHECK(!strcmp(text, "100 KiB"));
    units_bytes(118.4 * 1024 * 1024, text, sizeof text);
    CHECK(!strcmp(text, "118 MiB"));
    units_count(1234567, text, sizeof text);
    CHECK(!strcmp(text, "1,234,567"));
    units_count(-1000, text, sizeof text);
    CHECK(!strcmp(text, "-1,000"));
    units_count(999, text, sizeof text);
    CHECK(!strcmp(text, "999"));
    CHECK(!strcmp(units_basename("/a/b/leaky.c"), "leaky.c"));
    CHECK(!strcmp(units_basename("leaky.c"), "leaky.c"));
}

static void test_string_map(void)
{
    string_map map = {0, 0, NULL};
    char key[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "key%d", i);
        int added;
        CHECK_EQ_INT(string_map_intern(&map, key, (uint64_t)i, &added), i);
        CHECK(added);
    }
    uint64_t value = 0;
    CHECK(string_map_get(&map, "key4321", &value) && value == 4321);
    CHECK(!string_map_get(&map, "nope", &value));
    int added = 1;
    CHECK_EQ_INT(string_map_intern(&map, "key7", 99, &added), 7);
    CHECK(!added);
    CHECK_EQ_INT(map.count, 5000);
    string_map_free(&map);
}

static void test_buckets(void)
{
    step_series s;
    memset(&s, 0, sizeof s);
    /* 100000 points oscillating 0..9 with one spike of 1000 at t = 77777 */
    for (int i = 0; i < 100000; i++)
        series_add(&s, (double)i, i == 77777 ? 1000.0 : (double)(i % 10));
    CHECK(s.max == 1000.0 && s.max_t == 77777.0);
    series_buckets b;
    series_bucketize(&s, 0, 100000, 500, &b);
    double highest = 0;
    size_t at = 0;
    for (size_t i = 0; i < b.count; i++) {
        if (b.max[i] > highest) {
            highest = b.max[i];
            at = i;
        }
        CHECK(b.min[i] == 0.0);
    }
    CHECK(highest == 1000.0);
    CHECK_EQ_INT(at, 77777 / 200);
    series_buckets_free(&b);

    /* Buckets before the first point have no value; after it, the value
     * carries into buckets without points. */
    step_series sparse;
    memset(&sparse, 0, sizeof sparse);
    series_add(&sparse, 50, 3);
    series_bucketize(&sparse, 0, 100, 10, &b);
    CHECK(isnan(b.max[0]) && isnan(b.min[4]));
    CHECK(b.max[5] == 3 && b.min[9] == 3);
    series_buckets_free(&b);
    series_free(&sparse);
    series_free(&s);
}

/* The run log's reader keeps whole verdicts and counts the rest: a line
 * cut short (no newline), a field missing, a number that is not one. */
static void test_run_log(void)
{
    const char *path = write_file("cli_units_run.log", "12\t3\t4096\t1\t0\tapp\t\t/r/12.json\t2\t/r/t.csv\t1\n"
                                                       "13\t0\t0\t0\t11\tcrasher\t/r/t.txt\t\t0\t\t0\n"
                                                       "18\t0\t0\t0\t0\tapp\t\t\t0\t/r/t.csv\t2\n"
                                                       "14\t1\t0\t0\t0\tapp\t\n"
                                                       "x5\t1\t0\t0\t0\tapp\t\t\n"
                                                       "15\t-1\t0\t0\t0\tapp\t\t\n"
                                                       "16\t1\t0\t0\t999\tapp\t\t\n"
                                                       "17\t1\t0\t0\t0\tcut\t\t");
    run_verdicts verdicts = run_log_read(path);
    CHECK(verdicts.count == 2 && verdicts.malformed == 6);
    if (verdicts.count == 2) {
        CHECK(verdicts.items[0].pid == 12 && verdicts.items[0].leaked_objects == 3 &&
              verdicts.items[0].leaked_bytes == 4096 && verdicts.items[0].misuse == 1 && !verdicts.items[0].signal &&
              verdicts.items[0].inherited_objects == 2 && verdicts.items[0].csv_started == 1 &&
              !strcmp(verdicts.items[0].csv_path, "/r/t.csv"));
        CHECK(!strcmp(verdicts.items[0].json_path, "/r/12.json") && !strcmp(verdicts.items[0].text_path, ""));
        CHECK(verdicts.items[1].signal == 11 && !strcmp(verdicts.items[1].program, "crasher") &&
              !strcmp(verdicts.items[1].text_path, "/r/t.txt"));
    }
    /* Exited with leaks: pid 12 only (a crash's live objects are not leaks). */
    size_t crashed = 0;
    CHECK(run_log_summarize(&verdicts, &crashed) == 1);
    CHECK(crashed == 1);
    run_verdicts_free(&verdicts);
    run_verdicts missing = run_log_read("/nonexistent/run.log");
    CHECK(missing.count == 0 && missing.items == NULL);
}

int main(void)
{
    test_json();
    test_json_keys();
    test_csv();
    test_huge_sizes();
    test_escape_xml();
    test_name_as_reported();
    test_units();
    test_string_map();
    test_buckets();
    test_run_log();
    return check_summary("test_cli_units");
}
