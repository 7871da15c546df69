/*
 * livetrack run's log of the verdicts of every tracked process of the
 * program's tree (the core library writes them: layer/core/run_log.c).
 */
#ifndef LIVETRACK_RUN_LOG_H
#define LIVETRACK_RUN_LOG_H

#include <stddef.h>
#include <stdint.h>

typedef struct run_verdict {
    long pid;
    uint64_t leaked_objects, leaked_bytes, misuse;
    uint64_t inherited_objects;        /* left by the parent it forked from; not its leaks */
    int signal;                        /* the crash's signal, 0: exited */
    char *program, *text_path, *json_path, *csv_path; /* "" when none */
    int csv_started;                   /* it emptied the timeline (0: appended to a relative's) */
    uint64_t csv_started_ns, ended_ns; /* when it emptied it, when it wrote its line (CLOCK_MONOTONIC; 0: not known) */
} run_verdict;

typedef struct run_verdicts {
    run_verdict *items;
    size_t count;
    size_t malformed;                  /* lines that were not verdicts */
} run_verdicts;

/* Makes an empty private log file and returns its path (to free), or
 * NULL with errno set. */
char *run_log_create(void);
/* The verdicts in the log, in the order the processes ended. */
run_verdicts run_log_read(const char *path);
void run_verdicts_free(run_verdicts *verdicts);
/* Appends the whole lines of log `from` to log `to` (a livetrack run
 * inside another one passes its processes' verdicts on). 0 with errno
 * when `to` cannot be written. */
int run_log_forward(const char *from, const char *to);
/* Says on stderr what each process left when there was more than one, and
 * which report files a later process replaced. Returns the number of
 * processes that exited with leaks, and in *crashed the number that
 * crashed. */
size_t run_log_summarize(const run_verdicts *verdicts, size_t *crashed);

#endif
