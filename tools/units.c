/*
 * Numbers for people: binary byte units (KiB, MiB, GiB, as the core's
 * report), times in ms or s, counts with thousands separators.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli.h"

/* Three significant digits: the decimals a value gets once rounded, so
 * 9.996 reads "10.0" and 99.96 reads "100". */
static int decimals_for(double magnitude)
{
    return round(magnitude * 100.0) < 1000.0 ? 2 : round(magnitude * 10.0) < 1000.0 ? 1 : 0;
}

void units_bytes(double bytes, char *out, size_t size)
{
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double magnitude = fabs(bytes);
    unsigned unit = 0;
    /* The unit is chosen on the value as printed: 1048575 bytes read
     * "1.00 MiB", not "1024 KiB". */
    while (unit < 5 && round(magnitude) >= 1024.0) {
        magnitude /= 1024.0;
        bytes /= 1024.0;
        unit++;
    }
    if (unit == 0)
        snprintf(out, size, "%.0f B", bytes);
    else
        snprintf(out, size, "%.*f %s", decimals_for(magnitude), bytes, names[unit]);
}

void units_time_ms(double ms, char *out, size_t size)
{
    double magnitude = fabs(ms);
    if (magnitude < 1.0)
        snprintf(out, size, "%.2f ms", ms);
    else if (magnitude < 100.0)
        snprintf(out, size, "%.1f ms", ms);
    else if (round(magnitude) < 1000.0)
        snprintf(out, size, "%.0f ms", ms);
    else if (magnitude < 10000.0)
        snprintf(out, size, "%.2f s", ms / 1000.0);
    else if (magnitude < 120000.0)
        snprintf(out, size, "%.1f s", ms / 1000.0);
    else {
        /* Whole seconds first, then split: 179.6 s is "3 min 0 s", where
         * rounding the seconds alone made "2 min 60 s". */
        double seconds = round(magnitude / 1000.0);
        snprintf(out, size, "%s%.0f min %.0f s", ms < 0 ? "-" : "", floor(seconds / 60.0), fmod(seconds, 60.0));
    }
}

void units_count(int64_t count, char *out, size_t size)
{
    char digits[32];
    int negative = count < 0;
    uint64_t magnitude = negative ? (uint64_t)0 - (uint64_t)count : (uint64_t)count;
    snprintf(digits, sizeof digits, "%" PRIu64, magnitude);
    size_t length = strlen(digits), used = 0;
    if (negative && used + 1 < size)
        out[used++] = '-';
    for (size_t i = 0; i < length && used + 1 < size; i++) {
        if (i && (length - i) % 3 == 0 && used + 2 < size)
            out[used++] = ',';
        out[used++] = digits[i];
    }
    if (size)
        out[used < size ? used : size - 1] = '\0';
}

const char *units_basename(const char *path)
{
    if (!path)
        return "";
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}
