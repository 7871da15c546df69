/*
 * The JSON report through the native API, validated against
 * docs/livetrack-report.schema.json (python3-jsonschema) and checked field
 * by field: summary, totals, sites with their exact frames, examples and
 * kept-alive objects (with the bytes a leak keeps alive), every live
 * object, the peak, misuse records with their stacks, 64-bit handles as
 * hex strings, and string escaping (quotes, backslashes, control
 * characters, invalid UTF-8 -> U+FFFD). Also the document of an empty
 * registry and, in a child, with call sites off, and, in another, a
 * misuse count and list that agree although a call is misused while the
 * exit report is written.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

enum { T_CTX, T_BUFFER, T_EVENT, T_ODD, T_COUNT };
/* A type name that needs every kind of escaping: a quote, a backslash, a
 * newline, a control character, DEL, invalid bytes (0xff), a valid
 * two-byte character (e-acute), an encoded surrogate and a code point past
 * U+10FFFF (both invalid). */
static const char *const type_names[T_COUNT] = {"rj_ctx", "rj_buffer", "rj_event",
                                                ("q\"b\\n\n\x01\x7f\xff\xc3\xa9\xed\xa0\x80\xf4\x90\x80\x80" "end")};
/* The same name as Python reads it back. */
#define ODD_NAME_PY "'q\"b\\\\n\\n\\x01\\x7f\\ufffd\\u00e9' + '\\ufffd' * 7 + 'end'"

static int line_buffer, line_event, line_misuse;

__attribute__((noinline)) static void make_buffer(uint64_t handle, uint64_t parent)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = T_BUFFER, .handle = handle,
                                   .bytes = 4096, .parent = parent};
    line_buffer = __LINE__ + 1;
    livetrack_create(&object);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void make_event(uint64_t handle, uint64_t parent)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = T_EVENT, .handle = handle,
                                   .parent = parent};
    line_event = __LINE__ + 1;
    livetrack_create(&object);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void misuse(uint64_t handle)
{
    line_misuse = __LINE__ + 1;
    livetrack_report_misuse_on(LIVETRACK_DOMAIN_USER, handle, "rj_release(0x%llx): refused", (unsigned long long)handle);
    __asm__ volatile("" ::: "memory");
}

static livetrack_status create(uint64_t handle, unsigned type, uint64_t bytes, uint64_t parent)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = bytes,
                                   .parent = parent};
    return livetrack_create(&object);
}

static livetrack_status release(uint64_t handle)
{
    return livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, NULL, NULL);
}

static char dir[] = "/tmp/livetrack-report-json-XXXXXX";

static void write_json(const char *path, unsigned flags, uint64_t mark)
{
    FILE *file = fopen(path, "w");
    CHECK(file != NULL);
    if (!file)
        return;
    livetrack_write_report(file, LIVETRACK_FORMAT_JSON, flags, mark);
    CHECK_EQ_INT(fclose(file), 0);
}

/* A check string built with printf; free_checks() frees them all. */
static char *made[32];
static size_t made_count;
static const char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *format, ...)
{
    char *text = NULL;
    va_list args;
    va_start(args, format);
    if (made_count == sizeof made / sizeof made[0] || vasprintf(&text, format, args) < 0)
        exit(2);
    va_end(args);
    return made[made_count++] = text;
}

static void free_checks(void)
{
    while (made_count)
        free(made[--made_count]);
}

enum { BUFFERS = 5, EVENTS = 7 };

