/*
 * livetrack pprof: a live set from a saved report as a pprof profile
 * (github.com/google/pprof, proto/profile.proto), so `go tool pprof`,
 * speedscope and other profile viewers draw leak sites as flame graphs.
 *
 * The profile is small enough to write by hand (protobuf.c). Each call
 * site becomes one sample per object type, with two values, objects
 * (count) and bytes (bytes), and the labels "api" and "type". Frames
 * that the report marks as inlined go into the location of the frame
 * they were inlined into, as pprof expects (innermost line first). The
 * frames are already symbolized, so every mapping says it has functions,
 * files and lines and pprof does not try to symbolize again.
 *
 * Files are gzip-compressed (the format's convention) through zlib; a
 * build without zlib writes the plain protobuf, which pprof reads too.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifdef LIVETRACK_HAVE_ZLIB
#include <zlib.h>
#endif

#include "cli.h"
#include "protobuf.h"
#include "report_file.h"
#include "string_map.h"

/* profile.proto field numbers */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12, PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2,
    MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILENAME = 5,
    MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
    MAPPING_HAS_INLINE_FRAMES = 10,
    LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4
};

#define MAX_STACK 256

static void usage(void)
{
    fputs("usage: livetrack pprof FILE.json [--set leak|peak] -o PROFILE.pb.gz\n"
          "\n"
          "Writes the objects of a saved report (livetrack run --json FILE) as a pprof profile,\n"
          "one sample per call site and object type, with two sample types: objects (count) and\n"
          "bytes (bytes), and the labels api and type. View it as a flame graph with\n"
          "  go tool pprof -http=: PROFILE.pb.gz     (-sample_index=bytes for bytes)\n"
          "or open it in https://www.speedscope.app.\n"
          "\n"
          "Options:\n"
          "  --set leak    the objects leaked at exit (the default; suppressed leaks left out)\n"
          "  --set peak    the objects live at the peak of live bytes\n"
          "  -o, --output FILE  where to write the profile (gzip-compressed); required\n"
          "  -h, --help    show this help\n",
          stdout);
}

typedef struct mapping {
    uint64_t id, start, limit;
    int64_t filename;
} mapping;

typedef struct builder {
    string_map strings, functions, locations, modules;
    uint64_t string_count, function_count, location_count;
    pb_buffer string_table, function_table, location_table, sample_table;
    mapping *mappings;
    size_t mapping_count;
    uint64_t samples;
} builder;

static int64_t intern(builder *b, const char *text)
{
    int added;
    uint64_t index = string_map_intern(&b->strings, text, b->string_count, &added);
    if (added) {
        pb_string_field(&b->string_table, PROFILE_STRING_TABLE, text);
        b->string_count++;
    }
    return (int64_t)index;
}

static uint64_t function_id(builder *b, const char *name, const char *file)
{
    size_t size = strlen(name) + strlen(file) + 2;
    char *key = cli_alloc(size); /* whole: a cut key would merge two functions */
    snprintf(key, size, "%s\x1f%s", name, file);
    int added;
    uint64_t id = string_map_intern(&b->functions, key, b->function_count + 1, &added);
    free(key);
    if (added) {
        pb_buffer function = {NULL, 0, 0};
        pb_varint_field(&function, FUNCTION_ID, id);
        pb_varint_field(&function, FUNCTION_NAME, (uint64_t)intern(b, name));
        pb_varint_field(&function, FUNCTION_SYSTEM_NAME, (uint64_t)intern(b, name));
        if (*file)
            pb_varint_field(&function, FUNCTION_FILENAME, (uint64_t)intern(b, file));
        pb_message_field(&b->function_table, PROFILE_FUNCTION, &function);
        pb_free(&function);
        b->function_count++;
    }
    return id;
}

/* The mapping of a module, widened to cover `address`. */
static uint64_t mapping_id(builder *b, const char *module, uint64_t address, uint64_t offset)
{
    int added;
    uint64_t index = string_map_intern(&b->modules, module, b->mapping_count, &added);
    if (added) {
        b->mappings = cli_realloc(b->mappings, b->mapping_count + 1, sizeof *b->mappings);
        mapping *m = &b->mappings[b->mapping_count++];
        m->id = b->mapping_count;
        m->start = address;
        m->limit = address + 1;
        m->filename = intern(b, module);
    }
    mapping *m = &b->mappings[index];
    uint64_t base = offset <= address ? address - offset : address;
    if (base < m->start)
        m->start = base;
    if (address + 1 > m->limit)
        m->limit = address + 1;
    return m->id;
}

