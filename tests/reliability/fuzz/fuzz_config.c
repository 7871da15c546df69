/*
 * Fuzz target: the parsers of what users write, checked against
 * references written here independently:
 *   - each LIVETRACK_* setting's value parser (settings.c), and the "%p"
 *     path expansion;
 *   - the suppressions file (suppressions.c): which lines become
 *     patterns, and which pattern matches a type name or a stack frame
 *     (`*` any run of bytes, `?` one byte, every other byte itself).
 *
 * The first input byte picks the parser; the rest is its text. This file
 * includes settings.c to reach its table and its parser, which are
 * private to it; the program links the rest of the core as usual.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "settings.c"
#include "suppressions.h"

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "fuzz_config: mismatch with the reference: ");
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    abort();
}

#define EXPECT(cond, ...)      \
    do {                       \
        if (!(cond))           \
            fail(__VA_ARGS__); \
    } while (0)

/* Figures, printed at exit: values and lines tried, and how many the
 * parsers rejected. */
static unsigned long long values_tried, values_rejected, files_tried, lines_tried, lines_rejected;

__attribute__((destructor)) static void print_figures(void)
{
    if (values_tried || files_tried)
        fprintf(stderr, "fuzz_config: %llu setting values (%llu rejected), %llu suppressions files with %llu lines "
                        "(%llu rejected)\n",
                values_tried, values_rejected, files_tried, lines_tried, lines_rejected);
}

/* ---- settings ------------------------------------------------------------------- */

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* strtol as the C locale reads a whole decimal string: blanks, a sign,
 * digits, nothing after. 0 when it is not one or does not fit a long. */
static int reference_long(const char *text, long *out)
{
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\v' || *p == '\f' || *p == '\r')
        p++;
    int negative = 0;
    if (*p == '+' || *p == '-')
        negative = *p++ == '-';
    if (*p < '0' || *p > '9')
        return 0;
    unsigned long magnitude = 0, limit = negative ? (unsigned long)LONG_MAX + 1 : (unsigned long)LONG_MAX;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned digit = (unsigned)(*p - '0');
        if (magnitude > (limit - digit) / 10)
            return 0;
        magnitude = magnitude * 10 + digit;
    }
    if (*p)
        return 0;
    *out = negative ? (magnitude == (unsigned long)LONG_MAX + 1 ? LONG_MIN : -(long)magnitude) : (long)magnitude;
    return 1;
}

/* Index of `value` among "a|b|c" (any case), -1 when none. */
static int reference_choice(const char *choices, const char *value)
{
    int index = 0;
    const char *start = choices;
    for (const char *p = choices;; p++) {
        if (*p == '|' || !*p) {
            size_t length = (size_t)(p - start);
            if (strlen(value) == length && !strncasecmp(start, value, length))
                return index;
            if (!*p)
                return -1;
            index++;
            start = p + 1;
        }
    }
}

