/*
 * Reading livetrack run's log of verdicts, one line per tracked process
 * (format: layer/core/run_log.c), and saying what it shows.
 *
 * Without it, a run of a script that starts several tracked programs
 * shows only the files the last one wrote and the script's own status:
 * a leaking program whose status the script dropped would pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "run_log.h"
#include "string_map.h"

char *run_log_create(void)
{
    int fd;
    char *path = cli_private_temp_file("livetrack-run", &fd);
    if (path)
        close(fd);
    return path;
}

/* Splits `line` at tabs into at most `max` fields; returns the count. */
static size_t split_tabs(char *line, char **fields, size_t max)
{
    size_t count = 0;
    for (char *at = line; count < max;) {
        fields[count++] = at;
        at = strchr(at, '\t');
        if (!at)
            break;
        *at++ = '\0';
    }
    return count;
}

static int parse_number(const char *text, uint64_t *out)
{
    if (*text < '0' || *text > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    *out = value;
    return !errno && !*end;
}

run_verdicts run_log_read(const char *path)
{
    run_verdicts verdicts = {NULL, 0, 0};
    FILE *in = fopen(path, "r");
    if (!in)
        return verdicts;
    char *line = NULL;
    size_t capacity = 0, allocated = 0;
    ssize_t length;
    while ((length = getline(&line, &capacity, in)) > 0) {
        if (line[length - 1] != '\n') { /* cut short: a process ended mid-write */
            verdicts.malformed++;
            continue;
        }
        line[length - 1] = '\0';
        char *fields[13];
        uint64_t pid, signal_number, started, ended = 0;
        run_verdict v;
        memset(&v, 0, sizeof v);
        /* 12 fields; 11 from a core before the times (its field 11 is 0 or 1) */
        size_t count = split_tabs(line, fields, 13);
        if ((count != 11 && count != 12) || !parse_number(fields[0], &pid) ||
            !parse_number(fields[1], &v.leaked_objects) || !parse_number(fields[2], &v.leaked_bytes) ||
            !parse_number(fields[3], &v.misuse) || !parse_number(fields[4], &signal_number) ||
            !parse_number(fields[8], &v.inherited_objects) || !parse_number(fields[10], &started) ||
            (count == 11 && started > 1) || (count == 12 && !parse_number(fields[11], &ended)) ||
            pid > LONG_MAX || signal_number >= 128) {
            verdicts.malformed++;
            continue;
        }
        v.pid = (long)pid;
        v.signal = (int)signal_number;
        v.program = cli_strdup(fields[5]);
        v.text_path = cli_strdup(fields[6]);
        v.json_path = cli_strdup(fields[7]);
        v.csv_path = cli_strdup(fields[9]);
        v.csv_started = started != 0;
        v.csv_started_ns = count == 12 ? started : 0;
        v.ended_ns = ended;
        if (verdicts.count == allocated) {
            allocated = allocated ? allocated * 2 : 8;
            verdicts.items = cli_realloc(verdicts.items, allocated, sizeof *verdicts.items);
        }
        verdicts.items[verdicts.count++] = v;
    }
    free(line);
    fclose(in);
    return verdicts;
}

int run_log_forward(const char *from, const char *to)
{
    FILE *in = fopen(from, "r");
    int out = open(to, O_WRONLY | O_APPEND | O_CLOEXEC); /* no O_CREAT: the enclosing run made it */
    int ok = out >= 0, error = errno;
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    /* One write per line, as the core writes them, so that lines of the
     * enclosing run's other processes stay whole. */
    while (ok && in && (length = getline(&line, &capacity, in)) > 0)
        if (line[length - 1] == '\n' && write(out, line, (size_t)length) != length) {
            ok = 0;
            error = errno ? errno : EIO;
        }
    free(line);
    if (in)
        fclose(in);
    if (out >= 0)
        close(out);
    errno = error;
    return ok;
}

void run_verdicts_free(run_verdicts *verdicts)
{
    for (size_t i = 0; i < verdicts->count; i++) {
        free(verdicts->items[i].program);
        free(verdicts->items[i].text_path);
        free(verdicts->items[i].json_path);
        free(verdicts->items[i].csv_path);
    }
    free(verdicts->items);
    memset(verdicts, 0, sizeof *verdicts);
}

/* Processes listed one by one at most; the others are counted. */
#define LISTED_CLEAN_MAX 10 /* all of them, when there are no more than this */
#define LISTED_NOTABLE_MAX 50 /* with leaks, misuse or a crash */

/* A report or timeline file the processes wrote: how many processes wrote
 * it (for a timeline: started it anew) and the last one (reports only). */
typedef struct written_file {
    size_t writers, last;
    const char *path;
    char kind; /* 'T' text report, 'J' JSON, 'C' timeline */
} written_file;

/* The files by key, so that each listing is O(1) per process (a test
 * runner may start thousands). */
typedef struct file_writers {
    string_map ids; /* file_key() -> index into files */
    written_file *files;
    size_t count, capacity;
} file_writers;

/* The map's key of a file: its kind, then its path. */
static char *file_key(char kind, const char *path)
{
    size_t size = strlen(path) + 2;
    char *key = cli_alloc(size);
    snprintf(key, size, "%c%s", kind, path);
    return key;
}

static size_t file_id(file_writers *files, char kind, const char *path, int *added)
{
    char *key = file_key(kind, path);
    size_t id = (size_t)string_map_intern(&files->ids, key, files->count, added);
    free(key);
    if (*added) {
        if (files->count == files->capacity) {
            files->capacity = files->capacity ? files->capacity * 2 : 16;
            files->files = cli_realloc(files->files, files->capacity, sizeof *files->files);
        }
        files->files[id] = (written_file){0, 0, path, kind};
        files->count++;
    }
    return id;
}

/* Only a regular file keeps the last report written to it: /dev/null or a
 * terminal takes them all, and a path gone since says nothing. */
static int keeps_last_only(const char *path)
{
    struct stat status;
    return *path && stat(path, &status) == 0 && S_ISREG(status.st_mode);
}

static void count_writers(file_writers *files, const run_verdicts *verdicts)
{
    for (size_t i = 0; i < verdicts->count; i++) {
        for (int json = 0; json <= 1; json++) {
            const char *path = json ? verdicts->items[i].json_path : verdicts->items[i].text_path;
            int added;
            if (!keeps_last_only(path))
                continue;
            size_t id = file_id(files, json ? 'J' : 'T', path, &added);
            files->files[id].writers++;
            files->files[id].last = i;
        }
        /* A timeline is emptied when its first row is written, not at
         * exit, so the order of the log says nothing of which one stays:
         * the last to start it is the one with the latest start time. */
        const run_verdict *v = &verdicts->items[i];
        int added;
        if (v->csv_started && keeps_last_only(v->csv_path)) {
            size_t id = file_id(files, 'C', v->csv_path, &added); /* before the array: it may grow it */
            written_file *f = &files->files[id];
            if (!f->writers++ || v->csv_started_ns > verdicts->items[f->last].csv_started_ns)
                f->last = i;
        }
    }
}

/* A program name or path from the log as it may be shown: the log holds
 * what each process said of itself, control characters included. */
static const char *printable(const char *text, char *out, size_t size)
{
    snprintf(out, size, "%s", text);
    cli_make_printable(out, strlen(out));
    return out;
}

/* Whose rows a timeline that several processes started anew holds: the
 * last to start it emptied it, and a process started earlier that was
 * still running went on appending after that. */
static void say_timeline_kept(const run_verdicts *verdicts, const written_file *f)
{
    const run_verdict *last = &verdicts->items[f->last];
    char holds[384], running[128] = "";
    size_t used = 0, still = 0;
    for (size_t i = 0; last->csv_started_ns && i < verdicts->count; i++) {
        const run_verdict *v = &verdicts->items[i];
        if (v == last || !v->csv_started || strcmp(v->csv_path, f->path) || v->ended_ns < last->csv_started_ns)
            continue;
        if (still++ < 4) {
            int wrote = snprintf(running + used, sizeof running - used, "%s%ld", used ? ", " : "", v->pid);
            used += wrote > 0 && (size_t)wrote < sizeof running - used ? (size_t)wrote : 0;
        }
    }
    if (!last->csv_started_ns) /* a core that wrote no times */
        snprintf(holds, sizeof holds, "the rows of the last to start it (and of the processes it forked) only");
    else if (!still)
        snprintf(holds, sizeof holds,
                 "the rows of pid %ld, the last to start it (and of the processes it forked), only", last->pid);
    else
        snprintf(holds, sizeof holds,
                 "the rows of pid %ld, the last to start it (and of the processes it forked), and those that pid%s "
                 "%s%s, still running then, added after it",
                 last->pid, still == 1 ? "" : "s", running, still > 4 ? " and more" : "");
    char shown[PATH_MAX];
    cli_warn("%zu processes started the timeline %s anew, each emptying it; it holds %s (put %%p in the name to keep "
             "each process's)",
             f->writers, printable(f->path, shown, sizeof shown), holds);
}

/* "; JSON in F" or "; JSON in F, since replaced by pid N's" */
static void say_file(file_writers *files, const run_verdicts *verdicts, size_t index, int json, char *out,
                     size_t size)
{
    const char *path = json ? verdicts->items[index].json_path : verdicts->items[index].text_path;
    out[0] = '\0';
    if (!*path)
        return;
    uint64_t id;
    size_t last = index;
    char *key = file_key(json ? 'J' : 'T', path);
    if (string_map_get(&files->ids, key, &id))
        last = files->files[id].last;
    free(key);
    char shown[PATH_MAX];
    printable(path, shown, sizeof shown);
    if (last == index)
        snprintf(out, size, "; %s in %s", json ? "JSON" : "report", shown);
    else
        snprintf(out, size, "; %s in %s, since replaced by pid %ld's", json ? "JSON" : "report", shown,
                 verdicts->items[last].pid);
}

static void say_process(file_writers *files, const run_verdicts *verdicts, size_t index)
{
    const run_verdict *v = &verdicts->items[index];
    char what[160], misuse[64] = "", text_file[4200], json_file[4200], bytes[32];
    units_bytes((double)v->leaked_bytes, bytes, sizeof bytes);
    if (v->signal)
        snprintf(what, sizeof what, "crashed (%s) with %" PRIu64 " object%s live", strsignal(v->signal),
                 v->leaked_objects, v->leaked_objects == 1 ? "" : "s");
    else if (v->leaked_objects)
        snprintf(what, sizeof what, "%" PRIu64 " leaked object%s%s%s", v->leaked_objects,
                 v->leaked_objects == 1 ? "" : "s", v->leaked_bytes ? ", " : "", v->leaked_bytes ? bytes : "");
    else
        snprintf(what, sizeof what, "no leaks");
    if (v->inherited_objects && !v->signal) {
        size_t used = strlen(what);
        snprintf(what + used, sizeof what - used, " (and %" PRIu64 " object%s inherited from its parent)",
                 v->inherited_objects, v->inherited_objects == 1 ? "" : "s");
    }
    if (v->misuse)
        snprintf(misuse, sizeof misuse, ", %" PRIu64 " misused call%s", v->misuse, v->misuse == 1 ? "" : "s");
    say_file(files, verdicts, index, 0, text_file, sizeof text_file);
    say_file(files, verdicts, index, 1, json_file, sizeof json_file);
    char program[PATH_MAX], timeline[PATH_MAX];
    fprintf(stderr, "  pid %ld (%s): %s%s%s%s%s%s\n", v->pid, printable(v->program, program, sizeof program), what,
            misuse, text_file, json_file, *v->csv_path ? "; timeline in " : "",
            printable(v->csv_path, timeline, sizeof timeline));
}

size_t run_log_summarize(const run_verdicts *verdicts, size_t *crashed_out)
{
    size_t leaking = 0, crashed = 0;
    for (size_t i = 0; i < verdicts->count; i++) {
        if (verdicts->items[i].signal)
            crashed++;
        else if (verdicts->items[i].leaked_objects)
            leaking++;
    }
    *crashed_out = crashed;
    if (verdicts->count < 2)
        return leaking;
    char crashes[48] = "";
    if (crashed)
        snprintf(crashes, sizeof crashes, ", %zu crashed", crashed);
    cli_warn("%zu processes tracked objects: %zu leaked%s", verdicts->count, leaking, crashes);
    file_writers files;
    memset(&files, 0, sizeof files);
    count_writers(&files, verdicts);
    size_t notable_listed = 0, notable_left = 0, clean_left = 0;
    for (size_t i = 0; i < verdicts->count; i++) {
        const run_verdict *v = &verdicts->items[i];
        int notable = v->signal || v->leaked_objects || v->misuse;
        if (verdicts->count <= LISTED_CLEAN_MAX || (notable && notable_listed < LISTED_NOTABLE_MAX)) {
            say_process(&files, verdicts, i);
            notable_listed += notable;
        } else if (notable) {
            notable_left++;
        } else {
            clean_left++;
        }
    }
    if (notable_left)
        fprintf(stderr, "  and %zu more with leaks, misuse or a crash\n", notable_left);
    if (clean_left)
        fprintf(stderr, "  and %zu more with no leaks or misuse\n", clean_left);
    /* One line per file that several processes wrote: only the last
     * one's report is in it. */
    char shown[PATH_MAX];
    for (size_t id = 0; id < files.count; id++) {
        const written_file *f = &files.files[id];
        if (f->writers > 1 && f->kind == 'C')
            say_timeline_kept(verdicts, f);
        else if (f->writers > 1)
            cli_warn("%zu processes wrote %s; it holds pid %ld's %s only (put %%p in the name to keep each "
                     "process's)",
                     f->writers, printable(f->path, shown, sizeof shown), verdicts->items[f->last].pid,
                     f->kind == 'J' ? "JSON" : "report");
    }
    string_map_free(&files.ids);
    free(files.files);
    return leaking;
}