static void test_full(void)
{
    const uint64_t ctx = 0xc000, big = 0xffffffffffffff00ull;
    CHECK_EQ_INT(create(ctx, T_CTX, 0, 0), LIVETRACK_OK);
    for (int i = 0; i < BUFFERS; i++)
        make_buffer(0xb000 + (uint64_t)i * 16, ctx);
    for (int i = 0; i < EVENTS; i++)
        make_event(0xe000 + (uint64_t)i * 16, ctx);
    CHECK_EQ_INT(create(big, T_ODD, 1, 0), LIVETRACK_OK);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    misuse(0xdead); /* never created */
    misuse(0xb010); /* live: its creation stack is known */

    char path[256];
    snprintf(path, sizeof path, "%s/full.json", dir);
    write_json(path, 0, 0);
    const char *checks[] = {
        "r['schema'] == 'livetrack-report' and r['version'] == 1",
        "r['tool'] == {'name': 'livetrack', 'version': '0.3.3'}",
        fmt("r['process']['pid'] == %ld", (long)getpid()),
        "r['process']['executable'].endswith('/test_report_json')",
        "r['at_exit'] is False and r['since_mark'] == 0",
        "r['settings']['stack_depth'] == 16 and r['settings']['release_stacks'] is False",
        "r['settings']['suppressions'] is None",
        /* summary */
        "r['summary']['leaked_objects'] == 13 and r['summary']['leaked_bytes'] == 20481",
        "r['summary']['kept_alive_objects'] == 1 and r['summary']['live_objects'] == 14",
        "r['summary']['suppressed_objects'] == 0 and r['summary']['suppressed_bytes'] == 0",
        "r['summary']['misuse_count'] == 2 and r['summary']['incomplete'] is False",
        "r['summary']['created_objects'] >= 14 and r['summary']['unique_stacks'] >= 3",
        "r['summary']['call_sites'] == 3",
        /* the released context is held, but has no bytes: the fields are there, 0 */
        "r['summary']['kept_by_leaks_objects'] == 1 and r['summary']['kept_by_leaks_bytes'] == 0",
        /* totals, largest first */
        "r['by_api'] == [{'api': 'user', 'objects': 13, 'bytes': 20481}]",
        "[t['type'] for t in r['by_type']] == ['rj_buffer', " ODD_NAME_PY ", 'rj_event']",
        "r['by_type'][0] == {'api': 'user', 'type': 'rj_buffer', 'objects': 5, 'bytes': 20480}",
        /* sites: largest first, exact frames */
        "len(r['sites']) == 3 and [s['id'] for s in r['sites']] == [1, 2, 3]",
        "[s['objects'] for s in r['sites']] == [5, 1, 7]",
        "r['sites'][0]['types'] == [{'api': 'user', 'type': 'rj_buffer', 'objects': 5, 'bytes': 20480}]",
        fmt("r['sites'][0]['frames'][0]['function'] == 'make_buffer' and "
            "site_lines(r['sites'][0])[0] == ('test_report_json.c', %d)",
            line_buffer),
        fmt("r['sites'][2]['frames'][0]['function'] == 'make_event' and "
            "site_lines(r['sites'][2])[0] == ('test_report_json.c', %d)",
            line_event),
        "r['sites'][0]['frames'][0]['module'].endswith('/test_report_json')",
        "all(f['address'].startswith('0x') and f['offset'].startswith('0x') for s in r['sites'] for f in s['frames'])",
        "all(s['suppressed'] is False and s['suppressed_by'] is None for s in r['sites'])",
        "[e['handle'] for e in r['sites'][0]['examples']] == ['0xb000', '0xb010', '0xb020']",
        "r['sites'][0]['examples'][0] == {'handle': '0xb000', 'type': 'rj_buffer', 'refs': 1, 'bytes': 4096}",
        "r['sites'][0]['keeps_alive'] == [{'api': 'user', 'type': 'rj_ctx', 'handle': '0xc000', "
        "'seq': r['objects'][0]['seq']}]",
        "r['sites'][0]['keeps_alive_count'] == 1 and r['sites'][1]['keeps_alive'] == []",
        "[s['keeps_alive_bytes'] for s in r['sites']] == [0, 0, 0]",
        "r['sites'][1]['examples'][0]['handle'] == '0xffffffffffffff00'",
        /* objects: every live one, oldest first */
        "len(r['objects']) == 14 and [o['seq'] for o in r['objects']] == sorted(o['seq'] for o in r['objects'])",
        "r['objects'][0]['handle'] == '0xc000' and r['objects'][0]['leaked'] is False",
        "r['objects'][0]['site'] is None and r['objects'][0]['refs'] == 0 and r['objects'][0]['holders'] == 12",
        "r['objects'][1] == dict(r['objects'][1], api='user', type='rj_buffer', handle='0xb000', refs=1, holders=0, "
        "bytes=4096, site=1, leaked=True, suppressed=False, parents=['0xc000'], "
        "parent_seqs=[r['objects'][0]['seq']])",
        "all(o['parent_seqs'] == [] for o in r['objects'] if o['parents'] == [])",
        "all(o['site'] == 3 for o in r['objects'] if o['type'] == 'rj_event')",
        "r['objects'][-1]['type'] == " ODD_NAME_PY " and r['objects'][-1]['handle'] == '0xffffffffffffff00'",
        "all(o['time_ms'] >= 0 for o in r['objects'])",
        /* the peak */
        "r['peak'] is not None and r['peak']['objects'] >= 14 and r['peak']['bytes'] >= 20481",
        "r['peak']['max_objects'] >= r['peak']['objects'] and len(r['peak']['sites']) >= 4",
        /* misuse, with the stack of the bad call */
        "len(r['misuse']) == 2 and r['misuse'][0]['handle'] == '0xdead' and r['misuse'][0]['api'] == 'user'",
        "r['misuse'][0]['message'].startswith('rj_release(0xdead): refused') and r['misuse'][0]['type'] is None",
        "r['misuse'][0]['seq'] <= r['misuse'][1]['seq'] and r['misuse'][1]['type'] == 'rj_buffer'",
        fmt("site_lines({'frames': r['misuse'][1]['create_frames']})[0] == ('test_report_json.c', %d)", line_buffer),
        fmt("r['misuse'][0]['call_frames'][0]['function'] == 'misuse' and "
            "r['misuse'][0]['call_frames'][0]['line'] == %d",
            line_misuse),
        "r['misuse'][0]['create_frames'] == [] and r['misuse'][0]['release_frames'] == []",
        "r['misuse'][1]['release_frames'] == []",
        NULL};
    CHECK(rt_check_json(path, checks));

    /* A report since a mark: only what came after it. */
    uint64_t mark = livetrack_mark();
    make_event(0xe800, 0);
    snprintf(path, sizeof path, "%s/since.json", dir);
    write_json(path, 0, mark);
    const char *since_checks[] = {fmt("r['since_mark'] == %" PRIu64, mark),
                                  "r['summary']['leaked_objects'] == 1 and len(r['objects']) == 1",
                                  "r['objects'][0]['handle'] == '0xe800' and r['objects'][0]['site'] == 1",
                                  "len(r['sites']) == 1 and r['sites'][0]['objects'] == 1", NULL};
    CHECK(rt_check_json(path, since_checks));
    CHECK_EQ_INT(release(0xe800), LIVETRACK_OK);

    for (int i = 0; i < BUFFERS; i++)
        CHECK_EQ_INT(release(0xb000 + (uint64_t)i * 16), LIVETRACK_OK);
    for (int i = 0; i < EVENTS; i++)
        CHECK_EQ_INT(release(0xe000 + (uint64_t)i * 16), LIVETRACK_OK);
    CHECK_EQ_INT(release(big), LIVETRACK_OK);
}

