/*
 * Loading a saved report and naming what is in it (see report_file.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_file.h"

static int is_count(const json_value *value)
{
    return value && value->kind == JSON_NUMBER &&
           (value->is_unsigned || (value->is_integer && value->integer >= 0));
}

/* A site's objects are read as int64_t by every command: a number above
 * its range is no real count (bytes may use all 64 bits, and the
 * summary's sum may pass 2^63), and read as 0 it made diff pass. */
static int is_object_count(const json_value *value)
{
    return value && value->kind == JSON_NUMBER && value->is_integer && value->integer >= 0;
}

/* A site's kinds, when given: each with counts (pprof makes a sample of
 * each, and a negative one read as a count of objects). */
static int types_counted(const json_value *types)
{
    for (size_t i = 0; i < json_count(types); i++)
        if (!is_object_count(json_get(json_at(types, i), "objects")) ||
            !is_count(json_get(json_at(types, i), "bytes")))
            return 0;
    return 1;
}

/* A time in milliseconds, when given: finite and small enough that a
 * trace's microseconds and pprof's nanoseconds stay finite and in range
 * (1e15 ms is ~31,700 years; the CSV reader takes the same bound). */
static int is_time_or_absent(const json_value *value)
{
    return !value || value->kind == JSON_NULL ||
           (value->kind == JSON_NUMBER && isfinite(value->number) && fabs(value->number) <= 1e15);
}

/* The first record of `array` whose "time_ms" is no time, or 0. */
static size_t bad_time_in(const json_value *array)
{
    for (size_t i = 0; i < json_count(array); i++)
        if (!is_time_or_absent(json_get(json_at(array, i), "time_ms")))
            return i + 1;
    return 0;
}

/* Says in `why` which site of `sites` has a count that is no count;
 * 0 when all are good. */
static int bad_site_in(const json_value *sites, const char *label, char *why, size_t size)
{
    for (size_t i = 0; i < json_count(sites); i++) {
        const json_value *site = json_at(sites, i);
        const char *field = !site || site->kind != JSON_OBJECT           ? NULL
                            : !is_object_count(json_get(site, "objects")) ? "objects"
                            : !is_count(json_get(site, "bytes"))          ? "bytes"
                            : !types_counted(json_get(site, "types"))     ? "types"
                                                                          : "";
        if (!field)
            snprintf(why, size, "%s %zu is not an object", label, i + 1);
        else if (!strcmp(field, "types"))
            snprintf(why, size, "%s %zu: a type's \"objects\" or \"bytes\" is not a count", label, i + 1);
        else if (*field)
            snprintf(why, size, "%s %zu: \"%s\" is missing or not a count", label, i + 1, field);
        else
            continue;
        return 1;
    }
    return 0;
}

/* What every command reads must be there and of its kind: a damaged file
 * must not pass for a report without leaks (diff exiting 0 in CI). NULL
 * when it is well formed, else what is wrong. */
static const char *malformed(const json_value *root, char *why, size_t size)
{
    const json_value *summary = json_get(root, "summary"), *sites = json_get(root, "sites");
    if (!summary || summary->kind != JSON_OBJECT)
        return "\"summary\" is missing or not an object";
    if (!is_count(json_get(summary, "leaked_objects"))) /* a sum: may pass 2^63 */
        return "\"summary\".\"leaked_objects\" is missing or not a count";
    if (!sites || sites->kind != JSON_ARRAY)
        return "\"sites\" is missing or not an array";
    if (bad_site_in(sites, "site", why, size))
        return why;
    /* The peak's sites are counted as the leaks' are (pprof --set peak,
     * report --peak): a negative count must not become 2^64 - 5. */
    const json_value *peak_sites = json_path(root, "peak.sites");
    if (peak_sites && peak_sites->kind != JSON_NULL) {
        if (peak_sites->kind != JSON_ARRAY)
            return "\"peak\".\"sites\" is not an array";
        if (bad_site_in(peak_sites, "peak site", why, size))
            return why;
    }
    if (!is_time_or_absent(json_path(root, "process.time_ms")))
        return "\"process\".\"time_ms\" is not a time";
    if (!is_time_or_absent(json_path(root, "peak.time_ms")))
        return "\"peak\".\"time_ms\" is not a time";
    static const char *const timed[] = {"objects", "misuse"};
    for (size_t k = 0; k < sizeof timed / sizeof timed[0]; k++) {
        size_t bad = bad_time_in(json_get(root, timed[k]));
        if (bad) {
            snprintf(why, size, "%s %zu: \"time_ms\" is not a time", timed[k], bad);
            return why;
        }
    }
    return NULL;
}

