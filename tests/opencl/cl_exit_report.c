/*
 * The exit report of a leaky program (cl_leaky, run as a child), compared
 * whole with the expected text after its handles are replaced by their
 * names (cl_leaky prints them), the pid by <PID> and the stack frames left
 * out (their addresses change from build to build: only their count and
 * their function and file are checked; cl_report_sites checks exact
 * lines). Also: no report when nothing leaked, LIVETRACK_EXIT_REPORT=always
 * and =off, LIVETRACK_OUTPUT with %p, and no report without the layer.
 *
 * Usage: cl_exit_report /path/to/cl_leaky (OPENCL_LAYERS set by CTest)
 */
#include <dirent.h>
#include <sys/stat.h>

#include "cl_test_util.h"

/* The report cl_leaky's "leak" mode must produce, exactly: one site per
 * creating line, largest first. */
static const char *const expected_leak_report =
    "livetrack: 4 leaked objects (4.3 KiB) from 4 call sites at exit of pid <PID>\n"
    "livetrack: 1 leaked cl_mem (4.0 KiB) created at:\n"
    "  cl_mem <buffer1>  refs 1  4096 bytes\n"
    "  keeps alive 1 object the program released: cl_context <context>\n"
    "livetrack: 1 leaked cl_mem (256 bytes) created at:\n"
    "  cl_mem <sub>  refs 1  256 bytes\n"
    "  keeps alive 2 objects (1.0 KiB) the program released: cl_mem <parent>, cl_context <context>\n"
    "livetrack: 1 leaked cl_mem (100 bytes) created at:\n"
    "  cl_mem <buffer2>  refs 1  100 bytes\n"
    "  keeps alive 1 object the program released: cl_context <context>\n"
    "livetrack: 1 leaked cl_event (0 bytes) created at:\n"
    "  cl_event <event>  refs 1\n"
    "  keeps alive 1 object the program released: cl_context <context>\n"
    "livetrack: leaks by type:\n"
    "livetrack:   OpenCL     cl_mem                          3 objects  4.3 KiB\n"
    "livetrack:   OpenCL     cl_event                        1 object   0 bytes\n"
    "livetrack: leaks by API:\n"
    "livetrack:   OpenCL                                     4 objects  4.3 KiB\n"
    "livetrack: 2 objects (1.0 KiB) the program released are kept alive by leaked objects\n"
    "livetrack: total: 4 leaked objects, 4452 bytes (4.3 KiB), from 4 call sites\n";

static const char *const expected_empty_report =
    "livetrack: 0 leaked objects (0 bytes) at exit of pid <PID>\n"
    "livetrack: total: 0 leaked objects, 0 bytes (0 bytes)\n";

/* Lines starting with "livetrack:" in the report (the count the old
 * one-line-per-object report also had). */
enum { REPORT_LIVETRACK_LINES = 12 };

typedef struct named_handle {
    char name[32];
    char text[32]; /* "0x" + 16 hex digits */
} named_handle;

typedef struct handles {
    named_handle items[16];
    size_t count;
} handles;

/* "name 0x..." lines of the child's stdout. */
static handles parse_handles(const char *out)
{
    handles h;
    memset(&h, 0, sizeof h);
    for (const char *line = out; *line && h.count < 16;) {
        named_handle *item = &h.items[h.count];
        if (sscanf(line, "%31s %31s", item->name, item->text) == 2 && strncmp(item->text, "0x", 2) == 0 &&
            strlen(item->text) == 18)
            h.count++;
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : line + strlen(line);
    }
    return h;
}

/* Replace every occurrence of `from` in *text by `to`. */
static void replace_all(char **text, const char *from, const char *to)
{
    size_t from_length = strlen(from), to_length = strlen(to), count = 0;
    for (const char *at = strstr(*text, from); at; at = strstr(at + from_length, from))
        count++;
    if (!count)
        return;
    size_t size = strlen(*text) + count * to_length + 1;
    char *result = malloc(size), *write = result;
    const char *read = *text;
    for (const char *at = strstr(read, from); at; at = strstr(read, from)) {
        memcpy(write, read, (size_t)(at - read));
        write += at - read;
        memcpy(write, to, to_length);
        write += to_length;
        read = at + from_length;
    }
    strcpy(write, read);
    free(*text);
    *text = result;
}

/* The report's lines in `text` (those starting with "livetrack:" and the
 * indented site details), frames and blank lines left out, handles and
 * pid replaced. */
static char *normalise(const char *text, const handles *h, pid_t pid)
{
    char *lines = calloc(1, 1);
    size_t size = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, "livetrack:", 10) == 0 || (strncmp(line, "  ", 2) == 0 && strncmp(line, "    #", 5) != 0))
            ct_append(&lines, &size, line, length);
        line += length;
    }
    for (size_t i = 0; i < h->count; i++) {
        char name[40];
        snprintf(name, sizeof name, "<%s>", h->items[i].name);
        replace_all(&lines, h->items[i].text, name);
    }
    char pid_text[48];
    snprintf(pid_text, sizeof pid_text, "of pid %ld\n", (long)pid);
    replace_all(&lines, pid_text, "of pid <PID>\n");
    return lines;
}

