/*
 * bench_registry: the registry alone (liblivetrack linked directly, USER
 * domain, no OpenCL): operations per second by thread count and live-set
 * size, bytes per live object, bytes per unique call site, RSS growth
 * over a million create/release cycles, and what the host charges for a
 * cache line going from one thread to another and back.
 *
 * Usage: bench_registry [options]   (--help lists them)
 *
 * Every measurement runs in a forked child, so one cannot warm or bloat
 * the registry for the next (its node pool and hash tables never shrink),
 * and the reported memory is that measurement's own. The parent is
 * single-threaded when it forks.
 *
 * An "op" is one registry call. A cycle is create, retain, release,
 * release (4 ops) on one handle; a pair is create + release (2 ops).
 * Handles look like heap addresses (64 bytes apart) and are reused from a
 * window of 4096 per thread, as a driver's allocator would.
 *
 * Output: comment lines start with '#'; every result is one line
 *   <key> <value> <unit>
 * and bench/run builds its table from these.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "livetrack/livetrack.h"

#define HANDLE_WINDOW 4096u
#define HANDLE_STRIDE 64u
#define MAX_THREADS 64
#define MAX_LIST 16

enum { TYPE_OBJECT, TYPE_PARENT, TYPE_COUNT };
static const char *const type_names[TYPE_COUNT] = {"bench_object", "bench_parent"};

typedef struct options {
    long samples;
    long ops;    /* registry calls per throughput sample, all threads together */
    long depth;  /* frames below main for every registry call */
    long threads[MAX_LIST];
    size_t thread_count;
    long live[MAX_LIST];
    size_t live_count;
    long sites;  /* distinct call sites for the bytes-per-site figure */
    long cycles; /* create/release cycles for the RSS-growth figure */
} options;

static options opt = {
    .samples = 5,
    .ops = 4000000,
    .depth = 20,
    .threads = {1, 2, 4, 8},
    .thread_count = 4,
    .live = {1000, 100000, 1000000},
    .live_count = 3,
    .sites = 4096,
    .cycles = 1000000,
};

static void check(livetrack_status status, const char *call, uint64_t handle)
{
    if (status != LIVETRACK_OK)
        bench_die("%s(0x%llx) returned \"%s\"", call, (unsigned long long)handle, livetrack_status_name(status));
}

static void create(uint64_t handle, uint64_t parent, livetrack_type type)
{
    livetrack_new_object object = {
        .domain = LIVETRACK_DOMAIN_USER,
        .type = type,
        .handle = handle,
        .bytes = 64,
        .parent = parent,
        .call = "bench_create",
    };
    check(livetrack_create(&object), "livetrack_create", handle);
}

static void release(uint64_t handle)
{
    check(livetrack_release(LIVETRACK_DOMAIN_USER, TYPE_OBJECT, handle, NULL, "bench_release"), "livetrack_release",
          handle);
}

static void retain(uint64_t handle)
{
    check(livetrack_retain(LIVETRACK_DOMAIN_USER, TYPE_OBJECT, handle, "bench_retain"), "livetrack_retain", handle);
}

/* ---- forked measurements --------------------------------------------- */

