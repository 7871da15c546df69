/*
 * livetrack trace: the CSV timeline as Chrome trace-event JSON, which
 * the Perfetto UI (ui.perfetto.dev) and chrome://tracing open.
 *
 * Counter events ("ph":"C") make one track per object type plus the
 * totals and the process's memory; instant events ("ph":"i") mark misused
 * calls and, with the JSON report, where each leaked object was created.
 * A counter is written only when its value changes, which keeps traces of
 * millions of events small without losing a step. Timestamps are
 * microseconds, as the format wants.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csv_reader.h"
#include "escape.h"
#include "report_file.h"

static void usage(void)
{
    fputs("usage: livetrack trace FILE.csv [FILE.json] -o TRACE.json\n"
          "\n"
          "Converts a timeline (livetrack run --csv FILE, or LIVETRACK_CSV) to Chrome/Perfetto\n"
          "trace-event JSON: open it at https://ui.perfetto.dev or in chrome://tracing.\n"
          "\n"
          "  counter tracks   live objects of each type, all live objects, live bytes, and the\n"
          "                   process's VmRSS and VmSize\n"
          "  instant events   each misused call; with FILE.json (from the same run) also each\n"
          "                   leaked object, at the time it was created, with its call stack\n"
          "\n"
          "Options:\n"
          "  -o, --output FILE  where to write the trace (\"-\": standard output); required\n"
          "  -h, --help         show this help\n",
          stdout);
}

typedef struct writer {
    FILE *out;
    int64_t pid;
    int first;
} writer;

static void begin_event(writer *w, const char *phase, const char *name, double time_ms)
{
    fputs(w->first ? "\n" : ",\n", w->out);
    w->first = 0;
    fprintf(w->out, "{\"ph\":\"%s\",\"pid\":%" PRId64 ",\"tid\":0,\"ts\":%.3f,\"name\":", phase, w->pid,
            time_ms * 1000.0);
    escape_json(w->out, name);
}

static void counter(writer *w, const char *name, double time_ms, const char *key, int64_t value)
{
    begin_event(w, "C", name, time_ms);
    fprintf(w->out, ",\"args\":{\"%s\":%" PRId64 "}}", key, value);
}

/* Totals and sizes are unsigned in the timeline and may pass 2^63. */
static void counter_unsigned(writer *w, const char *name, double time_ms, const char *key, uint64_t value)
{
    begin_event(w, "C", name, time_ms);
    fprintf(w->out, ",\"args\":{\"%s\":%" PRIu64 "}}", key, value);
}

/* The frames of a stack as one string, a line each, for the event's args. */
static void frames_arg(FILE *out, const json_value *frames)
{
    text_buffer text = {NULL, 0, 0};
    text_buffer_add(&text, "");
    for (size_t i = 0; i < json_count(frames); i++) {
        char number[32], *line = report_frame_string(json_at(frames, i));
        snprintf(number, sizeof number, "%s#%zu ", i ? "\n" : "", i);
        text_buffer_add(&text, number);
        text_buffer_add(&text, line);
        free(line);
    }
    escape_json(out, text.text);
    free(text.text);
}

/* site id -> site; ids are small and dense in practice. */
static const json_value **index_sites(const json_value *sites, size_t *size_out)
{
    size_t size = 0;
    for (size_t i = 0; i < json_count(sites); i++) {
        int64_t id = json_int(json_get(json_at(sites, i), "id"), -1);
        if (id >= 0 && id < 16 * 1024 * 1024 && (size_t)id >= size)
            size = (size_t)id + 1;
    }
    const json_value **index = cli_alloc((size + 1) * sizeof *index);
    for (size_t i = 0; i < json_count(sites); i++) {
        int64_t id = json_int(json_get(json_at(sites, i), "id"), -1);
        if (id >= 0 && (size_t)id < size)
            index[id] = json_at(sites, i);
    }
    *size_out = size;
    return index;
}

/* Which report record goes with which misuse row of the timeline. A
 * record's `seq` places it among creation numbers, a row's `seq` counts
 * rows: the two are different numbers. Reports of this version say the
 * record's row (`timeline_row`); older ones do not, and there the k-th
 * misuse row on a handle goes with the k-th record on that handle.
 *
 * Row numbers repeat where processes share one timeline (a fork without
 * %p in LIVETRACK_CSV: each counts its own rows), and a report is one
 * process's: so a record also names the row's handle and call (its
 * message starts with the call), and goes with one row at most. */
