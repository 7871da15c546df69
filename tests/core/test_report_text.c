/*
 * The text report through the native API: leaks grouped by call site
 * (the application's frames), largest first, each with its frames, types,
 * example handles and what it keeps alive; the per-type and per-API
 * summaries and the total; the report of nothing; call sites off
 * (LIVETRACK_STACK_DEPTH=0, in a child); and livetrack_leaks_since for a
 * scoped check.
 *
 * The creating calls are in noinline functions whose source lines are
 * recorded, so the report must name exactly those lines.
 */
#include <inttypes.h>
#include <stdint.h>

#include "livetrack/livetrack.h"
#include "report_test_util.h"

enum { T_CTX, T_BUFFER, T_EVENT, T_PROG, T_KERNEL, T_LONG_NAME, T_COUNT };
static const char *const type_names[T_COUNT] = {"rt_ctx",  "rt_buffer", "rt_event",
                                                "rt_prog", "rt_kernel", "rt_a_type_named_at_great_length"};

static int line_buffer, line_event, line_any;

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

/* Each maker calls livetrack_create itself, so frame #0 is its line. */
__attribute__((noinline)) static void make_buffer(uint64_t handle, uint64_t parent)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = T_BUFFER, .handle = handle,
                                   .bytes = 4096, .parent = parent};
    line_buffer = __LINE__ + 1;
    livetrack_create(&object);
    __asm__ volatile("" ::: "memory"); /* a call, not a tail jump */
}

__attribute__((noinline)) static void make_event(uint64_t handle, uint64_t parent)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = T_EVENT, .handle = handle,
                                   .parent = parent};
    line_event = __LINE__ + 1;
    livetrack_create(&object);
    __asm__ volatile("" ::: "memory");
}

/* One line that makes objects of several types. */
__attribute__((noinline)) static void make_any(uint64_t handle, unsigned type, uint64_t bytes)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = bytes};
    line_any = __LINE__ + 1;
    livetrack_create(&object);
    __asm__ volatile("" ::: "memory");
}

static char *report_text(unsigned flags, uint64_t mark, size_t *leaked)
{
    return rt_report(LIVETRACK_FORMAT_TEXT, flags, mark, leaked);
}

static void expect_line(const char *text, const char *prefix, unsigned n, const char *expected)
{
    char line[1024];
    int found = rt_line_starting(text, prefix, n, line, sizeof line);
    CHECK(found);
    if (found && strcmp(line, expected) != 0) {
        CHECK(!"line differs");
        fprintf(stderr, "  got      \"%s\"\n  expected \"%s\"\n", line, expected);
    }
}

/* The first frame line of a block names `function` at this file's `line`. */
static void expect_frame0(const char *block, const char *function, int line)
{
    char frame[1024], where[128], in[128];
    CHECK(block && rt_line_starting(block, "    #0 0x", 0, frame, sizeof frame));
    if (!block)
        return;
    snprintf(where, sizeof where, "/tests/core/test_report_text.c:%d", line);
    snprintf(in, sizeof in, " in %s ", function);
    int ok = strstr(frame, where) && strstr(frame, in);
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  frame #0 \"%s\" does not name %s at %s\n", frame, function, where);
}

enum { BUFFERS = 5, EVENTS = 7 };
static const uint64_t ctx = 0xc000;

static void make_scene(void)
{
    CHECK_EQ_INT(create(ctx, T_CTX, 0, 0), LIVETRACK_OK);
    for (int i = 0; i < BUFFERS; i++)
        make_buffer(0xb000 + (uint64_t)i * 16, ctx);
    for (int i = 0; i < EVENTS; i++)
        make_event(0xe000 + (uint64_t)i * 16, ctx);
    static const unsigned kinds[3] = {T_PROG, T_KERNEL, T_PROG};
    static const uint64_t sizes[3] = {100, 50, 100};
    for (int i = 0; i < 3; i++) /* one call site, two types */
        make_any(0xa000 + (uint64_t)i * 16, kinds[i], sizes[i]);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK); /* kept alive by the buffers and events */
}

static void clear_scene(void)
{
    for (int i = 0; i < BUFFERS; i++)
        CHECK_EQ_INT(release(0xb000 + (uint64_t)i * 16), LIVETRACK_OK);
    for (int i = 0; i < EVENTS; i++)
        CHECK_EQ_INT(release(0xe000 + (uint64_t)i * 16), LIVETRACK_OK);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(release(0xa000 + (uint64_t)i * 16), LIVETRACK_OK);
}

