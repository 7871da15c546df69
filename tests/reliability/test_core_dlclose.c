/*
 * Process lifecycle: a program that dlopen()s liblivetrack itself (the
 * native API from a plugin, or another loader) and dlclose()s it while an
 * object is live. The library stays mapped (-z nodelete): its exit report
 * is the process's, written at exit and not inside dlclose(), and
 * LIVETRACK_EXIT_CODE does not end the program in the middle of its run.
 *
 *   test_core_dlclose <liblivetrack.so>
 */
#include <dlfcn.h>

#include "livetrack/livetrack.h"
#include "rel_util.h"

static int child(const char *library)
{
    void *core = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!core) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 10;
    }
    livetrack_status (*create)(const livetrack_new_object *) =
        (livetrack_status(*)(const livetrack_new_object *))dlsym(core, "livetrack_create");
    livetrack_new_object leak = {.domain = LIVETRACK_DOMAIN_USER, .type = 1, .handle = 0x5eed, .bytes = 64};
    if (!create || create(&leak) != LIVETRACK_OK)
        return 11;
    if (dlclose(core) != 0)
        return 12;
    printf("after dlclose\n");
    fflush(stdout);
    fprintf(stderr, "program ends\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "child"))
        return child(argv[2]);
    if (argc < 2) {
        fprintf(stderr, "usage: test_core_dlclose <liblivetrack.so>\n");
        return 2;
    }
    const char *env[] = {"LIVETRACK_EXIT_REPORT=auto", "LIVETRACK_EXIT_CODE=23", "LIVETRACK_OUTPUT=", NULL};
    char *args[] = {(char *)rel_self(), "child", argv[1], NULL};
    rel_run run = rel_spawn(args, env, 60);
    CHECK(rel_exited(&run, 23));
    CHECK(strstr(run.out, "after dlclose") != NULL);
    /* the report comes at exit, after the program's last words */
    const char *last_words = strstr(run.err, "program ends"), *report = strstr(run.err, "1 leaked object");
    CHECK(last_words && report && last_words < report);
    if (check_failed)
        rel_dump("liblivetrack dlclosed with a live object", &run);
    rel_run_free(&run);
    return check_summary("reliability.core_dlclose");
}
