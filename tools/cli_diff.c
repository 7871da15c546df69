/*
 * livetrack diff: the regression check for CI. Which leaks of NEW come
 * from call sites that BASE did not leak from?
 *
 * Sites are matched by their symbolized frames (report_site_key), never
 * by address: addresses move with every run (ASLR) and every rebuild.
 * Growth at a known site is shown but does not fail the check: counts
 * often depend on input sizes, and CI wants to catch new leaks, not noise.
 *
 * Frames name source files by absolute path, and the two reports often
 * come from two checkouts of the code in different directories (CI jobs
 * in different workspaces). diff finds the one directory of BASE that is
 * another in NEW from the files themselves (see infer_path_map) or takes
 * it from --source-root, and compares paths with it moved.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_file.h"

static void usage(void)
{
    fputs("usage: livetrack diff BASE.json NEW.json [--ignore-lines] [--source-root BASE_DIR=NEW_DIR]\n"
          "\n"
          "Lists the leaks in NEW whose creation call site has no leaks in BASE: a regression\n"
          "check for CI (save BASE from the main branch, NEW from the change). Call sites are\n"
          "compared by their symbolized frames (function, file, line), not by address, so two\n"
          "runs of the same program match. Sites that leak more than in BASE are shown too,\n"
          "but only new sites fail the check. Suppressed leaks are ignored.\n"
          "\n"
          "When the reports share no source file outside /usr and /lib (the code was checked\n"
          "out or built in another directory for each), the directory of BASE's files that\n"
          "turned into another one in NEW is found from the files, and the paths are compared\n"
          "with it moved: /ws1/src/a.c in BASE is /ws2/src/a.c in NEW. diff says so when it does.\n"
          "\n"
          "Options:\n"
          "  --ignore-lines  compare functions and files only, so that edits which only move\n"
          "                  code to other lines do not make every site new\n"
          "  --source-root BASE_DIR=NEW_DIR\n"
          "                  BASE's files under BASE_DIR are NEW's under NEW_DIR, instead of\n"
          "                  the directory diff would find (for reports that share files);\n"
          "                  /usr/src/app works, but under / or /usr itself the files in\n"
          "                  /usr and /lib stay where they are;\n"
          "                  split at the first '=' that leaves files of BASE under BASE_DIR\n"
          "                  and files of NEW under NEW_DIR, with a warning and no effect\n"
          "                  when none does\n"
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
static site_entry *collect(const report_file *report, int ignore_lines, const report_path_map *map,
                           size_t *count_out)
{
    const json_value *sites = json_get(report->root, "sites");
    size_t count = 0;
    site_entry *entries = cli_alloc((json_count(sites) + 1) * sizeof *entries);
    for (size_t i = 0; i < json_count(sites); i++) {
        const json_value *site = json_at(sites, i);
        int64_t objects = json_int(json_get(site, "objects"), 0);
        if (json_bool(json_get(site, "suppressed"), 0) || objects <= 0)
            continue;
        entries[count].key = report_site_key(site, ignore_lines, map);
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

/* ---- the same sources in another directory ---- */

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int compare_basenames(const void *a, const void *b)
{
    return strcmp(units_basename(*(const char *const *)a), units_basename(*(const char *const *)b));
}

/* The index of the first of `files` (sorted by `compare`) not before
 * `*key`: where the run of those equal to it, or following it, starts. */
