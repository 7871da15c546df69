/*
 * Step series and min/max bucketing (see series.h).
 *
 * Bucketing walks the points once: each bucket starts with the value
 * carried in from before it and widens by every point inside it, so the
 * cost is O(points + buckets) however the points are spread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "series.h"

void series_add(step_series *series, double t, double v)
{
    if (series->count == series->capacity) {
        series->capacity = series->capacity ? series->capacity * 2 : 256;
        series->t = cli_realloc(series->t, series->capacity, sizeof *series->t);
        series->v = cli_realloc(series->v, series->capacity, sizeof *series->v);
    }
    if (!series->count || v > series->max) {
        series->max = v;
        series->max_t = t;
    }
    series->t[series->count] = t;
    series->v[series->count] = v;
    series->count++;
    series->last = v;
}

void series_free(step_series *series)
{
    free(series->t);
    free(series->v);
    memset(series, 0, sizeof *series);
}

void series_bucketize(const step_series *series, double t0, double t1, size_t buckets, series_buckets *out)
{
    out->count = buckets;
    out->t0 = t0;
    out->width = (t1 > t0 ? t1 - t0 : 1.0) / (double)buckets;
    out->min = cli_alloc(buckets * sizeof *out->min);
    out->max = cli_alloc(buckets * sizeof *out->max);
    size_t i = 0;
    double carry = NAN;
    for (size_t b = 0; b < buckets; b++) {
        double end = b + 1 == buckets ? INFINITY : t0 + (double)(b + 1) * out->width;
        double low = carry, high = carry;
        for (; i < series->count && series->t[i] < end; i++) {
            double v = series->v[i];
            if (isnan(low) || v < low)
                low = v;
            if (isnan(high) || v > high)
                high = v;
            carry = v;
        }
        out->min[b] = low;
        out->max[b] = high;
    }
}

void series_buckets_free(series_buckets *buckets)
{
    free(buckets->min);
    free(buckets->max);
    memset(buckets, 0, sizeof *buckets);
}
