/*
 * livetrack run: start a program with every front end armed and hand its
 * exit status back.
 *
 * Arming is only environment: OPENCL_LAYERS for the OpenCL ICD loader,
 * LD_PRELOAD for the Level Zero and CUDA front ends (plus
 * CUDA_INJECTION64_PATH, which the CUDA driver honours for programs that
 * reach it without the preload), and LIVETRACK_* for the settings. The
 * leak report itself is printed by the core library inside the program
 * when it exits, so this process waits, then reads the run log to which
 * every tracked process of the tree added its verdict (run_log.c).
 *
 * It forks rather than execs in place so that it can tell why a program
 * did not start, say when no report was written, and turn a death by
 * signal into the shell's 128+N. While it waits it ignores SIGINT and
 * SIGQUIT (the terminal sends them to the program too, and the program's
 * status is what we want) and passes SIGTERM and SIGHUP on.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "front_ends.h"
#include "library_loads.h"
#include "path_pattern.h"
#include "run_log.h"
#include "sanitizer_runtime.h"

#define EXIT_CANNOT_START 125
#define EXIT_NOT_EXECUTABLE 126
#define EXIT_NOT_FOUND 127

static void usage(void)
{
    char path[PATH_MAX * 3];
    char installed[256] = "";
    size_t used = 0;
    for (int kind = 0; kind < FRONT_END_COUNT; kind++) {
        if (front_end_find((front_end_kind)kind, path, sizeof path))
            used += (size_t)snprintf(installed + used, sizeof installed - used, "%s%s", used ? "," : "",
                                     front_ends[kind].name);
    }
    printf("usage: livetrack run [OPTIONS] [--] PROGRAM [ARGS...]\n"
           "\n"
           "Runs PROGRAM with livetrack's libraries loaded and exits with PROGRAM's exit status\n"
           "(128+N when signal N ended it). When PROGRAM exits, livetrack prints on stderr every\n"
           "object it never released, grouped by the call site that created it.\n"
           "\n"
           "Options (each sets the LIVETRACK_* variable in parentheses for PROGRAM):\n"
           "  --api LIST           front ends to arm, comma-separated: opencl, ze (Level Zero), cuda;\n"
           "                       default: all that are installed (here: %s) and can be loaded\n"
           "                       (-v says why one cannot); without --api, a front end whose API\n"
           "                       has no driver says nothing (LIVETRACK_QUIET_ABSENT_API=1)\n"
           "  --json FILE          also write the report as JSON, for report, diff, plot, pprof\n"
           "                       (LIVETRACK_JSON); %%p in FILE becomes the pid\n"
           "  --csv FILE           write a timeline, one row per object event, for plot and trace\n"
           "                       (LIVETRACK_CSV); %%p becomes the pid\n"
           "  --output FILE        write the text report to FILE, not stderr (LIVETRACK_OUTPUT)\n"
           "  --stack-depth N      frames kept of each creation call stack, 0 to 64; 0 turns call\n"
           "                       sites off (LIVETRACK_STACK_DEPTH, default 16)\n"
           "  --no-stack-memo      walk every creation stack with the unwinder instead of recognising\n"
           "                       a stack walked before (LIVETRACK_STACK_MEMO=0)\n"
           "  --creation-order auto|counter|clock\n"
           "                       how creation numbers (seq) are made: one shared counter, or the\n"
           "                       time-stamp counter, which threads read without queueing\n"
           "                       (LIVETRACK_CREATION_ORDER, default auto: clock where reliable)\n"
           "  --release-stacks     also keep the stack of each final release, shown when a released\n"
           "                       object is misused (LIVETRACK_RELEASE_STACKS=1)\n"
           "  --suppressions FILE  do not report leaks matching the patterns in FILE\n"
           "                       (LIVETRACK_SUPPRESSIONS)\n"
           "  --fail-on-leak[=N]   exit with status N (1 to 255, default 1) when leaks remain\n"
           "                       (LIVETRACK_EXIT_CODE)\n"
           "  --peak               the report also shows the objects live at the peak of live bytes\n"
           "                       (LIVETRACK_PEAK_REPORT=1)\n"
           "  --report WHEN        when to print the text report: auto (only when something leaked,\n"
           "                       the default), always, off (LIVETRACK_EXIT_REPORT)\n"
           "  --transparent        pass misused calls on to the driver after the diagnostic\n"
           "                       (LIVETRACK_TRANSPARENT=1)\n"
           "  --max-diagnostics N  stop printing misuse diagnostics after N of them; -1: no limit\n"
           "                       (LIVETRACK_MAX_DIAGNOSTICS, default 1000)\n"
           "  --no-crash-report    leave SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL alone: no leak\n"
           "                       report when PROGRAM crashes (LIVETRACK_CRASH_REPORT=0)\n"
           "  -v, --verbose        print the environment livetrack sets before starting PROGRAM\n"
           "  -h, --help           show this help\n"
           "\n"
           "PROGRAM also sees any LIVETRACK_* variables already set; options win over them.\n"
           "OpenCL: the layer is put before the layers already in OPENCL_LAYERS. Level Zero and\n"
           "CUDA: the front end is put first in LD_PRELOAD.\n"
           "\n"
           "Every tracked process PROGRAM runs adds its verdict to a run log livetrack makes and\n"
           "names in LIVETRACK_RUN_LOG; when there were several, livetrack lists what each left.\n"
           "\n"
           "Exit status: PROGRAM's; with --fail-on-leak, N when leaks remain in any of those\n"
           "processes; 2 for bad arguments;\n"
           "126 when PROGRAM cannot be executed, 127 when it is not found, 125 when livetrack\n"
           "cannot start it for another reason.\n",
           used ? installed : "none found");
}

/* The file an output name without %p names, %% read as % as the core
 * reads it (path_pattern.c). A copy. */