static void fuzz_one_setting(const setting *s, const char *value)
{
    lt_settings before = current;
    int ok = parse_one(s, value, 0);
    values_tried++;
    values_rejected += !ok;
    lt_settings after = current;
    char *field = (char *)&after + s->offset;
    char *old_field = (char *)&before + s->offset;
    size_t field_size = 0;
    switch (s->kind) {
    case SETTING_STRING: {
        /* A copy, not the environment's pointer (a program may overwrite
         * its environment), of at most PATH_MAX - 1 bytes. */
        field_size = sizeof(const char *);
        size_t length = strlen(value);
        const char *kept = *(const char **)field;
        EXPECT(ok == (length < PATH_MAX), "%s: %zu bytes: accepted %d", s->name, length, ok);
        if (!ok)
            EXPECT(kept == *(const char **)old_field, "%s: a rejected value changed the setting", s->name);
        else if (!length)
            EXPECT(!kept, "%s: \"\" is not unset", s->name);
        else
            EXPECT(kept && kept != value && !strcmp(kept, value), "%s=\"%s\": not a copy", s->name, value);
        break;
    }
    case SETTING_BOOL: {
        field_size = sizeof(int);
        int yes = !strcmp(value, "1") || ieq(value, "true") || ieq(value, "yes") || ieq(value, "on");
        /* "" is not a value: load() takes an empty variable for an unset one */
        int no = !strcmp(value, "0") || ieq(value, "false") || ieq(value, "no") || ieq(value, "off");
        EXPECT(ok == (yes || no), "%s=\"%s\": accepted %d", s->name, value, ok);
        EXPECT(*(int *)field == (ok ? yes : *(int *)old_field), "%s=\"%s\": value", s->name, value);
        break;
    }
    case SETTING_LONG: {
        field_size = sizeof(long);
        long number = 0;
        int valid = reference_long(value, &number) && number >= s->min && number <= s->max;
        EXPECT(ok == valid, "%s=\"%s\": accepted %d, reference %d", s->name, value, ok, valid);
        EXPECT(*(long *)field == (valid ? number : *(long *)old_field), "%s=\"%s\": value", s->name, value);
        break;
    }
    case SETTING_CHOICE: {
        field_size = sizeof(int);
        int index = reference_choice(s->choices, value);
        EXPECT(ok == (index >= 0), "%s=\"%s\": accepted %d", s->name, value, ok);
        EXPECT(*(int *)field == (index >= 0 ? index : *(int *)old_field), "%s=\"%s\": value", s->name, value);
        break;
    }
    default:
        break; /* a kind added since: it must only not crash */
    }
    /* nothing but its own field changes */
    if (field_size) {
        lt_settings expected = before;
        memcpy((char *)&expected + s->offset, field, field_size);
        EXPECT(!memcmp(&expected, &after, sizeof after), "%s: another setting changed", s->name);
    }
    current = before; /* the values point into this input */
}

static void fuzz_expand(const char *pattern, size_t out_size)
{
    char out[512], expected[4096];
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    size_t length = 0;
    int has_pid = 0;
    for (const char *p = pattern; *p && length < sizeof expected - 32; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            memcpy(expected + length, pid, strlen(pid));
            length += strlen(pid);
            has_pid = 1;
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            expected[length++] = '%';
            p++;
        } else {
            expected[length++] = *p;
        }
    }
    expected[length] = '\0';
    memset(out, 'x', sizeof out);
    int ok = lt_expand_path(pattern, out, out_size);
    if (length < sizeof expected - 32) /* the whole pattern was read */
        EXPECT(lt_path_has_pid(pattern) == has_pid, "has_pid \"%s\": %d", pattern, lt_path_has_pid(pattern));
    EXPECT(ok == (length < out_size), "expand \"%s\" into %zu: %d", pattern, out_size, ok);
    if (ok)
        EXPECT(!strcmp(out, expected), "expand \"%s\": \"%s\"", pattern, out);
    for (size_t i = out_size; i < sizeof out; i++)
        EXPECT(out[i] == 'x', "expand wrote past its buffer");
}

/* Pairs of (setting index, value) separated by NUL bytes. */
static void fuzz_settings(const uint8_t *data, size_t size)
{
    size_t count = sizeof setting_table / sizeof setting_table[0];
    char value[300];
    size_t at = 0;
    while (at < size) {
        const setting *s = &setting_table[data[at++] % count];
        size_t length = 0;
        while (at < size && data[at] && length < sizeof value - 1)
            value[length++] = (char)data[at++];
        at++; /* the NUL */
        value[length] = '\0';
        fuzz_one_setting(s, value);
        fuzz_expand(value, 1 + (length * 7 + (size_t)s->kind) % 511);
    }
}

/* ---- suppressions ------------------------------------------------------------------ */

/* Inputs longer than this are not parsed (libFuzzer's default is 4096). */
#define MAX_TEXT 8192

typedef struct ref_item {
    lt_suppression_kind kind;
    char text[2 * MAX_TEXT + 2];
    unsigned line;
} ref_item;

static int ref_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

/* Copy [start, end) without surrounding blanks. */
static size_t ref_trim(const char *start, const char *end, char *out, size_t size)
{
    while (start < end && ref_space(*start))
        start++;
    while (end > start && ref_space(end[-1]))
        end--;
    size_t length = (size_t)(end - start) < size - 1 ? (size_t)(end - start) : size - 1;
    memcpy(out, start, length);
    out[length] = '\0';
    return length;
}

