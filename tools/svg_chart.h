/*
 * Charts as SVG, written straight to a file: a time chart of step series
 * (live objects, bytes, process memory) and a horizontal bar chart. Both
 * write a <g> of a given size, so the HTML page can put each in its own
 * <svg> and the standalone SVG can stack them in one.
 *
 * No scripts: hovering shows <title> tooltips, which every browser and
 * SVG viewer supports.
 */
#ifndef LIVETRACK_SVG_CHART_H
#define LIVETRACK_SVG_CHART_H

#include <stdio.h>

#include "series.h"

typedef enum chart_unit { CHART_COUNT, CHART_BYTES } chart_unit;

#define CHART_MAX_LINES 16
#define CHART_MAX_MARKERS 4

typedef struct chart_line {
    const char *name;
    const char *color;
    const step_series *series;
    int dashed;
    int area;            /* fill below the line */
    int starts_at_zero;  /* 0 before its first point (live counts), else no line there */
} chart_line;

typedef struct chart_marker {
    double t, v;
    const char *label;
    const char *color;
} chart_marker;

typedef struct time_chart {
    const char *title;
    const char *y_label;
    chart_unit unit;
    double width, height;
    double t0, t1;
    chart_line lines[CHART_MAX_LINES];
    size_t line_count;
    chart_marker markers[CHART_MAX_MARKERS];
    size_t marker_count;
    const double *events;  /* times of instant events (misuse), drawn as ticks */
    size_t event_count;
    const char *event_label;
    const char *note;      /* extra line under the title (e.g. "3 more types not drawn") */
    size_t downsample_above; /* points per line above which it is drawn as min/max buckets */
} time_chart;

/* Writes the chart as <g transform="translate(x,y)">...</g>. */
void chart_time(FILE *out, const time_chart *chart, double x, double y);

typedef struct chart_bar {
    const char *label;
    double value;        /* bar length; may be negative */
    const char *text;    /* shown after the bar; NULL: the value in the chart's unit */
    const char *tooltip; /* NULL: label */
} chart_bar;

/* Height a bar chart of `count` bars takes. */
double chart_bars_height(size_t count);
void chart_bars(FILE *out, const char *title, const chart_bar *bars, size_t count, chart_unit unit, const char *color,
                double width, double x, double y);

/* Tick labels and other values in the chart's unit ("1.5 MiB", "1,200"). */
void chart_format_value(chart_unit unit, double value, char *out, size_t size);

#endif
