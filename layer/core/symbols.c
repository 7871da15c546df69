/*
 * Symbolization: return address -> function, file:line (inlined calls
 * expanded), module, through elfutils' libdwfl/libdw.
 *
 * Modules
 * -------
 * dl_iterate_phdr() is the one source of truth for what is mapped: each
 * loaded object becomes a `module` (PT_LOAD span, load bias, name, GNU
 * build ID read from its PT_NOTE in memory). The table is rebuilt only
 * when the loader's dlpi_adds/dlpi_subs counters move, which costs one
 * dl_iterate_phdr() call that stops at the first object.
 *
 * A module that was dlclose()d stays in the table (loaded = 0) so that
 * addresses captured while it was mapped still name it, until a newly
 * loaded module overlaps its range (then the address means the new code)
 * or too many such modules pile up.
 *
 * Each module is reported to libdwfl lazily, the first time one of its
 * addresses is looked up, and is then used through its own Dwfl_Module:
 * dwfl_addrmodule() is never called, so a stale module left in the Dwfl
 * after its range was reused cannot answer for the new one. libdw opens
 * the file on disk; when the module's build ID in memory differs from the
 * file's (rebuilt since it was loaded), libdw's answers would be wrong and
 * only dladdr() is used.
 *
 * Notes on locking
 * ----------------
 * `lock` protects everything here: the module table, the Dwfl (libdw is
 * not thread-safe), the address cache and the string arena. Only reports
 * take it, never the object-tracking hot path.
 *
 * Lock order: `lock` may be held while dl_iterate_phdr() takes the
 * loader's short "write" lock, which the loader never holds while running
 * constructors. dladdr() and dlsym() take the loader's main lock, which
 * dlopen() holds while running constructors, so they are called only
 * with `lock` released; and livetrack_add_internal_module(), which a
 * front end may call from a constructor, never takes `lock` (it pushes
 * onto a lock-free list drained by the next reader).
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"
#include "symbols.h"

#define ARENA_CHUNK (64u * 1024u)
#define ARENA_ALIGN 8u
#define MAX_BUILD_ID 64u
/* Inlined calls kept per address; deeper chains keep the innermost. */
#define MAX_INLINE_FRAMES 32u
/* Unloaded modules kept for old addresses before the table forgets them. */
#define MAX_GONE_MODULES 128u
/* Modules left in the Dwfl after their range was reused, before the Dwfl
 * is rebuilt to free their ELF and DWARF data. */
#define MAX_STALE_DWFL_MODULES 32u
#define MAX_REGISTERED_NAMES 64u
#define NAME_BUFFER 512u

_Static_assert(_Alignof(livetrack_frame) <= ARENA_ALIGN, "arena alignment too small for frames");

/* ---- arena: strings and cached frames live until exit ------------------ */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used;
    size_t size;
    unsigned char data[];
} arena_chunk;
_Static_assert(offsetof(arena_chunk, data) % ARENA_ALIGN == 0, "arena chunk header breaks alignment");

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static arena_chunk *arena;

static void *arena_alloc(size_t size)
{
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (!arena || arena->size - arena->used < size) {
        size_t capacity = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        arena_chunk *chunk = lt_malloc(sizeof *chunk + capacity);
        if (!chunk)
            return NULL;
        chunk->next = arena;
        chunk->used = 0;
        chunk->size = capacity;
        arena = chunk;
    }
    void *p = arena->data + arena->used;
    arena->used += size;
    return p;
}

/* ---- interned strings --------------------------------------------------
 * File and function names repeat across addresses (and libdw's own copies
 * go away with a module), so each distinct string is stored once. */

static const char **intern_slots;
static size_t intern_mask; /* slots - 1; 0 before the first insert */
static size_t intern_count;

static uint64_t hash_bytes(const char *s, size_t length)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < length; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int intern_grow(void)
{
    size_t slots = intern_mask ? (intern_mask + 1) * 2 : 256;
    const char **table = lt_calloc(slots, sizeof *table);
    if (!table)
        return 0;
    for (size_t i = 0; intern_mask && i <= intern_mask; i++) {
        const char *s = intern_slots[i];
        if (!s)
            continue;
        size_t j = (size_t)hash_bytes(s, strlen(s)) & (slots - 1);
        while (table[j])
            j = (j + 1) & (slots - 1);
        table[j] = s;
    }
    lt_free(intern_slots);
    intern_slots = table;
    intern_mask = slots - 1;
    return 1;
}