static void test_sites(void)
{
    make_scene();
    size_t leaked = 0;
    char *text = report_text(0, 0, &leaked);
    CHECK_EQ_INT(leaked, BUFFERS + EVENTS + 3);
    char expected[256];
    snprintf(expected, sizeof expected, "livetrack: 15 leaked objects (20.2 KiB) from 3 call sites in pid %ld",
             (long)getpid());
    expect_line(text, "livetrack: ", 0, expected);
    /* Largest first: 20 KiB of buffers, 250 bytes of mixed, 0 bytes of events. */
    expect_line(text, "livetrack: ", 1, "livetrack: 5 leaked rt_buffer (20.0 KiB) created at:");
    expect_line(text, "livetrack: ", 2, "livetrack: 3 leaked objects (250 bytes) created at:");
    expect_line(text, "livetrack: ", 3, "livetrack: 7 leaked rt_event (0 bytes) created at:");

    char *block = rt_block_after(text, "livetrack: 5 leaked rt_buffer");
    expect_frame0(block, "make_buffer", line_buffer);
    /* Frame #1 is the caller: test_sites or make_scene (inlined or not). */
    CHECK(block && strstr(block, "    #1 0x"));
    /* three examples, oldest first, then the rest counted */
    expect_line(block, "  rt_buffer ", 0, "  rt_buffer 0x000000000000b000  refs 1  4096 bytes");
    expect_line(block, "  rt_buffer ", 1, "  rt_buffer 0x000000000000b010  refs 1  4096 bytes");
    expect_line(block, "  rt_buffer ", 2, "  rt_buffer 0x000000000000b020  refs 1  4096 bytes");
    expect_line(block, "  and ", 0, "  and 2 more");
    expect_line(block, "  keeps ", 0, "  keeps alive 1 object the program released: rt_ctx 0x000000000000c000");
    free(block);

    block = rt_block_after(text, "livetrack: 3 leaked objects");
    expect_frame0(block, "make_any", line_any);
    expect_line(block, "  types:", 0, "  types: 2 rt_prog (200 bytes), 1 rt_kernel (50 bytes)");
    expect_line(block, "  rt_", 0, "  rt_prog 0x000000000000a000  refs 1  100 bytes");
    expect_line(block, "  rt_", 1, "  rt_kernel 0x000000000000a010  refs 1  50 bytes");
    expect_line(block, "  rt_", 2, "  rt_prog 0x000000000000a020  refs 1  100 bytes");
    CHECK_EQ_INT(rt_count_lines(block, "  and "), 0);
    CHECK_EQ_INT(rt_count_lines(block, "  keeps "), 0);
    free(block);

    block = rt_block_after(text, "livetrack: 7 leaked rt_event");
    expect_frame0(block, "make_event", line_event);
    expect_line(block, "  rt_event ", 0, "  rt_event 0x000000000000e000  refs 1");
    expect_line(block, "  and ", 0, "  and 4 more");
    free(block);

    /* summaries: by type largest first, by API, kept alive, total */
    expect_line(text, "livetrack: leaks by type", 0, "livetrack: leaks by type:");
    expect_line(text, "livetrack:   user ", 0, "livetrack:   user       rt_buffer                       5 objects  20.0 KiB");
    expect_line(text, "livetrack:   user ", 1, "livetrack:   user       rt_prog                         2 objects  200 bytes");
    expect_line(text, "livetrack:   user ", 2, "livetrack:   user       rt_kernel                       1 object   50 bytes");
    expect_line(text, "livetrack:   user ", 3, "livetrack:   user       rt_event                        7 objects  0 bytes");
    expect_line(text, "livetrack:   user ", 4, "livetrack:   user                                      15 objects  20.2 KiB");
    expect_line(text, "livetrack: 1 object", 0, "livetrack: 1 object the program released is kept alive by leaked objects");
    expect_line(text, "livetrack: total", 0, "livetrack: total: 15 leaked objects, 20730 bytes (20.2 KiB), from 3 call sites");
    /* Only livetrack lines, frames and site details. */
    for (const char *line = text; *line;) {
        int known = !strncmp(line, "livetrack: ", 11) || !strncmp(line, "    #", 5) || !strncmp(line, "  ", 2) ||
                    *line == '\n';
        CHECK(known);
        if (!known)
            fprintf(stderr, "  unexpected line: %.80s\n", line);
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : line + strlen(line);
    }
    free(text);

    /* A type name longer than its column (CUmemGenericAllocationHandle is
     * 28): the column widens, and the counts stay in one column. */
    CHECK_EQ_INT(create(0x9990, T_LONG_NAME, 1, 0), LIVETRACK_OK);
    text = report_text(0, 0, NULL);
    char long_line[256] = "", short_line[256] = "", api_line[256] = "";
    CHECK(rt_line_starting(text, "livetrack:   user       rt_a_type", 0, long_line, sizeof long_line));
    CHECK(rt_line_starting(text, "livetrack:   user       rt_buffer", 0, short_line, sizeof short_line));
    CHECK(rt_line_starting(text, "livetrack:   user      ", 5, api_line, sizeof api_line)); /* after 5 types */
    const char *long_count = strstr(long_line, " object"), *short_count = strstr(short_line, " object");
    const char *api_count = strstr(api_line, " object");
    CHECK(long_count && short_count && api_count && long_count - long_line == short_count - short_line &&
          api_count - api_line == short_count - short_line);
    if (check_failed)
        fprintf(stderr, "---- the type table:\n%s\n%s\n%s\n", long_line, short_line, api_line);
    free(text);
    CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, T_LONG_NAME, 0x9990, NULL, NULL), LIVETRACK_OK);

    /* The same maker called from two lines: two sites (the whole
     * application stack is the site, not only frame #0). */
    make_buffer(0xf000, 0);
    make_buffer(0xf010, 0);
    text = report_text(0, 0, NULL);
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: 5 leaked rt_buffer (20.0 KiB) created at:"), 1);
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: 1 leaked rt_buffer (4.0 KiB) created at:"), 2);
    free(text);
    CHECK_EQ_INT(release(0xf000), LIVETRACK_OK);
    CHECK_EQ_INT(release(0xf010), LIVETRACK_OK);
    clear_scene();
}