/* Run fn in a child process; stop when it fails. */
static void in_child(const char *what, void (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork for %s failed", what);
    if (pid == 0) {
        fn();
        fflush(stdout);
        /* _exit: no exit report (the measurement may leave objects live). */
        _exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_die("the %s measurement failed (status 0x%x)", what, status);
}

/* ---- throughput by threads -------------------------------------------- */

typedef struct worker {
    pthread_t thread;
    pthread_barrier_t *start;
    uint64_t base;   /* first handle of this thread's window */
    uint64_t parent; /* 0, or the handle every child holds */
    long cycles;
    int pairs;       /* 1: create+release; 0: create, retain, release x2 */
} worker;

static long worker_body(void *arg)
{
    worker *w = arg;
    for (long i = 0; i < w->cycles; i++) {
        uint64_t handle = w->base + (uint64_t)(i % HANDLE_WINDOW) * HANDLE_STRIDE;
        create(handle, w->parent, TYPE_OBJECT);
        if (!w->pairs) {
            retain(handle);
            release(handle);
        }
        release(handle);
    }
    return 0;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    bench_at_depth((unsigned)opt.depth, worker_body, w);
    return NULL;
}

/* Ops per second of `threads` threads sharing opt.ops calls: the wall time
 * from the moment all are ready until the last one ends. */
static double run_threads(long threads, int shared_parent, int pairs)
{
    static worker workers[MAX_THREADS];
    pthread_barrier_t start;
    long ops_per_cycle = pairs ? 2 : 4;
    long cycles = opt.ops / ops_per_cycle / threads;
    if (cycles < 1)
        cycles = 1;
    uint64_t parent = shared_parent ? 0x7e0000000000ull : 0;
    if (parent)
        create(parent, 0, TYPE_PARENT);
    if (pthread_barrier_init(&start, NULL, (unsigned)threads + 1))
        bench_die("pthread_barrier_init failed");
    for (long t = 0; t < threads; t++) {
        /* Disjoint windows, 2^36 apart: like heaps of different arenas. */
        workers[t] = (worker){.start = &start, .base = ((uint64_t)t + 1) << 36, .parent = parent, .cycles = cycles,
                              .pairs = pairs};
        if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]))
            bench_die("pthread_create failed");
    }
    pthread_barrier_wait(&start);
    double begin = bench_now_ns();
    for (long t = 0; t < threads; t++)
        pthread_join(workers[t].thread, NULL);
    double elapsed = bench_now_ns() - begin;
    pthread_barrier_destroy(&start);
    if (parent)
        check(livetrack_release(LIVETRACK_DOMAIN_USER, TYPE_PARENT, parent, NULL, NULL), "livetrack_release", parent);
    return (double)(cycles * ops_per_cycle * threads) / (elapsed * 1e-9);
}

static double median_rate(long threads, int shared_parent, int pairs)
{
    double rates[1024];
    long n = opt.samples < 1024 ? opt.samples : 1024;
    run_threads(threads, shared_parent, pairs); /* warm-up: pools, tables, stack cache */
    for (long s = 0; s < n; s++)
        rates[s] = run_threads(threads, shared_parent, pairs);
    return bench_median(rates, (size_t)n);
}

/* ---- what a shared line costs here --------------------------------------- */

/* Whether threads gain depends less on livetrack's instruction count than
 * on the host: every registry operation writes a line (its shard's lock,
 * and a create the creation counter) that another thread may have written
 * last. So the threads figures come with the price of one line going from
 * a thread to another and back, measured by two threads handing a flag to
 * each other, in the same process and minutes as the figures it explains. */
#define ROUND_TRIPS 20000L
/* Handed before the clock starts: the first ones wait for the partner to
 * get a CPU of its own (it may start on this one, or on a vCPU that must
 * wake up). Timed from its start, 2x10^4 round trips read 0.7-2 us on the
 * Zen 5 VM where 2x10^5 read 0.43-0.49 us. */
#define WARM_UP_TRIPS 5000L
#define ROUND_TRIP_SAMPLES 5 /* the median is reported */

static _Alignas(64) _Atomic long ping_flag;

