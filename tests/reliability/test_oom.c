/*
 * Faults: livetrack running out of memory (failures injected with
 * LIVETRACK_FAULT_ALLOC_AFTER, see layer/core/memory.c) must degrade to
 * "tracking incomplete": one message, the program goes on unharmed, the
 * exit report says so, and nothing crashes or hangs.
 *
 *   test_oom [--all] [<layer.so> <opencl program>]
 *
 * 1. A registry workload (objects with parents, retains, releases,
 *    misuse, snapshots, reports) with the allocations failing from the
 *    Kth on, for a spread of K, and with only the Kth failing. --all
 *    tries every K (labelled long).
 * 2. The exit report's snapshot failing, and only that: which live
 *    objects leaked is not known, the text and the JSON say so (not
 *    "0 leaked"), and LIVETRACK_EXIT_CODE fails the run.
 * 3. Declaring types with one allocation failing: the whole set or
 *    one name is lost, and the message says which.
 * 3b. Counting leaks without a report (livetrack_leaks_since(mark, NULL),
 *    livetrack_write_report(NULL, ...)) when the count's snapshot fails:
 *    every live object counts, never 0.
 * 3c. The peak with one allocation failing, for each: a peak set that
 *    could not be copied or grouped is null in the JSON and "no peak
 *    live set was recorded" in the text, never a peak of 0 objects at
 *    time 0; any other peak (in the workload's reports of 1. too) has
 *    objects and sites.
 * 4. With a layer and an OpenCL program: the program's stdout and exit
 *    status are the same as without injected failures, and the layer
 *    refuses none of its calls.
 */
#include "livetrack/livetrack.h"
#include "rel_util.h"

#define OBJECTS 3000
#define ROOTS 8

static const char *const type_names[] = {"oom_ctx", "oom_mem", "oom_event"};

/* ---- the child: a workload that checks itself ----------------------------------- */

static int workload(void)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "oomtest", type_names, 3);
    static signed char made[OBJECTS]; /* 1: tracked, 0: create failed */
    size_t ok = 0, no_memory = 0, wrong = 0;
    for (int i = 0; i < OBJECTS; i++) {
        livetrack_new_object object = {
            .domain = LIVETRACK_DOMAIN_USER,
            .type = i < ROOTS ? 0 : 1 + (unsigned)(i % 2),
            .handle = 0x100000 + (uint64_t)i * 0x20,
            .bytes = (uint64_t)i,
            .parent = i < ROOTS ? 0 : 0x100000 + (uint64_t)(i % ROOTS) * 0x20,
            .second_parent = i > 2 * ROOTS && i % 3 == 0 ? 0x100000 + (uint64_t)(i - ROOTS) * 0x20 : 0,
            .call = "oom_create",
        };
        livetrack_status status = livetrack_create(&object);
        made[i] = status == LIVETRACK_OK;
        ok += status == LIVETRACK_OK;
        no_memory += status == LIVETRACK_NO_MEMORY;
        wrong += status != LIVETRACK_OK && status != LIVETRACK_NO_MEMORY;
        if (i % 500 == 0) {
            livetrack_snapshot_free(livetrack_snapshot_take(LIVETRACK_DOMAIN_ANY, NULL));
            FILE *sink = fopen("/dev/null", "w");
            livetrack_write_leak_report(sink, 1);
            livetrack_write_report(sink, LIVETRACK_FORMAT_JSON, LIVETRACK_REPORT_PEAK, 0);
            livetrack_write_peak_report(sink);
            fclose(sink);
            livetrack_report_misuse_on(LIVETRACK_DOMAIN_USER, object.handle + 8, "oom test misuse %d", i);
        }
    }
    /* What was tracked behaves exactly; what was not is unknown. Only
     * the references: holders depend on which parents were tracked. */
    size_t mismatches = 0;
    for (int i = OBJECTS; i-- > 0;) {
        uint64_t handle = 0x100000 + (uint64_t)i * 0x20;
        livetrack_status expected = made[i] ? LIVETRACK_OK : LIVETRACK_UNKNOWN;
        if (i % 4 == 0) {
            mismatches += livetrack_retain(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, "oom_retain") != expected;
            mismatches += livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, NULL, "oom_release") !=
                          expected;
        }
        if (i % 2 == 0) /* the rest leak */
            mismatches += livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, NULL, "oom_release") !=
                          expected;
    }
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    printf("created %zu, out of memory %zu, other %zu, mismatches %zu, incomplete %d, live %llu\n", ok, no_memory,
           wrong, mismatches, stats.incomplete, (unsigned long long)stats.live_objects);
    return wrong || mismatches || (no_memory && !stats.incomplete) ? 1 : 0;
}

