/*
 * Escaping for JSON and XML output (see escape.h). Names in reports come
 * from the traced program (function names, file paths, type names), so
 * nothing is written raw.
 */
#include "escape.h"

void escape_json(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)(text ? text : ""); *c; c++) {
        switch (*c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*c < 0x20)
                fprintf(out, "\\u%04x", *c);
            else
                fputc(*c, out);
        }
    }
    fputc('"', out);
}

void escape_xml(FILE *out, const char *text)
{
    for (const unsigned char *c = (const unsigned char *)(text ? text : ""); *c; c++) {
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