/* `first`: no object was ever live in this process yet. */
static void test_nothing(int first)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.live_objects, 0);
    size_t leaked = 1;
    char *text = report_text(0, 0, &leaked);
    CHECK_EQ_INT(leaked, 0);
    CHECK(text && !*text);
    free(text);
    FILE *file = tmpfile();
    CHECK_EQ_INT(livetrack_write_leak_report(file, 0), 0);
    CHECK_EQ_INT(ftell(file), 0);
    fclose(file);
    text = report_text(LIVETRACK_REPORT_ALWAYS, 0, &leaked);
    char expected[256];
    snprintf(expected, sizeof expected, "livetrack: 0 leaked objects (0 bytes) in pid %ld\n"
                                        "livetrack: total: 0 leaked objects, 0 bytes (0 bytes)\n",
             (long)getpid());
    CHECK(text && !strcmp(text, expected));
    if (text && strcmp(text, expected))
        fprintf(stderr, "  the report of nothing:\n%s", text);
    free(text);
    if (!first)
        return;
    /* No peak of nothing at time 0, as the JSON's null peak. */
    text = report_text(LIVETRACK_REPORT_ALWAYS | LIVETRACK_REPORT_PEAK, 0, NULL);
    CHECK(text && strstr(text, "livetrack: no object was ever live: no peak\n") && !strstr(text, "at peak"));
    if (text && !strstr(text, "no peak\n"))
        fprintf(stderr, "  the peak report of nothing:\n%s", text);
    free(text);
}

/* Kernel -> released program -> released context: the site keeps both. */
static void test_kept_chain(void)
{
    CHECK_EQ_INT(create(0x1c0, T_CTX, 0, 0), LIVETRACK_OK);
    CHECK_EQ_INT(create(0x1d0, T_PROG, 0, 0x1c0), LIVETRACK_OK);
    CHECK_EQ_INT(create(0x1e0, T_KERNEL, 0, 0x1d0), LIVETRACK_OK);
    CHECK_EQ_INT(release(0x1d0), LIVETRACK_OK);
    CHECK_EQ_INT(release(0x1c0), LIVETRACK_OK);
    char *text = report_text(0, 0, NULL);
    char *block = rt_block_after(text, "livetrack: 1 leaked rt_kernel");
    CHECK(block != NULL);
    if (block) {
        char line[512];
        CHECK(rt_line_starting(block, "  keeps alive 2 objects the program released: ", 0, line, sizeof line));
        CHECK(strstr(line, "rt_ctx 0x00000000000001c0") && strstr(line, "rt_prog 0x00000000000001d0"));
    }
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: 2 objects the program released are kept alive by leaked objects"), 1);
    free(block);
    free(text);
    CHECK_EQ_INT(release(0x1e0), LIVETRACK_OK);
}

