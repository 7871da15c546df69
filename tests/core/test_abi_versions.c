/*
 * Every function the public header declares is exported by
 * liblivetrack.so under a version node of layer/core/exports.map, and
 * that versioned symbol is the one an unversioned lookup finds (the
 * default version). A function the version script missed, or a library
 * linked without the script, fails here.
 *
 * The header and the map are read as text, so a function added to the
 * header is checked without touching this test.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "livetrack/livetrack.h"

#define MAX_NODES 16
#define NAME_MAX_LEN 128

static char nodes[MAX_NODES][NAME_MAX_LEN];
static int node_count;

/* The version nodes: lines of the map that start with a name and '{'. */
static void read_nodes(const char *map_path)
{
    FILE *map = fopen(map_path, "r");
    CHECK(map != NULL);
    if (!map)
        return;
    char line[512];
    while (fgets(line, sizeof line, map)) {
        char name[NAME_MAX_LEN];
        char brace;
        if (sscanf(line, "%127[A-Za-z0-9_.] %c", name, &brace) == 2 && brace == '{' && node_count < MAX_NODES)
            strcpy(nodes[node_count++], name);
    }
    fclose(map);
    CHECK(node_count > 0);
}

/* The function's name in a "LIVETRACK_API type *name(args" line. */
static int declared_name(const char *line, char *name)
{
    if (strncmp(line, "LIVETRACK_API ", 14) != 0)
        return 0;
    const char *paren = strchr(line, '(');
    if (!paren)
        return 0;
    const char *end = paren;
    while (end > line && isspace((unsigned char)end[-1]))
        end--;
    const char *start = end;
    while (start > line && (isalnum((unsigned char)start[-1]) || start[-1] == '_'))
        start--;
    size_t length = (size_t)(end - start);
    if (length == 0 || length >= NAME_MAX_LEN)
        return 0;
    memcpy(name, start, length);
    name[length] = '\0';
    return 1;
}

int main(void)
{
    read_nodes(LIVETRACK_EXPORTS_MAP);
    FILE *header = fopen(LIVETRACK_PUBLIC_HEADER, "r");
    CHECK(header != NULL);
    if (!header)
        return check_summary("core_abi_versions");
    /* Any symbol of the library, to reach its handle. */
    Dl_info info;
    CHECK(dladdr((void *)livetrack_status_name, &info) != 0);
    void *library = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    CHECK(library != NULL);
    if (!library)
        return check_summary("core_abi_versions");

    char line[512];
    int functions = 0;
    while (fgets(line, sizeof line, header)) {
        char name[NAME_MAX_LEN];
        if (!declared_name(line, name))
            continue;
        functions++;
        void *plain = dlsym(library, name);
        const char *version = NULL;
        for (int i = 0; i < node_count && !version; i++)
            if (plain && dlvsym(library, name, nodes[i]) == plain)
                version = nodes[i];
        if (!version) {
            fprintf(stderr, "FAIL: %s is %s\n", name,
                    plain ? "exported without a version of exports.map" : "not exported");
            check_failed++;
        } else {
            check_passed++;
        }
    }
    fclose(header);
    dlclose(library);
    /* The header's functions were found at all (the reading did not rot). */
    CHECK(functions >= 30);
    printf("%d public functions, each under a version node of %d\n", functions, node_count);
    return check_summary("core_abi_versions");
}
