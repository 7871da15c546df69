/*
 * livetrack diff: the regression check for CI. Which leaks of NEW come
 * from call sites that BASE did not leak from?
 *
 * Sites are matched by their symbolized frames (report_site_key), never
 * by address: addresses move with every run (ASLR) and every rebuild.
 * Growth at a known site is shown but does not fail the check: counts
 * often depend on input sizes, and CI wants to catch new leaks, not noise.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_file.h"

static void usage(void)
{
    fputs("usage: livetrack diff BASE.json NEW.json [--ignore-lines]\n"
          "\n"
          "Lists the leaks in NEW whose creation call site has no leaks in BASE: a regression\n"
          "check for CI (save BASE from the main branch, NEW from the change). Call sites are\n"
          "compared by their symbolized frames (function, file, line), not by address, so two\n"
          "runs of the same program match. Sites that leak more than in BASE are shown too,\n"
          "but only new sites fail the check. Suppressed leaks are ignored.\n"
          "\n"
          "Options:\n"
          "  --ignore-lines  compare functions and files only, so that edits which only move\n"
          "                  code to other lines do not make every site new\n"
          "  -h, --help      show this help\n"
          "\n"
          "Exit status: 0 when NEW has no leaks at new call sites, 1 when it has, 2 when a\n"
          "file cannot be read.\n",
          stdout);
}

typedef struct site_entry {
    char *key;
    const json_value *site;             /* the first of the sites merged */
    const json_value *const *members;   /* all of them (`site` first) */
    size_t member_count;
    uint64_t objects; /* merged sites' sums may pass 2^63 */
    uint64_t bytes;   /* unsigned in the report, may pass 2^63 */
} site_entry;

static int compare_keys(const void *a, const void *b)
{
    return strcmp(((const site_entry *)a)->key, ((const site_entry *)b)->key);
}

static int compare_size(const void *a, const void *b)
{
    const site_entry *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->objects != y->objects)
        return x->objects > y->objects ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* The leaking, unsuppressed sites of a report, sorted by key, with the
 * entries of identical keys merged (two stacks can symbolize alike, e.g.
 * with --ignore-lines). */
static site_entry *collect(const report_file *report, int ignore_lines, size_t *count_out)
{
    const json_value *sites = json_get(report->root, "sites");
    size_t count = 0;
    site_entry *entries = cli_alloc((json_count(sites) + 1) * sizeof *entries);
    for (size_t i = 0; i < json_count(sites); i++) {
        const json_value *site = json_at(sites, i);
        int64_t objects = json_int(json_get(site, "objects"), 0);
        if (json_bool(json_get(site, "suppressed"), 0) || objects <= 0)
            continue;
        entries[count].key = report_site_key(site, ignore_lines);
        entries[count].site = site;
        entries[count].member_count = 1;
        entries[count].objects = (uint64_t)objects;
        entries[count].bytes = json_u64(json_get(site, "bytes"), 0);
        count++;
    }
    qsort(entries, count, sizeof *entries, compare_keys);
    /* The sites in key order, so that each merged entry's are side by side. */
    const json_value **members = cli_alloc((count + 1) * sizeof *members);
    for (size_t i = 0; i < count; i++)
        members[i] = entries[i].site;
    size_t merged = 0;
    for (size_t i = 0; i < count; i++) {
        if (merged && !strcmp(entries[merged - 1].key, entries[i].key)) {
            entries[merged - 1].objects = cli_add_saturated(entries[merged - 1].objects, entries[i].objects);
            entries[merged - 1].bytes = cli_add_saturated(entries[merged - 1].bytes, entries[i].bytes);
            entries[merged - 1].member_count++;
            free(entries[i].key);
        } else {
            entries[merged] = entries[i];
            entries[merged++].members = members + i;
        }
    }
    if (!merged)
        free(members); /* else entries[0].members is the array, freed with them */
    *count_out = merged;
    return entries;
}

/* "cl_mem x3, cl_event x2": the types of every site merged into `entry`,
 * each once, their objects added up. */
static void merged_types(const site_entry *entry, char *out, size_t size)
{
    enum { MAX_TYPES = 32 };
    const char *names[MAX_TYPES];
    uint64_t objects[MAX_TYPES];
    size_t kinds = 0;
    for (size_t m = 0; m < entry->member_count; m++) {
        const json_value *types = json_get(entry->members[m], "types");
        for (size_t i = 0; i < json_count(types); i++) {
            const char *name = json_str(json_get(json_at(types, i), "type"), "?");
            uint64_t count = json_u64(json_get(json_at(types, i), "objects"), 0);
            size_t k = 0;
            while (k < kinds && strcmp(names[k], name))
                k++;
            if (k == kinds && kinds == MAX_TYPES)
                continue; /* more kinds than anyone reads on one line */
            if (k == kinds) {
                names[kinds] = name;
                objects[kinds++] = 0;
            }
            objects[k] = cli_add_saturated(objects[k], count);
        }
    }
    size_t used = 0;
    if (size)
        out[0] = '\0';
    for (size_t k = 0; k < kinds && used < size; k++) {
        int wrote = snprintf(out + used, size - used, "%s%s x%" PRIu64, k ? ", " : "", names[k], objects[k]);
        used += wrote > 0 ? (size_t)wrote : 0;
    }
}