static char *literal_path(const char *name)
{
    size_t size = strlen(name) + 1;
    return lt_unescape_path(name, cli_alloc(size), size);
}

typedef struct watched_file {
    const char *option;
    char *path; /* the file, %% read as % (free it); NULL: not watched */
    int existed;
    struct timespec modified;
} watched_file;

static int is_std_stream_file(const char *path);

/* Remember a requested output file's state, to tell afterwards whether
 * the program wrote it. Paths with %p name files we cannot predict. */
static void watch(watched_file *file, const char *option, const char *path)
{
    struct stat info;
    file->option = option;
    file->path = path && !lt_path_has_pid(path) ? literal_path(path) : NULL;
    file->existed = file->path && stat(file->path, &info) == 0;
    /* /dev/null, a terminal: no time of writing to compare. The file of
     * livetrack's own stdout or stderr (--output /dev/stdout >>file): what
     * is there is the caller's, not a report of an earlier run, and the
     * program's own output changes its time. */
    if (file->existed && (!S_ISREG(info.st_mode) || is_std_stream_file(file->path))) {
        free(file->path);
        file->path = NULL;
    }
    if (file->existed)
        file->modified = info.st_mtim;
}

/* Whether the file is there and was written since watch(). */
static int rewritten(const watched_file *file)
{
    struct stat info;
    return stat(file->path, &info) == 0 && (!file->existed || info.st_mtim.tv_sec != file->modified.tv_sec ||
                                            info.st_mtim.tv_nsec != file->modified.tv_nsec);
}

static void check_written(const watched_file *file, const char *program)
{
    if (!file->path || rewritten(file))
        return;
    cli_warn("note: %s wrote no %s file %s (it may use no tracked API, or may not have exited normally)",
             program, file->option, file->path);
}

/* The same for a name with %p, from the run log: no process of the run
 * said it wrote such a file. */
static void check_any_written(const char *pattern, const char *option, int written, const char *program)
{
    if (pattern && lt_path_has_pid(pattern) && !written)
        cli_warn("note: %s wrote no %s file %s (no process of the run did: they may use no tracked API, or may "
                 "not have exited normally)",
                 program, option, pattern);
}

/* Puts `entry` first in the list variable `name` (separator `sep`),
 * unless it is already in it. */
static void prepend(const char *name, const char *entry, char sep, int verbose)
{
    const char *old = getenv(name);
    if (old && *old) {
        size_t length = strlen(entry);
        for (const char *at = old; (at = strstr(at, entry)); at += length) {
            int starts = at == old || at[-1] == sep || (sep == ':' ? 0 : at[-1] == ':');
            int ends = at[length] == '\0' || at[length] == sep || at[length] == ':';
            if (starts && ends) {
                if (verbose)
                    cli_warn("%s already holds %s", name, entry);
                return;
            }
        }
        size_t size = length + strlen(old) + 2;
        char *value = cli_alloc(size);
        snprintf(value, size, "%s%c%s", entry, sep, old);
        setenv(name, value, 1);
        free(value);
    } else {
        setenv(name, entry, 1);
    }
    if (verbose)
        cli_warn("%s=%s", name, getenv(name));
}

static void set(const char *name, const char *value, int verbose)
{
    setenv(name, value, 1);
    if (verbose)
        cli_warn("%s=%s", name, value);
}

/* A sanitized program under the front ends preloaded ahead of it.
 * AddressSanitizer stops a process whose first library is not its
 * runtime. A runtime the caller preloaded goes back to the head of
 * LD_PRELOAD, in front of the front ends just put there. A program that
 * links the runtime itself (gcc's -fsanitize=address) gets ASan's own
 * switch for preloaded libraries, verify_asan_link_order=0: an option
 * every other program ignores, where a preloaded runtime would load ASan
 * into every process the program starts. */
