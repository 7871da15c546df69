/*
 * Transparency: real OpenCL programs print the same stdout, byte for
 * byte, with the layer (OPENCL_LAYERS, set by CTest) and without it, exit
 * with the same status, and with the layer say nothing on stderr (no
 * misuse: the exit report goes to a file of its own, which also proves the
 * layer was loaded).
 *
 * Usage: cl_transparency MODE:PATH[:ARG...]...
 *   exact:PATH    stdout compared as it is (cl_vecadd)
 *   masked:PATH   hexadecimal addresses (0x followed by 8 or more hex
 *                 digits) replaced by 0xADDR on both sides first: heap
 *                 addresses move when one more library is loaded (cl_leaky
 *                 prints its handles)
 *   sample:PATH   masked, and the lines the sample prints from the
 *                 extension's own report (or, without the layer, in place
 *                 of it) are left out on both sides; see report_lines[]
 *   clinfo:PATH   the platform extension lists are the one place the layer
 *                 shows: our two extension names are taken out of the
 *                 output with the layer, wherever clinfo prints them (the
 *                 string, the with-version list, raw and JSON forms), and
 *                 must have been there exactly twice per platform each;
 *                 what is left is compared as it is
 * Arguments after PATH, separated by ':', are passed to the program.
 */
#include <dirent.h>

#include "cl_test_util.h"

static const char *const our_names[] = {"cl_altera_live_object_tracking", "cl_intelfpga_live_object_tracking"};
#define OUR_NAME_COUNT 2

/* Lines a sample prints only because the extension is there (or only
 * because it is not): the sample's live-object report. */
static const struct {
    const char *program;
    const char *prefixes[3];
} report_lines[] = {
    {"leaky_events", {" Live ", "leaky_events: live objects", NULL}},
    {"kept_alive", {"   cl_", "   (", NULL}},
};

typedef struct text {
    char *data;
    size_t size;
} text;

static void text_add(text *t, const char *data, size_t length) { ct_append(&t->data, &t->size, data, length); }

static int is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* Replace 0x + 8 or more hex digits with 0xADDR. */
static text mask_addresses(const char *in)
{
    text out = {NULL, 0};
    text_add(&out, "", 0);
    for (const char *p = in; *p;) {
        if (p[0] == '0' && p[1] == 'x') {
            size_t digits = 0;
            while (is_hex(p[2 + digits]))
                digits++;
            if (digits >= 8) {
                text_add(&out, "0xADDR", 6);
                p += 2 + digits;
                continue;
            }
        }
        text_add(&out, p, 1);
        p++;
    }
    return out;
}

/* Leave out the lines starting with one of `prefixes`; counts them. */
static text drop_lines(const char *in, const char *const *prefixes, size_t *dropped)
{
    text out = {NULL, 0};
    text_add(&out, "", 0);
    for (const char *line = in; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) + 1 : strlen(line);
        int drop = 0;
        for (size_t i = 0; prefixes[i] && !drop; i++)
            drop = strncmp(line, prefixes[i], strlen(prefixes[i])) == 0;
        if (drop)
            (*dropped)++;
        else
            text_add(&out, line, length);
        line += length;
    }
    return out;
}

/* Drop the digits of the device's clock frequency, from its name to the
 * end of the line or the next comma (clinfo's "Max clock frequency",
 * CL_DEVICE_MAX_CLOCK_FREQUENCY with --raw, --all-props, and --json,
 * which is one line): where the kernel has no cpufreq, pocl reads the
 * current "cpu MHz" of /proc/cpuinfo, which may move between the two runs
 * on a host whose clock scales. The layer never touches that query. */
static void drop_clock_digits(text *t)
{
    static const char *const names[] = {"lock frequency", "MAX_CLOCK_FREQUENCY"};
    size_t kept = 0;
    for (size_t at = 0; at < t->size;) {
        size_t name_length = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0] && !name_length; i++)
            if (!strncmp(t->data + at, names[i], strlen(names[i])))
                name_length = strlen(names[i]);
        if (!name_length) {
            t->data[kept++] = t->data[at++];
            continue;
        }
        memmove(t->data + kept, t->data + at, name_length);
        kept += name_length;
        for (at += name_length; at < t->size && t->data[at] != '\n' && t->data[at] != ','; at++)
            if (t->data[at] < '0' || t->data[at] > '9')
                t->data[kept++] = t->data[at];
    }
    t->size = kept;
    t->data[kept] = '\0';
}

/* Take our extension names out of clinfo's output, in each form clinfo
 * prints them; counts[i] receives how often our_names[i] was taken out.
 *   "... cl_pocl_content_size cl_altera_live_object_tracking ..."  (string)
 *   "... cl_pocl_content_size:0x400000 cl_altera_..:0x400000"    (raw list)
 *   "        cl_altera_...     0x400000 (1.0.0)\n"                (list line)
 *   ', "cl_altera_..." : { "raw" : 4194304, "version" : "1.0.0" }' (JSON) */
