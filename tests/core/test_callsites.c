/*
 * Call sites, misuse stacks, the CSV timeline, the peak marks and scoped
 * marks, through the public API alone.
 *
 * Settings are read once per process, so each case that needs its own
 * LIVETRACK_* environment runs in a fresh copy of this program
 * (/proc/self/exe CASE) and the parent checks what it printed or wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "livetrack/livetrack.h"

enum { T_BUFFER, T_EVENT, T_COUNT };
static const char *const type_names[T_COUNT] = {"test_buffer", "test_event"};

/* Source lines of the calls the stacks must point at. */
static int line_site_a, line_site_b, line_make, line_drop, line_misuse;

static livetrack_status create_object(uint64_t handle, unsigned type, uint64_t bytes, const char *call)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = bytes,
                                   .call = call};
    return livetrack_create(&object);
}

__attribute__((noinline)) static void create_at_site_a(uint64_t handle)
{
    line_site_a = __LINE__ + 1;
    create_object(handle, T_BUFFER, 64, "createA");
    __asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
}

__attribute__((noinline)) static void create_at_site_b(uint64_t handle)
{
    line_site_b = __LINE__ + 1;
    create_object(handle, T_EVENT, 0, "createB");
    __asm__ volatile("" ::: "memory");
}

/* The frame whose function is `function`, or NULL. */
static const livetrack_frame *find_frame(const livetrack_frame *frames, size_t count, const char *function)
{
    for (size_t i = 0; i < count; i++)
        if (frames[i].function && !strcmp(frames[i].function, function))
            return &frames[i];
    return NULL;
}

static void check_site(livetrack_stack_id stack, const char *function, int line)
{
    livetrack_frame frames[64];
    size_t count = livetrack_stack_symbolize(stack, frames, 64);
    CHECK(count > 0);
    const livetrack_frame *frame = find_frame(frames, count, function);
    CHECK(frame != NULL);
    if (!frame)
        return;
    CHECK(frame->file && strstr(frame->file, "test_callsites.c"));
    CHECK_EQ_INT(frame->line, line);
    /* The first frame is the application's: nothing of livetrack's. */
    CHECK(frames[0].module && !strstr(frames[0].module, "liblivetrack"));
}

/* ---- cases run in this process ----------------------------------------- */

static int case_interning(void)
{
    livetrack_stats before, warm, after;
    livetrack_get_stats(&before);
    livetrack_stack_id site_a = 0, site_b = 0;
    int mixed = 0;
    for (uint64_t i = 0; i < 1000000; i++) {
        uint64_t handle = 0x1000 + (i % 64) * 16;
        if (i & 1)
            create_at_site_b(handle);
        else
            create_at_site_a(handle);
        livetrack_object object;
        CHECK(livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, &object) == LIVETRACK_OK);
        livetrack_stack_id *seen = (i & 1) ? &site_b : &site_a;
        if (!*seen)
            *seen = object.stack;
        mixed += object.stack != *seen;
        livetrack_destroy(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, "destroy");
        if (i == 1000)
            livetrack_get_stats(&warm);
    }
    livetrack_get_stats(&after);
    CHECK_EQ_INT(mixed, 0);
    CHECK(site_a && site_b && site_a != site_b);
    /* Two call sites: two stacks, whatever the number of events. */
    CHECK_EQ_INT(after.unique_stacks - before.unique_stacks, 2);
    /* Memory grows with unique stacks, not with events. */
    CHECK_EQ_INT(after.stack_bytes, warm.stack_bytes);
    CHECK_EQ_INT(after.node_bytes, warm.node_bytes);
    check_site(site_a, "create_at_site_a", line_site_a);
    check_site(site_b, "create_at_site_b", line_site_b);
    uintptr_t addresses[64];
    CHECK_EQ_INT(livetrack_stack_addresses(site_a, addresses, 2), 2); /* bounded by max */
    CHECK(livetrack_stack_addresses(site_a, addresses, 64) <= 16);    /* bounded by the depth */
    CHECK_EQ_INT(livetrack_stack_addresses(0, addresses, 64), 0);
    CHECK_EQ_INT(livetrack_stack_addresses(0x7fffffff, addresses, 64), 0);
    return check_summary("callsites interning");
}

static int case_depth_zero(void)
{
    create_at_site_a(0x10);
    create_at_site_a(0x20);
    create_at_site_b(0x30);
    livetrack_object a1, a2, b;
    CHECK(livetrack_lookup(LIVETRACK_DOMAIN_USER, 0x10, &a1) == LIVETRACK_OK);
    CHECK(livetrack_lookup(LIVETRACK_DOMAIN_USER, 0x20, &a2) == LIVETRACK_OK);
    CHECK(livetrack_lookup(LIVETRACK_DOMAIN_USER, 0x30, &b) == LIVETRACK_OK);
    /* Off: still one site per kind of object, but without frames. */
    CHECK(a1.stack != 0 && a1.stack == a2.stack && a1.stack != b.stack);
    uintptr_t addresses[8];
    CHECK_EQ_INT(livetrack_stack_addresses(a1.stack, addresses, 8), 0);
    CHECK_EQ_INT(livetrack_capture_stack(), 0);
    return check_summary("callsites depth 0");
}