static size_t reference_parse(const char *text, size_t size, ref_item *items, size_t max)
{
    static const char *const kinds[] = {"type", "function", "module", "file"};
    size_t count = 0;
    unsigned number = 0;
    for (size_t at = 0; at < size && count < max;) {
        size_t end = at;
        while (end < size && text[end] != '\n')
            end++;
        number++;
        lines_tried++;
        /* the parser sees the line up to its first NUL */
        size_t line_end = at;
        while (line_end < end && text[line_end])
            line_end++;
        char line[MAX_TEXT + 1];
        size_t length = ref_trim(text + at, text + line_end, line, sizeof line);
        at = end + 1;
        /* a comment runs from a # that starts the line or follows a blank */
        for (size_t i = 0; i < length; i++)
            if (line[i] == '#' && (i == 0 || ref_space(line[i - 1]))) {
                char cut[MAX_TEXT + 1];
                length = ref_trim(line, line + i, cut, sizeof cut);
                memcpy(line, cut, length + 1);
                break;
            }
        if (!length)
            continue;
        char *colon = strchr(line, ':');
        if (!colon) {
            lines_rejected++;
            continue;
        }
        static char kind[MAX_TEXT + 1], pattern[MAX_TEXT + 1];
        ref_trim(line, colon, kind, sizeof kind);
        ref_trim(colon + 1, line + length, pattern, sizeof pattern);
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (!strcmp(kind, kinds[i]))
                k = i;
        if (k < 0 || !*pattern) {
            lines_rejected++;
            continue;
        }
        items[count].kind = (lt_suppression_kind)k;
        items[count].line = number;
        snprintf(items[count].text, sizeof items[count].text, "%s:%s", kind, pattern);
        count++;
    }
    return count;
}

/* Where the first gcc clone suffix of a function name starts (not at 0),
 * or 0: scanned position by position, unlike suppressions.c. */
static size_t clone_suffix_at(const char *name)
{
    static const char *const suffixes[] = {".constprop.", ".isra.",  ".part.",      ".cold",
                                           ".lto_priv.",  ".clone.", ".localalias"};
    for (size_t at = 1; name[0] && name[at]; at++)
        for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++)
            if (!strncmp(name + at, suffixes[k], strlen(suffixes[k])))
                return at;
    return 0;
}

/* Names are picked below 128 bytes. */
#define MAX_NAME 128

/* Whether `pattern` matches all of `name`, by dynamic programming rather
 * than the matcher's backtracking: reached[j] says whether the pattern so
 * far can match the first j bytes of the name. `*` reaches every length
 * from the shortest reached one, `?` and a literal byte move one on. */
static int reference_wildcard(const char *pattern, const char *name)
{
    size_t length = strlen(name);
    if (length >= MAX_NAME)
        abort();
    unsigned char reached[MAX_NAME + 1] = {1};
    for (const char *p = pattern; *p; p++) {
        if (*p == '*') {
            for (size_t j = 1; j <= length; j++)
                reached[j] |= reached[j - 1];
            continue;
        }
        for (size_t j = length; j > 0; j--)
            reached[j] = reached[j - 1] && (*p == '?' || *p == name[j - 1]);
        reached[0] = 0;
    }
    return reached[length];
}

static long reference_match(const ref_item *items, size_t count, lt_suppression_kind kind, const char *name)
{
    for (size_t i = 0; i < count; i++) {
        const char *colon = strchr(items[i].text, ':');
        if (items[i].kind == kind && name && reference_wildcard(colon + 1, name))
            return (long)i;
    }
    return -1;
}

/* Names to match: pieces of the input itself, so patterns meet text
 * they have a chance to match. */
static void pick_name(const char *text, size_t size, size_t seed, char *out, size_t out_size)
{
    size_t start = size ? seed % size : 0, length = 0;
    while (start + length < size && length < out_size - 1 && text[start + length] && text[start + length] != '\n')
        length++;
    memcpy(out, text + start, length);
    out[length] = '\0';
}