static text strip_our_extensions(const char *in, size_t counts[OUR_NAME_COUNT])
{
    text out = {NULL, 0};
    text_add(&out, "", 0);
    const char *p = in;
    while (*p) {
        int which = -1;
        for (int i = 0; i < OUR_NAME_COUNT && which < 0; i++)
            if (!strncmp(p, our_names[i], strlen(our_names[i])))
                which = i;
        if (which < 0) {
            text_add(&out, p, 1);
            p++;
            continue;
        }
        const char *after = p + strlen(our_names[which]);
        counts[which]++;
        /* what was copied of this line so far */
        size_t line_start = out.size;
        while (line_start > 0 && out.data[line_start - 1] != '\n')
            line_start--;
        int only_blanks = 1;
        for (size_t i = line_start; i < out.size; i++)
            only_blanks &= out.data[i] == ' ' || out.data[i] == '\t';
        if (out.size >= 3 && !memcmp(out.data + out.size - 3, ", \"", 3) && *after == '"') {
            /* JSON member: drop from the comma to the closing brace */
            out.size -= 3;
            const char *brace = strchr(after, '}');
            p = brace ? brace + 1 : after;
        } else if (only_blanks) {
            /* a line of its own */
            out.size = line_start;
            const char *end = strchr(after, '\n');
            p = end ? end + 1 : after + strlen(after);
        } else {
            /* a word in a list: the space before it and any ":version" */
            if (out.size > 0 && out.data[out.size - 1] == ' ')
                out.size--;
            if (*after == ':' && after[1] == '0' && after[2] == 'x')
                for (after += 3; is_hex(*after); after++)
                    ;
            p = after;
        }
        out.data[out.size] = '\0';
    }
    return out;
}

/* Show where two outputs part. */
static void show_difference(const char *a, const char *b)
{
    int line = 1;
    const char *line_a = a, *line_b = b;
    while (*a && *a == *b) {
        if (*a == '\n') {
            line++;
            line_a = a + 1;
            line_b = b + 1;
        }
        a++;
        b++;
    }
    fprintf(stderr, "  stdout differs from line %d on:\n    with:    %.160s\n    without: %.160s\n", line, line_a,
            line_b);
}

static cl_uint platform_count(void)
{
    cl_uint count = 0;
    if (clGetPlatformIDs(0, NULL, &count) != CL_SUCCESS)
        count = 0;
    return count;
}