/* The function name pprof shows for a frame: its symbol, or where it is
 * ("libfoo.so+0x1234") when it has none. */
/* The frame's function name, whole (free() it): names that differ only
 * past some length must not become one function. */
static char *frame_function(const json_value *frame)
{
    const char *function = json_str(json_get(frame, "function"), NULL);
    if (function)
        return cli_strdup(function);
    const char *module = units_basename(json_str(json_get(frame, "module"), "?"));
    const char *offset = json_str(json_get(frame, "offset"), json_str(json_get(frame, "address"), "?"));
    size_t size = strlen(module) + strlen(offset) + 2;
    char *text = cli_alloc(size);
    snprintf(text, size, "%s+%s", module, offset);
    return text;
}

/* The location of frames[first..last] (the inlined frames and the frame
 * they were inlined into); one id per distinct address and lines. */
static uint64_t location_id(builder *b, const json_value *frames, size_t first, size_t last)
{
    const json_value *outer = json_at(frames, last);
    const char *address_text = json_str(json_get(outer, "address"), "");
    /* The key holds every name whole: cut, two locations could merge. */
    text_buffer key = {NULL, 0, 0};
    text_buffer_add(&key, address_text);
    for (size_t i = first; i <= last; i++) {
        const json_value *frame = json_at(frames, i);
        char *function = frame_function(frame), line_text[32];
        snprintf(line_text, sizeof line_text, "\x1f%" PRId64, json_int(json_get(frame, "line"), 0));
        text_buffer_add(&key, "\x1f");
        text_buffer_add(&key, function);
        text_buffer_add(&key, "\x1f");
        text_buffer_add(&key, json_str(json_get(frame, "file"), ""));
        text_buffer_add(&key, line_text);
        free(function);
    }
    int added;
    uint64_t id = string_map_intern(&b->locations, key.text, b->location_count + 1, &added);
    free(key.text);
    if (!added)
        return id;
    b->location_count++;

    pb_buffer location = {NULL, 0, 0}, line = {NULL, 0, 0};
    pb_varint_field(&location, LOCATION_ID, id);
    uint64_t address = json_u64(json_get(outer, "address"), 0);
    const char *module = json_str(json_get(outer, "module"), NULL);
    if (module && address)
        pb_varint_field(&location, LOCATION_MAPPING_ID,
                        mapping_id(b, module, address, json_u64(json_get(outer, "offset"), 0)));
    if (address)
        pb_varint_field(&location, LOCATION_ADDRESS, address);
    for (size_t i = first; i <= last; i++) {
        const json_value *frame = json_at(frames, i);
        char *function = frame_function(frame);
        pb_reset(&line);
        pb_varint_field(&line, LINE_FUNCTION_ID, function_id(b, function, json_str(json_get(frame, "file"), "")));
        free(function);
        int64_t number = json_int(json_get(frame, "line"), 0);
        if (number > 0)
            pb_varint_field(&line, LINE_LINE, (uint64_t)number);
        pb_message_field(&location, LOCATION_LINE, &line);
    }
    pb_message_field(&b->location_table, PROFILE_LOCATION, &location);
    pb_free(&location);
    pb_free(&line);
    return id;
}

static void add_label(builder *b, pb_buffer *sample, const char *key, const char *value)
{
    pb_buffer label = {NULL, 0, 0};
    pb_varint_field(&label, LABEL_KEY, (uint64_t)intern(b, key));
    pb_varint_field(&label, LABEL_STR, (uint64_t)intern(b, value));
    pb_message_field(sample, SAMPLE_LABEL, &label);
    pb_free(&label);
}

