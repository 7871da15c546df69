/* Names of domains and of each domain's object types. */
#include <stdatomic.h>

#include "core_internal.h"

typedef struct domain_names {
    const char *api_name;
    const char *const *type_names;
    unsigned count;
} domain_names;

/* Written rarely (a front end's start), read by every report; a pointer
 * swap keeps readers from seeing half an update. */
static _Atomic(const domain_names *) domains[LIVETRACK_DOMAIN_COUNT];
static domain_names storage[LIVETRACK_DOMAIN_COUNT][2];
static atomic_uint generation[LIVETRACK_DOMAIN_COUNT];

static const char *const default_api_names[LIVETRACK_DOMAIN_COUNT] = {"any", "OpenCL", "Level Zero", "CUDA", "user"};

livetrack_status livetrack_declare_types(livetrack_domain domain, const char *api_name, const char *const *type_names,
                                         unsigned count)
{
    if (domain <= LIVETRACK_DOMAIN_ANY || domain >= LIVETRACK_DOMAIN_COUNT || count > LIVETRACK_MAX_TYPES ||
        (count && !type_names))
        return LIVETRACK_BAD_ARGUMENT;
    unsigned slot = atomic_fetch_add(&generation[domain], 1) & 1;
    storage[domain][slot] = (domain_names){api_name, type_names, count};
    atomic_store(&domains[domain], &storage[domain][slot]);
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