typedef struct misuse_matcher {
    const json_value *records;
    int by_row;      /* the report has timeline_row */
    char *taken;     /* per record: matched to a row already */
} misuse_matcher;

static void misuse_matcher_init(misuse_matcher *m, const json_value *records)
{
    m->records = records;
    m->by_row = 0;
    for (size_t i = 0; i < json_count(records) && !m->by_row; i++)
        m->by_row = json_get(json_at(records, i), "timeline_row") != NULL;
    m->taken = cli_alloc(json_count(records) + 1);
    memset(m->taken, 0, json_count(records) + 1);
}

/* Whether a record's message is about `call` (empty: not known), the
 * call as the report would hold it (cli_name_as_reported). */
static int names_call(const json_value *record, const char *call)
{
    const char *message = json_str(json_get(record, "message"), "");
    size_t length = strlen(call);
    return !length || (!strncmp(message, call, length) && message[length] == '(');
}

static const json_value *misuse_of_row(misuse_matcher *m, const timeline_row *row, const char *call)
{
    for (size_t i = 0; i < json_count(m->records); i++) {
        const json_value *record = json_at(m->records, i);
        if (m->taken[i])
            continue;
        const json_value *handle = json_get(record, "handle");
        if (m->by_row) {
            if (json_u64(json_get(record, "timeline_row"), 0) == row->seq &&
                (!handle || handle->kind == JSON_NULL || json_u64(handle, 0) == row->handle) && names_call(record, call)) {
                m->taken[i] = 1;
                return record;
            }
        } else if (json_u64(handle, 0) == row->handle) {
            m->taken[i] = 1;
            return record;
        }
    }
    return NULL;
}