__attribute__((noinline)) static void make_object(uint64_t handle)
{
    line_make = __LINE__ + 1;
    create_object(handle, T_BUFFER, 4096, "make");
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void drop_object(uint64_t handle)
{
    line_drop = __LINE__ + 1;
    livetrack_release(LIVETRACK_DOMAIN_USER, T_BUFFER, handle, NULL, "drop");
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void misuse_object(uint64_t handle)
{
    if (livetrack_release(LIVETRACK_DOMAIN_USER, T_BUFFER, handle, NULL, "drop") != LIVETRACK_OK) {
        line_misuse = __LINE__ + 1;
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_USER, handle, "drop(0x%llx): released twice", (unsigned long long)handle);
        __asm__ volatile("" ::: "memory");
    }
}

static int case_misuse(void)
{
    make_object(0xabc0);
    drop_object(0xabc0);
    misuse_object(0xabc0);
    livetrack_report_misuse_on(LIVETRACK_DOMAIN_USER, 0xdead0, "never made");
    /* The lines for the parent to look for, on stdout. */
    printf("lines %d %d %d\n", line_make, line_drop, line_misuse);
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    printf("misuse %llu\n", (unsigned long long)stats.misuse);
    return 0;
}

static int case_timeline(void)
{
    create_object(0x100, T_BUFFER, 100, "mkbuf");
    create_object(0x200, T_BUFFER, 50, "mkbuf");
    create_object(0x300, T_EVENT, 0, "mkevent");
    livetrack_retain(LIVETRACK_DOMAIN_USER, T_BUFFER, 0x100, "keep");
    livetrack_release(LIVETRACK_DOMAIN_USER, T_BUFFER, 0x100, NULL, "drop");
    livetrack_release(LIVETRACK_DOMAIN_USER, T_BUFFER, 0x100, NULL, "drop");
    livetrack_destroy(LIVETRACK_DOMAIN_USER, T_EVENT, 0x300, "free_wrap");
    livetrack_report_misuse_on(LIVETRACK_DOMAIN_USER, 0x300, "use_event(0x300): used after free");
    /* Failed calls are not events. */
    livetrack_release(LIVETRACK_DOMAIN_USER, T_BUFFER, 0x999, NULL, "drop");
    /* A parent released while its child lives ends with the child, and
     * its row says so: without it the type read live for ever after. */
    create_object(0x400, T_EVENT, 0, "mkevent");
    livetrack_new_object child = {.domain = LIVETRACK_DOMAIN_USER, .type = T_BUFFER, .handle = 0x500, .bytes = 10,
                                  .parent = 0x400, .call = "mkbuf"};
    livetrack_create(&child);
    livetrack_release(LIVETRACK_DOMAIN_USER, T_EVENT, 0x400, NULL, "drop");
    livetrack_release(LIVETRACK_DOMAIN_USER, T_BUFFER, 0x500, NULL, "drop");
    /* A handle given out again while its object (never released) holds a
     * released parent: the stale object ends first, then the parent it
     * held, then the new object is made. */
    create_object(0x600, T_EVENT, 0, "mkevent");
    child.handle = 0x700;
    child.parent = 0x600;
    livetrack_create(&child);
    livetrack_release(LIVETRACK_DOMAIN_USER, T_EVENT, 0x600, NULL, "drop");
    create_object(0x700, T_BUFFER, 20, "mkbuf");
    livetrack_release(LIVETRACK_DOMAIN_USER, T_BUFFER, 0x700, NULL, "drop");
    /* Held by a front end around a destroy and let go on behalf of that
     * call once the driver answered: the row that ends it names the call. */
    create_object(0x800, T_EVENT, 0, "mkevent");
    livetrack_keeper *held = livetrack_keep_alive(LIVETRACK_DOMAIN_USER, 0x800);
    livetrack_destroy(LIVETRACK_DOMAIN_USER, T_EVENT, 0x800, "free_wrap");
    livetrack_let_go_in(held, "free_wrap");
    /* A destroy the API refused: the object is back, as the row says. */
    create_object(0x900, T_BUFFER, 30, "mkbuf");
    livetrack_object before;
    livetrack_lookup(LIVETRACK_DOMAIN_USER, 0x900, &before);
    livetrack_destroy(LIVETRACK_DOMAIN_USER, T_BUFFER, 0x900, "free_wrap");
    livetrack_restore(&before, before.refs, NULL, "free_wrap");
    livetrack_destroy(LIVETRACK_DOMAIN_USER, T_BUFFER, 0x900, "free_wrap");
    return 0;
}

/* Threads that create and destroy objects of one type, so that rows are
 * written while other threads' objects are being born and dying. */
enum { CHURN_THREADS = 4, CHURN_ROUNDS = 600, CHURN_BATCH = 16 };

static void *churn_objects(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg << 32;
    for (int round = 0; round < CHURN_ROUNDS; round++) {
        for (uint64_t i = 1; i <= CHURN_BATCH; i++)
            create_object(base + i * 16, T_BUFFER, 8, "churn_make");
        for (uint64_t i = 1; i <= CHURN_BATCH; i++)
            livetrack_destroy(LIVETRACK_DOMAIN_USER, T_BUFFER, base + i * 16, "churn_free");
    }
    return NULL;
}

static int case_timeline_threads(void)
{
    pthread_t threads[CHURN_THREADS];
    for (uintptr_t t = 0; t < CHURN_THREADS; t++)
        CHECK(pthread_create(&threads[t], NULL, churn_objects, (void *)(t + 1)) == 0);
    for (int t = 0; t < CHURN_THREADS; t++)
        pthread_join(threads[t], NULL);
    return check_summary("callsites timeline threads");
}

/* Names the CSV must quote, and a call name longer than a usual row. */
static const char *const odd_type_names[] = {"my,type", "quo\"te\nline"};
enum { LONG_CALL_LENGTH = 700 };

static int case_timeline_names(void)
{
    CHECK(livetrack_declare_types(LIVETRACK_DOMAIN_CUDA, "odd,api", odd_type_names, 2) == LIVETRACK_OK);
    char long_call[LONG_CALL_LENGTH + 1];
    memset(long_call, 'A', LONG_CALL_LENGTH);
    long_call[LONG_CALL_LENGTH] = '\0';
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_CUDA, .type = 0, .handle = 0x10, .bytes = 1,
                                   .call = "make,\"it\"\nnow"};
    CHECK(livetrack_create(&object) == LIVETRACK_OK);
    object = (livetrack_new_object){.domain = LIVETRACK_DOMAIN_CUDA, .type = 1, .handle = 0x20, .bytes = 2,
                                    .call = long_call};
    CHECK(livetrack_create(&object) == LIVETRACK_OK);
    object = (livetrack_new_object){.domain = LIVETRACK_DOMAIN_CUDA, .type = 0, .handle = 0x30, .bytes = 3,
                                    .call = "plain"};
    CHECK(livetrack_create(&object) == LIVETRACK_OK);
    return check_summary("callsites timeline names");
}