static void let_sanitizer_run(const char *program, int verbose)
{
    const char *list = getenv("LD_PRELOAD");
    if (!list || !*list)
        return;
    char runtime[256] = "";
    for (const char *at = list; *at && !*runtime;) {
        size_t length = strcspn(at, " :");
        if (length && length < sizeof runtime) {
            memcpy(runtime, at, length);
            runtime[length] = '\0';
            if (!is_sanitizer_runtime(runtime))
                runtime[0] = '\0';
        }
        at += length + (at[length] != '\0');
    }
    if (!*runtime) {
        char linked[256];
        const char *options = getenv("ASAN_OPTIONS");
        if (!sanitizer_runtime_needed(program, linked, sizeof linked) || !strstr(linked, "asan") ||
            (options && strstr(options, "verify_asan_link_order")))
            return;
        size_t size = (options ? strlen(options) : 0) + 32;
        char *value = cli_alloc(size);
        snprintf(value, size, "%s%sverify_asan_link_order=0", options ? options : "", options && *options ? ":" : "");
        set("ASAN_OPTIONS", value, verbose);
        free(value);
        return;
    }
    /* The runtime, then the list without it. */
    size_t size = strlen(runtime) + strlen(list) + 2, used = 0;
    char *value = cli_alloc(size);
    used = (size_t)snprintf(value, size, "%s", runtime);
    for (const char *at = list; *at;) {
        size_t length = strcspn(at, " :");
        if (length && !(length == strlen(runtime) && !strncmp(at, runtime, length)))
            used += (size_t)snprintf(value + used, size - used, " %.*s", (int)length, at);
        at += length + (at[length] != '\0');
    }
    if (strcmp(value, list)) {
        setenv("LD_PRELOAD", value, 1);
        if (verbose)
            cli_warn("LD_PRELOAD=%s (the sanitizer runtime first)", value);
    }
    free(value);
}

/* A path as the user meant it: relative to livetrack's working directory,
 * not to wherever PROGRAM has moved by the time it writes its report (or
 * reads the suppressions) at exit. For the outputs, whose names the core
 * expands (%p to the pid, %% to %), a % of the directory is written %%:
 * in a directory named "a%pb" the report must not go to "a4107b". %p of
 * the name itself is left for the program to expand. */
static char *absolute_path(const char *path, int expanded)
{
    char directory[PATH_MAX];
    if (path[0] == '/' || !getcwd(directory, sizeof directory))
        return cli_strdup(path);
    size_t percents = 0;
    for (const char *at = directory; expanded && (at = strchr(at, '%')); at++)
        percents++;
    size_t size = strlen(directory) + percents + strlen(path) + 2, used = 0;
    char *absolute = cli_alloc(size);
    for (const char *at = directory; *at; at++) {
        absolute[used++] = *at;
        if (*at == '%' && expanded)
            absolute[used++] = '%';
    }
    snprintf(absolute + used, size - used, "/%s", path);
    return absolute;
}

/* A file that does not exist yet, named the way every spelling of it
 * agrees on: its directory resolved (./x, d/../x, links), then its name.
 * NULL when the directory cannot be resolved either. */
static char *resolved_new_file(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || !slash[1])
        return NULL;
    size_t length = slash == path ? 1 : (size_t)(slash - path);
    char *directory = cli_alloc(length + 1), resolved[PATH_MAX];
    memcpy(directory, path, length);
    directory[length] = '\0';
    char *named = NULL;
    if (realpath(directory, resolved)) {
        size_t size = strlen(resolved) + strlen(slash) + 1;
        named = cli_alloc(size);
        snprintf(named, size, "%s%s", strcmp(resolved, "/") ? resolved : "", slash);
    }
    free(directory);
    return named;
}

/* A link to a file not made yet names its target: where writing through
 * it creates the file. Followed up to 8 links; returns a copy (free it). */
static char *through_dangling_links(const char *path)
{
    char *current = cli_strdup(path);
    for (int hops = 0; hops < 8; hops++) {
        struct stat link;
        char target[PATH_MAX];
        ssize_t length;
        if (lstat(current, &link) != 0 || !S_ISLNK(link.st_mode) ||
            (length = readlink(current, target, sizeof target - 1)) <= 0)
            break;
        target[length] = '\0';
        const char *slash = strrchr(current, '/');
        size_t keep = target[0] == '/' || !slash ? 0 : (size_t)(slash - current) + 1;
        char *next = cli_alloc(keep + (size_t)length + 1);
        memcpy(next, current, keep);
        memcpy(next + keep, target, (size_t)length + 1);
        free(current);
        current = next;
    }
    return current;
}

