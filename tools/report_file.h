/*
 * A saved JSON report (LIVETRACK_JSON, schema "livetrack-report"
 * version 1) and what several subcommands do with it: check that it is
 * one, print frames the way the exit report does, and name call sites.
 */
#ifndef LIVETRACK_REPORT_FILE_H
#define LIVETRACK_REPORT_FILE_H

#include <stdio.h>

#include "json_reader.h"

#define REPORT_SCHEMA "livetrack-report"
#define REPORT_VERSION 1

typedef struct report_file {
    const char *path;
    json_document *document;
    const json_value *root;
    int leaks_unknown; /* "leaks_known": false: no leak counts, only live objects */
} report_file;

/* Loads and checks `path`; cli_fail()s (exit 2) when it cannot be read or
 * is not a livetrack report. A newer version is read with a warning. */
void report_load(const char *path, report_file *out);
/* The same from a stream already open (read to its end, not closed);
 * `path` names it in messages. */
void report_load_stream(FILE *in, const char *path, report_file *out);
void report_free(report_file *report);

/* One frame as "0x55d0c0de1234 in main /abs/leaky.c:42:5", cut to fit
 * `size`; returns the whole text's length (as snprintf does). */
size_t report_frame_text(const json_value *frame, char *out, size_t size);
/* The same, whole, in memory of its own (free() it): C++ template names
 * run to kilobytes, and cut they read alike. */
char *report_frame_string(const json_value *frame);
/* 1 when the report `root` was written with call sites off
 * (settings.stack_depth 0): each site is then one kind of object. */
int report_call_sites_off(const json_value *root);
/* "#0 ..." lines, one per frame, each after `indent`; when there is none,
 * why, as far as the report `root` tells: call sites were off, or this
 * object's stack was not recorded (made by livetrack_create_with_stack
 * without one, or a capture that failed). */
void report_print_frames(FILE *out, const json_value *root, const json_value *frames, const char *indent);
/* The same "why" alone, for other formats. */
const char *report_no_stack_text(const json_value *root);
/* A short name for a call site: its first frame as "main (leaky.c:42)". */
void report_site_label(const json_value *site, char *out, size_t size);
/* "cl_event x20, cl_mem x2" from a site's "types". */
void report_site_types(const json_value *site, char *out, size_t size);

/* A source file a checkout can move: an absolute path outside the
 * system's directories (/usr, /lib, /lib32, /lib64, /libx32). Relative
 * names (glibc's "./csu/libc-start.c") and installed headers and
 * libraries read the same wherever the program was checked out. */
int report_movable_file(const char *file);

/* Whether `dir` (ending in '/') is the root or a system directory
 * itself ("/", "/usr/", "/lib/", ...): a directory that holds the
 * system's files, not only a checkout's. */
int report_system_dir_or_above(const char *dir);

/* One directory of source files in one report that is another in the
 * report it is compared with (the same code checked out or built
 * elsewhere): files under `from` are keyed as if under `to`. Both end in
 * '/', so that /ws1/ never takes /ws10/a.c for one of its files. A
 * guessed directory moves only movable files under it; one the user
 * named (`named`) moves every absolute file under it, so that a checkout
 * under /usr (Docker's /usr/src/app) can be mapped, unless it is the root
 * or a system directory itself, which moves only movable files too. */
typedef struct report_path_map {
    const char *from;
    const char *to;
    int named;
} report_path_map;

/* Whether `map` moves `file` (see report_path_map). */
int report_path_map_moves(const report_path_map *map, const char *file);

/* What makes two call sites the same across runs: the symbolized frames
 * (function, file, line; module+offset where a frame has no symbol),
 * never addresses, which change with every run (ASLR). With
 * ignore_lines, line numbers are left out too, so edits that only move
 * code do not make every site look new. With `map` (NULL: none), the
 * files it moves (report_path_map_moves) read as under map->to. A site
 * without frames is known by its object types. Returns a malloc'd
 * string. */
char *report_site_key(const json_value *site, int ignore_lines, const report_path_map *map);

#endif
