/*
 * The livetrack command: what its parts share.
 *
 * Each subcommand lives in its own cli_<name>.c and is reached through
 * one entry point below. Helpers for argument parsing, errors and output
 * files are in cli_util.c, human units in units.c.
 *
 * Exit statuses, the same for every subcommand (run passes the
 * program's own status through instead):
 *   0  done
 *   1  diff: NEW has leaks at call sites BASE does not have
 *   2  bad arguments, or an input file that cannot be read or understood,
 *      or an output file that cannot be written
 */
#ifndef LIVETRACK_CLI_H
#define LIVETRACK_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FOUND 1
#define CLI_EXIT_USAGE 2

int cli_run(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_plot(int argc, char **argv);
int cli_trace(int argc, char **argv);
int cli_pprof(int argc, char **argv);

/* The version of the tool: the version of the library it ships with. */
const char *cli_version(void);

/* ---- errors ---- */
/* One line "livetrack COMMAND: message" on stderr, then exit status 2.
 * The command name is the one set by cli_parser_init (or none). */
void cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* One line "livetrack COMMAND: message" on stderr; the caller goes on. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Give up when memory runs out (the inputs the tool reads are files the
 * user chose; a failed allocation is not worth recovering from). */
void *cli_alloc(size_t size);
void *cli_realloc(void *old, size_t count, size_t size);
char *cli_strdup(const char *text);
/* In place: C0 controls and DEL become '?', and so do both bytes of a C1
 * control (U+0080..U+009F: 0xC2 0x80..0x9F), which some terminals obey
 * too. Names that come from files or other processes reach terminals and
 * must not drive them. The length stays. */
void cli_make_printable(char *text, size_t length);
/* A name as the timeline holds it (its raw bytes) as a loaded JSON report
 * holds the same name: the report's writer made each byte that is not
 * UTF-8 U+FFFD (lt_json_string) and report_load made control characters
 * '?' (cli_make_printable). Names are matched across the two files in
 * this form. Returns a copy (free() it). */
char *cli_name_as_reported(const char *text);
/* Text that grows as pieces are added (text is NUL-terminated once one
 * was; free() it). */
typedef struct text_buffer {
    char *text;
    size_t used, capacity;
} text_buffer;
void text_buffer_add(text_buffer *buffer, const char *piece);
/* a + b, or UINT64_MAX when that does not fit: totals of counts read from
 * a report, where each may be near 2^63, must not wrap. */
uint64_t cli_add_saturated(uint64_t a, uint64_t b);

/* Makes an empty file only this user can read and write (mode 0600) in
 * $TMPDIR (or /tmp), named `prefix`.XXXXXX, and returns its absolute path
 * (to free) with the file open for writing in *fd; NULL with errno set
 * when it cannot. */
char *cli_private_temp_file(const char *prefix, int *fd);

/* ---- argument parsing ----
 * Options are "--name VALUE", "--name=VALUE" or "-n VALUE"; "--" ends
 * the options. Each subcommand loops while cli_more() and tries its
 * options one by one; cli_unknown() rejects what nobody took. */
typedef struct cli_parser {
    int argc;
    char **argv;
    int index;
    int options_done; /* after "--" everything is positional */
} cli_parser;

void cli_parser_init(cli_parser *parser, const char *command, int argc, char **argv);
int cli_more(const cli_parser *parser);
/* A flag without value. short_name 0: none. */
int cli_flag(cli_parser *parser, const char *long_name, char short_name);
/* An option that takes a value (required). */
int cli_value(cli_parser *parser, const char *long_name, char short_name, const char **value);
/* An option whose value is optional and only given as "--name=VALUE";
 * *value is NULL when absent. */
int cli_optional_value(cli_parser *parser, const char *long_name, const char **value);
/* A positional argument (anything that is not an option, or after "--"). */
int cli_positional(cli_parser *parser, const char **value);
/* Consumes "--" and returns 1 when it is next. */
int cli_double_dash(cli_parser *parser);
void cli_unknown(const cli_parser *parser) __attribute__((noreturn));

/* Strict number parsing for option values: cli_fail() on anything else. */
long cli_parse_long(const char *option, const char *text, long min, long max);
/* An option value that must be one of `choices` (NULL-terminated):
 * cli_fail() ("--by wants site, type or api, not 'x'") on anything else. */
void cli_check_choice(const char *option, const char *text, const char *const choices[]);

/* ---- output ---- */
/* Opens `path` for writing ("-": stdout); cli_fail() when it cannot. */
FILE *cli_open_output(const char *path, int binary);
/* Closes it and cli_fail()s when anything could not be written. */
void cli_close_output(FILE *out, const char *path);

/* ---- units (units.c) ---- */
/* "0 B", "812 B", "4.0 KiB", "1.20 GiB". */
void units_bytes(double bytes, char *out, size_t size);
/* "0.25 ms", "812 ms", "1.50 s", "2 min 5 s". */
void units_time_ms(double ms, char *out, size_t size);
/* "1234567" -> "1,234,567". */
void units_count(int64_t count, char *out, size_t size);
/* The last part of a path ("/a/b/leaky.c" -> "leaky.c"). */
const char *units_basename(const char *path);

#endif
