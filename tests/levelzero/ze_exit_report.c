/*
 * The exit reports of a leaky Level Zero program, linked with the loader
 * and dlopening it: the text report (LIVETRACK_OUTPUT) and the JSON report
 * (LIVETRACK_JSON) must list exactly the objects the program leaked (its
 * manifest says which), with their types, sizes and the file:line of the
 * creating call, and nothing else. The program's output must be the same
 * with and without livetrack.
 *
 * Usage: ze_exit_report <test driver> <liblivetrack_ze.so> <program>...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json_reader.h"
#include "ze_leak_scenario.h"
#include "ze_test_util.h"

#define SCENARIO_FILE "ze_leak_scenario.c"

typedef struct leak {
    char type[64];
    uint64_t handle;
    uint64_t bytes;
    int line;
} leak;

static size_t read_manifest(const char *path, leak *out, size_t max)
{
    FILE *file = fopen(path, "r");
    size_t count = 0;
    unsigned long long handle, bytes;
    while (file && count < max &&
           fscanf(file, "%63s %llx %llu %d", out[count].type, &handle, &bytes, &out[count].line) == 4) {
        out[count].handle = handle;
        out[count].bytes = bytes;
        count++;
    }
    if (file)
        fclose(file);
    return count;
}

static int ends_with(const char *text, const char *suffix)
{
    size_t length = text ? strlen(text) : 0, suffix_length = strlen(suffix);
    return length >= suffix_length && strcmp(text + length - suffix_length, suffix) == 0;
}

/* The line of `text` that holds `needle`, copied to `out`. */
static int line_with(const char *text, const char *needle, char *out, size_t size)
{
    const char *at = strstr(text, needle);
    if (!at)
        return 0;
    const char *start = at, *end = strchr(at, '\n');
    while (start > text && start[-1] != '\n')
        start--;
    size_t length = end ? (size_t)(end - start) : strlen(start);
    snprintf(out, size, "%.*s", (int)(length < size ? length : size - 1), start);
    return 1;
}

/* Frame #0 of every call site in the text report that lies in the
 * scenario must be a line the manifest names: no other object of the
 * scenario is reported. (Outer frames are the scenario's calls of its
 * own functions.) */
static int foreign_scenario_lines(const char *report, const leak *leaks, size_t count)
{
    int foreign = 0;
    const char *needle = SCENARIO_FILE ":";
    for (const char *at = strstr(report, needle); at; at = strstr(at + 1, needle)) {
        const char *start = at;
        while (start > report && start[-1] != '\n')
            start--;
        while (*start == ' ')
            start++;
        if (strncmp(start, "#0 ", 3) != 0)
            continue;
        int line = atoi(at + strlen(needle)), known = 0;
        for (size_t i = 0; i < count; i++)
            known |= leaks[i].line == line;
        if (!known) {
            fprintf(stderr, "the text report names %s%d, which leaked nothing\n", needle, line);
            foreign++;
        }
    }
    return foreign;
}

static void check_text_report(const char *name, const char *report, const leak *leaks, size_t count)
{
    CHECK(report != NULL);
    if (!report)
        return;
    char total[64];
    snprintf(total, sizeof total, "%zu leaked objects", count);
    CHECK(strstr(report, total) != NULL);
    for (size_t i = 0; i < count; i++) {
        char handle[32], site[64], line[512];
        snprintf(handle, sizeof handle, "%llx", (unsigned long long)leaks[i].handle);
        snprintf(site, sizeof site, SCENARIO_FILE ":%d:", leaks[i].line);
        int listed = line_with(report, handle, line, sizeof line);
        if (!listed || !strstr(line, leaks[i].type) || !strstr(report, site))
            fprintf(stderr, "%s: text report lacks %s 0x%s created at %s\n", name, leaks[i].type, handle, site);
        CHECK(listed && strstr(line, leaks[i].type) != NULL);
        CHECK(strstr(report, site) != NULL);
    }
    CHECK_EQ_INT(foreign_scenario_lines(report, leaks, count), 0);
    CHECK(strstr(report, "Level Zero") != NULL);
}

static const json_value *site_with_id(const json_value *root, int64_t id)
{
    const json_value *sites = json_get(root, "sites");
    for (size_t i = 0; i < json_count(sites); i++)
        if (json_int(json_get(json_at(sites, i), "id"), -1) == id)
            return json_at(sites, i);
    return NULL;
}