/* A leak that keeps released memory alive, as a leaked CUDA mapping
 * holds the physical memory the program released right after mapping
 * it: those bytes are given beside the sites that hold them, and once in
 * the summary, never in the leaked bytes. */
static void test_kept_bytes(void)
{
    enum { PINNED = 1 << 20 };
    const uint64_t memory = 0x5000;
    uint64_t mark = livetrack_mark();
    CHECK_EQ_INT(create(memory, T_BUFFER, PINNED, 0), LIVETRACK_OK);
    make_buffer(0xb800, memory); /* 4096 bytes: the larger site, first */
    make_event(0xe900, memory);
    CHECK_EQ_INT(release(memory), LIVETRACK_OK);
    char path[256];
    snprintf(path, sizeof path, "%s/kept_bytes.json", dir);
    write_json(path, 0, mark);
    const char *checks[] = {
        "r['summary']['leaked_objects'] == 2 and r['summary']['leaked_bytes'] == 4096",
        "r['summary']['kept_alive_objects'] == 1",
        "r['summary']['kept_by_leaks_objects'] == 1 and r['summary']['kept_by_leaks_bytes'] == 1048576",
        "[(s['types'][0]['type'], s['bytes'], s['keeps_alive_count'], s['keeps_alive_bytes']) for s in r['sites']] "
        "== [('rj_buffer', 4096, 1, 1048576), ('rj_event', 0, 1, 1048576)]",
        "all(s['keeps_alive'] == [{'api': 'user', 'type': 'rj_buffer', 'handle': '0x5000', "
        "'seq': r['objects'][0]['seq']}] for s in r['sites'])",
        NULL};
    CHECK(rt_check_json(path, checks));
    unlink(path);
    CHECK_EQ_INT(release(0xb800), LIVETRACK_OK);
    CHECK_EQ_INT(release(0xe900), LIVETRACK_OK); /* the memory goes with its last child */
}

/* A context released while its buffer lives, whose handle the driver then
 * gives to a new context: the old one is still an object of the report,
 * kept alive by the buffer, and each child's parent_seqs name its own
 * context, not the other one at the same handle. */
