/*
 * bench_stress: the stress scenario of the eBPF GPU-memory tracers (which
 * kept up with about 4000 events/s), on pocl through the ICD loader: paced
 * clCreateBuffer events, a share of them released in random order, the
 * process's CPU time and RSS sampled every 200 ms into a CSV.
 *
 * Run it without and with the layer (bench/run does both): the difference
 * is what tracking costs in CPU and memory at a given event rate, and the
 * highest rate each sustains.
 *
 * Usage: bench_stress [options]   (--help lists them)
 *
 * An event is one buffer creation. With --free-ratio F, F releases follow
 * each creation on average (F = 1: the live set stays at its initial size;
 * F = 0.5: half the buffers stay live, the live set grows). Releases pick a
 * random live buffer of the thread, as programs free out of order. At the
 * end every remaining buffer is released (not timed), so nothing leaks.
 *
 * Output: the CSV (--csv), comment lines starting with '#', and result
 * lines '<key> <value> <unit>':
 *   achieved_rate     creations per second over the whole run
 *   sustained_rate    creations per second held in 90% of the 200 ms
 *                     intervals after the warm-up (10th percentile; the
 *                     interval in which --events ran out is left out)
 *   calls_per_s       creations + releases per second
 *   cpu_us_per_event  process CPU time per creation (with its releases)
 *   cpu_percent       process CPU time / wall time (100 = one core)
 *   rss_slope         least-squares slope of RSS after the warm-up, KiB/s
 *   rss_growth_per_1m RSS growth after the warm-up per 10^6 creations, KiB
 *                     (only with at least 10^5 creations after the warm-up)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>

#include "bench_util.h"

#define SAMPLE_NS 200e6 /* sampling period */
#define MAX_THREADS 64
#define MAX_SAMPLES 100000

static void check(cl_int err, const char *call, int line)
{
    if (err != CL_SUCCESS)
        bench_die("line %d: %s failed with error %d", line, call, (int)err);
}
#define CHECK(call) check((call), #call, __LINE__)

typedef struct options {
    double rate;       /* creations per second, all threads; 0: as fast as possible */
    long size;         /* bytes per buffer */
    double free_ratio; /* releases per creation */
    long threads;
    double seconds;
    long events;       /* stop after this many creations (0: only --seconds) */
    long live;         /* buffers made live before the run, all threads */
    double warmup;     /* seconds not counted in the sustained rate and RSS slope */
    long depth;        /* frames below the thread's start for every call */
    const char *csv;
} options;

static options opt = {
    .rate = 4000, .size = 2048, .free_ratio = 1.0, .threads = 1, .seconds = 5, .events = 0, .live = 1000, .warmup = 0.5,
    .depth = 20,
};

static cl_context context;
static atomic_int stopping;
static atomic_long events_claimed; /* --events: creations handed out so far */

typedef struct worker {
    pthread_t thread;
    int index;
    double start_ns;
    _Atomic long creates; /* read by the sampler */
    _Atomic long releases;
    _Atomic long live;
    cl_mem *held;
    size_t held_count, held_capacity;
    uint64_t random;
} worker;

static worker workers[MAX_THREADS];

static void hold(worker *w, cl_mem buffer)
{
    if (w->held_count == w->held_capacity) {
        size_t capacity = w->held_capacity ? w->held_capacity * 2 : 1024;
        cl_mem *held = realloc(w->held, capacity * sizeof *held);
        if (!held)
            bench_die("out of memory holding %zu buffers", capacity);
        w->held = held;
        w->held_capacity = capacity;
    }
    w->held[w->held_count++] = buffer;
}

static cl_mem create_buffer(void)
{
    cl_int err;
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, (size_t)opt.size, NULL, &err);
    CHECK(err);
    return buffer;
}

/* Release one random live buffer of this thread. */
static void release_random(worker *w)
{
    size_t i = (size_t)(bench_random(&w->random) % w->held_count);
    cl_mem buffer = w->held[i];
    w->held[i] = w->held[--w->held_count];
    CHECK(clReleaseMemObject(buffer));
}

