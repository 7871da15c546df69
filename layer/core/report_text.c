/*
 * The text report, for people: leaks grouped by call site, largest first,
 * in the manner of LeakSanitizer. Lines that are not frames or details of
 * a site start with "livetrack:", so the report can be picked out of a
 * program's own output; frames are indented like a sanitizer's:
 *
 *   livetrack: 20 leaked objects (0 bytes) from 1 call site at exit of pid 4242
 *
 *   livetrack: 20 leaked cl_event (0 bytes) created at:
 *       #0 0x000055d0c0de1234 in main /src/leaky_events.c:95:15 (/build/leaky_events+0x1234)
 *     cl_event 0x000055d0c2a04c10  refs 1
 *     ...
 *     keeps alive 1 object the program released: cl_context 0x000055d0c29f3510
 *
 *   livetrack: leaks by type: ...
 */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"
#include "json_write.h"
#include "printable.h"
#include "report_writers.h"

void lt_format_bytes(uint64_t bytes, char *out, size_t size)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        snprintf(out, size, "%" PRIu64 " bytes", bytes);
        return;
    }
    uint64_t unit_bytes = 1;
    unsigned unit = 0;
    while (unit < 4 && bytes / unit_bytes >= 1024) {
        unit_bytes *= 1024;
        unit++;
    }
    /* By hand, not %.1f: "5.9 KiB" whatever the program's LC_NUMERIC. */
    char number[LT_JSON_NUMBER_MAX];
    size_t length = lt_format_fixed(number, bytes, unit_bytes, 1);
    snprintf(out, size, "%.*s %s", (int)length, number, units[unit]);
}

static const char *plural(uint64_t count) { return count == 1 ? "" : "s"; }

/* Room for a name printed through lt_printable (longer ones are cut). */
#define NAME_BUFFER LT_PRINTABLE_NAME_MAX

/* " (1.0 KiB)" beside a count, or "" for no bytes. */
static void format_bytes_aside(uint64_t bytes, char *out, size_t size)
{
    out[0] = '\0';
    if (!bytes)
        return;
    char formatted[32];
    lt_format_bytes(bytes, formatted, sizeof formatted);
    snprintf(out, size, " (%s)", formatted);
}

static void print_frames(FILE *out, const livetrack_frame *frames, size_t count)
{
    /* The same frame format as the misuse diagnostics (frames.c). */
    char line[1024];
    for (size_t i = 0; i < count; i++) {
        lt_format_frame(&frames[i], (unsigned)i, line, sizeof line);
        fputs(line, out);
        fputc('\n', out);
    }
}

/* "20 leaked cl_event (0 bytes)" or "3 leaked objects (4.3 KiB)". */
static void print_site_header(FILE *out, const lt_report_site *site, const char *adjective, int call_sites)
{
    char size[32];
    lt_format_bytes(site->bytes, size, sizeof size);
    char name[NAME_BUFFER];
    const char *what = site->kind_count == 1
                           ? lt_printable(livetrack_type_name((livetrack_domain)site->kinds[0].domain,
                                                              site->kinds[0].type),
                                          name, sizeof name)
                           : site->objects == 1 ? "object" : "objects";
    fprintf(out, "\nlivetrack: %" PRIu64 " %s %s (%s)%s\n", site->objects, adjective, what, size,
            call_sites ? " created at:" : "");
}

static void print_site_frames(FILE *out, lt_report_model *model, const lt_report_site *site)
{
    const lt_site_group *group = &model->groups.groups[site->group];
    const livetrack_frame *frames;
    size_t count = lt_site_group_frames(&model->groups, site->group, &frames);
    if (count)
        print_frames(out, frames, count);
    else if (!group->stack)
        fputs("    (call stack not recorded)\n", out);
    else
        fputs("    (no application frames: made inside a loader or runtime)\n", out);
}

static void print_kinds(FILE *out, const lt_report_site *site)
{
    if (site->kind_count < 2)
        return;
    fputs("  types:", out);
    for (size_t k = 0; k < site->kind_count; k++) {
        char size[32], name[NAME_BUFFER];
        lt_format_bytes(site->kinds[k].bytes, size, sizeof size);
        fprintf(out, "%s %" PRIu64 " %s (%s)", k ? "," : "", site->kinds[k].objects,
                lt_printable(livetrack_type_name((livetrack_domain)site->kinds[k].domain, site->kinds[k].type), name,
                             sizeof name),
                size);
    }
    fputc('\n', out);
}

static void print_handle(FILE *out, const livetrack_object *object)
{
    char name[NAME_BUFFER];
    fprintf(out, "%s 0x%016" PRIx64, lt_printable(object->type_name, name, sizeof name), object->handle);
}

