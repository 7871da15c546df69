/*
 * JSON values for the JSON report (see json_write.h): strings escaped
 * to valid UTF-8, integers, hex handles and milliseconds, written with
 * the unlocked stdio calls (the caller holds the stream's lock).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json_write.h"

static void put_escaped_byte(FILE *out, unsigned char c)
{
    switch (c) {
    case '"': fputs_unlocked("\\\"", out); return;
    case '\\': fputs_unlocked("\\\\", out); return;
    case '\n': fputs_unlocked("\\n", out); return;
    case '\r': fputs_unlocked("\\r", out); return;
    case '\t': fputs_unlocked("\\t", out); return;
    case '\b': fputs_unlocked("\\b", out); return;
    case '\f': fputs_unlocked("\\f", out); return;
    default:
        if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            putc_unlocked(c, out);
    }
}

size_t lt_utf8_sequence(const unsigned char *s)
{
    unsigned char c = s[0];
    unsigned char low = 0x80, high = 0xbf;
    size_t length;
    if (c >= 0xc2 && c <= 0xdf)
        length = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        length = 3;
        if (c == 0xe0)
            low = 0xa0;
        if (c == 0xed)
            high = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        length = 4;
        if (c == 0xf0)
            low = 0x90;
        if (c == 0xf4)
            high = 0x8f;
    } else
        return 0;
    if (s[1] < low || s[1] > high)
        return 0;
    for (size_t i = 2; i < length; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return length;
}

void lt_json_string(FILE *out, const char *text)
{
    if (!text) {
        fputs_unlocked("null", out);
        return;
    }
    putc_unlocked('"', out);
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        if (*s < 0x80) {
            put_escaped_byte(out, *s++);
            continue;
        }
        size_t length = lt_utf8_sequence(s);
        if (length) {
            fwrite_unlocked(s, 1, length, out);
            s += length;
        } else {
            fputs_unlocked("\\ufffd", out);
            s++;
        }
    }
    putc_unlocked('"', out);
}

/* Numbers are formatted by hand: with a million objects, fprintf's
 * format parsing was most of the JSON report's time. */
size_t lt_json_format_u64(char *out, uint64_t value)
{
    char digits[24];
    size_t at = sizeof digits;
    do {
        digits[--at] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    memcpy(out, digits + at, sizeof digits - at);
    return sizeof digits - at;
}

size_t lt_json_format_hex(char *out, uint64_t value)
{
    static const char hex[] = "0123456789abcdef";
    char digits[24];
    size_t at = sizeof digits;
    digits[--at] = '"';
    do {
        digits[--at] = hex[value & 15];
        value >>= 4;
    } while (value);
    digits[--at] = 'x';
    digits[--at] = '0';
    digits[--at] = '"';
    memcpy(out, digits + at, sizeof digits - at);
    return sizeof digits - at;
}

size_t lt_format_fixed(char *out, uint64_t value, uint64_t unit, unsigned decimals)
{
    uint64_t scale = 1;
    for (unsigned i = 0; i < decimals; i++)
        scale *= 10;
    uint64_t whole = value / unit;
    uint64_t scaled = value % unit * scale;
    uint64_t fraction = scaled / unit, left = scaled % unit;
    /* To nearest, a tie to even, as printf rounds: 4352 bytes (4.25 KiB)
     * stays "4.2 KiB" as it was written before. */
    uint64_t last_digit = decimals ? fraction : whole;
    if (left > unit - left || (left == unit - left && last_digit % 2))
        fraction++;
    if (fraction == scale) { /* 0.96 to one decimal is 1.0 */
        whole++;
        fraction = 0;
    }
    size_t length = lt_json_format_u64(out, whole);
    if (decimals) {
        out[length++] = '.';
        for (unsigned i = decimals; i-- > 0; fraction /= 10)
            out[length + i] = (char)('0' + fraction % 10);
        length += decimals;
    }
    return length;
}

size_t lt_json_format_ms(char *out, uint64_t ns) { return lt_format_fixed(out, ns, 1000000, 3); }

void lt_json_u64(FILE *out, uint64_t value)
{
    char text[LT_JSON_NUMBER_MAX];
    fwrite_unlocked(text, 1, lt_json_format_u64(text, value), out);
}

void lt_json_hex(FILE *out, uint64_t value)
{
    char text[LT_JSON_NUMBER_MAX];
    fwrite_unlocked(text, 1, lt_json_format_hex(text, value), out);
}

void lt_json_bool(FILE *out, int value) { fputs_unlocked(value ? "true" : "false", out); }

void lt_json_ms(FILE *out, uint64_t ns)
{
    char text[LT_JSON_NUMBER_MAX];
    fwrite_unlocked(text, 1, lt_json_format_ms(text, ns), out);
}

/* A line number or column: null when unknown (0). */
void lt_json_optional_uint(FILE *out, unsigned value)
{
    if (value)
        lt_json_u64(out, value);
    else
        fputs_unlocked("null", out);
}