/* Each site's stack: frame #0 is cl_leaky's main, and only the report's
 * lines are in `text` (livetrack lines, frames, details, blank lines). */
static void check_frames(const char *text)
{
    size_t first_frames = 0, other = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, "    #0 0x", 9) == 0) {
            const char *in = strstr(line, " in main /");
            const char *file = strstr(line, "/cl_leaky.c:");
            first_frames += in && file && in < line + length && file < line + length;
        } else if (strncmp(line, "livetrack:", 10) != 0 && strncmp(line, "  ", 2) != 0 && *line != '\n') {
            other++;
        }
        line += length;
    }
    CHECK_EQ_INT(first_frames, 4);
    CHECK_EQ_INT(other, 0);
}

static void expect_text(const char *actual, const char *expected, const char *what)
{
    int same = strcmp(actual, expected) == 0;
    CHECK(same);
    if (!same)
        fprintf(stderr, "  %s differs.\n---- expected:\n%s---- actual:\n%s---- end\n", what, expected, actual);
}

static int run_leaky(const char *leaky, const char *mode, const char *const *set, const char *const *unset,
                     ct_child *child)
{
    char *argv[] = {(char *)leaky, (char *)mode, NULL};
    int rc = ct_run(argv, set, unset, child);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(child->status, 0);
    if (rc != 0 || child->status != 0)
        ct_child_dump(mode, child);
    return rc == 0 && child->status == 0;
}

