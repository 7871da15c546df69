/*
 * Reads the CSV timeline (see csv_reader.h).
 *
 * Fields are split by commas; a field in double quotes may hold commas,
 * doubled quotes ("a ""b""") and line breaks (RFC 4180), as the writer
 * quotes a call, API or type name that has any of them. Names (call, api, type) repeat on every row, so they are
 * interned: a row stores small indices and the reader's memory grows with
 * rows, not with text.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "csv_reader.h"
#include "string_map.h"

const char *const timeline_event_names[TIMELINE_EVENT_KINDS] = {"create", "retain", "release", "destroy",
                                                                "misuse", "freed", "restore"};

enum column {
    COL_SEQ, COL_TIME, COL_EVENT, COL_CALL, COL_API, COL_TYPE, COL_HANDLE, COL_BYTES, COL_TYPE_LIVE,
    COL_LIVE_OBJECTS, COL_LIVE_BYTES, COL_VM_SIZE, COL_VM_RSS, COL_VM_DATA, COL_VM_PEAK, COL_THREADS,
    COL_D_VM_SIZE, COL_D_VM_RSS, COLUMN_COUNT
};

static const struct {
    const char *name;
    int required;
} columns[COLUMN_COUNT] = {
    [COL_SEQ] = {"seq", 1},           [COL_TIME] = {"time_ms", 1},
    [COL_EVENT] = {"event", 1},       [COL_CALL] = {"call", 0},
    [COL_API] = {"api", 1},           [COL_TYPE] = {"type", 1},
    [COL_HANDLE] = {"handle", 0},     [COL_BYTES] = {"bytes", 0},
    [COL_TYPE_LIVE] = {"type_live", 0}, [COL_LIVE_OBJECTS] = {"live_objects", 1},
    [COL_LIVE_BYTES] = {"live_bytes", 1}, [COL_VM_SIZE] = {"vm_size_kb", 0},
    [COL_VM_RSS] = {"vm_rss_kb", 0},  [COL_VM_DATA] = {"vm_data_kb", 0},
    [COL_VM_PEAK] = {"vm_peak_kb", 0}, [COL_THREADS] = {"threads", 0},
    [COL_D_VM_SIZE] = {"d_vm_size_kb", 0}, [COL_D_VM_RSS] = {"d_vm_rss_kb", 0},
};

#define MAX_FIELDS 256 /* columns read; a newer writer may add some, found by name */

/* Names repeat on every row: each is stored once, rows keep its index. */
static uint32_t intern(timeline *t, string_map *names, const char *text)
{
    if (!*text)
        return 0;
    int added;
    uint32_t index = (uint32_t)string_map_intern(names, text, t->string_count, &added);
    if (added) {
        t->strings = cli_realloc(t->strings, t->string_count + 1, sizeof *t->strings);
        t->strings[t->string_count++] = cli_strdup(text);
    }
    return index;
}

/* Splits `line` in place; returns the number of fields or -1 when a
 * quote is not closed. */
static int split(char *line, char **fields)
{
    int count = 0;
    char *at = line;
    for (;;) {
        if (count == MAX_FIELDS)
            return count;
        if (*at == '"') {
            char *out = ++at;
            fields[count++] = out;
            for (;;) {
                if (!*at)
                    return -1;
                if (*at == '"' && at[1] == '"') {
                    *out++ = '"';
                    at += 2;
                } else if (*at == '"') {
                    at++;
                    break;
                } else {
                    *out++ = *at++;
                }
            }
            *out = '\0';
            if (*at == ',') {
                at++;
                continue;
            }
            return *at ? -1 : count;
        }
        fields[count++] = at;
        char *comma = strchr(at, ',');
        if (!comma)
            return count;
        *comma = '\0';
        at = comma + 1;
    }
}

/* A signed column (a count, kB, a difference of two): at most 2^52 either
 * way, about 4 EiB in kB, which no process reaches. The bound keeps the
 * readers' arithmetic defined: kB x 1024, and sums and differences of
 * such values, stay far inside int64. */
#define LARGEST_SIGNED_FIELD ((long long)1 << 52)

static int parse_i64(const char *text, int64_t *out)
{
    if (!*text) {
        *out = 0;
        return 1;
    }
    char *end;
    errno = 0;
    long long number = strtoll(text, &end, 10);
    if (errno || *end || number > LARGEST_SIGNED_FIELD || number < -LARGEST_SIGNED_FIELD)
        return 0;
    *out = number;
    return 1;
}