/* A context released while its buffer lives, whose handle the driver
 * then gives to a new context (Level Zero drivers do at once): the buffer
 * still keeps the old one alive, the report still says so, and the new
 * context, a leak of its own like the event made from it, keeps nothing.
 * (The old context once dropped out of the report at the reuse.) */
static void test_kept_after_reuse(void)
{
    const uint64_t context = 0x6000;
    uint64_t mark = livetrack_mark();
    CHECK_EQ_INT(create(context, T_CTX, 0, 0), LIVETRACK_OK);
    make_buffer(0x6100, context);
    CHECK_EQ_INT(release(context), LIVETRACK_OK);        /* kept alive by the buffer */
    CHECK_EQ_INT(create(context, T_CTX, 0, 0), LIVETRACK_OK); /* the address handed out again */
    make_event(0x6200, context);                          /* made from the new context */
    size_t leaked = 0;
    char *text = report_text(0, mark, &leaked);
    CHECK_EQ_INT(leaked, 3);
    char *block = rt_block_after(text, "livetrack: 1 leaked rt_buffer");
    CHECK(block != NULL);
    expect_line(block, "  keeps ", 0, "  keeps alive 1 object the program released: rt_ctx 0x0000000000006000");
    free(block);
    block = rt_block_after(text, "livetrack: 1 leaked rt_event");
    CHECK(block && rt_count_lines(block, "  keeps ") == 0);
    free(block);
    block = rt_block_after(text, "livetrack: 1 leaked rt_ctx");
    CHECK(block && strstr(block, "  rt_ctx 0x0000000000006000  refs 1\n") && rt_count_lines(block, "  keeps ") == 0);
    free(block);
    expect_line(text, "livetrack: 1 object", 0,
                "livetrack: 1 object the program released is kept alive by leaked objects");
    if (check_failed)
        fprintf(stderr, "  the report after the reuse:\n%s", text ? text : "");
    free(text);
    CHECK_EQ_INT(release(0x6200), LIVETRACK_OK);
    CHECK_EQ_INT(release(context), LIVETRACK_OK); /* the new context */
    CHECK_EQ_INT(release(0x6100), LIVETRACK_OK);  /* the old context goes with it */
    livetrack_snapshot *left = livetrack_snapshot_since(LIVETRACK_DOMAIN_USER, NULL, mark);
    CHECK_EQ_INT(livetrack_snapshot_count(left), 0);
    livetrack_snapshot_free(left);
}

/* livetrack_leaks_since: only what was made after the mark and is still
 * held; the report says since which mark. */
static void test_since(void)
{
    make_buffer(0x5000, 0); /* before the mark: not this scope's leak */
    uint64_t mark = livetrack_mark();
    CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);
    make_event(0x5100, 0);
    make_event(0x5110, 0);
    CHECK_EQ_INT(create(0x5200, T_CTX, 0, 0), LIVETRACK_OK);
    CHECK_EQ_INT(create(0x5210, T_KERNEL, 0, 0x5200), LIVETRACK_OK);
    CHECK_EQ_INT(release(0x5200), LIVETRACK_OK); /* kept alive, not a leak */
    CHECK_EQ_INT(release(0x5110), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 2); /* event 0x5100, kernel 0x5210 */
    rt_capture capture;
    CHECK_EQ_INT(livetrack_leaks_since(mark, rt_capture_begin(&capture)), 2);
    char *text = rt_capture_end(&capture);
    char expected[256];
    snprintf(expected, sizeof expected,
             "livetrack: 2 leaked objects (0 bytes) from 2 call sites created since mark %" PRIu64 " in pid %ld", mark,
             (long)getpid());
    expect_line(text, "livetrack: ", 0, expected);
    CHECK(strstr(text, "rt_event 0x0000000000005100  refs 1"));
    CHECK(strstr(text, "rt_kernel 0x0000000000005210  refs 1"));
    CHECK(!strstr(text, "0x0000000000005000"));
    CHECK(!strstr(text, "0x0000000000005110"));
    free(text);
    /* The whole-process report still has the older one. */
    size_t all = 0;
    free(report_text(0, 0, &all));
    CHECK_EQ_INT(all, 3);
    CHECK_EQ_INT(release(0x5100), LIVETRACK_OK);
    CHECK_EQ_INT(release(0x5210), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 0);
    CHECK_EQ_INT(release(0x5000), LIVETRACK_OK);
}