/* The child of type_name_faults: declares three types and prints what
 * the declaration returned and the name each type reads as. */
static int declare_types(void)
{
    livetrack_status status = livetrack_declare_types(LIVETRACK_DOMAIN_USER, "oomtest", type_names, 3);
    printf("status %d names", (int)status);
    for (livetrack_type type = 0; type < 3; type++)
        printf(" %s", livetrack_type_name(LIVETRACK_DOMAIN_USER, type));
    printf("\n");
    return 0;
}

/* The child of count_faults: three objects, then the two counts that
 * take a snapshot and build no report. */
static int count_leaks(void)
{
    int created = 0;
    for (int i = 0; i < 3; i++) {
        livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = 1, .handle = 0x9000 + (uint64_t)i * 16,
                                       .bytes = 8, .call = "oom_count"};
        created += livetrack_create(&object) == LIVETRACK_OK;
    }
    size_t counted = livetrack_leaks_since(0, NULL);
    size_t written = livetrack_write_report(NULL, LIVETRACK_FORMAT_TEXT, 0, 0);
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    printf("created %d counted %zu written %zu incomplete %d\n", created, counted, written, stats.incomplete);
    return 0;
}

/* The child of peak_faults: four objects of 64 bytes, the peak, then
 * one released (the first death after a new high copies its set). */
static int peak_then_release(void)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "oomtest", type_names, 3);
    for (int i = 0; i < 4; i++) {
        livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = 1, .handle = 0xa000 + (uint64_t)i * 16,
                                       .bytes = 64, .call = "oom_peak"};
        livetrack_create(&object);
    }
    livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0xa000, NULL, "oom_peak_release");
    return 0;
}

/* ---- the driver ------------------------------------------------------------------------ */

/* The peak of a JSON report: 1 when null, 0 when a set of objects at
 * sites (checked: never of 0 objects, never without sites; its bytes in
 * *bytes), -1 when the report was not written whole (its own allocations
 * failed). */
static int peak_is_null(const char *json, uint64_t *bytes)
{
    if (!json || !strstr(json, "\n}\n"))
        return -1;
    const char *peak = strstr(json, "\n  \"peak\": ");
    CHECK(peak != NULL);
    if (!peak)
        return -1;
    peak += strlen("\n  \"peak\": ");
    if (!strncmp(peak, "null,", 5))
        return 1;
    unsigned long long objects = 0, total = 0;
    CHECK(sscanf(peak, "{\"objects\": %llu, \"bytes\": %llu,", &objects, &total) == 2);
    CHECK(objects > 0);
    const char *sites = strstr(peak, "\"sites\": [");
    CHECK(sites && sites[strlen("\"sites\": [")] == '\n'); /* not "[]" */
    *bytes = total;
    return 0;
}


static unsigned long runs, runs_incomplete, failures_injected;

/* One run with LIVETRACK_FAULT_ALLOC_AFTER=`fault`; returns how many
 * allocations failed. */
