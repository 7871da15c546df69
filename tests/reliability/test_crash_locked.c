/*
 * Faults: the program crashes while the crashing thread itself holds a
 * registry lock (as it would if the crash happened inside livetrack). The
 * crash report cannot take the lock; the watchdog must let the crash go
 * on, with the same signal, in bounded time. Linked with the core's
 * sources to reach the lock.
 */
#include "core_internal.h"
#include "livetrack/livetrack.h"
#include "rel_util.h"

static int child(void)
{
    rel_no_core();
    static const char *const names[] = {"locked_obj"};
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "lockedtest", names, 1);
    for (uint64_t i = 1; i <= 10; i++) {
        livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = 0, .handle = i * 16};
        livetrack_create(&object);
    }
    lt_registry_lock_all();
    /* unmapped, and not NULL to UBSan; volatile so nothing sees it coming */
    volatile uintptr_t address = 16;
    *(volatile int *)address = 1;
    return 3;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child();
    const char *env[] = {"LIVETRACK_EXIT_REPORT=auto", "LIVETRACK_OUTPUT=", "LIVETRACK_CRASH_REPORT=", NULL};
    char *args[] = {(char *)rel_self(), "child", NULL};
    time_t start = time(NULL);
    rel_run run = rel_spawn(args, env, 60);
    time_t took = time(NULL) - start;
    CHECK(rel_killed_by(&run, SIGSEGV));
    CHECK(strstr(run.err, "did not finish in time") != NULL);
    CHECK(took <= 20);
    if (check_failed)
        rel_dump("crash holding a registry lock", &run);
    printf("crash with a registry lock held: died after %ld s\n", (long)took);
    rel_run_free(&run);
    return check_summary("reliability.crash_locked");
}