static void add_sample(builder *b, const uint64_t *locations, size_t location_count, int64_t objects, uint64_t bytes,
                       const char *api, const char *type)
{
    pb_buffer sample = {NULL, 0, 0};
    /* pprof values are int64: a size past 2^63 (the report's are unsigned)
     * is drawn as the largest it can hold rather than as a negative one. */
    uint64_t values[2] = {(uint64_t)objects, bytes > INT64_MAX ? (uint64_t)INT64_MAX : bytes};
    if (location_count)
        pb_packed_field(&sample, SAMPLE_LOCATION_ID, locations, location_count);
    pb_packed_field(&sample, SAMPLE_VALUE, values, 2);
    if (api)
        add_label(b, &sample, "api", api);
    if (type)
        add_label(b, &sample, "type", type);
    pb_message_field(&b->sample_table, PROFILE_SAMPLE, &sample);
    pb_free(&sample);
    b->samples++;
}

static void add_site(builder *b, const json_value *site)
{
    const json_value *frames = json_get(site, "frames");
    uint64_t locations[MAX_STACK];
    size_t count = 0, frame_count = json_count(frames), first = 0;
    for (size_t i = 0; i < frame_count && count < MAX_STACK; i++) {
        /* An inlined frame belongs to the location of the next frame
         * that is not inlined. */
        if (json_bool(json_get(json_at(frames, i), "inlined"), 0) && i + 1 < frame_count)
            continue;
        locations[count++] = location_id(b, frames, first, i);
        first = i + 1;
    }
    const json_value *types = json_get(site, "types");
    if (!json_count(types)) {
        add_sample(b, locations, count, json_int(json_get(site, "objects"), 0), json_u64(json_get(site, "bytes"), 0),
                   NULL, NULL);
        return;
    }
    for (size_t i = 0; i < json_count(types); i++) {
        const json_value *type = json_at(types, i);
        add_sample(b, locations, count, json_int(json_get(type, "objects"), 0), json_u64(json_get(type, "bytes"), 0),
                   json_str(json_get(type, "api"), NULL), json_str(json_get(type, "type"), NULL));
    }
}

static void value_type(builder *b, pb_buffer *out, unsigned field, const char *type, const char *unit)
{
    pb_buffer message = {NULL, 0, 0};
    pb_varint_field(&message, VALUE_TYPE_TYPE, (uint64_t)intern(b, type));
    pb_varint_field(&message, VALUE_TYPE_UNIT, (uint64_t)intern(b, unit));
    pb_message_field(out, field, &message);
    pb_free(&message);
}

static void write_output(const pb_buffer *profile, const char *path)
{
    FILE *out = cli_open_output(path, 1);
#ifdef LIVETRACK_HAVE_ZLIB
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    /* 15 + 16: a gzip header and trailer around the deflate stream. */
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        cli_fail("cannot start gzip compression");
    unsigned char chunk[64 * 1024];
    stream.next_in = profile->data;
    stream.avail_in = (uInt)profile->size;
    int result;
    do {
        stream.next_out = chunk;
        stream.avail_out = sizeof chunk;
        result = deflate(&stream, Z_FINISH);
        if (result == Z_STREAM_ERROR)
            cli_fail("gzip compression failed");
        fwrite(chunk, 1, sizeof chunk - stream.avail_out, out);
    } while (result != Z_STREAM_END);
    deflateEnd(&stream);
#else
    fwrite(profile->data, 1, profile->size, out);
#endif
    cli_close_output(out, path);
}

