/*
 * The leak report: what was never released, as text.
 *
 * It reads only the registry (a snapshot), never a driver: at exit the
 * driver may already be torn down. It runs from the core library's
 * destructor, which the dynamic linker calls after every atexit handler of
 * the program, so objects released by those handlers are not reported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"
#include "registry_internal.h"

#define EXAMPLE_HOLDERS 3

typedef struct type_total {
    uint64_t objects;
    uint64_t bytes;
} type_total;

typedef struct holder_list {
    uint32_t count;
    uint32_t first[EXAMPLE_HOLDERS];
} holder_list;

/* handle -> snapshot index, open addressing; built once per report. */
typedef struct handle_index {
    size_t mask;
    size_t *slots; /* index + 1, 0 = empty */
} handle_index;

static size_t slot_of(unsigned domain, uint64_t handle, size_t mask) { return (size_t)lt_hash(domain, handle) & mask; }

static int index_build(handle_index *index, const livetrack_snapshot *snapshot)
{
    size_t count = livetrack_snapshot_count(snapshot), size = 16;
    while (size < count * 2)
        size *= 2;
    index->mask = size - 1;
    index->slots = lt_calloc(size, sizeof *index->slots);
    if (!index->slots)
        return 0;
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        size_t slot = slot_of(object->domain, object->handle, index->mask);
        while (index->slots[slot])
            slot = (slot + 1) & index->mask;
        index->slots[slot] = i + 1;
    }
    return 1;
}

static const livetrack_object *index_find(const handle_index *index, const livetrack_snapshot *snapshot,
                                          livetrack_domain domain, uint64_t handle, size_t *at)
{
    for (size_t slot = slot_of(domain, handle, index->mask); index->slots[slot]; slot = (slot + 1) & index->mask) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, index->slots[slot] - 1);
        if (object->handle == handle && object->domain == domain) {
            if (at)
                *at = index->slots[slot] - 1;
            return object;
        }
    }
    return NULL;
}

void lt_format_bytes(uint64_t bytes, char *out, size_t size)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        snprintf(out, size, "%llu bytes", (unsigned long long)bytes);
        return;
    }
    double value = (double)bytes;
    unsigned unit = 0;
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        unit++;
    }
    snprintf(out, size, "%.1f %s", value, units[unit]);
}

static void print_object(FILE *out, const livetrack_object *object)
{
    fprintf(out, "livetrack:   %-18s 0x%016llx  refs %u", object->type_name, (unsigned long long)object->handle,
            object->refs);
    if (object->bytes)
        fprintf(out, "  %llu bytes", (unsigned long long)object->bytes);
}

