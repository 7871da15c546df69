/*
 * Call-site groups: interned stacks -> groups of call sites that read the
 * same (see site_groups.h). Two open-addressing tables: stack id -> group
 * (one probe per object in the common case), and symbolized frames ->
 * group (one lookup per distinct stack).
 */
#include <string.h>

#include "core_internal.h"
#include "site_groups.h"
#include "stacks.h"

/* Frames kept per group after inlined calls are expanded. */
#define LT_GROUP_MAX_FRAMES (4u * LT_MAX_STACK_DEPTH)

static uint64_t mix(uint64_t value)
{
    /* A 64-bit finalizer: spreads nearby values over the whole word. */
    value ^= value >> 33;
    value *= 0xff51afd7ed558ccdull;
    value ^= value >> 33;
    value *= 0xc4ceb9fe1a85ec53ull;
    value ^= value >> 33;
    return value;
}

static uint64_t hash_text(uint64_t hash, const char *text)
{
    /* FNV-1a over the bytes, folded into the running hash. */
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *c = (const unsigned char *)(text ? text : ""); *c; c++)
        h = (h ^ *c) * 0x100000001b3ull;
    return mix(hash ^ h ^ (text ? 0 : 0x5bd1e995u));
}

/* What a frame shows: without a source line its offset tells frames of
 * one function apart, as the text does. */
static int show_offset(const livetrack_frame *frame) { return !frame->line; }

static uint64_t hash_frames(const livetrack_frame *frames, size_t count, unsigned domain, unsigned type)
{
    if (!count)
        return mix(((uint64_t)domain << 8 | type) + 1);
    uint64_t hash = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < count; i++) {
        const livetrack_frame *frame = &frames[i];
        hash = hash_text(hash, frame->function);
        hash = hash_text(hash, frame->file);
        hash = hash_text(hash, frame->module);
        hash = mix(hash ^ ((uint64_t)frame->line << 32 | frame->column) ^ ((uint64_t)frame->inlined << 63));
        if (show_offset(frame))
            hash = mix(hash ^ frame->module_offset);
    }
    return hash;
}