static long run_workload(const char *dir, const char *fault)
{
    char fault_env[64], output_env[512], output[512], json_env[512], json_path[512];
    snprintf(fault_env, sizeof fault_env, "LIVETRACK_FAULT_ALLOC_AFTER=%s", fault);
    snprintf(output_env, sizeof output_env, "LIVETRACK_OUTPUT=%s/report.%%p", dir);
    snprintf(json_env, sizeof json_env, "LIVETRACK_JSON=%s/report.%%p.json", dir);
    const char *env[] = {fault_env, output_env, "LIVETRACK_EXIT_REPORT=always", json_env,
                         "LIVETRACK_CSV=/dev/null", "LIVETRACK_PEAK_REPORT=1", NULL};
    char *argv[] = {(char *)rel_self(), "workload", NULL};
    rel_run run = rel_spawn(argv, env, 60);
    snprintf(output, sizeof output, "%s/report.%ld", dir, (long)run.pid);
    int failed_before = check_failed;
    /* Incomplete while the workload ran, or only later (a failure while
     * the exit report was built): one message either way. */
    int during_workload = strstr(run.out, "incomplete 1") != NULL;
    int incomplete = (int)rel_count(run.err, "tracking is incomplete");
    CHECK(rel_exited(&run, 0));
    CHECK(incomplete <= 1 && incomplete >= during_workload);
    char *report = rel_read_file(output);
    CHECK(report != NULL);
    if (report && during_workload)
        CHECK(strstr(report, "tracking was incomplete") != NULL);
    if (report && !incomplete)
        CHECK(strstr(report, "tracking was incomplete") == NULL);
    if (report)
        CHECK(strstr(report, "at peak 0 bytes live in 0 objects") == NULL);
    snprintf(json_path, sizeof json_path, "%s/report.%ld.json", dir, (long)run.pid);
    char *json = rel_read_file(json_path);
    uint64_t peak_bytes;
    peak_is_null(json, &peak_bytes);
    free(json);
    unlink(json_path);
    free(report);
    unlink(output);
    if (check_failed != failed_before) {
        char what[96];
        snprintf(what, sizeof what, "workload with LIVETRACK_FAULT_ALLOC_AFTER=%s", fault);
        rel_dump(what, &run);
    }
    long allocations = -1, failed = -1;
    const char *summary = strstr(run.err, "LIVETRACK_FAULT_ALLOC_AFTER: ");
    CHECK(summary && sscanf(summary, "LIVETRACK_FAULT_ALLOC_AFTER: %ld allocations, %ld failed", &allocations,
                            &failed) == 2);
    runs++;
    runs_incomplete += incomplete;
    failures_injected += failed > 0 ? (unsigned long)failed : 0;
    rel_run_free(&run);
    return failed;
}

static void registry_faults(int every_k)
{
    const char *dir = rel_tmpdir("oom");
    char fault[32];
    /* K = 0 fails the very first allocation: it must be noticed */
    CHECK(run_workload(dir, "0") > 0);
    CHECK_EQ_INT(runs_incomplete, 1);
    /* All failing from the Kth on, and only the Kth failing, until K is
     * past the workload's last allocation. */
    unsigned long k = 1, last = 0;
    for (int persistent = 1; persistent >= 0; persistent--) {
        for (k = persistent ? 1 : 0;; k = every_k ? k + 1 : k + 1 + k / 3) {
            snprintf(fault, sizeof fault, persistent ? "%lu" : "%lu:1", k);
            if (run_workload(dir, fault) <= 0)
                break;
        }
        last = k > last ? k : last;
    }
    printf("registry: %lu runs with allocations failing (%lu failures injected), %lu of them incomplete; the "
           "workload makes %lu allocations\n",
           runs, failures_injected, runs_incomplete, last);
    if (!check_failed)
        rel_rmdir(dir);
}

/* Fail every allocation from the exit report's first on. The workload's
 * own count comes from a run without the report; it can differ by a few
 * from run to run (addresses, hashing), so the runs try counts around it,
 * and those whose snapshot failed (and nothing before it) are checked. */