/* Forks; the child makes two objects and ends, then the parent makes
 * one. 0 when the child ended well; *child_pid is the child's. */
static int child_then_parent_create(pid_t *child_pid)
{
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        create_object(0x200, T_BUFFER, 1, "in_child");
        create_object(0x210, T_BUFFER, 1, "in_child");
        exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    create_object(0x300, T_BUFFER, 1, "in_parent");
    *child_pid = child;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* One object, a fork, then one more on each side: with no %p in the
 * timeline's name both append whole rows to one file. Prints both pids. */
static int case_timeline_fork(void)
{
    create_object(0x100, T_BUFFER, 1, "before_fork");
    pid_t child;
    int failed = child_then_parent_create(&child);
    printf("child %ld of %ld\n", (long)child, (long)getpid());
    return failed;
}

/* Forks before its first object, the child creating first: with the
 * timeline on the program's stdout, one of the two writes the header. */
static int case_timeline_fork_first(void)
{
    printf("before the fork\n");
    pid_t child;
    int failed = child_then_parent_create(&child);
    printf("after the fork\n");
    return failed;
}

/* Set by case_timeline_fork_race: the timeline's header then takes 50 ms
 * to write, as on a slow terminal or pipe. */
static int slow_timeline_header;

/* This executable's write (exported: the build hides symbols by default)
 * comes before the C library's for livetrack's
 * calls (not for stdio's, which calls the system directly). */
__attribute__((visibility("default"))) ssize_t write(int fd, const void *buffer, size_t size)
{
    static const char header_start[] = "seq,time_ms,";
    if (slow_timeline_header && size >= sizeof header_start - 1 &&
        !memcmp(buffer, header_start, sizeof header_start - 1))
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    return syscall(SYS_write, fd, buffer, size);
}

/* Forks before its first object, and both sides create their first at
 * once: each says it is there in a shared page and spins until the other
 * is too. With the timeline on the program's stdout, one writes the
 * header, slowly, while the other must wait for it before its row (the
 * sequential case above never has anyone wait). The spin gives up after
 * 10 s: a side that never came (it cannot) must not hang the test; the
 * rows are checked all the same. */
static int case_timeline_fork_race(void)
{
    slow_timeline_header = 1;
    atomic_int *arrived = mmap(NULL, sizeof *arrived, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (arrived == MAP_FAILED)
        return 2;
    fflush(NULL);
    pid_t child = fork();
    if (child < 0)
        return 2;
    atomic_fetch_add(arrived, 1);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (unsigned spins = 1; atomic_load(arrived) < 2; spins++) {
        if (spins % 4096 == 0 && clock_gettime(CLOCK_MONOTONIC, &now) == 0 && now.tv_sec - start.tv_sec > 10)
            break;
    }
    create_object(child ? 0x300 : 0x200, T_BUFFER, 1, child ? "in_parent" : "in_child");
    if (child == 0)
        exit(0);
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* A daemon: closes every descriptor it did not open (livetrack's
 * /proc/self/status among them), opens files of its own, which get those
 * numbers, and forks a worker that writes to them. livetrack must not
 * read, write or close them. `path`: the files' prefix. */
enum { DAEMON_FILES = 16 };

static int case_timeline_daemon(const char *path)
{
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int files[DAEMON_FILES];
    for (int i = 0; i < DAEMON_FILES; i++) {
        char name[600];
        snprintf(name, sizeof name, "%s.%d", path, i);
        files[i] = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
        if (files[i] < 0 || write(files[i], "parent\n", 7) != 7)
            return 3;
    }
    create_object(0x100, T_BUFFER, 1, "daemon_make");
    pid_t child = fork();
    if (child == 0) {
        create_object(0x200, T_BUFFER, 1, "worker_make");
        for (int i = 0; i < DAEMON_FILES; i++)
            if (write(files[i], "worker\n", 7) != 7)
                _exit(4);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    create_object(0x300, T_BUFFER, 1, "daemon_make");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 5;
}

/* Started with stdin, stdout and stderr closed (`prog <&- >&- 2>&-`):
 * with a stack captured, a timeline row written and a stack symbolized,
 * each of the three still is closed, as the program left it, not a
 * descriptor livetrack or a library of its keeps (libunwind's pipe, the
 * timeline, /proc/self/status, the files libdw reads). What it found goes
 * to the file STD_CLOSED_REPORT names, opened last. */
static int case_std_closed(const char *report_path)
{
    create_object(0x100, T_BUFFER, 1, "std_make");
    livetrack_stack_id stack = livetrack_capture_stack();
    livetrack_frame frames[16];
    size_t frame_count = livetrack_stack_symbolize(stack, frames, 16);
    char report[2048];
    int length = snprintf(report, sizeof report, "stack %u, %zu frames\n", (unsigned)stack, frame_count);
    int taken = 0;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF)
            continue;
        char link[64], target[512] = "";
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t target_length = readlink(link, target, sizeof target - 1);
        target[target_length > 0 ? target_length : 0] = '\0';
        length += snprintf(report + length, sizeof report - (size_t)length, "fd %d is open: %s\n", fd, target);
        taken++;
    }
    char byte;
    errno = 0;
    ssize_t was_read = read(STDIN_FILENO, &byte, 1);
    int read_errno = errno;
    errno = 0;
    ssize_t written = write(STDOUT_FILENO, "lost\n", 5);
    int write_errno = errno;
    length += snprintf(report + length, sizeof report - (size_t)length, "read(0) = %zd (%s), write(1) = %zd (%s)\n",
                       was_read, strerror(read_errno), written, strerror(write_errno));
    int file = open(report_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (file < 0 || write(file, report, (size_t)length) != length)
        return 3;
    close(file);
    int ok = !taken && was_read == -1 && read_errno == EBADF && written == -1 && write_errno == EBADF &&
             stack != 0 && frame_count > 0;
    return ok ? 0 : 1;
}

/* Leaks, then ends by `how`: "exit" returns 7, "segv" raises SIGSEGV,
 * "rows" makes 20000 objects (timeline rows) first and returns 7. */
static int case_pipe_gone(const char *how)
{
    int rows = how && !strcmp(how, "rows");
    for (uint64_t i = 1; i <= (rows ? 20000u : 3u); i++)
        create_object(0x1000 + i * 16, T_BUFFER, 8, "pipe_make");
    if (how && !strcmp(how, "segv")) {
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    }
    return 7;
}

static int case_peak_and_marks(void)
{
    for (uint64_t i = 1; i <= 100; i++)
        create_object(i * 16, T_BUFFER, 10, "mk");
    for (uint64_t i = 1; i <= 100; i++)
        livetrack_destroy(LIVETRACK_DOMAIN_USER, T_BUFFER, i * 16, "rm");
    create_object(0x5000, T_EVENT, 0, "mk");
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.peak_objects, 100);
    CHECK_EQ_INT(stats.peak_bytes, 1000);
    CHECK_EQ_INT(stats.live_objects, 1);

    uint64_t mark = livetrack_mark();
    create_object(0x6000, T_EVENT, 0, "mk");
    create_object(0x7000, T_BUFFER, 8, "mk");
    create_object(0x8000, T_BUFFER, 8, "mk");
    livetrack_destroy(LIVETRACK_DOMAIN_USER, T_BUFFER, 0x7000, "rm");
    livetrack_snapshot *since = livetrack_snapshot_since(LIVETRACK_DOMAIN_ANY, NULL, mark);
    CHECK_EQ_INT(livetrack_snapshot_count(since), 2);
    const livetrack_object *newest = livetrack_snapshot_at(since, 0);
    CHECK(newest && newest->handle == 0x8000);
    livetrack_snapshot_free(since);
    livetrack_snapshot *all = livetrack_snapshot_take(LIVETRACK_DOMAIN_ANY, NULL);
    CHECK_EQ_INT(livetrack_snapshot_count(all), 3);
    livetrack_snapshot_free(all);
    livetrack_snapshot *none = livetrack_snapshot_since(LIVETRACK_DOMAIN_ANY, NULL, livetrack_mark());
    CHECK_EQ_INT(livetrack_snapshot_count(none), 0);
    livetrack_snapshot_free(none);
    return check_summary("callsites peak and marks");
}

/* ---- the parent: run cases in fresh processes -------------------------- */

static char self[4096];

/* Run `name` with extra environment; stdout and stderr go to files. */
static int run_case(const char *name, const char *const *environment, const char *out_path, const char *err_path)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        for (const char *const *e = environment; e && *e; e += 2)
            setenv(e[0], e[1], 1);
        if (!freopen(out_path, "w", stdout) || !freopen(err_path, "w", stderr))
            _exit(126);
        execl(self, self, name, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *slurp(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return NULL;
    static char text[1 << 16];
    size_t length = fread(text, 1, sizeof text - 1, file);
    text[length] = '\0';
    fclose(file);
    return text;
}

/* Whether `text` has a line containing both needles, after `from`. */
static const char *line_with(const char *text, const char *first, const char *second)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        char buffer[2048];
        snprintf(buffer, sizeof buffer, "%.*s", (int)length, line);
        if (strstr(buffer, first) && (!second || strstr(buffer, second)))
            return line;
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

static void check_misuse_output(const char *dir)
{
    char out[600], err[600];
    snprintf(out, sizeof out, "%s/misuse.out", dir);
    snprintf(err, sizeof err, "%s/misuse.err", dir);
    const char *environment[] = {"LIVETRACK_RELEASE_STACKS", "1", "LIVETRACK_EXIT_REPORT", "off", NULL};
    CHECK_EQ_INT(run_case("misuse", environment, out, err), 0);
    int make = 0, drop = 0, misuse = 0;
    const char *stdout_text = slurp(out);
    CHECK(stdout_text && sscanf(stdout_text, "lines %d %d %d", &make, &drop, &misuse) == 3);
    CHECK(stdout_text && strstr(stdout_text, "misuse 2\n"));
    const char *text = slurp(err);
    CHECK(text != NULL);
    if (!text)
        return;
    char where[64];
    /* The bad call, then the creation, then the release: three stacks. */
    const char *error = line_with(text, "livetrack: ERROR: drop(0xabc0): released twice", NULL);
    CHECK(error != NULL);
    snprintf(where, sizeof where, "test_callsites.c:%d", misuse);
    const char *call = error ? line_with(error, "#0 ", "in misuse_object") : NULL;
    CHECK(call && line_with(call, where, NULL) == call);
    const char *created = error ? line_with(error, "livetrack: test_buffer 0xabc0 was created at:", NULL) : NULL;
    CHECK(created != NULL);
    snprintf(where, sizeof where, "test_callsites.c:%d", make);
    const char *made = created ? line_with(created, "in make_object", NULL) : NULL;
    CHECK(made && line_with(made, where, NULL) == made);
    const char *released = created ? line_with(created, "livetrack: and released at:", NULL) : NULL;
    CHECK(released != NULL);
    snprintf(where, sizeof where, "test_callsites.c:%d", drop);
    const char *dropped = released ? line_with(released, "in drop_object", NULL) : NULL;
    CHECK(dropped && line_with(dropped, where, NULL) == dropped);
    /* A handle never seen says so. */
    const char *never = line_with(text, "livetrack: ERROR: never made", NULL);
    CHECK(never && line_with(never, "0xdead0 was never created", NULL));
}

typedef struct csv_row {
    long long values[21];
    int empty_changes; /* the five d_* columns, empty on a process's first row */
    char event[16], call[32], api[32], type[32], handle[32];
} csv_row;

static int parse_row(const char *line, csv_row *row)
{
    /* seq,time_ms,event,call,api,type,handle,bytes,... all numeric after handle */
    double ms;
    int used = 0;
    if (sscanf(line, "%lld,%lf,%15[^,],%31[^,],%31[^,],%31[^,],%31[^,],%n", &row->values[0], &ms, row->event,
               row->call, row->api, row->type, row->handle, &used) != 7 &&
        sscanf(line, "%lld,%lf,%15[^,],,%31[^,],%31[^,],%31[^,],%n", &row->values[0], &ms, row->event, row->api,
               row->type, row->handle, &used) != 6)
        return 0;
    if (!used)
        return 0;
    const char *p = line + used;
    int empty = 0;
    for (int i = 7; i < 21; i++) {
        if (i >= 16 && (*p == ',' || *p == '\n' || !*p)) { /* an empty field (strtoll would skip a line break) */
            row->values[i] = 0;
            empty++;
            p += *p == ',';
            continue;
        }
        char *end;
        row->values[i] = strtoll(p, &end, 10);
        if (end == p)
            return 0;
        p = *end == ',' ? end + 1 : end;
    }
    if (empty != 0 && empty != 5)
        return 0;
    row->empty_changes = empty == 5;
    return 1;
}

static void check_timeline(const char *dir)
{
    char out[600], err[600], csv[600];
    snprintf(out, sizeof out, "%s/timeline.out", dir);
    snprintf(err, sizeof err, "%s/timeline.err", dir);
    snprintf(csv, sizeof csv, "%s/timeline-%%p.csv", dir);
    char json[600];
    snprintf(json, sizeof json, "%s/timeline.json", dir);
    /* The counter's creation numbers, so that the misuse's is the count. */
    const char *environment[] = {"LIVETRACK_CSV", csv, "LIVETRACK_JSON", json, "LIVETRACK_EXIT_REPORT", "off",
                                 "LIVETRACK_CREATION_ORDER", "counter", NULL};
    CHECK_EQ_INT(run_case("timeline", environment, out, err), 0);
    /* The misuse record names its timeline row (the 8th), which is not its
     * seq (3 objects were created before it): tools join the two on it. */
    const char *report = slurp(json);
    CHECK(report && strstr(report, "{\"seq\": 3, \"timeline_row\": 8, \"time_ms\": "));
    /* %p became the child's pid: find the one file. */
    char command[700], path[600] = "";
    snprintf(command, sizeof command, "ls %s/timeline-*.csv", dir);
    FILE *list = popen(command, "r");
    CHECK(list && fgets(path, sizeof path, list));
    if (list)
        pclose(list);
    path[strcspn(path, "\n")] = '\0';
    CHECK(strstr(path, "timeline-%p") == NULL);
    const char *text = slurp(path);
    CHECK(text != NULL);
    if (!text)
        return;
    const char *header = "seq,time_ms,event,call,api,type,handle,bytes,type_live,live_objects,live_bytes,"
                         "vm_size_kb,vm_rss_kb,vm_data_kb,vm_peak_kb,threads,"
                         "d_vm_size_kb,d_vm_rss_kb,d_vm_data_kb,d_vm_peak_kb,d_threads\n";
    CHECK(strncmp(text, header, strlen(header)) == 0);
    static const struct {
        const char *event, *call, *type, *handle;
        long long bytes, type_live, live_objects, live_bytes;
    } expected[] = {
        {"create", "mkbuf", "test_buffer", "0x100", 100, 1, 1, 100},
        {"create", "mkbuf", "test_buffer", "0x200", 50, 2, 2, 150},
        {"create", "mkevent", "test_event", "0x300", 0, 1, 3, 150},
        {"retain", "keep", "test_buffer", "0x100", 100, 2, 3, 150},
        {"release", "drop", "test_buffer", "0x100", 100, 2, 3, 150},
        {"release", "drop", "test_buffer", "0x100", 100, 1, 2, 50},
        {"destroy", "free", "test_event", "0x300", 0, 0, 1, 50},
        {"misuse", "use_event", "test_event", "0x300", 0, 0, 1, 50},
        {"create", "mkevent", "test_event", "0x400", 0, 1, 2, 50},
        {"create", "mkbuf", "test_buffer", "0x500", 10, 2, 3, 60},
        {"release", "drop", "test_event", "0x400", 0, 1, 3, 60}, /* kept alive by 0x500 */
        {"release", "drop", "test_buffer", "0x500", 10, 1, 2, 50},
        {"freed", "drop", "test_event", "0x400", 0, 0, 1, 50},
        {"create", "mkevent", "test_event", "0x600", 0, 1, 2, 50},
        {"create", "mkbuf", "test_buffer", "0x700", 10, 2, 3, 60},
        {"release", "drop", "test_event", "0x600", 0, 1, 3, 60},
        {"freed", "mkbuf", "test_buffer", "0x700", 10, 2, 3, 70}, /* counts include the new 0x700 */
        {"freed", "mkbuf", "test_event", "0x600", 0, 0, 2, 70},
        {"create", "mkbuf", "test_buffer", "0x700", 20, 2, 2, 70},
        {"release", "drop", "test_buffer", "0x700", 20, 1, 1, 50},
        {"create", "mkevent", "test_event", "0x800", 0, 1, 2, 50},
        {"destroy", "free", "test_event", "0x800", 0, 1, 2, 50}, /* held until the driver answered */
        {"freed", "free", "test_event", "0x800", 0, 0, 1, 50},
        {"create", "mkbuf", "test_buffer", "0x900", 30, 2, 2, 80},
        {"destroy", "free", "test_buffer", "0x900", 30, 1, 1, 50},
        {"restore", "free", "test_buffer", "0x900", 30, 2, 2, 80},
        {"destroy", "free", "test_buffer", "0x900", 30, 1, 1, 50},
    };
    const size_t count = sizeof expected / sizeof expected[0];
    const char *line = strchr(text, '\n') + 1;
    csv_row previous = {0};
    size_t rows = 0;
    for (; *line && rows < count + 1; rows++) {
        csv_row row = {0};
        int parsed = parse_row(line, &row);
        CHECK(parsed);
        if (!parsed || rows >= count)
            break;
        CHECK_EQ_INT(row.values[0], (long long)rows + 1);
        CHECK(!strcmp(row.event, expected[rows].event));
        if (strcmp(row.call, expected[rows].call))
            fprintf(stderr, "row %zu: call \"%s\", expected \"%s\"\n", rows + 1, row.call, expected[rows].call);
        CHECK(!strcmp(row.call, expected[rows].call));
        CHECK(!strcmp(row.api, "user"));
        CHECK(!strcmp(row.type, expected[rows].type));
        CHECK(!strcmp(row.handle, expected[rows].handle));
        CHECK_EQ_INT(row.values[7], expected[rows].bytes);
        CHECK_EQ_INT(row.values[8], expected[rows].type_live);
        CHECK_EQ_INT(row.values[9], expected[rows].live_objects);
        CHECK_EQ_INT(row.values[10], expected[rows].live_bytes);
        CHECK(row.values[11] > 0 && row.values[12] > 0 && row.values[15] >= 1); /* VmSize, VmRSS, Threads */
        /* signed changes since the previous row; none before the first */
        CHECK_EQ_INT(row.empty_changes, rows == 0);
        for (int m = 0; m < 5 && rows > 0; m++)
            CHECK_EQ_INT(row.values[16 + m], row.values[11 + m] - previous.values[11 + m]);
        previous = row;
        line = strchr(line, '\n');
        line = line ? line + 1 : "";
    }
    CHECK_EQ_INT(rows, count); /* and the failed release wrote nothing */
    CHECK(!*line);
}

/* Every row's counts belong together: a type never has more live objects
 * than all types together. */
static void check_timeline_threads(const char *dir)
{
    char out[600], err[600], csv[600];
    snprintf(out, sizeof out, "%s/threads.out", dir);
    snprintf(err, sizeof err, "%s/threads.err", dir);
    snprintf(csv, sizeof csv, "%s/threads.csv", dir);
    const char *environment[] = {"LIVETRACK_CSV", csv, "LIVETRACK_EXIT_REPORT", "off", NULL};
    CHECK_EQ_INT(run_case("timeline_threads", environment, out, err), 0);
    FILE *file = fopen(csv, "r");
    CHECK(file != NULL);
    if (!file)
        return;
    char line[1024];
    long rows = 0, inconsistent = 0;
    CHECK(fgets(line, sizeof line, file) != NULL); /* the header */
    while (fgets(line, sizeof line, file)) {
        /* seq,time_ms,event,call,api,type,handle,bytes,type_live,live_objects,... (no quoted names here) */
        const char *field = line;
        for (int comma = 0; comma < 8 && field; comma++)
            field = strchr(field, ',') ? strchr(field, ',') + 1 : NULL;
        long long type_live = 0, live_objects = 0;
        CHECK(field && sscanf(field, "%lld,%lld", &type_live, &live_objects) == 2);
        if (type_live > live_objects && !inconsistent++)
            fprintf(stderr, "first row with type_live > live_objects: %s", line);
        rows++;
    }
    fclose(file);
    CHECK_EQ_INT(rows, 2L * CHURN_THREADS * CHURN_ROUNDS * CHURN_BATCH);
    CHECK_EQ_INT(inconsistent, 0);
}

/* Call sites off (the timeline's descriptors alone), then on: libunwind
 * keeps two descriptors of its own, which the daemon closes too. */
static void check_timeline_daemon(const char *dir, const char *depth)
{
    char out[600], err[600], csv[600], file[600];
    snprintf(out, sizeof out, "%s/daemon.out", dir);
    snprintf(err, sizeof err, "%s/daemon.err", dir);
    snprintf(csv, sizeof csv, "%s/daemon.%%p.csv", dir);
    snprintf(file, sizeof file, "%s/daemon%s.txt", dir, depth);
    const char *environment[] = {"LIVETRACK_CSV",      csv, "LIVETRACK_EXIT_REPORT", "off", "DAEMON_FILE", file,
                                 "LIVETRACK_STACK_DEPTH", depth, NULL};
    CHECK_EQ_INT(run_case("timeline_daemon", environment, out, err), 0);
    for (int i = 0; i < DAEMON_FILES; i++) {
        char name[700];
        snprintf(name, sizeof name, "%s.%d", file, i);
        const char *text = slurp(name);
        CHECK(text && !strcmp(text, "parent\nworker\n"));
        if (text && strcmp(text, "parent\nworker\n"))
            fprintf(stderr, "%s holds \"%s\"\n", name, text);
    }
}

/* case_std_closed, run with descriptors 0, 1 and 2 closed from the start
 * (livetrack loads with them closed), a timeline and call sites on. */
static void check_std_closed(const char *dir)
{
    char csv[600], report[600];
    snprintf(csv, sizeof csv, "%s/std_closed.csv", dir);
    snprintf(report, sizeof report, "%s/std_closed.txt", dir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("LIVETRACK_CSV", csv, 1);
        setenv("LIVETRACK_EXIT_REPORT", "off", 1);
        setenv("STD_CLOSED_REPORT", report, 1);
        close(STDIN_FILENO);
        close(STDOUT_FILENO);
        close(STDERR_FILENO);
        execl(self, self, "std_closed", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const char *text = slurp(report);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "started with 0-2 closed: status 0x%x; %s", status, text ? text : "no report\n");
    text = slurp(csv);
    CHECK(text && strstr(text, ",create,std_make,"));
}

/* Runs case "pipe_gone" `how` with stderr a pipe nobody reads any more,
 * and, with `fifo`, the timeline a FIFO whose reader goes after a few
 * bytes. Returns the raw wait status. */
static int run_with_readers_gone(const char *how, const char *fifo)
{
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        return -1;
    pid_t reader = -1;
    if (fifo) {
        unlink(fifo);
        if (mkfifo(fifo, 0600) != 0)
            return -1;
        reader = fork();
        if (reader == 0) {
            int in = open(fifo, O_RDONLY);
            char some[300];
            _exit(in >= 0 && read(in, some, sizeof some) > 0 ? 0 : 1); /* then gone */
        }
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(pipe_fds[0]);
        dup2(pipe_fds[1], STDERR_FILENO);
        setenv("LIVETRACK_EXIT_REPORT", "auto", 1);
        if (fifo)
            setenv("LIVETRACK_CSV", fifo, 1);
        execl(self, self, "pipe_gone", how, (char *)NULL);
        _exit(127);
    }
    close(pipe_fds[0]); /* nobody reads stderr */
    close(pipe_fds[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (reader > 0)
        waitpid(reader, NULL, 0);
    return status;
}

/* livetrack's own writes to a reader gone fail with EPIPE; they never end
 * the program with a SIGPIPE of their own. */
static void check_readers_gone(const char *dir)
{
    int status = run_with_readers_gone("exit", NULL); /* the exit report */
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
    status = run_with_readers_gone("segv", NULL); /* the crash report */
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/rows.fifo", dir);
    status = run_with_readers_gone("rows", fifo); /* the timeline */
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 7)
        fprintf(stderr, "readers gone: status 0x%x (signal %d)\n", status, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* A timeline named "fork%%pdir.csv" is the one file "fork%pdir.csv" (%%
 * is a literal %, as livetrack run writes a working directory's %), not a
 * file per process: the child's first row must not empty the parent's. */
static void check_timeline_fork(const char *dir)
{
    char out[600], err[600], csv[600], file[600];
    snprintf(out, sizeof out, "%s/fork.out", dir);
    snprintf(err, sizeof err, "%s/fork.err", dir);
    snprintf(csv, sizeof csv, "%s/fork%%%%pdir.csv", dir);
    snprintf(file, sizeof file, "%s/fork%%pdir.csv", dir);
    const char *environment[] = {"LIVETRACK_CSV", csv, "LIVETRACK_EXIT_REPORT", "off", NULL};
    CHECK_EQ_INT(run_case("timeline_fork", environment, out, err), 0);
    const char *text = slurp(file);
    CHECK(text && strstr(text, ",create,before_fork,") && strstr(text, ",create,in_child,") &&
          strstr(text, ",create,in_parent,"));
    if (!text)
        fprintf(stderr, "no timeline %s\n", file);
    /* The child says once, at its first row, that the rows mix; the
     * parent, whose file it is, says nothing. */
    long child = 0, parent = 0;
    text = slurp(out);
    CHECK(text && sscanf(text, "child %ld of %ld", &child, &parent) == 2);
    char expected[1200];
    snprintf(expected, sizeof expected,
             "livetrack: pid %ld, forked from pid %ld, adds its timeline rows to \"%s\", as its parent does: their "
             "rows mix, seq numbers repeat and each row's live totals are its own process's; put %%p in "
             "LIVETRACK_CSV for a timeline per process\n",
             child, parent, file);
    text = slurp(err);
    const char *said = text ? strstr(text, expected) : NULL;
    CHECK(said && (said == text || said[-1] == '\n'));
    const char *again = said ? strstr(said + strlen(expected), "forked from pid") : NULL;
    CHECK(said && !again);
    if (!said || again)
        fprintf(stderr, "expected once on stderr: %sstderr:\n%s", expected, text ? text : "(none)\n");

    /* On the program's stdout (./program >file), forked before the first
     * row: the header once, then the rows of both, among the program's
     * own lines, none written over another. */
    const char *on_stdout[] = {"LIVETRACK_CSV", "/dev/stdout", "LIVETRACK_EXIT_REPORT", "off", NULL};
    CHECK_EQ_INT(run_case("timeline_fork_first", on_stdout, out, err), 0);
    text = slurp(out);
    const char *header = "seq,time_ms,event,call,api,type,handle,bytes,";
    CHECK(text && !strncmp(text, "before the fork\n", 16) && !strncmp(text + 16, header, strlen(header)));
    CHECK(text && strstr(text + 16, header) && !strstr(strstr(text + 16, header) + 1, header));
    CHECK(text && strstr(text, "\n1,") && strstr(text, ",create,in_child,") && strstr(text, ",create,in_parent,"));
    const char *last = text ? strstr(text, ",create,in_parent,") : NULL;
    CHECK(last && strchr(last, '\n') && !strcmp(strchr(last, '\n'), "\nafter the fork\n"));
    if (check_failed)
        fprintf(stderr, "timeline on stdout, forked before its first row:\n%s", text ? text : "(none)\n");

    /* The same, both sides reaching their first row at once: whichever
     * writes the header, it is there once, before both rows. The other
     * side waits for it up to 1 s: a round fails only if the header's
     * writer, which takes 50 ms, is held off the CPU longer than that. */
    for (int round = 0; round < 20; round++) {
        int failed_before = check_failed;
        CHECK_EQ_INT(run_case("timeline_fork_race", on_stdout, out, err), 0);
        text = slurp(out);
        const char *second = text && !strncmp(text, header, strlen(header)) ? strstr(text + 1, header) : text;
        CHECK(text && !second && strstr(text, ",create,in_child,") && strstr(text, ",create,in_parent,"));
        if (check_failed != failed_before) {
            fprintf(stderr, "timeline on stdout, both sides' first rows at once, round %d:\n%s", round,
                    text ? text : "(none)\n");
            break;
        }
    }
}

/* Names with commas, quotes and line breaks are quoted as RFC 4180 says,
 * and a long row is written whole, newline included. */
static void check_timeline_names(const char *dir)
{
    char out[600], err[600], csv[600];
    snprintf(out, sizeof out, "%s/names.out", dir);
    snprintf(err, sizeof err, "%s/names.err", dir);
    snprintf(csv, sizeof csv, "%s/names.csv", dir);
    const char *environment[] = {"LIVETRACK_CSV", csv, "LIVETRACK_EXIT_REPORT", "off", NULL};
    CHECK_EQ_INT(run_case("timeline_names", environment, out, err), 0);
    const char *text = slurp(csv);
    CHECK(text != NULL);
    if (!text)
        return;
    CHECK(strstr(text, ",create,\"make,\"\"it\"\"\nnow\",\"odd,api\",\"my,type\",0x10,1,") != NULL);
    char long_row[LONG_CALL_LENGTH + 64] = ",create,";
    memset(long_row + strlen(long_row), 'A', LONG_CALL_LENGTH);
    strcpy(long_row + strlen(",create,") + LONG_CALL_LENGTH, ",\"odd,api\",\"quo\"\"te\nline\",0x20,2,");
    const char *long_at = strstr(text, long_row);
    CHECK(long_at != NULL);
    /* the long row ends with its newline, and the next row starts whole */
    const char *next = long_at ? strchr(long_at + strlen(long_row), '\n') : NULL;
    CHECK(next && !strncmp(next, "\n3,", 3));
    CHECK(strstr(text, ",create,plain,\"odd,api\",\"my,type\",0x30,3,") != NULL);
    size_t length = strlen(text);
    CHECK(length && text[length - 1] == '\n');
}

int main(int argc, char **argv)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, T_COUNT);
    if (argc > 1) {
        if (!strcmp(argv[1], "interning"))
            return case_interning();
        if (!strcmp(argv[1], "depth0"))
            return case_depth_zero();
        if (!strcmp(argv[1], "misuse"))
            return case_misuse();
        if (!strcmp(argv[1], "timeline"))
            return case_timeline();
        if (!strcmp(argv[1], "peak"))
            return case_peak_and_marks();
        if (!strcmp(argv[1], "timeline_names"))
            return case_timeline_names();
        if (!strcmp(argv[1], "timeline_threads"))
            return case_timeline_threads();
        if (!strcmp(argv[1], "timeline_fork"))
            return case_timeline_fork();
        if (!strcmp(argv[1], "timeline_fork_first"))
            return case_timeline_fork_first();
        if (!strcmp(argv[1], "timeline_fork_race"))
            return case_timeline_fork_race();
        if (!strcmp(argv[1], "timeline_daemon"))
            return case_timeline_daemon(getenv("DAEMON_FILE"));
        if (!strcmp(argv[1], "std_closed"))
            return case_std_closed(getenv("STD_CLOSED_REPORT"));
        if (!strcmp(argv[1], "pipe_gone"))
            return case_pipe_gone(argc > 2 ? argv[2] : NULL);
        fprintf(stderr, "unknown case %s\n", argv[1]);
        return 2;
    }
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0)
        return 1;
    self[length] = '\0';
    char dir[] = "/tmp/livetrack-callsites-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char out[600], err[600];
    snprintf(out, sizeof out, "%s/case.out", dir);
    snprintf(err, sizeof err, "%s/case.err", dir);
    static const char *const plain[] = {"LIVETRACK_EXIT_REPORT", "off", NULL};
    static const char *const off[] = {"LIVETRACK_STACK_DEPTH", "0", "LIVETRACK_EXIT_REPORT", "off", NULL};
    const char *cases[][2] = {{"interning", NULL}, {"depth0", NULL}, {"peak", NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int status = run_case(cases[i][0], i == 1 ? off : plain, out, err);
        if (status) {
            const char *text = slurp(out);
            fprintf(stderr, "case %s failed (%d):\n%s", cases[i][0], status, text ? text : "");
            text = slurp(err);
            fprintf(stderr, "%s", text ? text : "");
        }
        CHECK_EQ_INT(status, 0);
    }
    check_misuse_output(dir);
    check_timeline(dir);
    check_timeline_threads(dir);
    check_timeline_names(dir);
    check_timeline_fork(dir);
    check_timeline_daemon(dir, "0");
    check_timeline_daemon(dir, "16");
    check_readers_gone(dir);
    check_std_closed(dir);
    char command[700];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_summary("test_callsites");
}
