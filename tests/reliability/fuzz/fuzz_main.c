/*
 * A main() for the fuzz targets where libFuzzer is not available (gcc):
 * replays files and directories (the seed corpus, or a crash to debug)
 * and then random inputs, so the default test run covers the targets'
 * checks with any compiler.
 *
 *   fuzz_x [-random N] [-seed S] [-max_len L] [FILE|DIR]...
 *
 * Random inputs come from a fixed seed, so a failure reproduces; when an
 * input fails (the targets abort()), it is also written to
 * ./fuzz-failure.bin to be replayed by this program or by libFuzzer.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long runs;
static unsigned long long bytes_run;

/* The input running now, for the abort handler. */
static const uint8_t *current;
static size_t current_size;

static void on_abort(int signal_number)
{
    int fd = open("fuzz-failure.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, current, current_size) == (ssize_t)current_size) {
            static const char text[] = "the failing input is in ./fuzz-failure.bin\n";
            if (write(STDERR_FILENO, text, sizeof text - 1) < 0)
                _exit(1);
        }
        close(fd);
    }
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

static void run_one(const uint8_t *data, size_t size)
{
    current = data;
    current_size = size;
    LLVMFuzzerTestOneInput(data, size);
    runs++;
    bytes_run += size;
}

static void run_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    uint8_t *data = NULL;
    size_t size = 0, capacity = 0;
    for (;;) {
        if (size == capacity) {
            capacity = capacity ? capacity * 2 : 4096;
            data = realloc(data, capacity);
            if (!data)
                abort();
        }
        size_t got = fread(data + size, 1, capacity - size, file);
        if (!got)
            break;
        size += got;
    }
    fclose(file);
    run_one(data, size);
    free(data);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "no such input: %s\n", path);
        exit(2);
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    DIR *dir = opendir(path);
    if (!dir)
        exit(2);
    char **names = NULL;
    size_t count = 0;
    for (struct dirent *entry; (entry = readdir(dir));) {
        if (entry->d_name[0] == '.')
            continue;
        names = realloc(names, (count + 1) * sizeof *names);
        names[count++] = strdup(entry->d_name);
    }
    closedir(dir);
    qsort(names, count, sizeof *names, by_name); /* the same order everywhere */
    for (size_t i = 0; i < count; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, names[i]);
        run_path(full);
        free(names[i]);
    }
    free(names);
}

static uint64_t rng;
static uint64_t next_random(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    unsigned long random_runs = 0;
    size_t max_len = 512;
    rng = 1;
    signal(SIGABRT, on_abort);
    LLVMFuzzerInitialize(&argc, &argv);
    int paths = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-random") && i + 1 < argc)
            random_runs = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-seed") && i + 1 < argc)
            rng = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-max_len") && i + 1 < argc)
            max_len = strtoul(argv[++i], NULL, 10);
        else {
            run_path(argv[i]);
            paths++;
        }
    }
    unsigned long corpus_runs = runs;
    uint8_t *data = malloc(max_len ? max_len : 1);
    for (unsigned long r = 0; r < random_runs; r++) {
        size_t size = max_len ? (size_t)(next_random() % (max_len + 1)) : 0;
        for (size_t i = 0; i < size; i++)
            data[i] = (uint8_t)next_random();
        run_one(data, size);
    }
    free(data);
    printf("%s: %lu inputs (%lu from %d corpus paths, %lu random), %llu bytes\n", argv[0], runs, corpus_runs, paths,
           random_runs, bytes_run);
    return 0;
}