/* Every string of the report, made safe to print: its names and messages
 * reach terminals (report, diff) and a report may come from anywhere, so
 * an escape sequence inside a function name must not drive the terminal
 * (cli_make_printable). The length stays, so the tree's lengths hold.
 * The parser bounds the nesting (JSON_MAX_DEPTH), which bounds this
 * recursion. */
static void make_printable(const json_value *value)
{
    if (!value)
        return;
    if (value->kind == JSON_ARRAY || value->kind == JSON_OBJECT) {
        for (size_t i = 0; i < value->count; i++)
            make_printable(&value->items[i]);
        return;
    }
    if (value->kind != JSON_STRING)
        return;
    /* The arena the parser allocated is writable; only readers get it const. */
    cli_make_printable((char *)(uintptr_t)value->string, value->length);
}

/* Checks the document just parsed into `out` (NULL: `error` says why). */
static void report_check(const char *path, report_file *out, const char *error)
{
    if (!out->document)
        cli_fail("cannot read %s: %s", path, error);
    out->root = json_root(out->document);
    if (json_may_hold_controls(out->document))
        make_printable(out->root);
    const char *schema = json_str(json_get(out->root, "schema"), NULL);
    if (!schema || strcmp(schema, REPORT_SCHEMA)) {
        json_free(out->document);
        cli_fail("%s is not a livetrack JSON report (no \"schema\": \"%s\"; write one with "
                 "'livetrack run --json FILE' or LIVETRACK_JSON=FILE)",
                 path, REPORT_SCHEMA);
    }
    char why[128];
    const char *problem = malformed(out->root, why, sizeof why);
    if (problem) {
        json_free(out->document);
        cli_fail("%s is not a whole livetrack JSON report: %s", path, problem);
    }
    /* The unsuppressed sites are the leaks the summary counts. */
    uint64_t listed = 0;
    const json_value *sites = json_get(out->root, "sites");
    for (size_t i = 0; i < json_count(sites); i++)
        if (!json_bool(json_get(json_at(sites, i), "suppressed"), 0))
            listed = cli_add_saturated(listed, json_u64(json_get(json_at(sites, i), "objects"), 0));
    uint64_t leaked = json_u64(json_path(out->root, "summary.leaked_objects"), 0);
    if (listed != leaked)
        cli_warn("%s: its sites list %" PRIu64 " leaked objects where its summary counts %" PRIu64
                 "; the file may have been edited or cut",
                 path, listed, leaked);
    /* livetrack had no memory for its report: the leak counts are not 0,
     * they are not known. */
    out->leaks_unknown = !json_bool(json_path(out->root, "summary.leaks_known"), 1);
    if (out->leaks_unknown)
        cli_warn("%s: which of its %" PRIu64 " live objects leaked is not known (livetrack ran out of memory for "
                 "the report)",
                 path, json_u64(json_path(out->root, "summary.live_objects"), 0));
    int64_t version = json_int(json_get(out->root, "version"), 0);
    if (version > REPORT_VERSION)
        cli_warn("%s: report version %" PRId64 " is newer than this livetrack reads (%d); reading what it knows",
                 path, version, REPORT_VERSION);
}

/* The report in `text`, also where the program's own output comes first:
 * LIVETRACK_JSON=/dev/stdout (or `livetrack run --json /dev/stdout`) with
 * `./app >out.txt` writes the document after the program's lines. A text
 * that starts with '{' (after white space) is parsed as it is, so broken
 * JSON gets the parser's own complaint. Else each line that starts with
 * '{' is tried in turn until one holds the whole rest of the text as one
 * document: a line of the program's own that starts with '{' ("{progress}
 * 50%", a JSON log line) is followed by more text, which no whole document
 * is. At most one line can: every later line that starts with '{' lies
 * inside that document (no string holds a raw newline), so what follows
 * it closes more than it opens. The failure kept is the last line's, the
 * start of a report cut short. NULL, `error` set, when none parses. */