static int same_text(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static int same_frames(const lt_site_group *group, const livetrack_frame *frames, size_t count, unsigned domain,
                       unsigned type)
{
    if (group->frame_count != count)
        return 0;
    if (!count)
        return group->domain == domain && group->type == type;
    for (size_t i = 0; i < count; i++) {
        const livetrack_frame *a = &group->frames[i], *b = &frames[i];
        if (a->line != b->line || a->column != b->column || a->inlined != b->inlined ||
            !same_text(a->function, b->function) || !same_text(a->file, b->file) || !same_text(a->module, b->module) ||
            (show_offset(a) && a->module_offset != b->module_offset))
            return 0;
    }
    return 1;
}

void lt_site_groups_init(lt_site_groups *table) { memset(table, 0, sizeof *table); }

void lt_site_groups_free(lt_site_groups *table)
{
    for (size_t i = 0; i < table->count; i++)
        lt_free(table->groups[i].frames);
    lt_free(table->groups);
    lt_free(table->stack_keys);
    lt_free(table->stack_groups);
    lt_free(table->slots);
    memset(table, 0, sizeof *table);
}

/* Double the frames -> group table when it is half full. */
static int grow_slots(lt_site_groups *table)
{
    if (table->slots && (table->count + 1) * 2 <= table->slot_mask + 1)
        return 1;
    size_t size = table->slots ? (table->slot_mask + 1) * 2 : 64;
    uint32_t *slots = lt_calloc(size, sizeof *slots);
    if (!slots)
        return 0;
    for (size_t i = 0; i < table->count; i++) {
        size_t slot = table->groups[i].hash & (size - 1);
        while (slots[slot])
            slot = (slot + 1) & (size - 1);
        slots[slot] = (uint32_t)i + 1;
    }
    lt_free(table->slots);
    table->slots = slots;
    table->slot_mask = size - 1;
    return 1;
}

/* The application's frames of a stack, symbolized; address-only frames
 * when nothing is known about them (a debugger can still use those). */
static size_t symbolize(livetrack_stack_id stack, livetrack_frame *frames, size_t max)
{
    if (!stack)
        return 0;
    size_t count = livetrack_stack_symbolize(stack, frames, max);
    if (count > max)
        count = max;
    if (!count) {
        uintptr_t addresses[LT_MAX_STACK_DEPTH];
        count = livetrack_stack_addresses(stack, addresses, LT_MAX_STACK_DEPTH);
        memset(frames, 0, count * sizeof *frames);
        for (size_t i = 0; i < count; i++)
            frames[i].address = addresses[i];
    }
    return count;
}

static long group_for_stack(lt_site_groups *table, livetrack_stack_id stack, unsigned domain, unsigned type)
{
    if (!grow_slots(table))
        return -1;
    livetrack_frame frames[LT_GROUP_MAX_FRAMES];
    size_t count = symbolize(stack, frames, LT_GROUP_MAX_FRAMES);
    uint64_t hash = hash_frames(frames, count, domain, type);
    size_t slot = hash & table->slot_mask;
    for (; table->slots[slot]; slot = (slot + 1) & table->slot_mask) {
        size_t index = table->slots[slot] - 1;
        if (table->groups[index].hash == hash && same_frames(&table->groups[index], frames, count, domain, type))
            return (long)index;
    }
    if (table->count == table->capacity) {
        size_t capacity = table->capacity ? table->capacity * 2 : 16;
        lt_site_group *groups = lt_malloc(capacity * sizeof *groups);
        if (!groups)
            return -1;
        if (table->count)
            memcpy(groups, table->groups, table->count * sizeof *groups);
        lt_free(table->groups);
        table->groups = groups;
        table->capacity = capacity;
    }
    lt_site_group *group = &table->groups[table->count];
    memset(group, 0, sizeof *group);
    if (count) {
        group->frames = lt_malloc(count * sizeof *frames);
        if (!group->frames)
            return -1;
        memcpy(group->frames, frames, count * sizeof *frames);
    }
    group->stack = stack;
    group->domain = domain;
    group->type = type;
    group->frame_count = count;
    group->hash = hash;
    table->slots[slot] = (uint32_t)table->count + 1;
    return (long)table->count++;
}

static int grow_stack_map(lt_site_groups *table)
{
    if (table->stack_keys && (table->stack_used + 1) * 2 <= table->stack_mask + 1)
        return 1;
    size_t old_size = table->stack_keys ? table->stack_mask + 1 : 0;
    size_t size = old_size ? old_size * 2 : 256;
    uint64_t *keys = lt_calloc(size, sizeof *keys);
    uint32_t *groups = lt_calloc(size, sizeof *groups);
    if (!keys || !groups) {
        lt_free(keys);
        lt_free(groups);
        return 0;
    }
    for (size_t i = 0; i < old_size; i++) {
        if (!table->stack_keys[i])
            continue;
        size_t slot = mix(table->stack_keys[i]) & (size - 1);
        while (keys[slot])
            slot = (slot + 1) & (size - 1);
        keys[slot] = table->stack_keys[i];
        groups[slot] = table->stack_groups[i];
    }
    lt_free(table->stack_keys);
    lt_free(table->stack_groups);
    table->stack_keys = keys;
    table->stack_groups = groups;
    table->stack_mask = size - 1;
    return 1;
}

long lt_site_group_of(lt_site_groups *table, livetrack_stack_id stack, unsigned domain, unsigned type)
{
    if (!grow_stack_map(table))
        return -1;
    /* The kind is part of the key: stack 0 (not captured) is shared by
     * every kind. Bit 63 marks a used slot. */
    uint64_t key = (uint64_t)1 << 63 | (uint64_t)stack << 16 | (uint64_t)(domain & 0xff) << 8 | (type & 0xff);
    size_t slot = mix(key) & table->stack_mask;
    for (; table->stack_keys[slot]; slot = (slot + 1) & table->stack_mask)
        if (table->stack_keys[slot] == key)
            return (long)table->stack_groups[slot];
    long group = group_for_stack(table, stack, domain, type);
    if (group < 0)
        return -1;
    table->stack_keys[slot] = key;
    table->stack_groups[slot] = (uint32_t)group;
    table->stack_used++;
    return group;
}

size_t lt_site_group_frames(lt_site_groups *table, size_t index, const livetrack_frame **frames)
{
    *frames = table->groups[index].frames;
    return table->groups[index].frame_count;
}
