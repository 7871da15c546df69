/*
 * Process lifecycle: fork() and fatal signals.
 *
 * fork: only the forking thread exists in the child, so a lock another
 * thread held at the moment of fork() would stay held there forever.
 * Before fork() we take every lock the core owns, outermost first, in
 * the order the code nests them (core_internal.h): the peak and misuse
 * history (the peak set is copied under all shard locks), the registry's
 * shards, the stack table (a release stack is interned under a shard
 * lock), the timeline, the symbol cache and the stack memo's list; then
 * the walk gate, which waits for the stack walks in flight (walk_gate.h)
 * and needs no lock of ours held by a walker; last the lock of the
 * placeholders on closed 0-2 (std_fds.c); and we drop them on both sides
 * afterwards, the child forgetting the placeholder holds of the threads
 * it does not have. The child then reopens a "%p" timeline under its
 * own pid; the exit report expands "%p" when it is written, so the child's
 * report goes to the child's file by itself.
 *
 * Fatal signals: a program that crashes never runs livetrack's exit
 * handler, and the leak report of a crashing program is often the most
 * useful one. For SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL, only when
 * nobody else handles them (their action is the default when livetrack
 * loads), a handler writes the report as of the crash and then lets the
 * signal take its default course: the process dies of the same signal,
 * with the same exit status and core dump. The handler first holds the
 * timeline's lock until the end, so the CSV never ends in a torn row
 * (timeline.c). Signals a program or a
 * sanitizer handles itself are left to it; a program that installs its
 * own handler later replaces ours, and we never see those signals.
 *
 * Writing a report from a signal handler is not async-signal-safe (it
 * allocates and uses stdio) and the crash may have happened while a lock
 * the report needs was held, by livetrack or by malloc. It is best effort:
 * it runs on a stack of its own (the thread's may be nearly used up, or a
 * small alternate stack), an alarm bounds it, and when the alarm fires the
 * crash proceeds without the rest of the report. LIVETRACK_CRASH_REPORT=0
 * leaves the signals alone.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core_internal.h"
#include "report_writers.h"

/* ---- fork ---------------------------------------------------------------- */

static void before_fork(void)
{
    lt_history_lock();
    lt_registry_lock_all();
    lt_stacks_lock_all();
    lt_timeline_lock();
    lt_symbols_lock();
    lt_memo_lock_list();
    lt_walks_block();
    /* Last: held for a few system calls, and nothing is taken under it. */
    lt_std_fds_before_fork();
}

/* What both sides drop, but the walk gate (each side its own way). */
static void unlock_after_fork(void)
{
    lt_memo_unlock_list();
    lt_symbols_unlock();
    lt_timeline_unlock();
    lt_stacks_unlock_all();
    lt_registry_unlock_all();
    lt_history_unlock();
}

static void after_fork_parent(void)
{
    lt_std_fds_after_fork_parent();
    lt_walks_unblock();
    unlock_after_fork();
}

static uint64_t inherited_up_to;

uint64_t lt_inherited_up_to(void) { return inherited_up_to; }

static void after_fork_child(void)
{
    /* Before the timeline's reopen, which holds: the parent's other
     * threads' holds are gone with them. */
    lt_std_fds_after_fork_child();
    lt_walks_unblock_in_child();
    unlock_after_fork();
    lt_timeline_after_fork_child();
    inherited_up_to = livetrack_mark(); /* the last creation number given out */
}

/* ---- fatal signals ------------------------------------------------------- */

/* Seconds a crash report may take before the crash goes on without it. */
#define CRASH_REPORT_SECONDS 5u
/* The report runs on a stack of its own: the crash may have happened deep
 * in the program's stack, or the handler may run on a small alternate
 * stack (sanitizers install one), and building a report (symbolizing
 * with libdw) takes tens of kilobytes. Untouched pages cost nothing. */
#define CRASH_STACK_BYTES (512u * 1024u)

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
static const char *const fatal_names[] = {"SIGSEGV", "SIGBUS", "SIGABRT", "SIGFPE", "SIGILL"};
#define FATAL_COUNT (sizeof fatal_signals / sizeof fatal_signals[0])

static struct sigaction previous[FATAL_COUNT];
static int installed[FATAL_COUNT];

/* Thread id of the thread writing a crash report, 0: none. */
static atomic_long reporting_thread;
/* The signal being reported, for the watchdog. */
static volatile sig_atomic_t crash_signal;

