/*
 * A small map from 64-bit keys (handles, addresses) to 64-bit values,
 * for the little the CUDA front end keeps beside the registry: the
 * runtime's own modules, the size of each mapped range and the addresses
 * graph memory nodes allocate. Open
 * addressing under one mutex: its users are rare calls (module loads,
 * cuMemMap), never a hot path.
 */
#ifndef LIVETRACK_CUDA_HANDLE_MAP_H
#define LIVETRACK_CUDA_HANDLE_MAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ltcu_map_slot {
    uint64_t key; /* 0: empty */
    uint64_t value;
} ltcu_map_slot;

typedef struct ltcu_map {
    pthread_mutex_t lock;
    ltcu_map_slot *slots;
    size_t slot_count; /* a power of two, or 0 */
    size_t used;
} ltcu_map;

#define LTCU_MAP_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0}

/* Insert or replace. Returns 0 when out of memory (the entry is lost). */
int ltcu_map_put(ltcu_map *map, uint64_t key, uint64_t value);
/* Returns 1 and the value of `key` in *value (may be NULL) when present. */
int ltcu_map_get(ltcu_map *map, uint64_t key, uint64_t *value);
/* Remove `key`; returns 1 and its value in *value (may be NULL) when present. */
int ltcu_map_take(ltcu_map *map, uint64_t key, uint64_t *value);
/* Remove every entry whose value is `value`, calling `taken` (under the
 * map's lock: it must not use the map) with each key removed. */
void ltcu_map_take_all_of(ltcu_map *map, uint64_t value, void (*taken)(uint64_t key, void *arg), void *arg);

#endif