static void *ping_partner(void *arg)
{
    (void)arg;
    for (long i = 0; i < WARM_UP_TRIPS + ROUND_TRIPS; i++) {
        while (atomic_load_explicit(&ping_flag, memory_order_acquire) != 2 * i + 1)
            ;
        atomic_store_explicit(&ping_flag, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

static void hand_flag(long from, long to)
{
    for (long i = from; i < to; i++) {
        atomic_store_explicit(&ping_flag, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&ping_flag, memory_order_acquire) != 2 * i + 2)
            ;
    }
}

static double line_round_trip_ns(void)
{
    double samples[ROUND_TRIP_SAMPLES];
    for (int s = 0; s < ROUND_TRIP_SAMPLES; s++) {
        pthread_t partner;
        atomic_store(&ping_flag, 0);
        if (pthread_create(&partner, NULL, ping_partner, NULL))
            bench_die("pthread_create failed");
        hand_flag(0, WARM_UP_TRIPS);
        double begin = bench_now_ns();
        hand_flag(WARM_UP_TRIPS, WARM_UP_TRIPS + ROUND_TRIPS);
        samples[s] = (bench_now_ns() - begin) / (double)ROUND_TRIPS;
        pthread_join(partner, NULL);
    }
    return bench_median(samples, ROUND_TRIP_SAMPLES);
}

static void measure_threads(void)
{
    double pair_rate = median_rate(1, 0, 1);
    printf("pair_ns_t1 %.1f ns\n", 2e9 / pair_rate);
    int several = 0;
    for (size_t i = 0; i < opt.thread_count; i++) {
        long threads = opt.threads[i];
        several |= threads > 1;
        printf("ops_disjoint_t%ld %.0f ops/s\n", threads, median_rate(threads, 0, 0));
        printf("ops_shared_parent_t%ld %.0f ops/s\n", threads, median_rate(threads, 1, 0));
        fflush(stdout);
    }
    /* Two spinning threads on one CPU would measure the scheduler. */
    cpu_set_t allowed;
    if (several && sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 1)
        printf("line_round_trip_ns %.1f ns\n", line_round_trip_ns());
}

/* ---- live-set size ----------------------------------------------------- */

static long live_size;

static long live_body(void *arg)
{
    (void)arg;
    /* A range of its own, 2^44 up, so the cycle window never collides. */
    const uint64_t base = 1ull << 44;
    livetrack_stats after;
    long rss_before = bench_rss_kib();
    double begin = bench_now_ns();
    for (long i = 0; i < live_size; i++)
        create(base + (uint64_t)i * HANDLE_STRIDE, 0, TYPE_OBJECT);
    double fill_ns = (bench_now_ns() - begin) / (double)live_size;
    long rss_after = bench_rss_kib();
    livetrack_get_stats(&after);
    if (after.live_objects < (uint64_t)live_size)
        bench_die("%llu objects live after creating %ld", (unsigned long long)after.live_objects, live_size);

    double rate = median_rate(1, 0, 0);
    printf("ops_live%ld_t1 %.0f ops/s\n", live_size, rate);
    printf("create_ns_live%ld %.1f ns\n", live_size, fill_ns);
    /* node_bytes covers nodes (slabs) and bucket arrays; the RSS delta adds
     * allocator overhead and anything else that grew. */
    printf("node_bytes_per_object_live%ld %.1f bytes\n", live_size,
           (double)after.node_bytes / (double)after.live_objects);
    printf("rss_bytes_per_object_live%ld %.1f bytes\n", live_size,
           (double)(rss_after - rss_before) * 1024.0 / (double)live_size);

    begin = bench_now_ns();
    for (long i = 0; i < live_size; i++)
        release(base + (uint64_t)i * HANDLE_STRIDE);
    printf("release_ns_live%ld %.1f ns\n", live_size, (bench_now_ns() - begin) / (double)live_size);
    return 0;
}

static void measure_live(void) { bench_at_depth((unsigned)opt.depth, live_body, NULL); }

/* ---- bytes per unique call site ---------------------------------------- */

static long site_leaf(void *arg)
{
    uint64_t handle = *(uint64_t *)arg;
    create(handle, 0, TYPE_OBJECT);
    release(handle);
    return 0;
}

static void measure_sites(void)
{
    if (!livetrack_capture_stack()) {
        printf("# call sites are off (LIVETRACK_STACK_DEPTH=0): no bytes per site\n");
        return;
    }
    unsigned levels = 0;
    while ((1ul << levels) < (unsigned long)opt.sites)
        levels++;
    livetrack_stats before, after;
    livetrack_get_stats(&before);
    long rss_before = bench_rss_kib();
    double begin = bench_now_ns();
    for (long s = 0; s < opt.sites; s++) {
        uint64_t handle = 0x100000ull + (uint64_t)s * HANDLE_STRIDE;
        bench_at_site((unsigned long)s, levels, site_leaf, &handle);
    }
    double ns = (bench_now_ns() - begin) / (double)opt.sites;
    long rss_after = bench_rss_kib();
    livetrack_get_stats(&after);
    uint64_t sites = after.unique_stacks - before.unique_stacks;
    if (sites < (uint64_t)opt.sites)
        bench_die("%ld call sites made only %llu unique stacks: the site generator is broken", opt.sites,
                  (unsigned long long)sites);
    printf("unique_sites %llu sites\n", (unsigned long long)sites);
    printf("stack_bytes_per_site %.1f bytes\n", (double)(after.stack_bytes - before.stack_bytes) / (double)sites);
    printf("rss_bytes_per_site %.1f bytes\n", (double)(rss_after - rss_before) * 1024.0 / (double)sites);
    printf("create_release_new_site_ns %.1f ns\n", ns);
}

/* ---- memory over a million cycles ---------------------------------------- */

static long cycles_body(void *arg)
{
    (void)arg;
    /* Fresh handles every cycle: memory that grew per handle would show.
     * Phase 0 (a tenth as long) warms pools and tables and is not counted.
     * Both phases create from the same call instruction: a second call
     * site would intern a new stack and show up as growth. */
    uint64_t handle = 1ull << 40;
    livetrack_stats before, after;
    long rss_before = 0;
    for (int phase = 0; phase < 2; phase++) {
        if (phase == 1) {
            livetrack_get_stats(&before);
            rss_before = bench_rss_kib();
        }
        long cycles = phase ? opt.cycles : opt.cycles / 10;
        for (long i = 0; i < cycles; i++, handle += HANDLE_STRIDE) {
            create(handle, 0, TYPE_OBJECT);
            release(handle);
        }
    }
    long rss_after = bench_rss_kib();
    livetrack_get_stats(&after);
    printf("cycles %ld cycles\n", opt.cycles);
    printf("rss_growth_cycles %ld KiB\n", rss_after - rss_before);
    printf("registry_bytes_growth_cycles %lld bytes\n",
           (long long)(after.node_bytes + after.stack_bytes) - (long long)(before.node_bytes + before.stack_bytes));
    return 0;
}

static void measure_cycles(void) { bench_at_depth((unsigned)opt.depth, cycles_body, NULL); }

/* ---- instruction counting ------------------------------------------------ */

/* --only pairs: opt.cycles create+release pairs in this process (no fork,
 * no timing), for bench/callgrind.sh, which counts the instructions
 * executed inside this function (callgrind --toggle-collect). */
__attribute__((noinline)) static long callgrind_pairs(void *arg)
{
    (void)arg;
    for (long i = 0; i < opt.cycles; i++) {
        uint64_t handle = (1ull << 36) + (uint64_t)(i % HANDLE_WINDOW) * HANDLE_STRIDE;
        create(handle, 0, TYPE_OBJECT);
        release(handle);
    }
    return 0;
}

/* ---- main ---------------------------------------------------------------- */

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: bench_registry [--samples N] [--ops N] [--threads LIST] [--live LIST] [--sites N]\n"
            "                      [--cycles N] [--depth N] [--only threads|live|sites|cycles|pairs]...\n"
            "  --samples N    timed samples per throughput figure, median reported (default 5)\n"
            "  --ops N        registry calls per sample, all threads together (default 4e6)\n"
            "  --threads LIST thread counts, comma-separated (default 1,2,4,8, then on in powers\n"
            "                 of two up to the CPUs this process may use)\n"
            "  --live LIST    live-set sizes for the 1-thread figure (default 1000,100000,1000000)\n"
            "  --sites N      distinct call sites for bytes per site (default 4096)\n"
            "  --cycles N     create/release cycles for the RSS growth (default 1e6)\n"
            "  --depth N      frames below main for every call (default 20)\n"
            "  --only pairs   just --cycles create+release pairs, untimed, in-process (for bench/callgrind.sh)\n"
            "LIVETRACK_STACK_DEPTH applies as in any program (0: call sites off).\n"
            "Prints '<key> <value> <unit>' per result.\n");
    exit(status);
}

