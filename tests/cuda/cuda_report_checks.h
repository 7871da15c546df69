/*
 * Checks of livetrack's exit reports against a leak manifest (header
 * only, so the checks count in the including test's summary): the text
 * report and the JSON report list exactly the leaks, with types, sizes
 * and the source line that made each, in `source` (a file name).
 */
#ifndef LIVETRACK_TESTS_CUDA_REPORT_CHECKS_H
#define LIVETRACK_TESTS_CUDA_REPORT_CHECKS_H

#include <libgen.h>

#include "cuda_leak_manifest.h"
#include "cuda_test_util.h"
#include "json_reader.h"

/* The text report shows up to three example handles per call site (the
 * oldest) and "and N more": of the leaks made on one line, that many must
 * be listed, each one a leak of the manifest. */
#define CUDA_TEXT_EXAMPLES 3

static int cuda_text_lists(const char *text, const cuda_leak *leak)
{
    char expected[96];
    /* "<type> 0x<16 hex digits>": the handle, tagged for some types */
    snprintf(expected, sizeof expected, "%s 0x", leak->type);
    for (const char *at = text; (at = strstr(at, expected)); at += strlen(expected)) {
        unsigned long long key = 0;
        if (sscanf(at + strlen(expected), "%16llx", &key) == 1 && cuda_untag(key) == leak->handle)
            return 1;
    }
    return 0;
}

__attribute__((unused)) static void cuda_check_text_report(const char *text, const cuda_leaks *leaks,
                                                           const char *source)
{
    char expected[256];
    for (size_t i = 0; i < leaks->count; i++) {
        const cuda_leak *leak = &leaks->leaks[i];
        snprintf(expected, sizeof expected, "%s:%u:", source, leak->line);
        if (!strstr(text, expected))
            fprintf(stderr, "the text report lacks %s (%s)\n", expected, leak->type);
        CHECK(strstr(text, expected) != NULL);
        size_t first = i, made = 0, listed = 0;
        for (size_t j = 0; j < leaks->count; j++)
            if (leaks->leaks[j].line == leak->line) {
                first = j < first ? j : first;
                made++;
                listed += cuda_text_lists(text, &leaks->leaks[j]) != 0;
            }
        if (first != i)
            continue; /* the line's leaks were checked at its first */
        size_t shown = made < CUDA_TEXT_EXAMPLES ? made : CUDA_TEXT_EXAMPLES;
        if (listed != shown)
            fprintf(stderr, "the text report lists %zu of the %zu %s made on line %u, not %zu\n", listed, made,
                    leak->type, leak->line, shown);
        CHECK_EQ_INT(listed, shown);
        if (made > CUDA_TEXT_EXAMPLES) {
            snprintf(expected, sizeof expected, "%zu leaked %s", made, leak->type);
            CHECK(strstr(text, expected) != NULL);
            snprintf(expected, sizeof expected, "  and %zu more\n", made - CUDA_TEXT_EXAMPLES);
            CHECK(strstr(text, expected) != NULL);
        }
    }
    snprintf(expected, sizeof expected, "total: %zu leaked object%s,", leaks->count, leaks->count == 1 ? "" : "s");
    CHECK(strstr(text, expected) != NULL);
}

static const json_value *cuda_site_with_id(const json_value *root, int64_t id)
{
    const json_value *sites = json_get(root, "sites");
    for (size_t i = 0; i < json_count(sites); i++)
        if (json_int(json_get(json_at(sites, i), "id"), -1) == id)
            return json_at(sites, i);
    return NULL;
}

__attribute__((unused)) static void cuda_check_json_report(const char *path, const cuda_leaks *leaks,
                                                           const char *source)
{
    char error[256];
    json_document *document = json_parse_file(path, error, sizeof error);
    if (!document)
        fprintf(stderr, "%s: %s\n", path, error);
    CHECK(document != NULL);
    if (!document)
        return;
    const json_value *root = json_root(document);
    CHECK_EQ_INT(json_int(json_path(root, "summary.leaked_objects"), -1), leaks->count);
    const json_value *objects = json_get(root, "objects");
    size_t leaked = 0;
    for (size_t i = 0; i < json_count(objects); i++)
        leaked += json_bool(json_get(json_at(objects, i), "leaked"), 0) != 0;
    CHECK_EQ_INT(leaked, leaks->count);
    for (size_t l = 0; l < leaks->count; l++) {
        const cuda_leak *leak = &leaks->leaks[l];
        const json_value *found = NULL;
        for (size_t i = 0; i < json_count(objects) && !found; i++) {
            const json_value *object = json_at(objects, i);
            if (!strcmp(json_str(json_get(object, "type"), ""), leak->type) &&
                cuda_untag(json_u64(json_get(object, "handle"), 0)) == leak->handle)
                found = object;
        }
        if (!found)
            fprintf(stderr, "the JSON report lacks %s 0x%llx\n", leak->type, (unsigned long long)leak->handle);
        CHECK(found != NULL);
        if (!found)
            continue;
        CHECK_EQ_INT(json_int(json_get(found, "bytes"), -1), leak->bytes);
        CHECK(!strcmp(json_str(json_get(found, "api"), ""), "CUDA"));
        const json_value *site = cuda_site_with_id(root, json_int(json_get(found, "site"), -1));
        const json_value *frame = json_at(json_get(site, "frames"), 0);
        char file[512];
        snprintf(file, sizeof file, "%s", json_str(json_get(frame, "file"), ""));
        if (strcmp(basename(file), source))
            fprintf(stderr, "%s: frame 0 is in %s, not %s\n", leak->type, file, source);
        CHECK(!strcmp(basename(file), source));
        CHECK_EQ_INT(json_int(json_get(frame, "line"), -1), leak->line);
    }
    json_free(document);
}

#endif