int cli_trace(int argc, char **argv)
{
    cli_parser parser;
    cli_parser_init(&parser, "trace", argc - 1, argv + 1);
    const char *csv_path = NULL, *report_path = NULL, *output = NULL, *value;
    while (cli_more(&parser)) {
        if (cli_flag(&parser, "help", 'h')) {
            usage();
            return CLI_EXIT_OK;
        } else if (cli_value(&parser, "output", 'o', &output)) {
            continue;
        } else if (cli_double_dash(&parser)) {
            continue;
        } else if ((!csv_path || !report_path) && cli_positional(&parser, &value)) {
            *(csv_path ? &report_path : &csv_path) = value;
        } else {
            cli_unknown(&parser);
        }
    }
    if (!csv_path)
        cli_fail("no timeline given (usage: livetrack trace FILE.csv [FILE.json] -o TRACE.json)");
    if (!output)
        cli_fail("no output file (add -o TRACE.json)");

    char error[256];
    timeline t;
    if (!timeline_read(csv_path, &t, error, sizeof error))
        cli_fail("cannot read %s: %s", csv_path, error);
    report_file report = {NULL, NULL, NULL, 0};
    if (report_path)
        report_load(report_path, &report);

    FILE *out = cli_open_output(output, 0);
    writer w = {out, json_int(json_path(report.root, "process.pid"), 1), 1};
    const char *executable = json_str(json_path(report.root, "process.executable"), NULL);
    fprintf(out, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"livetrack %s\",\"timeline\":", cli_version());
    escape_json(out, csv_path);
    fputs("},\"traceEvents\":[", out);

    char name[1024];
    snprintf(name, sizeof name, "%s (livetrack)", executable ? units_basename(executable) : "program");
    begin_event(&w, "M", "process_name", 0);
    fputs(",\"args\":{\"name\":", out);
    escape_json(out, name);
    fputs("}}", out);
    begin_event(&w, "M", "thread_name", 0);
    fputs(",\"args\":{\"name\":\"object lifecycle\"}}", out);
    if (t.count) {
        /* One span for the whole run gives the tracks a visible extent. */
        double end = t.rows[t.count - 1].time_ms;
        begin_event(&w, "X", executable ? units_basename(executable) : "run", 0);
        fprintf(out, ",\"dur\":%.3f,\"args\":{\"events\":%zu}}", end * 1000.0, t.count);
    }

    int64_t last_rss = -1, last_size = -1;
    uint64_t last_objects = 0, last_bytes = 0;
    int have_totals = 0; /* any value, 2^64 - 1 included, is a real total */
    misuse_matcher matcher;
    misuse_matcher_init(&matcher, json_get(report.root, "misuse"));
    size_t misuse_rows = 0;
    for (size_t i = 0; i < t.count; i++) {
        const timeline_row *row = &t.rows[i];
        if (row->event == TIMELINE_MISUSE) {
            const char *call = t.strings[row->call];
            snprintf(name, sizeof name, "misuse: %s%s%s 0x%" PRIx64, *call ? call : "", *call ? " on " : "",
                     t.strings[row->type], row->handle);
            begin_event(&w, "i", name, row->time_ms);
            fprintf(out, ",\"s\":\"p\",\"args\":{\"seq\":%" PRIu64 ",\"api\":", row->seq);
            escape_json(out, t.strings[row->api]);
            fputs(",\"type\":", out);
            escape_json(out, t.strings[row->type]);
            fprintf(out, ",\"handle\":\"0x%" PRIx64 "\"", row->handle);
            /* The report holds its messages with controls made '?' and bytes
             * that are not UTF-8 made U+FFFD; the timeline holds calls raw. */
            char *reported_call = cli_name_as_reported(call);
            const json_value *event = misuse_of_row(&matcher, row, reported_call);
            free(reported_call);
            if (event) {
                fputs(",\"message\":", out);
                escape_json(out, json_str(json_get(event, "message"), ""));
                if (json_count(json_get(event, "call_frames"))) {
                    fputs(",\"stack\":", out);
                    frames_arg(out, json_get(event, "call_frames"));
                }
            }
            fputs("}}", out);
            misuse_rows++;
            continue;
        }
        timeline_series_name(&t, row->series, name, sizeof name);
        counter(&w, name, row->time_ms, "live", row->type_live);
        if (!have_totals || row->live_objects != last_objects)
            counter_unsigned(&w, "live objects (all types)", row->time_ms, "objects", last_objects = row->live_objects);
        if (!have_totals || row->live_bytes != last_bytes)
            counter_unsigned(&w, "live bytes", row->time_ms, "bytes", last_bytes = row->live_bytes);
        have_totals = 1;
        if (t.has_vm && row->vm_rss_kb != last_rss)
            counter(&w, "VmRSS", row->time_ms, "bytes", (last_rss = row->vm_rss_kb) * 1024);
        if (t.has_vm && row->vm_size_kb != last_size)
            counter(&w, "VmSize", row->time_ms, "bytes", (last_size = row->vm_size_kb) * 1024);
    }

    size_t leaks = 0;
    if (report.root) {
        size_t site_count;
        const json_value **sites = index_sites(json_get(report.root, "sites"), &site_count);
        const json_value *objects = json_get(report.root, "objects");
        for (size_t i = 0; i < json_count(objects); i++) {
            const json_value *object = json_at(objects, i);
            if (!json_bool(json_get(object, "leaked"), 0) || json_bool(json_get(object, "suppressed"), 0))
                continue;
            int64_t site_id = json_int(json_get(object, "site"), -1);
            const json_value *site = site_id >= 0 && (size_t)site_id < site_count ? sites[site_id] : NULL;
            char label[256] = "";
            if (site)
                report_site_label(site, label, sizeof label);
            snprintf(name, sizeof name, "leak: %s %s%s%s", json_str(json_get(object, "type"), "?"),
                     json_str(json_get(object, "handle"), "?"), *label ? " from " : "", label);
            begin_event(&w, "i", name, json_num(json_get(object, "time_ms"), 0));
            fputs(",\"s\":\"p\",\"args\":{\"api\":", out);
            escape_json(out, json_str(json_get(object, "api"), "?"));
            fputs(",\"type\":", out);
            escape_json(out, json_str(json_get(object, "type"), "?"));
            fputs(",\"handle\":", out);
            escape_json(out, json_str(json_get(object, "handle"), "?"));
            fprintf(out, ",\"refs\":%" PRId64 ",\"bytes\":%" PRIu64, json_int(json_get(object, "refs"), 0),
                    json_u64(json_get(object, "bytes"), 0));
            if (site) {
                fputs(",\"stack\":", out);
                frames_arg(out, json_get(site, "frames"));
            }
            fputs("}}", out);
            leaks++;
        }
        free(sites);
    }
    fputs("\n]}\n", out);
    cli_close_output(out, output);
    if (strcmp(output, "-"))
        fprintf(stderr, "livetrack trace: wrote %s: %zu event%s, %zu misused call%s, %zu leak%s\n", output, t.count,
                t.count == 1 ? "" : "s", misuse_rows, misuse_rows == 1 ? "" : "s", leaks, leaks == 1 ? "" : "s");
    free(matcher.taken);
    timeline_free(&t);
    report_free(&report);
    return CLI_EXIT_OK;
}