static int parse_u64(const char *text, uint64_t *out)
{
    if (!*text) {
        *out = 0;
        return 1;
    }
    char *end;
    errno = 0;
    unsigned long long number = strtoull(text, &end, 0); /* handles "0x..." */
    if (errno || *end)
        return 0;
    *out = number;
    return 1;
}

/* A count or size: decimal digits up to 2^64 - 1 ("-1" would wrap). */
static int parse_count(const char *text, uint64_t *out)
{
    if (*text == '-' || *text == '+')
        return 0;
    char *end;
    errno = 0;
    unsigned long long number = strtoull(text, &end, 10);
    if (errno || *end)
        return 0;
    *out = number;
    return 1;
}

/* Milliseconds since the program started: finite, and small enough that
 * the trace's microseconds (x 1000) stay finite too. strtod takes "nan"
 * and "inf", which would reach the trace as "ts":nan, not JSON. */
#define LARGEST_TIME_MS 1e15 /* about 31,700 years */

/* Milliseconds since the process started: livetrack never writes a
 * negative one, and a trace would show it as a negative duration. */
static int parse_time(const char *text, double *out)
{
    char *end;
    *out = strtod(text, &end);
    if (*out == 0)
        *out = 0; /* "-0.000": plain zero */
    return *text && !*end && isfinite(*out) && *out >= 0 && *out <= LARGEST_TIME_MS;
}

static int event_of(const char *text)
{
    for (int e = 0; e < TIMELINE_EVENT_KINDS; e++)
        if (!strcmp(text, timeline_event_names[e]))
            return e;
    return -1;
}

/* Drops the line's end ("\n" or "\r\n"); returns the length left. */
static size_t strip_newline(char *line, size_t length)
{
    while (length && (line[length - 1] == '\n' || line[length - 1] == '\r'))
        line[--length] = '\0';
    return length;
}

/* Reads one line of any length with its real length, NUL bytes included
 * (fgets would hide them); returns that length or -1 at EOF. */
static long read_line(FILE *in, char **buffer, size_t *capacity)
{
    ssize_t length = getline(buffer, capacity, in);
    return length < 0 ? -1 : (long)length;
}

/* Whether a quoted field is open, by split's rules: a quote opens a field
 * only as its first character ("" inside is one quote, a lone one closes
 * it); anywhere else it is an ordinary character. Counting every quote
 * instead took a stray one inside a name for an open field and joined the
 * rest of the file into one record. */
typedef struct quote_state {
    int quoted;      /* inside a quoted field */
    int field_start; /* the next character starts a field */
} quote_state;

static void scan_quotes(quote_state *state, const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (state->quoted) {
            if (c == '"' && i + 1 < length && text[i + 1] == '"')
                i++;
            else if (c == '"')
                state->quoted = 0;
        } else if (c == '"' && state->field_start) {
            state->quoted = 1;
            state->field_start = 0;
        } else {
            state->field_start = c == ',';
        }
    }
}

/* Reads one row: a line, and the lines after it while a quoted field is
 * open (a name with a line break is written quoted, RFC 4180). `piece` is
 * scratch space for the continuation lines; *lines counts the lines read.
 * Returns the length or -1. */
static long read_record(FILE *in, char **record, size_t *capacity, char **piece, size_t *piece_capacity,
                        unsigned long *lines)
{
    long length = read_line(in, record, capacity);
    if (length < 0)
        return -1;
    *lines = 1;
    size_t used = (size_t)length;
    quote_state state = {0, 1};
    scan_quotes(&state, *record, used);
    while (state.quoted && (*record)[used - 1] == '\n') {
        long more = read_line(in, piece, piece_capacity);
        if (more < 0)
            break;
        if (used + (size_t)more + 1 > *capacity) {
            *capacity = used + (size_t)more + 1;
            *record = cli_realloc(*record, *capacity, 1);
        }
        memcpy(*record + used, *piece, (size_t)more + 1);
        scan_quotes(&state, *piece, (size_t)more);
        used += (size_t)more;
        ++*lines;
    }
    return (long)used;
}

/* A NUL byte is never written by livetrack: the line is damaged, and
 * splitting it as a C string would silently drop what follows the NUL. */
static int has_nul(const char *line, size_t length) { return memchr(line, '\0', length) != NULL; }

/* Room the rows and series have: they grow by doubling. */
typedef struct growth {
    size_t rows_capacity, series_capacity;
    /* "api:type" (string indices) -> series index, so a file of many
     * types is not read in quadratic time */
    string_map series_index;
} growth;