static int fatal_index(int signal_number)
{
    for (unsigned i = 0; i < FATAL_COUNT; i++)
        if (fatal_signals[i] == signal_number)
            return (int)i;
    return -1;
}

static long thread_id(void) { return (long)syscall(SYS_gettid); }

/* write(2) a whole message; snprintf is not on the async-signal-safe list
 * but glibc's does not allocate for these formats. */
static void say(const char *text)
{
    size_t length = strlen(text);
    while (length) {
        ssize_t written = write(STDERR_FILENO, text, length);
        if (written <= 0)
            return;
        text += written;
        length -= (size_t)written;
    }
}

/* Give `signal_number` this handler and unblock it in this thread. */
static void handle_unblocked(int signal_number, void (*handler)(int))
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal_number);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* Let `signal_number` take its default action in this thread now. */
static void die_by(int signal_number)
{
    handle_unblocked(signal_number, SIG_DFL);
    raise(signal_number);
}

/* The report took too long (most likely it waits for a lock the crashed
 * thread holds): go on crashing without it. */
static void on_watchdog(int unused)
{
    (void)unused;
    say("livetrack: the crash report did not finish in time; it is incomplete\n");
    die_by(crash_signal);
}

/* Open the %p path of a setting for the crash report; NULL on failure.
 * The program's stdout or stderr is written through a duplicate of its
 * descriptor, as at exit (a system call), but its buffered output is not
 * flushed first: the crash may have come inside stdio, holding a
 * stream's lock. */
static FILE *open_crash_output(const char *pattern, char *path, size_t size)
{
    if (!pattern || !lt_expand_path(pattern, path, size))
        return NULL;
    int std_fd;
    lt_output_kind kind = lt_output_kind_of(path, &std_fd);
    return lt_open_report_file(path, kind, std_fd);
}

/* What the exit report would have written (the text report and the JSON
 * document), as of the crash. LIVETRACK_EXIT_CODE does not apply: the
 * process ends by its signal. */
static void write_crash_report(int signal_number, const char *name)
{
    crash_signal = signal_number;
    /* Its holds (the symbolizer's) must not wait for a thread stopped in
     * a fatal-signal handler of its own. */
    lt_std_fds_crash_report_begins();
    handle_unblocked(SIGALRM, on_watchdog);
    alarm(CRASH_REPORT_SECONDS);
    /* The timeline ends with a whole row, and no row comes after the
     * report's totals were taken. */
    lt_timeline_hold_for_crash();
    /* stderr may be a pipe whose reader has gone: the process dies of
     * its own signal, not of a SIGPIPE from the report. */
    lt_pipe_guard guard;
    lt_pipe_guard_begin(&guard);

    /* static: one thread, once */
    static char path[4096], line[sizeof path + 160];
    const lt_settings *settings = lt_get_settings();
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    /* As at exit: a process that recorded nothing replaces no file. */
    int recorded = lt_process_recorded_anything();
    int always = settings->exit_report == LT_EXIT_REPORT_ALWAYS && recorded;
    static char text_written[sizeof path];
    int text = settings->exit_report != LT_EXIT_REPORT_OFF && (stats.live_objects || always);
    /* One model for the text and the JSON: the crash's time is bounded. */
    static lt_report_model model;
    int modelled = text || (recorded && settings->json);
    if (modelled)
        lt_report_model_build(&model, 0);
    /* Objects live but none leaked (kept alive, suppressed): no text, so
     * no file is emptied and named as holding a report. */
    if (text && (lt_report_model_leaks_to_count(&model) || always)) {
        FILE *out = open_crash_output(settings->output, path, sizeof path);
        if (out)
            memcpy(text_written, path, sizeof path);
        snprintf(line, sizeof line, "livetrack: pid %ld got %s; the leak report as of the crash is %s%s\n",
                 (long)getpid(), name, out ? "in " : "below", out ? path : "");
        say(line);
        lt_report_write_text(out ? out : stderr, &model, always ? LIVETRACK_REPORT_ALWAYS : 0);
        if (out)
            fclose(out);
        else
            fflush(stderr);
    }
    FILE *json = recorded ? open_crash_output(settings->json, path, sizeof path) : NULL;
    int json_written = json != NULL;
    if (json) {
        lt_report_write_json(json, &model, settings->peak_report ? LIVETRACK_REPORT_PEAK : 0);
        fclose(json);
    }
    if (modelled)
        lt_report_model_free(&model);
    /* A crash's verdict counts what was live when it came (the run says
     * so): whether the program would have released it is not known. */
    if (recorded) {
        lt_run_verdict verdict = {stats.live_objects, stats.live_bytes, stats.misuse, 0, signal_number,
                                  text_written[0] ? text_written : NULL, json_written ? path : NULL};
        lt_run_log_append(&verdict);
    }
    lt_pipe_guard_end(&guard);
    alarm(0);
}

