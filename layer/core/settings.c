/*
 * Every LIVETRACK_* setting, in one table with its default and meaning.
 * The README's settings table mirrors this one.
 *
 * Values are read once, on first use, and strings are copied then (the
 * program may overwrite its environment later). A bad value gets one
 * message and the default; it never stops the program.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"

typedef enum { SETTING_STRING, SETTING_BOOL, SETTING_LONG, SETTING_CHOICE } setting_kind;

typedef struct setting {
    const char *name;
    setting_kind kind;
    const char *default_value;
    const char *choices; /* SETTING_CHOICE: "a|b|c", index stored */
    size_t offset;       /* into lt_settings */
    const char *doc;
    long min, max;       /* SETTING_LONG: accepted range */
} setting;

static const setting setting_table[] = {
    {"LIVETRACK_OUTPUT", SETTING_STRING, NULL, NULL, offsetof(lt_settings, output),
     "write the exit report to this file instead of stderr; %p becomes the pid", 0, 0},
    {"LIVETRACK_TRANSPARENT", SETTING_BOOL, "0", NULL, offsetof(lt_settings, transparent),
     "1: pass misused calls (release of a dead handle, ...) to the driver after the diagnostic", 0, 0},
    {"LIVETRACK_EXIT_REPORT", SETTING_CHOICE, "auto", "auto|always|off", offsetof(lt_settings, exit_report),
     "auto: report at exit only when something leaked; always: also when nothing did; off: never", 0, 0},
    {"LIVETRACK_MAX_DIAGNOSTICS", SETTING_LONG, "1000", NULL, offsetof(lt_settings, max_diagnostics),
     "stop printing diagnostics (a message and its stacks) after this many (-1: no limit)", -1, LONG_MAX},
    {"LIVETRACK_STACK_DEPTH", SETTING_LONG, "16", NULL, offsetof(lt_settings, stack_depth),
     "frames of the creation call stack to keep (at most 64); 0 turns call sites off", 0, 64},
    {"LIVETRACK_STACK_MEMO", SETTING_BOOL, "1", NULL, offsetof(lt_settings, stack_memo),
     "0: walk every creation stack with libunwind instead of recognising a stack already walked by its return addresses",
     0, 0},
    {"LIVETRACK_RELEASE_STACKS", SETTING_BOOL, "0", NULL, offsetof(lt_settings, release_stacks),
     "1: also capture the stack of each final release, shown when a released object is misused", 0, 0},
    {"LIVETRACK_JSON", SETTING_STRING, NULL, NULL, offsetof(lt_settings, json),
     "also write the exit report as JSON (docs/report-schema.md) to this file; %p becomes the pid", 0, 0},
    {"LIVETRACK_CSV", SETTING_STRING, NULL, NULL, offsetof(lt_settings, csv),
     "write a timeline, one CSV row per lifecycle event, to this file; %p becomes the pid", 0, 0},
    {"LIVETRACK_EXIT_CODE", SETTING_LONG, "0", NULL, offsetof(lt_settings, exit_code),
     "when leaks remain at exit, end the process with this status (1..255); 0: keep the program's", 0, 255},
    {"LIVETRACK_SUPPRESSIONS", SETTING_STRING, NULL, NULL, offsetof(lt_settings, suppressions),
     "file of patterns (type:, function:, module:, file:) whose leaks are not reported", 0, 0},
    {"LIVETRACK_PEAK_REPORT", SETTING_BOOL, "0", NULL, offsetof(lt_settings, peak_report),
     "1: the exit report also shows the live set at the peak of live bytes", 0, 0},
    {"LIVETRACK_CRASH_REPORT", SETTING_BOOL, "1", NULL, offsetof(lt_settings, crash_report),
     "0: leave SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL alone (no leak report when the program crashes)", 0, 0},
    {"LIVETRACK_QUIET_ABSENT_API", SETTING_BOOL, "0", NULL, offsetof(lt_settings, quiet_absent_api),
     "1 (set by livetrack run when --api is not given): a front end finding no driver for its API says nothing", 0,
     0},
    {"LIVETRACK_RUN_LOG", SETTING_STRING, NULL, NULL, offsetof(lt_settings, run_log),
     "(set by livetrack run) an existing file to which each process that recorded anything appends one line: its "
     "leaks, misused calls and report files",
     0, 0},
    {"LIVETRACK_CREATION_ORDER", SETTING_CHOICE, "auto", "auto|counter|clock", offsetof(lt_settings, creation_order),
     "how creation numbers (seq) are made: counter: 1, 2, 3 ... from one counter every create writes; clock: from the "
     "time-stamp counter, so creates write no shared line; auto: clock where the CPU's counter is invariant and "
     "Linux's clocksource is tsc (x86-64)",
     0, 0},
};