/* The arena's copy of s[0, length), NULL for NULL or out of memory. */
static const char *intern_n(const char *s, size_t length)
{
    if (!s)
        return NULL;
    if ((intern_count + 1) * 2 > intern_mask + 1 && !intern_grow())
        return NULL;
    size_t i = (size_t)hash_bytes(s, length) & intern_mask;
    for (; intern_slots[i]; i = (i + 1) & intern_mask)
        if (strncmp(intern_slots[i], s, length) == 0 && intern_slots[i][length] == '\0')
            return intern_slots[i];
    char *copy = arena_alloc(length + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, length);
    copy[length] = '\0';
    intern_slots[i] = copy;
    intern_count++;
    return copy;
}

static const char *intern(const char *s) { return s ? intern_n(s, strlen(s)) : NULL; }

/* ---- modules ------------------------------------------------------------ */

typedef struct module {
    uintptr_t start, end; /* span of the PT_LOAD segments */
    uintptr_t base;       /* load bias (dlpi_addr) */
    const char *name;     /* shown in frames; interned */
    const char *file;     /* what libdw opens; interned */
    Dwfl_Module *dwfl_module;
    unsigned char build_id[MAX_BUILD_ID];
    unsigned char build_id_length; /* 0: none in memory */
    signed char dwfl_state;        /* 0: not reported yet, 1: usable, -1: libdw cannot help */
    unsigned char owner; /* an lt_frame_owner */
    unsigned char loaded; /* 0: dlclose()d, kept for addresses taken before */
    unsigned char is_exe;
} module;

static module *modules; /* sorted by start, no overlaps */
static size_t module_count, module_capacity;
static module *scratch; /* what dl_iterate_phdr reports, reused */
static size_t scratch_count, scratch_capacity;
static int scratch_failed;
static unsigned long long seen_adds, seen_subs;
static int table_valid;
static const char *exe_name; /* real path of the executable */

/* Names registered with livetrack_add_internal_module(): a module loaded
 * again under the same name stays internal. */
static const char *registered_names[MAX_REGISTERED_NAMES];
static size_t registered_count;

typedef struct pending_module {
    struct pending_module *next;
    uintptr_t address;
} pending_module;
static _Atomic(pending_module *) pending_internal;

static Dwfl *dwfl;
static size_t stale_dwfl_modules;

static void cache_clear(void);

/* Livetrack's modules, and the loader and runtime modules, whose frames
 * are never the application's. */
static lt_frame_owner owner_by_name(const char *path)
{
    static const char livetrack_prefix[] = "liblivetrack";
    static const char *const runtime_prefixes[] = {
        "libOpenCL.so", "libze_loader.so", "libze_tracing_layer.so", "libcuda.so",
        "libcudart.so", "libcupti.so",     "libnvidia-",
    };
    if (!path)
        return LT_FRAME_PROGRAM;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strncmp(base, livetrack_prefix, sizeof livetrack_prefix - 1) == 0)
        return LT_FRAME_LIVETRACK;
    for (size_t i = 0; i < sizeof runtime_prefixes / sizeof runtime_prefixes[0]; i++)
        if (strncmp(base, runtime_prefixes[i], strlen(runtime_prefixes[i])) == 0)
            return LT_FRAME_RUNTIME;
    for (size_t i = 0; i < registered_count; i++)
        if (registered_names[i] == path) /* both interned */
            return LT_FRAME_RUNTIME;
    return LT_FRAME_PROGRAM;
}

/* The GNU build ID note of a loaded object, read from its mapped PT_NOTE
 * segments (only the note headers are parsed, not DWARF). */
static void read_build_id(const struct dl_phdr_info *info, module *m)
{
    m->build_id_length = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        size_t align = ph->p_align == 8 ? 8 : 4;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_filesz;
        while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)(const void *)p;
            size_t name_size = (note->n_namesz + align - 1) & ~(align - 1);
            size_t desc_size = (note->n_descsz + align - 1) & ~(align - 1);
            const unsigned char *name = p + sizeof *note;
            if (name_size > (size_t)(end - name) || desc_size > (size_t)(end - name) - name_size)
                break;
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                note->n_descsz > 0 && note->n_descsz <= MAX_BUILD_ID) {
                memcpy(m->build_id, name + name_size, note->n_descsz);
                m->build_id_length = (unsigned char)note->n_descsz;
                return;
            }
            p = name + name_size + desc_size;
        }
    }
}