/* The series of api and type, appended when it is new. */
static size_t series_of(timeline *t, growth *g, uint32_t api, uint32_t type)
{
    char key[32];
    snprintf(key, sizeof key, "%" PRIu32 ":%" PRIu32, api, type);
    int added;
    size_t s = (size_t)string_map_intern(&g->series_index, key, t->series_count, &added);
    if (!added)
        return s;
    if (t->series_count == g->series_capacity) {
        g->series_capacity = g->series_capacity ? g->series_capacity * 2 : 16;
        t->series = cli_realloc(t->series, g->series_capacity, sizeof *t->series);
    }
    memset(&t->series[s], 0, sizeof t->series[s]);
    t->series[s].api = api;
    t->series[s].type = type;
    t->series_count++;
    return s;
}

/* Parses one row (a line, with its newline) into `t`: 1 when it was
 * taken, 0 when it is malformed, -1 for an empty line. */
static int take_row(timeline *t, string_map *table, char *line, size_t length, const int *index_of, growth *g)
{
    char *fields[MAX_FIELDS];
    int count = -1; /* malformed until split */
    if (!has_nul(line, length)) {
        if (!strip_newline(line, length))
            return -1;
        count = split(line, fields);
    }
    timeline_row row;
    memset(&row, 0, sizeof row);
    const char *text[COLUMN_COUNT];
    int good = count > 0;
    for (int c = 0; c < COLUMN_COUNT && good; c++) {
        if (index_of[c] < 0)
            text[c] = "";
        else if (index_of[c] < count)
            text[c] = fields[index_of[c]];
        else
            good = 0;
    }
    int event = good ? event_of(text[COL_EVENT]) : -1;
    good = good && event >= 0 && parse_u64(text[COL_SEQ], &row.seq) &&
           parse_time(text[COL_TIME], &row.time_ms) && parse_u64(text[COL_HANDLE], &row.handle) &&
           parse_count(text[COL_BYTES], &row.bytes) && parse_i64(text[COL_TYPE_LIVE], &row.type_live) &&
           parse_count(text[COL_LIVE_OBJECTS], &row.live_objects) &&
           parse_count(text[COL_LIVE_BYTES], &row.live_bytes) && parse_i64(text[COL_VM_SIZE], &row.vm_size_kb) &&
           parse_i64(text[COL_VM_RSS], &row.vm_rss_kb) && parse_i64(text[COL_VM_DATA], &row.vm_data_kb) &&
           parse_i64(text[COL_VM_PEAK], &row.vm_peak_kb) && parse_i64(text[COL_THREADS], &row.threads) &&
           parse_i64(text[COL_D_VM_SIZE], &row.d_vm_size_kb) && parse_i64(text[COL_D_VM_RSS], &row.d_vm_rss_kb);
    if (!good)
        return 0;
    row.event = (uint8_t)event;
    row.call = intern(t, table, text[COL_CALL]);
    row.api = intern(t, table, text[COL_API]);
    row.type = intern(t, table, text[COL_TYPE]);

    size_t s = series_of(t, g, row.api, row.type);
    row.series = (uint32_t)s;
    t->series[s].rows++;
    t->series[s].last = row.type_live;
    if (row.type_live > t->series[s].peak)
        t->series[s].peak = row.type_live;

    if (t->count == g->rows_capacity) {
        g->rows_capacity = g->rows_capacity ? g->rows_capacity * 2 : 1024;
        t->rows = cli_realloc(t->rows, g->rows_capacity, sizeof *t->rows);
    }
    t->rows[t->count++] = row;
    return 1;
}

static void note_skipped(timeline *t, unsigned long *first_bad, unsigned long line_number)
{
    if (!t->skipped)
        *first_bad = line_number;
    t->skipped++;
}

int timeline_read(const char *path, timeline *t, char *error, size_t error_size)
{
    memset(t, 0, sizeof *t);
    FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
    struct stat status;
    if (in && fstat(fileno(in), &status) == 0 && S_ISDIR(status.st_mode)) {
        fclose(in); /* a directory opens, and reads as an empty file */
        in = NULL;
        errno = EISDIR;
    }
    if (!in) {
        snprintf(error, error_size, "%s", strerror(errno));
        return 0;
    }
    int ok = timeline_read_stream(in, path, t, error, error_size);
    if (in != stdin)
        fclose(in);
    return ok;
}

