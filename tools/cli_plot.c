/*
 * livetrack plot: a run as one HTML page that needs nothing but a
 * browser: styles inline, charts as inline SVG, no scripts, no fonts or
 * anything else fetched from the network, so it can be mailed, attached
 * to a CI job, or opened years later.
 *
 * From the CSV timeline: live objects per type, live bytes with the peak
 * marked, the process's VmRSS and VmSize, API calls by count and by
 * memory change, and resources per API and type. From the JSON report:
 * the summary, leaks by call site with their stacks, misused calls.
 *
 * With -o FILE.svg it writes only the main timeline (live objects per type
 * and live bytes) as one standalone SVG document.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "csv_reader.h"
#include "escape.h"
#include "report_file.h"
#include "series.h"
#include "string_map.h"
#include "svg_chart.h"

#define PAGE_WIDTH 1100.0
#define TIME_CHART_HEIGHT 360.0
#define TYPES_DRAWN 9
#define BARS_SHOWN 12
#define SITES_SHOWN 15

static void usage(void)
{
    fputs("usage: livetrack plot FILE.csv [FILE.json] -o REPORT.html\n"
          "       livetrack plot FILE.csv -o TIMELINE.svg\n"
          "\n"
          "Draws a run recorded with 'livetrack run --csv FILE.csv --json FILE.json' as one\n"
          "self-contained HTML page (inline SVG, no scripts, nothing loaded from the network):\n"
          "  - live objects over time, per type, with misused calls marked\n"
          "  - live bytes over time, with the peak marked\n"
          "  - the process's VmRSS and VmSize over time\n"
          "  - leaks by call site, with their stacks (needs FILE.json)\n"
          "  - API calls by count and by the VmRSS change across them\n"
          "  - objects per API and type: created, retained, released, destroyed, misused,\n"
          "    peak, at the end, leaked\n"
          "Long runs are downsampled for drawing (min and max per time bucket, so no peak is\n"
          "lost) and the chart says so. The files may be given in either order. \"-\" reads one\n"
          "of them from standard input: the timeline, unless the other file given is it.\n"
          "\n"
          "Options:\n"
          "  -o, --output FILE  REPORT.html for the page; a name ending in .svg writes only the\n"
          "                     main timeline (live objects per type and live bytes) as SVG;\n"
          "                     required\n"
          "  --title TEXT       the page's title (default: the program's name)\n"
          "  -h, --help         show this help\n",
          stdout);
}

/* Colours for series, picked to stay apart from each other on white. */
static const char *const palette[] = {"#4263eb", "#f08c00", "#0ca678", "#d6336c", "#7048e8",
                                      "#1098ad", "#e8590c", "#74b816", "#ae3ec9", "#495057"};
#define COLOR_BYTES "#1c7ed6"
#define COLOR_PEAK "#c92a2a"
#define COLOR_RSS "#0ca678"
#define COLOR_SIZE "#7048e8"
#define COLOR_TOTAL "#343a40"

typedef struct call_stats {
    const char *name;
    char *owned_name; /* for calls the timeline does not name */
    uint64_t count;
    int64_t rss_delta_kb;
    uint64_t bytes_created;
} call_stats;

typedef struct api_stats {
    uint64_t events[TIMELINE_EVENT_KINDS];
    int64_t live, peak;
} api_stats;

typedef struct type_stats {
    uint64_t events[TIMELINE_EVENT_KINDS];
} type_stats;

typedef struct plot_data {
    const timeline *t;
    const report_file *report; /* root NULL without JSON */
    const char *csv_path, *json_path, *title;
    step_series *types;        /* per timeline series */
    step_series live_objects, live_bytes, rss, vm_size;
    double *misuse_times;
    size_t misuse_count;
    double t0, t1;
    size_t *type_order;        /* series sorted by peak, highest first */
    call_stats *calls;
    size_t call_count;
    api_stats *apis;           /* per timeline string index of the api */
    type_stats *type_totals;   /* per timeline series */
} plot_data;

/* Sums over a file's rows: each value is bounded (csv_reader.c), but a
 * long file of extreme rows could still carry a sum past int64. Held to
 * +-INT64_MAX, so that negating it stays defined too. */
/* A count read as a double (the series keep doubles), as the int64_t the
 * units print: a CSV may hold counts up to 2^64 - 1, and converting a
 * double at or above 2^63 to int64_t is undefined. */
static int64_t count_of(double value)
{
    return value >= 9223372036854775807.0 ? INT64_MAX : value <= 0 ? 0 : (int64_t)value;
}

static int64_t add_clamped(int64_t a, int64_t b)
{
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum))
        return b > 0 ? INT64_MAX : -INT64_MAX;
    return sum < -INT64_MAX ? -INT64_MAX : sum;
}