/* Two of the files one name (or two names of one regular file): the last
 * writer would replace the other's content, and an output named like the
 * suppressions file would overwrite it. Devices (/dev/null) may be shared.
 * The paths are absolute already (absolute_path). */
static int same_file(const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    struct stat sa, sb;
    int a_exists = stat(a, &sa) == 0, b_exists = stat(b, &sb) == 0;
    if (a_exists && b_exists)
        return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (a_exists || b_exists)
        return 0;
    char *target_a = through_dangling_links(a), *target_b = through_dangling_links(b);
    char *resolved_a = resolved_new_file(target_a), *resolved_b = resolved_new_file(target_b);
    int same = resolved_a && resolved_b ? !strcmp(resolved_a, resolved_b) : !strcmp(target_a, target_b);
    free(resolved_a);
    free(resolved_b);
    free(target_a);
    free(target_b);
    return same;
}

/* Whether `path` is the file livetrack's own stdout or stderr writes to,
 * which the program inherits: reports and rows sent there are added
 * through the program's descriptor (layer/core/std_streams.c),
 * so two outputs may share it (`--json /dev/stdout --output /dev/stderr`
 * with `>file 2>&1`) without one overwriting the other. */
static int is_std_stream_file(const char *path)
{
    struct stat target, stream;
    if (!path || stat(path, &target) != 0)
        return 0;
    for (int fd = 1; fd <= 2; fd++)
        if (fstat(fd, &stream) == 0 && stream.st_dev == target.st_dev && stream.st_ino == target.st_ino)
            return 1;
    return 0;
}

static void refuse_shared_files(const char *json, const char *csv, const char *output, const char *suppressions)
{
    const char *const names[] = {"--json", "--csv", "--output", "--suppressions"};
    /* the outputs as files: %% read as % (a name with %p stays a name) */
    char *paths[] = {json ? literal_path(json) : NULL, csv ? literal_path(csv) : NULL,
                     output ? literal_path(output) : NULL, suppressions ? cli_strdup(suppressions) : NULL};
    enum { SUPPRESSIONS = 3 };
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (same_file(paths[i], paths[j]) && (j == SUPPRESSIONS || !is_std_stream_file(paths[i])))
                cli_fail("%s and %s name the same file (%s): one would overwrite the other", names[i], names[j],
                         paths[j]);
    for (int i = 0; i < 4; i++)
        free(paths[i]);
}

static volatile sig_atomic_t child_pid;

/* The run log's path while it exists; removed whenever livetrack exits
 * (livetrack outlives a SIGTERM, passing it on; only a SIGKILL leaves the
 * file behind in $TMPDIR). */
static char *run_log_path;

static void remove_run_log(void)
{
    if (run_log_path)
        unlink(run_log_path);
}

/* The private copy of a suppressions file that is no regular file, while
 * it exists; removed when livetrack exits, as the run log is. */
static char *suppressions_copy;

static void remove_suppressions_copy(void)
{
    if (suppressions_copy)
        unlink(suppressions_copy);
}

/* Every tracked process of the tree reads the suppressions file at its
 * exit (layer/core/suppressions.c). A pipe (`<(...)`) gives its patterns
 * to the first process only, the others read it empty and report what it
 * suppressed as leaks; a FIFO holds each later process at its exit until
 * another writer comes. So such a file is read here, once, and every
 * process reads a private copy of it (mode 0600 in $TMPDIR, removed when
 * livetrack exits). Returns the copy's path (to free). */
static char *copy_suppressions(const char *path, int verbose)
{
    /* all of it first (a FIFO waits here for its writer), so no copy is
     * left behind by a Ctrl-C while waiting */
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        cli_fail("cannot read the suppressions file %s: %s", path, strerror(errno));
    size_t size = 0, capacity = 4096;
    char *text = cli_alloc(capacity);
    for (;;) {
        if (size == capacity)
            text = cli_realloc(text, capacity *= 2, 1);
        ssize_t got = read(in, text + size, capacity - size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            cli_fail("cannot read the suppressions file %s: %s", path, strerror(errno));
        if (got == 0)
            break;
        size += (size_t)got;
    }
    close(in);
    int out;
    suppressions_copy = cli_private_temp_file("livetrack-suppressions", &out);
    if (!suppressions_copy)
        cli_fail("cannot copy the suppressions file %s (no regular file: read once, for every process) into "
                 "$TMPDIR: %s",
                 path, strerror(errno));
    atexit(remove_suppressions_copy);
    for (size_t done = 0; done < size;) {
        ssize_t put = write(out, text + done, size - done);
        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0)
            cli_fail("cannot copy the suppressions file %s to %s: %s", path, suppressions_copy, strerror(errno));
        done += (size_t)put;
    }
    if (close(out) != 0)
        cli_fail("cannot copy the suppressions file %s to %s: %s", path, suppressions_copy, strerror(errno));
    free(text);
    if (verbose)
        cli_warn("read the suppressions file %s (no regular file) once, into %s, for every process", path,
                 suppressions_copy);
    return cli_strdup(suppressions_copy);
}