static int push_scratch(const module *m)
{
    if (scratch_count == scratch_capacity) {
        size_t capacity = scratch_capacity ? scratch_capacity * 2 : 64;
        module *grown = lt_malloc(capacity * sizeof *grown);
        if (!grown)
            return 0;
        if (scratch_count)
            memcpy(grown, scratch, scratch_count * sizeof *grown);
        lt_free(scratch);
        scratch = grown;
        scratch_capacity = capacity;
    }
    scratch[scratch_count++] = *m;
    return 1;
}

static int collect_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    module m;
    memset(&m, 0, sizeof m);
    uintptr_t low = UINTPTR_MAX, high = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (start < low)
            low = start;
        if (start + ph->p_memsz > high)
            high = start + ph->p_memsz;
    }
    if (low >= high)
        return 0;
    m.start = low;
    m.end = high;
    m.base = info->dlpi_addr;
    /* The loader names the executable "" (it comes first). */
    if (!info->dlpi_name || !info->dlpi_name[0]) {
        if (scratch_count != 0)
            return 0; /* some other unnamed object: nothing to show or open */
        m.is_exe = 1;
        m.name = exe_name;
    } else {
        m.name = intern(info->dlpi_name);
    }
    m.file = m.name;
    if (!m.name) {
        scratch_failed = 1; /* out of memory */
        return 0;
    }
    read_build_id(info, &m);
    m.loaded = 1;
    if (!push_scratch(&m))
        scratch_failed = 1;
    return 0;
}

typedef struct load_counters {
    unsigned long long adds, subs;
} load_counters;

static int read_counters(struct dl_phdr_info *info, size_t size, void *data)
{
    load_counters *c = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c->adds = info->dlpi_adds;
        c->subs = info->dlpi_subs;
    }
    return 1; /* the counters are the same on every object: stop */
}

static int module_by_start(const void *a, const void *b)
{
    const module *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int overlaps(const module *a, const module *b) { return a->start < b->end && b->start < a->end; }

static int same_module(const module *a, const module *b)
{
    return a->start == b->start && a->end == b->end && a->base == b->base && a->name == b->name &&
           a->build_id_length == b->build_id_length && memcmp(a->build_id, b->build_id, a->build_id_length) == 0;
}

static void drop_module(size_t index)
{
    if (modules[index].dwfl_module)
        stale_dwfl_modules++;
    modules[index] = modules[--module_count];
}

/* Merge what is mapped now into the table. Returns 0 on out of memory
 * (the old table stays). */
static int rebuild_table(void)
{
    if (!exe_name) {
        char path[4096];
        const char *name = realpath("/proc/self/exe", path);
        if (!name) { /* deleted or replaced: "/path/prog (deleted)" still says which */
            ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
            path[length > 0 ? length : 0] = '\0';
            name = length > 0 ? path : "/proc/self/exe";
        }
        exe_name = intern(name);
    }
    scratch_count = 0;
    scratch_failed = 0;
    dl_iterate_phdr(collect_module, NULL);
    if (scratch_failed)
        return 0;

    size_t needed = module_count + scratch_count;
    if (needed > module_capacity) {
        size_t capacity = needed * 2;
        module *grown = lt_malloc(capacity * sizeof *grown);
        if (!grown)
            return 0;
        if (module_count)
            memcpy(grown, modules, module_count * sizeof *grown);
        lt_free(modules);
        modules = grown;
        module_capacity = capacity;
    }
    for (size_t i = 0; i < module_count; i++)
        modules[i].loaded = 0;
    size_t old_count = module_count;
    for (size_t s = 0; s < scratch_count; s++) {
        module *now = &scratch[s];
        size_t i = 0;
        while (i < old_count && !same_module(&modules[i], now))
            i++;
        if (i < old_count) { /* unchanged: keep its Dwfl_Module */
            modules[i].loaded = 1;
            continue;
        }
        now->owner = (unsigned char)owner_by_name(now->name);
        modules[module_count++] = *now;
    }

    /* An unloaded module whose range is now someone else's no longer
     * answers for it; nor do cached frames taken from it. */
    int dropped = 0;
    size_t gone = 0;
    for (size_t i = 0; i < module_count;) {
        if (modules[i].loaded) {
            i++;
            continue;
        }
        int reused = 0;
        for (size_t j = 0; j < module_count && !reused; j++)
            reused = modules[j].loaded && overlaps(&modules[i], &modules[j]);
        if (reused) {
            drop_module(i);
            dropped = 1;
        } else {
            gone++;
            i++;
        }
    }
    if (gone > MAX_GONE_MODULES) {
        for (size_t i = 0; i < module_count;)
            if (!modules[i].loaded)
                drop_module(i);
            else
                i++;
        dropped = 1;
    }
    qsort(modules, module_count, sizeof *modules, module_by_start);
    if (dropped)
        cache_clear();
    if (stale_dwfl_modules > MAX_STALE_DWFL_MODULES && dwfl) {
        /* Everything shown was interned, so the Dwfl can go. */
        dwfl_end(dwfl);
        dwfl = NULL;
        stale_dwfl_modules = 0;
        for (size_t i = 0; i < module_count; i++) {
            modules[i].dwfl_module = NULL;
            modules[i].dwfl_state = 0;
        }
    }
    return 1;
}

static module *find_module(uintptr_t pc)
{
    size_t low = 0, high = module_count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (pc < modules[mid].start)
            high = mid;
        else if (pc >= modules[mid].end)
            low = mid + 1;
        else
            return &modules[mid];
    }
    return NULL;
}

