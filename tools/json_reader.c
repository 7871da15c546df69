/*
 * JSON (RFC 8259) into a tree, for reading livetrack reports.
 *
 * Memory: every node, string and item array comes from one arena of large
 * blocks, so a report of a hundred thousand objects costs a few dozen
 * mallocs and one free. While a container is being read its children sit
 * on a scratch stack shared by all nesting levels; when the container
 * closes they are copied into the arena in one piece. Strings take the
 * bytes they need, unaligned, and an object key seen before is not
 * stored again: a report repeats the same dozen keys in every object.
 *
 * Nesting is limited (JSON_MAX_DEPTH) so a hostile file cannot exhaust the
 * C stack through the recursion.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../layer/core/huge_pages.h" /* shared with the core: no include path needed */
#include "json_reader.h"

#define JSON_MAX_DEPTH 256
#define ARENA_BLOCK (256u * 1024u)    /* the first block; each next one is as large as all before */
#define ARENA_BLOCK_MAX (64u << 20)
#define KNOWN_KEYS 1024u     /* slots; at most half are filled */
#define KNOWN_KEY_LENGTH 64u /* longer keys are stored each time */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} arena_block;

struct json_document {
    arena_block *blocks;
    size_t arena_bytes; /* in all blocks */
    int may_hold_controls; /* json_may_hold_controls */
    json_value root;
};

/* Large blocks ask for huge pages (huge_pages.h): a report of 10^6
 * objects fills ~600 MB of arena after a 200 MB text, and on a VM
 * measured page faults were more than half of the 7 s it took to read. */
static arena_block *new_block(size_t size)
{
    return lt_hint_huge_pages(malloc(sizeof(arena_block) + size), sizeof(arena_block) + size);
}

typedef struct parser {
    const char *text, *at, *end;
    json_document *document;
    char *error;
    size_t error_size;
    int failed;
    /* scratch stacks of pending container items */
    json_value *values;
    const char **keys;
    size_t pending, capacity;
    /* keys already stored (escape-free ones), open addressing; NULL: empty */
    const char *known_keys[KNOWN_KEYS];
    size_t known_key_count;
} parser;

/* `size` bytes aligned to `align` (a power of two up to 16). */
static void *arena_alloc(json_document *document, size_t size, size_t align)
{
    arena_block *block = document->blocks;
    if (block)
        block->used = (block->used + align - 1) & ~(align - 1);
    if (!block || block->used > block->size || block->size - block->used < size) {
        size_t block_size = document->arena_bytes < ARENA_BLOCK ? ARENA_BLOCK : document->arena_bytes;
        if (block_size > ARENA_BLOCK_MAX)
            block_size = ARENA_BLOCK_MAX;
        if (block_size < size)
            block_size = size;
        block = new_block(block_size);
        if (!block)
            return NULL;
        document->arena_bytes += block_size;
        block->size = block_size;
        block->used = 0;
        block->next = document->blocks;
        document->blocks = block;
    }
    void *memory = block->data + block->used;
    block->used += size;
    return memory;
}

static void fail(parser *p, const char *what)
{
    if (p->failed)
        return;
    p->failed = 1;
    unsigned long line = 1, column = 1;
    for (const char *c = p->text; c < p->at && c < p->end; c++) {
        if (*c == '\n') {
            line++;
            column = 1;
        } else {
            column++;
        }
    }
    snprintf(p->error, p->error_size, "not valid JSON: line %lu, column %lu: %s", line, column, what);
}

static void skip_space(parser *p)
{
    while (p->at < p->end && (*p->at == ' ' || *p->at == '\t' || *p->at == '\n' || *p->at == '\r'))
        p->at++;
}

static int push(parser *p, const json_value *value, const char *key)
{
    if (p->pending == p->capacity) {
        size_t capacity = p->capacity ? p->capacity * 2 : 64;
        json_value *values = realloc(p->values, capacity * sizeof *values);
        if (values)
            p->values = values;
        const char **keys = realloc(p->keys, capacity * sizeof *keys);
        if (keys)
            p->keys = keys;
        if (!values || !keys) {
            fail(p, "out of memory");
            return 0;
        }
        p->capacity = capacity;
    }
    p->values[p->pending] = *value;
    p->keys[p->pending] = key;
    p->pending++;
    return 1;
}

