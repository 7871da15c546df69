/*
 * String interning map (see string_map.h). Kept at most half full so
 * probes stay short; it only grows, as the tool never removes a name.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "string_map.h"

static uint64_t hash_text(const char *text)
{
    uint64_t hash = 1469598103934665603ull; /* FNV-1a */
    for (; *text; text++)
        hash = (hash ^ (unsigned char)*text) * 1099511628211ull;
    return hash;
}

static void grow(string_map *map)
{
    size_t size = map->slots ? (map->mask + 1) * 2 : 64;
    string_map_entry *slots = cli_alloc(size * sizeof *slots);
    for (size_t i = 0; map->slots && i <= map->mask; i++) {
        if (!map->slots[i].key)
            continue;
        size_t slot = hash_text(map->slots[i].key) & (size - 1);
        while (slots[slot].key)
            slot = (slot + 1) & (size - 1);
        slots[slot] = map->slots[i];
    }
    free(map->slots);
    map->slots = slots;
    map->mask = size - 1;
}

uint64_t string_map_intern(string_map *map, const char *key, uint64_t value_if_new, int *added)
{
    if (!map->slots || (map->count + 1) * 2 > map->mask + 1)
        grow(map);
    size_t slot = hash_text(key) & map->mask;
    for (; map->slots[slot].key; slot = (slot + 1) & map->mask) {
        if (!strcmp(map->slots[slot].key, key)) {
            if (added)
                *added = 0;
            return map->slots[slot].value;
        }
    }
    map->slots[slot].key = cli_strdup(key);
    map->slots[slot].value = value_if_new;
    map->count++;
    if (added)
        *added = 1;
    return value_if_new;
}

int string_map_get(const string_map *map, const char *key, uint64_t *value)
{
    if (!map->slots)
        return 0;
    for (size_t slot = hash_text(key) & map->mask; map->slots[slot].key; slot = (slot + 1) & map->mask) {
        if (!strcmp(map->slots[slot].key, key)) {
            *value = map->slots[slot].value;
            return 1;
        }
    }
    return 0;
}

void string_map_free(string_map *map)
{
    for (size_t i = 0; map->slots && i <= map->mask; i++)
        free(map->slots[i].key);
    free(map->slots);
    memset(map, 0, sizeof *map);
}