/* Modules named by livetrack_add_internal_module() since the last call. */
static void apply_registrations(void)
{
    pending_module *p = atomic_exchange(&pending_internal, NULL);
    while (p) {
        module *m = find_module(p->address);
        if (m) {
            /* Registered: at least a runtime's. Livetrack's own modules
             * (a front end registers itself) stay livetrack's. */
            if (m->owner == LT_FRAME_PROGRAM)
                m->owner = LT_FRAME_RUNTIME;
            size_t i = 0;
            while (i < registered_count && registered_names[i] != m->name)
                i++;
            if (i == registered_count && registered_count < MAX_REGISTERED_NAMES && m->name)
                registered_names[registered_count++] = m->name;
        }
        pending_module *next = p->next;
        lt_free(p);
        p = next;
    }
}

/* With `lock` held: make the table match what is mapped now. */
static void refresh_modules(void)
{
    load_counters c = {0, 0};
    dl_iterate_phdr(read_counters, &c);
    if (!table_valid || c.adds != seen_adds || c.subs != seen_subs) {
        if (rebuild_table()) {
            table_valid = 1;
            seen_adds = c.adds;
            seen_subs = c.subs;
        }
    }
    if (atomic_load_explicit(&pending_internal, memory_order_relaxed))
        apply_registrations();
}

/* ---- libdw ------------------------------------------------------------- */

static int debuginfod_configured;

/* Never used: every module is reported with its file (dwfl_report_elf). */
static int find_elf_none(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
                         Elf **elfp)
{
    (void)mod, (void)userdata, (void)name, (void)base, (void)file_name;
    *elfp = NULL;
    return -1;
}

/* Separate debug info from the local disk only. The standard search ends
 * with a debuginfod download when DEBUGINFOD_URLS is set (some
 * distributions set it in every login shell): a report at exit must not
 * wait on the network, so then only the local build-ID directories are
 * searched (where Debian's -dbgsym packages install). */
static int find_debuginfo_local(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                                const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                                char **debuginfo_file_name)
{
    if (debuginfod_configured)
        return dwfl_build_id_find_debuginfo(mod, userdata, name, base, file_name, debuglink_file, debuglink_crc,
                                            debuginfo_file_name);
    return dwfl_standard_find_debuginfo(mod, userdata, name, base, file_name, debuglink_file, debuglink_crc,
                                        debuginfo_file_name);
}

static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = find_elf_none,
    .find_debuginfo = find_debuginfo_local,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = NULL,
};

static Dwfl_Module *report_file(const module *m, const char *file)
{
    /* add_p_vaddr: the load bias is what dl_iterate_phdr calls dlpi_addr,
     * also for the rare library linked at a non-zero address. */
    dwfl_report_begin_add(dwfl);
    Dwfl_Module *dm = dwfl_report_elf(dwfl, file, file, -1, m->base, true);
    dwfl_report_end(dwfl, NULL, NULL);
    if (!dm)
        return NULL;
    const unsigned char *bits;
    GElf_Addr vaddr;
    int length = dwfl_module_build_id(dm, &bits, &vaddr);
    if (m->build_id_length && length > 0 &&
        ((size_t)length != m->build_id_length || memcmp(bits, m->build_id, m->build_id_length) != 0))
        return NULL; /* the file was replaced since it was loaded */
    return dm;
}