static void snapshot_fault_at_exit(void)
{
    char *argv[] = {(char *)rel_self(), "workload", NULL};
    const char *count_env[] = {"LIVETRACK_FAULT_ALLOC_AFTER=100000000", "LIVETRACK_EXIT_REPORT=off", NULL};
    rel_run counted = rel_spawn(argv, count_env, 60);
    long allocations = -1, failed = -1;
    const char *summary = strstr(counted.err, "LIVETRACK_FAULT_ALLOC_AFTER: ");
    CHECK(rel_exited(&counted, 0) && summary &&
          sscanf(summary, "LIVETRACK_FAULT_ALLOC_AFTER: %ld allocations, %ld failed", &allocations, &failed) == 2 &&
          failed == 0);
    rel_run_free(&counted);
    const char *dir = rel_tmpdir("oom-snapshot");
    char json_env[512], json_path[512];
    snprintf(json_env, sizeof json_env, "LIVETRACK_JSON=%s/report.json", dir);
    snprintf(json_path, sizeof json_path, "%s/report.json", dir);
    int snapshot_failed = 0;
    for (long k = allocations - 8; k <= allocations + 8; k++) {
        char fault_env[64];
        snprintf(fault_env, sizeof fault_env, "LIVETRACK_FAULT_ALLOC_AFTER=%ld", k);
        const char *env[] = {fault_env, "LIVETRACK_EXIT_REPORT=auto", "LIVETRACK_EXIT_CODE=23", json_env, NULL};
        rel_run run = rel_spawn(argv, env, 60);
        /* the workload had its memory; the exit report's snapshot had none */
        if (strstr(run.out, "out of memory 0,") && strstr(run.out, "incomplete 0,") &&
            rel_count(run.err, "out of memory allocating a snapshot") == 1) {
            snapshot_failed++;
            int failed_before = check_failed;
            CHECK(rel_exited(&run, 23));
            CHECK_EQ_INT(rel_count(run.err, "livetrack: leaked objects not known at exit of pid"), 1);
            CHECK_EQ_INT(rel_count(run.err, "livetrack: tracking was incomplete"), 1);
            CHECK_EQ_INT(rel_count(run.err, "livetrack: total: not known, 1500 objects live in all"), 1);
            /* The JSON is written after the text: only when its own
             * allocations had memory. */
            char *json = rel_read_file(json_path);
            if (json && strstr(json, "\"summary\""))
                CHECK(strstr(json, "\"live_objects\": 1500,") && strstr(json, "\"leaks_known\": false}"));
            free(json);
            unlink(json_path);
            if (check_failed != failed_before)
                rel_dump("the exit report's snapshot out of memory", &run);
        }
        rel_run_free(&run);
    }
    CHECK(snapshot_failed > 0);
    if (!check_failed)
        rel_rmdir(dir);
}

/* Only the Kth allocation failing, for every K until the declaration
 * and everything before it have their memory: a failure in the set's
 * record loses the set ("type names", LIVETRACK_NO_MEMORY), one in a
 * name's copy loses that name, which then reads "object" ("a type
 * name"). Either way the message says which; nothing else is lost. */
static void type_name_faults(void)
{
    char *argv[] = {(char *)rel_self(), "types", NULL};
    unsigned set_lost = 0, name_lost = 0;
    for (int k = 0; k < 64; k++) {
        char fault_env[64];
        snprintf(fault_env, sizeof fault_env, "LIVETRACK_FAULT_ALLOC_AFTER=%d:1", k);
        const char *env[] = {fault_env, "LIVETRACK_EXIT_REPORT=off", NULL};
        rel_run run = rel_spawn(argv, env, 60);
        int failed_before = check_failed;
        CHECK(rel_exited(&run, 0));
        int set_message = strstr(run.err, "out of memory allocating type names:") != NULL;
        int name_message = strstr(run.err, "out of memory allocating a type name:") != NULL;
        size_t objects = rel_count(run.out, " object");
        int declared = strstr(run.out, "status 0 names") != NULL;
        if (set_message) { /* the set is lost: the types have no names */
            set_lost++;
            CHECK(!declared && objects == 3);
        } else if (name_message) { /* one name is lost, the others kept */
            name_lost++;
            CHECK(declared && objects == 1);
        } else { /* this K failed something else: the names are whole */
            CHECK(declared && strstr(run.out, "names oom_ctx oom_mem oom_event\n"));
        }
        int untouched = strstr(run.err, "LIVETRACK_FAULT_ALLOC_AFTER: ") && strstr(run.err, " 0 failed");
        if (check_failed != failed_before) {
            snprintf(fault_env, sizeof fault_env, "types with LIVETRACK_FAULT_ALLOC_AFTER=%d:1", k);
            rel_dump(fault_env, &run);
        }
        rel_run_free(&run);
        if (untouched)
            break;
    }
    /* the set's record, its name array and the API's name; three names */
    CHECK_EQ_INT(set_lost, 3);
    CHECK_EQ_INT(name_lost, 3);
    printf("types: the set lost in %u runs, one name in %u\n", set_lost, name_lost);
}