int timeline_read_stream(FILE *in, const char *path, timeline *t, char *error, size_t error_size)
{
    memset(t, 0, sizeof *t);
    string_map table = {0, 0, NULL};
    t->strings = cli_alloc(sizeof *t->strings);
    t->strings[0] = cli_strdup("");
    t->string_count = 1;

    char *line = NULL, *piece = NULL;
    size_t capacity = 0, piece_capacity = 0;
    growth growth = {0, 0, {0, 0, NULL}};
    int index_of[COLUMN_COUNT];
    char *fields[MAX_FIELDS];
    int ok = 1, field_count = 0;
    unsigned long line_number = 0, first_bad = 0;

    long length = read_line(in, &line, &capacity);
    line_number = 1;
    if (length < 0 || line[length - 1] != '\n') {
        snprintf(error, error_size, "no header line (empty file?)");
        ok = 0;
        goto done;
    }
    if (has_nul(line, (size_t)length)) {
        snprintf(error, error_size, "not a livetrack timeline: the header holds a NUL byte");
        ok = 0;
        goto done;
    }
    strip_newline(line, (size_t)length);
    /* A spreadsheet that saved the file may have put a byte-order mark first. */
    if (!strncmp(line, "\xef\xbb\xbf", 3))
        memmove(line, line + 3, strlen(line + 3) + 1);
    field_count = split(line, fields);
    for (int c = 0; c < COLUMN_COUNT; c++) {
        index_of[c] = -1;
        for (int f = 0; f < field_count; f++)
            if (!strcmp(fields[f], columns[c].name))
                index_of[c] = f;
        if (index_of[c] < 0 && columns[c].required) {
            snprintf(error, error_size, "not a livetrack timeline: the header has no '%s' column", columns[c].name);
            ok = 0;
            goto done;
        }
    }
    t->has_vm = index_of[COL_VM_SIZE] >= 0 && index_of[COL_VM_RSS] >= 0;
    t->has_call = index_of[COL_CALL] >= 0;
    t->has_deltas = index_of[COL_D_VM_RSS] >= 0;

    unsigned long lines;
    while ((length = read_record(in, &line, &capacity, &piece, &piece_capacity, &lines)) >= 0) {
        line_number += lines;
        /* The writer flushes whole rows; a line without its newline is a
         * row cut short by a crash. */
        int cut = line[length - 1] != '\n';
        if (cut && lines == 1) {
            t->partial_last_line = 1;
            break;
        }
        /* Parsing writes into the line: a record of several lines is kept
         * whole, to be read again line by line should it be no row. */
        char *joined = lines > 1 ? memcpy(cli_alloc((size_t)length), line, (size_t)length) : NULL;
        if (cut) {
            /* a field left open up to a cut last line: the lines before
             * it are rows, the last is the cut one */
            length = (char *)memrchr(joined, '\n', (size_t)length) - joined + 1;
            t->partial_last_line = 1;
        }
        int taken = cut ? 0 : take_row(t, &table, line, (size_t)length, index_of, &growth);
        if (taken == 0 && joined) {
            /* A field left open (a stray quote) joined the lines after it:
             * they are rows of their own, and only the damaged ones go. */
            unsigned long number = line_number - lines;
            for (char *start = joined, *end; start < joined + length; start = end + 1) {
                end = memchr(start, '\n', (size_t)(joined + length - start));
                number++;
                if (take_row(t, &table, start, (size_t)(end - start) + 1, index_of, &growth) == 0)
                    note_skipped(t, &first_bad, number);
            }
        } else if (taken == 0) {
            note_skipped(t, &first_bad, line_number - lines + 1);
        }
        free(joined);
        if (cut)
            break;
    }
    if (ferror(in)) {
        snprintf(error, error_size, "read error");
        ok = 0;
    }
    if (ok && t->skipped)
        cli_warn("%s: left out %zu malformed row%s (the first on line %lu)", path, t->skipped,
                 t->skipped == 1 ? "" : "s", first_bad);
done:
    free(line);
    free(piece);
    string_map_free(&growth.series_index);
    string_map_free(&table);
    if (!ok)
        timeline_free(t);
    return ok;
}

void timeline_free(timeline *t)
{
    for (size_t i = 0; i < t->string_count; i++)
        free(t->strings[i]);
    free(t->strings);
    free(t->rows);
    free(t->series);
    memset(t, 0, sizeof *t);
}

void timeline_series_name(const timeline *t, size_t series, char *out, size_t size)
{
    const timeline_series *s = &t->series[series];
    snprintf(out, size, "%s %s", t->strings[s->api], t->strings[s->type]);
}
