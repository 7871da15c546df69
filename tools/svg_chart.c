/*
 * SVG charts (see svg_chart.h).
 *
 * Axes get "nice" ticks (1, 2 or 5 times a power of ten, in the unit the
 * largest value reads best in: bytes in KiB/MiB/GiB, time in ms or s).
 * A line with more points than the plot has room for is drawn as a band
 * from the minimum to the maximum of each bucket of time, and the chart
 * says so: the reader sees every spike, the file stays small, and the
 * peak marker is placed from the exact data, not from the buckets.
 */
#include <math.h>
#include <string.h>

#include "cli.h"
#include "escape.h"
#include "svg_chart.h"

#define FONT_SIZE 12.0
#define CHAR_WIDTH 7.2 /* average advance of a 12px sans-serif character, generously */
#define MARGIN_LEFT 84.0
#define MARGIN_RIGHT 28.0
#define MARGIN_BOTTOM 44.0
#define LEGEND_ROW 20.0
#define BAR_ROW 26.0
#define BAR_TOP 34.0

static const char *const byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

void chart_format_value(chart_unit unit, double value, char *out, size_t size)
{
    if (unit == CHART_BYTES)
        units_bytes(value, out, size);
    else if (value == floor(value) && fabs(value) < 9e15)
        units_count((int64_t)value, out, size);
    else
        snprintf(out, size, "%.2f", value);
}

/* 1, 2 or 5 times a power of ten, near range/target. */
static double nice_step(double range, int target)
{
    if (!(range > 0))
        return 1.0;
    double raw = range / target, magnitude = pow(10.0, floor(log10(raw))), r = raw / magnitude;
    return (r <= 1.0 ? 1.0 : r <= 2.0 ? 2.0 : r <= 5.0 ? 5.0 : 10.0) * magnitude;
}

/* Trailing zeros off: 0.5, 2, 2.5. */
static void format_number(double value, char *out, size_t size)
{
    if (fabs(value) < 1e-9)
        value = 0; /* no "-0" from rounding */
    snprintf(out, size, "%.3f", value);
    char *dot = strchr(out, '.');
    if (dot) {
        char *end = out + strlen(out) - 1;
        while (end > dot && *end == '0')
            *end-- = '\0';
        if (end == dot)
            *end = '\0';
    }
}

typedef struct axis {
    double low, high;   /* data range shown */
    double step;        /* between ticks, in data units */
    double scale;       /* data units per label unit */
    const char *suffix; /* label unit */
} axis;

static axis value_axis(chart_unit unit, double max)
{
    axis a = {0, max > 0 ? max : 1, 1, 1, ""};
    if (unit == CHART_BYTES) {
        unsigned u = 0;
        while (a.high / a.scale >= 1024.0 && u < 5) {
            a.scale *= 1024.0;
            u++;
        }
        a.suffix = byte_units[u];
        a.step = nice_step(a.high / a.scale, 5) * a.scale;
        if (u == 0 && a.step < 1)
            a.step = 1;
    } else {
        a.step = nice_step(a.high, 5);
        if (a.step < 1)
            a.step = 1;
    }
    a.high = ceil(a.high / a.step - 1e-9) * a.step;
    if (a.high <= 0)
        a.high = a.step;
    return a;
}

static axis time_axis(double t0, double t1)
{
    axis a = {t0, t1 > t0 ? t1 : t0 + 1, 1, 1, " ms"};
    if (a.high - a.low >= 2000.0) {
        a.scale = 1000.0;
        a.suffix = " s";
    }
    a.step = nice_step((a.high - a.low) / a.scale, 8) * a.scale;
    return a;
}

static void axis_label(const axis *a, double value, char *out, size_t size)
{
    char number[32];
    format_number(value / a->scale, number, sizeof number);
    if (a->scale == 1 && !*a->suffix && fabs(value) >= 1000 && value == floor(value))
        units_count((int64_t)value, number, sizeof number);
    snprintf(out, size, "%s%s%s", number, *a->suffix && a->suffix[0] != ' ' ? " " : "", a->suffix);
}

typedef struct frame {
    double left, top, right, bottom;
    axis x, y;
} frame;