/* ---- OpenCL ----------------------------------------------------------------------------- */

static void opencl_faults(const char *layer, const char *program)
{
    char layer_env[4200];
    snprintf(layer_env, sizeof layer_env, "OPENCL_LAYERS=%s", layer);
    char *argv[] = {(char *)program, NULL};
    const char *plain_env[] = {layer_env, "LIVETRACK_FAULT_ALLOC_AFTER=", "LIVETRACK_EXIT_REPORT=off", NULL};
    rel_run reference = rel_spawn(argv, plain_env, 120);
    CHECK(rel_exited(&reference, 0));
    static const char *const faults[] = {"0", "1", "2", "5", "20", "100", "3:1", "40:2"};
    unsigned incomplete = 0, unchanged = 0;
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        char fault_env[64];
        snprintf(fault_env, sizeof fault_env, "LIVETRACK_FAULT_ALLOC_AFTER=%s", faults[i]);
        const char *env[] = {layer_env, fault_env, "LIVETRACK_EXIT_REPORT=auto", NULL};
        rel_run run = rel_spawn(argv, env, 120);
        int failed_before = check_failed;
        CHECK(rel_exited(&run, reference.status >> 8));
        CHECK(!strcmp(run.out, reference.out)); /* the program's results are unchanged */
        CHECK(!strstr(run.err, "refused"));     /* nothing refused because it was not tracked */
        CHECK(rel_count(run.err, "tracking is incomplete") <= 1);
        incomplete += rel_count(run.err, "tracking is incomplete");
        unchanged += check_failed == failed_before;
        if (check_failed != failed_before) {
            char what[96];
            snprintf(what, sizeof what, "OpenCL program with LIVETRACK_FAULT_ALLOC_AFTER=%s", faults[i]);
            rel_dump(what, &run);
        }
        rel_run_free(&run);
    }
    CHECK(incomplete > 0);
    printf("opencl: %zu runs with allocations failing, %u of them incomplete, %u with the program's output and "
           "status unchanged and no call refused\n",
           sizeof faults / sizeof faults[0], incomplete, unchanged);
    rel_run_free(&reference);
}

/* Only the Kth allocation failing, for each K until none fails: a count
 * whose snapshot failed says 3 (all live), as one that had it does. */
static void count_faults(void)
{
    char *argv[] = {(char *)rel_self(), "count", NULL};
    int snapshot_failed = 0;
    for (long k = 0; k < 200; k++) {
        char fault_env[64];
        snprintf(fault_env, sizeof fault_env, "LIVETRACK_FAULT_ALLOC_AFTER=%ld:1", k);
        const char *env[] = {fault_env, "LIVETRACK_EXIT_REPORT=off", NULL};
        rel_run run = rel_spawn(argv, env, 60);
        int created = -1, incomplete = -1;
        size_t counted = 0, written = 0;
        int parsed = sscanf(run.out, "created %d counted %zu written %zu incomplete %d", &created, &counted,
                            &written, &incomplete) == 4;
        int failed_before = check_failed;
        CHECK(rel_exited(&run, 0) && parsed);
        int done = strstr(run.err, " allocations, 0 failed") != NULL; /* K is past every allocation */
        if (parsed && created == 3 && rel_count(run.err, "out of memory allocating a snapshot") == 1) {
            snapshot_failed++;
            CHECK_EQ_INT(counted, 3);
            CHECK_EQ_INT(written, 3);
        }
        if (check_failed != failed_before) {
            char what[96];
            snprintf(what, sizeof what, "counts with LIVETRACK_FAULT_ALLOC_AFTER=%ld:1", k);
            rel_dump(what, &run);
        }
        rel_run_free(&run);
        if (done || check_failed != failed_before)
            break;
    }
    CHECK(snapshot_failed > 0);
}

