/*
 * The exit report: what was never released, written when the process
 * ends, and LIVETRACK_EXIT_CODE.
 *
 * It runs from the core library's destructor, which the dynamic linker
 * calls after every atexit handler of the program, so objects released by
 * those handlers are not reported. It reads only livetrack's own tables,
 * never a driver: at exit the driver may already be torn down.
 *
 *   LIVETRACK_EXIT_REPORT   the text report (auto: only when something
 *                           leaked; always; off)
 *   LIVETRACK_OUTPUT        where the text goes (default stderr)
 *   LIVETRACK_PEAK_REPORT   add the live set at the peak to the text
 *   LIVETRACK_JSON          also the JSON document, whatever leaked
 *   LIVETRACK_EXIT_CODE     when unsuppressed leaks remain, end the process
 *                           with this status, as LeakSanitizer's exitcode
 * Each of these acts on its own: EXIT_REPORT=off silences the text only.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"
#include "report_writers.h"

/* Open a %p path for writing; NULL (and a message) when it cannot be. */
static FILE *open_output(const char *pattern, const char *what, int fall_back_to_stderr)
{
    char path[4096];
    FILE *file = NULL;
    int error = ENAMETOOLONG;
    if (lt_expand_path(pattern, path, sizeof path)) {
        file = fopen(path, "w");
        error = errno;
    }
    if (!file) {
        if (fall_back_to_stderr)
            lt_diag("cannot write the %s to \"%s\"; writing it to stderr", what, pattern);
        else
            lt_diag("cannot write the %s to \"%s\": %s", what, pattern, strerror(error));
    }
    return file;
}

__attribute__((destructor)) static void exit_report(void)
{
    const lt_settings *settings = lt_get_settings();
    int text = settings->exit_report != LT_EXIT_REPORT_OFF;
    if (!text && !settings->json && !settings->exit_code)
        return;
    lt_report_model model;
    lt_report_model_build(&model, 0);
    unsigned flags = LT_REPORT_AT_EXIT | (settings->peak_report ? LIVETRACK_REPORT_PEAK : 0);
    if (settings->exit_report == LT_EXIT_REPORT_ALWAYS)
        flags |= LIVETRACK_REPORT_ALWAYS;

    if (text && (model.leaked_objects || (flags & (LIVETRACK_REPORT_ALWAYS | LIVETRACK_REPORT_PEAK)))) {
        FILE *out = settings->output ? open_output(settings->output, "report", 1) : NULL;
        if (model.leaked_objects || (flags & LIVETRACK_REPORT_ALWAYS))
            lt_report_write_text(out ? out : stderr, &model, flags);
        else
            lt_report_write_peak_text(out ? out : stderr, &model);
        if (out)
            fclose(out);
    }
    if (settings->json) {
        FILE *out = open_output(settings->json, "JSON report", 0);
        if (out) {
            lt_report_write_json(out, &model, flags);
            if (fclose(out))
                lt_diag("writing the JSON report to \"%s\" failed: %s", settings->json, strerror(errno));
        }
    }
    uint64_t leaked = model.leaked_objects;
    lt_report_model_free(&model);
    if (settings->exit_code && leaked) {
        /* As LeakSanitizer does: everything is written, then the status
         * says "leaks" whatever the program returned. */
        fflush(NULL);
        _exit((int)settings->exit_code);
    }
}
