/*
 * JSON values (json_write.c), for the JSON report. Every function writes
 * with the unlocked stdio calls: the caller holds the stream's lock
 * (flockfile) for the whole document.
 */
#ifndef LIVETRACK_JSON_WRITE_H
#define LIVETRACK_JSON_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Room enough for any number the formatters below write. */
#define LT_JSON_NUMBER_MAX 32

/* The same numbers into a buffer (no terminating NUL), for writers that
 * assemble a line in memory; each returns the length written. */
size_t lt_json_format_u64(char *out, uint64_t value);
size_t lt_json_format_hex(char *out, uint64_t value); /* "0x1f", quotes included */
size_t lt_json_format_ms(char *out, uint64_t ns);
/* value / unit with `decimals` digits after a '.', rounded to nearest
 * with ties to even: what printf's %.Nf prints of the exact quotient, but
 * always with a '.', where %f follows the program's LC_NUMERIC (a program
 * that calls setlocale under a German or French locale gets "1,5", which
 * breaks the CSV timeline's columns). For the timeline's and the text
 * report's numbers too. unit * 10^decimals must fit in 64 bits. */
size_t lt_format_fixed(char *out, uint64_t value, uint64_t unit, unsigned decimals);

/* A string, or null for NULL. Quotes, backslashes and control characters
 * are escaped; bytes that are not UTF-8 (overlong forms, surrogates, past
 * U+10FFFF, stray continuation bytes) become U+FFFD, one per byte. */
void lt_json_string(FILE *out, const char *text);
/* Length of the valid UTF-8 sequence at `s` (2 to 4), 0 when invalid:
 * overlong forms, surrogates and code points past U+10FFFF are invalid.
 * Also used by the livetrack command's XML escaper. */
size_t lt_utf8_sequence(const unsigned char *s);
void lt_json_u64(FILE *out, uint64_t value);
/* "0x1f": handles and addresses, which a JSON double cannot hold. */
void lt_json_hex(FILE *out, uint64_t value);
void lt_json_bool(FILE *out, int value);
/* Nanoseconds as milliseconds with three decimals, rounded. */
void lt_json_ms(FILE *out, uint64_t ns);
/* A line or column: null when unknown (0). */
void lt_json_optional_uint(FILE *out, unsigned value);

#endif
