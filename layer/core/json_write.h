/*
 * JSON values (json_write.c), for the JSON report. Every function writes
 * with the unlocked stdio calls: the caller holds the stream's lock
 * (flockfile) for the whole document.
 */
#ifndef LIVETRACK_JSON_WRITE_H
#define LIVETRACK_JSON_WRITE_H

#include <stdint.h>
#include <stdio.h>

/* A string, or null for NULL. Quotes, backslashes and control characters
 * are escaped; bytes that are not UTF-8 (overlong forms, surrogates, past
 * U+10FFFF, stray continuation bytes) become U+FFFD, one per byte. */
void lt_json_string(FILE *out, const char *text);
void lt_json_u64(FILE *out, uint64_t value);
/* "0x1f": handles and addresses, which a JSON double cannot hold. */
void lt_json_hex(FILE *out, uint64_t value);
void lt_json_bool(FILE *out, int value);
/* Nanoseconds as milliseconds with three decimals, rounded. */
void lt_json_ms(FILE *out, uint64_t ns);
/* A line or column: null when unknown (0). */
void lt_json_optional_uint(FILE *out, unsigned value);

#endif