static json_document *parse_report_text(const char *text, size_t length, char *error, size_t error_size)
{
    size_t first = 0;
    while (first < length &&
           (text[first] == ' ' || text[first] == '\t' || text[first] == '\r' || text[first] == '\n'))
        first++;
    if (first == length || text[first] == '{')
        return json_parse_text(text, length, error, error_size);
    json_document *document = NULL;
    int tried = 0;
    size_t line = 1;
    for (size_t at = 0; at < length && !document; line++) {
        if (text[at] == '{') {
            char why[192];
            tried = 1;
            document = json_parse_text(text + at, length - at, why, sizeof why);
            if (!document)
                snprintf(error, error_size,
                         "%s (counted from the file's line %zu, where its JSON starts; the lines before it are "
                         "taken for the program's output)",
                         why, line);
        }
        const char *newline = memchr(text + at, '\n', length - at);
        if (!newline)
            break;
        at = (size_t)(newline - text) + 1;
    }
    if (!tried)
        snprintf(error, error_size, "not valid JSON: no line of it starts with '{' (the program's output alone, "
                                    "without its report?)");
    return document;
}

/* Loads the text json_read_file or json_read_stream read into `out`
 * (NULL: `error` says why) and checks it. */
static void report_load_text(const char *path, report_file *out, char *text, size_t length, char *error,
                             size_t error_size)
{
    memset(out, 0, sizeof *out);
    out->path = path;
    out->document = text ? parse_report_text(text, length, error, error_size) : NULL;
    free(text);
    report_check(path, out, error);
}

void report_load(const char *path, report_file *out)
{
    char error[384];
    size_t length = 0;
    char *text = json_read_file(path, &length, error, sizeof error);
    report_load_text(path, out, text, length, error, sizeof error);
}

void report_load_stream(FILE *in, const char *path, report_file *out)
{
    char error[384];
    size_t length = 0;
    char *text = json_read_stream(in, &length, error, sizeof error);
    report_load_text(path, out, text, length, error, sizeof error);
}

void report_free(report_file *report)
{
    json_free(report->document);
    report->document = NULL;
    report->root = NULL;
}

size_t report_frame_text(const json_value *frame, char *out, size_t size)
{
    const char *address = json_str(json_get(frame, "address"), NULL);
    const char *function = json_str(json_get(frame, "function"), NULL);
    const char *file = json_str(json_get(frame, "file"), NULL);
    const char *module = json_str(json_get(frame, "module"), NULL);
    const char *offset = json_str(json_get(frame, "offset"), NULL);
    int64_t line = json_int(json_get(frame, "line"), 0);
    int64_t column = json_int(json_get(frame, "column"), 0);
    int inlined = json_bool(json_get(frame, "inlined"), 0);

    size_t used = 0;
    /* Counts on once out is full, to return the whole length. */
#define APPEND(...)                                                                              \
    do {                                                                                         \
        int wrote_ = used < size ? snprintf(out + used, size - used, __VA_ARGS__)                \
                                 : snprintf(NULL, 0, __VA_ARGS__);                               \
        used += wrote_ > 0 ? (size_t)wrote_ : 0;                                                 \
    } while (0)
    if (size)
        out[0] = '\0';
    /* As the exit report prints a frame (layer/core/frames.c), so the two
     * read alike: module+offset even when the file is known (addr2line
     * wants them), "[inlined]" last. Inlined frames share the address of
     * the frame they were inlined into, as in AddressSanitizer's reports. */
    if (address)
        APPEND("%s in ", address);
    APPEND("%s", function ? function : "??");
    if (file) {
        APPEND(" %s", file);
        if (line > 0)
            APPEND(":%" PRId64, line);
        if (line > 0 && column > 0)
            APPEND(":%" PRId64, column);
    }
    if (module)
        APPEND(" (%s%s%s)", module, offset ? "+" : "", offset ? offset : "");
    if (inlined)
        APPEND(" [inlined]");
#undef APPEND
    return used;
}

char *report_frame_string(const json_value *frame)
{
    size_t length = report_frame_text(frame, NULL, 0);
    char *text = cli_alloc(length + 1);
    report_frame_text(frame, text, length + 1);
    return text;
}

int report_call_sites_off(const json_value *root)
{
    const json_value *depth = json_get(json_get(root, "settings"), "stack_depth");
    return depth && depth->kind == JSON_NUMBER && json_int(depth, 1) == 0;
}

const char *report_no_stack_text(const json_value *root)
{
    return report_call_sites_off(root) ? "(no stack: run with --stack-depth above 0 to see call sites)"
                                       : "(call stack not recorded)";
}

void report_print_frames(FILE *out, const json_value *root, const json_value *frames, const char *indent)
{
    size_t count = json_count(frames);
    if (!count) {
        fprintf(out, "%s%s\n", indent, report_no_stack_text(root));
        return;
    }
    for (size_t i = 0; i < count; i++) {
        char *text = report_frame_string(json_at(frames, i));
        fprintf(out, "%s#%zu %s\n", indent, i, text);
        free(text);
    }
}

