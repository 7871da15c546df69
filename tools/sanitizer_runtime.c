/*
 * The sanitizer runtime a program needs first in LD_PRELOAD (see
 * sanitizer_runtime.h).
 *
 * AddressSanitizer refuses to start unless its runtime is the first
 * library of the process ("ASan runtime does not come first in initial
 * library list"), and livetrack run preloads its front ends: a program
 * built with -fsanitize=address would not run under it. The runtime it
 * links is read from the executable's dynamic section (DT_NEEDED), the
 * only place that says it without running the program.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "sanitizer_runtime.h"

int is_sanitizer_runtime(const char *path)
{
    static const char *const runtimes[] = {"libasan.so", "libhwasan.so", "libtsan.so", "liblsan.so", "libubsan.so",
                                           "libmsan.so", "libclang_rt.asan", "libclang_rt.hwasan"};
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++)
        if (!strncmp(base, runtimes[i], strlen(runtimes[i])))
            return 1;
    return 0;
}

/* The program's file as execvp would find it (an empty entry of PATH is
 * the working directory; no PATH is glibc's /bin:/usr/bin); NULL when
 * not found. */
static char *program_file(const char *program)
{
    if (strchr(program, '/'))
        return cli_strdup(program);
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *at = path;; at++) {
        size_t length = strcspn(at, ":");
        char *candidate = cli_alloc(length + strlen(program) + 3);
        if (length)
            sprintf(candidate, "%.*s/%s", (int)length, at, program);
        else
            sprintf(candidate, "./%s", program);
        /* execvp goes on past a directory or a FIFO of that name (EACCES) */
        struct stat status;
        if (access(candidate, X_OK) == 0 && stat(candidate, &status) == 0 && S_ISREG(status.st_mode))
            return candidate;
        free(candidate);
        at += length;
        if (!*at)
            return NULL;
    }
}

static int read_at(int fd, void *out, size_t size, uint64_t offset)
{
    return offset <= (uint64_t)INT64_MAX && pread(fd, out, size, (off_t)offset) == (ssize_t)size;
}

/* A virtual address of the file's loaded image as a file offset, from
 * its PT_LOAD headers; 0 when no segment holds it. */
static uint64_t file_offset(const Elf64_Phdr *headers, size_t count, uint64_t address)
{
    for (size_t i = 0; i < count; i++)
        if (headers[i].p_type == PT_LOAD && address >= headers[i].p_vaddr &&
            address - headers[i].p_vaddr < headers[i].p_filesz)
            return headers[i].p_offset + (address - headers[i].p_vaddr);
    return 0;
}

/* The first DT_NEEDED entry of an ELF64 file that is a sanitizer runtime. */
static int needed_runtime(int fd, char *out, size_t size)
{
    Elf64_Ehdr header;
    if (!read_at(fd, &header, sizeof header, 0) || memcmp(header.e_ident, ELFMAG, SELFMAG) ||
        header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr) || !header.e_phnum)
        return 0; /* a script, or not a 64-bit ELF file */
    Elf64_Phdr *headers = cli_alloc(header.e_phnum * sizeof *headers);
    int found = 0;
    if (!read_at(fd, headers, header.e_phnum * sizeof *headers, header.e_phoff))
        goto done;
    const Elf64_Phdr *dynamic = NULL;
    for (size_t i = 0; i < header.e_phnum; i++)
        if (headers[i].p_type == PT_DYNAMIC)
            dynamic = &headers[i];
    if (!dynamic || dynamic->p_filesz / sizeof(Elf64_Dyn) > 4096)
        goto done; /* static: nothing is loaded before it */
    size_t entries = dynamic->p_filesz / sizeof(Elf64_Dyn);
    Elf64_Dyn *table = cli_alloc(entries * sizeof *table + 1);
    if (read_at(fd, table, entries * sizeof *table, dynamic->p_offset)) {
        uint64_t strings = 0;
        for (size_t i = 0; i < entries && table[i].d_tag != DT_NULL; i++)
            if (table[i].d_tag == DT_STRTAB)
                strings = file_offset(headers, header.e_phnum, table[i].d_un.d_ptr);
        for (size_t i = 0; strings && i < entries && table[i].d_tag != DT_NULL && !found; i++) {
            if (table[i].d_tag != DT_NEEDED)
                continue;
            char name[256] = "";
            ssize_t got = pread(fd, name, sizeof name - 1, (off_t)(strings + table[i].d_un.d_val));
            name[got > 0 ? got : 0] = '\0';
            if (*name && strlen(name) < size && is_sanitizer_runtime(name)) {
                memcpy(out, name, strlen(name) + 1);
                found = 1;
            }
        }
    }
    free(table);
done:
    free(headers);
    return found;
}

int sanitizer_runtime_needed(const char *program, char *out, size_t size)
{
    char *file = program_file(program);
    if (!file)
        return 0;
    /* Not blocking on a FIFO (exec refuses one later); only a regular
     * file is read. */
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    free(file);
    if (fd < 0)
        return 0;
    struct stat status;
    int found = fstat(fd, &status) == 0 && S_ISREG(status.st_mode) && needed_runtime(fd, out, size);
    close(fd);
    return found;
}