static char crash_stack[CRASH_STACK_BYTES] __attribute__((aligned(64)));
static ucontext_t handler_context, report_context;
static int report_signal;

static void report_on_crash_stack(void) { write_crash_report(report_signal, fatal_names[fatal_index(report_signal)]); }

/* Write the report on crash_stack; 0 when the switch failed. No local
 * lives across getcontext(), which returns only once here. */
__attribute__((noinline)) static int report_on_own_stack(void)
{
    if (getcontext(&report_context) != 0)
        return 0;
    report_context.uc_stack.ss_sp = crash_stack;
    report_context.uc_stack.ss_size = sizeof crash_stack;
    report_context.uc_link = &handler_context;
    makecontext(&report_context, report_on_crash_stack, 0);
    return swapcontext(&handler_context, &report_context) == 0;
}

static void on_fatal_signal(int signal_number, siginfo_t *info, void *context)
{
    (void)info;
    (void)context;
    int index = fatal_index(signal_number);
    if (index < 0)
        return;
    long self = thread_id(), none = 0;
    if (atomic_compare_exchange_strong(&reporting_thread, &none, self)) {
        /* Only this thread gets here, once: the stack and contexts are its. */
        report_signal = signal_number;
        if (!report_on_own_stack())
            write_crash_report(signal_number, fatal_names[index]);
    } else if (none != self) {
        /* Another thread is writing the report and ends the process when
         * it is done; wait for it, but not forever. */
        struct timespec pause = {0, 50 * 1000 * 1000};
        for (unsigned i = 0; i < (CRASH_REPORT_SECONDS + 1) * 20; i++)
            nanosleep(&pause, NULL);
    }
    /* Done, or nested (the report raised another fatal signal; the same
     * one, blocked in its handler, makes the kernel end the process at
     * once): the default action, which the signal had without us. */
    sigaction(signal_number, &previous[index], NULL);
    /* A fault raised by an instruction happens again when the handler
     * returns, now with the default action, in its original context (a
     * core dump shows the faulting instruction). Raising it as well
     * covers faults that are not re-raised (sent by kill() or abort(),
     * si_code <= 0, or asynchronous machine errors): the pending signal
     * is delivered as the handler returns. */
    raise(signal_number);
}

static void install_fatal_handlers(void)
{
    for (unsigned i = 0; i < FATAL_COUNT; i++) {
        struct sigaction current;
        if (sigaction(fatal_signals[i], NULL, &current) != 0)
            continue;
        if ((current.sa_flags & SA_SIGINFO) || current.sa_handler != SIG_DFL)
            continue; /* somebody else's signal */
        struct sigaction ours;
        memset(&ours, 0, sizeof ours);
        ours.sa_sigaction = on_fatal_signal;
        /* SA_ONSTACK: a stack overflow can still be reported where the
         * program has set up an alternate signal stack. */
        ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&ours.sa_mask);
        if (sigaction(fatal_signals[i], &ours, &previous[i]) == 0)
            installed[i] = 1;
    }
}

static void remove_fatal_handlers(void)
{
    for (unsigned i = 0; i < FATAL_COUNT; i++) {
        if (!installed[i])
            continue;
        struct sigaction current;
        /* Only our own: a handler the program installed since stays. */
        if (sigaction(fatal_signals[i], NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
            current.sa_sigaction == on_fatal_signal)
            sigaction(fatal_signals[i], &previous[i], NULL);
        installed[i] = 0;
    }
}

/* ---- start and end -------------------------------------------------------- */

__attribute__((constructor)) static void lifecycle_start(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    if (lt_get_settings()->crash_report)
        install_fatal_handlers();
}

/* At exit the report has been written (or is being written by the other
 * destructor); if the library is unloaded, our handler must not outlive
 * its code. pthread_atfork handlers are dropped with the library by libc. */
__attribute__((destructor)) static void lifecycle_end(void) { remove_fatal_handlers(); }
