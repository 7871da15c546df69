/*
 * The public report functions of livetrack.h: each builds one model of
 * the live set (report_model.h) and hands it to a writer.
 */
#include <string.h>

#include "core_internal.h"
#include "report_writers.h"

/* Only the count: no grouping and no symbols unless a pattern needs the
 * frames (a scoped check in a test loop stays cheap). */
static size_t count_leaks(uint64_t since_mark)
{
    const lt_suppressions *patterns = lt_suppressions_get();
    livetrack_snapshot *snapshot = since_mark ? livetrack_snapshot_since(LIVETRACK_DOMAIN_ANY, NULL, since_mark)
                                              : livetrack_snapshot_take(LIVETRACK_DOMAIN_ANY, NULL);
    if (!snapshot) {
        /* Out of memory: which objects leaked is not known. Count every
         * live one, as the model does, so that a scoped check cannot pass
         * on a guess of 0. */
        livetrack_stats stats;
        livetrack_get_stats(&stats);
        return (size_t)stats.live_objects;
    }
    size_t count = livetrack_snapshot_count(snapshot), leaked = 0;
    signed char suppressed[LIVETRACK_DOMAIN_COUNT][LIVETRACK_MAX_TYPES];
    memset(suppressed, -1, sizeof suppressed); /* -1: not looked up yet */
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        if (!object->refs)
            continue;
        signed char *known = object->domain < LIVETRACK_DOMAIN_COUNT && object->type < LIVETRACK_MAX_TYPES
                                 ? &suppressed[object->domain][object->type]
                                 : NULL;
        if (!known || *known < 0) {
            signed char by_type = patterns->count && lt_suppress_type(patterns, object->type_name) >= 0;
            if (!known) {
                leaked += !by_type;
                continue;
            }
            *known = by_type;
        }
        leaked += !*known;
    }
    livetrack_snapshot_free(snapshot);
    return leaked;
}

size_t livetrack_write_report(FILE *out, livetrack_format format, unsigned flags, uint64_t since_mark)
{
    if (!out && !lt_suppressions_need_frames(lt_suppressions_get()))
        return count_leaks(since_mark);
    if (format != LIVETRACK_FORMAT_TEXT && format != LIVETRACK_FORMAT_JSON) {
        lt_diag("livetrack_write_report: unknown format %d; writing text", (int)format);
        format = LIVETRACK_FORMAT_TEXT;
    }
    lt_report_model model;
    lt_report_model_build(&model, since_mark);
    size_t leaked = (size_t)lt_report_model_leaks_to_count(&model);
    if (out) {
        if (format == LIVETRACK_FORMAT_JSON)
            lt_report_write_json(out, &model, flags);
        else if (leaked || (flags & LIVETRACK_REPORT_ALWAYS))
            lt_report_write_text(out, &model, flags);
        else if (flags & LIVETRACK_REPORT_PEAK)
            lt_report_write_peak_text(out, &model);
    }
    lt_report_model_free(&model);
    return leaked;
}

size_t livetrack_write_leak_report(FILE *out, int always)
{
    return livetrack_write_report(out, LIVETRACK_FORMAT_TEXT, always ? LIVETRACK_REPORT_ALWAYS : 0, 0);
}

size_t livetrack_write_peak_report(FILE *out)
{
    /* The peak alone needs no snapshot of the live set. */
    lt_report_model model;
    lt_report_model_init(&model);
    size_t objects = out ? lt_report_write_peak_text(out, &model)
                         : (lt_report_peak_build(&model) ? (size_t)model.peak.set_objects : 0);
    lt_report_model_free(&model);
    return objects;
}

size_t livetrack_leaks_since(uint64_t mark, FILE *report)
{
    return livetrack_write_report(report, LIVETRACK_FORMAT_TEXT, 0, mark);
}