/* Moves the items pushed since `first` into the arena as `container`'s. */
static void collect(parser *p, size_t first, json_value *container)
{
    size_t count = p->pending - first;
    container->count = count;
    if (count) {
        container->items = arena_alloc(p->document, count * sizeof *container->items, _Alignof(json_value));
        if (container->kind == JSON_OBJECT)
            container->keys = arena_alloc(p->document, count * sizeof *container->keys, _Alignof(const char *));
        if (!container->items || (container->kind == JSON_OBJECT && !container->keys)) {
            fail(p, "out of memory");
            container->count = 0;
        } else {
            memcpy(container->items, p->values + first, count * sizeof *container->items);
            if (container->kind == JSON_OBJECT)
                memcpy(container->keys, p->keys + first, count * sizeof *container->keys);
        }
    }
    p->pending = first;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int read_hex4(parser *p, const char *at, unsigned *out)
{
    unsigned value = 0;
    for (int i = 0; i < 4; i++) {
        int digit = at + i < p->end ? hex_digit(at[i]) : -1;
        if (digit < 0)
            return 0;
        value = value * 16u + (unsigned)digit;
    }
    *out = value;
    return 1;
}

static size_t put_utf8(char *out, unsigned code)
{
    if (code < 0x80) {
        out[0] = (char)code;
        return 1;
    }
    if (code < 0x800) {
        out[0] = (char)(0xc0 | (code >> 6));
        out[1] = (char)(0x80 | (code & 0x3f));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (char)(0xe0 | (code >> 12));
        out[1] = (char)(0x80 | ((code >> 6) & 0x3f));
        out[2] = (char)(0x80 | (code & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (code >> 18));
    out[1] = (char)(0x80 | ((code >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((code >> 6) & 0x3f));
    out[3] = (char)(0x80 | (code & 0x3f));
    return 4;
}

/* At the opening quote. Escapes never make a string longer than its
 * source text, so the source length bounds the decoded one. */
static const char *read_string(parser *p, size_t *length_out)
{
    const char *start = ++p->at, *scan = start;
    while (scan < p->end && *scan != '"') {
        if (*scan == '\\')
            scan++;
        scan++;
    }
    if (scan >= p->end) {
        fail(p, "unterminated string");
        return NULL;
    }
    char *out = arena_alloc(p->document, (size_t)(scan - start) + 1, 1);
    if (!out) {
        fail(p, "out of memory");
        return NULL;
    }
    size_t used = 0;
    while (p->at < scan) {
        unsigned char c = (unsigned char)*p->at;
        if (c < 0x20) {
            fail(p, "control character in string");
            return NULL;
        }
        if (c != '\\') {
            /* DEL, or the lead byte of a C1 control (U+0080..U+009F) */
            if (c == 0x7f || c == 0xc2)
                p->document->may_hold_controls = 1;
            out[used++] = (char)c;
            p->at++;
            continue;
        }
        char escape = p->at[1];
        p->at += 2;
        if (escape != '"' && escape != '\\' && escape != '/')
            p->document->may_hold_controls = 1; /* \b \n \u001b ...: cheap to over-flag */
        switch (escape) {
        case '"': out[used++] = '"'; break;
        case '\\': out[used++] = '\\'; break;
        case '/': out[used++] = '/'; break;
        case 'b': out[used++] = '\b'; break;
        case 'f': out[used++] = '\f'; break;
        case 'n': out[used++] = '\n'; break;
        case 'r': out[used++] = '\r'; break;
        case 't': out[used++] = '\t'; break;
        case 'u': {
            unsigned code, low;
            if (!read_hex4(p, p->at, &code)) {
                fail(p, "bad \\u escape");
                return NULL;
            }
            p->at += 4;
            /* A UTF-16 surrogate pair encodes one code point; a lone
             * surrogate becomes U+FFFD rather than an error. */
            if (code >= 0xd800 && code < 0xdc00 && p->at + 6 <= scan && p->at[0] == '\\' && p->at[1] == 'u' &&
                read_hex4(p, p->at + 2, &low) && low >= 0xdc00 && low < 0xe000) {
                code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                p->at += 6;
            } else if (code >= 0xd800 && code < 0xe000) {
                code = 0xfffd;
            }
            used += put_utf8(out + used, code);
            break;
        }
        default:
            p->at -= 1;
            fail(p, "bad escape in string");
            return NULL;
        }
    }
    p->at = scan + 1;
    out[used] = '\0';
    *length_out = used;
    return out;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The digits a fraction or an exponent must have: past them, or NULL
 * (with the error at the first non-digit) when there are none. */
static const char *skip_required_digits(parser *p, const char *c)
{
    if (c >= p->end || !is_digit(*c)) {
        p->at = c;
        fail(p, "bad number");
        return NULL;
    }
    while (c < p->end && is_digit(*c))
        c++;
    return c;
}

static void read_number(parser *p, json_value *value)
{
    const char *start = p->at, *c = p->at;
    int integral = 1;
    if (c < p->end && *c == '-')
        c++;
    if (c < p->end && *c == '0') {
        c++;
    } else if (c < p->end && *c >= '1' && *c <= '9') {
        while (c < p->end && is_digit(*c))
            c++;
    } else {
        fail(p, "bad number");
        return;
    }
    if (c < p->end && *c == '.') {
        integral = 0;
        if (!(c = skip_required_digits(p, c + 1)))
            return;
    }
    if (c < p->end && (*c == 'e' || *c == 'E')) {
        integral = 0;
        c++;
        if (c < p->end && (*c == '+' || *c == '-'))
            c++;
        if (!(c = skip_required_digits(p, c)))
            return;
    }
    /* The buffer is NUL-terminated and the grammar was checked above, so
     * strtod and strtoll stop exactly at c. */
    char *stop;
    value->kind = JSON_NUMBER;
    value->number = strtod(start, &stop);
    if (integral) {
        errno = 0;
        long long integer = strtoll(start, &stop, 10);
        if (!errno) {
            value->is_integer = 1;
            value->integer = integer;
        }
        if (*start != '-') {
            errno = 0;
            unsigned long long unsigned_integer = strtoull(start, &stop, 10);
            if (!errno) {
                value->is_unsigned = 1;
                value->unsigned_integer = unsigned_integer;
            }
        }
    }
    p->at = c;
}

static int literal(parser *p, const char *word)
{
    size_t length = strlen(word);
    if ((size_t)(p->end - p->at) < length || memcmp(p->at, word, length))
        return 0;
    p->at += length;
    return 1;
}

static void read_value(parser *p, json_value *value, int depth);

/* An object key, at its opening quote. A key with no escape that was
 * stored before is taken from there (its source text is its value). */
static const char *read_key(parser *p)
{
    const char *start = p->at + 1, *scan = start;
    while (scan < p->end && *scan != '"' && *scan != '\\' && (unsigned char)*scan >= 0x20 &&
           scan - start < (ptrdiff_t)KNOWN_KEY_LENGTH)
        scan++;
    size_t length = (size_t)(scan - start), slot = 0;
    int plain = scan < p->end && *scan == '"';
    if (plain) {
        uint32_t hash = 2166136261u; /* FNV-1a */
        for (size_t i = 0; i < length; i++)
            hash = (hash ^ (unsigned char)start[i]) * 16777619u;
        for (slot = hash & (KNOWN_KEYS - 1); p->known_keys[slot]; slot = (slot + 1) & (KNOWN_KEYS - 1)) {
            const char *known = p->known_keys[slot];
            if (!strncmp(known, start, length) && known[length] == '\0') {
                p->at = scan + 1;
                return known;
            }
        }
    }
    size_t decoded_length;
    const char *key = read_string(p, &decoded_length);
    if (key && plain && p->known_key_count < KNOWN_KEYS / 2) {
        p->known_keys[slot] = key;
        p->known_key_count++;
    }
    return key;
}

static void read_container(parser *p, json_value *value, int depth)
{
    int object = *p->at == '{';
    char close = object ? '}' : ']';
    value->kind = object ? JSON_OBJECT : JSON_ARRAY;
    if (depth >= JSON_MAX_DEPTH) {
        fail(p, "nested too deeply");
        return;
    }
    p->at++;
    size_t first = p->pending;
    skip_space(p);
    if (p->at < p->end && *p->at == close) {
        p->at++;
        collect(p, first, value);
        return;
    }
    for (;;) {
        const char *key = NULL;
        skip_space(p);
        if (object) {
            if (p->at >= p->end || *p->at != '"') {
                fail(p, "expected a string key");
                break;
            }
            key = read_key(p);
            if (!key)
                break;
            skip_space(p);
            if (p->at >= p->end || *p->at != ':') {
                fail(p, "expected ':' after key");
                break;
            }
            p->at++;
        }
        json_value item;
        memset(&item, 0, sizeof item);
        read_value(p, &item, depth + 1);
        if (p->failed || !push(p, &item, key))
            break;
        skip_space(p);
        if (p->at < p->end && *p->at == ',') {
            p->at++;
            continue;
        }
        if (p->at < p->end && *p->at == close) {
            p->at++;
            break;
        }
        fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
        break;
    }
    collect(p, first, value);
}

static void read_value(parser *p, json_value *value, int depth)
{
    skip_space(p);
    if (p->at >= p->end) {
        fail(p, "unexpected end of input");
        return;
    }
    switch (*p->at) {
    case '{':
    case '[':
        read_container(p, value, depth);
        return;
    case '"':
        value->kind = JSON_STRING;
        value->string = read_string(p, &value->length);
        return;
    case 't':
    case 'f': {
        int truth = *p->at == 't';
        if (literal(p, truth ? "true" : "false")) {
            value->kind = JSON_BOOL;
            value->boolean = truth;
            return;
        }
        break;
    }
    case 'n':
        if (literal(p, "null")) {
            value->kind = JSON_NULL;
            return;
        }
        break;
    default:
        if (*p->at == '-' || is_digit(*p->at)) {
            read_number(p, value);
            return;
        }
        break;
    }
    fail(p, "unexpected character");
}

json_document *json_parse_text(const char *text, size_t length, char *error, size_t error_size)
{
    json_document *document = calloc(1, sizeof *document);
    if (!document) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    parser p;
    memset(&p, 0, sizeof p);
    p.text = p.at = text;
    p.end = text + length;
    p.document = document;
    p.error = error;
    p.error_size = error_size;
    read_value(&p, &document->root, 0);
    skip_space(&p);
    if (!p.failed && p.at < p.end)
        fail(&p, "text after the end of the document");
    free(p.values);
    free(p.keys);
    if (p.failed) {
        json_free(document);
        return NULL;
    }
    return document;
}

char *json_read_file(const char *path, size_t *length, char *error, size_t error_size)
{
    FILE *in = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    struct stat status;
    if (in && fstat(fileno(in), &status) == 0 && S_ISDIR(status.st_mode)) {
        fclose(in); /* fopen opens a directory; reading it fails with "read error" */
        in = NULL;
        errno = EISDIR;
    }
    if (!in) {
        snprintf(error, error_size, "%s", strerror(errno));
        return NULL;
    }
    char *text = json_read_stream(in, length, error, error_size);
    if (in != stdin)
        fclose(in);
    return text;
}

char *json_read_stream(FILE *in, size_t *length, char *error, size_t error_size)
{
    size_t size = 0, capacity = 1 << 16;
    char *text = malloc(capacity);
    while (text) {
        if (capacity - size < 4096) {
            char *bigger = realloc(text, capacity * 2);
            if (!bigger) {
                free(text);
                text = NULL;
                break;
            }
            text = bigger;
            capacity *= 2;
            lt_hint_huge_pages(text, capacity);
        }
        size_t got = fread(text + size, 1, capacity - size - 1, in);
        size += got;
        if (got == 0)
            break;
    }
    if (!text || ferror(in)) {
        snprintf(error, error_size, "%s", text ? "read error" : "out of memory");
        free(text);
        return NULL;
    }
    text[size] = '\0';
    *length = size;
    return text;
}

/* Parses what json_read_file or json_read_stream read (NULL: `error` says why). */
static json_document *parse_read_text(char *text, size_t length, char *error, size_t error_size)
{
    if (!text)
        return NULL;
    json_document *document = json_parse_text(text, length, error, error_size);
    free(text);
    return document;
}

json_document *json_parse_file(const char *path, char *error, size_t error_size)
{
    size_t length = 0;
    char *text = json_read_file(path, &length, error, error_size);
    return parse_read_text(text, length, error, error_size);
}

json_document *json_parse_stream(FILE *in, char *error, size_t error_size)
{
    size_t length = 0;
    char *text = json_read_stream(in, &length, error, error_size);
    return parse_read_text(text, length, error, error_size);
}

int json_may_hold_controls(const json_document *document) { return document->may_hold_controls; }

const json_value *json_root(const json_document *document) { return document ? &document->root : NULL; }

void json_free(json_document *document)
{
    if (!document)
        return;
    for (arena_block *block = document->blocks, *next; block; block = next) {
        next = block->next;
        free(block);
    }
    free(document);
}

const json_value *json_get(const json_value *object, const char *key)
{
    if (!object || object->kind != JSON_OBJECT)
        return NULL;
    for (size_t i = object->count; i-- > 0;)
        if (!strcmp(object->keys[i], key))
            return &object->items[i];
    return NULL;
}

const json_value *json_path(const json_value *value, const char *path)
{
    char key[128];
    while (value && *path) {
        size_t length = strcspn(path, ".");
        if (length >= sizeof key)
            return NULL;
        memcpy(key, path, length);
        key[length] = '\0';
        value = json_get(value, key);
        path += length + (path[length] == '.');
    }
    return value;
}

size_t json_count(const json_value *array)
{
    return array && (array->kind == JSON_ARRAY || array->kind == JSON_OBJECT) ? array->count : 0;
}

const json_value *json_at(const json_value *array, size_t index)
{
    return index < json_count(array) ? &array->items[index] : NULL;
}

const char *json_str(const json_value *value, const char *fallback)
{
    return value && value->kind == JSON_STRING ? value->string : fallback;
}

double json_num(const json_value *value, double fallback)
{
    return value && value->kind == JSON_NUMBER ? value->number : fallback;
}

int64_t json_int(const json_value *value, int64_t fallback)
{
    if (!value || value->kind != JSON_NUMBER)
        return fallback;
    if (value->is_integer)
        return value->integer;
    if (value->number >= -9.2e18 && value->number <= 9.2e18)
        return (int64_t)value->number;
    return fallback;
}

int64_t json_count_int(const json_value *value, int64_t fallback)
{
    if (value && value->kind == JSON_NUMBER && value->is_unsigned && value->unsigned_integer > INT64_MAX)
        return INT64_MAX;
    return json_int(value, fallback);
}

int json_bool(const json_value *value, int fallback)
{
    return value && value->kind == JSON_BOOL ? value->boolean : fallback;
}

uint64_t json_u64(const json_value *value, uint64_t fallback)
{
    if (value && value->kind == JSON_STRING) {
        char *end;
        errno = 0;
        unsigned long long number = strtoull(value->string, &end, 0);
        return errno || end == value->string || *end ? fallback : (uint64_t)number;
    }
    if (value && value->kind == JSON_NUMBER && value->is_unsigned)
        return value->unsigned_integer;
    /* 2^64 itself rounds to 1.8446744073709552e19, which does not fit */
    if (value && value->kind == JSON_NUMBER && value->number >= 0 && value->number < 18446744073709551616.0)
        return (uint64_t)value->number;
    return fallback;
}