size_t livetrack_write_leak_report(FILE *out, int always)
{
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_ANY, NULL);
    size_t count = livetrack_snapshot_count(snapshot);
    livetrack_stats stats;
    livetrack_get_stats(&stats);

    size_t leaked = 0, held = 0;
    uint64_t leaked_bytes = 0;
    uint64_t domain_leaks[LIVETRACK_DOMAIN_COUNT] = {0};
    type_total totals[LIVETRACK_DOMAIN_COUNT][LIVETRACK_MAX_TYPES];
    memset(totals, 0, sizeof totals);
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        if (object->refs) {
            leaked++;
            leaked_bytes += object->bytes;
            domain_leaks[object->domain]++;
            totals[object->domain][object->type].objects++;
            totals[object->domain][object->type].bytes += object->bytes;
        } else {
            held++;
        }
    }
    if (!leaked && !always) {
        livetrack_snapshot_free(snapshot);
        return 0;
    }

    handle_index index = {0, NULL};
    holder_list *holders = held ? lt_calloc(count, sizeof *holders) : NULL;
    int have_index = index_build(&index, snapshot);
    if (have_index && holders) {
        /* Who keeps each released object alive: its live children. */
        for (size_t i = 0; i < count; i++) {
            const livetrack_object *child = livetrack_snapshot_at(snapshot, i);
            for (int p = 0; p < 2; p++) {
                size_t at;
                if (child->parents[p] &&
                    index_find(&index, snapshot, child->domain, child->parents[p], &at) &&
                    livetrack_snapshot_at(snapshot, at)->refs == 0) {
                    holder_list *list = &holders[at];
                    if (list->count < EXAMPLE_HOLDERS)
                        list->first[list->count] = (uint32_t)i;
                    list->count++;
                }
            }
        }
    }

    char size_text[32];
    lt_format_bytes(leaked_bytes, size_text, sizeof size_text);
    fprintf(out, "livetrack: %zu leaked object%s at exit of pid %ld (%s)", leaked, leaked == 1 ? "" : "s",
            (long)getpid(), size_text);
    const char *separator = ": ";
    for (unsigned d = 1; d < LIVETRACK_DOMAIN_COUNT; d++) {
        if (domain_leaks[d]) {
            fprintf(out, "%s%llu %s", separator, (unsigned long long)domain_leaks[d], livetrack_domain_name(d));
            separator = ", ";
        }
    }
    fputc('\n', out);

    /* Oldest first: the order the program created them in. */
    for (size_t i = count; i-- > 0;) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        if (!object->refs)
            continue;
        print_object(out, object);
        for (int p = 0; p < 2 && have_index; p++) {
            const livetrack_object *parent =
                object->parents[p] ? index_find(&index, snapshot, object->domain, object->parents[p], NULL) : NULL;
            if (parent && parent->refs == 0)
                fprintf(out, "  keeps alive %s 0x%016llx", parent->type_name, (unsigned long long)parent->handle);
        }
        fputc('\n', out);
    }
    if (held) {
        fprintf(out, "livetrack: %zu object%s released by the program but kept alive by leaked objects:\n", held,
                held == 1 ? "" : "s");
        for (size_t i = count; i-- > 0;) {
            const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
            if (object->refs)
                continue;
            print_object(out, object);
            const holder_list *list = holders ? &holders[i] : NULL;
            if (list && list->count) {
                fprintf(out, "  kept alive by");
                for (uint32_t h = 0; h < list->count && h < EXAMPLE_HOLDERS; h++) {
                    const livetrack_object *holder = livetrack_snapshot_at(snapshot, list->first[h]);
                    fprintf(out, "%s %s 0x%016llx", h ? "," : "", holder->type_name,
                            (unsigned long long)holder->handle);
                }
                if (list->count > EXAMPLE_HOLDERS)
                    fprintf(out, " and %u more", list->count - EXAMPLE_HOLDERS);
            } else {
                fprintf(out, "  kept alive by %u object%s", object->holders, object->holders == 1 ? "" : "s");
            }
            fputc('\n', out);
        }
    }
    if (leaked) {
        fprintf(out, "livetrack: leaks by type:\n");
        for (unsigned d = 1; d < LIVETRACK_DOMAIN_COUNT; d++) {
            for (unsigned t = 0; t < LIVETRACK_MAX_TYPES; t++) {
                const type_total *total = &totals[d][t];
                if (!total->objects)
                    continue;
                fprintf(out, "livetrack:   %-10s %-18s %6llu object%s", livetrack_domain_name(d),
                        livetrack_type_name(d, t), (unsigned long long)total->objects, total->objects == 1 ? " " : "s");
                if (total->bytes) {
                    lt_format_bytes(total->bytes, size_text, sizeof size_text);
                    fprintf(out, "  %s", size_text);
                }
                fputc('\n', out);
            }
        }
    }
    lt_format_bytes(leaked_bytes, size_text, sizeof size_text);
    fprintf(out, "livetrack: total: %zu leaked object%s, %llu bytes (%s)\n", leaked, leaked == 1 ? "" : "s",
            (unsigned long long)leaked_bytes, size_text);
    if (stats.misuse)
        fprintf(out, "livetrack: %llu misused call%s reported during the run\n", (unsigned long long)stats.misuse,
                stats.misuse == 1 ? "" : "s");
    if (stats.incomplete)
        fprintf(out, "livetrack: tracking was incomplete (livetrack ran out of memory): objects may be missing\n");
    fflush(out);

    lt_free(index.slots);
    lt_free(holders);
    livetrack_snapshot_free(snapshot);
    return leaked;
}

__attribute__((destructor)) static void exit_report(void)
{
    const lt_settings *settings = lt_get_settings();
    if (settings->exit_report == LT_EXIT_REPORT_OFF)
        return;
    FILE *out = stderr;
    if (settings->output) {
        char path[4096];
        if (!lt_expand_path(settings->output, path, sizeof path) || !(out = fopen(path, "w"))) {
            lt_diag("cannot write the report to \"%s\"; writing it to stderr", settings->output);
            out = stderr;
        }
    }
    livetrack_write_leak_report(out, settings->exit_report == LT_EXIT_REPORT_ALWAYS);
    if (out != stderr)
        fclose(out);
}
