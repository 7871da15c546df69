/*
 * A map from strings to numbers (open addressing, FNV-1a), for interning
 * names: the CSV reader's call/api/type names and series, the pprof writer's string
 * table, functions, locations and mappings.
 */
#ifndef LIVETRACK_STRING_MAP_H
#define LIVETRACK_STRING_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct string_map_entry {
    char *key; /* owned copy; NULL: empty slot */
    uint64_t value;
} string_map_entry;

typedef struct string_map {
    size_t mask, count;
    string_map_entry *slots;
} string_map;

/* The value of `key`, added with `value_if_new` when missing (*added
 * says which, and may be NULL). */
uint64_t string_map_intern(string_map *map, const char *key, uint64_t value_if_new, int *added);
/* 1 and *value when present. */
int string_map_get(const string_map *map, const char *key, uint64_t *value);
void string_map_free(string_map *map);

#endif