static lt_settings current;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

/* The string settings' values, copied: getenv's pointer is into the
 * process's initial environment block, which a program that sets its
 * process title (setproctitle: nginx, PostgreSQL, Python's setproctitle)
 * overwrites, and the report paths are read at exit. Static, not
 * lt_malloc: settings load in a constructor, and a copy that could fail
 * (LIVETRACK_FAULT_ALLOC_AFTER, a real shortage) would lose the reports.
 * One buffer per row of the table, to be indexed by it; the rows that are
 * not strings never touch theirs, and untouched .bss pages cost nothing.
 * Every string setting is a path, so PATH_MAX bounds them. */
static char string_values[sizeof setting_table / sizeof setting_table[0]][PATH_MAX];

static void warn_bad(const setting *s, const char *value, const char *expected)
{
    /* Not lt_diag: that reads the settings being loaded. */
    fprintf(stderr, "livetrack: %s=\"%s\" is not %s; using the default \"%s\"\n", s->name, value, expected,
            s->default_value ? s->default_value : "");
}

static int parse_one(const setting *s, const char *value, int complain)
{
    char *field = (char *)&current + s->offset;
    switch (s->kind) {
    case SETTING_STRING: {
        char *copy = string_values[s - setting_table];
        size_t length = value ? strlen(value) : 0;
        if (length >= sizeof string_values[0]) {
            if (complain) {
                char expected[64];
                snprintf(expected, sizeof expected, "a path of at most %zu bytes", sizeof string_values[0] - 1);
                warn_bad(s, value, expected);
            }
            return 0;
        }
        if (length)
            memcpy(copy, value, length + 1);
        *(const char **)field = length ? copy : NULL;
        return 1;
    }
    case SETTING_BOOL:
        if (!strcmp(value, "1") || !strcasecmp(value, "true") || !strcasecmp(value, "yes") || !strcasecmp(value, "on")) {
            *(int *)field = 1;
            return 1;
        }
        if (!strcmp(value, "0") || !strcasecmp(value, "false") || !strcasecmp(value, "no") || !strcasecmp(value, "off")) {
            *(int *)field = 0;
            return 1;
        }
        if (complain)
            warn_bad(s, value, "0 or 1");
        return 0;
    case SETTING_LONG: {
        char *end;
        errno = 0;
        long number = strtol(value, &end, 10);
        if (errno || end == value || *end || number < s->min || number > s->max) {
            if (complain) {
                char expected[64];
                if (s->max == LONG_MAX)
                    snprintf(expected, sizeof expected, "an integer >= %ld", s->min);
                else
                    snprintf(expected, sizeof expected, "an integer from %ld to %ld", s->min, s->max);
                warn_bad(s, value, expected);
            }
            return 0;
        }
        *(long *)field = number;
        return 1;
    }
    case SETTING_CHOICE: {
        size_t length = strlen(value);
        int index = 0;
        for (const char *choice = s->choices; *choice; index++) {
            size_t choice_length = strcspn(choice, "|");
            if (choice_length == length && !strncasecmp(choice, value, length)) {
                *(int *)field = index;
                return 1;
            }
            choice += choice_length + (choice[choice_length] == '|');
        }
        if (complain)
            warn_bad(s, value, s->choices);
        return 0;
    }
    }
    return 0;
}

static void load(void)
{
    memset(&current, 0, sizeof current);
    for (size_t i = 0; i < sizeof setting_table / sizeof setting_table[0]; i++) {
        const setting *s = &setting_table[i];
        if (s->default_value)
            parse_one(s, s->default_value, 0);
        /* Empty is unset, as "VAR= program" means in a shell script. */
        const char *value = getenv(s->name);
        if (value && *value && !parse_one(s, value, 1) && s->default_value)
            parse_one(s, s->default_value, 0);
    }
}

/* Set once the table is loaded: the hot path (stack depth on every
 * create) then pays one load instead of a pthread_once call. */
_Atomic(const lt_settings *) lt_settings_ready;

const lt_settings *lt_load_settings(void)
{
    pthread_once(&loaded, load);
    atomic_store_explicit(&lt_settings_ready, &current, memory_order_release);
    return &current;
}

int livetrack_transparent(void) { return lt_get_settings()->transparent; }

int livetrack_quiet_absent_api(void) { return lt_get_settings()->quiet_absent_api; }