static Dwfl_Module *module_dwfl(module *m)
{
    if (m->dwfl_state)
        return m->dwfl_state > 0 ? m->dwfl_module : NULL;
    if (!dwfl) {
        const char *urls = getenv("DEBUGINFOD_URLS");
        debuginfod_configured = urls && urls[0];
        dwfl = dwfl_begin(&dwfl_callbacks);
        if (!dwfl)
            return NULL; /* try again next time: out of memory */
    }
    m->dwfl_state = -1;
    if (!m->file || !strchr(m->file, '/'))
        return NULL; /* the vDSO ("linux-vdso.so.1") has no file */
    Dwfl_Module *dm = report_file(m, m->file);
    /* A deleted or rebuilt executable: the mapped file is still readable
     * through /proc. */
    if (!dm && m->is_exe)
        dm = report_file(m, "/proc/self/exe");
    if (dm) {
        m->dwfl_module = dm;
        m->dwfl_state = 1;
    }
    return dm;
}

/* __cxa_demangle, when the process has a C++ runtime. Looked up with
 * `lock` released (dlsym takes the loader's lock). */
typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
static _Atomic(demangle_fn) demangler;
static atomic_int demangler_looked_up;

static void look_up_demangler(void)
{
    if (atomic_load_explicit(&demangler_looked_up, memory_order_acquire))
        return;
    void *symbol = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    demangle_fn fn;
    memcpy(&fn, &symbol, sizeof fn); /* object pointer to function pointer */
    atomic_store(&demangler, fn);
    atomic_store_explicit(&demangler_looked_up, 1, memory_order_release);
}

static const char *intern_function_name(const char *name)
{
    if (!name)
        return NULL;
    /* Symbol tables of debug files keep symbol versions in the name
     * ("__libc_start_main@@GLIBC_2.34"); '@' is in no C or mangled name. */
    size_t length = strcspn(name, "@");
    demangle_fn fn = atomic_load(&demangler);
    if (fn && name[0] == '_' && name[1] == 'Z' && length < NAME_BUFFER) {
        char mangled[NAME_BUFFER];
        memcpy(mangled, name, length);
        mangled[length] = '\0';
        int status = -1;
        char *plain = fn(mangled, NULL, NULL, &status);
        if (plain && status == 0) {
            const char *interned = intern(plain);
            free(plain); /* allocated by the C++ runtime with malloc */
            if (interned)
                return interned;
        } else {
            free(plain);
        }
    }
    return intern_n(name, length);
}

/* Name of a subprogram or inlined instance: the linkage name when it
 * demangles (qualified C++ names), else DW_AT_name; both through the
 * abstract origin, where an inlined instance keeps them. */
static const char *die_function_name(Dwarf_Die *die)
{
    Dwarf_Attribute attribute;
    if (atomic_load(&demangler)) {
        const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attribute));
        if (!linkage)
            linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attribute));
        if (linkage)
            return intern_function_name(linkage);
    }
    return intern(dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attribute)));
}

typedef struct location {
    const char *file;      /* libdw's string, interned when stored */
    const char *directory; /* the unit's DW_AT_comp_dir, which a relative file is relative to; may be NULL */
    int line;
    int column;
} location;

/* The directory the compiler ran in, as the unit records it. */
static const char *unit_directory(Dwarf_Die *unit)
{
    Dwarf_Attribute attribute;
    return dwarf_formstring(dwarf_attr(unit, DW_AT_comp_dir, &attribute));
}

/* Where an inlined instance was called from: its DW_AT_call_* attributes,
 * the file an index into the line table of the unit holding the DIE. */
static location call_site(Dwarf_Die *inlined)
{
    location where = {NULL, NULL, 0, 0};
    Dwarf_Attribute attribute;
    Dwarf_Word value;
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attribute), &value) == 0)
        where.line = (int)value;
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_column, &attribute), &value) == 0)
        where.column = (int)value;
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attribute), &value) == 0) {
        Dwarf_Die unit;
        Dwarf_Files *files;
        size_t count;
        if (dwarf_diecu(inlined, &unit, NULL, NULL) && dwarf_getsrcfiles(&unit, &files, &count) == 0 &&
            value < count) {
            where.file = dwarf_filesrc(files, value, NULL, NULL);
            where.directory = unit_directory(&unit);
        }
    }
    return where;
}