static double px(const frame *f, double t) { return f->left + (t - f->x.low) / (f->x.high - f->x.low) * (f->right - f->left); }
static double py(const frame *f, double v) { return f->bottom - v / f->y.high * (f->bottom - f->top); }

static void text(FILE *out, double x, double y, const char *anchor, const char *style, const char *content)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s%s%s>", x, y, anchor, style ? " style=\"" : "",
            style ? style : "", style ? "\"" : "");
    escape_xml(out, content);
    fputs("</text>\n", out);
}

static double legend_item_width(const char *label) { return 22.0 + CHAR_WIDTH * (double)strlen(label) + 18.0; }

/* Rows the legend needs at this width. */
static size_t legend_rows(const time_chart *chart, const char *const *labels, double width)
{
    size_t rows = chart->line_count || chart->event_count ? 1 : 0;
    double x = 0;
    for (size_t i = 0; i < chart->line_count + (chart->event_count ? 1 : 0); i++) {
        double w = legend_item_width(labels[i]);
        if (x > 0 && x + w > width) {
            rows++;
            x = 0;
        }
        x += w;
    }
    return rows;
}

static void exact_line(FILE *out, const frame *f, const chart_line *line)
{
    const step_series *s = line->series;
    fputs("<path d=\"", out);
    if (line->starts_at_zero)
        fprintf(out, "M%.1f %.1fH%.1fV%.1f", px(f, f->x.low), py(f, 0), px(f, s->t[0]), py(f, s->v[0]));
    else
        fprintf(out, "M%.1f %.1f", px(f, s->t[0]), py(f, s->v[0]));
    double last_x = px(f, s->t[0]), last_y = py(f, s->v[0]);
    for (size_t i = 1; i < s->count; i++) {
        double x = px(f, s->t[i]), y = py(f, s->v[i]);
        if (y == last_y)
            continue;
        if (x != last_x)
            fprintf(out, "H%.1f", x);
        fprintf(out, "V%.1f", y);
        last_x = x;
        last_y = y;
    }
    fprintf(out, "H%.1f", f->right);
    if (line->area) {
        fprintf(out, "V%.1fH%.1fZ\" fill=\"%s\" fill-opacity=\"0.13\" stroke=\"none\"/>\n", py(f, 0),
                line->starts_at_zero ? px(f, f->x.low) : px(f, s->t[0]), line->color);
        exact_line(out, f, &(chart_line){line->name, line->color, line->series, line->dashed, 0, line->starts_at_zero});
        return;
    }
    fprintf(out, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" stroke-linejoin=\"round\"%s/>\n", line->color,
            line->dashed ? " stroke-dasharray=\"5 4\"" : "");
}

/* A band from min to max of each bucket, and the max as a line on top. */
static void bucketed_line(FILE *out, const frame *f, const chart_line *line, size_t buckets)
{
    series_buckets b;
    series_bucketize(line->series, f->x.low, f->x.high, buckets, &b);
    double width = (f->right - f->left) / (double)buckets;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: the band (and area), pass 1: the line of maxima */
        size_t i = 0;
        while (i < buckets) {
            while (i < buckets && isnan(b.max[i]) && !line->starts_at_zero)
                i++;
            if (i == buckets)
                break;
            size_t start = i;
            while (i < buckets && (!isnan(b.max[i]) || line->starts_at_zero))
                i++;
            fputs("<path d=\"", out);
            for (size_t k = start; k < i; k++) {
                double high = isnan(b.max[k]) ? 0 : b.max[k];
                double x0 = f->left + (double)k * width;
                fprintf(out, k == start ? "M%.1f %.1f" : "H%.1fV%.1f", x0, py(f, high));
                if (k == start)
                    fprintf(out, "H%.1f", x0 + width);
                else
                    fprintf(out, "H%.1f", x0 + width);
            }
            if (pass == 0) {
                if (line->area) {
                    fprintf(out, "V%.1fH%.1fZ\" fill=\"%s\" fill-opacity=\"0.13\" stroke=\"none\"/>\n<path d=\"",
                            py(f, 0), f->left + (double)start * width, line->color);
                    for (size_t k = start; k < i; k++) {
                        double high = isnan(b.max[k]) ? 0 : b.max[k];
                        fprintf(out, k == start ? "M%.1f %.1f" : "H%.1fV%.1f", f->left + (double)k * width,
                                py(f, high));
                        fprintf(out, "H%.1f", f->left + (double)(k + 1) * width);
                    }
                }
                for (size_t k = i; k-- > start;) {
                    double low = isnan(b.min[k]) ? 0 : b.min[k];
                    fprintf(out, "V%.1fH%.1f", py(f, low), f->left + (double)k * width);
                }
                fprintf(out, "Z\" fill=\"%s\" fill-opacity=\"0.35\" stroke=\"none\"/>\n", line->color);
            } else {
                fprintf(out, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.4\"%s/>\n", line->color,
                        line->dashed ? " stroke-dasharray=\"5 4\"" : "");
            }
        }
    }
    series_buckets_free(&b);
}