static void test_replaced_parent(void)
{
    const uint64_t context = 0xc600;
    uint64_t mark = livetrack_mark();
    CHECK_EQ_INT(create(context, T_CTX, 0, 0), LIVETRACK_OK);
    make_buffer(0xb600, context);
    CHECK_EQ_INT(release(context), LIVETRACK_OK);
    CHECK_EQ_INT(create(context, T_CTX, 0, 0), LIVETRACK_OK); /* the address handed out again */
    make_event(0xe600, context);
    char path[256];
    snprintf(path, sizeof path, "%s/replaced_parent.json", dir);
    write_json(path, 0, mark);
    /* objects oldest first: the old context, the buffer, the new context, the event */
    const char *checks[] = {
        "r['summary']['leaked_objects'] == 3 and r['summary']['live_objects'] == 4",
        "r['summary']['kept_alive_objects'] == 1 and r['summary']['kept_by_leaks_objects'] == 1",
        "[(o['type'], o['handle'], o['refs'], o['holders']) for o in r['objects']] == "
        "[('rj_ctx', '0xc600', 0, 1), ('rj_buffer', '0xb600', 1, 0), ('rj_ctx', '0xc600', 1, 1), "
        "('rj_event', '0xe600', 1, 0)]",
        "r['objects'][0]['site'] is None and r['objects'][0]['leaked'] is False",
        "r['objects'][1]['parents'] == ['0xc600'] and r['objects'][1]['parent_seqs'] == [r['objects'][0]['seq']]",
        "r['objects'][3]['parents'] == ['0xc600'] and r['objects'][3]['parent_seqs'] == [r['objects'][2]['seq']]",
        "r['objects'][0]['seq'] != r['objects'][2]['seq']",
        "[s['keeps_alive'] for s in r['sites'] if s['types'][0]['type'] == 'rj_buffer'] == "
        "[[{'api': 'user', 'type': 'rj_ctx', 'handle': '0xc600', 'seq': r['objects'][0]['seq']}]]",
        "all(s['keeps_alive'] == [] for s in r['sites'] if s['types'][0]['type'] != 'rj_buffer')",
        NULL};
    CHECK(rt_check_json(path, checks));
    unlink(path);
    CHECK_EQ_INT(release(0xe600), LIVETRACK_OK);
    CHECK_EQ_INT(release(context), LIVETRACK_OK);
    CHECK_EQ_INT(release(0xb600), LIVETRACK_OK); /* the old context goes with it */
}

/* Nothing live: still one whole, valid document. */
static void test_empty(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/empty.json", dir);
    write_json(path, 0, 0);
    const char *checks[] = {"r['summary']['leaked_objects'] == 0 and r['summary']['live_objects'] == 0",
                            "r['sites'] == [] and r['objects'] == [] and r['by_type'] == [] and r['by_api'] == []",
                            NULL};
    CHECK(rt_check_json(path, checks));
}

/* by_api is largest first, as by_type: bytes, then objects. OpenCL
 * comes before user in the API numbering and leaks more objects here,
 * but fewer bytes. The text report's table has the same order. */
static void test_api_order(void)
{
    static const char *const cl_names[] = {"rj_cl_mem"};
    livetrack_declare_types(LIVETRACK_DOMAIN_OPENCL, "OpenCL", cl_names, 1);
    uint64_t mark = livetrack_mark();
    for (uint64_t i = 0; i < 3; i++) {
        livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_OPENCL, .type = 0, .handle = 0xa000 + i * 16,
                                       .bytes = 8};
        CHECK_EQ_INT(livetrack_create(&object), LIVETRACK_OK);
    }
    CHECK_EQ_INT(create(0xa100, T_BUFFER, 4096, 0), LIVETRACK_OK);
    char path[256];
    snprintf(path, sizeof path, "%s/api_order.json", dir);
    write_json(path, 0, mark);
    const char *checks[] = {"[(a['api'], a['objects'], a['bytes']) for a in r['by_api']] == "
                            "[('user', 1, 4096), ('OpenCL', 3, 24)]",
                            NULL};
    CHECK(rt_check_json(path, checks));
    unlink(path);
    char *text = rt_report(LIVETRACK_FORMAT_TEXT, 0, mark, NULL);
    const char *table = text ? strstr(text, "livetrack: leaks by API:\n") : NULL;
    const char *user = table ? strstr(table, "livetrack:   user ") : NULL;
    const char *opencl = table ? strstr(table, "livetrack:   OpenCL ") : NULL;
    CHECK(user && opencl && user < opencl);
    free(text);
    for (uint64_t i = 0; i < 3; i++)
        CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_OPENCL, 0, 0xa000 + i * 16, NULL, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(release(0xa100), LIVETRACK_OK);
}