void report_site_label(const json_value *site, char *out, size_t size)
{
    const json_value *frames = json_get(site, "frames");
    const json_value *frame = json_at(frames, 0);
    if (!frame) {
        char types[256];
        report_site_types(site, types, sizeof types);
        snprintf(out, size, "(no stack) %s", types);
        return;
    }
    const char *function = json_str(json_get(frame, "function"), NULL);
    const char *file = json_str(json_get(frame, "file"), NULL);
    int64_t line = json_int(json_get(frame, "line"), 0);
    if (file && line > 0)
        snprintf(out, size, "%s (%s:%" PRId64 ")", function ? function : "??", units_basename(file), line);
    else if (file)
        snprintf(out, size, "%s (%s)", function ? function : "??", units_basename(file));
    else
        snprintf(out, size, "%s (%s+%s)", function ? function : "??",
                 units_basename(json_str(json_get(frame, "module"), "?")),
                 json_str(json_get(frame, "offset"), json_str(json_get(frame, "address"), "?")));
}

void report_site_types(const json_value *site, char *out, size_t size)
{
    const json_value *types = json_get(site, "types");
    size_t used = 0;
    if (size)
        out[0] = '\0';
    for (size_t i = 0; i < json_count(types) && used < size; i++) {
        const json_value *type = json_at(types, i);
        int wrote = snprintf(out + used, size - used, "%s%s x%" PRId64, i ? ", " : "",
                             json_str(json_get(type, "type"), "?"), json_int(json_get(type, "objects"), 0));
        used += wrote > 0 ? (size_t)wrote : 0;
    }
}

static const char *const system_dirs[] = {"/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/"};

int report_movable_file(const char *file)
{
    if (file[0] != '/')
        return 0;
    for (size_t i = 0; i < sizeof system_dirs / sizeof *system_dirs; i++)
        if (!strncmp(file, system_dirs[i], strlen(system_dirs[i])))
            return 0;
    return 1;
}

int report_system_dir_or_above(const char *dir)
{
    /* `dir` ends in '/': it is one of them, or above one, when one starts with it */
    for (size_t i = 0; i < sizeof system_dirs / sizeof *system_dirs; i++)
        if (!strncmp(system_dirs[i], dir, strlen(dir)))
            return 1;
    return 0;
}

int report_path_map_moves(const report_path_map *map, const char *file)
{
    if (file[0] != '/' || strncmp(file, map->from, strlen(map->from)))
        return 0;
    /* A directory the user named below the system's moves all its files;
     * a guess, the root or /usr itself would take installed headers along. */
    return (map->named && !report_system_dir_or_above(map->from)) || report_movable_file(file);
}

char *report_site_key(const json_value *site, int ignore_lines, const report_path_map *map)
{
    text_buffer key = {NULL, 0, 0};
    text_buffer_add(&key, "");
    const json_value *frames = json_get(site, "frames");
    char piece[64];
    for (size_t i = 0; i < json_count(frames); i++) {
        const json_value *frame = json_at(frames, i);
        const char *function = json_str(json_get(frame, "function"), NULL);
        const char *file = json_str(json_get(frame, "file"), NULL);
        if (function || file) {
            text_buffer_add(&key, function ? function : "??");
            text_buffer_add(&key, "|");
            if (map && file && report_path_map_moves(map, file)) {
                text_buffer_add(&key, map->to);
                text_buffer_add(&key, file + strlen(map->from));
            } else {
                text_buffer_add(&key, file ? file : "");
            }
            if (!ignore_lines) {
                snprintf(piece, sizeof piece, "|%" PRId64, json_int(json_get(frame, "line"), 0));
                text_buffer_add(&key, piece);
            }
        } else {
            /* No symbol: the module and the offset in it are still the
             * same from one run of the same binary to the next. */
            text_buffer_add(&key, units_basename(json_str(json_get(frame, "module"), "?")));
            text_buffer_add(&key, "+");
            text_buffer_add(&key, json_str(json_get(frame, "offset"), "?"));
        }
        text_buffer_add(&key, "\n");
    }
    if (!json_count(frames)) {
        const json_value *types = json_get(site, "types");
        text_buffer_add(&key, "(no stack)");
        for (size_t i = 0; i < json_count(types); i++) {
            text_buffer_add(&key, " ");
            text_buffer_add(&key, json_str(json_get(json_at(types, i), "api"), "?"));
            text_buffer_add(&key, "/");
            text_buffer_add(&key, json_str(json_get(json_at(types, i), "type"), "?"));
        }
    }
    return key.text;
}