/* The interned path of `where`'s file. libdw joins a file name only with
 * its line table's directory entry, and that is relative ("external",
 * file "lib.c") when gcc was given a relative path (`gcc -g
 * external/lib.c`) or clang an absolute one below the directory it runs
 * in. So a relative name is prefixed with the compilation directory, as
 * addr2line does, and nothing else is changed. Otherwise the report would
 * say "external/lib.c", and the documented `file:` suppression of
 * everything under an "external" directory would never match it. NULL
 * when out of memory, as intern(). */
static const char *intern_source_path(location where)
{
    if (!where.file || where.file[0] == '/' || !where.directory || !where.directory[0])
        return intern(where.file);
    size_t directory_length = strlen(where.directory), file_length = strlen(where.file);
    int separator = where.directory[directory_length - 1] != '/';
    char *path = lt_malloc(directory_length + separator + file_length + 1);
    if (!path)
        return NULL;
    memcpy(path, where.directory, directory_length);
    if (separator)
        path[directory_length] = '/';
    memcpy(path + directory_length + separator, where.file, file_length + 1);
    const char *interned = intern(path);
    lt_free(path);
    return interned;
}

static void set_location(livetrack_frame *f, location where)
{
    f->file = intern_source_path(where);
    f->line = where.line > 0 ? (unsigned)where.line : 0;
    f->column = where.column > 0 ? (unsigned)where.column : 0;
}

/* The unit holding pc (module-relative `pc - bias`), found by each
 * unit's own ranges: for a module without .debug_aranges, where
 * dwfl_module_addrdie finds nothing. clang writes none by default, gcc
 * does; libdw 0.188 looks no further. O(units), but only for modules
 * without the table, and each address is symbolized once (cached). */
static Dwarf_Die *unit_by_ranges(Dwfl_Module *dm, Dwarf_Addr pc, Dwarf_Die *storage, Dwarf_Addr *bias)
{
    Dwarf *dwarf = dwfl_module_getdwarf(dm, bias);
    if (!dwarf)
        return NULL;
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t unit_type;
    while (dwarf_get_units(dwarf, cu, &cu, &version, &unit_type, storage, NULL) == 0)
        if ((unit_type == DW_UT_compile || unit_type == DW_UT_partial) && dwarf_haspc(storage, pc - *bias) > 0)
            return storage;
    return NULL;
}

/* The source line of pc in `unit` from the unit itself (dwfl_module_getsrc
 * goes through the same address table as dwfl_module_addrdie). */
static location unit_line(Dwarf_Die *unit, Dwarf_Addr address)
{
    location where = {NULL, NULL, 0, 0};
    Dwarf_Line *line = dwarf_getsrc_die(unit, address);
    if (line) {
        where.file = dwarf_linesrc(line, NULL, NULL);
        where.directory = unit_directory(unit);
        dwarf_lineno(line, &where.line);
        dwarf_linecol(line, &where.column);
    }
    return where;
}

/* Frames for pc from libdw: inlined instances innermost first, then the
 * real function. Returns how many were written to out (at most `cap`,
 * which is >= 1); out[0] is prefilled with the address and module. *
 * `fallback_name` is dladdr's answer, used when libdw has none. */
