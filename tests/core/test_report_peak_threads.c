/*
 * The peak with several threads (peak.c keeps per-thread differences and
 * adds them to the shared totals in batches). Each scenario runs in a
 * child of its own: the peak is the whole process's.
 *
 * released: a thread creates 50 objects, releases them and stays alive;
 *    then the main thread creates 40. At most 50 were ever live at once:
 *    the peak must say 50, not 90 (releases not yet pushed would leave
 *    the shared totals 50 too high), and list what it counts.
 * held: after an exact peak of 64, a thread creates 30 objects, below
 *    it, and keeps them (its difference stays unpushed); the main thread
 *    then creates 70. The shared totals see a new high of 70 while 100
 *    are live: the copied set holds 100, and the report must give the
 *    set's own totals, never a count that disagrees with the list under
 *    it, and say that it is approximate.
 * elsewhere: after a peak of 20, a thread creates 10 objects (below it:
 *    unpushed) and the main thread releases them, then creates one. The
 *    shared totals go below zero; read as unsigned they made a peak of
 *    ~2^64 objects, and no later real peak could beat it.
 * raced: a thread spins releasing a handle while the main thread creates
 *    it, in many trials, each in a forked child with a peak of its own.
 *    The create links the object (findable) before it marks the new
 *    high pending, so the release may see nothing pending and copy no
 *    set, and nothing dies after it: the peak of 1 object has no set.
 *    It was reported as no peak at all, as if livetrack had run out of
 *    memory; it is the marks with an approximate, empty set.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

#define OBJECT_BYTES 1000
/* "released" */
#define RELEASER_OBJECTS 50 /* fewer than peak.c's batch of 64 objects */
#define MAIN_AFTER_RELEASER 40
/* "held" */
#define FIRST_PEAK_OBJECTS 64 /* a whole batch: pushed however releases are batched */
#define HOLDER_OBJECTS 30
#define MAIN_AFTER_HOLDER 70
/* "elsewhere" */
#define FIRST_OF_ELSEWHERE 20
#define MADE_ELSEWHERE 10
/* "raced": trials until this many raced (about one in ten does on an
 * idle 2-CPU host, a few ms each), at most this many or this long. */
#define RACES_WANTED 40
#define RACE_TRIALS 3000
#define RACE_SECONDS 20
#define RACED_HANDLE 0x80000
#define RACED_BYTES 4096

static pthread_barrier_t work_done, may_exit;

static void make(uint64_t handle)
{
    livetrack_new_object object = {
        .domain = LIVETRACK_DOMAIN_USER, .handle = handle, .bytes = OBJECT_BYTES, .call = "make"};
    CHECK(livetrack_create(&object) == LIVETRACK_OK);
}

static void release(uint64_t handle)
{
    CHECK(livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, NULL, NULL) == LIVETRACK_OK);
}

/* Creates and releases its objects, then stays alive so that no
 * thread-exit push can hide what it left unpushed. */
static void *create_and_release(void *unused)
{
    (void)unused;
    for (uint64_t i = 0; i < RELEASER_OBJECTS; i++)
        make(0x10000 + i * 16);
    for (uint64_t i = 0; i < RELEASER_OBJECTS; i++)
        release(0x10000 + i * 16);
    pthread_barrier_wait(&work_done);
    pthread_barrier_wait(&may_exit);
    return NULL;
}

/* Creates objects below the peak and keeps them while it stays alive. */
static void *create_and_hold(void *unused)
{
    (void)unused;
    for (uint64_t i = 0; i < HOLDER_OBJECTS; i++)
        make(0x30000 + i * 16);
    pthread_barrier_wait(&work_done);
    pthread_barrier_wait(&may_exit);
    return NULL;
}

/* Creates objects below the peak that the main thread releases. */
static void *create_for_others(void *unused)
{
    (void)unused;
    for (uint64_t i = 0; i < MADE_ELSEWHERE; i++)
        make(0x50000 + i * 16);
    pthread_barrier_wait(&work_done);
    pthread_barrier_wait(&may_exit);
    return NULL;
}