static int compare_peak(const void *a, const void *b, void *context)
{
    const timeline *t = context;
    const timeline_series *x = &t->series[*(const size_t *)a], *y = &t->series[*(const size_t *)b];
    if (x->peak != y->peak)
        return x->peak > y->peak ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void prepare(plot_data *d)
{
    const timeline *t = d->t;
    d->types = cli_alloc((t->series_count + 1) * sizeof *d->types);
    d->type_totals = cli_alloc((t->series_count + 1) * sizeof *d->type_totals);
    d->apis = cli_alloc((t->string_count + 1) * sizeof *d->apis);
    d->misuse_times = cli_alloc((t->count + 1) * sizeof *d->misuse_times);
    string_map call_index = {0, 0, NULL};
    size_t call_capacity = 0;
    int64_t *type_last = cli_alloc((t->series_count + 1) * sizeof *type_last);

    for (size_t i = 0; i < t->count; i++) {
        const timeline_row *row = &t->rows[i];
        d->type_totals[row->series].events[row->event]++;
        api_stats *api = &d->apis[row->api];
        api->events[row->event]++;
        if (row->event == TIMELINE_MISUSE) {
            d->misuse_times[d->misuse_count++] = row->time_ms;
        } else {
            series_add(&d->types[row->series], row->time_ms, (double)row->type_live);
            /* An API's live count: the sum of its types' counts. */
            api->live = add_clamped(api->live, row->type_live - type_last[row->series]);
            type_last[row->series] = row->type_live;
            if (api->live > api->peak)
                api->peak = api->live;
        }
        series_add(&d->live_objects, row->time_ms, (double)row->live_objects);
        series_add(&d->live_bytes, row->time_ms, (double)row->live_bytes);
        if (t->has_vm) {
            series_add(&d->rss, row->time_ms, (double)row->vm_rss_kb * 1024.0);
            series_add(&d->vm_size, row->time_ms, (double)row->vm_size_kb * 1024.0);
        }

        char unnamed[64];
        const char *name = t->strings[row->call];
        if (!*name) {
            snprintf(unnamed, sizeof unnamed, "(%s, call not named)", timeline_event_names[row->event]);
            name = unnamed;
        }
        int added;
        size_t c = (size_t)string_map_intern(&call_index, name, d->call_count, &added);
        if (added) {
            if (d->call_count == call_capacity) {
                call_capacity = call_capacity ? call_capacity * 2 : 32;
                d->calls = cli_realloc(d->calls, call_capacity, sizeof *d->calls);
            }
            memset(&d->calls[c], 0, sizeof d->calls[c]);
            d->calls[c].name = *t->strings[row->call] ? t->strings[row->call] : NULL;
            d->call_count++;
        }
        d->calls[c].count++;
        d->calls[c].rss_delta_kb = add_clamped(d->calls[c].rss_delta_kb, row->d_vm_rss_kb);
        if (row->event == TIMELINE_CREATE)
            d->calls[c].bytes_created += row->bytes;
    }
    /* Unnamed calls keep their generated name: store it for good. */
    for (size_t i = 0; i <= call_index.mask && call_index.slots; i++) {
        const string_map_entry *entry = &call_index.slots[i];
        if (entry->key && !d->calls[entry->value].name)
            d->calls[entry->value].name = d->calls[entry->value].owned_name = cli_strdup(entry->key);
    }
    string_map_free(&call_index);
    free(type_last);

    d->type_order = cli_alloc((t->series_count + 1) * sizeof *d->type_order);
    for (size_t s = 0; s < t->series_count; s++)
        d->type_order[s] = s;
    qsort_r(d->type_order, t->series_count, sizeof *d->type_order, compare_peak, (void *)t);
    d->t0 = 0;
    d->t1 = t->count ? t->rows[t->count - 1].time_ms : 1;
    double process_time = json_num(json_path(d->report->root, "process.time_ms"), 0);
    if (process_time > d->t1)
        d->t1 = process_time;
}

static void free_data(plot_data *d)
{
    for (size_t s = 0; s < d->t->series_count; s++)
        series_free(&d->types[s]);
    free(d->types);
    series_free(&d->live_objects);
    series_free(&d->live_bytes);
    series_free(&d->rss);
    series_free(&d->vm_size);
    free(d->misuse_times);
    for (size_t c = 0; c < d->call_count; c++)
        free(d->calls[c].owned_name);
    free(d->calls);
    free(d->apis);
    free(d->type_totals);
    free(d->type_order);
}

/* ---- the charts ---- */

static char series_names[TYPES_DRAWN][160];

/* A page-wide chart over the recording's time span. */
static void start_time_chart(time_chart *chart, const plot_data *d, const char *title, const char *y_label,
                             chart_unit unit)
{
    memset(chart, 0, sizeof *chart);
    chart->title = title;
    chart->y_label = y_label;
    chart->unit = unit;
    chart->width = PAGE_WIDTH;
    chart->height = TIME_CHART_HEIGHT;
    chart->t0 = d->t0;
    chart->t1 = d->t1;
}

static void objects_chart(const plot_data *d, FILE *out, double x, double y, char *note, size_t note_size)
{
    time_chart chart;
    start_time_chart(&chart, d, "Live objects by type", "live objects", CHART_COUNT);
    size_t drawn = d->t->series_count < TYPES_DRAWN ? d->t->series_count : TYPES_DRAWN;
    for (size_t i = 0; i < drawn; i++) {
        size_t s = d->type_order[i];
        timeline_series_name(d->t, s, series_names[i], sizeof series_names[i]);
        chart.lines[chart.line_count++] =
            (chart_line){series_names[i], palette[i % (sizeof palette / sizeof palette[0])], &d->types[s], 0, 0, 1};
    }
    if (d->t->series_count > 1)
        chart.lines[chart.line_count++] = (chart_line){"all types", COLOR_TOTAL, &d->live_objects, 1, 0, 1};
    if (d->t->series_count > drawn) {
        snprintf(note, note_size, "The %zu types with the highest peaks are drawn; %zu more are in the table below.",
                 drawn, d->t->series_count - drawn);
        chart.note = note;
    }
    chart.events = d->misuse_times;
    chart.event_count = d->misuse_count;
    chart.event_label = "misused call";
    if (d->live_objects.count) {
        static char label[96];
        char count[32], when[32];
        units_count(count_of(d->live_objects.max), count, sizeof count);
        units_time_ms(d->live_objects.max_t, when, sizeof when);
        snprintf(label, sizeof label, "peak %s objects at %s", count, when);
        chart.markers[chart.marker_count++] =
            (chart_marker){d->live_objects.max_t, d->live_objects.max, label, COLOR_TOTAL};
    }
    chart_time(out, &chart, x, y);
}

static void bytes_chart(const plot_data *d, FILE *out, double x, double y)
{
    time_chart chart;
    start_time_chart(&chart, d, "Live bytes (buffers, images, allocations)", "live bytes", CHART_BYTES);
    chart.lines[chart.line_count++] = (chart_line){"live bytes", COLOR_BYTES, &d->live_bytes, 0, 1, 1};
    static char label[96];
    if (d->live_bytes.count && d->live_bytes.max > 0) {
        char size[32], when[32];
        units_bytes(d->live_bytes.max, size, sizeof size);
        units_time_ms(d->live_bytes.max_t, when, sizeof when);
        snprintf(label, sizeof label, "peak %s at %s", size, when);
        chart.markers[chart.marker_count++] = (chart_marker){d->live_bytes.max_t, d->live_bytes.max, label, COLOR_PEAK};
    } else {
        chart.note = "No live object had a size (only memory objects and allocations have one).";
    }
    chart_time(out, &chart, x, y);
}

static void memory_chart(const plot_data *d, FILE *out, double x, double y)
{
    time_chart chart;
    start_time_chart(&chart, d, "Process memory", "bytes", CHART_BYTES);
    chart.note = "VmRSS: memory resident in RAM; VmSize: all address space mapped (from /proc/self/status at each event).";
    chart.lines[chart.line_count++] = (chart_line){"VmSize", COLOR_SIZE, &d->vm_size, 1, 0, 0};
    chart.lines[chart.line_count++] = (chart_line){"VmRSS", COLOR_RSS, &d->rss, 0, 1, 0};
    static char label[96];
    if (d->rss.count) {
        char size[32], when[32];
        units_bytes(d->rss.max, size, sizeof size);
        units_time_ms(d->rss.max_t, when, sizeof when);
        snprintf(label, sizeof label, "VmRSS peak %s at %s", size, when);
        chart.markers[chart.marker_count++] = (chart_marker){d->rss.max_t, d->rss.max, label, COLOR_RSS};
    }
    chart_time(out, &chart, x, y);
}

static int compare_count(const void *a, const void *b)
{
    const call_stats *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int compare_rss(const void *a, const void *b)
{
    const call_stats *x = a, *y = b;
    int64_t ax = x->rss_delta_kb < 0 ? -x->rss_delta_kb : x->rss_delta_kb;
    int64_t ay = y->rss_delta_kb < 0 ? -y->rss_delta_kb : y->rss_delta_kb;
    if (ax != ay)
        return ax > ay ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void svg_open(FILE *out, double width, double height, const char *label)
{
    fprintf(out, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", width, height);
    escape_xml(out, label);
    fputs("\">\n", out);
}

static void calls_charts(plot_data *d, FILE *out)
{
    size_t shown = d->call_count < BARS_SHOWN ? d->call_count : BARS_SHOWN;
    chart_bar *bars = cli_alloc((shown + 1) * sizeof *bars);
    char (*texts)[96] = cli_alloc((shown + 1) * sizeof *texts);
    char (*tips)[256] = cli_alloc((shown + 1) * sizeof *tips);
    double width = PAGE_WIDTH / 2 - 12, height = chart_bars_height(shown);

    /* With no rows d->calls is NULL, and qsort(NULL, 0, ...) is undefined. */
    if (d->call_count)
        qsort(d->calls, d->call_count, sizeof *d->calls, compare_count);
    for (size_t i = 0; i < shown; i++) {
        char count[32];
        units_count((int64_t)d->calls[i].count, count, sizeof count);
        snprintf(texts[i], sizeof texts[i], "%s", count);
        snprintf(tips[i], sizeof tips[i], "%s: %s event%s", d->calls[i].name, count, d->calls[i].count == 1 ? "" : "s");
        bars[i] = (chart_bar){d->calls[i].name, (double)d->calls[i].count, texts[i], tips[i]};
    }
    fputs("<div class=\"pair\"><div>", out);
    svg_open(out, width, height, "API calls by count");
    chart_bars(out, "API calls by count", bars, shown, CHART_COUNT, "#4263eb", width, 0, 0);
    fputs("</svg></div>\n<div>", out);

    if (d->call_count)
        qsort(d->calls, d->call_count, sizeof *d->calls, compare_rss);
    size_t with_change = 0;
    for (size_t i = 0; i < shown; i++) {
        if (!d->calls[i].rss_delta_kb)
            continue;
        char change[32], created[32];
        units_bytes((double)d->calls[i].rss_delta_kb * 1024.0, change, sizeof change);
        units_bytes((double)d->calls[i].bytes_created, created, sizeof created);
        snprintf(texts[with_change], sizeof texts[0], "%s%s", d->calls[i].rss_delta_kb > 0 ? "+" : "", change);
        snprintf(tips[with_change], sizeof tips[0], "%s: VmRSS changed by %s over its %" PRIu64 " events; objects created: %s",
                 d->calls[i].name, texts[with_change], d->calls[i].count, created);
        bars[with_change] = (chart_bar){d->calls[i].name, (double)d->calls[i].rss_delta_kb * 1024.0, texts[with_change],
                                        tips[with_change]};
        with_change++;
    }
    svg_open(out, width, chart_bars_height(with_change), "API calls by memory change");
    chart_bars(out, "API calls by VmRSS change", bars, with_change, CHART_BYTES, "#f08c00", width, 0, 0);
    fputs("</svg>\n<p class=\"hint\">The change of VmRSS from the event before each call's event to the event, summed over "
          "the call's events (it includes the program's own work in between).</p></div></div>\n",
          out);
    free(bars);
    free(texts);
    free(tips);
}

/* ---- the page ---- */

static void html_text(FILE *out, const char *text) { escape_xml(out, text); }

static void card(FILE *out, const char *tone, const char *title, const char *value, const char *detail)
{
    fprintf(out, "<div class=\"card %s\"><div class=\"card-title\">", tone);
    html_text(out, title);
    fputs("</div><div class=\"card-value\">", out);
    html_text(out, value);
    fputs("</div><div class=\"card-detail\">", out);
    html_text(out, detail);
    fputs("</div></div>\n", out);
}

static void summary_cards(const plot_data *d, FILE *out)
{
    const json_value *root = d->report->root, *summary = json_get(root, "summary");
    char value[64], detail[160], a[32], b[32];
    fputs("<div class=\"cards\">\n", out);
    if (root) {
        int64_t leaked = json_count_int(json_get(summary, "leaked_objects"), 0);
        units_count(leaked, a, sizeof a);
        units_bytes((double)json_u64(json_get(summary, "leaked_bytes"), 0), b, sizeof b);
        int64_t suppressed = json_count_int(json_get(summary, "suppressed_objects"), 0);
        if (json_get(summary, "kept_by_leaks_objects")) {
            /* What the leaks pin besides themselves, as the exit report says it. */
            char kept[32];
            units_bytes((double)json_u64(json_get(summary, "kept_by_leaks_bytes"), 0), kept, sizeof kept);
            snprintf(detail, sizeof detail, "%s; %" PRId64 " kept alive by leaks (%s), %" PRId64 " suppressed", b,
                     json_count_int(json_get(summary, "kept_by_leaks_objects"), 0), kept, suppressed);
        } else { /* a report older than 0.3.1: the count only */
            snprintf(detail, sizeof detail, "%s; %" PRId64 " kept alive, %" PRId64 " suppressed", b,
                     json_count_int(json_get(summary, "kept_alive_objects"), 0), suppressed);
        }
        card(out, leaked ? "bad" : "good", "Leaked at exit", a, detail);
        size_t sites = 0;
        const json_value *site_array = json_get(root, "sites");
        for (size_t i = 0; i < json_count(site_array); i++)
            sites += !json_bool(json_get(json_at(site_array, i), "suppressed"), 0) &&
                     json_int(json_get(json_at(site_array, i), "objects"), 0) > 0;
        snprintf(value, sizeof value, "%zu", sites);
        snprintf(detail, sizeof detail, "%" PRId64 " unique stacks recorded",
                 json_count_int(json_get(summary, "unique_stacks"), 0));
        card(out, sites ? "bad" : "good", "Leaking call sites", value, detail);
    }
    if (d->live_bytes.count) {
        units_bytes(d->live_bytes.max, a, sizeof a);
        units_time_ms(d->live_bytes.max_t, b, sizeof b);
        snprintf(detail, sizeof detail, "at %s", b);
        card(out, "neutral", "Peak live bytes", a, detail);
        units_count(count_of(d->live_objects.max), a, sizeof a);
        units_time_ms(d->live_objects.max_t, b, sizeof b);
        snprintf(detail, sizeof detail, "at %s", b);
        card(out, "neutral", "Peak live objects", a, detail);
    }
    int64_t misuse = root ? json_count_int(json_get(summary, "misuse_count"), 0) : (int64_t)d->misuse_count;
    snprintf(value, sizeof value, "%" PRId64, misuse);
    card(out, misuse ? "bad" : "good", "Misused calls", value, misuse ? "refused or reported, listed below" : "none");
    uint64_t created = 0;
    for (size_t s = 0; s < d->t->series_count; s++)
        created += d->type_totals[s].events[TIMELINE_CREATE];
    units_count(root ? json_count_int(json_get(summary, "created_objects"), (int64_t)created) : (int64_t)created, a,
                sizeof a);
    units_count((int64_t)d->t->count, b, sizeof b);
    snprintf(detail, sizeof detail, "%s lifecycle events", b);
    card(out, "neutral", "Objects created", a, detail);
    if (d->rss.count) {
        units_bytes(d->rss.max, a, sizeof a);
        units_time_ms(d->t1, b, sizeof b);
        snprintf(detail, sizeof detail, "run time %s", b);
        card(out, "neutral", "Peak VmRSS", a, detail);
    }
    fputs("</div>\n", out);
}

static int sites_by_bytes;

static int compare_sites(const void *a, const void *b)
{
    const json_value *x = *(const json_value *const *)a, *y = *(const json_value *const *)b;
    const char *key = sites_by_bytes ? "bytes" : "objects";
    uint64_t vx = json_u64(json_get(x, key), 0), vy = json_u64(json_get(y, key), 0);
    if (vx != vy)
        return vx > vy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* One bar chart of the largest sites by objects or by bytes. */
static void site_bars(FILE *out, const json_value *const *sites, size_t count, int by_bytes, double width)
{
    const json_value **list = cli_alloc((count + 1) * sizeof *list);
    memcpy(list, sites, count * sizeof *list);
    sites_by_bytes = by_bytes;
    qsort(list, count, sizeof *list, compare_sites);
    size_t shown = count < SITES_SHOWN ? count : SITES_SHOWN;
    chart_bar *bars = cli_alloc((shown + 1) * sizeof *bars);
    char (*labels)[256] = cli_alloc((shown + 1) * sizeof *labels);
    char (*texts)[64] = cli_alloc((shown + 1) * sizeof *texts);
    char (*tips)[512] = cli_alloc((shown + 1) * sizeof *tips);
    for (size_t i = 0; i < shown; i++) {
        char size[32], types[256];
        int64_t objects = json_int(json_get(list[i], "objects"), 0);
        uint64_t bytes = json_u64(json_get(list[i], "bytes"), 0);
        report_site_label(list[i], labels[i], sizeof labels[i]);
        report_site_types(list[i], types, sizeof types);
        units_bytes((double)bytes, size, sizeof size);
        if (by_bytes)
            snprintf(texts[i], sizeof texts[i], "%s", size);
        else
            units_count(objects, texts[i], sizeof texts[i]);
        snprintf(tips[i], sizeof tips[i], "%s: %" PRId64 " object%s, %s: %s", labels[i], objects,
                 objects == 1 ? "" : "s", size, types);
        bars[i] = (chart_bar){labels[i], by_bytes ? (double)bytes : (double)objects, texts[i], tips[i]};
    }
    const char *title = by_bytes ? "Leaked bytes by call site" : "Leaked objects by call site";
    svg_open(out, width, chart_bars_height(shown), title);
    chart_bars(out, title, bars, shown, by_bytes ? CHART_BYTES : CHART_COUNT, by_bytes ? COLOR_PEAK : "#e8590c",
               width, 0, 0);
    fputs("</svg>\n", out);
    free(bars);
    free(labels);
    free(texts);
    free(tips);
    free(list);
}

typedef struct ranked_site {
    uint64_t bytes;
    int64_t objects;
    size_t order; /* in the report */
    const json_value *site;
} ranked_site;

static int compare_ranked(const void *left, const void *right)
{
    const ranked_site *a = left, *b = right;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->objects != b->objects)
        return a->objects > b->objects ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static void sites_section(const plot_data *d, FILE *out)
{
    fputs("<section class=\"panel\">\n", out);
    if (!d->report->root) {
        fputs("<h2>Leaks by call site</h2><p class=\"hint\">Give the JSON report of the same run as well "
              "(<code>livetrack plot run.csv run.json -o report.html</code>) to see where leaked objects were "
              "created.</p></section>\n",
              out);
        return;
    }
    const json_value *sites = json_get(d->report->root, "sites");
    size_t count = 0;
    ranked_site *ranked = cli_alloc((json_count(sites) + 1) * sizeof *ranked);
    for (size_t i = 0; i < json_count(sites); i++) {
        const json_value *site = json_at(sites, i);
        int64_t objects = json_int(json_get(site, "objects"), 0);
        if (!json_bool(json_get(site, "suppressed"), 0) && objects > 0) {
            ranked[count] = (ranked_site){json_u64(json_get(site, "bytes"), 0), objects, count, site};
            count++;
        }
    }
    /* Largest first: bytes, then objects, then the report's order. An
     * edited report may list them in any order, so no quadratic sort. */
    qsort(ranked, count, sizeof *ranked, compare_ranked);
    const json_value **list = cli_alloc((count + 1) * sizeof *list);
    for (size_t i = 0; i < count; i++)
        list[i] = ranked[i].site;
    free(ranked);
    int by_bytes = 0;
    for (size_t i = 0; i < count; i++)
        by_bytes |= json_u64(json_get(list[i], "bytes"), 0) > 0;
    if (!count) {
        fputs("<h2>Leaks by call site</h2><p class=\"good-text\">Nothing leaked: every object was released.</p>"
              "</section>\n",
              out);
        free(list);
        return;
    }
    fputs("<h2>Leaks by call site</h2>\n", out);
    if (by_bytes) {
        fputs("<div class=\"pair\"><div>", out);
        site_bars(out, list, count, 0, PAGE_WIDTH / 2 - 12);
        fputs("</div><div>", out);
        site_bars(out, list, count, 1, PAGE_WIDTH / 2 - 12);
        fputs("</div></div>\n", out);
    } else {
        site_bars(out, list, count, 0, PAGE_WIDTH);
    }
    if (count > SITES_SHOWN)
        fprintf(out, "<p class=\"hint\">The %d largest of %zu call sites are drawn; all are listed below.</p>\n",
                SITES_SHOWN, count);

    fputs("<h3>Call stacks</h3>\n", out);
    for (size_t i = 0; i < count; i++) {
        char label[256], types[256], size[32];
        report_site_label(list[i], label, sizeof label);
        report_site_types(list[i], types, sizeof types);
        units_bytes((double)json_u64(json_get(list[i], "bytes"), 0), size, sizeof size);
        fprintf(out, "<details%s><summary><b>", i < 3 ? " open" : "");
        html_text(out, label);
        int64_t objects = json_int(json_get(list[i], "objects"), 0);
        fprintf(out, "</b> &#8212; %" PRId64 " object%s, ", objects, objects == 1 ? "" : "s");
        html_text(out, size);
        fputs(" &#8212; ", out);
        html_text(out, types);
        fputs("</summary><pre>", out);
        const json_value *frames = json_get(list[i], "frames");
        if (!json_count(frames)) {
            fputs(report_no_stack_text(d->report->root), out);
            fputc('\n', out);
        }
        for (size_t f = 0; f < json_count(frames); f++) {
            char *frame = report_frame_string(json_at(frames, f));
            fprintf(out, "#%-2zu ", f);
            html_text(out, frame);
            fputc('\n', out);
            free(frame);
        }
        const json_value *keeps = json_get(list[i], "keeps_alive");
        for (size_t k = 0; k < json_count(keeps) && k < 4; k++) {
            fputs(k ? ", " : "keeps alive: ", out);
            html_text(out, json_str(json_get(json_at(keeps, k), "type"), "?"));
            fputc(' ', out);
            html_text(out, json_str(json_get(json_at(keeps, k), "handle"), "?"));
        }
        if (json_count(keeps))
            fputs(json_count(keeps) > 4 ? ", ...\n" : "\n", out);
        fputs("</pre></details>\n", out);
    }
    fputs("</section>\n", out);
    free(list);
}

static void api_table(const plot_data *d, FILE *out)
{
    const timeline *t = d->t;
    fputs("<section class=\"panel\"><h2>Objects per API and type</h2>\n<table><thead><tr><th>API / type</th>"
          "<th>created</th><th>retained</th><th>released</th><th>destroyed</th><th>misused</th><th>freed</th>"
          "<th>restored</th>"
          "<th>peak live</th>"
          "<th>live at the end</th>",
          out);
    if (d->report->root)
        fputs("<th>leaked</th>", out);
    fputs("</tr></thead><tbody>\n", out);
    for (size_t a = 1; a < t->string_count; a++) {
        const api_stats *api = &d->apis[a];
        uint64_t total = 0;
        for (int e = 0; e < TIMELINE_EVENT_KINDS; e++)
            total += api->events[e];
        if (!total)
            continue;
        fputs("<tr class=\"api\"><td>", out);
        html_text(out, t->strings[a]);
        fputs("</td>", out);
        for (int e = 0; e < TIMELINE_EVENT_KINDS; e++)
            fprintf(out, "<td>%" PRIu64 "</td>", api->events[e]);
        fprintf(out, "<td>%" PRId64 "</td><td>%" PRId64 "</td>", api->peak, api->live);
        /* The report holds its names with controls made '?' and bytes that
         * are not UTF-8 made U+FFFD; the timeline holds them raw. */
        char *api_name = cli_name_as_reported(t->strings[a]);
        if (d->report->root) {
            const json_value *by_api = json_get(d->report->root, "by_api");
            int64_t leaked = 0;
            for (size_t i = 0; i < json_count(by_api); i++)
                if (!strcmp(json_str(json_get(json_at(by_api, i), "api"), ""), api_name))
                    leaked = json_int(json_get(json_at(by_api, i), "objects"), 0);
            fprintf(out, "<td class=\"%s\">%" PRId64 "</td>", leaked ? "bad-text" : "", leaked);
        }
        fputs("</tr>\n", out);
        for (size_t i = 0; i < t->series_count; i++) {
            size_t s = d->type_order[i];
            if (t->series[s].api != a)
                continue;
            fputs("<tr><td class=\"type\">", out);
            html_text(out, t->strings[t->series[s].type]);
            fputs("</td>", out);
            for (int e = 0; e < TIMELINE_EVENT_KINDS; e++)
                fprintf(out, "<td>%" PRIu64 "</td>", d->type_totals[s].events[e]);
            fprintf(out, "<td>%" PRId64 "</td><td>%" PRId64 "</td>", t->series[s].peak, t->series[s].last);
            if (d->report->root) {
                const json_value *by_type = json_get(d->report->root, "by_type");
                char *type_name = cli_name_as_reported(t->strings[t->series[s].type]);
                int64_t leaked = 0;
                for (size_t k = 0; k < json_count(by_type); k++) {
                    const json_value *entry = json_at(by_type, k);
                    if (!strcmp(json_str(json_get(entry, "api"), ""), api_name) &&
                        !strcmp(json_str(json_get(entry, "type"), ""), type_name))
                        leaked = json_int(json_get(entry, "objects"), 0);
                }
                free(type_name);
                fprintf(out, "<td class=\"%s\">%" PRId64 "</td>", leaked ? "bad-text" : "", leaked);
            }
            fputs("</tr>\n", out);
        }
        free(api_name);
    }
    fputs("</tbody></table></section>\n", out);
}

static void misuse_section(const plot_data *d, FILE *out)
{
    const json_value *misuse = json_get(d->report->root, "misuse");
    if (!json_count(misuse) && !d->misuse_count)
        return;
    fputs("<section class=\"panel\"><h2>Misused calls</h2>\n", out);
    if (json_count(misuse)) {
        for (size_t i = 0; i < json_count(misuse); i++) {
            const json_value *event = json_at(misuse, i);
            char when[32];
            units_time_ms(json_num(json_get(event, "time_ms"), 0), when, sizeof when);
            fprintf(out, "<details%s><summary><b>%s</b> &#8212; ", i < 3 ? " open" : "", when);
            html_text(out, json_str(json_get(event, "message"), "(no message)"));
            fputs("</summary><pre>", out);
            static const struct {
                const char *key, *title;
            } stacks[] = {{"call_frames", "the call"}, {"create_frames", "created at"}, {"release_frames", "released at"}};
            for (size_t s = 0; s < sizeof stacks / sizeof stacks[0]; s++) {
                const json_value *frames = json_get(event, stacks[s].key);
                if (!json_count(frames))
                    continue;
                fprintf(out, "%s:\n", stacks[s].title);
                for (size_t f = 0; f < json_count(frames); f++) {
                    char *frame = report_frame_string(json_at(frames, f));
                    fprintf(out, "  #%-2zu ", f);
                    html_text(out, frame);
                    fputc('\n', out);
                    free(frame);
                }
            }
            fputs("</pre></details>\n", out);
        }
    } else {
        fputs("<ul>\n", out);
        for (size_t i = 0; i < d->t->count; i++) {
            const timeline_row *row = &d->t->rows[i];
            if (row->event != TIMELINE_MISUSE)
                continue;
            char when[32];
            units_time_ms(row->time_ms, when, sizeof when);
            fprintf(out, "<li><b>%s</b> &#8212; ", when);
            html_text(out, *d->t->strings[row->call] ? d->t->strings[row->call] : "(call not named)");
            fputs(" on ", out);
            html_text(out, d->t->strings[row->type]);
            fprintf(out, " 0x%" PRIx64 "</li>\n", row->handle);
        }
        fputs("</ul>\n", out);
    }
    fputs("</section>\n", out);
}

static const char page_style[] =
    "*{box-sizing:border-box}"
    "body{margin:0;background:#f1f3f5;color:#212529;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,"
    "'DejaVu Sans',sans-serif}"
    "header{background:linear-gradient(120deg,#1b2a4e,#364fc7);color:#fff;padding:26px 0 22px}"
    ".wrap{max-width:1180px;margin:0 auto;padding:0 24px}"
    "header h1{margin:0;font-size:26px;font-weight:650;letter-spacing:.2px}"
    "header .sub{opacity:.82;margin-top:6px;font-size:13px;word-break:break-all}"
    ".brand{font-size:12px;text-transform:uppercase;letter-spacing:2px;opacity:.7;margin-bottom:6px}"
    ".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(148px,1fr));gap:14px;margin:22px 0}"
    ".card{background:#fff;border-radius:12px;padding:14px 16px;box-shadow:0 1px 3px rgba(0,0,0,.08);"
    "border-top:4px solid #adb5bd}"
    ".card.bad{border-top-color:#e03131}.card.good{border-top-color:#2f9e44}.card.neutral{border-top-color:#4263eb}"
    ".card-title{font-size:12px;color:#868e96;text-transform:uppercase;letter-spacing:.6px}"
    ".card-value{font-size:24px;font-weight:650;margin:4px 0 2px;white-space:nowrap}"
    ".card.bad .card-value{color:#c92a2a}.card.good .card-value{color:#2b8a3e}"
    ".card-detail{font-size:12px;color:#495057}"
    ".panel{background:#fff;border-radius:12px;padding:18px 20px;margin:0 0 18px;box-shadow:0 1px 3px rgba(0,0,0,.08)}"
    ".panel h2{font-size:17px;margin:0 0 10px}.panel h3{font-size:14px;margin:16px 0 8px;color:#495057}"
    "svg.chart{width:100%;height:auto;display:block}"
    ".pair{display:grid;grid-template-columns:1fr 1fr;gap:24px}"
    "@media (max-width:900px){.pair{grid-template-columns:1fr}}"
    ".hint{color:#868e96;font-size:12px;margin:6px 0 0}"
    "details{border:1px solid #e9ecef;border-radius:8px;margin:6px 0;padding:6px 10px;background:#fcfcfd}"
    "summary{cursor:pointer}"
    "pre{margin:8px 0 2px;font:12px/1.5 ui-monospace,'DejaVu Sans Mono',Menlo,monospace;white-space:pre-wrap;"
    "word-break:break-all;color:#343a40}"
    "table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}"
    "th,td{padding:6px 10px;text-align:right;border-bottom:1px solid #e9ecef}"
    "th:first-child,td:first-child{text-align:left}"
    "th{font-size:12px;color:#868e96;font-weight:600;text-transform:uppercase;letter-spacing:.4px}"
    "tr.api td{font-weight:650;background:#f8f9fa}td.type{padding-left:26px;font-family:ui-monospace,"
    "'DejaVu Sans Mono',monospace}"
    ".bad-text{color:#c92a2a;font-weight:650}.good-text{color:#2b8a3e;font-weight:600}"
    "footer{color:#868e96;font-size:12px;padding:8px 0 30px}"
    "code{background:#f1f3f5;border-radius:4px;padding:1px 5px}";

/* An input file as the page names it: "-" means nothing to a reader. */
static const char *input_name(const char *path)
{
    return strcmp(path, "-") ? path : "standard input";
}

/* What the page is titled after without --title: the program, else the
 * timeline's file. */
static const char *page_title(const plot_data *d)
{
    const char *executable = json_str(json_path(d->report->root, "process.executable"), NULL);
    if (d->title)
        return d->title;
    if (executable)
        return units_basename(executable);
    return strcmp(d->csv_path, "-") ? units_basename(d->csv_path) : input_name(d->csv_path);
}

static void write_html(plot_data *d, FILE *out)
{
    const json_value *root = d->report->root;
    const char *executable = json_str(json_path(root, "process.executable"), NULL);
    const char *title = page_title(d);
    char text[256];

    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>livetrack: ",
          out);
    html_text(out, title);
    fprintf(out, "</title>\n<style>%s</style></head>\n<body>\n<header><div class=\"wrap\">"
                 "<div class=\"brand\">livetrack report</div><h1>",
            page_style);
    html_text(out, title);
    fputs("</h1><div class=\"sub\">", out);
    if (executable) {
        html_text(out, executable);
        snprintf(text, sizeof text, " \xc2\xb7 pid %" PRId64, json_int(json_path(root, "process.pid"), 0));
        html_text(out, text);
    } else {
        html_text(out, input_name(d->csv_path));
    }
    units_time_ms(d->t1, text, sizeof text);
    fputs(" \xc2\xb7 ran ", out);
    html_text(out, text);
    fputs("</div></div></header>\n<main class=\"wrap\">\n", out);

    summary_cards(d, out);

    char note[256];
    fputs("<section class=\"panel\">", out);
    svg_open(out, PAGE_WIDTH, TIME_CHART_HEIGHT, "Live objects by type over time");
    objects_chart(d, out, 0, 0, note, sizeof note);
    fputs("</svg></section>\n<section class=\"panel\">", out);
    svg_open(out, PAGE_WIDTH, TIME_CHART_HEIGHT, "Live bytes over time");
    bytes_chart(d, out, 0, 0);
    fputs("</svg></section>\n", out);
    if (d->t->has_vm) {
        fputs("<section class=\"panel\">", out);
        svg_open(out, PAGE_WIDTH, TIME_CHART_HEIGHT, "Process memory over time");
        memory_chart(d, out, 0, 0);
        fputs("</svg></section>\n", out);
    }
    sites_section(d, out);
    fputs("<section class=\"panel\">", out);
    calls_charts(d, out);
    fputs("</section>\n", out);
    api_table(d, out);
    misuse_section(d, out);

    fprintf(out, "<footer>Made by livetrack %s from ", cli_version());
    html_text(out, input_name(d->csv_path));
    units_count((int64_t)d->t->count, text, sizeof text);
    fprintf(out, " (%s events)", text);
    if (d->json_path) {
        fputs(" and ", out);
        html_text(out, input_name(d->json_path));
    }
    fputs(".</footer>\n</main>\n</body></html>\n", out);
}

static void write_svg(plot_data *d, FILE *out)
{
    double height = 44 + 2 * TIME_CHART_HEIGHT + 16;
    char note[256];
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            PAGE_WIDTH + 40, height, PAGE_WIDTH + 40, height);
    char title[512];
    snprintf(title, sizeof title, "livetrack timeline: %s", page_title(d));
    fputs("<text x=\"20\" y=\"30\" style=\"font-size:18px;font-weight:650;fill:#1b2a4e\">", out);
    escape_xml(out, title);
    fputs("</text>\n", out);
    objects_chart(d, out, 20, 44, note, sizeof note);
    bytes_chart(d, out, 20, 44 + TIME_CHART_HEIGHT);
    fputs("</svg>\n", out);
}

/* Whether `text` ends with `suffix`, in any case. */
static int ends_with(const char *text, const char *suffix)
{
    size_t length = strlen(text), suffix_length = strlen(suffix);
    return length >= suffix_length && !strcasecmp(text + length - suffix_length, suffix);
}

/* Each input is opened once and read from that one stream: a pipe
 * (`<(...)`, /dev/stdin) gives its bytes to one reader only, and a FIFO
 * whose writer is done blocks a second open for ever. A file that cannot
 * be opened ends the command here, with the reason: taken for a CSV it
 * made "two CSV files given" of a mistyped report name. */
static FILE *open_input(const char *path)
{
    if (!strcmp(path, "-"))
        return stdin;
    FILE *in = fopen(path, "r");
    struct stat status;
    if (in && fstat(fileno(in), &status) == 0 && S_ISDIR(status.st_mode)) {
        fclose(in); /* a directory opens, and reads as an empty file */
        in = NULL;
        errno = EISDIR;
    }
    if (!in)
        cli_fail("cannot read %s: %s", path, strerror(errno));
    return in;
}

/* A report starts with '{'; any other file named .json is one too: one
 * after the program's own output (its reader skips those lines), or one
 * empty, cut or damaged (its reader then says what is wrong with it, where
 * calling it a second timeline would mislead). The first byte after the
 * blanks is looked at and put back on the stream (ungetc), so the reader
 * gets all of it; blanks before it mean nothing to either reader's
 * verdict on a file livetrack wrote (JSON skips them, a timeline starts
 * with its header). */
static int looks_like_json(FILE *in, const char *path)
{
    int c;
    while ((c = getc(in)) == ' ' || c == '\n' || c == '\r' || c == '\t')
        ;
    if (c != EOF)
        ungetc(c, in);
    return c == '{' || ends_with(path, ".json");
}

int cli_plot(int argc, char **argv)
{
    cli_parser parser;
    cli_parser_init(&parser, "plot", argc - 1, argv + 1);
    const char *inputs[2] = {NULL, NULL}, *output = NULL, *title = NULL;
    int given = 0;
    while (cli_more(&parser)) {
        if (cli_flag(&parser, "help", 'h')) {
            usage();
            return CLI_EXIT_OK;
        } else if (cli_value(&parser, "output", 'o', &output) || cli_value(&parser, "title", 0, &title)) {
            continue;
        } else if (cli_double_dash(&parser)) {
            continue;
        } else if (given < 2 && cli_positional(&parser, &inputs[given])) {
            given++;
        } else {
            cli_unknown(&parser);
        }
    }
    if (!given)
        cli_fail("no timeline given (usage: livetrack plot FILE.csv [FILE.json] -o REPORT.html)");
    if (!output)
        cli_fail("no output file (add -o REPORT.html, or -o TIMELINE.svg for the timeline alone)");
    if (given == 2 && !strcmp(inputs[0], "-") && !strcmp(inputs[1], "-"))
        cli_fail("- given twice; standard input holds one file");
    FILE *streams[2] = {NULL, NULL};
    int is_json[2] = {0, 0};
    for (int i = 0; i < given; i++) {
        streams[i] = open_input(inputs[i]);
        if (strcmp(inputs[i], "-"))
            is_json[i] = looks_like_json(streams[i], inputs[i]);
    }
    /* "-" is whatever the other input is not (as documented): the
     * timeline when it is the only one. */
    for (int i = 0; i < given; i++)
        if (!strcmp(inputs[i], "-"))
            is_json[i] = given == 2 && !is_json[1 - i];
    const char *csv_path = NULL, *json_path_arg = NULL;
    FILE *csv_in = NULL, *json_in = NULL;
    for (int i = 0; i < given; i++) {
        const char **slot = is_json[i] ? &json_path_arg : &csv_path;
        if (*slot)
            cli_fail("two %s files given (%s and %s); plot takes one timeline and one report",
                     slot == &csv_path ? "CSV" : "JSON", *slot, inputs[i]);
        *slot = inputs[i];
        *(is_json[i] ? &json_in : &csv_in) = streams[i];
    }
    if (!csv_path)
        cli_fail("no CSV timeline given (record one with 'livetrack run --csv FILE.csv')");

    char error[256];
    timeline t;
    if (!timeline_read_stream(csv_in, csv_path, &t, error, sizeof error))
        cli_fail("cannot read %s: %s", csv_path, error);
    report_file report = {NULL, NULL, NULL, 0};
    if (json_path_arg)
        report_load_stream(json_in, json_path_arg, &report);
    for (int i = 0; i < given; i++)
        if (streams[i] != stdin)
            fclose(streams[i]);

    plot_data d;
    memset(&d, 0, sizeof d);
    d.t = &t;
    d.report = &report;
    d.csv_path = csv_path;
    d.json_path = json_path_arg;
    d.title = title;
    prepare(&d);

    FILE *out = cli_open_output(output, 0);
    if (ends_with(output, ".svg"))
        write_svg(&d, out);
    else
        write_html(&d, out);
    cli_close_output(out, output);

    free_data(&d);
    timeline_free(&t);
    report_free(&report);
    return CLI_EXIT_OK;
}