static char *read_file(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return NULL;
    char *text = calloc(1, 1);
    size_t size = 0;
    char buffer[4096];
    size_t got;
    while ((got = fread(buffer, 1, sizeof buffer, file)) > 0)
        ct_append(&text, &size, buffer, got);
    fclose(file);
    return text;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cl_exit_report /path/to/cl_leaky\n");
        return 2;
    }
    const char *leaky = argv[1];
    const char *layer = getenv("OPENCL_LAYERS");
    CHECK(layer && *layer);
    ct_child child;
    /* Settings that would change the report are cleared for the children. */
    const char *const defaults[] = {"LIVETRACK_OUTPUT", "LIVETRACK_EXIT_REPORT", "LIVETRACK_TRANSPARENT", NULL};

    /* ---- the leak report, whole ---- */
    if (run_leaky(leaky, "leak", NULL, defaults, &child)) {
        handles h = parse_handles(child.out);
        CHECK_EQ_INT(h.count, 7);
        /* Every leaked and kept-alive handle appears in the raw report;
         * the released queue does not. */
        for (size_t i = 0; i < h.count; i++) {
            int in_report = strstr(child.err, h.items[i].text) != NULL;
            int is_queue = strcmp(h.items[i].name, "queue") == 0;
            CHECK(in_report == !is_queue);
            if (in_report != !is_queue)
                fprintf(stderr, "  %s %s: %s the report\n", h.items[i].name, h.items[i].text,
                        in_report ? "unexpectedly in" : "missing from");
        }
        char *report = normalise(child.err, &h, child.pid);
        expect_text(report, expected_leak_report, "the exit report");
        check_frames(child.err);
        /* Only the report: each line of stderr from livetrack is in it. */
        CHECK_EQ_INT(ct_count_lines_with_prefix(child.err, "livetrack:"), REPORT_LIVETRACK_LINES);
        free(report);
    }
    ct_child_free(&child);

    /* ---- nothing leaked: no report at all ---- */
    if (run_leaky(leaky, "clean", NULL, defaults, &child)) {
        CHECK_EQ_INT(ct_count_lines_with_prefix(child.err, "livetrack:"), 0);
        if (ct_count_lines_with_prefix(child.err, "livetrack:"))
            ct_child_dump("clean", &child);
    }
    ct_child_free(&child);

    /* ---- LIVETRACK_EXIT_REPORT=always: a report with 0 leaks ---- */
    const char *const always[] = {"LIVETRACK_EXIT_REPORT=always", NULL};
    if (run_leaky(leaky, "clean", always, defaults, &child)) {
        handles h = parse_handles(child.out);
        char *report = normalise(child.err, &h, child.pid);
        expect_text(report, expected_empty_report, "the LIVETRACK_EXIT_REPORT=always report");
        free(report);
    }
    ct_child_free(&child);

    /* ---- LIVETRACK_EXIT_REPORT=always with leaks: the same leak report ---- */
    if (run_leaky(leaky, "leak", always, defaults, &child)) {
        handles h = parse_handles(child.out);
        char *report = normalise(child.err, &h, child.pid);
        expect_text(report, expected_leak_report, "the leak report with LIVETRACK_EXIT_REPORT=always");
        free(report);
    }
    ct_child_free(&child);

    /* ---- LIVETRACK_EXIT_REPORT=off: nothing ---- */
    const char *const off[] = {"LIVETRACK_EXIT_REPORT=off", NULL};
    if (run_leaky(leaky, "leak", off, defaults, &child))
        CHECK_EQ_INT(ct_count_lines_with_prefix(child.err, "livetrack:"), 0);
    ct_child_free(&child);

    /* ---- LIVETRACK_OUTPUT=<dir>/report-%p.txt ---- */
    char dir[] = "/tmp/livetrack-exit-report-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char output_setting[256];
    snprintf(output_setting, sizeof output_setting, "LIVETRACK_OUTPUT=%s/report-%%p.txt", dir);
    const char *const to_file[] = {output_setting, NULL};
    if (run_leaky(leaky, "leak", to_file, defaults, &child)) {
        CHECK_EQ_INT(ct_count_lines_with_prefix(child.err, "livetrack:"), 0);
        char path[512];
        snprintf(path, sizeof path, "%s/report-%ld.txt", dir, (long)child.pid);
        char *text = read_file(path);
        CHECK(text != NULL);
        if (!text) {
            fprintf(stderr, "  %s was not written\n", path);
            ct_child_dump("LIVETRACK_OUTPUT", &child);
        } else {
            handles h = parse_handles(child.out);
            char *report = normalise(text, &h, child.pid);
            expect_text(report, expected_leak_report, "the report written to LIVETRACK_OUTPUT");
            /* Nothing but the report in the file. */
            check_frames(text);
            CHECK_EQ_INT(ct_count_lines_with_prefix(text, "livetrack:"), REPORT_LIVETRACK_LINES);
            free(report);
            free(text);
            unlink(path);
        }
    }
    ct_child_free(&child);
    /* Only that one file was written. */
    DIR *listing = opendir(dir);
    int leftover = 0;
    if (listing) {
        struct dirent *entry;
        while ((entry = readdir(listing)))
            leftover += entry->d_name[0] != '.';
        closedir(listing);
    }
    CHECK_EQ_INT(leftover, 0);
    rmdir(dir);

    /* ---- LIVETRACK_OUTPUT that cannot be written: stderr, with a note ---- */
    const char *const bad_output[] = {"LIVETRACK_OUTPUT=/nonexistent-livetrack-dir/report-%p.txt", NULL};
    if (run_leaky(leaky, "leak", bad_output, defaults, &child)) {
        handles h = parse_handles(child.out);
        char *report = normalise(child.err, &h, child.pid);
        /* The note names the file tried, %p expanded. */
        char note[160];
        snprintf(note, sizeof note, "livetrack: cannot write the report to \"/nonexistent-livetrack-dir/report-%ld.txt\"",
                 (long)child.pid);
        CHECK(strncmp(report, note, strlen(note)) == 0);
        const char *rest = strchr(report, '\n');
        expect_text(rest ? rest + 1 : "", expected_leak_report, "the report after a failed LIVETRACK_OUTPUT");
        free(report);
    }
    ct_child_free(&child);

    /* ---- misuse during the run: its diagnostic, then the report with
     *      the misuse count ---- */
    if (run_leaky(leaky, "leak-misuse", NULL, defaults, &child)) {
        handles h = parse_handles(child.out);
        CHECK(strstr(child.out, "second release of parent: -38\n") != NULL); /* CL_INVALID_MEM_OBJECT */
        char *report = normalise(child.err, &h, child.pid);
        /* The misuse diagnostic comes first, naming the call and the
         * handle the way %p prints it; then the report. */
        CHECK(strncmp(report, "livetrack: ERROR: clReleaseMemObject(", 37) == 0);
        char parent_p[32] = "?";
        for (size_t i = 0; i < h.count; i++)
            if (strcmp(h.items[i].name, "parent") == 0)
                snprintf(parent_p, sizeof parent_p, "%p", (void *)(uintptr_t)strtoull(h.items[i].text, NULL, 16));
        const char *first_line_end = strchr(report, '\n');
        const char *named = strstr(report, parent_p);
        CHECK(first_line_end && named && named < first_line_end);
        const char *start = strstr(report, "livetrack: 4 leaked objects");
        CHECK(start != NULL);
        char *expected = NULL;
        size_t size = 0;
        ct_append(&expected, &size, expected_leak_report, strlen(expected_leak_report));
        /* the misuse count comes right before the total */
        char *total = strstr(expected, "livetrack: total:");
        const char *misuse_line = "livetrack: 1 misused call reported during the run\n";
        char *with_misuse = NULL;
        size_t with_size = 0;
        ct_append(&with_misuse, &with_size, expected, (size_t)(total - expected));
        ct_append(&with_misuse, &with_size, misuse_line, strlen(misuse_line));
        ct_append(&with_misuse, &with_size, total, strlen(total));
        expect_text(start ? start : "", with_misuse, "the report after a misused call");
        free(with_misuse);
        free(expected);
        free(report);
    }
    ct_child_free(&child);

    /* ---- without the layer: the program runs, and no report ---- */
    const char *const no_layer[] = {"OPENCL_LAYERS", "LIVETRACK_OUTPUT", "LIVETRACK_EXIT_REPORT", NULL};
    if (run_leaky(leaky, "leak", NULL, no_layer, &child)) {
        CHECK_EQ_INT(parse_handles(child.out).count, 7);
        CHECK_EQ_INT(ct_count_lines_with_prefix(child.err, "livetrack:"), 0);
    }
    ct_child_free(&child);

    return check_summary("cl_exit_report");
}