void chart_time(FILE *out, const time_chart *chart, double x, double y)
{
    char label[256], value[64];
    const char *labels[CHART_MAX_LINES + 1];
    char label_text[CHART_MAX_LINES + 1][192];
    for (size_t i = 0; i < chart->line_count; i++) {
        chart_format_value(chart->unit, chart->lines[i].series->count ? chart->lines[i].series->max : 0, value,
                           sizeof value);
        snprintf(label_text[i], sizeof label_text[i], "%s (peak %s)", chart->lines[i].name, value);
        labels[i] = label_text[i];
    }
    if (chart->event_count) {
        snprintf(label_text[chart->line_count], sizeof label_text[0], "%s (%zu)", chart->event_label,
                 chart->event_count);
        labels[chart->line_count] = label_text[chart->line_count];
    }

    size_t rows = legend_rows(chart, labels, chart->width - MARGIN_LEFT);
    int downsampled = 0;
    size_t limit = chart->downsample_above ? chart->downsample_above : 2000;
    for (size_t i = 0; i < chart->line_count; i++)
        downsampled |= chart->lines[i].series->count > limit;
    double header = 30.0 + (chart->note ? 18.0 : 0) + (downsampled ? 18.0 : 0) + (double)rows * LEGEND_ROW + 10.0;

    frame f;
    f.left = MARGIN_LEFT;
    f.right = chart->width - MARGIN_RIGHT;
    f.top = header;
    f.bottom = chart->height - MARGIN_BOTTOM;
    double max = 0;
    for (size_t i = 0; i < chart->line_count; i++)
        if (chart->lines[i].series->count && chart->lines[i].series->max > max)
            max = chart->lines[i].series->max;
    f.y = value_axis(chart->unit, max * 1.08); /* headroom for the peak label */
    f.x = time_axis(chart->t0, chart->t1);
    size_t buckets = (size_t)((f.right - f.left) / 2.0);

    fprintf(out, "<g transform=\"translate(%.1f,%.1f)\" font-size=\"%.0f\">\n", x, y, FONT_SIZE);
    text(out, 0, 18, "start", "font-size:15px;font-weight:600;fill:#212529", chart->title);
    double line_y = 36;
    if (chart->note) {
        text(out, 0, line_y, "start", "fill:#868e96", chart->note);
        line_y += 18;
    }
    if (downsampled) {
        size_t most = 0;
        for (size_t i = 0; i < chart->line_count; i++)
            if (chart->lines[i].series->count > most)
                most = chart->lines[i].series->count;
        char count[32];
        units_count((int64_t)most, count, sizeof count);
        snprintf(label, sizeof label,
                 "Downsampled: up to %s points per line drawn as %zu time buckets; the band shows each "
                 "bucket's min to max, so no peak is lost.",
                 count, buckets);
        text(out, 0, line_y, "start", "fill:#e8590c", label);
        line_y += 18;
    }

    /* legend */
    double lx = MARGIN_LEFT, ly = line_y + 2;
    for (size_t i = 0; i < chart->line_count + (chart->event_count ? 1 : 0); i++) {
        double w = legend_item_width(labels[i]);
        if (lx > MARGIN_LEFT && lx + w > chart->width) {
            lx = MARGIN_LEFT;
            ly += LEGEND_ROW;
        }
        if (i < chart->line_count) {
            const chart_line *line = &chart->lines[i];
            if (line->dashed)
                fprintf(out, "<path d=\"M%.1f %.1fh14\" stroke=\"%s\" stroke-width=\"2.5\" stroke-dasharray=\"4 3\"/>\n",
                        lx, ly + 6, line->color);
            else
                fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" rx=\"2\" fill=\"%s\"/>\n", lx,
                        ly + 1, line->color);
        } else {
            fprintf(out, "<path d=\"M%.1f %.1fl5 -9l5 9z\" fill=\"#e03131\"/>\n", lx + 2, ly + 11);
        }
        text(out, lx + 20, ly + 10, "start", "fill:#495057", labels[i]);
        lx += w;
    }

    /* grid and axes */
    fputs("<g stroke=\"#e9ecef\" stroke-width=\"1\">\n", out);
    for (double v = 0; v <= f.y.high + f.y.step * 1e-6; v += f.y.step)
        fprintf(out, "<path d=\"M%.1f %.1fH%.1f\"/>\n", f.left, py(&f, v), f.right);
    double first_tick = ceil(f.x.low / f.x.step - 1e-9) * f.x.step;
    for (double t = first_tick; t <= f.x.high + f.x.step * 1e-6; t += f.x.step)
        fprintf(out, "<path d=\"M%.1f %.1fV%.1f\"/>\n", px(&f, t), f.top, f.bottom);
    fputs("</g>\n", out);
    fputs("<g fill=\"#868e96\">\n", out);
    for (double v = 0; v <= f.y.high + f.y.step * 1e-6; v += f.y.step) {
        if (chart->unit == CHART_BYTES)
            axis_label(&(axis){0, 0, 0, f.y.scale, f.y.suffix}, v, label, sizeof label);
        else
            chart_format_value(CHART_COUNT, v, label, sizeof label);
        text(out, f.left - 8, py(&f, v) + 4, "end", NULL, label);
    }
    for (double t = first_tick; t <= f.x.high + f.x.step * 1e-6; t += f.x.step) {
        axis_label(&f.x, t, label, sizeof label);
        text(out, px(&f, t), f.bottom + 18, "middle", NULL, label);
    }
    fputs("</g>\n", out);
    fprintf(out, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#adb5bd\"/>\n", f.left, f.bottom, f.right);
    text(out, (f.left + f.right) / 2, chart->height - 8, "middle", "fill:#495057", "time since the program started");
    fprintf(out, "<text transform=\"translate(16,%.1f) rotate(-90)\" text-anchor=\"middle\" style=\"fill:#495057\">",
            (f.top + f.bottom) / 2);
    escape_xml(out, chart->y_label);
    fputs("</text>\n", out);

    /* lines, the widest areas first so lines stay visible */
    for (size_t i = 0; i < chart->line_count; i++) {
        const chart_line *line = &chart->lines[i];
        if (!line->series->count)
            continue;
        fputs("<g>", out);
        chart_format_value(chart->unit, line->series->max, value, sizeof value);
        fputs("<title>", out);
        escape_xml(out, line->name);
        fprintf(out, ": peak %s, at the end ", value);
        chart_format_value(chart->unit, line->series->last, value, sizeof value);
        escape_xml(out, value);
        fputs("</title>\n", out);
        if (line->series->count > limit)
            bucketed_line(out, &f, line, buckets);
        else
            exact_line(out, &f, line);
        fputs("</g>\n", out);
    }

    /* instant events along the top edge */
    if (chart->event_count) {
        fputs("<g fill=\"#e03131\">\n", out);
        double last_x = -1;
        for (size_t i = 0; i < chart->event_count; i++) {
            double ex = px(&f, chart->events[i]);
            if (ex - last_x < 3)
                continue; /* one mark per few pixels is enough */
            last_x = ex;
            units_time_ms(chart->events[i], value, sizeof value);
            fprintf(out, "<path d=\"M%.1f %.1fl-5 -9h10z\"><title>", ex, f.top);
            escape_xml(out, chart->event_label);
            fprintf(out, " at %s</title></path>\n", value);
            fprintf(out, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"#e03131\" stroke-opacity=\"0.35\" "
                         "stroke-dasharray=\"2 3\"/>\n",
                    ex, f.top, f.bottom);
        }
        fputs("</g>\n", out);
    }

    /* markers last, on top of everything */
    for (size_t i = 0; i < chart->marker_count; i++) {
        const chart_marker *m = &chart->markers[i];
        double mx = px(&f, m->t), my = py(&f, m->v);
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"2\"/>\n", mx,
                my, m->color);
        double label_width = CHAR_WIDTH * (double)strlen(m->label);
        int right = mx + 10 + label_width < f.right;
        double ty = my - 10 < f.top + 12 ? my + 20 : my - 10;
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" style=\"font-weight:600;fill:%s;"
                     "paint-order:stroke;stroke:#fff;stroke-width:4px;stroke-linejoin:round\">",
                right ? mx + 10 : mx - 10, ty, right ? "start" : "end", m->color);
        escape_xml(out, m->label);
        fputs("</text>\n", out);
    }
    fputs("</g>\n", out);
}

