/* Names of domains and of each domain's object types. */
#include <stdatomic.h>
#include <string.h>

#include "core_internal.h"

typedef struct domain_names {
    const char *api_name;
    const char *const *type_names;
    unsigned count;
    const struct domain_names *next_declared; /* the domain's older records */
} domain_names;

/* Written rarely (a front end's start), read by every report; a pointer
 * swap keeps readers from seeing half an update. Records are immutable
 * and never freed, since a reader may still hold the one replaced (two
 * alternating slots were once overwritten by a third declaration under a
 * reader's feet). Every record stays on its domain's list: a declaration
 * equal to an earlier one reuses it, so memory is bounded by the distinct
 * sets declared, and LeakSanitizer sees the replaced ones as reachable. */
static _Atomic(const domain_names *) domains[LIVETRACK_DOMAIN_COUNT];
static _Atomic(const domain_names *) declared_lists[LIVETRACK_DOMAIN_COUNT];

static const char *const default_api_names[LIVETRACK_DOMAIN_COUNT] = {"any", "OpenCL", "Level Zero", "CUDA", "user"};

/* A copy livetrack owns and never frees: the names outlive the library
 * that declared them (a driver or front end may be unloaded before the
 * exit report), and snapshots hand the pointers out. Declarations are
 * rare; an identical one reuses an earlier record. */
static const char *copy_name(const char *name)
{
    if (!name)
        return NULL;
    size_t length = strlen(name) + 1;
    char *copy = lt_malloc(length);
    if (copy)
        memcpy(copy, name, length);
    return copy;
}

static int same_names(const domain_names *names, const char *api_name, const char *const *type_names, unsigned count)
{
    if (!names || names->count != count || (!names->api_name) != (!api_name) ||
        (api_name && strcmp(names->api_name, api_name)))
        return 0;
    for (unsigned i = 0; i < count; i++) {
        const char *a = names->type_names[i], *b = type_names[i];
        if ((!a) != (!b) || (a && strcmp(a, b)))
            return 0;
    }
    return 1;
}

livetrack_status livetrack_declare_types(livetrack_domain domain, const char *api_name, const char *const *type_names,
                                         unsigned count)
{
    if (domain <= LIVETRACK_DOMAIN_ANY || domain >= LIVETRACK_DOMAIN_COUNT || count > LIVETRACK_MAX_TYPES ||
        (count && !type_names))
        return LIVETRACK_BAD_ARGUMENT;
    if (same_names(atomic_load(&domains[domain]), api_name, type_names, count))
        return LIVETRACK_OK;
    for (const domain_names *earlier = atomic_load(&declared_lists[domain]); earlier; earlier = earlier->next_declared)
        if (same_names(earlier, api_name, type_names, count)) {
            atomic_store(&domains[domain], earlier);
            return LIVETRACK_OK;
        }
    domain_names *declared = lt_malloc(sizeof *declared);
    const char **names = lt_calloc(count ? count : 1, sizeof *names);
    const char *api_copy = copy_name(api_name);
    if (!declared || !names || (api_name && !api_copy)) {
        lt_free(declared);
        lt_free(names);
        lt_free((void *)api_copy);
        lt_out_of_memory("type names");
        return LIVETRACK_NO_MEMORY;
    }
    for (unsigned i = 0; i < count; i++) {
        names[i] = copy_name(type_names[i]); /* a failed copy reads as "object" */
        if (type_names[i] && !names[i])
            lt_out_of_memory("a type name"); /* reports name the type "object": say why */
    }
    *declared = (domain_names){api_copy, names, count, atomic_load(&declared_lists[domain])};
    /* Two threads declaring the same new set at once may both add it: a
     * duplicate record, harmless. */
    while (!atomic_compare_exchange_weak(&declared_lists[domain], &declared->next_declared, declared))
        ;
    atomic_store(&domains[domain], declared);
    return LIVETRACK_OK;
}

const char *livetrack_domain_name(livetrack_domain domain)
{
    if (domain >= LIVETRACK_DOMAIN_COUNT)
        return "?";
    const domain_names *names = atomic_load(&domains[domain]);
    return names && names->api_name ? names->api_name : default_api_names[domain];
}

const char *livetrack_type_name(livetrack_domain domain, livetrack_type type)
{
    if (domain >= LIVETRACK_DOMAIN_COUNT)
        return "?";
    const domain_names *names = atomic_load(&domains[domain]);
    if (!names || type >= names->count || !names->type_names[type])
        return "object";
    return names->type_names[type];
}