/* Files in `dir` (the exit reports the runs with the layer wrote). */
static int count_and_remove_files(const char *dir)
{
    int count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *entry;
    while ((entry = readdir(d))) {
        if (entry->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
        if (unlink(path) == 0)
            count++;
    }
    closedir(d);
    return count;
}

static void compare_one(char *spec, const char *report_dir)
{
    char *argv[16] = {NULL};
    int argc = 0;
    char *mode = strtok(spec, ":");
    for (char *word = strtok(NULL, ":"); word && argc < 15; word = strtok(NULL, ":"))
        argv[argc++] = word;
    if (!mode || argc == 0) {
        CHECK(0);
        return;
    }
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    char report_setting[4200];
    snprintf(report_setting, sizeof report_setting, "LIVETRACK_OUTPUT=%s/report.%%p", report_dir);
    /* In a sanitizer build the layer needs the ASan runtime first in a
     * program built without it (clinfo): CMake names it. Both runs get it.
     * Leak checking is left to the instrumented programs. */
    const char *preload = getenv("LIVETRACK_TEST_PRELOAD");
    char preload_setting[4200] = "";
    if (preload && *preload && !strcmp(mode, "clinfo"))
        snprintf(preload_setting, sizeof preload_setting, "LD_PRELOAD=%s", preload);
    int preloaded = *preload_setting != '\0';
    const char *set_with[] = {report_setting, "LIVETRACK_EXIT_REPORT=always", "LIVETRACK_TRANSPARENT=0",
                              preloaded ? preload_setting : NULL, "ASAN_OPTIONS=detect_leaks=0", NULL};
    const char *set_without[] = {preload_setting, "ASAN_OPTIONS=detect_leaks=0", NULL};
    const char *const clear[] = {"LIVETRACK_OUTPUT", "LIVETRACK_EXIT_REPORT", "LIVETRACK_TRANSPARENT", NULL};
    const char *const clear_and_no_layer[] = {"OPENCL_LAYERS", "LIVETRACK_OUTPUT", "LIVETRACK_EXIT_REPORT",
                                              "LIVETRACK_TRANSPARENT", NULL};
    int failed_before = check_failed;
    ct_child with, without;
    CHECK_EQ_INT(ct_run(argv, set_with, clear, &with), 0);
    CHECK_EQ_INT(ct_run(argv, preloaded ? set_without : NULL, clear_and_no_layer, &without), 0);
    CHECK_EQ_INT(with.status, without.status);
    /* The layer was loaded: its exit report is there (and only there),
     * one per run (a run LeakSanitizer crashed in was made twice). */
    CHECK_EQ_INT(count_and_remove_files(report_dir), with.runs);
    /* No misuse, nothing else from livetrack on stderr. */
    CHECK_EQ_INT(ct_count_lines_with_prefix(with.err, "livetrack:"), 0);

    text a = {NULL, 0}, b = {NULL, 0};
    if (!strcmp(mode, "exact")) {
        text_add(&a, with.out, with.out_size);
        text_add(&b, without.out, without.out_size);
    } else if (!strcmp(mode, "masked")) {
        a = mask_addresses(with.out);
        b = mask_addresses(without.out);
    } else if (!strcmp(mode, "sample")) {
        const char *const *prefixes = NULL;
        for (size_t i = 0; i < sizeof report_lines / sizeof report_lines[0]; i++)
            if (!strcmp(report_lines[i].program, name))
                prefixes = report_lines[i].prefixes;
        CHECK(prefixes != NULL);
        static const char *const none[] = {NULL};
        size_t dropped_with = 0, dropped_without = 0;
        text masked_with = mask_addresses(with.out), masked_without = mask_addresses(without.out);
        a = drop_lines(masked_with.data, prefixes ? prefixes : none, &dropped_with);
        b = drop_lines(masked_without.data, prefixes ? prefixes : none, &dropped_without);
        /* the sample did see the extension with the layer */
        CHECK(dropped_with > 0);
        free(masked_with.data);
        free(masked_without.data);
    } else if (!strcmp(mode, "clinfo")) {
        size_t counts[OUR_NAME_COUNT] = {0, 0}, absent[OUR_NAME_COUNT] = {0, 0};
        a = strip_our_extensions(with.out, counts);
        b = strip_our_extensions(without.out, absent);
        drop_clock_digits(&a);
        drop_clock_digits(&b);
        /* the masking itself: the clock's digits go, no other line's */
        text clock_a = {NULL, 0}, clock_b = {NULL, 0};
        const char *clock_in_a = "  Max clock frequency   2596MHz\n  Max work items  4096\n"
                                 "{\"CL_DEVICE_MAX_CLOCK_FREQUENCY\" : 2596, \"CL_DEVICE_UNITS\" : 8}";
        const char *clock_in_b = "  Max clock frequency   3100MHz\n  Max work items  4096\n"
                                 "{\"CL_DEVICE_MAX_CLOCK_FREQUENCY\" : 3100, \"CL_DEVICE_UNITS\" : 8}";
        text_add(&clock_a, clock_in_a, strlen(clock_in_a));
        text_add(&clock_b, clock_in_b, strlen(clock_in_b));
        drop_clock_digits(&clock_a);
        drop_clock_digits(&clock_b);
        CHECK(!strcmp(clock_a.data, clock_b.data) && strstr(clock_a.data, "4096\n") && strstr(clock_a.data, ": 8}"));
        free(clock_a.data);
        free(clock_b.data);
        cl_uint platforms = platform_count();
        CHECK(platforms > 0);
        for (int i = 0; i < OUR_NAME_COUNT; i++) {
            CHECK_EQ_INT(absent[i], 0);
            /* once in the string, once in the with-version list */
            CHECK_EQ_INT(counts[i], 2 * platforms);
        }
    } else {
        fprintf(stderr, "cl_transparency: unknown mode %s\n", mode);
        CHECK(0);
    }
    if (a.data && b.data) {
        CHECK(b.size > 0);
        int same = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
        CHECK(same);
        if (!same)
            show_difference(a.data, b.data);
    }
    printf("cl_transparency: %s %s%s%s: %zu bytes of stdout %s\n", mode, name, argc > 1 ? " " : "",
           argc > 1 ? argv[1] : "", b.size, check_failed == failed_before ? "identical" : "DIFFER");
    if (check_failed != failed_before) {
        ct_child_dump("with the layer", &with);
        ct_child_dump("without the layer", &without);
    }
    free(a.data);
    free(b.data);
    ct_child_free(&with);
    ct_child_free(&without);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cl_transparency MODE:PATH[:ARG...]...\n");
        return 2;
    }
    const char *layer = getenv("OPENCL_LAYERS");
    CHECK(layer && *layer);
    char report_dir[] = "/tmp/cl_transparency.XXXXXX";
    if (!mkdtemp(report_dir)) {
        perror("mkdtemp");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        compare_one(argv[i], report_dir);
    count_and_remove_files(report_dir);
    rmdir(report_dir);
    return check_summary("cl_transparency");
}
