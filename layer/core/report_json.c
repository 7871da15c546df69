/*
 * The JSON report, for tools and CI: one document, schema
 * "livetrack-report" version 1, described in docs/report-schema.md and
 * checked by docs/livetrack-report.schema.json.
 *
 * Rules the readers rely on: handles and addresses are hex strings (a
 * 64-bit value does not survive a JSON double); a string that is not known
 * is null, never missing; strings are valid UTF-8 (bytes that are not
 * become U+FFFD). Fields may be added within version 1, never renamed or
 * removed.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "core_internal.h"
#include "json_write.h"
#include "report_writers.h"

#define LT_JSON_MAX_FRAMES (4u * LT_MAX_STACK_DEPTH)

static const char *api_name(unsigned domain)
{
    return domain > LIVETRACK_DOMAIN_ANY && domain < LIVETRACK_DOMAIN_COUNT
               ? livetrack_domain_name((livetrack_domain)domain)
               : NULL;
}

/* ---- parts ---- */

static void put_frames(FILE *out, const livetrack_frame *frames, size_t count)
{
    putc_unlocked('[', out);
    for (size_t i = 0; i < count; i++) {
        const livetrack_frame *frame = &frames[i];
        fputs_unlocked(i ? ", {\"address\": " : "{\"address\": ", out);
        lt_json_hex(out, frame->address);
        fputs_unlocked(", \"function\": ", out);
        lt_json_string(out, frame->function);
        fputs_unlocked(", \"file\": ", out);
        lt_json_string(out, frame->file);
        fputs_unlocked(", \"line\": ", out);
        lt_json_optional_uint(out, frame->line);
        fputs_unlocked(", \"column\": ", out);
        lt_json_optional_uint(out, frame->column);
        fputs_unlocked(", \"module\": ", out);
        lt_json_string(out, frame->module);
        fputs_unlocked(", \"offset\": ", out);
        lt_json_hex(out, frame->module_offset);
        fputs_unlocked(", \"inlined\": ", out);
        lt_json_bool(out, frame->inlined);
        putc_unlocked('}', out);
    }
    putc_unlocked(']', out);
}

/* The misuse records' stacks, symbolized before the stream is locked:
 * symbolizing takes the symbol cache's lock, and dropping the stream's
 * lock meanwhile would let other threads' output into the document. Each
 * distinct stack is symbolized once; `ids` is sorted for lookup. */
typedef struct misuse_frames {
    livetrack_stack_id *ids;
    livetrack_frame **frames; /* NULL (shown as []) when out of memory */
    size_t *counts;
    size_t count;
} misuse_frames;

static int compare_stack_ids(const void *a, const void *b)
{
    livetrack_stack_id x = *(const livetrack_stack_id *)a, y = *(const livetrack_stack_id *)b;
    return x < y ? -1 : x > y;
}

static void symbolize_misuse_stacks(const lt_misuse_record *records, size_t record_count, misuse_frames *out)
{
    memset(out, 0, sizeof *out);
    if (!record_count)
        return;
    livetrack_stack_id *ids = lt_malloc(3 * record_count * sizeof *ids);
    if (!ids)
        return;
    size_t count = 0;
    for (size_t i = 0; i < record_count; i++) {
        const livetrack_stack_id stacks[3] = {records[i].call_stack, records[i].create_stack,
                                              records[i].release_stack};
        for (int s = 0; s < 3; s++)
            if (stacks[s])
                ids[count++] = stacks[s];
    }
    qsort(ids, count, sizeof *ids, compare_stack_ids);
    size_t unique = 0;
    for (size_t i = 0; i < count; i++)
        if (!unique || ids[unique - 1] != ids[i])
            ids[unique++] = ids[i];
    out->ids = ids;
    out->frames = unique ? lt_malloc(unique * sizeof *out->frames) : NULL;
    out->counts = unique ? lt_malloc(unique * sizeof *out->counts) : NULL;
    if (!out->frames || !out->counts)
        return; /* count stays 0: every stack shows as [] */
    livetrack_frame frames[LT_JSON_MAX_FRAMES];
    for (size_t i = 0; i < unique; i++) {
        size_t frame_count = livetrack_stack_symbolize(ids[i], frames, LT_JSON_MAX_FRAMES);
        if (frame_count > LT_JSON_MAX_FRAMES)
            frame_count = LT_JSON_MAX_FRAMES;
        out->frames[i] = frame_count ? lt_malloc(frame_count * sizeof *frames) : NULL;
        out->counts[i] = out->frames[i] ? frame_count : 0;
        if (out->frames[i])
            memcpy(out->frames[i], frames, frame_count * sizeof *frames);
    }
    out->count = unique;
}

