/*
 * Whether a shared library's dependencies are found here, answered by the
 * dynamic loader itself: `ld.so --list LIBRARY` resolves them as a program
 * started now would (LD_LIBRARY_PATH, the library's RUNPATH, ld.so.cache)
 * without running any of their code, and fails, saying which one, when one
 * is missing. The loader is the one this program was started with: its
 * path is in our own PT_INTERP.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "library_loads.h"

/* PT_INTERP of the running program, found through its program headers. */
static const char *own_interpreter(void)
{
    const ElfW(Phdr) *headers = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    size_t count = getauxval(AT_PHNUM);
    if (!headers || !count)
        return NULL;
    uintptr_t bias = 0;
    for (size_t i = 0; i < count; i++)
        if (headers[i].p_type == PT_PHDR)
            bias = (uintptr_t)headers - headers[i].p_vaddr;
    for (size_t i = 0; i < count; i++)
        if (headers[i].p_type == PT_INTERP)
            return (const char *)(bias + headers[i].p_vaddr);
    return NULL;
}

/* "prog: error while loading shared libraries: libx.so.1: cannot open
 * shared object file: ..." becomes "libx.so.1: cannot open shared object
 * file: ..."; anything else is kept whole, first line only. */
static void loader_words(char *said, char *why, size_t size)
{
    said[strcspn(said, "\n")] = '\0';
    const char *marker = "error while loading shared libraries: ";
    const char *at = strstr(said, marker);
    snprintf(why, size, "%s", at ? at + strlen(marker) : said[0] ? said : "the dynamic loader refused it");
}

enum library_loading library_loads(const char *library, char *why, size_t size)
{
    if (size)
        why[0] = '\0';
    const char *interpreter = own_interpreter();
    int pipe_ends[2];
    if (!interpreter || access(interpreter, X_OK) || pipe2(pipe_ends, O_CLOEXEC))
        return LIBRARY_UNKNOWN;
    pid_t child = fork();
    if (child < 0) {
        close(pipe_ends[0]);
        close(pipe_ends[1]);
        return LIBRARY_UNKNOWN;
    }
    if (child == 0) {
        /* The listing goes nowhere; the loader's complaint to the pipe. */
        int nothing = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (nothing < 0 || dup2(nothing, STDOUT_FILENO) < 0 || dup2(pipe_ends[1], STDERR_FILENO) < 0)
            _exit(126);
        unsetenv("LD_PRELOAD");
        execl(interpreter, interpreter, "--list", library, (char *)NULL);
        _exit(126); /* exec failed: the answer is unknown */
    }
    close(pipe_ends[1]);
    /* Read to the end (the first KiB kept), so the loader never blocks. */
    char said[1024], rest[512];
    size_t used = 0;
    for (;;) {
        int room = used < sizeof said - 1;
        ssize_t got = room ? read(pipe_ends[0], said + used, sizeof said - 1 - used)
                           : read(pipe_ends[0], rest, sizeof rest);
        if (got > 0) {
            used += room ? (size_t)got : 0;
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        break;
    }
    said[used] = '\0';
    close(pipe_ends[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            return LIBRARY_UNKNOWN;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return LIBRARY_LOADS;
    if (!WIFEXITED(status) || (WEXITSTATUS(status) == 126 && !used))
        return LIBRARY_UNKNOWN; /* the loader died, or never ran */
    loader_words(said, why, size);
    return LIBRARY_FAILS;
}