static void forward_signal(int signal_number)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, signal_number);
}

/* Starts the program; returns its pid, or exits with 125..127 when it
 * cannot be started. */
static pid_t start(char **program_argv, const sigset_t *old_mask)
{
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        cli_warn("cannot start %s: %s", program_argv[0], strerror(errno));
        exit(EXIT_CANNOT_START);
    }
    /* Started with SIGCHLD ignored (some CI agents and services do that),
     * the kernel would reap the program itself and waitpid could not learn
     * its status. livetrack takes the default; the program gets what it
     * was given, as without livetrack. */
    struct sigaction default_action, given_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(SIGCHLD, &default_action, &given_action);
    pid_t pid = fork();
    if (pid < 0) {
        cli_warn("cannot start %s: %s", program_argv[0], strerror(errno));
        exit(EXIT_CANNOT_START);
    }
    if (pid == 0) {
        close(report[0]);
        sigaction(SIGCHLD, &given_action, NULL);
        sigprocmask(SIG_SETMASK, old_mask, NULL);
        execvp(program_argv[0], program_argv);
        /* Only reached on failure: the errno goes up the pipe, which the
         * successful exec would have closed. */
        int error = errno;
        ssize_t ignored = write(report[1], &error, sizeof error);
        (void)ignored;
        _exit(EXIT_NOT_FOUND);
    }
    close(report[1]);
    int error = 0;
    ssize_t got;
    do
        got = read(report[0], &error, sizeof error);
    while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == (ssize_t)sizeof error) {
        waitpid(pid, NULL, 0);
        cli_warn("cannot run %s: %s", program_argv[0], strerror(error));
        exit(error == ENOENT || error == ENOTDIR ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE);
    }
    return pid;
}

