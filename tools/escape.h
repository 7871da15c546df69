/*
 * Writing text into the formats the tool produces: JSON strings for
 * trace files, XML/HTML text and attributes for the plots.
 */
#ifndef LIVETRACK_ESCAPE_H
#define LIVETRACK_ESCAPE_H

#include <stdio.h>

/* "text" with quotes, backslashes and control characters escaped, and
 * bytes that are not UTF-8 replaced by U+FFFD; NULL writes "". */
void escape_json(FILE *out, const char *text);
/* text with & < > " ' replaced by entities, control characters that XML
 * 1.0 forbids dropped and bytes that are not UTF-8 replaced by U+FFFD. */
void escape_xml(FILE *out, const char *text);

#endif