static size_t describe(module *m, Dwarf_Addr pc, const char *fallback_name, livetrack_frame *out, size_t cap)
{
    livetrack_frame base = out[0];
    Dwfl_Module *dm = m ? module_dwfl(m) : NULL;
    location where = {NULL, NULL, 0, 0};
    size_t count = 0;
    Dwarf_Die function_die;
    int have_function_die = 0;

    Dwarf_Addr bias = 0;
    Dwarf_Die *unit = dm ? dwfl_module_addrdie(dm, pc, &bias) : NULL;
    Dwarf_Die found_by_ranges;
    int by_ranges = 0;
    if (dm && !unit)
        by_ranges = (unit = unit_by_ranges(dm, pc, &found_by_ranges, &bias)) != NULL;
    /* libdw answers with the nearest unit even for an address in a hole
     * of its ranges, and then with that unit's last line: _start (from
     * crt1.o, no DWARF) sits between main in .text.startup and the rest
     * of main's unit, and was given a line of main's file. Code that no
     * unit covers has no source location. */
    if (unit && dwarf_haspc(unit, pc - bias) != 0) { /* -1, an error: keep libdw's answer */
        Dwfl_Line *line = by_ranges ? NULL : dwfl_module_getsrc(dm, pc);
        if (line) {
            where.file = dwfl_lineinfo(line, NULL, &where.line, &where.column, NULL, NULL);
            where.directory = dwfl_line_comp_dir(line);
        } else if (by_ranges) {
            where = unit_line(unit, pc - bias);
        }

        Dwarf_Die *scopes = NULL;
        int depth = dwarf_getscopes(unit, pc - bias, &scopes);
        int inlined = 0;
        for (int i = 0; i < depth && !inlined; i++)
            inlined = dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
        if (inlined) {
            /* dwarf_getscopes() continues from an inlined instance into
             * its abstract definition (for variable lookup); the concrete
             * chain of callers comes from the innermost DIE's parents.
             * (A second walk of the unit, so only when needed.) */
            Dwarf_Die innermost = scopes[0];
            free(scopes);
            scopes = NULL;
            depth = dwarf_getscopes_die(&innermost, &scopes);
        }
        for (int i = 0; i < depth; i++) {
            int tag = dwarf_tag(&scopes[i]);
            if (tag == DW_TAG_subprogram) {
                function_die = scopes[i];
                have_function_die = 1;
                break;
            }
            if (tag != DW_TAG_inlined_subroutine)
                continue;
            if (count + 1 < cap) { /* keep room for the real function */
                livetrack_frame *f = &out[count++];
                *f = base;
                f->function = die_function_name(&scopes[i]);
                f->inlined = 1;
                set_location(f, where);
            }
            where = call_site(&scopes[i]);
        }
        free(scopes);
    }

    livetrack_frame *f = &out[count++];
    *f = base;
    f->inlined = 0;
    set_location(f, where);
    if (dm) {
        GElf_Off offset;
        GElf_Sym symbol;
        f->function = intern_function_name(dwfl_module_addrinfo(dm, pc, &offset, &symbol, NULL, NULL, NULL));
    }
    if (!f->function && have_function_die)
        f->function = die_function_name(&function_die);
    if (!f->function)
        f->function = intern_function_name(fallback_name);
    return count;
}

/* ---- address cache ----------------------------------------------------- */

typedef struct cache_slot {
    uintptr_t address; /* 0: empty */
    livetrack_frame *frames;
    size_t count;
} cache_slot;

static cache_slot *cache;
static size_t cache_mask; /* slots - 1; 0 before the first insert */
static size_t cache_count;

static size_t cache_index(uintptr_t address) { return (size_t)(((uint64_t)address * 0x9e3779b97f4a7c15ull) >> 20); }

static cache_slot *cache_find(uintptr_t address)
{
    if (!cache_count)
        return NULL;
    for (size_t i = cache_index(address) & cache_mask;; i = (i + 1) & cache_mask) {
        if (cache[i].address == address)
            return &cache[i];
        if (!cache[i].address)
            return NULL;
    }
}

static void cache_clear(void)
{
    if (cache)
        memset(cache, 0, (cache_mask + 1) * sizeof *cache);
    cache_count = 0;
}

static int cache_grow(void)
{
    size_t slots = cache_mask ? (cache_mask + 1) * 2 : 1024;
    cache_slot *table = lt_calloc(slots, sizeof *table);
    if (!table)
        return 0;
    for (size_t i = 0; cache_mask && i <= cache_mask; i++) {
        if (!cache[i].address)
            continue;
        size_t j = cache_index(cache[i].address) & (slots - 1);
        while (table[j].address)
            j = (j + 1) & (slots - 1);
        table[j] = cache[i];
    }
    lt_free(cache);
    cache = table;
    cache_mask = slots - 1;
    return 1;
}

/* Keep frames[0, count) for address; silently not cached when out of memory. */
static void cache_insert(uintptr_t address, const livetrack_frame *frames, size_t count)
{
    if ((cache_count + 1) * 2 > cache_mask + 1 && !cache_grow())
        return;
    livetrack_frame *copy = arena_alloc(count * sizeof *copy);
    if (!copy)
        return;
    memcpy(copy, frames, count * sizeof *copy);
    size_t i = cache_index(address) & cache_mask;
    while (cache[i].address)
        i = (i + 1) & cache_mask;
    cache[i].address = address;
    cache[i].frames = copy;
    cache[i].count = count;
    cache_count++;
}