int cli_run(int argc, char **argv)
{
    cli_parser parser;
    cli_parser_init(&parser, "run", argc - 1, argv + 1);
    const char *api_list = NULL, *stack_depth = NULL, *creation_order = NULL;
    char *json = NULL, *csv = NULL, *output = NULL, *suppressions = NULL; /* absolute once parsed */
    const char *exit_code = NULL, *report = NULL, *max_diagnostics = NULL, *value;
    int release_stacks = 0, peak = 0, transparent = 0, verbose = 0, no_crash_report = 0, no_stack_memo = 0;

    while (cli_more(&parser)) {
        if (cli_flag(&parser, "help", 'h')) {
            usage();
            return CLI_EXIT_OK;
        } else if (cli_value(&parser, "api", 0, &api_list)) {
            continue;
        } else if (cli_value(&parser, "suppressions", 0, &value)) {
            /* read at the program's exit, maybe from another directory */
            free(suppressions);
            suppressions = absolute_path(value, 0);
        } else if (cli_value(&parser, "json", 0, &value)) {
            free(json);
            json = absolute_path(value, 1);
        } else if (cli_value(&parser, "csv", 0, &value)) {
            free(csv);
            csv = absolute_path(value, 1);
        } else if (cli_value(&parser, "output", 0, &value)) {
            free(output);
            output = absolute_path(value, 1);
        } else if (cli_value(&parser, "stack-depth", 0, &stack_depth)) {
            cli_parse_long("--stack-depth", stack_depth, 0, 64);
        } else if (cli_value(&parser, "creation-order", 0, &creation_order)) {
            static const char *const orders[] = {"auto", "counter", "clock", NULL};
            cli_check_choice("--creation-order", creation_order, orders);
        } else if (cli_value(&parser, "max-diagnostics", 0, &max_diagnostics)) {
            cli_parse_long("--max-diagnostics", max_diagnostics, -1, LONG_MAX);
        } else if (cli_value(&parser, "report", 0, &report)) {
            cli_check_choice("--report", report, (const char *const[]){"auto", "always", "off", NULL});
        } else if (cli_optional_value(&parser, "fail-on-leak", &value)) {
            exit_code = value ? value : "1";
            cli_parse_long("--fail-on-leak", exit_code, 1, 255);
        } else if (cli_flag(&parser, "no-stack-memo", 0)) {
            no_stack_memo = 1;
        } else if (cli_flag(&parser, "release-stacks", 0)) {
            release_stacks = 1;
        } else if (cli_flag(&parser, "peak", 0)) {
            peak = 1;
        } else if (cli_flag(&parser, "transparent", 0)) {
            transparent = 1;
        } else if (cli_flag(&parser, "no-crash-report", 0)) {
            no_crash_report = 1;
        } else if (cli_flag(&parser, "verbose", 'v')) {
            verbose = 1;
        } else if (cli_double_dash(&parser) || !(parser.argv[parser.index][0] == '-' && parser.argv[parser.index][1])) {
            break; /* the program and its arguments */
        } else {
            cli_unknown(&parser);
        }
    }
    if (!cli_more(&parser))
        cli_fail("no program to run (usage: livetrack run [OPTIONS] -- PROGRAM [ARGS...])");
    refuse_shared_files(json, csv, output, suppressions);
    char **program_argv = parser.argv + parser.index;
    if (suppressions && access(suppressions, R_OK) != 0)
        cli_fail("cannot read the suppressions file %s: %s", suppressions, strerror(errno));
    struct stat suppressions_status;
    if (suppressions && stat(suppressions, &suppressions_status) == 0 && S_ISDIR(suppressions_status.st_mode))
        cli_fail("cannot read the suppressions file %s: %s", suppressions, strerror(EISDIR));
    if (suppressions && stat(suppressions, &suppressions_status) == 0 && !S_ISREG(suppressions_status.st_mode)) {
        char *copy = copy_suppressions(suppressions, verbose);
        free(suppressions);
        suppressions = copy;
    }

    /* Which front ends: the listed ones (each must be there), or all that are. */
    int wanted[FRONT_END_COUNT] = {0}, explicit_api = api_list != NULL;
    if (api_list) {
        const char *at = api_list;
        while (*at) {
            size_t length = strcspn(at, ",");
            int found = 0;
            for (int kind = 0; kind < FRONT_END_COUNT; kind++) {
                const front_end *f = &front_ends[kind];
                if ((strlen(f->name) == length && !strncmp(at, f->name, length)) ||
                    (f->alias && strlen(f->alias) == length && !strncmp(at, f->alias, length))) {
                    wanted[kind] = found = 1;
                }
            }
            if (!found)
                cli_fail("--api: unknown API '%.*s' (known: opencl, ze, cuda)", (int)length, at);
            at += length + (at[length] == ',');
        }
    } else {
        for (int kind = 0; kind < FRONT_END_COUNT; kind++)
            wanted[kind] = 1;
    }
    char library[FRONT_END_COUNT][PATH_MAX * 3];
    int armed = 0;
    for (int kind = 0; kind < FRONT_END_COUNT; kind++) {
        if (!wanted[kind])
            continue;
        if (front_end_find((front_end_kind)kind, library[kind], sizeof library[kind])) {
            armed++;
        } else {
            if (explicit_api)
                cli_fail("the %s front end (%s) is not installed beside livetrack (looked for %s)",
                         front_ends[kind].title, front_ends[kind].library, library[kind]);
            wanted[kind] = 0;
        }
    }
    /* ld.so splits LD_PRELOAD at spaces and colons, ocl-icd OPENCL_LAYERS
     * at colons: a library whose path holds one cannot be loaded that way,
     * and would be dropped with no more than a line from ld.so. */
    for (int kind = 0; kind < FRONT_END_COUNT; kind++) {
        const char *splits = kind == FRONT_END_OPENCL ? ":" : ": ";
        if (!wanted[kind] || !strpbrk(library[kind], splits))
            continue;
        const char *separator = strchr(library[kind], ':') ? "colon" : "space";
        const char *list = kind == FRONT_END_OPENCL ? "OPENCL_LAYERS" : "LD_PRELOAD";
        if (explicit_api)
            cli_fail("cannot load the %s front end: the path of %s holds a %s, where %s splits its list; install "
                     "livetrack where the path has none",
                     front_ends[kind].title, library[kind], separator, list);
        cli_warn("not tracking %s: the path of %s holds a %s, where %s splits its list (install livetrack where "
                 "the path has none)",
                 front_ends[kind].title, library[kind], separator, list);
        wanted[kind] = 0;
        armed--;
    }
    /* A preloaded library whose dependency is missing stops the program
     * before main ("error while loading shared libraries"), and ocl-icd
     * skips such a layer: either way that front end cannot work here (a
     * build moved to a machine without libze_loader, say). It is left out;
     * said with -v, as an absent API is, and an error when --api names it
     * or when no front end is left. */
    char why[1024], unloadable_why[1024] = "";
    int unloadable = -1;
    for (int kind = 0; kind < FRONT_END_COUNT; kind++) {
        if (!wanted[kind] || library_loads(library[kind], why, sizeof why) != LIBRARY_FAILS)
            continue;
        if (explicit_api)
            cli_fail("cannot load the %s front end here: %s (needed by %s)", front_ends[kind].title, why,
                     library[kind]);
        if (verbose)
            cli_warn("not tracking %s: %s cannot be loaded here: %s", front_ends[kind].title, library[kind], why);
        unloadable = kind;
        memcpy(unloadable_why, why, sizeof why);
        wanted[kind] = 0;
        armed--;
    }
    if (!armed && unloadable >= 0)
        cli_fail("no front end can be used: %s cannot be loaded here: %s", library[unloadable], unloadable_why);
    if (!armed)
        cli_fail("no front-end library found beside livetrack (looked for %s)", library[FRONT_END_OPENCL]);

    if (wanted[FRONT_END_OPENCL])
        prepend("OPENCL_LAYERS", library[FRONT_END_OPENCL], ':', verbose);
    /* The preload list may be separated by spaces or colons; prepending
     * with a space keeps either kind readable. */
    if (wanted[FRONT_END_CUDA]) {
        /* said once, when Level Zero's goes in front of it below */
        prepend("LD_PRELOAD", library[FRONT_END_CUDA], ' ', verbose && !wanted[FRONT_END_LEVEL_ZERO]);
        const char *injection = getenv("CUDA_INJECTION64_PATH");
        if (!injection || !*injection)
            set("CUDA_INJECTION64_PATH", library[FRONT_END_CUDA], verbose);
        else if (strcmp(injection, library[FRONT_END_CUDA]))
            cli_warn("CUDA_INJECTION64_PATH is already %s; leaving it (CUDA is still seen through LD_PRELOAD)",
                     injection);
    }
    if (wanted[FRONT_END_LEVEL_ZERO]) {
        prepend("LD_PRELOAD", library[FRONT_END_LEVEL_ZERO], ' ', verbose);
        /* Armed only because run arms everything: a program that does not
         * use Level Zero (no driver here) should not hear about it. */
        if (!explicit_api)
            set("LIVETRACK_QUIET_ABSENT_API", "1", verbose);
        /* The loader's tracing layer must be on before the first zeInit. */
        if (!getenv("ZE_ENABLE_TRACING_LAYER"))
            set("ZE_ENABLE_TRACING_LAYER", "1", verbose);
    }
    if (wanted[FRONT_END_CUDA] || wanted[FRONT_END_LEVEL_ZERO])
        let_sanitizer_run(program_argv[0], verbose);
    if (json)
        set("LIVETRACK_JSON", json, verbose);
    if (csv)
        set("LIVETRACK_CSV", csv, verbose);
    if (output)
        set("LIVETRACK_OUTPUT", output, verbose);
    if (stack_depth)
        set("LIVETRACK_STACK_DEPTH", stack_depth, verbose);
    if (no_stack_memo)
        set("LIVETRACK_STACK_MEMO", "0", verbose);
    if (creation_order)
        set("LIVETRACK_CREATION_ORDER", creation_order, verbose);
    if (release_stacks)
        set("LIVETRACK_RELEASE_STACKS", "1", verbose);
    if (suppressions)
        set("LIVETRACK_SUPPRESSIONS", suppressions, verbose);
    if (exit_code)
        set("LIVETRACK_EXIT_CODE", exit_code, verbose);
    if (peak)
        set("LIVETRACK_PEAK_REPORT", "1", verbose);
    if (report)
        set("LIVETRACK_EXIT_REPORT", report, verbose);
    if (transparent)
        set("LIVETRACK_TRANSPARENT", "1", verbose);
    if (max_diagnostics)
        set("LIVETRACK_MAX_DIAGNOSTICS", max_diagnostics, verbose);
    if (no_crash_report)
        set("LIVETRACK_CRASH_REPORT", "0", verbose);

    /* Every tracked process of the tree adds its verdict to the run log.
     * Without one (no writable TMPDIR) the run goes on as before: the
     * program's status and the files the last process wrote. Inside
     * another livetrack run, that run's log gets these verdicts too. */
    const char *outer_log = getenv("LIVETRACK_RUN_LOG");
    char *enclosing_log = outer_log && *outer_log ? cli_strdup(outer_log) : NULL;
    run_log_path = run_log_create();
    if (run_log_path) {
        atexit(remove_run_log);
        set("LIVETRACK_RUN_LOG", run_log_path, verbose);
    } else {
        cli_warn("note: cannot make a run log in $TMPDIR (%s); only the program's status says whether it leaked",
                 strerror(errno));
        unsetenv("LIVETRACK_RUN_LOG");
    }

    /* zeroed: gcc -O3 cannot tell modified is set when read */
    watched_file json_file = {0}, csv_file = {0}, output_file = {0};
    watch(&json_file, "JSON", json);
    watch(&csv_file, "CSV", csv);
    watch(&output_file, "text report", output);
    fflush(NULL);

    /* Block the signals we handle until the handlers are in place, so a
     * Ctrl-C right at the start cannot kill livetrack but not the program. */
    sigset_t handled, old_mask;
    sigemptyset(&handled);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGQUIT);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGHUP);
    sigprocmask(SIG_BLOCK, &handled, &old_mask);
    pid_t pid = start(program_argv, &old_mask);
    child_pid = pid;
    struct sigaction ignore, forward;
    memset(&ignore, 0, sizeof ignore);
    memset(&forward, 0, sizeof forward);
    ignore.sa_handler = SIG_IGN;
    forward.sa_handler = forward_signal;
    sigemptyset(&forward.sa_mask);
    sigaction(SIGINT, &ignore, NULL);
    sigaction(SIGQUIT, &ignore, NULL);
    sigaction(SIGTERM, &forward, NULL);
    sigaction(SIGHUP, &forward, NULL);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);

    int status, exit_status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            cli_warn("lost %s: %s", program_argv[0], strerror(errno));
            exit_status = EXIT_CANNOT_START;
            goto done;
        }
    }
    child_pid = 0;
    if (WIFEXITED(status)) {
        exit_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        exit_status = 128 + WTERMSIG(status);
        if (verbose)
            cli_warn("%s was ended by signal %d (%s)", program_argv[0], WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else {
        exit_status = EXIT_CANNOT_START;
    }
    size_t leaking = 0, reported = 0;
    if (run_log_path) {
        run_verdicts verdicts = run_log_read(run_log_path);
        reported = verdicts.count;
        if (verdicts.malformed)
            cli_warn("note: %zu line%s of the run log could not be read (a process ended while writing?)",
                     verdicts.malformed, verdicts.malformed == 1 ? "" : "s");
        size_t crashed;
        leaking = run_log_summarize(&verdicts, &crashed);
        int wrote_json = 0, wrote_csv = 0;
        for (size_t i = 0; i < verdicts.count; i++) {
            wrote_json |= *verdicts.items[i].json_path != '\0';
            wrote_csv |= *verdicts.items[i].csv_path != '\0';
        }
        check_any_written(json, "JSON", wrote_json, program_argv[0]);
        check_any_written(csv, "CSV", wrote_csv, program_argv[0]);
        /* A process whose status said "leaks" may have had it dropped by
         * the script that ran it; a death by signal stays the news, also
         * one a script passed on as its own failing status (sh -c 'a;
         * exit $?' exits 139 after a's SIGSEGV). The status is
         * --fail-on-leak's or the caller's, read as strictly as the core
         * reads it. */
        const char *leak_status = getenv("LIVETRACK_EXIT_CODE");
        char *end = NULL;
        long code = leak_status ? strtol(leak_status, &end, 10) : 0;
        if (leaking && end != leak_status && end && !*end && code >= 1 && code <= 255 && !WIFSIGNALED(status) &&
            !(crashed && exit_status != 0))
            exit_status = (int)code;
        run_verdicts_free(&verdicts);
        if (enclosing_log && !run_log_forward(run_log_path, enclosing_log))
            cli_warn("note: cannot pass this run's verdicts on to the enclosing run's log %s: %s", enclosing_log,
                     strerror(errno));
    }
    check_written(&json_file, program_argv[0]);
    check_written(&csv_file, program_argv[0]);
    /* No text report: an older file of that name is not this run's, and
     * would read as if it were. Why there is none, as far as we know. */
    if (output_file.path && output_file.existed && !rewritten(&output_file)) {
        const char *report_setting = getenv("LIVETRACK_EXIT_REPORT");
        char why[128] = "nothing leaked";
        if (WIFSIGNALED(status))
            snprintf(why, sizeof why, "it was ended by signal %d", WTERMSIG(status));
        else if (report_setting && !strcasecmp(report_setting, "off")) /* read as the core reads it */
            snprintf(why, sizeof why, "--report off");
        else if (leaking || !run_log_path || exit_status > 128) /* a script may pass a signal on as its status */
            snprintf(why, sizeof why, "it may not have exited normally");
        else if (!reported)
            snprintf(why, sizeof why, "no process of the run reported: it may use no tracked API, or may not "
                                      "have exited normally");
        cli_warn("note: %s wrote no text report (%s); %s is from an earlier run", program_argv[0], why,
                 output_file.path);
    }
done:
    free(json_file.path);
    free(csv_file.path);
    free(output_file.path);
    free(enclosing_log);
    free(json);
    free(csv);
    free(output);
    free(suppressions);
    return exit_status;
}