static size_t parse_list(const char *option, const char *text, long *out, long min, long max)
{
    size_t count = 0;
    char *copy = strdup(text);
    if (!copy)
        bench_die("out of memory");
    for (char *item = strtok(copy, ","); item; item = strtok(NULL, ",")) {
        if (count == MAX_LIST)
            bench_die("%s takes at most %d values", option, MAX_LIST);
        out[count++] = bench_parse_long(option, item, min, max);
    }
    free(copy);
    if (!count)
        bench_die("%s needs at least one value", option);
    return count;
}

/* 1, 2, 4, 8, and on up to the CPUs this process may run on: on a
 * 16-core host the figure that matters is 16 threads. */
static void default_thread_counts(void)
{
    cpu_set_t usable;
    long cpus = sched_getaffinity(0, sizeof usable, &usable) == 0 ? CPU_COUNT(&usable)
                                                                  : sysconf(_SC_NPROCESSORS_ONLN);
    opt.thread_count = 0;
    for (long threads = 1; threads <= MAX_THREADS && (threads <= 8 || threads <= cpus); threads *= 2)
        opt.threads[opt.thread_count++] = threads;
}

int main(int argc, char **argv)
{
    default_thread_counts();
    bench_name = "bench_registry";
    int only = 0; /* bit per section; 0: all */
    static const char *const sections[] = {"threads", "live", "sites", "cycles", "pairs"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            usage(0);
        if (i + 1 >= argc)
            usage(2);
        const char *v = argv[++i];
        if (!strcmp(a, "--samples"))
            opt.samples = bench_parse_long(a, v, 1, 1000);
        else if (!strcmp(a, "--ops"))
            opt.ops = bench_parse_long(a, v, 8, 1000000000L);
        else if (!strcmp(a, "--threads"))
            opt.thread_count = parse_list(a, v, opt.threads, 1, MAX_THREADS);
        else if (!strcmp(a, "--live"))
            opt.live_count = parse_list(a, v, opt.live, 1, 100000000L);
        else if (!strcmp(a, "--sites"))
            opt.sites = bench_parse_long(a, v, 1, 1L << 20);
        else if (!strcmp(a, "--cycles"))
            opt.cycles = bench_parse_long(a, v, 10, 1000000000L);
        else if (!strcmp(a, "--depth"))
            opt.depth = bench_parse_long(a, v, 0, 1000);
        else if (!strcmp(a, "--only"))
            only |= bench_parse_section(v, sections, (int)(sizeof sections / sizeof sections[0]));
        else
            usage(2);
    }
    if (!only)
        only = 0xf; /* pairs only when asked */

    check(livetrack_declare_types(LIVETRACK_DOMAIN_USER, "bench", type_names, TYPE_COUNT), "livetrack_declare_types",
          0);
    const char *depth = getenv("LIVETRACK_STACK_DEPTH");
    printf("# bench_registry: call sites %s (LIVETRACK_STACK_DEPTH=%s), %ld frames below main, %ld samples of %ld ops\n",
           livetrack_capture_stack() ? "on" : "off", depth && *depth ? depth : "default", opt.depth, opt.samples,
           opt.ops);
    if (only & 1)
        in_child("threads", measure_threads);
    for (size_t i = 0; (only & 2) && i < opt.live_count; i++) {
        live_size = opt.live[i];
        in_child("live set", measure_live);
    }
    if (only & 4)
        in_child("call sites", measure_sites);
    if (only & 8)
        in_child("cycles", measure_cycles);
    if (only & 16) {
        bench_at_depth((unsigned)opt.depth, callgrind_pairs, NULL);
        printf("pairs %ld pairs\n", opt.cycles);
    }
    return 0;
}
