/* The front end's small side map (see handle_map.h). */
#include <stdlib.h>

#include "handle_map.h"

#define MIN_SLOTS 64u

static size_t home_of(uint64_t key, size_t mask)
{
    /* Handles are aligned pointers: mix the bits so the low ones vary. */
    key ^= key >> 29;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 32;
    return (size_t)key & mask;
}

/* Caller holds the lock. */
static int grow(ltcu_map *map)
{
    size_t count = map->slot_count ? map->slot_count * 2 : MIN_SLOTS;
    ltcu_map_slot *fresh = calloc(count, sizeof *fresh);
    if (!fresh)
        return 0;
    for (size_t i = 0; i < map->slot_count; i++) {
        if (!map->slots[i].key)
            continue;
        size_t at = home_of(map->slots[i].key, count - 1);
        while (fresh[at].key)
            at = (at + 1) & (count - 1);
        fresh[at] = map->slots[i];
    }
    free(map->slots);
    map->slots = fresh;
    map->slot_count = count;
    return 1;
}

int ltcu_map_put(ltcu_map *map, uint64_t key, uint64_t value)
{
    if (!key)
        return 0;
    pthread_mutex_lock(&map->lock);
    if ((map->used + 1) * 2 > map->slot_count && !grow(map)) {
        pthread_mutex_unlock(&map->lock);
        return 0;
    }
    size_t mask = map->slot_count - 1, at = home_of(key, mask);
    while (map->slots[at].key && map->slots[at].key != key)
        at = (at + 1) & mask;
    if (!map->slots[at].key)
        map->used++;
    map->slots[at].key = key;
    map->slots[at].value = value;
    pthread_mutex_unlock(&map->lock);
    return 1;
}

/* Caller holds the lock; slot `at` is in use. */
static void remove_at(ltcu_map *map, size_t at)
{
    size_t mask = map->slot_count - 1;
    map->used--;
    /* Move later members of the probe chain back over the hole, so
     * lookups never stop early at it. */
    size_t hole = at;
    for (size_t next = (hole + 1) & mask; map->slots[next].key; next = (next + 1) & mask) {
        size_t home = home_of(map->slots[next].key, mask);
        if (((next - home) & mask) >= ((next - hole) & mask)) {
            map->slots[hole] = map->slots[next];
            hole = next;
        }
    }
    map->slots[hole].key = 0;
}

/* Under the lock: the slot holding `key`, or -1. */
static long slot_of(const ltcu_map *map, uint64_t key)
{
    if (!key || !map->slot_count)
        return -1;
    size_t mask = map->slot_count - 1, at = home_of(key, mask);
    while (map->slots[at].key && map->slots[at].key != key)
        at = (at + 1) & mask;
    return map->slots[at].key ? (long)at : -1;
}

/* The value of `key` into *value (unless NULL); taken out of the map when
 * `take`. Returns whether it was there. */
static int look_up(ltcu_map *map, uint64_t key, uint64_t *value, int take)
{
    pthread_mutex_lock(&map->lock);
    long at = slot_of(map, key);
    if (at >= 0) {
        if (value)
            *value = map->slots[at].value;
        if (take)
            remove_at(map, (size_t)at);
    }
    pthread_mutex_unlock(&map->lock);
    return at >= 0;
}

int ltcu_map_get(ltcu_map *map, uint64_t key, uint64_t *value) { return look_up(map, key, value, 0); }

int ltcu_map_take(ltcu_map *map, uint64_t key, uint64_t *value) { return look_up(map, key, value, 1); }

void ltcu_map_take_all_of(ltcu_map *map, uint64_t value, void (*taken)(uint64_t key, void *arg), void *arg)
{
    pthread_mutex_lock(&map->lock);
    /* A removal may move a later entry into the slot just emptied, so that
     * slot is looked at again. Entries only move back along their probe
     * chain: one wrapped past the end lands at a slot not yet looked at,
     * or one already looked at that held no match. */
    for (size_t at = 0; at < map->slot_count;) {
        if (map->slots[at].key && map->slots[at].value == value) {
            uint64_t key = map->slots[at].key;
            remove_at(map, at);
            taken(key, arg);
        } else {
            at++;
        }
    }
    pthread_mutex_unlock(&map->lock);
}
