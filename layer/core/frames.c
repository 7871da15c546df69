/* How a stack frame reads in every text livetrack prints. */
#include <stdio.h>
#include <string.h>

#include "core_internal.h"
#include "printable.h"

/* The shape AddressSanitizer made familiar: index, address, function,
 * source position, then the module and offset. */
static void format_frame(const livetrack_frame *frame, unsigned index, char *out, size_t size)
{
    int used = snprintf(out, size, "    #%u 0x%llx in %s", index, (unsigned long long)frame->address,
                        frame->function ? frame->function : "??");
    if (used < 0 || (size_t)used >= size)
        return;
    if (frame->file) {
        int more = frame->line && frame->column ? snprintf(out + used, size - (size_t)used, " %s:%u:%u", frame->file, frame->line, frame->column)
                   : frame->line           ? snprintf(out + used, size - (size_t)used, " %s:%u", frame->file, frame->line)
                                           : snprintf(out + used, size - (size_t)used, " %s", frame->file);
        if (more < 0 || (size_t)(used += more) >= size)
            return;
    }
    if (frame->module)
        snprintf(out + used, size - (size_t)used, " (%s+0x%llx)%s", frame->module,
                 (unsigned long long)frame->module_offset, frame->inlined ? " [inlined]" : "");
    else if (frame->inlined)
        snprintf(out + used, size - (size_t)used, " [inlined]");
}

void lt_format_frame(const livetrack_frame *frame, unsigned index, char *out, size_t size)
{
    if (!size)
        return;
    out[0] = '\0';
    format_frame(frame, index, out, size);
    /* Names from debug information may hold control characters. */
    lt_make_printable(out, strlen(out));
}