static void free_misuse_stacks(misuse_frames *stacks)
{
    for (size_t i = 0; i < stacks->count; i++)
        lt_free(stacks->frames[i]);
    lt_free(stacks->frames);
    lt_free(stacks->counts);
    lt_free(stacks->ids);
}

/* The frames of a misuse record's stack, as symbolized beforehand. */
static void put_stack_frames(FILE *out, const misuse_frames *stacks, livetrack_stack_id stack)
{
    const livetrack_stack_id *found =
        stack && stacks->count ? bsearch(&stack, stacks->ids, stacks->count, sizeof stack, compare_stack_ids) : NULL;
    size_t index = found ? (size_t)(found - stacks->ids) : 0;
    put_frames(out, found ? stacks->frames[index] : NULL, found ? stacks->counts[index] : 0);
}

static void put_kind(FILE *out, const lt_report_kind *kind)
{
    fputs_unlocked("{\"api\": ", out);
    lt_json_string(out, api_name(kind->domain));
    fputs_unlocked(", \"type\": ", out);
    lt_json_string(out, livetrack_type_name((livetrack_domain)kind->domain, kind->type));
    fprintf(out, ", \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", kind->objects, kind->bytes);
}

static void put_kinds(FILE *out, const lt_report_kind *kinds, size_t count)
{
    putc_unlocked('[', out);
    for (size_t i = 0; i < count; i++) {
        if (i)
            fputs_unlocked(", ", out);
        put_kind(out, &kinds[i]);
    }
    putc_unlocked(']', out);
}

static void put_site_frames(FILE *out, lt_report_model *model, const lt_report_site *site)
{
    const livetrack_frame *frames = NULL;
    size_t count = model->call_sites ? lt_site_group_frames(&model->groups, site->group, &frames) : 0;
    put_frames(out, frames, count);
}

