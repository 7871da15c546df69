/*
 * Is this code image one that nvcc compiled into a program or library?
 *
 * nvcc puts every translation unit's device code in an ELF section named
 * .nv_fatbin, and a small wrapper pointing at it (the one the runtime
 * registers) in .nvFatBinSegment. The CUDA runtime hands the driver the
 * wrapper (seen with CUDA 13, driver 580: the image passed lies in
 * .nvFatBinSegment) or, in other releases, the code itself, when it loads
 * a kernel's library or module for itself. A program that loads code
 * with the driver API passes an image it read from a file or embedded on
 * its own (.rodata, the heap), never the runtime's. So an
 * image inside either section of a loaded object tells the runtime's loads
 * apart where nothing else does: CUDA 13 loads a kernel's library in a
 * launch's first step, before CUPTI's runtime callback for the launch,
 * and a static runtime's frames are the program's own.
 *
 * Section headers are not mapped, so they are read from the object's
 * file: once per code load, which the runtime does once per image.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "cuda_front_end.h"

#define PATH_SIZE 4096

typedef struct object_of {
    uintptr_t address;
    uintptr_t base; /* where the object was loaded (its dlpi_addr) */
    char path[PATH_SIZE];
    int found;
} object_of;

static int find_object(struct dl_phdr_info *info, size_t size, void *raw)
{
    (void)size;
    object_of *wanted = raw;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + segment->p_vaddr;
        if (segment->p_type != PT_LOAD || wanted->address < start || wanted->address - start >= segment->p_memsz)
            continue;
        wanted->base = info->dlpi_addr;
        /* The program itself has no name here: open_program() finds it. */
        const char *path = info->dlpi_name ? info->dlpi_name : "";
        if (strlen(path) >= sizeof wanted->path)
            return 1; /* found, but unreadable: not counted */
        strcpy(wanted->path, path);
        wanted->found = 1;
        return 1;
    }
    return 0;
}

static int read_at(int fd, void *out, size_t size, uint64_t offset)
{
    return pread(fd, out, size, (off_t)offset) == (ssize_t)size;
}

static const char *const nvcc_sections[] = {".nvFatBinSegment", ".nv_fatbin"};

/* Whether the name at `offset` of the name table is one of nvcc's, whole. */
static int nvcc_section_name(int fd, const ElfW(Shdr) *names, uint64_t offset)
{
    char name[sizeof ".nvFatBinSegment"]; /* the longer name and its NUL */
    if (offset >= names->sh_size)
        return 0;
    uint64_t readable = names->sh_size - offset;
    size_t length = readable < sizeof name ? (size_t)readable : sizeof name;
    if (!read_at(fd, name, length, names->sh_offset + offset) || !memchr(name, '\0', length))
        return 0; /* longer than both, or cut off */
    for (size_t i = 0; i < sizeof nvcc_sections / sizeof nvcc_sections[0]; i++)
        if (!strcmp(name, nvcc_sections[i]))
            return 1;
    return 0;
}

/* Whether `offset` (from the object's base) lies in one of its nvcc
 * sections. Only those are looked at, by name: other sections may span
 * theirs in address (.tbss takes addresses it never occupies). */
static int in_nvcc_section(int fd, uint64_t offset)
{
    ElfW(Ehdr) header;
    if (!read_at(fd, &header, sizeof header, 0) || memcmp(header.e_ident, ELFMAG, SELFMAG) ||
        header.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
        header.e_shentsize != sizeof(ElfW(Shdr)) || header.e_shoff == 0)
        return 0;
    /* Extended numbering: past SHN_LORESERVE sections, the count and the
     * name table's index are in section 0. */
    uint64_t count = header.e_shnum, names_index = header.e_shstrndx;
    if (count == 0 || names_index == SHN_XINDEX) {
        ElfW(Shdr) first;
        if (!read_at(fd, &first, sizeof first, header.e_shoff))
            return 0;
        if (count == 0)
            count = first.sh_size;
        if (names_index == SHN_XINDEX)
            names_index = first.sh_link;
    }
    ElfW(Shdr) names;
    if (names_index == SHN_UNDEF || names_index >= count ||
        !read_at(fd, &names, sizeof names, header.e_shoff + names_index * sizeof names))
        return 0;
    for (uint64_t i = 0; i < count; i++) {
        ElfW(Shdr) section;
        if (!read_at(fd, &section, sizeof section, header.e_shoff + i * sizeof section))
            return 0;
        if (!(section.sh_flags & SHF_ALLOC) || (section.sh_flags & SHF_TLS) || offset < section.sh_addr ||
            offset - section.sh_addr >= section.sh_size)
            continue;
        if (nvcc_section_name(fd, &names, section.sh_name))
            return 1;
    }
    return 0;
}

/* The file mapped at `address`, as /proc/self/maps names it, into
 * path[PATH_SIZE]. 0: not found. */

static int find_mapped_file(uintptr_t address, char *path)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps)
        return 0;
    char line[PATH_SIZE + 128];
    int found = 0;
    while (!found && fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        int name_at = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &start, &end, &name_at) < 2 || address < start ||
            address >= end || !name_at || line[name_at] != '/')
            continue;
        size_t length = strcspn(line + name_at, "\n");
        if (length < PATH_SIZE) {
            memcpy(path, line + name_at, length);
            path[length] = '\0';
            found = 1;
        }
        break;
    }
    fclose(maps);
    return found;
}

/* The program's own file, open. /proc/self/exe opens it even when it was
 * deleted or replaced since it started (its path then reads
 * "PATH (deleted)"). But when the program was started as
 * "ld.so ./program", /proc/self/exe is the loader: then the kernel ran
 * no interpreter (AT_BASE is 0), and the file the maps show at the
 * image is the program. */
static int open_program(uintptr_t address)
{
    if (getauxval(AT_BASE))
        return open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    char path[PATH_SIZE];
    return find_mapped_file(address, path) ? open(path, O_RDONLY | O_CLOEXEC) : -1;
}

int ltcu_code_compiled_in(const void *image)
{
    if (!image)
        return 0;
    object_of object = {.address = (uintptr_t)image};
    dl_iterate_phdr(find_object, &object);
    if (!object.found)
        return 0; /* on the heap: read from a file or made at run time */
    int fd = object.path[0] ? open(object.path, O_RDONLY | O_CLOEXEC) : open_program(object.address);
    if (fd < 0)
        return 0;
    int found = in_nvcc_section(fd, (uint64_t)(object.address - object.base));
    close(fd);
    return found;
}