static void fuzz_suppressions(const uint8_t *data, size_t size)
{
    if (size > MAX_TEXT)
        return; /* the reference holds lines in fixed buffers */
    int fd = memfd_create("suppressions", MFD_CLOEXEC);
    if (fd < 0)
        abort();
    if (size && write(fd, data, size) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    lt_suppressions loaded_here;
    size_t count = lt_suppressions_load(path, &loaded_here);
    files_tried++;
    close(fd);

    static ref_item items[64]; /* a longer file is compared up to here */
    size_t expected = reference_parse((const char *)data, size, items, sizeof items / sizeof items[0]);
    EXPECT(count == loaded_here.count, "load returned %zu for %zu patterns", count, loaded_here.count);
    size_t max = sizeof items / sizeof items[0];
    EXPECT(count == expected || (expected == max && count > max), "%zu patterns, reference %zu", count, expected);
    size_t loaded_count = loaded_here.count;
    if (count > max)
        count = loaded_here.count = max; /* compare the first ones; matching below sees only them */
    for (size_t i = 0; i < count; i++) {
        const lt_suppression *s = &loaded_here.items[i];
        EXPECT(s->kind == items[i].kind && !strcmp(s->text, items[i].text) && s->line == items[i].line,
               "pattern %zu: \"%s\" line %u, reference \"%s\" line %u", i, s->text, s->line, items[i].text,
               items[i].line);
        EXPECT(s->pattern == strchr(s->text, ':') + 1, "pattern %zu: pattern is not after the kind", i);
    }

    int need_frames = 0;
    for (size_t i = 0; i < count; i++)
        need_frames |= items[i].kind != LT_SUPPRESS_TYPE;
    EXPECT(lt_suppressions_need_frames(&loaded_here) == need_frames, "need_frames");

    const char *text = (const char *)data;
    for (size_t round = 0; round < 4; round++) {
        char name[3][MAX_NAME];
        for (int n = 0; n < 3; n++)
            pick_name(text, size, round * 131 + (size_t)n * 17 + (size ? data[(round + (size_t)n) % size] : 0),
                      name[n], sizeof name[n]);
        EXPECT(lt_suppress_type(&loaded_here, name[0]) == reference_match(items, count, LT_SUPPRESS_TYPE, name[0]),
               "type match of \"%s\"", name[0]);
        livetrack_frame frames[2];
        memset(frames, 0, sizeof frames);
        frames[0].function = name[0];
        frames[0].module = round & 1 ? name[1] : NULL;
        frames[1].file = name[2];
        frames[1].function = round & 2 ? NULL : name[1];
        long got = lt_suppress_frames(&loaded_here, frames, 2);
        long want = -1;
        for (size_t i = 0; i < count && want < 0; i++) {
            for (int f = 0; f < 2 && want < 0; f++) {
                const char *candidate = items[i].kind == LT_SUPPRESS_FUNCTION ? frames[f].function
                                        : items[i].kind == LT_SUPPRESS_MODULE ? frames[f].module
                                        : items[i].kind == LT_SUPPRESS_FILE   ? frames[f].file
                                                                              : NULL;
                if (candidate && reference_wildcard(strchr(items[i].text, ':') + 1, candidate))
                    want = (long)i;
                /* a function also by its name without a gcc clone suffix */
                char plain[MAX_NAME];
                size_t cut = items[i].kind == LT_SUPPRESS_FUNCTION && candidate ? clone_suffix_at(candidate) : 0;
                if (want < 0 && cut) {
                    memcpy(plain, candidate, cut);
                    plain[cut] = '\0';
                    if (reference_wildcard(strchr(items[i].text, ':') + 1, plain))
                        want = (long)i;
                }
            }
        }
        EXPECT(got == want, "frame match: %ld, reference %ld", got, want);
    }
    loaded_here.count = loaded_count;
    lt_suppressions_free(&loaded_here);
}

/* ---- entry ---------------------------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Bad suppression lines each get a message: a handful is enough. */
    setenv("LIVETRACK_MAX_DIAGNOSTICS", "3", 0);
    setenv("LIVETRACK_EXIT_REPORT", "off", 0);
    /* The settings were read before main(); read them again (this file
     * has settings.c's loader). */
    lt_get_settings();
    load();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    if (data[0] & 1)
        fuzz_suppressions(data + 1, size - 1);
    else
        fuzz_settings(data + 1, size - 1);
    return 0;
}