static void check_json_report(const char *name, const char *path, const leak *leaks, size_t count)
{
    char error[256];
    json_document *document = json_parse_file(path, error, sizeof error);
    if (!document)
        fprintf(stderr, "%s: %s: %s\n", name, path, error);
    CHECK(document != NULL);
    if (!document)
        return;
    const json_value *root = json_root(document);
    uint64_t total_bytes = 0;
    for (size_t i = 0; i < count; i++)
        total_bytes += leaks[i].bytes;
    CHECK_EQ_INT(json_int(json_path(root, "summary.leaked_objects"), -1), (int64_t)count);
    CHECK_EQ_INT(json_int(json_path(root, "summary.leaked_bytes"), -1), (int64_t)total_bytes);
    CHECK_EQ_INT(json_int(json_path(root, "summary.kept_alive_objects"), -1), 0);
    CHECK_EQ_INT(json_int(json_path(root, "summary.misuse_count"), -1), 0);

    /* Exactly the manifest's objects, each once. */
    const json_value *objects = json_get(root, "objects");
    CHECK_EQ_INT(json_count(objects), count);
    int matched[SCENARIO_LEAKED_OBJECTS * 2] = {0};
    for (size_t o = 0; o < json_count(objects); o++) {
        const json_value *object = json_at(objects, o);
        uint64_t handle = json_u64(json_get(object, "handle"), 0);
        size_t i = 0;
        while (i < count && leaks[i].handle != handle)
            i++;
        if (i == count) {
            fprintf(stderr, "%s: JSON lists %s %s, which the program did not leak\n", name,
                    json_str(json_get(object, "type"), "?"), json_str(json_get(object, "handle"), "?"));
            CHECK(i < count);
            continue;
        }
        matched[i]++;
        CHECK(json_bool(json_get(object, "leaked"), 0));
        CHECK(strcmp(json_str(json_get(object, "api"), ""), "Level Zero") == 0);
        CHECK(strcmp(json_str(json_get(object, "type"), ""), leaks[i].type) == 0);
        CHECK_EQ_INT(json_int(json_get(object, "bytes"), -1), (int64_t)leaks[i].bytes);
        CHECK_EQ_INT(json_int(json_get(object, "refs"), -1), 1);
        const json_value *site = site_with_id(root, json_int(json_get(object, "site"), -1));
        const json_value *frame = json_at(json_get(site, "frames"), 0);
        const char *file = json_str(json_get(frame, "file"), NULL);
        int line = (int)json_int(json_get(frame, "line"), 0);
        if (!ends_with(file, SCENARIO_FILE) || line != leaks[i].line)
            fprintf(stderr, "%s: JSON gives %s 0x%llx the call site %s:%d, not %s:%d\n", name, leaks[i].type,
                    (unsigned long long)handle, file ? file : "(none)", line, SCENARIO_FILE, leaks[i].line);
        CHECK(ends_with(file, SCENARIO_FILE));
        CHECK_EQ_INT(line, leaks[i].line);
    }
    for (size_t i = 0; i < count; i++)
        CHECK_EQ_INT(matched[i], 1);
    json_free(document);
}

static void check_program(const char *program, const char *driver, const char *front_end, const char *directory)
{
    const char *name = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
    char alt_drivers[1024], preload[1024], output[1024], json[1024], manifest[1024];
    char plain_stdout[1024], tracked_stdout[1024], tracked_stderr[1024];
    snprintf(alt_drivers, sizeof alt_drivers, "ZE_ENABLE_ALT_DRIVERS=%s", driver);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", front_end);
    snprintf(output, sizeof output, "LIVETRACK_OUTPUT=%s/%s.txt", directory, name);
    snprintf(json, sizeof json, "LIVETRACK_JSON=%s/%s.json", directory, name);
    snprintf(manifest, sizeof manifest, "%s/%s.manifest", directory, name);
    snprintf(plain_stdout, sizeof plain_stdout, "%s/%s.plain.out", directory, name);
    snprintf(tracked_stdout, sizeof tracked_stdout, "%s/%s.tracked.out", directory, name);
    snprintf(tracked_stderr, sizeof tracked_stderr, "%s/%s.tracked.err", directory, name);

    /* Without livetrack, then with it. */
    const char *plain_env[] = {alt_drivers, "LD_PRELOAD", "LIVETRACK_OUTPUT", "LIVETRACK_JSON", NULL};
    char *plain_argv[] = {(char *)program, NULL};
    CHECK_EQ_INT(zt_run(plain_argv, plain_env, plain_stdout, NULL), 0);
    const char *tracked_env[] = {alt_drivers, preload, output, json, "LIVETRACK_EXIT_REPORT=auto", NULL};
    char *tracked_argv[] = {(char *)program, manifest, NULL};
    CHECK_EQ_INT(zt_run(tracked_argv, tracked_env, tracked_stdout, tracked_stderr), 0);

    char *plain = zt_read_file(plain_stdout), *tracked = zt_read_file(tracked_stdout);
    char *diagnostics = zt_read_file(tracked_stderr);
    CHECK(plain && tracked && strcmp(plain, tracked) == 0);
    CHECK(plain && strstr(plain, "checksum") != NULL);
    /* A clean program: no misuse, no trouble attaching. */
    CHECK_EQ_INT(zt_count(diagnostics, "livetrack:"), 0);
    if (diagnostics && *diagnostics)
        fprintf(stderr, "%s wrote on stderr:\n%s", name, diagnostics);

    leak leaks[SCENARIO_LEAKED_OBJECTS * 2];
    size_t count = read_manifest(manifest, leaks, sizeof leaks / sizeof leaks[0]);
    CHECK_EQ_INT(count, SCENARIO_LEAKED_OBJECTS);

    char *report = zt_read_file(output + strlen("LIVETRACK_OUTPUT="));
    check_text_report(name, report, leaks, count);
    check_json_report(name, json + strlen("LIVETRACK_JSON="), leaks, count);
    free(report);
    free(plain);
    free(tracked);
    free(diagnostics);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s <test driver> <liblivetrack_ze.so> <program>...\n", argv[0]);
        return 2;
    }
    const char *directory = zt_temp_dir("ze-exit-report");
    for (int i = 3; i < argc; i++)
        check_program(argv[i], argv[1], argv[2], directory);
    if (!check_failed)
        zt_remove_dir(directory); /* kept when something failed, to look at */
    return check_summary("ze_exit_report");
}
