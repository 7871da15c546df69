/*
 * Escaping for JSON and XML output (see escape.h). Names in reports come
 * from the traced program (function names, file paths, type names), so
 * nothing is written raw.
 */
#include "escape.h"
#include "json_write.h"

/* The JSON report's own escaper (layer/core/json_write.c, compiled into
 * the tool): invalid UTF-8 becomes U+FFFD there, so every file the tool
 * writes is valid JSON whatever bytes the names hold. The tool is single
 * threaded, so its unlocked stdio calls need no stream lock. */
void escape_json(FILE *out, const char *text) { lt_json_string(out, text ? text : ""); }

void escape_xml(FILE *out, const char *text)
{
    for (const unsigned char *c = (const unsigned char *)(text ? text : ""); *c; c++) {
        if (*c >= 0x80) {
            /* An XML file is UTF-8 here: a byte that is not part of a valid
             * sequence (a Latin-1 name, say) would make the file not
             * well-formed, so it becomes U+FFFD, as in the JSON report. */
            size_t length = lt_utf8_sequence(c);
            /* U+FFFE and U+FFFF are valid UTF-8 but not XML characters */
            if (length == 3 && c[0] == 0xef && c[1] == 0xbf && c[2] >= 0xbe)
                length = 0;
            if (length) {
                fwrite(c, 1, length, out);
                c += length - 1;
            } else {
                fputs("\xef\xbf\xbd", out);
            }
            continue;
        }
        switch (*c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default:
            if (*c >= 0x20 || *c == '\n' || *c == '\t')
                fputc(*c, out);
        }
    }
}