/* `count` objects made and released by the main thread: an exact peak of
 * `count`, every push done. */
static void exact_first_peak(uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        make(0x20000 + i * 16);
    for (uint64_t i = 0; i < count; i++)
        release(0x20000 + i * 16);
}

static void run_while_held(void *(*body)(void *), pthread_t *thread)
{
    CHECK(pthread_create(thread, NULL, body, NULL) == 0);
    pthread_barrier_wait(&work_done);
}

static void let_exit(pthread_t thread)
{
    pthread_barrier_wait(&may_exit);
    pthread_join(thread, NULL);
}

/* The peak report's header totals, the sum of the sites it lists, and
 * whether it says approximate; 0 when there is no header. */
typedef struct peak_text {
    uint64_t objects, listed_objects;
    int approximate;
} peak_text;

static int read_peak_report(peak_text *out, char **text)
{
    *text = rt_peak_report(NULL);
    memset(out, 0, sizeof *out);
    char line[512];
    if (!rt_line_starting(*text, "livetrack: at peak ", 0, line, sizeof line))
        return 0;
    const char *in = strstr(line, " live in ");
    if (!in || sscanf(in, " live in %" SCNu64, &out->objects) != 1)
        return 0;
    out->approximate = strstr(line, "approximate") != NULL;
    /* Every other "livetrack: " line is a site: "livetrack: N live ..." */
    for (unsigned n = 1; rt_line_starting(*text, "livetrack: ", n, line, sizeof line); n++) {
        uint64_t objects = 0;
        CHECK(sscanf(line, "livetrack: %" SCNu64 " live ", &objects) == 1);
        out->listed_objects += objects;
    }
    return 1;
}

/* The peak report says `objects` and lists sites adding up to them (shown
 * when a check failed); returns what it read. */
static peak_text expect_peak_report(uint64_t objects)
{
    peak_text peak;
    char *text;
    CHECK(read_peak_report(&peak, &text));
    CHECK_EQ_INT(peak.objects, objects);
    CHECK_EQ_INT(peak.listed_objects, objects);
    if (check_failed)
        fprintf(stderr, "---- the peak report:\n%s---- end\n", text);
    free(text);
    return peak;
}

static void scenario_released(void)
{
    pthread_t thread;
    run_while_held(create_and_release, &thread);
    for (uint64_t i = 0; i < MAIN_AFTER_RELEASER; i++)
        make(0x20000 + i * 16);
    release(0x20000); /* a death: a pending peak would be copied here */
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.peak_objects, RELEASER_OBJECTS);
    CHECK_EQ_INT(stats.peak_bytes, RELEASER_OBJECTS * OBJECT_BYTES);
    CHECK(!expect_peak_report(RELEASER_OBJECTS).approximate);
    let_exit(thread);
}

static void scenario_held(void)
{
    exact_first_peak(FIRST_PEAK_OBJECTS);
    pthread_t thread;
    run_while_held(create_and_hold, &thread);
    for (uint64_t i = 0; i < MAIN_AFTER_HOLDER; i++)
        make(0x40000 + i * 16);
    release(0x40000); /* the set is copied here, all 100 objects live */
    const uint64_t both = HOLDER_OBJECTS + MAIN_AFTER_HOLDER;
    peak_text peak;
    char *text;
    CHECK(read_peak_report(&peak, &text));
    CHECK_EQ_INT(peak.listed_objects, both);
    CHECK_EQ_INT(peak.objects, peak.listed_objects);
    CHECK(peak.approximate); /* the shared totals had seen only 70 */
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK(stats.peak_objects >= both && stats.peak_bytes >= both * OBJECT_BYTES);
    if (check_failed)
        fprintf(stderr, "---- the peak report:\n%s---- end\n", text);
    free(text);
    const char *checks[] = {
        "r['peak']['objects'] == sum(s['objects'] for s in r['peak']['sites']) == 100",
        "r['peak']['bytes'] == sum(s['bytes'] for s in r['peak']['sites']) == 100000",
        "r['peak']['approximate'] is True",
        "r['peak']['max_objects'] >= 100 and r['peak']['max_bytes'] >= 100000",
        NULL};
    CHECK(rt_check_own_json(0, checks));
    let_exit(thread);
}