/* Child: with LIVETRACK_STACK_DEPTH=0, a report to argv[2]. */
static int child_depth_zero(const char *path)
{
    for (int i = 0; i < 3; i++)
        make_buffer(0xb000 + (uint64_t)i * 16, 0);
    make_event(0xe000, 0);
    write_json(path, 0, 0);
    return check_failed;
}

static void test_depth_zero(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/depth0.json", dir);
    char *argv[] = {(char *)rt_self(), "depth-zero", path, NULL};
    const char *const set[] = {"LIVETRACK_STACK_DEPTH=0", "LIVETRACK_EXIT_REPORT=off", NULL};
    rt_child child;
    CHECK_EQ_INT(rt_run(argv, set, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);
    rt_child_free(&child);
    const char *checks[] = {"r['settings']['stack_depth'] == 0",
                            "[(s['types'][0]['type'], s['objects']) for s in r['sites']] == "
                            "[('rj_buffer', 3), ('rj_event', 1)]",
                            "all(s['frames'] == [] for s in r['sites'])",
                            "all(s['frames'] == [] for s in r['peak']['sites'])", NULL};
    CHECK(rt_check_json(path, checks));
}

/* Other threads writing to the same stream while the report is written:
 * one waits in flockfile (when the report lets go, the wake-up lets it in
 * even on the same CPU), one spins on ftrylockfile (it gets in at once
 * from another CPU). */
static FILE *shared_stream;
static atomic_int chatter_started, chatter_stop;

static void *chatter(void *arg)
{
    int spin = arg != NULL;
    while (!atomic_load(&chatter_stop)) {
        if (!spin) {
            fputs("other thread's line\n", shared_stream);
        } else if (ftrylockfile(shared_stream) == 0) {
            fputs_unlocked("other thread's line\n", shared_stream);
            funlockfile(shared_stream);
        }
        atomic_fetch_or(&chatter_started, spin ? 2 : 1);
    }
    return NULL;
}

/* Child: many misuse records (their diagnostics silenced), then the
 * report to argv[2] while another thread writes to the same stream. */
static int child_stream_held(const char *path)
{
    for (uint64_t i = 0; i < 1000; i++)
        livetrack_report_misuse_on(LIVETRACK_DOMAIN_USER, 0x7700 + i * 16, "rj_misuse(0x%" PRIx64 ")",
                                   0x7700 + i * 16);
    shared_stream = fopen(path, "w");
    CHECK(shared_stream != NULL);
    if (!shared_stream)
        return 1;
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&threads[i], NULL, chatter, i ? shared_stream : NULL) == 0);
    while (atomic_load(&chatter_started) != 3)
        sched_yield();
    livetrack_write_report(shared_stream, LIVETRACK_FORMAT_JSON, 0, 0);
    atomic_store(&chatter_stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    CHECK_EQ_INT(fclose(shared_stream), 0);
    return check_failed;
}

/* The document holds the stream from its first byte to its last: another
 * thread's lines come before or after it, never inside. (Symbolizing the
 * misuse stacks once let go of the stream in between.) The threads get in
 * at such a gap in most runs, not all: three runs must all be clean. */
static void test_stream_held(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/shared.json", dir);
    int clean = 1;
    for (int run = 0; run < 3 && clean; run++) {
        char *argv[] = {(char *)rt_self(), "stream-held", path, NULL};
        const char *const set[] = {"LIVETRACK_MAX_DIAGNOSTICS=0", "LIVETRACK_EXIT_REPORT=off", NULL};
        rt_child child;
        CHECK_EQ_INT(rt_run(argv, set, NULL, &child), 0);
        CHECK_EQ_INT(child.status, 0);
        rt_child_free(&child);
        char *text = rt_read_file(path);
        CHECK(text != NULL);
        const char *start = text ? strstr(text, "{\n  \"schema\"") : NULL;
        const char *end = start ? strstr(start, "\n}\n") : NULL;
        CHECK(start && end);
        if (start && end) {
            const char *inside = strstr(start, "other thread's line");
            clean = !inside || inside > end;
            CHECK(clean);
            const char *last = strstr(start, "rj_misuse(0xb570)"); /* the 1000th */
            CHECK(last && last < end);
        }
        free(text);
        unlink(path);
    }
}

/* Each depth of the recursion is a call site of its own, so a few
 * leaks make a text report of several KiB. */
