/*
 * livetrack report: a saved JSON report as text again, the way the exit
 * report reads, grouped by call site (with stacks), by type or by API.
 *
 * It reads only the JSON, so a report from CI can be read on another
 * machine, long after the program and its binaries are gone.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_file.h"

#define EXAMPLES_SHOWN 4

static void usage(void)
{
    fputs("usage: livetrack report FILE.json [--by site|type|api] [--top N] [--peak]\n"
          "\n"
          "Prints a report saved with 'livetrack run --json FILE' (or LIVETRACK_JSON=FILE) as text:\n"
          "a summary, then the leaked objects grouped as asked, then the misused calls.\n"
          "\n"
          "Options:\n"
          "  --by site     by the call site that created them, largest first, with the stack,\n"
          "                example handles and what they keep alive (the default)\n"
          "  --by type     by object type (cl_event, cl_mem, ...)\n"
          "  --by api      by API (OpenCL, Level Zero, CUDA, and a program's own)\n"
          "  --top N       only the N largest groups (0, the default: all)\n"
          "  --peak        also the objects live at the peak of live bytes, by call site\n"
          "  -h, --help    show this help\n"
          "\n"
          "Suppressed leaks (LIVETRACK_SUPPRESSIONS) are counted in the summary, not listed.\n",
          stdout);
}

typedef enum { BY_SITE, BY_TYPE, BY_API } grouping;

/* A count; past int64_t (a sum may be) the largest, never "0 leaked". */
static int64_t field(const json_value *object, const char *name) { return json_count_int(json_get(object, name), 0); }
/* Sizes are unsigned in the report and may pass 2^63, where json_int gives up. */
static uint64_t size_field(const json_value *object, const char *name)
{
    return json_u64(json_get(object, name), 0);
}