static void print_leak_site(FILE *out, lt_report_model *model, const lt_report_site *site)
{
    print_site_header(out, site, "leaked", model->call_sites);
    if (model->call_sites)
        print_site_frames(out, model, site);
    print_kinds(out, site);
    for (unsigned e = 0; e < site->example_count; e++) {
        const livetrack_object *object = livetrack_snapshot_at(model->snapshot, site->examples[e]);
        fputs("  ", out);
        print_handle(out, object);
        fprintf(out, "  refs %u", object->refs);
        if (object->bytes)
            fprintf(out, "  %" PRIu64 " bytes", object->bytes);
        fputc('\n', out);
    }
    if (site->objects > site->example_count)
        fprintf(out, "  and %" PRIu64 " more\n", site->objects - site->example_count);
    if (site->kept_count) {
        /* Their bytes are not the site's (the program released them), but
         * this leak is what holds them: memory a leaked mapping pins. */
        char kept_size[40];
        format_bytes_aside(site->kept_bytes, kept_size, sizeof kept_size);
        fprintf(out, "  keeps alive %zu object%s%s the program released:", site->kept_count,
                site->kept_count == 1 ? "" : "s", kept_size);
        for (size_t k = 0; k < site->kept_count && k < LT_REPORT_EXAMPLES; k++) {
            fputs(k ? ", " : " ", out);
            print_handle(out, livetrack_snapshot_at(model->snapshot, model->kept[site->kept_first + k]));
        }
        if (site->kept_count > LT_REPORT_EXAMPLES)
            fprintf(out, " and %zu more", site->kept_count - LT_REPORT_EXAMPLES);
        fputc('\n', out);
    }
}

static void print_where(FILE *out, const lt_report_model *model, unsigned flags)
{
    if (flags & LT_REPORT_AT_EXIT)
        fprintf(out, " at exit of pid %ld", (long)getpid());
    else if (model->since_mark)
        fprintf(out, " created since mark %" PRIu64 " in pid %ld", model->since_mark, (long)getpid());
    else
        fprintf(out, " in pid %ld", (long)getpid());
}

static void print_summary(FILE *out, const lt_report_model *model)
{
    char size[32];
    if (model->type_count) {
        /* The type column fits the longest name (CUmemGenericAllocationHandle
         * is 28), so the counts stay in one column. */
        int type_width = 24;
        for (size_t i = 0; i < model->type_count; i++) {
            const lt_report_kind *kind = &model->by_type[i];
            size_t length = strlen(livetrack_type_name((livetrack_domain)kind->domain, kind->type));
            if (length > (size_t)type_width && length < 200)
                type_width = (int)length;
        }
        fputs("\nlivetrack: leaks by type:\n", out);
        for (size_t i = 0; i < model->type_count; i++) {
            const lt_report_kind *kind = &model->by_type[i];
            char api[NAME_BUFFER], type[NAME_BUFFER];
            lt_format_bytes(kind->bytes, size, sizeof size);
            fprintf(out, "livetrack:   %-10s %-*s %8" PRIu64 " object%-2s %s\n",
                    lt_printable(livetrack_domain_name((livetrack_domain)kind->domain), api, sizeof api), type_width,
                    lt_printable(livetrack_type_name((livetrack_domain)kind->domain, kind->type), type, sizeof type),
                    kind->objects, plural(kind->objects), size);
        }
        fputs("livetrack: leaks by API:\n", out);
        for (size_t i = 0; i < model->api_count; i++) {
            unsigned d = model->api_order[i];
            char api[NAME_BUFFER];
            lt_format_bytes(model->api_bytes[d], size, sizeof size);
            fprintf(out, "livetrack:   %-*s %8" PRIu64 " object%-2s %s\n", 11 + type_width,
                    lt_printable(livetrack_domain_name((livetrack_domain)d), api, sizeof api), model->api_objects[d],
                    plural(model->api_objects[d]), size);
        }
    }
    if (model->kept_by_leaks) {
        char kept_size[40];
        format_bytes_aside(model->kept_by_leaks_bytes, kept_size, sizeof kept_size);
        fprintf(out, "livetrack: %" PRIu64 " object%s%s the program released %s kept alive by leaked objects\n",
                model->kept_by_leaks, plural(model->kept_by_leaks), kept_size,
                model->kept_by_leaks == 1 ? "is" : "are");
    }
    /* Held by suppressed leaks, or by a destroy in progress in another
     * thread (a Level Zero keeper): alive, but no leak keeps them. */
    uint64_t held_otherwise = model->kept_objects - model->kept_by_leaks;
    if (held_otherwise)
        fprintf(out, "livetrack: %" PRIu64 " object%s the program released %s still held by suppressed objects or by "
                "calls in progress\n", held_otherwise, plural(held_otherwise), held_otherwise == 1 ? "is" : "are");
    const lt_suppressions *patterns = model->suppressions;
    if (patterns->path) {
        lt_format_bytes(model->suppressed_bytes, size, sizeof size);
        fprintf(out, "livetrack: suppressed: %" PRIu64 " object%s (%s) by LIVETRACK_SUPPRESSIONS=%s (%zu pattern%s)\n",
                model->suppressed_objects, plural(model->suppressed_objects), size, patterns->path, patterns->count,
                plural(patterns->count));
        for (size_t i = 0; i < patterns->count && model->pattern_use; i++) {
            const lt_pattern_use *use = &model->pattern_use[i];
            if (!use->objects)
                continue;
            char pattern[NAME_BUFFER];
            lt_format_bytes(use->bytes, size, sizeof size);
            fprintf(out, "livetrack:   %8" PRIu64 " object%-2s %-12s %s (line %u)\n", use->objects,
                    plural(use->objects), size, lt_printable(patterns->items[i].text, pattern, sizeof pattern),
                    patterns->items[i].line);
        }
    }
    /* The JSON's misuse_count: read with the model's misuse records, so a
     * call misused while this is written is in neither format. */
    if (model->stats.misuse)
        fprintf(out, "livetrack: %" PRIu64 " misused call%s reported during the run\n", model->stats.misuse,
                plural(model->stats.misuse));
    if (model->stats.incomplete)
        fputs("livetrack: tracking was incomplete (livetrack ran out of memory): objects may be missing\n", out);
    lt_format_bytes(model->leaked_bytes, size, sizeof size);
    if (!model->snapshot) {
        fprintf(out, "livetrack: total: not known, %" PRIu64 " object%s live in all\n", model->stats.live_objects,
                plural(model->stats.live_objects));
        return;
    }
    fprintf(out, "livetrack: total: %" PRIu64 " leaked object%s, %" PRIu64 " bytes (%s)", model->leaked_objects,
            plural(model->leaked_objects), model->leaked_bytes, size);
    if (model->call_sites && model->reported_sites)
        fprintf(out, ", from %zu call site%s", model->reported_sites, plural(model->reported_sites));
    fputc('\n', out);
}

