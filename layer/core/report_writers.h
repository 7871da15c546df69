/*
 * The report writers (report_text.c, report_json.c) and what the public
 * report functions (report.c) and the exit report (exit_report.c) share.
 */
#ifndef LIVETRACK_REPORT_WRITERS_H
#define LIVETRACK_REPORT_WRITERS_H

#include <stdio.h>

#include "report_model.h"

/* Internal flag beside LIVETRACK_REPORT_*: the report is the one written
 * at exit (its header says so). */
#define LT_REPORT_AT_EXIT (1u << 30)

/* The leak report as text (the peak section too with
 * LIVETRACK_REPORT_PEAK). */
void lt_report_write_text(FILE *out, lt_report_model *model, unsigned flags);

/* Only the peak section. Returns the objects live at the peak. */
size_t lt_report_write_peak_text(FILE *out, lt_report_model *model);

/* The whole model as one JSON document (docs/report-schema.md). */
void lt_report_write_json(FILE *out, lt_report_model *model, unsigned flags);

#endif
