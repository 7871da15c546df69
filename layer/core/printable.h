/*
 * Names as the text outputs print them: control characters made '?'
 * (printable.c says why). Also compiled into the livetrack command.
 */
#ifndef LIVETRACK_PRINTABLE_H
#define LIVETRACK_PRINTABLE_H

#include <stddef.h>

/* A buffer for lt_printable that holds any name worth printing whole. */
#define LT_PRINTABLE_NAME_MAX 256

/* Control characters in `length` bytes of text made '?', in place. */
void lt_make_printable(char *text, size_t length);

/* `text` when it holds no control character, else a copy in `buffer`
 * (`size` bytes, cut short if need be) with them made '?'. */
const char *lt_printable(const char *text, char *buffer, size_t size);

#endif