/* Largest first: bytes, then objects; ties keep the report's order. */
static int compare_groups(const void *a, const void *b)
{
    const json_value *x = *(const json_value *const *)a, *y = *(const json_value *const *)b;
    uint64_t xb = size_field(x, "bytes"), yb = size_field(y, "bytes");
    if (xb != yb)
        return xb > yb ? -1 : 1;
    int64_t xo = field(x, "objects"), yo = field(y, "objects");
    if (xo != yo)
        return xo > yo ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The groups of `array` to show: sorted, suppressed ones left out. */
static const json_value **sorted_groups(const json_value *array, size_t *count_out)
{
    size_t count = json_count(array), kept = 0;
    const json_value **groups = cli_alloc((count + 1) * sizeof *groups);
    for (size_t i = 0; i < count; i++) {
        const json_value *group = json_at(array, i);
        if (!json_bool(json_get(group, "suppressed"), 0))
            groups[kept++] = group;
    }
    qsort(groups, kept, sizeof *groups, compare_groups);
    *count_out = kept;
    return groups;
}

static const char *plural(int64_t count) { return count == 1 ? "" : "s"; }

/* " (1.00 KiB)" beside a count of kept-alive objects, or "" for no bytes,
 * as the exit report puts it. Reports older than these bytes lack the
 * field: read as 0, so their lines read as before. */
static void format_bytes_aside(uint64_t bytes, char *out, size_t size)
{
    out[0] = '\0';
    if (!bytes)
        return;
    char formatted[32];
    units_bytes((double)bytes, formatted, sizeof formatted);
    snprintf(out, size, " (%s)", formatted);
}

/* The summary's kept-alive lines, worded as the exit report's. */
static void print_kept_alive(const json_value *summary)
{
    int64_t kept = field(summary, "kept_alive_objects");
    if (!json_get(summary, "kept_by_leaks_objects")) {
        /* An older report: which of these leaks hold is not known.
         * kept_alive_objects counts those held by suppressed leaks too. */
        if (kept)
            printf("  %" PRId64 " object%s released by the program but still held by live children\n", kept,
                   plural(kept));
        return;
    }
    int64_t by_leaks = field(summary, "kept_by_leaks_objects");
    if (by_leaks) {
        char size[40];
        format_bytes_aside(size_field(summary, "kept_by_leaks_bytes"), size, sizeof size);
        printf("  %" PRId64 " object%s%s the program released %s kept alive by leaked objects\n", by_leaks,
               plural(by_leaks), size, by_leaks == 1 ? "is" : "are");
    }
    int64_t held_otherwise = kept > by_leaks ? kept - by_leaks : 0;
    if (held_otherwise)
        printf("  %" PRId64 " object%s the program released %s still held by suppressed objects or by calls in "
               "progress\n",
               held_otherwise, plural(held_otherwise), held_otherwise == 1 ? "is" : "are");
}

static void print_summary(const report_file *report)
{
    const json_value *root = report->root, *summary = json_get(root, "summary");
    const json_value *process = json_get(root, "process");
    char text[64], size[32];

    const char *executable = json_str(json_get(process, "executable"), "(unknown program)");
    printf("livetrack report of %s", executable);
    if (json_get(process, "pid") && json_get(process, "pid")->kind == JSON_NUMBER)
        printf(" (pid %" PRId64 ")", field(process, "pid"));
    const json_value *time = json_get(process, "time_ms");
    if (time && time->kind == JSON_NUMBER) {
        units_time_ms(json_num(time, 0), text, sizeof text);
        printf(", ran %s", text);
    }
    printf("\n");

    int64_t leaked = field(summary, "leaked_objects");
    units_bytes((double)size_field(summary, "leaked_bytes"), size, sizeof size);
    size_t sites = 0;
    const json_value *site_array = json_get(root, "sites");
    for (size_t i = 0; i < json_count(site_array); i++)
        if (!json_bool(json_get(json_at(site_array, i), "suppressed"), 0) &&
            field(json_at(site_array, i), "objects") > 0)
            sites++;
    units_count(leaked, text, sizeof text);
    printf("  %s leaked object%s (%s)", text, plural(leaked), size);
    if (sites && report_call_sites_off(root))
        printf(" of %zu kind%s", sites, sites == 1 ? "" : "s");
    else if (sites)
        printf(" from %zu call site%s", sites, sites == 1 ? "" : "s");
    const json_value *by_api = json_get(root, "by_api");
    for (size_t i = 0; i < json_count(by_api); i++)
        printf("%s%" PRId64 " %s", i ? ", " : ": ", field(json_at(by_api, i), "objects"),
               json_str(json_get(json_at(by_api, i), "api"), "?"));
    printf("\n");

    print_kept_alive(summary);
    int64_t suppressed = field(summary, "suppressed_objects");
    if (suppressed) {
        units_bytes((double)size_field(summary, "suppressed_bytes"), size, sizeof size);
        printf("  %" PRId64 " leaked object%s (%s) suppressed\n", suppressed, plural(suppressed), size);
    }
    int64_t created = field(summary, "created_objects");
    units_count(created, text, sizeof text);
    printf("  %s object%s created", text, plural(created));
    const json_value *peak = json_get(root, "peak");
    if (peak && peak->kind == JSON_OBJECT) {
        char when[32], count[32];
        units_bytes((double)size_field(peak, "bytes"), size, sizeof size);
        units_time_ms(json_num(json_get(peak, "time_ms"), 0), when, sizeof when);
        units_count(field(peak, "objects"), count, sizeof count);
        printf("; peak %s live in %s object%s at %s%s", size, count, plural(field(peak, "objects")), when,
               json_bool(json_get(peak, "approximate"), 0) ? " (approximate)" : "");
        /* The set above is the one at the peak of bytes; the most objects
         * live at once may have been more, at another time. */
        if (field(peak, "max_objects") > field(peak, "objects")) {
            units_count(field(peak, "max_objects"), count, sizeof count);
            printf("; at most %s objects live at once", count);
        }
    }
    printf("\n");
    int64_t misuse = field(summary, "misuse_count");
    if (misuse)
        printf("  %" PRId64 " misused call%s (listed at the end)\n", misuse, plural(misuse));
    if (!json_bool(json_get(summary, "leaks_known"), 1))
        printf("  leaked objects not known: %" PRId64 " objects were live (livetrack ran out of memory for the "
               "report)\n",
               field(summary, "live_objects"));
    if (json_bool(json_get(summary, "incomplete"), 0))
        printf("  tracking was incomplete (livetrack ran out of memory): objects may be missing\n");
    if (report_call_sites_off(root))
        printf("  call sites are off (LIVETRACK_STACK_DEPTH=0): leaks are grouped by type\n");
}

static void print_site(const json_value *root, const json_value *site, const char *what)
{
    char size[32], label[512], types[256];
    int64_t objects = field(site, "objects");
    units_bytes((double)size_field(site, "bytes"), size, sizeof size);
    report_site_label(site, label, sizeof label);
    report_site_types(site, types, sizeof types);
    if (json_count(json_get(site, "frames")))
        printf("\n%" PRId64 " object%s (%s) %s at %s: %s\n", objects, plural(objects), size, what, label, types);
    else /* no stack to name the site by: its types are all there is */
        printf("\n%" PRId64 " object%s (%s) %s: %s\n", objects, plural(objects), size, what, types);
    report_print_frames(stdout, root, json_get(site, "frames"), "    ");

    const json_value *examples = json_get(site, "examples");
    size_t count = json_count(examples);
    for (size_t i = 0; i < count && i < EXAMPLES_SHOWN; i++) {
        const json_value *example = json_at(examples, i);
        printf("%s%s %s refs %" PRId64, i ? ", " : "  for example: ", json_str(json_get(example, "type"), "?"),
               json_str(json_get(example, "handle"), "?"), field(example, "refs"));
        if (size_field(example, "bytes")) {
            units_bytes((double)size_field(example, "bytes"), size, sizeof size);
            printf(" (%s)", size);
        }
    }
    if (count)
        printf("%s\n", count > EXAMPLES_SHOWN ? ", ..." : "");
    const json_value *keeps = json_get(site, "keeps_alive");
    count = json_count(keeps);
    /* keeps_alive lists them all; the count came later, and older reports
     * lack it. */
    int64_t kept_count = json_count_int(json_get(site, "keeps_alive_count"), (int64_t)count);
    if (count) {
        char kept_size[40];
        format_bytes_aside(size_field(site, "keeps_alive_bytes"), kept_size, sizeof kept_size);
        printf("  keeps alive %" PRId64 " object%s%s the program released:", kept_count, plural(kept_count),
               kept_size);
    }
    for (size_t i = 0; i < count && i < EXAMPLES_SHOWN; i++) {
        const json_value *kept = json_at(keeps, i);
        printf("%s%s %s", i ? ", " : " ", json_str(json_get(kept, "type"), "?"),
               json_str(json_get(kept, "handle"), "?"));
    }
    if (count)
        printf("%s\n", count > EXAMPLES_SHOWN ? ", ..." : "");
}

static void print_sites(const json_value *root, const json_value *array, long top, const char *what,
                        const char *more_hint)
{
    size_t count;
    const json_value **sites = sorted_groups(array, &count);
    size_t shown = top > 0 && (size_t)top < count ? (size_t)top : count;
    for (size_t i = 0; i < shown; i++)
        print_site(root, sites[i], what);
    if (shown < count)
        printf("\n... and %zu more call site%s (%s)\n", count - shown, count - shown == 1 ? "" : "s", more_hint);
    free(sites);
}

static void print_table(const json_value *array, long top, int with_type)
{
    size_t count;
    const json_value **groups = sorted_groups(array, &count);
    size_t shown = top > 0 && (size_t)top < count ? (size_t)top : count;
    printf("\nleaks by %s:\n", with_type ? "type" : "API");
    if (!count)
        printf("  none\n");
    for (size_t i = 0; i < shown; i++) {
        char size[32], objects[32];
        units_bytes((double)size_field(groups[i], "bytes"), size, sizeof size);
        units_count(field(groups[i], "objects"), objects, sizeof objects);
        if (with_type)
            printf("  %-10s %-24s %10s object%s %12s\n", json_str(json_get(groups[i], "api"), "?"),
                   json_str(json_get(groups[i], "type"), "?"), objects, field(groups[i], "objects") == 1 ? " " : "s",
                   size);
        else
            printf("  %-10s %10s object%s %12s\n", json_str(json_get(groups[i], "api"), "?"), objects,
                   field(groups[i], "objects") == 1 ? " " : "s", size);
    }
    if (shown < count)
        printf("  ... and %zu more\n", count - shown);
    free(groups);
}

static void print_misuse(const json_value *misuse)
{
    size_t count = json_count(misuse);
    if (!count)
        return;
    printf("\nmisused calls:\n");
    for (size_t i = 0; i < count; i++) {
        const json_value *event = json_at(misuse, i);
        char when[32];
        units_time_ms(json_num(json_get(event, "time_ms"), 0), when, sizeof when);
        printf("  at %s: %s\n", when, json_str(json_get(event, "message"), "(no message)"));
        static const struct {
            const char *key, *title;
        } stacks[] = {{"call_frames", "the call"},
                      {"create_frames", "created"},
                      {"release_frames", "released"}};
        for (size_t s = 0; s < sizeof stacks / sizeof stacks[0]; s++) {
            const json_value *frames = json_get(event, stacks[s].key);
            if (!json_count(frames))
                continue;
            printf("    %s:\n", stacks[s].title);
            report_print_frames(stdout, NULL, frames, "      "); /* never empty here */
        }
    }
}

int cli_report(int argc, char **argv)
{
    cli_parser parser;
    cli_parser_init(&parser, "report", argc - 1, argv + 1);
    const char *path = NULL, *by = "site", *value;
    long top = 0;
    int peak = 0;
    while (cli_more(&parser)) {
        if (cli_flag(&parser, "help", 'h')) {
            usage();
            return CLI_EXIT_OK;
        } else if (cli_value(&parser, "by", 0, &by)) {
            cli_check_choice("--by", by, (const char *const[]){"site", "type", "api", NULL});
        } else if (cli_value(&parser, "top", 0, &value)) {
            top = cli_parse_long("--top", value, 0, 1000000000L);
        } else if (cli_flag(&parser, "peak", 0)) {
            peak = 1;
        } else if (cli_double_dash(&parser)) {
            continue;
        } else if (!path && cli_positional(&parser, &path)) {
            continue;
        } else {
            cli_unknown(&parser);
        }
    }
    if (!path)
        cli_fail("no report given (usage: livetrack report FILE.json [--by site|type|api] [--top N] [--peak])");
    grouping group = !strcmp(by, "type") ? BY_TYPE : !strcmp(by, "api") ? BY_API : BY_SITE;

    report_file report;
    report_load(path, &report);
    print_summary(&report);
    const json_value *root = report.root;
    if (group == BY_SITE) {
        print_sites(root, json_get(root, "sites"), top, "leaked", "use --top 0 to see all");
        print_table(json_get(root, "by_type"), 0, 1);
    } else if (group == BY_TYPE) {
        print_table(json_get(root, "by_type"), top, 1);
    } else {
        print_table(json_get(root, "by_api"), top, 0);
    }
    if (peak) {
        const json_value *peak_set = json_get(root, "peak");
        if (!peak_set || peak_set->kind != JSON_OBJECT) {
            printf("\nno peak in this report\n");
        } else {
            char size[32], when[32];
            units_bytes((double)size_field(peak_set, "bytes"), size, sizeof size);
            units_time_ms(json_num(json_get(peak_set, "time_ms"), 0), when, sizeof when);
            printf("\nat the peak (%s): %s live in %" PRId64 " object%s%s\n", when, size, field(peak_set, "objects"),
                   plural(field(peak_set, "objects")),
                   json_bool(json_get(peak_set, "approximate"), 0) ? " (approximate)" : "");
            print_sites(root, json_get(peak_set, "sites"), top, "live", "use --top 0 to see all");
        }
    }
    print_misuse(json_get(root, "misuse"));
    report_free(&report);
    if (fflush(stdout))
        cli_fail("writing the report failed");
    return CLI_EXIT_OK;
}
