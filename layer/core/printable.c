/*
 * Names livetrack prints as they are given: a declared type or API name,
 * a function or file name from debug information, a suppression pattern.
 * Any of them may hold control characters (a native-API user's type
 * name, a source directory with a newline). Printed raw they would break
 * the text reports' one-line shape (`grep '^livetrack:'` picks the
 * summary out) or drive the terminal, so the text outputs show them as
 * '?'. The JSON report escapes them instead and keeps them whole.
 */
#include <string.h>

#include "printable.h"

/* A C0 control, DEL, or (with the byte after it) a C1 control in UTF-8:
 * how many bytes at text[i] make one, or 0. */
static size_t control_at(const unsigned char *text, size_t i, size_t length)
{
    if (text[i] < 0x20 || text[i] == 0x7f)
        return 1;
    if (text[i] == 0xc2 && i + 1 < length && text[i + 1] >= 0x80 && text[i + 1] <= 0x9f)
        return 2;
    return 0;
}

void lt_make_printable(char *text, size_t length)
{
    unsigned char *bytes = (unsigned char *)text;
    for (size_t i = 0; i < length; i++) {
        size_t control = control_at(bytes, i, length);
        if (control)
            memset(bytes + i, '?', control);
        if (control == 2)
            i++;
    }
}

const char *lt_printable(const char *text, char *buffer, size_t size)
{
    if (!text || !size)
        return text;
    size_t length = strlen(text);
    size_t i = 0;
    while (i < length && !control_at((const unsigned char *)text, i, length))
        i++;
    if (i == length)
        return text; /* the common case: nothing to copy */
    size_t kept = length < size ? length : size - 1;
    memcpy(buffer, text, kept);
    buffer[kept] = '\0';
    lt_make_printable(buffer, kept);
    return buffer;
}