/* Sleep until an absolute CLOCK_MONOTONIC time in ns. */
static void sleep_until(double when_ns)
{
    struct timespec ts = {(time_t)(when_ns / 1e9), (long)(when_ns - (double)(time_t)(when_ns / 1e9) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static long worker_body(void *arg)
{
    worker *w = arg;
    double per_thread_rate = opt.rate / (double)opt.threads;
    double credit = 0.0; /* releases owed */
    for (long k = 0; !atomic_load_explicit(&stopping, memory_order_relaxed); k++) {
        if (opt.events && atomic_fetch_add_explicit(&events_claimed, 1, memory_order_relaxed) >= opt.events)
            break;
        if (per_thread_rate > 0) {
            /* Event k is due at start + k / rate. A thread that falls
             * behind does not sleep until it has caught up, so the
             * achieved rate shows whether the pace was sustained. */
            double due = w->start_ns + (double)k * 1e9 / per_thread_rate;
            if (bench_now_ns() < due)
                sleep_until(due);
        }
        hold(w, create_buffer());
        atomic_store_explicit(&w->creates, k + 1, memory_order_relaxed);
        for (credit += opt.free_ratio; credit >= 1.0 && w->held_count; credit -= 1.0) {
            release_random(w);
            atomic_fetch_add_explicit(&w->releases, 1, memory_order_relaxed);
        }
        atomic_store_explicit(&w->live, (long)w->held_count, memory_order_relaxed);
    }
    return 0;
}

static void *worker_main(void *arg)
{
    /* As deep as an application's call would be, so 16-frame call sites
     * walk 16 real frames. */
    bench_at_depth((unsigned)opt.depth, worker_body, arg);
    return NULL;
}

typedef struct sample {
    double t;     /* seconds since start */
    long creates; /* all threads */
    long releases;
    long live;
    double cpu_s;
    long rss_kib;
} sample;

static sample samples[MAX_SAMPLES];
static size_t sample_count;

/* One sample; `final` is the state after the workers stopped, moments
 * after the last interval's sample: its rate and CPU over that sliver
 * would mean nothing, so the CSV leaves them empty. */
static void take_sample(double start_ns, FILE *csv, int final)
{
    if (sample_count == MAX_SAMPLES)
        return;
    sample *s = &samples[sample_count++];
    s->t = (bench_now_ns() - start_ns) * 1e-9;
    s->creates = s->releases = s->live = 0;
    for (long i = 0; i < opt.threads; i++) {
        s->creates += atomic_load_explicit(&workers[i].creates, memory_order_relaxed);
        s->releases += atomic_load_explicit(&workers[i].releases, memory_order_relaxed);
        s->live += atomic_load_explicit(&workers[i].live, memory_order_relaxed);
    }
    s->cpu_s = bench_cpu_s();
    s->rss_kib = bench_rss_kib();
    if (csv) {
        const sample *p = sample_count > 1 ? s - 1 : s;
        double dt = s->t - p->t;
        double rate = dt > 0 ? (double)(s->creates - p->creates) / dt : 0.0;
        double cpu = dt > 0 ? 100.0 * (s->cpu_s - p->cpu_s) / dt : 0.0;
        if (final)
            fprintf(csv, "%.3f,%ld,%ld,%ld,,%.4f,,%ld\n", s->t, s->creates, s->releases, s->live, s->cpu_s, s->rss_kib);
        else
            fprintf(csv, "%.3f,%ld,%ld,%ld,%.1f,%.4f,%.1f,%ld\n", s->t, s->creates, s->releases, s->live, rate,
                    s->cpu_s, cpu, s->rss_kib);
    }
}

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: bench_stress [--rate N] [--size BYTES] [--free-ratio F] [--threads N] [--seconds S]\n"
            "                    [--events N] [--live N] [--warmup S] [--depth N] [--csv FILE]\n"
            "  --rate N        buffer creations per second, all threads (default 4000; 0: as fast as possible)\n"
            "  --size BYTES    bytes per buffer (default 2048)\n"
            "  --free-ratio F  releases per creation, 0..1 (default 1)\n"
            "  --threads N     creating threads (default 1)\n"
            "  --seconds S     run time (default 5)\n"
            "  --events N      stop after N creations (default 0: run for --seconds)\n"
            "  --live N        buffers made live before the run (default 1000)\n"
            "  --warmup S      seconds left out of the sustained rate and RSS figures (default 0.5)\n"
            "  --depth N       frames below the thread's start for every call (default 20)\n"
            "  --csv FILE      every 200 ms: t_s,creates,releases,live,creates_per_s,cpu_s,cpu_percent,rss_kib\n"
            "Load the livetrack layer with OPENCL_LAYERS to measure it.\n");
    exit(status);
}

int main(int argc, char **argv)
{
    bench_name = "bench_stress";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            usage(0);
        if (i + 1 >= argc)
            usage(2);
        const char *v = argv[++i];
        if (!strcmp(a, "--rate"))
            opt.rate = bench_parse_double(a, v, 0, 1e9);
        else if (!strcmp(a, "--size"))
            opt.size = bench_parse_long(a, v, 1, 1L << 30);
        else if (!strcmp(a, "--free-ratio"))
            opt.free_ratio = bench_parse_double(a, v, 0, 1);
        else if (!strcmp(a, "--threads"))
            opt.threads = bench_parse_long(a, v, 1, MAX_THREADS);
        else if (!strcmp(a, "--seconds"))
            opt.seconds = bench_parse_double(a, v, 0.2, 86400);
        else if (!strcmp(a, "--events"))
            opt.events = bench_parse_long(a, v, 0, 1000000000000L);
        else if (!strcmp(a, "--live"))
            opt.live = bench_parse_long(a, v, 0, 100000000L);
        else if (!strcmp(a, "--warmup"))
            opt.warmup = bench_parse_double(a, v, 0, 86400);
        else if (!strcmp(a, "--depth"))
            opt.depth = bench_parse_long(a, v, 0, 1000);
        else if (!strcmp(a, "--csv"))
            opt.csv = v;
        else
            usage(2);
    }

    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    int layer = clGetExtensionFunctionAddressForPlatform(platform, "clReportLiveObjectsIntelFPGA") != NULL;

    FILE *csv = NULL;
    if (opt.csv) {
        csv = fopen(opt.csv, "w");
        if (!csv)
            bench_die("cannot write %s", opt.csv);
        fprintf(csv, "t_s,creates,releases,live,creates_per_s,cpu_s,cpu_percent,rss_kib\n");
    }
    const char *depth = getenv("LIVETRACK_STACK_DEPTH");
    printf("# bench_stress layer %s stack_depth %s rate %.0f size %ld free_ratio %.2f threads %ld seconds %.1f "
           "events %ld live %ld\n",
           layer ? "yes" : "no", depth && *depth ? depth : "default", opt.rate, opt.size, opt.free_ratio, opt.threads,
           opt.seconds, opt.events, opt.live);

    /* The initial live set, spread over the threads. */
    for (long i = 0; i < opt.threads; i++)
        workers[i] = (worker){.index = (int)i, .random = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1)};
    for (long i = 0; i < opt.live; i++) {
        worker *w = &workers[i % opt.threads];
        hold(w, create_buffer());
        w->live = (long)w->held_count;
    }

    double start_ns = bench_now_ns();
    double cpu_start = bench_cpu_s();
    for (long i = 0; i < opt.threads; i++) {
        workers[i].start_ns = start_ns;
        if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]))
            bench_die("pthread_create failed");
    }
    take_sample(start_ns, csv, 0);
    double end_ns = start_ns + opt.seconds * 1e9;
    size_t last_full = 0; /* the last sample whose interval the workers were busy throughout */
    for (double next = start_ns + SAMPLE_NS;; next += SAMPLE_NS) {
        sleep_until(next < end_ns ? next : end_ns);
        take_sample(start_ns, csv, 0);
        long done = samples[sample_count - 1].creates;
        if (opt.events && done >= opt.events)
            break; /* the workers stopped somewhere inside this interval */
        last_full = sample_count - 1;
        if (bench_now_ns() >= end_ns)
            break;
    }
    atomic_store(&stopping, 1);
    for (long i = 0; i < opt.threads; i++)
        pthread_join(workers[i].thread, NULL);
    take_sample(start_ns, csv, 1); /* the final state, before the clean-up */
    double elapsed = (bench_now_ns() - start_ns) * 1e-9;
    double cpu = bench_cpu_s() - cpu_start;

    /* Intervals after the warm-up: sustained rate and RSS trend. */
    double rates[MAX_SAMPLES];
    size_t rate_count = 0;
    size_t base = 0; /* first sample after the warm-up */
    while (base + 1 < sample_count && samples[base].t < opt.warmup)
        base++;
    double sum_t = 0, sum_r = 0, sum_tt = 0, sum_tr = 0;
    size_t n = 0;
    for (size_t i = base; i < sample_count; i++) {
        const sample *s = &samples[i];
        if (i > base && i <= last_full && s->t - samples[i - 1].t > 0.5 * SAMPLE_NS * 1e-9)
            rates[rate_count++] = (double)(s->creates - samples[i - 1].creates) / (s->t - samples[i - 1].t);
        sum_t += s->t;
        sum_r += (double)s->rss_kib;
        sum_tt += s->t * s->t;
        sum_tr += s->t * (double)s->rss_kib;
        n++;
    }
    double slope = n > 1 && n * sum_tt - sum_t * sum_t > 0 ? (n * sum_tr - sum_t * sum_r) / (n * sum_tt - sum_t * sum_t)
                                                          : 0.0;
    double sustained = 0.0;
    if (rate_count) {
        qsort(rates, rate_count, sizeof *rates, bench_compare_double);
        sustained = rates[rate_count / 10];
    }
    const sample *first = &samples[base], *last = &samples[sample_count - 1];
    long creates = last->creates, releases = last->releases;
    double growth_per_1m = last->creates > first->creates
                               ? (double)(last->rss_kib - first->rss_kib) * 1e6 / (double)(last->creates - first->creates)
                               : 0.0;

    printf("achieved_rate %.0f creates/s\n", (double)creates / elapsed);
    printf("sustained_rate %.0f creates/s\n", sustained);
    printf("calls_per_s %.0f calls/s\n", (double)(creates + releases) / elapsed);
    printf("cpu_us_per_event %.3f us\n", creates ? cpu * 1e6 / (double)creates : 0.0);
    printf("cpu_percent %.1f %%\n", 100.0 * cpu / elapsed);
    printf("rss_start %ld KiB\n", first->rss_kib);
    printf("rss_end %ld KiB\n", last->rss_kib);
    printf("rss_slope %.1f KiB/s\n", slope);
    /* Extrapolating a few thousand events to a million says nothing. */
    if (last->creates - first->creates >= 100000)
        printf("rss_growth_per_1m %.1f KiB\n", growth_per_1m);
    else
        printf("# rss_growth_per_1m: too few creations after the warm-up (%ld) to say\n", last->creates - first->creates);
    printf("creates %ld events\n", creates);
    printf("live_end %ld buffers\n", last->live);
    if (opt.rate > 0)
        printf("# the pace of %.0f creates/s was %s in 90%% of the intervals\n", opt.rate,
               sustained >= 0.95 * opt.rate ? "held" : "NOT held");

    for (long i = 0; i < opt.threads; i++) {
        while (workers[i].held_count)
            release_random(&workers[i]);
        free(workers[i].held);
    }
    if (csv && fclose(csv))
        bench_die("cannot write %s", opt.csv);
    CHECK(clReleaseContext(context));
    return 0;
}
