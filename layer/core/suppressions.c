/*
 * Leak suppressions: reading LIVETRACK_SUPPRESSIONS and matching its
 * patterns (format in suppressions.h).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"
#include "suppressions.h"
#include "wildcard.h"

static const struct {
    const char *name;
    lt_suppression_kind kind;
} kind_names[] = {
    {"type", LT_SUPPRESS_TYPE},
    {"function", LT_SUPPRESS_FUNCTION},
    {"module", LT_SUPPRESS_MODULE},
    {"file", LT_SUPPRESS_FILE},
};

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

/* Trim in place; returns the first non-space character. */
static char *trim(char *text)
{
    while (is_space(*text))
        text++;
    size_t length = strlen(text);
    while (length && is_space(text[length - 1]))
        text[--length] = '\0';
    return text;
}

static char *copy_string(const char *text)
{
    size_t length = strlen(text) + 1;
    char *copy = lt_malloc(length);
    if (copy)
        memcpy(copy, text, length);
    return copy;
}

/* Parse one trimmed, non-empty, non-comment line. Returns 0 with *why set
 * when it is not a pattern. */
static int parse_line(char *line, lt_suppression *out, const char **why)
{
    char *colon = strchr(line, ':');
    if (!colon) {
        *why = "no \"kind:\" prefix";
        return 0;
    }
    *colon = '\0';
    const char *kind = trim(line);
    char *pattern = trim(colon + 1);
    size_t k = 0;
    while (k < sizeof kind_names / sizeof kind_names[0] && strcmp(kind, kind_names[k].name) != 0)
        k++;
    if (k == sizeof kind_names / sizeof kind_names[0]) {
        *why = "unknown kind";
        return 0;
    }
    if (!*pattern) {
        *why = "empty pattern";
        return 0;
    }
    size_t text_size = strlen(kind) + 1 + strlen(pattern) + 1;
    char *text = lt_malloc(text_size);
    if (!text) {
        *why = "out of memory";
        return 0;
    }
    snprintf(text, text_size, "%s:%s", kind, pattern);
    out->kind = kind_names[k].kind;
    out->text = text;
    out->pattern = text + strlen(kind) + 1;
    return 1;
}

size_t lt_suppressions_load(const char *path, lt_suppressions *out)
{
    memset(out, 0, sizeof *out);
    if (!path)
        return 0;
    out->path = copy_string(path);
    FILE *file = fopen(path, "r");
    if (!file) {
        lt_note("cannot read the suppressions file \"%s\" (LIVETRACK_SUPPRESSIONS): %s; no leaks are suppressed",
                path, strerror(errno));
        return 0;
    }
    size_t capacity = 0;
    char *line = NULL;
    size_t line_size = 0;
    unsigned number = 0;
    while (getline(&line, &line_size, file) >= 0) {
        number++;
        char *text = trim(line);
        /* A comment: a line starting with #, or a # after a blank. A #
         * inside a pattern stays (a file or function may have one). */
        for (char *hash = strchr(text, '#'); hash; hash = strchr(hash + 1, '#'))
            if (hash == text || is_space(hash[-1])) {
                *hash = '\0';
                break;
            }
        text = trim(text);
        if (!*text)
            continue;
        lt_suppression item = {0};
        const char *why = NULL;
        char shown[120];
        snprintf(shown, sizeof shown, "%s", text);
        if (!parse_line(text, &item, &why)) {
            lt_note("%s:%u: \"%s\" is not a suppression (%s; expected type:, function:, module: or file: and a "
                    "pattern); line ignored",
                    path, number, shown, why);
            continue;
        }
        item.line = number;
        if (out->count == capacity) {
            size_t grown = capacity ? capacity * 2 : 16;
            lt_suppression *items = lt_malloc(grown * sizeof *items);
            if (!items) {
                lt_free((void *)item.text);
                lt_note("%s:%u: out of memory reading suppressions; the rest of the file is ignored", path, number);
                break;
            }
            if (out->count)
                memcpy(items, out->items, out->count * sizeof *items);
            lt_free(out->items);
            out->items = items;
            capacity = grown;
        }
        out->items[out->count++] = item;
    }
    /* fopen succeeds on a directory; its first read fails (EISDIR). */
    int read_error = ferror(file) ? errno : 0;
    if (read_error && !number)
        lt_note("cannot read the suppressions file \"%s\" (LIVETRACK_SUPPRESSIONS): %s; no leaks are suppressed", path,
                strerror(read_error));
    else if (read_error)
        lt_note("%s:%u: reading failed after this line: %s; the rest of the file is ignored", path, number,
                strerror(read_error));
    free(line); /* getline's buffer comes from malloc */
    fclose(file);
    return out->count;
}