int cli_pprof(int argc, char **argv)
{
    cli_parser parser;
    cli_parser_init(&parser, "pprof", argc - 1, argv + 1);
    const char *path = NULL, *output = NULL, *set = "leak";
    while (cli_more(&parser)) {
        if (cli_flag(&parser, "help", 'h')) {
            usage();
            return CLI_EXIT_OK;
        } else if (cli_value(&parser, "output", 'o', &output)) {
            continue;
        } else if (cli_value(&parser, "set", 0, &set)) {
            cli_check_choice("--set", set, (const char *const[]){"leak", "peak", NULL});
        } else if (cli_double_dash(&parser)) {
            continue;
        } else if (!path && cli_positional(&parser, &path)) {
            continue;
        } else {
            cli_unknown(&parser);
        }
    }
    if (!path)
        cli_fail("no report given (usage: livetrack pprof FILE.json [--set leak|peak] -o PROFILE.pb.gz)");
    if (!output)
        cli_fail("no output file (add -o PROFILE.pb.gz)");
    int peak = !strcmp(set, "peak");

    report_file report;
    report_load(path, &report);
    builder b;
    memset(&b, 0, sizeof b);
    intern(&b, ""); /* string_table[0] must be "" */

    const json_value *sites = peak ? json_path(report.root, "peak.sites") : json_get(report.root, "sites");
    uint64_t objects = 0, bytes = 0;
    for (size_t i = 0; i < json_count(sites); i++) {
        const json_value *site = json_at(sites, i);
        if (json_bool(json_get(site, "suppressed"), 0) || json_int(json_get(site, "objects"), 0) <= 0)
            continue;
        add_site(&b, site);
        objects = cli_add_saturated(objects, (uint64_t)json_int(json_get(site, "objects"), 0)); /* > 0 */
        bytes = cli_add_saturated(bytes, json_u64(json_get(site, "bytes"), 0));
    }

    pb_buffer profile = {NULL, 0, 0};
    value_type(&b, &profile, PROFILE_SAMPLE_TYPE, "objects", "count");
    value_type(&b, &profile, PROFILE_SAMPLE_TYPE, "bytes", "bytes");
    /* Samples, locations, functions and strings were built as complete
     * fields of Profile: they are appended as they are. */
    pb_append(&profile, &b.sample_table);
    for (size_t i = 0; i < b.mapping_count; i++) {
        pb_buffer message = {NULL, 0, 0};
        pb_varint_field(&message, MAPPING_ID, b.mappings[i].id);
        pb_varint_field(&message, MAPPING_MEMORY_START, b.mappings[i].start);
        pb_varint_field(&message, MAPPING_MEMORY_LIMIT, b.mappings[i].limit);
        pb_varint_field(&message, MAPPING_FILENAME, (uint64_t)b.mappings[i].filename);
        pb_varint_field(&message, MAPPING_HAS_FUNCTIONS, 1);
        pb_varint_field(&message, MAPPING_HAS_FILENAMES, 1);
        pb_varint_field(&message, MAPPING_HAS_LINE_NUMBERS, 1);
        pb_varint_field(&message, MAPPING_HAS_INLINE_FRAMES, 1);
        pb_message_field(&profile, PROFILE_MAPPING, &message);
        pb_free(&message);
    }
    char comment[1024];
    const char *executable = json_str(json_path(report.root, "process.executable"), "?");
    snprintf(comment, sizeof comment, "livetrack %s: %s objects of %s (pid %" PRId64 ")", cli_version(),
             peak ? "peak live" : "leaked", executable, json_int(json_path(report.root, "process.pid"), 0));
    int64_t comment_index = intern(&b, comment);
    int64_t default_type = intern(&b, "objects");
    value_type(&b, &profile, PROFILE_PERIOD_TYPE, "objects", "count");
    pb_varint_field(&profile, PROFILE_PERIOD, 1);
    pb_varint_field(&profile, PROFILE_COMMENT, (uint64_t)comment_index);
    pb_varint_field(&profile, PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)default_type);
    double time_ms = json_num(json_path(report.root, "process.time_ms"), 0);
    if (time_ms > 0) /* at most ~584 years fit in the nanoseconds: converted beyond, the value is undefined */
        pb_varint_field(&profile, PROFILE_DURATION_NANOS, time_ms < 1.8e13 ? (uint64_t)(time_ms * 1e6) : UINT64_MAX);

    pb_append(&profile, &b.location_table);
    pb_append(&profile, &b.function_table);
    pb_append(&profile, &b.string_table);
    write_output(&profile, output);
    if (strcmp(output, "-")) {
        char size[32];
        units_bytes((double)bytes, size, sizeof size);
        fprintf(stderr, "livetrack pprof: wrote %s: %" PRIu64 " %s objects (%s) in %" PRIu64 " samples\n", output,
                objects, peak ? "peak live" : "leaked", size, b.samples);
    }

    pb_free(&profile);
    pb_free(&b.string_table);
    pb_free(&b.function_table);
    pb_free(&b.location_table);
    pb_free(&b.sample_table);
    string_map_free(&b.strings);
    string_map_free(&b.functions);
    string_map_free(&b.locations);
    string_map_free(&b.modules);
    free(b.mappings);
    report_free(&report);
    return CLI_EXIT_OK;
}