/* Only the Kth allocation failing, for each K until none fails. When it
 * was the peak's copy (at the release) or its grouping for the report,
 * the JSON's peak is null and the text says no set was recorded; in
 * every other run the peak is the 4 objects' 256 bytes, or 3 of them when
 * a create had no memory. */
static void peak_faults(void)
{
    const char *dir = rel_tmpdir("oom-peak");
    char json_env[512], json_path[512];
    snprintf(json_env, sizeof json_env, "LIVETRACK_JSON=%s/peak.json", dir);
    snprintf(json_path, sizeof json_path, "%s/peak.json", dir);
    char *argv[] = {(char *)rel_self(), "peak", NULL};
    int copy_failed = 0, with_peak = 0;
    for (long k = 0; k < 200; k++) {
        char fault_env[64];
        snprintf(fault_env, sizeof fault_env, "LIVETRACK_FAULT_ALLOC_AFTER=%ld:1", k);
        const char *env[] = {fault_env, json_env, "LIVETRACK_EXIT_REPORT=always", "LIVETRACK_PEAK_REPORT=1", NULL};
        rel_run run = rel_spawn(argv, env, 60);
        int failed_before = check_failed;
        CHECK(rel_exited(&run, 0));
        int peak_lost = strstr(run.err, "out of memory allocating the peak's live set") ||
                        strstr(run.err, "out of memory allocating the peak report");
        char *json = rel_read_file(json_path);
        uint64_t bytes = 0;
        int null = peak_is_null(json, &bytes);
        if (null >= 0)
            CHECK_EQ_INT(null, peak_lost);
        if (null == 0)
            CHECK(bytes == 256 || bytes == 192);
        CHECK(strstr(run.err, "at peak 0 bytes live in 0 objects") == NULL);
        if (peak_lost)
            CHECK_EQ_INT(rel_count(run.err, "livetrack: no peak live set was recorded"), 1);
        copy_failed += peak_lost;
        with_peak += null == 0;
        free(json);
        unlink(json_path);
        int done = strstr(run.err, " allocations, 0 failed") != NULL; /* K is past every allocation */
        if (check_failed != failed_before) {
            char what[96];
            snprintf(what, sizeof what, "peak with LIVETRACK_FAULT_ALLOC_AFTER=%ld:1", k);
            rel_dump(what, &run);
        }
        rel_run_free(&run);
        if (done || check_failed != failed_before)
            break;
    }
    CHECK(copy_failed > 0);
    CHECK(with_peak > 0);
    printf("peak: the set lost in %d runs, reported in %d\n", copy_failed, with_peak);
    if (!check_failed)
        rel_rmdir(dir);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "workload"))
        return workload();
    if (argc > 1 && !strcmp(argv[1], "count"))
        return count_leaks();
    if (argc > 1 && !strcmp(argv[1], "types"))
        return declare_types();
    if (argc > 1 && !strcmp(argv[1], "peak"))
        return peak_then_release();
    int every_k = argc > 1 && !strcmp(argv[1], "--all");
    registry_faults(every_k);
    snapshot_fault_at_exit();
    type_name_faults();
    count_faults();
    peak_faults();
    if (argc > 2 + every_k)
        opencl_faults(argv[1 + every_k], argv[2 + every_k]);
    return check_summary(every_k ? "reliability.oom_every_allocation" : "reliability.oom");
}