__attribute__((noinline)) static void leak_at_depth(unsigned depth, uint64_t handle)
{
    if (depth)
        leak_at_depth(depth - 1, handle);
    else
        CHECK_EQ_INT(create(handle, T_BUFFER, 64, 0), LIVETRACK_OK);
    __asm__ volatile("" ::: "memory"); /* not a tail call: each depth keeps its frame */
}

static int text_report_pipe = -1;

/* The exit report's text arrives here only after its model was built and
 * before its JSON is written; the writer waits on the small pipe for the
 * thread to read the rest, so the misuse below falls exactly between the
 * two. The pipe is also open for writing here: no end of file, the thread
 * reads until the process ends. */
static void *misuse_while_text_written(void *unused)
{
    (void)unused;
    char buffer[512];
    if (read(text_report_pipe, buffer, sizeof buffer) > 0)
        misuse(0xbad0);
    while (read(text_report_pipe, buffer, sizeof buffer) > 0)
        continue;
    return NULL;
}

/* Child: leaks, one misuse, and a thread that misuses a call while the
 * exit report's text goes to the FIFO argv[2] (LIVETRACK_OUTPUT). */
static int child_misuse_mid_report(const char *fifo)
{
    /* Read and write, as Linux allows for a FIFO: the open waits for no
     * writer, and the exit report's open for writing waits for no reader. */
    text_report_pipe = open(fifo, O_RDWR);
    CHECK(text_report_pipe >= 0);
    /* One page: the text report, several pages, cannot all be written
     * before the thread has read most of it. */
    CHECK_EQ_INT(fcntl(text_report_pipe, F_SETPIPE_SZ, 4096), 4096);
    for (unsigned depth = 0; depth < 12; depth++)
        leak_at_depth(depth, 0xd000 + depth * 16);
    misuse(0xdead);
    pthread_t thread;
    CHECK_EQ_INT(pthread_create(&thread, NULL, misuse_while_text_written, NULL), 0);
    CHECK_EQ_INT(pthread_detach(thread), 0);
    return check_failed;
}

/* misuse_count counts every misused call up to the report, and the misuse
 * list is never longer: both are taken when the report's model is built.
 * A call misused while the exit report is written (its text first, then
 * its JSON) is in neither. (The list was once copied only when the JSON
 * was written, so it had that call and the count did not.) */
static void test_misuse_mid_report(void)
{
    char fifo[256], path[256], output_setting[300], json_setting[300];
    snprintf(fifo, sizeof fifo, "%s/text.fifo", dir);
    snprintf(path, sizeof path, "%s/mid_report.json", dir);
    snprintf(output_setting, sizeof output_setting, "LIVETRACK_OUTPUT=%s", fifo);
    snprintf(json_setting, sizeof json_setting, "LIVETRACK_JSON=%s", path);
    CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
    char *argv[] = {(char *)rt_self(), "misuse-mid-report", fifo, NULL};
    const char *const set[] = {output_setting, json_setting, "LIVETRACK_MAX_DIAGNOSTICS=0", NULL};
    rt_child child;
    CHECK_EQ_INT(rt_run(argv, set, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);
    rt_child_free(&child);
    unlink(fifo);
    const char *checks[] = {"r['summary']['leaked_objects'] == 12",
                            "r['summary']['misuse_count'] >= len(r['misuse'])",
                            "r['summary']['misuse_count'] == 1 and len(r['misuse']) == 1",
                            "r['misuse'][0]['handle'] == '0xdead'", NULL};
    CHECK(rt_check_json(path, checks));
}

int main(int argc, char **argv)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, T_COUNT);
    if (argc > 2 && !strcmp(argv[1], "depth-zero"))
        return child_depth_zero(argv[2]);
    if (argc > 2 && !strcmp(argv[1], "stream-held"))
        return child_stream_held(argv[2]);
    if (argc > 2 && !strcmp(argv[1], "misuse-mid-report"))
        return child_misuse_mid_report(argv[2]);
    CHECK(mkdtemp(dir) != NULL);
    test_empty();
    test_full();
    test_api_order();
    test_kept_bytes();
    test_replaced_parent();
    test_depth_zero();
    test_stream_held();
    test_misuse_mid_report();
    free_checks();
    if (!check_failed) {
        const char *names[] = {"empty.json", "full.json", "since.json", "depth0.json", "mid_report.json"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            char path[256];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            unlink(path);
        }
        rmdir(dir);
    }
    return check_summary("test_report_json");
}