static void scenario_elsewhere(void)
{
    exact_first_peak(FIRST_OF_ELSEWHERE);
    pthread_t thread;
    run_while_held(create_for_others, &thread);
    for (uint64_t i = 0; i < MADE_ELSEWHERE; i++)
        release(0x50000 + i * 16);
    make(0x60000);
    release(0x60000); /* a death: a pending peak would be copied here */
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.peak_objects, FIRST_OF_ELSEWHERE);
    CHECK_EQ_INT(stats.peak_bytes, FIRST_OF_ELSEWHERE * OBJECT_BYTES);
    expect_peak_report(FIRST_OF_ELSEWHERE);
    /* A real peak above the first still counts. The shared totals stay
     * low by the other thread's creates until it pushes them (at most a
     * batch), so the report, which counts the shards while the program is
     * at its peak, is what finds it. */
    for (uint64_t i = 0; i <= FIRST_OF_ELSEWHERE; i++)
        make(0x70000 + i * 16);
    expect_peak_report(FIRST_OF_ELSEWHERE + 1);
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.peak_objects, FIRST_OF_ELSEWHERE + 1);
    let_exit(thread);
}

/* The raced handle's releaser: counts its tries, so that the creator
 * starts only once it spins. */
static atomic_uint release_tries;

static void *release_when_created(void *unused)
{
    (void)unused;
    while (livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, RACED_HANDLE, NULL, "raced_release") !=
           LIVETRACK_OK)
        atomic_fetch_add_explicit(&release_tries, 1, memory_order_relaxed);
    return NULL;
}

/* What one trial's child found (its exit status). */
enum { TRIAL_EXACT = 0, TRIAL_FAILED = 1, TRIAL_RACED = 3, TRIAL_UNCOUNTED = 4 };

/* One trial, in a child: returns its exit status. `check_json`: also
 * check the JSON report of a raced peak against the schema. */
static int race_trial(int check_json)
{
    pthread_t releaser;
    CHECK(pthread_create(&releaser, NULL, release_when_created, NULL) == 0);
    while (atomic_load_explicit(&release_tries, memory_order_relaxed) < 2)
        sched_yield();
    livetrack_new_object object = {
        .domain = LIVETRACK_DOMAIN_USER, .handle = RACED_HANDLE, .bytes = RACED_BYTES, .call = "raced_create"};
    CHECK(livetrack_create(&object) == LIVETRACK_OK);
    pthread_join(releaser, NULL);
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.live_objects, 0);
    /* The marks: each of objects and bytes is the object's, or none when
     * the release's difference reached the shared totals before the
     * create looked at them (with several threads the peak may be low,
     * never too high: see peak.c). */
    CHECK(stats.peak_objects <= 1);
    CHECK(stats.peak_bytes == 0 || stats.peak_bytes == RACED_BYTES);
    /* No allocation failed, so there is no lost set: the one object's
     * set, or (the release won) the marks over an empty approximate set,
     * or no peak at all when the marks count no object. */
    char *text = rt_peak_report(NULL);
    char line[512] = "";
    int raced = 0, uncounted = stats.peak_objects == 0;
    CHECK(!strstr(text, "no peak live set was recorded"));
    if (uncounted) {
        CHECK(strstr(text, "livetrack: no object was ever live: no peak\n") != NULL);
    } else if (!rt_line_starting(text, "livetrack: at peak ", 0, line, sizeof line)) {
        CHECK(!"a peak line");
    } else if (!strstr(line, "at peak 4.0 KiB live in 1 object (")) {
        raced = 1;
        CHECK(strstr(line, "at peak 0 bytes live in 0 objects (") != NULL);
        CHECK(strstr(line, "(approximate: copied near the peak, not at it)") != NULL);
        CHECK(strstr(text, "\nlivetrack: most objects live at once: 1\n") != NULL);
        if (stats.peak_bytes)
            CHECK(strstr(text, "\nlivetrack: most bytes live at once: 4.0 KiB\n") != NULL);
    }
    if (raced && check_json) {
        const char *checks[] = {"r['peak'] is not None",
                                "r['peak']['objects'] == r['peak']['bytes'] == 0 and r['peak']['sites'] == []",
                                "r['peak']['approximate'] is True",
                                "r['peak']['max_objects'] == 1 and r['peak']['max_bytes'] in (0, 4096)",
                                "r['summary']['incomplete'] is False",
                                NULL};
        CHECK(rt_check_own_json(0, checks));
    }
    if (check_failed)
        fprintf(stderr, "---- the peak report:\n%s---- end\n", text);
    free(text);
    return check_failed ? TRIAL_FAILED : raced ? TRIAL_RACED : uncounted ? TRIAL_UNCOUNTED : TRIAL_EXACT;
}

