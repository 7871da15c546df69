/*
 * Output names with %p and %% (path_pattern.c).
 */
#ifndef LIVETRACK_PATH_PATTERN_H
#define LIVETRACK_PATH_PATTERN_H

#include <stddef.h>

/* Expand %p in a path to the pid, and %% to %. Returns 0 when it does not
 * fit. */
int lt_expand_path(const char *pattern, char *out, size_t out_size);
/* 1 when such a path has a %p to expand (the "%p" of "%%p" is not one). */
int lt_path_has_pid(const char *pattern);
/* The file a path without %p names: %% read as %, into `out` (cut to
 * out_size); returns out. */
char *lt_unescape_path(const char *pattern, char *out, size_t out_size);

#endif