static void put_process(FILE *out)
{
    char executable[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    if (length > 0)
        executable[length] = '\0';
    fprintf(out, "  \"process\": {\"pid\": %ld, \"executable\": ", (long)getpid());
    lt_json_string(out, length > 0 ? executable : NULL);
    fputs_unlocked(", \"time_ms\": ", out);
    lt_json_ms(out, lt_ticks_to_ns(lt_ticks()));
    fputs_unlocked("},\n", out);
}

static void put_settings(FILE *out, const lt_report_model *model)
{
    const lt_settings *settings = lt_get_settings();
    fprintf(out, "  \"settings\": {\"stack_depth\": %ld, \"release_stacks\": ", settings->stack_depth);
    lt_json_bool(out, settings->release_stacks);
    fputs_unlocked(", \"suppressions\": ", out);
    lt_json_string(out, model->suppressions->path);
    fprintf(out, ", \"exit_code\": %ld},\n", settings->exit_code);
}

static void put_summary(FILE *out, const lt_report_model *model)
{
    /* Beside kept_alive_objects (which counts what suppressed leaks hold
     * too): the released objects unsuppressed leaks keep alive, each
     * counted once, and their bytes, memory the program released that a
     * leak still pins. Always written, 0 when none. */
    fprintf(out,
            "  \"summary\": {\"leaked_objects\": %" PRIu64 ", \"leaked_bytes\": %" PRIu64
            ", \"kept_alive_objects\": %" PRIu64 ", \"kept_by_leaks_objects\": %" PRIu64
            ", \"kept_by_leaks_bytes\": %" PRIu64 ", \"suppressed_objects\": %" PRIu64
            ", \"suppressed_bytes\": %" PRIu64 ", \"live_objects\": %" PRIu64 ", \"created_objects\": %" PRIu64
            ", \"misuse_count\": %" PRIu64 ", \"incomplete\": ",
            model->leaked_objects, model->leaked_bytes, model->kept_objects, model->kept_by_leaks,
            model->kept_by_leaks_bytes, model->suppressed_objects, model->suppressed_bytes,
            model->snapshot ? (uint64_t)model->count : model->stats.live_objects, model->stats.created,
            model->stats.misuse);
    lt_json_bool(out, model->stats.incomplete || !model->snapshot);
    fprintf(out, ", \"unique_stacks\": %" PRIu64 ", \"call_sites\": %zu, \"leaks_known\": ",
            model->stats.unique_stacks, model->reported_sites);
    /* No report of the live set could be made (out of memory): the leak
     * counts are 0 only because nothing was looked at. */
    lt_json_bool(out, model->snapshot != NULL);
    fputs_unlocked("},\n", out);
}

static void put_totals(FILE *out, const lt_report_model *model)
{
    fputs_unlocked("  \"by_api\": [", out);
    for (size_t i = 0; i < model->api_count; i++) {
        unsigned d = model->api_order[i];
        fputs_unlocked(i ? ", {\"api\": " : "{\"api\": ", out);
        lt_json_string(out, api_name(d));
        fprintf(out, ", \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", model->api_objects[d],
                model->api_bytes[d]);
    }
    fputs_unlocked("],\n  \"by_type\": ", out);
    put_kinds(out, model->by_type, model->type_count);
    fputs_unlocked(",\n", out);
}

static void put_object_ref(FILE *out, const livetrack_object *object)
{
    fputs_unlocked("{\"api\": ", out);
    lt_json_string(out, api_name(object->domain));
    fputs_unlocked(", \"type\": ", out);
    lt_json_string(out, object->type_name);
    fputs_unlocked(", \"handle\": ", out);
    lt_json_hex(out, object->handle);
    /* The handle may name a newer object too (the driver gave it out
     * again while children kept this one): the creation number tells. */
    fprintf(out, ", \"seq\": %" PRIu64 "}", object->seq);
}

static void put_sites(FILE *out, lt_report_model *model)
{
    fputs_unlocked("  \"sites\": [", out);
    for (size_t i = 0; i < model->site_count; i++) {
        const lt_report_site *site = &model->sites[i];
        fprintf(out, "%s\n    {\"id\": %" PRIu32 ", \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"suppressed\": ",
                i ? "," : "", site->id, site->objects, site->bytes);
        lt_json_bool(out, site->suppression >= 0);
        fputs_unlocked(", \"suppressed_by\": ", out);
        lt_json_string(out, site->suppression >= 0 ? model->suppressions->items[site->suppression].text : NULL);
        fputs_unlocked(",\n     \"types\": ", out);
        put_kinds(out, site->kinds, site->kind_count);
        fputs_unlocked(",\n     \"frames\": ", out);
        put_site_frames(out, model, site);
        fputs_unlocked(",\n     \"examples\": [", out);
        for (unsigned e = 0; e < site->example_count; e++) {
            const livetrack_object *object = livetrack_snapshot_at(model->snapshot, site->examples[e]);
            fputs_unlocked(e ? ", {\"handle\": " : "{\"handle\": ", out);
            lt_json_hex(out, object->handle);
            fputs_unlocked(", \"type\": ", out);
            lt_json_string(out, object->type_name);
            fprintf(out, ", \"refs\": %" PRIu32 ", \"bytes\": %" PRIu64 "}", object->refs, object->bytes);
        }
        fprintf(out, "],\n     \"keeps_alive_count\": %zu, \"keeps_alive_bytes\": %" PRIu64 ", \"keeps_alive\": [",
                site->kept_count, site->kept_bytes);
        for (size_t k = 0; k < site->kept_count; k++) {
            if (k)
                fputs_unlocked(", ", out);
            put_object_ref(out, livetrack_snapshot_at(model->snapshot, model->kept[site->kept_first + k]));
        }
        fputs_unlocked("]}", out);
    }
    fputs_unlocked(model->site_count ? "\n  ],\n" : "],\n", out);
}

/* ---- the objects: one line each, built in memory ----
 * With a million objects this loop is most of the document, so each line
 * is assembled in a buffer and written with one fwrite, and the escaped
 * {"api": ..., "type": ..., "handle":  prefix is made once per type. */

typedef struct object_line {
    char *at;
    char text[1024];
} object_line;

#define LINE_LITERAL(line, literal) \
    (memcpy((line)->at, literal, sizeof literal - 1), (line)->at += sizeof literal - 1)

static void line_u64(object_line *line, uint64_t value) { line->at += lt_json_format_u64(line->at, value); }

static void line_hex(object_line *line, uint64_t value) { line->at += lt_json_format_hex(line->at, value); }

/* The object's parents, comma-separated, by handle, or by creation number
 * where `seqs` gives them: one order for both lists, so that the n-th
 * number is the n-th handle's. */
static void line_parent_list(object_line *line, const livetrack_object *object, const uint64_t seqs[2])
{
    int first = 1;
    for (int p = 0; p < 2; p++) {
        if (!object->parents[p])
            continue;
        if (!first)
            LINE_LITERAL(line, ", ");
        first = 0;
        if (seqs)
            line_u64(line, seqs[p]);
        else
            line_hex(line, object->parents[p]);
    }
}

static void line_ms(object_line *line, uint64_t ns) { line->at += lt_json_format_ms(line->at, ns); }

/* The longest prefix kept; a longer one (a very long type name) is
 * written by the slow path. */
#define PREFIX_MAX 512

typedef struct object_prefix {
    const char *type_name; /* the name it was made for */
    char *text;            /* NULL: not made yet */
    size_t length;
} object_prefix;

static const object_prefix *prefix_of(object_prefix cache[LIVETRACK_DOMAIN_COUNT][LIVETRACK_MAX_TYPES],
                                      const livetrack_object *object)
{
    if (object->domain >= LIVETRACK_DOMAIN_COUNT || object->type >= LIVETRACK_MAX_TYPES)
        return NULL;
    object_prefix *prefix = &cache[object->domain][object->type];
    if (prefix->text && prefix->type_name == object->type_name)
        return prefix;
    lt_free(prefix->text);
    prefix->text = NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *memory = open_memstream(&text, &size);
    if (!memory)
        return NULL;
    fputs_unlocked("{\"api\": ", memory);
    lt_json_string(memory, api_name(object->domain));
    fputs_unlocked(", \"type\": ", memory);
    lt_json_string(memory, object->type_name);
    fputs_unlocked(", \"handle\": ", memory);
    if (fclose(memory) || size > PREFIX_MAX) {
        free(text); /* open_memstream's buffer comes from malloc */
        return NULL;
    }
    prefix->text = lt_malloc(size);
    if (!prefix->text) {
        free(text);
        return NULL;
    }
    memcpy(prefix->text, text, size);
    free(text);
    prefix->length = size;
    prefix->type_name = object->type_name;
    return prefix;
}

static void put_objects(FILE *out, const lt_report_model *model)
{
    object_prefix prefixes[LIVETRACK_DOMAIN_COUNT][LIVETRACK_MAX_TYPES];
    memset(prefixes, 0, sizeof prefixes);
    fputs_unlocked("  \"objects\": [", out);
    /* Oldest first, the order the program made them in. */
    for (size_t n = 0, i = model->count; i-- > 0; n++) {
        lt_snapshot_prefetch_oldest_first(model->snapshot, i);
        const livetrack_object *object = livetrack_snapshot_at(model->snapshot, i);
        object_line line;
        line.at = line.text;
        if (n)
            LINE_LITERAL(&line, ",");
        LINE_LITERAL(&line, "\n    ");
        const object_prefix *prefix = prefix_of(prefixes, object);
        if (prefix) {
            memcpy(line.at, prefix->text, prefix->length);
            line.at += prefix->length;
        } else {
            /* Slow path: write what is there and the prefix directly. */
            fwrite_unlocked(line.text, 1, (size_t)(line.at - line.text), out);
            line.at = line.text;
            fputs_unlocked("{\"api\": ", out);
            lt_json_string(out, api_name(object->domain));
            fputs_unlocked(", \"type\": ", out);
            lt_json_string(out, object->type_name);
            fputs_unlocked(", \"handle\": ", out);
        }
        line_hex(&line, object->handle);
        LINE_LITERAL(&line, ", \"seq\": ");
        line_u64(&line, object->seq);
        LINE_LITERAL(&line, ", \"time_ms\": ");
        line_ms(&line, object->time_ns);
        LINE_LITERAL(&line, ", \"refs\": ");
        line_u64(&line, object->refs);
        LINE_LITERAL(&line, ", \"holders\": ");
        line_u64(&line, object->holders);
        LINE_LITERAL(&line, ", \"bytes\": ");
        line_u64(&line, object->bytes);
        LINE_LITERAL(&line, ", \"site\": ");
        uint32_t site = model->site_of ? model->site_of[i] : 0;
        if (site)
            line_u64(&line, model->sites[site - 1].id);
        else
            LINE_LITERAL(&line, "null");
        if (object->refs)
            LINE_LITERAL(&line, ", \"leaked\": true");
        else
            LINE_LITERAL(&line, ", \"leaked\": false");
        if (site && model->sites[site - 1].suppression >= 0)
            LINE_LITERAL(&line, ", \"suppressed\": true, \"parents\": [");
        else
            LINE_LITERAL(&line, ", \"suppressed\": false, \"parents\": [");
        line_parent_list(&line, object, NULL);
        /* Their creation numbers, in the same order: a parent's handle may
         * name two objects here (one the program released while this
         * object kept it alive, and a newer one the driver gave the
         * handle to). */
        LINE_LITERAL(&line, "], \"parent_seqs\": [");
        uint64_t parent_seqs[2];
        livetrack_snapshot_parent_seqs(model->snapshot, i, parent_seqs);
        line_parent_list(&line, object, parent_seqs);
        LINE_LITERAL(&line, "]}");
        fwrite_unlocked(line.text, 1, (size_t)(line.at - line.text), out);
    }
    fputs_unlocked(model->count ? "\n  ],\n" : "],\n", out);
    for (unsigned d = 0; d < LIVETRACK_DOMAIN_COUNT; d++)
        for (unsigned t = 0; t < LIVETRACK_MAX_TYPES; t++)
            lt_free(prefixes[d][t].text);
}

static void put_peak(FILE *out, lt_report_model *model)
{
    fputs_unlocked("  \"peak\": ", out);
    /* No object was ever live (a process with only misused calls, or a
     * report asked for before the first create): there is no peak, and
     * null says so rather than a peak of nothing at time 0. */
    if (!lt_report_peak_build(model) || !model->peak.objects) {
        fputs_unlocked("null,\n", out);
        return;
    }
    const lt_peak_info *peak = &model->peak;
    fprintf(out, "{\"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"time_ms\": ", peak->set_objects,
            peak->set_bytes);
    lt_json_ms(out, peak->time_ns);
    fputs_unlocked(", \"approximate\": ", out);
    lt_json_bool(out, peak->approximate);
    fprintf(out, ", \"max_objects\": %" PRIu64 ", \"max_bytes\": %" PRIu64 ", \"sites\": [", peak->objects,
            peak->bytes);
    for (size_t i = 0; i < model->peak_site_count; i++) {
        const lt_report_site *site = &model->peak_sites[i];
        fprintf(out, "%s\n    {\"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"types\": ", i ? "," : "",
                site->objects, site->bytes);
        put_kinds(out, site->kinds, site->kind_count);
        fputs_unlocked(",\n     \"frames\": ", out);
        put_site_frames(out, model, site);
        putc_unlocked('}', out);
    }
    fputs_unlocked(model->peak_site_count ? "\n  ]},\n" : "]},\n", out);
}

static void put_misuse(FILE *out, const lt_misuse_record *records, size_t count, const misuse_frames *stacks)
{
    fputs_unlocked("  \"misuse\": [", out);
    for (size_t i = 0; i < count; i++) {
        const lt_misuse_record *record = &records[i];
        /* The record's message is a fixed array: make sure it ends. */
        char message[sizeof record->message + 1];
        memcpy(message, record->message, sizeof record->message);
        message[sizeof record->message] = '\0';
        fprintf(out, "%s\n    {\"seq\": %" PRIu64 ", \"timeline_row\": ", i ? "," : "", record->seq);
        if (record->timeline_row)
            fprintf(out, "%" PRIu64, record->timeline_row);
        else
            fputs_unlocked("null", out);
        fputs_unlocked(", \"time_ms\": ", out);
        lt_json_ms(out, record->time_ns);
        fputs_unlocked(", \"message\": ", out);
        lt_json_string(out, message);
        fputs_unlocked(", \"api\": ", out);
        lt_json_string(out, api_name(record->domain));
        fputs_unlocked(", \"type\": ", out);
        lt_json_string(out, record->type != LIVETRACK_ANY_TYPE && api_name(record->domain)
                            ? livetrack_type_name((livetrack_domain)record->domain, record->type)
                            : NULL);
        fputs_unlocked(", \"handle\": ", out);
        if (record->handle)
            lt_json_hex(out, record->handle);
        else
            fputs_unlocked("null", out);
        fputs_unlocked(",\n     \"call_frames\": ", out);
        put_stack_frames(out, stacks, record->call_stack);
        fputs_unlocked(",\n     \"create_frames\": ", out);
        put_stack_frames(out, stacks, record->create_stack);
        fputs_unlocked(",\n     \"release_frames\": ", out);
        put_stack_frames(out, stacks, record->release_stack);
        putc_unlocked('}', out);
    }
    fputs_unlocked(count ? "\n  ]" : "]", out);
}

static void put_suppressions(FILE *out, const lt_report_model *model)
{
    const lt_suppressions *patterns = model->suppressions;
    fputs_unlocked("  \"suppression_patterns\": [", out);
    for (size_t i = 0; i < patterns->count; i++) {
        fputs_unlocked(i ? ", {\"pattern\": " : "{\"pattern\": ", out);
        lt_json_string(out, patterns->items[i].text);
        const lt_pattern_use *use = model->pattern_use ? &model->pattern_use[i] : NULL;
        fprintf(out, ", \"line\": %u, \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", patterns->items[i].line,
                use ? use->objects : 0, use ? use->bytes : 0);
    }
    fputs_unlocked("],\n", out);
}

void lt_report_write_json(FILE *out, lt_report_model *model, unsigned flags)
{
    /* What takes livetrack's locks comes first (the peak's copy, the
     * misuse records' symbolized stacks); then the stream is held for the
     * whole document and never let go before its end, so the unlocked
     * stdio calls are safe and other threads' output cannot land inside
     * it. The records themselves are the model's: copied with the stats
     * that give `misuse_count`, so the list is never longer than that. */
    lt_report_peak_build(model);
    misuse_frames misuse_stacks;
    symbolize_misuse_stacks(model->misuse, model->misuse_kept, &misuse_stacks);
    flockfile(out);
    fprintf(out, "{\n  \"schema\": \"livetrack-report\", \"version\": 1,\n"
                 "  \"tool\": {\"name\": \"livetrack\", \"version\": \"%d.%d.%d\"},\n",
            LIVETRACK_VERSION_MAJOR, LIVETRACK_VERSION_MINOR, LIVETRACK_VERSION_PATCH);
    fputs_unlocked("  \"at_exit\": ", out);
    lt_json_bool(out, (flags & LT_REPORT_AT_EXIT) != 0);
    fprintf(out, ", \"since_mark\": %" PRIu64 ",\n", model->since_mark);
    put_process(out);
    put_settings(out, model);
    put_summary(out, model);
    put_totals(out, model);
    put_suppressions(out, model);
    put_sites(out, model);
    put_objects(out, model);
    put_peak(out, model);
    put_misuse(out, model->misuse, model->misuse_kept, &misuse_stacks);
    fputs_unlocked("\n}\n", out);
    funlockfile(out);
    fflush(out);
    free_misuse_stacks(&misuse_stacks);
}
