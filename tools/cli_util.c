/*
 * What every subcommand needs: one-line errors with exit status 2, a small
 * option parser, and output files whose write errors are not lost.
 *
 * The parser is hand-written rather than getopt_long because getopt prints
 * its own messages (in its own words, sometimes on two lines) and permutes
 * argv, which would take the program's arguments after `run` for ours.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json_write.h"
#include "printable.h"

/* "livetrack run", or "livetrack" before a subcommand is known. */
static char command_name[64] = "livetrack";

static void vmessage(const char *fmt, va_list args)
{
    fflush(stdout);
    fprintf(stderr, "%s: ", command_name);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
}

void cli_fail(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vmessage(fmt, args);
    va_end(args);
    exit(CLI_EXIT_USAGE);
}

void cli_warn(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vmessage(fmt, args);
    va_end(args);
}

void *cli_alloc(size_t size)
{
    void *memory = calloc(1, size ? size : 1);
    if (!memory)
        cli_fail("out of memory");
    return memory;
}

void *cli_realloc(void *old, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        cli_fail("out of memory");
    size_t bytes = count * size;
    void *memory = realloc(old, bytes ? bytes : 1);
    if (!memory)
        cli_fail("out of memory");
    return memory;
}

uint64_t cli_add_saturated(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void text_buffer_add(text_buffer *buffer, const char *piece)
{
    size_t length = strlen(piece);
    if (buffer->used + length + 1 > buffer->capacity) {
        buffer->capacity = (buffer->used + length + 1) * 2;
        buffer->text = cli_realloc(buffer->text, buffer->capacity, 1);
    }
    memcpy(buffer->text + buffer->used, piece, length + 1);
    buffer->used += length;
}

char *cli_strdup(const char *text)
{
    size_t length = strlen(text);
    char *copy = cli_alloc(length + 1);
    memcpy(copy, text, length + 1);
    return copy;
}

void cli_make_printable(char *text, size_t length) { lt_make_printable(text, length); }

char *cli_name_as_reported(const char *text)
{
    static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
    size_t length = strlen(text);
    char *copy = cli_alloc(3 * length + 1), *at = copy; /* each byte at most U+FFFD's three */
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        size_t sequence = *s < 0x80 ? 1 : lt_utf8_sequence(s);
        if (sequence) {
            memcpy(at, s, sequence);
            at += sequence;
            s += sequence;
        } else {
            memcpy(at, replacement, 3);
            at += 3;
            s++;
        }
    }
    *at = '\0';
    lt_make_printable(copy, (size_t)(at - copy));
    return copy;
}

void cli_parser_init(cli_parser *parser, const char *command, int argc, char **argv)
{
    snprintf(command_name, sizeof command_name, "livetrack%s%s", command ? " " : "", command ? command : "");
    parser->argc = argc;
    parser->argv = argv;
    parser->index = 0;
    parser->options_done = 0;
}

int cli_more(const cli_parser *parser) { return parser->index < parser->argc; }

static const char *current(const cli_parser *parser) { return parser->argv[parser->index]; }

/* Does the current argument name this option? *inline_value gets the text
 * after '=' of "--name=VALUE" (or after "-n" of "-nVALUE"), else NULL. */
static int names(const cli_parser *parser, const char *long_name, char short_name, const char **inline_value)
{
    const char *arg = current(parser);
    *inline_value = NULL;
    if (parser->options_done || arg[0] != '-')
        return 0;
    if (arg[1] == '-' && long_name) {
        size_t length = strlen(long_name);
        if (strncmp(arg + 2, long_name, length))
            return 0;
        if (arg[2 + length] == '=') {
            *inline_value = arg + 3 + length;
            return 1;
        }
        return arg[2 + length] == '\0';
    }
    if (short_name && arg[1] == short_name) {
        if (arg[2])
            *inline_value = arg + 2;
        return 1;
    }
    return 0;
}

int cli_flag(cli_parser *parser, const char *long_name, char short_name)
{
    const char *inline_value;
    if (!names(parser, long_name, short_name, &inline_value))
        return 0;
    if (inline_value)
        cli_fail("%s takes no value", current(parser));
    parser->index++;
    return 1;
}

