/*
 * Output names with %p (LIVETRACK_JSON, _CSV, _OUTPUT): %p becomes the
 * pid, %% a literal % (livetrack run writes a working directory's % that
 * way). One reading of that syntax, for the core, which expands the names
 * and decides "a file per process", and for the livetrack command, which
 * checks the files the program is to write.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "path_pattern.h"

int lt_path_has_pid(const char *pattern)
{
    for (const char *p = pattern; p && *p; p++) {
        if (p[0] == '%' && p[1] == 'p')
            return 1;
        if (p[0] == '%' && p[1] == '%')
            p++;
    }
    return 0;
}

int lt_expand_path(const char *pattern, char *out, size_t out_size)
{
    size_t used = 0;
    for (const char *p = pattern; *p; p++) {
        char piece[32];
        const char *text = piece;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(piece, sizeof piece, "%ld", (long)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            /* a literal %: a directory named "a%pb" written as "a%%pb" */
            piece[0] = '%';
            piece[1] = '\0';
            p++;
        } else {
            piece[0] = *p;
            piece[1] = '\0';
        }
        size_t length = strlen(text);
        if (used + length >= out_size)
            return 0;
        memcpy(out + used, text, length);
        used += length;
    }
    out[used] = '\0';
    return 1;
}

char *lt_unescape_path(const char *pattern, char *out, size_t out_size)
{
    size_t used = 0;
    for (const char *p = pattern; *p && used + 1 < out_size; p++) {
        out[used++] = *p;
        if (p[0] == '%' && p[1] == '%')
            p++;
    }
    if (out_size)
        out[used] = '\0';
    return out;
}
