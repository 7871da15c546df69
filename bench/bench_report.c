/*
 * bench_report: what reading the live set costs at scale. 10^6 live
 * objects (USER domain, liblivetrack linked directly) from 10^3 distinct
 * call sites, then:
 *   snapshot     livetrack_snapshot_take + walk + free
 *   text, json   livetrack_write_report(/dev/null, TEXT or JSON, ALWAYS, 0),
 *                symbolization included
 *   exit         the process's real exit: from exit() until the parent
 *                sees it gone, with whatever LIVETRACK_OUTPUT, LIVETRACK_JSON
 *                and LIVETRACK_EXIT_REPORT say (bench/run measures it with
 *                the text report to /dev/null, then with text and JSON
 *                written to files)
 *
 * Each figure is first measured "cold" in a forked child, where nothing has
 * been symbolized yet, as at a real exit (this is the figure the 1 s target
 * is judged on), then "warm" in the parent (median of --repeat runs),
 * where the symbol cache is filled.
 *
 * Usage: bench_report [--objects N] [--sites N] [--repeat N] [--only NAME]...
 *
 * Output: comment lines start with '#'; results are '<key> <value> <unit>'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "livetrack/livetrack.h"

enum { TYPE_CONTEXT, TYPE_BUFFER, TYPE_COUNT };
static const char *const type_names[TYPE_COUNT] = {"bench_context", "bench_buffer"};

#define PARENT_HANDLE 0x10000ull
#define HANDLE_BASE (1ull << 40)
#define HANDLE_STRIDE 64u

static long objects = 1000000, sites = 1000, repeat = 3;
static FILE *devnull;

typedef struct batch {
    uint64_t first; /* index of the batch's first object */
    uint64_t count;
} batch;

/* Create one site's objects, all children of the one context. */
static long create_batch(void *arg)
{
    const batch *b = arg;
    for (uint64_t i = b->first; i < b->first + b->count; i++) {
        livetrack_new_object object = {
            .domain = LIVETRACK_DOMAIN_USER,
            .type = TYPE_BUFFER,
            .handle = HANDLE_BASE + i * HANDLE_STRIDE,
            .bytes = 256 + (i % 7) * 64,
            .parent = PARENT_HANDLE,
            .call = "bench_create",
        };
        livetrack_status status = livetrack_create(&object);
        if (status != LIVETRACK_OK)
            bench_die("livetrack_create: %s", livetrack_status_name(status));
    }
    return 0;
}

static double time_snapshot(void)
{
    double begin = bench_now_ns();
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_ANY, NULL);
    if (!snapshot)
        bench_die("livetrack_snapshot_take failed");
    size_t count = livetrack_snapshot_count(snapshot);
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; i++)
        bytes += livetrack_snapshot_at(snapshot, i)->bytes;
    livetrack_snapshot_free(snapshot);
    double ns = bench_now_ns() - begin;
    if (count < (size_t)objects || !bytes)
        bench_die("the snapshot holds %zu objects, not %ld", count, objects);
    return ns;
}

static double time_report(livetrack_format format)
{
    double begin = bench_now_ns();
    size_t leaked = livetrack_write_report(devnull, format, LIVETRACK_REPORT_ALWAYS, 0);
    fflush(devnull);
    double ns = bench_now_ns() - begin;
    if (leaked < (size_t)objects)
        bench_die("the %s report counts %zu leaked objects, not %ld", format == LIVETRACK_FORMAT_JSON ? "JSON" : "text",
                  leaked, objects);
    return ns;
}

static double time_one(const char *what)
{
    if (!strcmp(what, "snapshot"))
        return time_snapshot();
    return time_report(!strcmp(what, "json") ? LIVETRACK_FORMAT_JSON : LIVETRACK_FORMAT_TEXT);
}

/* The figure measured in a fresh child: its value in ns comes back
 * through a pipe. */
static double time_cold(const char *what)
{
    int fds[2];
    if (pipe(fds))
        bench_die("pipe failed");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork failed");
    if (pid == 0) {
        close(fds[0]);
        double ns;
        if (!strcmp(what, "exit")) {
            /* The parent times from here to the child's end. */
            ns = bench_now_ns();
            if (write(fds[1], &ns, sizeof ns) != (ssize_t)sizeof ns)
                _exit(3);
            close(fds[1]);
            exit(0); /* runs the exit report */
        }
        ns = time_one(what);
        if (write(fds[1], &ns, sizeof ns) != (ssize_t)sizeof ns)
            _exit(3);
        _exit(0); /* no exit report: only the figure asked for */
    }
    close(fds[1]);
    double ns = 0;
    ssize_t got = read(fds[0], &ns, sizeof ns);
    close(fds[0]);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != (ssize_t)sizeof ns)
        bench_die("the cold %s measurement failed (status 0x%x)", what, status);
    if (!strcmp(what, "exit"))
        ns = bench_now_ns() - ns;
    return ns;
}

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: bench_report [--objects N] [--sites N] [--repeat N] [--only snapshot|text|json|exit]...\n"
            "  --objects N  live objects (default 1e6)\n"
            "  --sites N    distinct creation call sites (default 1000)\n"
            "  --repeat N   warm repetitions, median reported (default 3; 0: cold only)\n"
            "Prints '<what>_cold_ms' (fresh process, nothing symbolized) and '<what>_warm_ms'.\n"
            "Set LIVETRACK_OUTPUT=/dev/null LIVETRACK_JSON=/dev/null LIVETRACK_EXIT_REPORT=always\n"
            "for the exit figure to cover both reports.\n");
    exit(status);
}