static void free_entries(site_entry *entries, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(entries[i].key);
    if (count)
        free((void *)entries[0].members);
    free(entries);
}

static const char *plural(uint64_t count) { return count == 1 ? "" : "s"; }

int cli_diff(int argc, char **argv)
{
    cli_parser parser;
    cli_parser_init(&parser, "diff", argc - 1, argv + 1);
    const char *paths[2] = {NULL, NULL};
    int ignore_lines = 0, given = 0;
    while (cli_more(&parser)) {
        if (cli_flag(&parser, "help", 'h')) {
            usage();
            return CLI_EXIT_OK;
        } else if (cli_flag(&parser, "ignore-lines", 0)) {
            ignore_lines = 1;
        } else if (cli_double_dash(&parser)) {
            continue;
        } else if (given < 2 && cli_positional(&parser, &paths[given])) {
            given++;
        } else {
            cli_unknown(&parser);
        }
    }
    if (given < 2)
        cli_fail("needs two reports (usage: livetrack diff BASE.json NEW.json)");

    report_file base, new_report;
    report_load(paths[0], &base);
    report_load(paths[1], &new_report);
    if (base.leaks_unknown || new_report.leaks_unknown)
        cli_fail("cannot compare %s: its leaks are not known", base.leaks_unknown ? paths[0] : paths[1]);
    size_t base_count, new_count;
    site_entry *base_sites = collect(&base, ignore_lines, &base_count);
    site_entry *new_sites = collect(&new_report, ignore_lines, &new_count);

    /* Walk both sorted lists at once: new, grown, unchanged, gone. */
    site_entry *added = cli_alloc((new_count + 1) * sizeof *added);
    size_t added_count = 0, grown = 0, same = 0, fixed = 0;
    uint64_t added_objects = 0, added_bytes = 0;
    size_t b = 0, n = 0;
    while (b < base_count || n < new_count) {
        int order = b == base_count ? 1 : n == new_count ? -1 : strcmp(base_sites[b].key, new_sites[n].key);
        if (order < 0) {
            fixed++;
            b++;
        } else if (order > 0) {
            added[added_count++] = new_sites[n];
            added_objects = cli_add_saturated(added_objects, new_sites[n].objects);
            added_bytes = cli_add_saturated(added_bytes, new_sites[n].bytes);
            n++;
        } else {
            if (new_sites[n].objects > base_sites[b].objects || new_sites[n].bytes > base_sites[b].bytes)
                grown++;
            else
                same++;
            b++;
            n++;
        }
    }
    qsort(added, added_count, sizeof *added, compare_size);

    char size[32];
    units_bytes((double)added_bytes, size, sizeof size);
    if (added_count)
        printf("livetrack diff: %zu new leak site%s in %s: %" PRIu64 " object%s (%s)\n", added_count,
               plural(added_count), paths[1], added_objects, plural(added_objects), size);
    else
        printf("livetrack diff: no new leak sites in %s\n", paths[1]);
    printf("  %zu site%s also leaking in %s", same + grown, plural(same + grown), paths[0]);
    if (grown)
        printf(" (%zu leaking more)", grown);
    printf("; %zu site%s no longer leaking\n", fixed, plural(fixed));

    for (size_t i = 0; i < added_count; i++) {
        char label[512], types[256];
        report_site_label(added[i].site, label, sizeof label);
        merged_types(&added[i], types, sizeof types);
        units_bytes((double)added[i].bytes, size, sizeof size);
        if (json_count(json_get(added[i].site, "frames")))
            printf("\nnew: %" PRIu64 " object%s (%s) leaked at %s: %s\n", added[i].objects,
                   plural(added[i].objects), size, label, types);
        else /* no stack (call sites off, or none recorded): the types name it */
            printf("\nnew: %" PRIu64 " object%s (%s) leaked: %s (no stack)\n", added[i].objects,
                   plural(added[i].objects), size, types);
        report_print_frames(stdout, new_report.root, json_get(added[i].site, "frames"), "    ");
    }
    if (grown) {
        printf("\n");
        for (size_t i = 0, j = 0; i < new_count; i++) {
            while (j < base_count && strcmp(base_sites[j].key, new_sites[i].key) < 0)
                j++;
            if (j == base_count || strcmp(base_sites[j].key, new_sites[i].key))
                continue;
            if (new_sites[i].objects <= base_sites[j].objects && new_sites[i].bytes <= base_sites[j].bytes)
                continue;
            char label[512], before[32], after[32];
            report_site_label(new_sites[i].site, label, sizeof label);
            units_bytes((double)base_sites[j].bytes, before, sizeof before);
            units_bytes((double)new_sites[i].bytes, after, sizeof after);
            printf("more: %s: %" PRIu64 " -> %" PRIu64 " objects, %s -> %s\n", label, base_sites[j].objects,
                   new_sites[i].objects, before, after);
        }
    }

    free(added);
    free_entries(base_sites, base_count);
    free_entries(new_sites, new_count);
    report_free(&base);
    report_free(&new_report);
    if (fflush(stdout))
        cli_fail("writing to stdout failed");
    return added_count ? CLI_EXIT_FOUND : CLI_EXIT_OK;
}