static size_t first_not_before(const char **files, size_t count, const char *const *key,
                               int (*compare)(const void *, const void *))
{
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (compare(&files[middle], key) < 0)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

/* The movable files (with `every_absolute`: the absolute files) of every
 * site's frames, each once, sorted. Suppressed sites count too: the more
 * of the program's files, the surer the match. */
static const char **source_files(const report_file *report, int every_absolute, size_t *count_out)
{
    const json_value *sites = json_get(report->root, "sites");
    size_t count = 0, capacity = 16;
    const char **files = cli_alloc(capacity * sizeof *files);
    for (size_t i = 0; i < json_count(sites); i++) {
        const json_value *frames = json_get(json_at(sites, i), "frames");
        for (size_t f = 0; f < json_count(frames); f++) {
            const char *file = json_str(json_get(json_at(frames, f), "file"), NULL);
            if (!file || !(every_absolute ? file[0] == '/' : report_movable_file(file)))
                continue;
            if (count == capacity) {
                capacity *= 2;
                files = cli_realloc(files, capacity, sizeof *files);
            }
            files[count++] = file;
        }
    }
    qsort(files, count, sizeof *files, compare_strings);
    size_t unique = 0;
    for (size_t i = 0; i < count; i++)
        if (!unique || strcmp(files[unique - 1], files[i]))
            files[unique++] = files[i];
    *count_out = unique;
    return files;
}

/* A directory of BASE's files and the one NEW has for it: the leading
 * parts of two paths, each up to and with a '/'. */
typedef struct dir_pair {
    const char *from, *to;
    size_t from_length, to_length;
} dir_pair;

static int compare_parts(const char *a, size_t a_length, const char *b, size_t b_length)
{
    int order = memcmp(a, b, a_length < b_length ? a_length : b_length);
    return order ? order : a_length < b_length ? -1 : a_length > b_length;
}

static int compare_pairs(const void *a, const void *b)
{
    const dir_pair *x = a, *y = b;
    int order = compare_parts(x->from, x->from_length, y->from, y->from_length);
    return order ? order : compare_parts(x->to, x->to_length, y->to, y->to_length);
}

/* Two different paths of one file name, cut where they stop being alike:
 * before the longest run of whole directory names they end with.
 * /ws1/src/a.c and /ws2/src/a.c give /ws1/ and /ws2/.
 *
 * The root is never one side: /app/a.c and /builds/grp/app/a.c give /app/
 * and /builds/grp/app/, not / and /builds/grp/. Both move the checkout's
 * files alike, but "/" would claim that every absolute file of BASE moved
 * (an SDK in /opt too) and names no directory of the checkout in the
 * line diff prints. Returns 0 when no directory is left to cut before
 * (/a.c and /x/a.c): that pair names no candidate. */
static int split_at_shared_tail(const char *a, const char *b, dir_pair *out)
{
    size_t i = strlen(a), j = strlen(b);
    while (i && j && a[i - 1] == b[j - 1]) {
        i--;
        j--;
    }
    /* a + i reads as b + j; the directories end at the first '/' in it, which
     * there is: the names are alike and both paths start with '/'. */
    size_t skip = (size_t)(strchr(a + i, '/') - (a + i)) + 1;
    if (i + skip == 1 || j + skip == 1) {
        /* one side is "/": take the next directory, the same on both sides */
        const char *next = strchr(a + i + skip, '/');
        if (!next)
            return 0;
        skip = (size_t)(next - (a + i)) + 1;
    }
    *out = (dir_pair){a, b, i + skip, j + skip};
    return 1;
}

/* How many of BASE's files are NEW's once moved by `pair`. */
static size_t files_matched(const dir_pair *pair, const char **base_files, size_t base_count,
                            const char **new_files, size_t new_count)
{
    size_t matched = 0;
    for (size_t i = 0; i < base_count; i++) {
        const char *file = base_files[i];
        if (strncmp(file, pair->from, pair->from_length))
            continue;
        size_t rest = strlen(file) - pair->from_length;
        char *moved = cli_alloc(pair->to_length + rest + 1);
        memcpy(moved, pair->to, pair->to_length);
        memcpy(moved + pair->to_length, file + pair->from_length, rest + 1);
        matched += bsearch(&moved, new_files, new_count, sizeof *new_files, compare_strings) != NULL;
        free(moved);
    }
    return matched;
}

/* The directory BASE's sources were in and the one they are in in NEW,
 * when the reports come from two checkouts: no movable file is in both
 * (two runs of one checkout share at least main's file), and a file name
 * is in both under different directories. Each pair of such paths names
 * a candidate (their parts before the directories they end alike); the
 * one that makes the most of BASE's files NEW's wins, the first in sort
 * order among equals. Returns 0 (nothing to move) otherwise. */
static int infer_path_map(const report_file *base, const report_file *new_report, report_path_map *out)
{
    size_t base_count, new_count;
    const char **base_files = source_files(base, 0, &base_count);
    const char **new_files = source_files(new_report, 0, &new_count);
    int shared = 0;
    for (size_t b = 0, n = 0; b < base_count && n < new_count && !shared;) {
        int order = strcmp(base_files[b], new_files[n]);
        shared = !order;
        b += order <= 0;
        n += order >= 0;
    }
    size_t pair_count = 0;
    dir_pair *pairs = NULL;
    const char **new_by_name = NULL;
    if (!shared && base_count && new_count) {
        new_by_name = cli_alloc(new_count * sizeof *new_by_name);
        memcpy(new_by_name, new_files, new_count * sizeof *new_by_name);
        qsort(new_by_name, new_count, sizeof *new_by_name, compare_basenames);
        size_t capacity = 16;
        pairs = cli_alloc(capacity * sizeof *pairs);
        for (size_t b = 0; b < base_count; b++) {
            /* NEW's files with this name */
            size_t first = first_not_before(new_by_name, new_count, &base_files[b], compare_basenames);
            for (size_t n = first; n < new_count && !compare_basenames(&new_by_name[n], &base_files[b]); n++) {
                if (pair_count == capacity) {
                    capacity *= 2;
                    pairs = cli_realloc(pairs, capacity, sizeof *pairs);
                }
                pair_count += split_at_shared_tail(base_files[b], new_by_name[n], &pairs[pair_count]);
            }
        }
        qsort(pairs, pair_count, sizeof *pairs, compare_pairs);
    }
    size_t best = 0, best_matched = 0;
    for (size_t i = 0; i < pair_count; i++) {
        if (i && !compare_pairs(&pairs[i - 1], &pairs[i]))
            continue; /* counted already */
        size_t matched = files_matched(&pairs[i], base_files, base_count, new_files, new_count);
        if (matched > best_matched) {
            best = i;
            best_matched = matched;
        }
    }
    if (best_matched) {
        char *from = cli_alloc(pairs[best].from_length + 1), *to = cli_alloc(pairs[best].to_length + 1);
        memcpy(from, pairs[best].from, pairs[best].from_length);
        from[pairs[best].from_length] = '\0';
        memcpy(to, pairs[best].to, pairs[best].to_length);
        to[pairs[best].to_length] = '\0';
        out->from = from;
        out->to = to;
    }
    free(pairs);
    free(new_by_name);
    free(base_files);
    free(new_files);
    return best_matched > 0;
}

/* The first '=' of --source-root's value at or after `from` with a
 * directory on each side of it; NULL when there is none. */
static const char *next_split(const char *value, const char *from)
{
    for (const char *equals = strchr(from, '='); equals; equals = strchr(equals + 1, '='))
        if (equals != value && equals[1])
            return equals;
    return NULL;
}

/* A part of --source-root's value as a directory: made to end in '/' so
 * that it never takes a longer name that starts like it for its own. */
static char *directory_of(const char *part, size_t length)
{
    char *dir = cli_alloc(length + 2);
    memcpy(dir, part, length);
    if (dir[length - 1] != '/')
        dir[length++] = '/';
    dir[length] = '\0';
    return dir;
}

/* Whether `map` moves one of `files` (sorted, absolute): the files under
 * map->from follow one another from the first not before it in sort order. */
static int moves_a_file(const report_path_map *map, const char **files, size_t count)
{
    size_t length = strlen(map->from);
    for (size_t i = first_not_before(files, count, &map->from, compare_strings); i < count && !strncmp(files[i], map->from, length); i++)
        if (report_path_map_moves(map, files[i]))
            return 1;
    return 0;
}

/* Whether one of `files` (sorted, absolute) is under `dir` (ending in '/'). */
static int holds_a_file(const char *dir, const char **files, size_t count)
{
    size_t i = first_not_before(files, count, &dir, compare_strings);
    return i < count && !strncmp(files[i], dir, strlen(dir));
}

/* What parse_source_root found of --source-root's value. */
typedef enum source_root_split {
    SOURCE_ROOT_TAKEN,
    SOURCE_ROOT_NO_BASE_FILE, /* no split leaves a BASE_DIR that moves a file of BASE */
    SOURCE_ROOT_NO_NEW_FILE,  /* some do, but NEW has no file under their NEW_DIR */
    SOURCE_ROOT_NEW_RELATIVE, /* ... as their NEW_DIR is relative */
} source_root_split;

/* --source-root BASE_DIR=NEW_DIR. Either directory may hold a '=' (CI
 * paths such as Jenkins' matrix axes "label=linux" do), so the value is
 * split at the first '=' that leaves a BASE_DIR holding a file of BASE
 * that it moves (report_path_map: any absolute file, but only movable
 * ones under "/" or a system directory itself) and an absolute NEW_DIR
 * holding a file of NEW (when NEW has any). Where none does the option would move nothing, or move
 * BASE's files where NEW has none (a typo, a relative NEW_DIR: report
 * files are absolute), and either reads as a list of false "new" sites. */
static source_root_split parse_source_root(const char *value, const report_file *base, const report_file *new_report,
                                           report_path_map *out, char **rejected_new_dir)
{
    *rejected_new_dir = NULL;
    size_t base_count, new_count;
    const char **base_files = source_files(base, 1, &base_count);
    const char **new_files = source_files(new_report, 1, &new_count);
    source_root_split found = SOURCE_ROOT_NO_BASE_FILE;
    for (const char *equals = next_split(value, value); equals && found != SOURCE_ROOT_TAKEN;
         equals = next_split(value, equals + 1)) {
        char *from = directory_of(value, (size_t)(equals - value));
        report_path_map candidate = {from, NULL, 1};
        if (!moves_a_file(&candidate, base_files, base_count)) {
            free(from);
            continue;
        }
        char *to = directory_of(equals + 1, strlen(equals + 1));
        /* A NEW without files (no leak site left) has none to check, and
         * no key of it that the map could change. */
        if (to[0] != '/' || (new_count && !holds_a_file(to, new_files, new_count))) {
            found = to[0] == '/' ? SOURCE_ROOT_NO_NEW_FILE : SOURCE_ROOT_NEW_RELATIVE;
            free(from);
            free(*rejected_new_dir);
            *rejected_new_dir = to;
            continue;
        }
        out->from = from;
        out->to = to;
        out->named = 1;
        found = SOURCE_ROOT_TAKEN;
    }
    free(base_files);
    free(new_files);
    return found;
}

int cli_diff(int argc, char **argv)
{
    cli_parser parser;
    cli_parser_init(&parser, "diff", argc - 1, argv + 1);
    const char *paths[2] = {NULL, NULL}, *source_root = NULL;
    int ignore_lines = 0, given = 0;
    while (cli_more(&parser)) {
        if (cli_flag(&parser, "help", 'h')) {
            usage();
            return CLI_EXIT_OK;
        } else if (cli_flag(&parser, "ignore-lines", 0)) {
            ignore_lines = 1;
        } else if (cli_value(&parser, "source-root", 0, &source_root)) {
            continue;
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
    if (source_root && !next_split(source_root, source_root))
        cli_fail("--source-root wants BASE_DIR=NEW_DIR, not '%s'", source_root);

    report_file base, new_report;
    report_load(paths[0], &base);
    report_load(paths[1], &new_report);
    if (base.leaks_unknown || new_report.leaks_unknown)
        cli_fail("cannot compare %s: its leaks are not known", base.leaks_unknown ? paths[0] : paths[1]);
    report_path_map path_map = {NULL, NULL, 0};
    char *rejected_new_dir = NULL;
    source_root_split split = source_root ? parse_source_root(source_root, &base, &new_report, &path_map,
                                                              &rejected_new_dir)
                                          : SOURCE_ROOT_NO_BASE_FILE;
    int path_moved = source_root && split == SOURCE_ROOT_TAKEN;
    if (source_root && split == SOURCE_ROOT_NO_BASE_FILE)
        cli_warn("warning: --source-root %s: no source file of %s is under its BASE_DIR (under / or /usr itself: "
                 "none outside /usr and /lib); comparing as without the option", source_root, paths[0]);
    else if (source_root && split == SOURCE_ROOT_NO_NEW_FILE)
        cli_warn("warning: --source-root %s: no source file of %s is under its NEW_DIR %s; comparing as without "
                 "the option", source_root, paths[1], rejected_new_dir);
    else if (source_root && split == SOURCE_ROOT_NEW_RELATIVE)
        cli_warn("warning: --source-root %s: its NEW_DIR %s is relative, where the files of %s are absolute; "
                 "comparing as without the option", source_root, rejected_new_dir, paths[1]);
    free(rejected_new_dir);
    if (!path_moved)
        path_moved = infer_path_map(&base, &new_report, &path_map);
    size_t base_count, new_count;
    site_entry *base_sites = collect(&base, ignore_lines, path_moved ? &path_map : NULL, &base_count);
    site_entry *new_sites = collect(&new_report, ignore_lines, NULL, &new_count);

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
    if (path_moved)
        printf("  files under %s in %s compared as under %s in %s\n", path_map.from, paths[0], path_map.to,
               paths[1]);

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
    free((void *)path_map.from);
    free((void *)path_map.to);
    free_entries(base_sites, base_count);
    free_entries(new_sites, new_count);
    report_free(&base);
    report_free(&new_report);
    if (fflush(stdout))
        cli_fail("writing to stdout failed");
    return added_count ? CLI_EXIT_FOUND : CLI_EXIT_OK;
}