void lt_suppressions_free(lt_suppressions *suppressions)
{
    for (size_t i = 0; i < suppressions->count; i++)
        lt_free((void *)suppressions->items[i].text);
    lt_free(suppressions->items);
    lt_free((void *)suppressions->path);
    memset(suppressions, 0, sizeof *suppressions);
}

static lt_suppressions loaded;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) { lt_suppressions_load(lt_get_settings()->suppressions, &loaded); }

const lt_suppressions *lt_suppressions_get(void)
{
    pthread_once(&load_once, load);
    return &loaded;
}

long lt_suppress_type(const lt_suppressions *suppressions, const char *type_name)
{
    for (size_t i = 0; i < suppressions->count; i++)
        if (suppressions->items[i].kind == LT_SUPPRESS_TYPE &&
            lt_wildcard_matches(suppressions->items[i].pattern, type_name))
            return (long)i;
    return -1;
}

/* A function name without the suffix gcc gives the copies it makes of a
 * function (leak_buffer.constprop.0, setup.part.0, main.cold): the
 * program's author wrote function:leak_buffer, and addr2line prints the
 * plain name too. Writes into `out`; returns NULL when there is none. */
static const char *without_clone_suffix(const char *name, char *out, size_t size)
{
    static const char *const suffixes[] = {".constprop.", ".isra.", ".part.", ".cold", ".lto_priv.", ".clone.",
                                           ".localalias"};
    if (!name)
        return NULL;
    const char *cut = NULL;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        const char *at = name[0] ? strstr(name + 1, suffixes[i]) : NULL; /* a name is never all suffix */
        if (at && (!cut || at < cut))
            cut = at;
    }
    if (!cut || (size_t)(cut - name) >= size)
        return NULL;
    memcpy(out, name, (size_t)(cut - name));
    out[cut - name] = '\0';
    return out;
}

long lt_suppress_frames(const lt_suppressions *suppressions, const livetrack_frame *frames, size_t count)
{
    /* Pattern order decides which one is credited when several match. */
    for (size_t i = 0; i < suppressions->count; i++) {
        const lt_suppression *s = &suppressions->items[i];
        for (size_t f = 0; f < count; f++) {
            const char *text = s->kind == LT_SUPPRESS_FUNCTION ? frames[f].function
                               : s->kind == LT_SUPPRESS_MODULE ? frames[f].module
                               : s->kind == LT_SUPPRESS_FILE   ? frames[f].file
                                                               : NULL;
            if (lt_wildcard_matches(s->pattern, text))
                return (long)i;
            char plain[512];
            if (s->kind == LT_SUPPRESS_FUNCTION &&
                lt_wildcard_matches(s->pattern, without_clone_suffix(text, plain, sizeof plain)))
                return (long)i;
        }
    }
    return -1;
}

long lt_suppressions_first_frame_pattern(const lt_suppressions *suppressions)
{
    for (size_t i = 0; i < suppressions->count; i++)
        if (suppressions->items[i].kind != LT_SUPPRESS_TYPE)
            return (long)i;
    return LONG_MAX;
}

int lt_suppressions_need_frames(const lt_suppressions *suppressions)
{
    return lt_suppressions_first_frame_pattern(suppressions) != LONG_MAX;
}