static void scenario_raced(void)
{
    unsigned trials = 0, races = 0, uncounted = 0;
    /* Unwinding and symbolizing set up once here, not in every child. No
     * object is created: each child's peak is its own. */
    livetrack_frame frames[8];
    livetrack_stack_symbolize(livetrack_capture_stack(), frames, 8);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    now = start;
    while (trials < RACE_TRIALS && races < RACES_WANTED && now.tv_sec - start.tv_sec < RACE_SECONDS &&
           !check_failed) {
        fflush(NULL); /* a child's exit must not write the parent's buffers again */
        pid_t child = fork();
        CHECK(child >= 0);
        if (child < 0)
            break;
        if (child == 0)
            _exit(race_trial(races == 0));
        int status = 0;
        CHECK(waitpid(child, &status, 0) == child);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        CHECK(code == TRIAL_EXACT || code == TRIAL_RACED || code == TRIAL_UNCOUNTED);
        if (code != TRIAL_EXACT && code != TRIAL_RACED && code != TRIAL_UNCOUNTED)
            fprintf(stderr, "trial %u: status %d\n", trials, code);
        trials++;
        races += code == TRIAL_RACED;
        uncounted += code == TRIAL_UNCOUNTED;
        clock_gettime(CLOCK_MONOTONIC, &now);
    }
    /* No CHECK on how many raced: that depends on the host's load. */
    printf("raced: %u of %u trials left a peak without a set, %u none\n", races, trials, uncounted);
}

static void run_scenario(const char *name)
{
    char *argv[] = {(char *)rt_self(), "scenario", (char *)name, NULL};
    /* The stack depth passes on: scripts/test.sh turns call sites off
     * under TSan (libunwind's per-thread cache and TSan's thread exit). */
    char depth[64] = "LIVETRACK_EXIT_REPORT=off";
    if (getenv("LIVETRACK_STACK_DEPTH"))
        snprintf(depth, sizeof depth, "LIVETRACK_STACK_DEPTH=%s", getenv("LIVETRACK_STACK_DEPTH"));
    const char *const set[] = {"LIVETRACK_EXIT_REPORT=off", depth, NULL};
    rt_child child;
    CHECK_EQ_INT(rt_run(argv, set, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);
    if (child.status != 0)
        rt_child_dump(name, &child);
    rt_child_free(&child);
}

int main(int argc, char **argv)
{
    pthread_barrier_init(&work_done, NULL, 2);
    pthread_barrier_init(&may_exit, NULL, 2);
    if (argc == 3 && !strcmp(argv[1], "scenario")) {
        if (!strcmp(argv[2], "released"))
            scenario_released();
        else if (!strcmp(argv[2], "held"))
            scenario_held();
        else if (!strcmp(argv[2], "elsewhere"))
            scenario_elsewhere();
        else if (!strcmp(argv[2], "raced"))
            scenario_raced();
        else
            CHECK(!"a known scenario");
        return check_summary(argv[2]);
    }
    run_scenario("released");
    run_scenario("held");
    run_scenario("elsewhere");
    run_scenario("raced");
    return check_summary("test_report_peak_threads");
}