static void print_peak(FILE *out, lt_report_model *model, int with_pid)
{
    if (!lt_report_peak_build(model)) {
        fputs("livetrack: no peak live set was recorded\n", out);
        return;
    }
    if (!model->peak.objects) { /* as the JSON's null peak */
        fputs("livetrack: no object was ever live: no peak\n", out);
        return;
    }
    const lt_peak_info *peak = &model->peak;
    char size[32];
    lt_format_bytes(peak->set_bytes, size, sizeof size);
    fprintf(out, "livetrack: at peak %s live in %" PRIu64 " object%s (", size, peak->set_objects,
            plural(peak->set_objects));
    if (with_pid)
        fprintf(out, "pid %ld, ", (long)getpid());
    char ms[LT_JSON_NUMBER_MAX];
    size_t ms_length = lt_format_fixed(ms, peak->time_ns, 1000000, 1);
    fprintf(out, "%.*s ms after start)%s:\n", (int)ms_length, ms,
            peak->approximate ? " (approximate: copied near the peak, not at it)" : "");
    if (peak->bytes > peak->set_bytes) {
        lt_format_bytes(peak->bytes, size, sizeof size);
        fprintf(out, "livetrack: most bytes live at once: %s\n", size);
    }
    if (peak->objects > peak->set_objects)
        fprintf(out, "livetrack: most objects live at once: %" PRIu64 "\n", peak->objects);
    for (size_t i = 0; i < model->peak_site_count; i++) {
        const lt_report_site *site = &model->peak_sites[i];
        print_site_header(out, site, "live", model->call_sites);
        if (model->call_sites)
            print_site_frames(out, model, site);
        print_kinds(out, site);
    }
}

void lt_report_write_text(FILE *out, lt_report_model *model, unsigned flags)
{
    /* One block: other threads' output waits instead of landing inside.
     * Everything that takes a lock of livetrack's (the peak's copy,
     * symbols) is done before, so no thread can hold one of those while
     * it waits for this stream. */
    if (flags & LIVETRACK_REPORT_PEAK)
        lt_report_peak_build(model);
    flockfile(out);
    char size[32];
    lt_format_bytes(model->leaked_bytes, size, sizeof size);
    if (model->snapshot)
        fprintf(out, "livetrack: %" PRIu64 " leaked object%s (%s)", model->leaked_objects,
                plural(model->leaked_objects), size);
    else
        fputs("livetrack: leaked objects not known", out);
    if (model->call_sites && model->reported_sites)
        fprintf(out, " from %zu call site%s", model->reported_sites, plural(model->reported_sites));
    print_where(out, model, flags);
    fputc('\n', out);
    if (!model->snapshot)
        fprintf(out,
                "livetrack: no report of the live objects could be made (out of memory): %" PRIu64
                " object%s live in all, which of them leaked is not known\n",
                model->stats.live_objects, plural(model->stats.live_objects));
    if (!model->call_sites && model->reported_sites)
        fputs("livetrack: call sites are off (LIVETRACK_STACK_DEPTH=0): leaks are grouped by type\n", out);
    for (size_t i = 0; i < model->reported_sites; i++)
        print_leak_site(out, model, &model->sites[i]);
    print_summary(out, model);
    if (flags & LIVETRACK_REPORT_PEAK) {
        fputc('\n', out);
        print_peak(out, model, 0);
    }
    funlockfile(out);
    fflush(out);
}

size_t lt_report_write_peak_text(FILE *out, lt_report_model *model)
{
    lt_report_peak_build(model); /* before the stream's lock: see lt_report_write_text */
    flockfile(out);
    print_peak(out, model, 1);
    funlockfile(out);
    fflush(out);
    return model->have_peak ? (size_t)model->peak.set_objects : 0;
}
