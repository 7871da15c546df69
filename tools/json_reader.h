/*
 * A small JSON reader for livetrack's own reports: the whole document is
 * parsed into a tree held in one arena and freed at once.
 *
 * Readers are meant to be tolerant: every accessor takes NULL or a value
 * of the wrong kind and answers with the fallback, so a missing or null
 * field (the report writer may leave fields null, and may add new ones)
 * needs no special case at the call site.
 */
#ifndef LIVETRACK_JSON_READER_H
#define LIVETRACK_JSON_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum json_kind { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_kind;

typedef struct json_value json_value;
/* Only the members of the value's kind mean anything: the others share
 * their storage. 32 bytes a value (88 with a member each made a 200 MB
 * report of 10^6 objects take 1.7 GB to read). */
struct json_value {
    json_kind kind;
    unsigned char boolean;     /* JSON_BOOL */
    unsigned char is_integer;  /* JSON_NUMBER written without fraction or exponent, fits int64 */
    unsigned char is_unsigned; /* JSON_NUMBER written as digits alone that fit uint64 (byte counts reach 2^64 - 1) */
    union {
        int64_t integer;           /* JSON_NUMBER: exact value when is_integer */
        uint64_t unsigned_integer; /* JSON_NUMBER: exact value when is_unsigned (the same bits when both are) */
        size_t length;             /* JSON_STRING */
        size_t count;              /* JSON_ARRAY / JSON_OBJECT: items */
    };
    union {
        double number;     /* JSON_NUMBER */
        const char **keys; /* JSON_OBJECT: the key of each item */
    };
    union {
        const char *string; /* JSON_STRING, NUL-terminated (and `length` long) */
        json_value *items;  /* JSON_ARRAY / JSON_OBJECT: values, in document order */
    };
};

typedef struct json_document json_document;

/* Parses a whole file (or "-" for stdin). NULL on error, with a message
 * "line L, column C: what" (or the system error) in `error`. */
json_document *json_parse_file(const char *path, char *error, size_t error_size);
/* The same from a stream already open, read to its end (not closed): a
 * pipe or FIFO can be opened and read only once. */
json_document *json_parse_stream(FILE *in, char *error, size_t error_size);
json_document *json_parse_text(const char *text, size_t length, char *error, size_t error_size);
/* A whole file (or "-" for stdin), or a stream already open read to its
 * end (not closed), in memory for json_parse_text: `length` bytes and a
 * NUL after them; free() it. A reader that tries more than one parse of
 * it reads a pipe only once so. NULL on error, with the system error (or
 * "read error", "out of memory") in `error`. */
char *json_read_file(const char *path, size_t *length, char *error, size_t error_size);
char *json_read_stream(FILE *in, size_t *length, char *error, size_t error_size);
const json_value *json_root(const json_document *document);
/* 0 when no string of the document holds a control character (C0, DEL or
 * C1); 1 when one may (a backslash escape other than \" \\ \/, or a
 * DEL or 0xC2 byte, was read), so a reader need not look at every string. */
int json_may_hold_controls(const json_document *document);
void json_free(json_document *document);

/* The member `key` of an object (the last one, if repeated), else NULL. */
const json_value *json_get(const json_value *object, const char *key);
/* Same, following dots: json_path(root, "summary.leaked_objects"). */
const json_value *json_path(const json_value *value, const char *path);
size_t json_count(const json_value *array);
const json_value *json_at(const json_value *array, size_t index);

const char *json_str(const json_value *value, const char *fallback);
double json_num(const json_value *value, double fallback);
int64_t json_int(const json_value *value, int64_t fallback);
/* A count as int64_t: past its range (a sum may be) the largest, not the
 * fallback, so that a huge count never reads as none. */
int64_t json_count_int(const json_value *value, int64_t fallback);
int json_bool(const json_value *value, int fallback);
/* A number, or a string holding a number ("0x55d0c0de1234" or "42"), exact
 * up to 2^64 - 1: the core writes byte counts unsigned, so read sizes with it. */
uint64_t json_u64(const json_value *value, uint64_t fallback);

#endif