int cli_value(cli_parser *parser, const char *long_name, char short_name, const char **value)
{
    const char *inline_value;
    if (!names(parser, long_name, short_name, &inline_value))
        return 0;
    const char *option = current(parser);
    parser->index++;
    if (inline_value) {
        *value = inline_value;
    } else {
        /* "--" ends the options (`run --json -- prog`): never a value
         * given apart, which would hide the missing one. */
        if (!cli_more(parser) || !strcmp(current(parser), "--"))
            cli_fail("%s needs a value", option);
        *value = current(parser);
        parser->index++;
    }
    if (!**value)
        cli_fail("%s needs a value", option);
    return 1;
}

int cli_optional_value(cli_parser *parser, const char *long_name, const char **value)
{
    const char *inline_value;
    if (!names(parser, long_name, 0, &inline_value))
        return 0;
    *value = inline_value;
    parser->index++;
    return 1;
}

int cli_positional(cli_parser *parser, const char **value)
{
    const char *arg = current(parser);
    /* "-" alone is the usual name of stdin/stdout, not an option. */
    if (!parser->options_done && arg[0] == '-' && arg[1])
        return 0;
    *value = arg;
    parser->index++;
    return 1;
}

int cli_double_dash(cli_parser *parser)
{
    if (parser->options_done || strcmp(current(parser), "--"))
        return 0;
    parser->options_done = 1;
    parser->index++;
    return 1;
}

void cli_unknown(const cli_parser *parser)
{
    const char *arg = current(parser);
    const char *help_hint = strcmp(command_name, "livetrack") ? command_name : "livetrack";
    if (arg[0] == '-' && arg[1] && !parser->options_done)
        cli_fail("unknown option '%s' (see '%s --help')", arg, help_hint);
    cli_fail("unexpected argument '%s' (see '%s --help')", arg, help_hint);
}

void cli_check_choice(const char *option, const char *text, const char *const choices[])
{
    size_t count = 0;
    while (choices[count])
        if (!strcmp(text, choices[count++]))
            return;
    char wanted[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < count && used < sizeof wanted; i++) {
        const char *separator = i == 0 ? "" : i + 1 == count ? " or " : ", ";
        int wrote = snprintf(wanted + used, sizeof wanted - used, "%s%s", separator, choices[i]);
        used += wrote > 0 ? (size_t)wrote : 0;
    }
    cli_fail("%s wants %s, not '%s'", option, wanted, text);
}

long cli_parse_long(const char *option, const char *text, long min, long max)
{
    char *end;
    errno = 0;
    long number = strtol(text, &end, 10);
    if (errno || end == text || *end || number < min || number > max) {
        if (max == LONG_MAX)
            cli_fail("%s wants an integer >= %ld, not '%s'", option, min, text);
        cli_fail("%s wants an integer from %ld to %ld, not '%s'", option, min, max, text);
    }
    return number;
}

FILE *cli_open_output(const char *path, int binary)
{
    if (!strcmp(path, "-"))
        return stdout;
    FILE *out = fopen(path, binary ? "wb" : "w");
    if (!out)
        cli_fail("cannot write %s: %s", path, strerror(errno));
    return out;
}

void cli_close_output(FILE *out, const char *path)
{
    int failed = ferror(out);
    if (out == stdout)
        failed |= fflush(out) != 0;
    else
        failed |= fclose(out) != 0;
    if (failed)
        cli_fail("writing %s failed: %s", path, strerror(errno ? errno : EIO));
}

char *cli_private_temp_file(const char *prefix, int *fd)
{
    const char *directory = getenv("TMPDIR");
    if (!directory || !*directory)
        directory = "/tmp";
    /* Absolute: the processes of the tree may change directory before
     * they open it, and a relative path would miss the file. */
    char resolved[PATH_MAX];
    if (directory[0] != '/' && realpath(directory, resolved))
        directory = resolved;
    size_t size = strlen(directory) + strlen(prefix) + 16;
    char *path = cli_alloc(size);
    snprintf(path, size, "%s/%s.XXXXXX", directory, prefix);
    *fd = mkstemp(path); /* mode 0600: what is in it is nobody else's business */
    if (*fd < 0) {
        int error = errno;
        free(path);
        errno = error;
        return NULL;
    }
    return path;
}