double chart_bars_height(size_t count) { return BAR_TOP + (double)(count ? count : 1) * BAR_ROW + 8.0; }

void chart_bars(FILE *out, const char *title, const chart_bar *bars, size_t count, chart_unit unit, const char *color,
                double width, double x, double y)
{
    fprintf(out, "<g transform=\"translate(%.1f,%.1f)\" font-size=\"%.0f\">\n", x, y, FONT_SIZE);
    text(out, 0, 18, "start", "font-size:15px;font-weight:600;fill:#212529", title);
    if (!count) {
        text(out, 0, BAR_TOP + 16, "start", "fill:#868e96", "nothing to show");
        fputs("</g>\n", out);
        return;
    }
    /* Narrow charts (two side by side) give the labels more of their width. */
    double label_width = width * (width < 700 ? 0.46 : 0.36), value_width = 96;
    double low = 0, high = 0;
    for (size_t i = 0; i < count; i++) {
        if (bars[i].value < low)
            low = bars[i].value;
        if (bars[i].value > high)
            high = bars[i].value;
    }
    if (high - low <= 0)
        high = 1;
    double area = width - label_width - value_width;
    double zero = label_width + (-low) / (high - low) * area;
    /* Labels are often identifiers, wider than average text. */
    size_t max_chars = (size_t)((label_width - 16) / (CHAR_WIDTH + 0.4));
    char label[512], value[64];
    for (size_t i = 0; i < count; i++) {
        double row = BAR_TOP + (double)i * BAR_ROW;
        const chart_bar *bar = &bars[i];
        fputs("<g><title>", out);
        escape_xml(out, bar->tooltip ? bar->tooltip : bar->label);
        fputs("</title>\n", out);
        if (i % 2 == 0)
            fprintf(out, "<rect x=\"0\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f8f9fa\"/>\n", row - 3,
                    width, BAR_ROW);
        snprintf(label, sizeof label, "%s", bar->label);
        if (strlen(label) > max_chars && max_chars > 3) {
            /* Keep the end: "file.c:42)" tells more than the start. The
             * cut moves to a character boundary so the UTF-8 stays valid. */
            size_t cut = strlen(label) - (max_chars - 1);
            while (label[cut] && ((unsigned char)label[cut] & 0xc0) == 0x80)
                cut++;
            memmove(label + 3, label + cut, strlen(label + cut) + 1);
            memcpy(label, "\xe2\x80\xa6", 3); /* U+2026 HORIZONTAL ELLIPSIS */
        }
        text(out, label_width - 10, row + 14, "end", "fill:#343a40", label);
        double length = fabs(bar->value) / (high - low) * area;
        double bx = bar->value < 0 ? zero - length : zero;
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"3\" fill=\"%s\"/>\n", bx, row,
                length < 1 && bar->value ? 1 : length, BAR_ROW - 6, bar->value < 0 ? "#12b886" : color);
        if (bar->text)
            snprintf(value, sizeof value, "%s", bar->text);
        else
            chart_format_value(unit, bar->value, value, sizeof value);
        double tx = bar->value < 0 ? zero + 6 : zero + length + 6;
        text(out, tx, row + 14, "start", "fill:#495057", value);
        fputs("</g>\n", out);
    }
    if (low < 0)
        fprintf(out, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"#adb5bd\"/>\n", zero, BAR_TOP - 4,
                BAR_TOP + (double)count * BAR_ROW);
    fputs("</g>\n", out);
}