int main(int argc, char **argv)
{
    bench_name = "bench_report";
    static const char *const figures[] = {"snapshot", "text", "json", "exit"};
    int only = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            usage(0);
        if (i + 1 >= argc)
            usage(2);
        const char *v = argv[++i];
        if (!strcmp(a, "--objects"))
            objects = bench_parse_long(a, v, 1, 100000000L);
        else if (!strcmp(a, "--sites"))
            sites = bench_parse_long(a, v, 1, 1L << 20);
        else if (!strcmp(a, "--repeat"))
            repeat = bench_parse_long(a, v, 0, 1000);
        else if (!strcmp(a, "--only"))
            only |= bench_parse_section(v, figures, (int)(sizeof figures / sizeof figures[0]));
        else
            usage(2);
    }
    if (!only)
        only = 0xf;
    if (sites > objects)
        sites = objects;
    devnull = fopen("/dev/null", "w");
    if (!devnull)
        bench_die("cannot open /dev/null");
    if (livetrack_declare_types(LIVETRACK_DOMAIN_USER, "bench", type_names, TYPE_COUNT) != LIVETRACK_OK)
        bench_die("livetrack_declare_types failed");

    livetrack_new_object parent = {.domain = LIVETRACK_DOMAIN_USER, .type = TYPE_CONTEXT, .handle = PARENT_HANDLE};
    if (livetrack_create(&parent) != LIVETRACK_OK)
        bench_die("livetrack_create failed for the parent");
    unsigned levels = 0;
    while ((1ul << levels) < (unsigned long)sites)
        levels++;
    livetrack_stats before;
    livetrack_get_stats(&before);
    double begin = bench_now_ns();
    for (long s = 0; s < sites; s++) {
        /* Sites share the objects out evenly, the first ones one more. */
        uint64_t first = (uint64_t)(objects / sites * s + (s < objects % sites ? s : objects % sites));
        batch b = {first, (uint64_t)(objects / sites + (s < objects % sites))};
        bench_at_site((unsigned long)s, levels, create_batch, &b);
    }
    double create_ns = (bench_now_ns() - begin) / (double)objects;
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    const char *depth = getenv("LIVETRACK_STACK_DEPTH");
    printf("# bench_report: %llu live objects from %llu call sites (LIVETRACK_STACK_DEPTH=%s), %ld warm repeats\n",
           (unsigned long long)stats.live_objects, (unsigned long long)(stats.unique_stacks - before.unique_stacks),
           depth && *depth ? depth : "default", repeat);
    if (livetrack_capture_stack() && stats.unique_stacks - before.unique_stacks < (uint64_t)sites)
        bench_die("%ld sites made only %llu distinct stacks", sites,
                  (unsigned long long)(stats.unique_stacks - before.unique_stacks));
    printf("create_ns %.1f ns\n", create_ns);
    printf("live_objects %llu objects\n", (unsigned long long)stats.live_objects);
    fflush(stdout);

    for (int f = 0; f < 4; f++) {
        if (!(only & (1 << f)))
            continue;
        printf("%s_cold_ms %.1f ms\n", figures[f], time_cold(figures[f]) * 1e-6);
        fflush(stdout);
    }
    for (int f = 0; f < 3 && repeat; f++) {
        if (!(only & (1 << f)))
            continue;
        double ms[1000];
        for (long r = 0; r < repeat; r++)
            ms[r] = time_one(figures[f]) * 1e-6;
        printf("%s_warm_ms %.1f ms\n", figures[f], bench_median(ms, (size_t)repeat));
        fflush(stdout);
    }

    /* Release everything so this process's own exit report is empty. */
    for (long i = 0; i < objects; i++)
        livetrack_release(LIVETRACK_DOMAIN_USER, TYPE_BUFFER, HANDLE_BASE + (uint64_t)i * HANDLE_STRIDE, NULL, NULL);
    livetrack_release(LIVETRACK_DOMAIN_USER, TYPE_CONTEXT, PARENT_HANDLE, NULL, NULL);
    fclose(devnull);
    return 0;
}
