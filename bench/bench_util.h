/*
 * Small helpers shared by the benchmark programs (header only: each
 * program is one .c file plus this).
 *
 * Every helper fails loudly: a benchmark that silently measures the wrong
 * thing is worse than none.
 */
#ifndef LIVETRACK_BENCH_UTIL_H
#define LIVETRACK_BENCH_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The program's name for messages; each main() sets it first. */
static const char *bench_name = "bench";

__attribute__((format(printf, 1, 2), noreturn, unused)) static void bench_die(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "%s: ", bench_name);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    exit(1);
}

__attribute__((unused)) static double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* CPU time of the whole process (all threads), in seconds. */
__attribute__((unused)) static double bench_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Resident set size in KiB, from /proc/self/statm (cheap: no parsing of
 * /proc/self/status, so sampling it does not disturb what is measured). */
__attribute__((unused)) static long bench_rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        bench_die("cannot open /proc/self/statm: %s", strerror(errno));
    long size = 0, resident = 0;
    int n = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    if (n != 2)
        bench_die("cannot read /proc/self/statm");
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Strict number parsing for options: garbage is an error, not 0. */
__attribute__((unused)) static long bench_parse_long(const char *option, const char *text, long min, long max)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end); /* accepts 1e6 as well as 1000000 */
    if (errno || end == text || *end || value < (double)min || value > (double)max || value != (double)(long)value)
        bench_die("%s wants an integer from %ld to %ld, not \"%s\"", option, min, max, text);
    return (long)value;
}

/* The bit of one section named by --only; `names` lists them in bit
 * order, and an unknown name ends the program with the list. */
__attribute__((unused)) static int bench_parse_section(const char *text, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (!strcmp(text, names[i]))
            return 1 << i;
    char list[256];
    size_t used = 0;
    for (int i = 0; i < count && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i == 0 ? "" : i == count - 1 ? " or " : ", ",
                                 names[i]);
    bench_die("--only takes %s, not %s", list, text);
    return 0;
}

/* One "--name VALUE" option of a front end's benchmark: a number within
 * [min, max] into *number, or else a string into *text. */
typedef struct bench_option {
    const char *name;
    long *number;
    long min, max;
    const char **text;
} bench_option;

/* Reads "--name VALUE" pairs into `options`; --help or -h prints `usage`
 * and exits 0, and anything else prints it to stderr and exits 2. */
__attribute__((unused)) static void bench_parse_options(int argc, char **argv, const bench_option *options,
                                                        size_t count, const char *usage)
{
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            exit(0);
        }
        const bench_option *option = NULL;
        for (size_t o = 0; o < count && !option; o++)
            if (!strcmp(argv[i], options[o].name))
                option = &options[o];
        if (!option || i + 1 >= argc) {
            fputs(usage, stderr);
            exit(2);
        }
        if (option->number)
            *option->number = bench_parse_long(option->name, argv[i + 1], option->min, option->max);
        else
            *option->text = argv[i + 1];
    }
}

/* This program's own path, to run itself as a child. */
__attribute__((unused)) static void bench_self_path(char *out, size_t size)
{
    ssize_t length = readlink("/proc/self/exe", out, size - 1);
    if (length <= 0)
        bench_die("cannot find this program's path");
    out[length] = '\0';
}

__attribute__((unused)) static double bench_parse_double(const char *option, const char *text, double min, double max)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno || end == text || *end || !(value >= min && value <= max))
        bench_die("%s wants a number from %g to %g, not \"%s\"", option, min, max, text);
    return value;
}

static int bench_compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of values[0..count-1]; sorts them in place. */
__attribute__((unused)) static double bench_median(double *values, size_t count)
{
    if (!count)
        return 0.0;
    qsort(values, count, sizeof *values, bench_compare_double);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2.0;
}

/* A small, fast, seeded generator (xorshift64*): the random orders must be
 * the same in every run and on both sides of a comparison. */
__attribute__((unused)) static uint64_t bench_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Fisher-Yates shuffle of indices 0..count-1 into order[]. */
__attribute__((unused)) static void bench_shuffle(size_t *order, size_t count, uint64_t seed)
{
    uint64_t state = seed ? seed : 1;
    for (size_t i = 0; i < count; i++)
        order[i] = i;
    for (size_t i = count; i > 1; i--) {
        size_t j = (size_t)(bench_random(&state) % i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/*
 * Call sites on demand. bench_at_site(site, levels, fn, arg) calls fn(arg)
 * from a stack whose innermost `levels` frames spell the bits of `site`:
 * each level goes through one of two different functions, so 2^levels
 * sites give 2^levels distinct return-address sequences, and a stack
 * capture of 16+ frames tells them all apart. The arithmetic after each
 * call keeps the compiler from turning it into a jump (which would drop
 * the frame), and the two functions differ so identical-code folding
 * cannot merge them.
 *
 * bench_at_depth(depth, fn, arg) runs fn under `depth` extra frames, so
 * that benchmarks capture as many application frames as a real program
 * would (a loop called from main is only ~4 frames deep).
 */
typedef long (*bench_site_fn)(void *arg);
typedef struct bench_site_walk {
    unsigned long site;
    unsigned levels;
    bench_site_fn fn;
    void *arg;
} bench_site_walk;

static long bench_site_b(bench_site_walk *walk, unsigned level);

__attribute__((noinline, unused)) static long bench_site_a(bench_site_walk *walk, unsigned level)
{
    if (level == walk->levels)
        return walk->fn(walk->arg);
    long r = ((walk->site >> level) & 1) ? bench_site_b(walk, level + 1) : bench_site_a(walk, level + 1);
    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

__attribute__((noinline, unused)) static long bench_site_b(bench_site_walk *walk, unsigned level)
{
    if (level == walk->levels)
        return walk->fn(walk->arg);
    long r = ((walk->site >> level) & 1) ? bench_site_b(walk, level + 1) : bench_site_a(walk, level + 1);
    __asm__ volatile("" : "+r"(r));
    return r + 3;
}

__attribute__((unused)) static long bench_at_site(unsigned long site, unsigned levels, bench_site_fn fn, void *arg)
{
    bench_site_walk walk = {site, levels, fn, arg};
    return bench_site_a(&walk, 0);
}

__attribute__((unused)) static long bench_at_depth(unsigned depth, bench_site_fn fn, void *arg)
{
    return bench_at_site(0, depth, fn, arg);
}

#endif
