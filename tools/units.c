/*
 * Numbers for people: binary byte units (KiB, MiB, GiB, as the core's
 * report), times in ms or s, counts with thousands separators.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli.h"

void units_bytes(double bytes, char *out, size_t size)
{
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double magnitude = fabs(bytes);
    unsigned unit = 0;
    while (magnitude >= 1024.0 && unit < 5) {
        magnitude /= 1024.0;
        bytes /= 1024.0;
        unit++;
    }
    if (unit == 0)
        snprintf(out, size, "%.0f B", bytes);
    else if (magnitude < 10.0)
        snprintf(out, size, "%.2f %s", bytes, names[unit]);
    else if (magnitude < 100.0)
        snprintf(out, size, "%.1f %s", bytes, names[unit]);
    else
        snprintf(out, size, "%.0f %s", bytes, names[unit]);
}

void units_time_ms(double ms, char *out, size_t size)
{
    double magnitude = fabs(ms);
    if (magnitude < 1.0)
        snprintf(out, size, "%.2f ms", ms);
    else if (magnitude < 100.0)
        snprintf(out, size, "%.1f ms", ms);
    else if (magnitude < 1000.0)
        snprintf(out, size, "%.0f ms", ms);
    else if (magnitude < 10000.0)
        snprintf(out, size, "%.2f s", ms / 1000.0);
    else if (magnitude < 120000.0)
        snprintf(out, size, "%.1f s", ms / 1000.0);
    else
        snprintf(out, size, "%.0f min %.0f s", floor(ms / 60000.0), fmod(ms / 1000.0, 60.0));
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