static size_t copy_out(const cache_slot *slot, livetrack_frame *out, size_t max)
{
    /* Cut from the outside: the innermost frame holds the exact line. */
    size_t n = slot->count < max ? slot->count : max;
    memcpy(out, slot->frames, n * sizeof *out);
    return n;
}

/* ---- public ------------------------------------------------------------ */

size_t lt_symbolize_address(uintptr_t address, livetrack_frame *out, size_t max)
{
    if (!out || max == 0)
        return 0;
    pthread_mutex_lock(&lock);
    refresh_modules();
    cache_slot *hit = address ? cache_find(address) : NULL;
    if (hit) {
        size_t n = copy_out(hit, out, max);
        pthread_mutex_unlock(&lock);
        return n;
    }
    pthread_mutex_unlock(&lock);

    /* Miss. What needs the loader's lock is asked first, unlocked. The
     * name is copied at once: dladdr's string lives in the module. */
    uintptr_t pc = address ? address - 1 : 0;
    char fallback[NAME_BUFFER];
    const char *fallback_name = NULL;
    Dl_info info;
    if (address > 1 && dladdr((void *)pc, &info) && info.dli_sname) {
        size_t length = strnlen(info.dli_sname, sizeof fallback - 1);
        memcpy(fallback, info.dli_sname, length);
        fallback[length] = '\0';
        fallback_name = fallback;
    }
    look_up_demangler();

    livetrack_frame frames[MAX_INLINE_FRAMES];
    memset(&frames[0], 0, sizeof frames[0]);
    frames[0].address = address;
    pthread_mutex_lock(&lock);
    refresh_modules(); /* modules may have come and gone meanwhile */
    hit = address ? cache_find(address) : NULL;
    if (hit) { /* another thread got there first */
        size_t n = copy_out(hit, out, max);
        pthread_mutex_unlock(&lock);
        return n;
    }
    module *m = address > 1 ? find_module(pc) : NULL;
    if (m) {
        frames[0].module = m->name;
        frames[0].module_offset = address - m->base;
    }
    /* The whole chain is always described (and cached), whatever max is.
     * libdw keeps the files it opens (the module's, its debug file) until
     * the Dwfl ends: never as the program's closed stdin or stdout. */
    lt_std_fds_held std_fds;
    lt_std_fds_hold(&std_fds);
    size_t count = describe(m, pc, fallback_name, frames, MAX_INLINE_FRAMES);
    lt_std_fds_release(&std_fds);
    /* Addresses in no module are not cached: they are cheap to answer and
     * a later dlopen() may map code there. */
    if (m)
        cache_insert(address, frames, count);
    cache_slot slot = {address, frames, count};
    size_t n = copy_out(&slot, out, max);
    pthread_mutex_unlock(&lock);
    return n;
}

lt_frame_owner lt_address_owner(uintptr_t address)
{
    if (address == 0)
        return LT_FRAME_PROGRAM;
    pthread_mutex_lock(&lock);
    refresh_modules();
    /* A return address may sit just past its module's last byte (a call
     * to a noreturn function at the very end): look up the call itself. */
    module *m = find_module(address - 1);
    lt_frame_owner owner = m ? (lt_frame_owner)m->owner : LT_FRAME_PROGRAM;
    pthread_mutex_unlock(&lock);
    return owner;
}

int lt_address_is_internal(uintptr_t address) { return lt_address_owner(address) != LT_FRAME_PROGRAM; }

LIVETRACK_API void livetrack_add_internal_module(const void *address)
{
    if (!address)
        return;
    pending_module *p = lt_malloc(sizeof *p);
    if (!p)
        return;
    p->address = (uintptr_t)address;
    p->next = atomic_load(&pending_internal);
    while (!atomic_compare_exchange_weak(&pending_internal, &p->next, p))
        ;
}

/* fork(): taken last, after every other core lock (lifecycle.c). */
void lt_symbols_lock(void) { pthread_mutex_lock(&lock); }
void lt_symbols_unlock(void) { pthread_mutex_unlock(&lock); }
