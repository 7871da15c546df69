/*
 * Step functions over time (a live count holds its value until the next
 * event changes it) and their reduction to a fixed number of buckets for
 * drawing: the minimum and maximum each bucket saw. A bucket's maximum is
 * the highest value reached in it, so the peak always survives.
 */
#ifndef LIVETRACK_SERIES_H
#define LIVETRACK_SERIES_H

#include <stddef.h>

typedef struct step_series {
    double *t, *v; /* value v[i] from time t[i] on; t ascending */
    size_t count, capacity;
    double max, max_t; /* the first time the highest value was reached */
    double last;
} step_series;

void series_add(step_series *series, double t, double v);
void series_free(step_series *series);

typedef struct series_buckets {
    size_t count;
    double t0, width; /* bucket i covers [t0 + i*width, t0 + (i+1)*width) */
    double *min, *max; /* NaN where the series has no value yet */
} series_buckets;

/* Fills `out` (allocating its arrays) with `buckets` buckets over [t0, t1]. */
void series_bucketize(const step_series *series, double t0, double t1, size_t buckets, series_buckets *out);
void series_buckets_free(series_buckets *buckets);

#endif
