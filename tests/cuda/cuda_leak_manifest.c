/* The leak manifest (cuda_leak_manifest.h). */
#include "cuda_leak_manifest.h"

#include <string.h>

void cuda_print_leaks(const cuda_leaks *leaks, FILE *out)
{
    for (size_t i = 0; i < leaks->count; i++)
        fprintf(out, "leak %s 0x%llx %llu %u\n", leaks->leaks[i].type, (unsigned long long)leaks->leaks[i].handle,
                (unsigned long long)leaks->leaks[i].bytes, leaks->leaks[i].line);
    fprintf(out, "%s\n", leaks->failed ? "failed" : "end");
    fflush(out);
}

int cuda_parse_leaks(const char *text, cuda_leaks *out)
{
    static char types[CUDA_LEAKS_MAX][64];
    memset(out, 0, sizeof *out);
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        unsigned long long handle, bytes;
        unsigned number;
        if (!strncmp(line, "end\n", 4))
            return 1;
        if (!strncmp(line, "leak ", 5) && out->count == CUDA_LEAKS_MAX)
            return 0; /* more than a manifest holds: not a whole one */
        if (out->count < CUDA_LEAKS_MAX &&
            sscanf(line, "leak %63s %llx %llu %u", types[out->count], &handle, &bytes, &number) == 4) {
            out->leaks[out->count] = (cuda_leak){types[out->count], handle, bytes, number};
            out->count++;
        }
    }
    return 0;
}