/* Child: the scene with LIVETRACK_STACK_DEPTH=0, report on stdout. */
static int child_depth_zero(void)
{
    make_scene();
    livetrack_write_report(stdout, LIVETRACK_FORMAT_TEXT, 0, 0);
    clear_scene();
    return 0;
}

static void test_depth_zero(void)
{
    char *argv[] = {(char *)rt_self(), "depth-zero", NULL};
    const char *const set[] = {"LIVETRACK_STACK_DEPTH=0", "LIVETRACK_EXIT_REPORT=off", NULL};
    rt_child child;
    CHECK_EQ_INT(rt_run(argv, set, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);
    const char *text = child.out;
    CHECK_EQ_INT(rt_count_lines(text, "livetrack: call sites are off (LIVETRACK_STACK_DEPTH=0): leaks are grouped by type"), 1);
    CHECK_EQ_INT(rt_count_lines(text, "    #"), 0);
    /* one group per type, largest first, no "created at" */
    char expected[128];
    snprintf(expected, sizeof expected, "livetrack: 15 leaked objects (20.2 KiB) in pid %ld", (long)child.pid);
    expect_line(text, "livetrack: 15 leaked objects", 0, expected);
    expect_line(text, "livetrack: ", 2, "livetrack: 5 leaked rt_buffer (20.0 KiB)");
    expect_line(text, "livetrack: ", 3, "livetrack: 2 leaked rt_prog (200 bytes)");
    expect_line(text, "livetrack: ", 4, "livetrack: 1 leaked rt_kernel (50 bytes)");
    expect_line(text, "livetrack: ", 5, "livetrack: 7 leaked rt_event (0 bytes)");
    expect_line(text, "livetrack: total", 0, "livetrack: total: 15 leaked objects, 20730 bytes (20.2 KiB)");
    if (check_failed)
        rt_child_dump("LIVETRACK_STACK_DEPTH=0", &child);
    rt_child_free(&child);
}

/* Names with control characters (a native-API user may declare any):
 * the text report shows them with '?', so every line keeps its shape. */
static int child_control_names(void)
{
    static const char *const names[] = {"ctl\x1b[31mred", "line\nbreak"};
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "api\tname", names, 2);
    create(0x7000, 0, 16, 0);
    create(0x7001, 1, 32, 0);
    livetrack_write_report(stdout, LIVETRACK_FORMAT_TEXT, 0, 0);
    release(0x7000);
    release(0x7001);
    return 0;
}

static void test_control_names(void)
{
    char *argv[] = {(char *)rt_self(), "control-names", NULL};
    const char *const set[] = {"LIVETRACK_EXIT_REPORT=off", NULL};
    rt_child child;
    CHECK_EQ_INT(rt_run(argv, set, NULL, &child), 0);
    CHECK_EQ_INT(child.status, 0);
    const char *text = child.out;
    CHECK(strchr(text, '\x1b') == NULL && strchr(text, '\t') == NULL);
    CHECK(strstr(text, "1 leaked ctl?[31mred (16 bytes)") != NULL);
    CHECK(strstr(text, "1 leaked line?break (32 bytes)") != NULL);
    CHECK(strstr(text, "livetrack:   api?name ") != NULL);
    /* Every line is a summary line, a frame, an example or empty. */
    for (const char *line = text; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line))
        CHECK(*line == '\n' || !strncmp(line, "livetrack: ", 11) || !strncmp(line, "  ", 2));
    if (check_failed)
        rt_child_dump("names with control characters", &child);
    rt_child_free(&child);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "control-names"))
        return child_control_names();
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, T_COUNT);
    if (argc > 1 && !strcmp(argv[1], "depth-zero"))
        return child_depth_zero();
    test_nothing(1);
    test_sites();
    test_kept_chain();
    test_kept_after_reuse();
    test_since();
    test_nothing(0);
    test_depth_zero();
    test_control_names();
    return check_summary("test_report_text");
}
