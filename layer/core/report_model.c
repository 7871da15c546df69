/*
 * The report model: a snapshot grouped into sites, totals, kept-alive
 * relations and suppression marks (see report_model.h).
 *
 * Cost is linear in the live set plus one symbolization per distinct call
 * site that a pattern or a writer needs: at exit with a million live
 * objects the report must not take longer than the program did.
 */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"
#include "registry_internal.h"
#include "report_model.h"

/* How far up a chain of released parents a leaked object is followed
 * (kernel -> program -> context is 2); bounds a corrupt chain too. */
#define LT_KEPT_DEPTH 16

int lt_report_site_add(lt_report_site *site, unsigned domain, unsigned type, uint64_t bytes, uint64_t objects)
{
    site->objects += objects;
    site->bytes += bytes;
    for (size_t i = 0; i < site->kind_count; i++) {
        if (site->kinds[i].domain == domain && site->kinds[i].type == type) {
            site->kinds[i].objects += objects;
            site->kinds[i].bytes += bytes;
            return 1;
        }
    }
    if (site->kind_count == site->kind_capacity) {
        size_t capacity = site->kind_capacity ? site->kind_capacity * 2 : 2;
        lt_report_kind *kinds = lt_malloc(capacity * sizeof *kinds);
        if (!kinds)
            return 0;
        if (site->kind_count)
            memcpy(kinds, site->kinds, site->kind_count * sizeof *kinds);
        lt_free(site->kinds);
        site->kinds = kinds;
        site->kind_capacity = capacity;
    }
    site->kinds[site->kind_count++] = (lt_report_kind){domain, type, objects, bytes};
    return 1;
}

static int compare_kinds(const void *left, const void *right)
{
    const lt_report_kind *a = left, *b = right;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->objects != b->objects)
        return a->objects > b->objects ? -1 : 1;
    if (a->domain != b->domain)
        return a->domain < b->domain ? -1 : 1;
    return a->type < b->type ? -1 : a->type > b->type;
}

void lt_report_sort_kinds(lt_report_kind *kinds, size_t count)
{
    if (count > 1)
        qsort(kinds, count, sizeof *kinds, compare_kinds);
}

int lt_report_site_compare(const lt_report_site *a, const lt_report_site *b)
{
    if ((a->suppression >= 0) != (b->suppression >= 0))
        return a->suppression >= 0 ? 1 : -1;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->objects != b->objects)
        return a->objects > b->objects ? -1 : 1;
    return a->first_seq < b->first_seq ? -1 : a->first_seq > b->first_seq;
}

/* ---- (handle, creation number) -> snapshot index, for the parent links ----
 * A handle alone may name two objects of one snapshot: a parent the
 * program released while children kept it, whose handle the driver gave
 * to a new object. A child's parent is the one with the creation number
 * the snapshot gives for it (livetrack_snapshot_parent_seqs). */

typedef struct handle_index {
    size_t mask;
    size_t *slots; /* index + 1, 0: empty */
} handle_index;

/* Only released objects (refs 0, alive through their holders: `released`
 * of them, counted by build) go in: they are the only parents collect_kept
 * follows. A table of every object took 16 MB and a cache miss per object
 * with 10^6 leaks, to find the few that are kept alive. */
static int index_build(handle_index *index, const livetrack_snapshot *snapshot, size_t count, size_t released)
{
    size_t size = 16;
    while (size < released * 2)
        size *= 2;
    index->mask = size - 1;
    index->slots = lt_calloc(size, sizeof *index->slots);
    if (!index->slots)
        return 0;
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        if (object->refs)
            continue;
        size_t slot = (size_t)lt_hash(object->domain, object->handle) & index->mask;
        while (index->slots[slot])
            slot = (slot + 1) & index->mask;
        index->slots[slot] = i + 1;
    }
    return 1;
}

static long index_find(const handle_index *index, const livetrack_snapshot *snapshot, unsigned domain,
                       uint64_t handle, uint64_t seq)
{
    for (size_t slot = (size_t)lt_hash(domain, handle) & index->mask; index->slots[slot];
         slot = (slot + 1) & index->mask) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, index->slots[slot] - 1);
        if (object->handle == handle && object->domain == domain && object->seq == seq)
            return (long)(index->slots[slot] - 1);
    }
    return -1;
}

/* ---- building ---- */

typedef struct builder {
    lt_report_model *model;
    size_t *group_site;     /* per group: its first site + 1 */
    long *group_frames;     /* per group: frame pattern index, -1 none, -2 not yet looked at */
    size_t group_capacity;
    long type_pattern[LIVETRACK_DOMAIN_COUNT][LIVETRACK_MAX_TYPES]; /* -2: not yet looked at */
    size_t site_capacity;
    uint64_t *pairs;        /* site << 32 | kept snapshot index */
    size_t pair_count, pair_capacity;
} builder;

static int grow_group_arrays(builder *b, size_t groups)
{
    if (groups <= b->group_capacity)
        return 1;
    size_t capacity = b->group_capacity ? b->group_capacity * 2 : 64;
    while (capacity < groups)
        capacity *= 2;
    size_t *sites = lt_malloc(capacity * sizeof *sites);
    long *frames = lt_malloc(capacity * sizeof *frames);
    if (!sites || !frames) {
        lt_free(sites);
        lt_free(frames);
        return 0;
    }
    for (size_t i = 0; i < capacity; i++) {
        sites[i] = i < b->group_capacity ? b->group_site[i] : 0;
        frames[i] = i < b->group_capacity ? b->group_frames[i] : -2;
    }
    lt_free(b->group_site);
    lt_free(b->group_frames);
    b->group_site = sites;
    b->group_frames = frames;
    b->group_capacity = capacity;
    return 1;
}

static long suppression_of(builder *b, const livetrack_object *object, size_t group)
{
    const lt_suppressions *patterns = b->model->suppressions;
    if (!patterns->count)
        return -1;
    long *by_type = object->domain < LIVETRACK_DOMAIN_COUNT && object->type < LIVETRACK_MAX_TYPES
                        ? &b->type_pattern[object->domain][object->type]
                        : NULL;
    long pattern = by_type && *by_type != -2 ? *by_type : lt_suppress_type(patterns, object->type_name);
    if (by_type)
        *by_type = pattern;
    /* The first pattern of the file that matches is credited, of either
     * kind: the frames are looked at unless the type's pattern comes
     * before every frame pattern. */
    if (pattern >= 0 && pattern < lt_suppressions_first_frame_pattern(patterns))
        return pattern;
    if (b->group_frames[group] == -2) {
        b->group_frames[group] = -1;
        if (lt_suppressions_need_frames(patterns)) {
            const livetrack_frame *frames;
            size_t count = lt_site_group_frames(&b->model->groups, group, &frames);
            b->group_frames[group] = lt_suppress_frames(patterns, frames, count);
        }
    }
    long by_frames = b->group_frames[group];
    return pattern >= 0 && (by_frames < 0 || pattern < by_frames) ? pattern : by_frames;
}

/* The site of (group, suppression), made on first use. */
static long site_for(builder *b, size_t group, long suppression, uint64_t seq)
{
    lt_report_model *model = b->model;
    for (size_t at = b->group_site[group]; at; at = model->sites[at - 1].next_in_group)
        if (model->sites[at - 1].suppression == suppression)
            return (long)(at - 1);
    if (model->site_count == b->site_capacity) {
        size_t capacity = b->site_capacity ? b->site_capacity * 2 : 16;
        lt_report_site *sites = lt_malloc(capacity * sizeof *sites);
        if (!sites)
            return -1;
        if (model->site_count)
            memcpy(sites, model->sites, model->site_count * sizeof *sites);
        lt_free(model->sites);
        model->sites = sites;
        b->site_capacity = capacity;
    }
    lt_report_site *site = &model->sites[model->site_count];
    memset(site, 0, sizeof *site);
    site->group = group;
    site->suppression = suppression;
    site->first_seq = seq;
    site->next_in_group = b->group_site[group];
    b->group_site[group] = model->site_count + 1;
    return (long)model->site_count++;
}

static int add_pair(builder *b, size_t site, size_t kept)
{
    if (b->pair_count == b->pair_capacity) {
        size_t capacity = b->pair_capacity ? b->pair_capacity * 2 : 64;
        uint64_t *pairs = lt_malloc(capacity * sizeof *pairs);
        if (!pairs)
            return 0;
        if (b->pair_count)
            memcpy(pairs, b->pairs, b->pair_count * sizeof *pairs);
        lt_free(b->pairs);
        b->pairs = pairs;
        b->pair_capacity = capacity;
    }
    b->pairs[b->pair_count++] = (uint64_t)site << 32 | (uint64_t)kept;
    return 1;
}

static int compare_u64(const void *left, const void *right)
{
    uint64_t a = *(const uint64_t *)left, b = *(const uint64_t *)right;
    return a < b ? -1 : a > b;
}

/* Which released objects each site keeps alive: for every leaked object,
 * its chain of parents while they are released (refs 0). */
static int collect_kept(builder *b)
{
    lt_report_model *model = b->model;
    handle_index index;
    if (!index_build(&index, model->snapshot, model->count, model->kept_objects))
        return 0;
    /* A site's objects mostly share their parents: skip a repeat of the
     * last pair of the same site before sorting. */
    size_t *last_kept = lt_malloc((model->site_count ? model->site_count : 1) * sizeof *last_kept);
    int ok = last_kept != NULL;
    for (size_t i = 0; ok && i < model->site_count; i++)
        last_kept[i] = SIZE_MAX;
    for (size_t i = 0; ok && i < model->count; i++) {
        if (!model->site_of[i])
            continue;
        size_t site = model->site_of[i] - 1;
        size_t pending[2 * LT_KEPT_DEPTH], pending_count = 0;
        pending[pending_count++] = i;
        for (unsigned depth = 0; ok && pending_count && depth < LT_KEPT_DEPTH; depth++) {
            size_t at = pending[--pending_count];
            const livetrack_object *object = livetrack_snapshot_at(model->snapshot, at);
            uint64_t parent_seqs[2];
            livetrack_snapshot_parent_seqs(model->snapshot, at, parent_seqs);
            for (int p = 0; p < 2 && ok; p++) {
                if (!object->parents[p])
                    continue;
                long parent = index_find(&index, model->snapshot, object->domain, object->parents[p], parent_seqs[p]);
                if (parent < 0 || livetrack_snapshot_at(model->snapshot, (size_t)parent)->refs)
                    continue;
                if (last_kept[site] != (size_t)parent) {
                    ok = add_pair(b, site, (size_t)parent);
                    last_kept[site] = (size_t)parent;
                }
                if (pending_count < 2 * LT_KEPT_DEPTH)
                    pending[pending_count++] = (size_t)parent;
            }
        }
    }
    lt_free(last_kept);
    lt_free(index.slots);
    if (!ok)
        return 0;
    if (b->pair_count > 1)
        qsort(b->pairs, b->pair_count, sizeof *b->pairs, compare_u64);
    model->kept = lt_malloc((b->pair_count ? b->pair_count : 1) * sizeof *model->kept);
    /* One bit per snapshot object: a released object two sites keep
     * alive counts once among those kept by leaks. */
    uint64_t *counted = lt_calloc(model->count / 64 + 1, sizeof *counted);
    if (!model->kept || !counted) {
        lt_free(counted);
        return 0;
    }
    for (size_t i = 0; i < b->pair_count; i++) {
        if (i && b->pairs[i] == b->pairs[i - 1])
            continue;
        lt_report_site *site = &model->sites[b->pairs[i] >> 32];
        size_t kept = (size_t)(b->pairs[i] & 0xffffffffu);
        if (!site->kept_count)
            site->kept_first = model->kept_total;
        site->kept_count++;
        uint64_t bytes = livetrack_snapshot_at(model->snapshot, kept)->bytes;
        site->kept_bytes += bytes;
        model->kept[model->kept_total++] = kept;
        uint64_t bit = (uint64_t)1 << (kept % 64);
        if (site->suppression < 0 && !(counted[kept / 64] & bit)) {
            counted[kept / 64] |= bit;
            model->kept_by_leaks++;
            model->kept_by_leaks_bytes += bytes;
        }
    }
    lt_free(counted);
    return 1;
}

static int compare_sites(const void *left, const void *right)
{
    return lt_report_site_compare(left, right);
}

/* Sort the sites, number them, and point site_of at the new order. */
static int order_sites(lt_report_model *model)
{
    size_t count = model->site_count;
    if (!count)
        return 1;
    for (size_t i = 0; i < count; i++)
        model->sites[i].next_in_group = i; /* remember the old index across the sort */
    qsort(model->sites, count, sizeof *model->sites, compare_sites);
    uint32_t *new_index = lt_malloc(count * sizeof *new_index);
    if (!new_index)
        return 0;
    for (size_t i = 0; i < count; i++) {
        new_index[model->sites[i].next_in_group] = (uint32_t)i;
        model->sites[i].id = (uint32_t)i + 1;
        model->sites[i].next_in_group = 0;
        lt_report_sort_kinds(model->sites[i].kinds, model->sites[i].kind_count);
        model->reported_sites += model->sites[i].suppression < 0;
    }
    for (size_t i = 0; i < model->count; i++)
        if (model->site_of[i])
            model->site_of[i] = new_index[model->site_of[i] - 1] + 1;
    /* Examples were picked oldest first per old site; they stay valid. */
    lt_free(new_index);
    return 1;
}

static int totals(lt_report_model *model)
{
    lt_report_kind kinds[LIVETRACK_DOMAIN_COUNT][LIVETRACK_MAX_TYPES];
    memset(kinds, 0, sizeof kinds);
    for (size_t s = 0; s < model->reported_sites; s++) {
        const lt_report_site *site = &model->sites[s];
        for (size_t k = 0; k < site->kind_count; k++) {
            const lt_report_kind *kind = &site->kinds[k];
            if (kind->domain >= LIVETRACK_DOMAIN_COUNT || kind->type >= LIVETRACK_MAX_TYPES)
                continue;
            kinds[kind->domain][kind->type].objects += kind->objects;
            kinds[kind->domain][kind->type].bytes += kind->bytes;
            model->api_objects[kind->domain] += kind->objects;
            model->api_bytes[kind->domain] += kind->bytes;
        }
    }
    model->by_type = lt_malloc(LIVETRACK_DOMAIN_COUNT * LIVETRACK_MAX_TYPES * sizeof *model->by_type);
    if (!model->by_type)
        return 0;
    for (unsigned d = 0; d < LIVETRACK_DOMAIN_COUNT; d++)
        for (unsigned t = 0; t < LIVETRACK_MAX_TYPES; t++)
            if (kinds[d][t].objects)
                model->by_type[model->type_count++] = (lt_report_kind){d, t, kinds[d][t].objects, kinds[d][t].bytes};
    lt_report_sort_kinds(model->by_type, model->type_count);
    /* The APIs in the order of by_type: bytes, then objects, largest first. */
    lt_report_kind apis[LIVETRACK_DOMAIN_COUNT];
    size_t api_count = 0;
    for (unsigned d = 1; d < LIVETRACK_DOMAIN_COUNT; d++)
        if (model->api_objects[d])
            apis[api_count++] = (lt_report_kind){d, 0, model->api_objects[d], model->api_bytes[d]};
    lt_report_sort_kinds(apis, api_count);
    for (size_t i = 0; i < api_count; i++)
        model->api_order[i] = apis[i].domain;
    model->api_count = api_count;
    return 1;
}

static int build(builder *b)
{
    lt_report_model *model = b->model;
    model->site_of = lt_calloc(model->count ? model->count : 1, sizeof *model->site_of);
    if (!model->site_of)
        return 0;
    if (model->suppressions->count) {
        model->pattern_use = lt_calloc(model->suppressions->count, sizeof *model->pattern_use);
        if (!model->pattern_use)
            return 0;
    }
    uint64_t inherited_up_to = lt_inherited_up_to();
    /* Oldest first, so each site's examples are its oldest objects. */
    for (size_t i = model->count; i-- > 0;) {
        lt_snapshot_prefetch_oldest_first(model->snapshot, i);
        const livetrack_object *object = livetrack_snapshot_at(model->snapshot, i);
        if (!object->refs) {
            model->kept_objects++;
            continue;
        }
        long group = lt_site_group_of(&model->groups, object->stack, object->domain, object->type);
        if (group < 0 || !grow_group_arrays(b, model->groups.count))
            return 0;
        long suppression = suppression_of(b, object, (size_t)group);
        long at = site_for(b, (size_t)group, suppression, object->seq);
        if (at < 0)
            return 0;
        lt_report_site *site = &model->sites[at];
        if (!lt_report_site_add(site, object->domain, object->type, object->bytes, 1))
            return 0;
        if (site->example_count < LT_REPORT_EXAMPLES)
            site->examples[site->example_count++] = i;
        model->site_of[i] = (uint32_t)at + 1;
        if (suppression >= 0) {
            model->suppressed_objects++;
            model->suppressed_bytes += object->bytes;
            model->pattern_use[suppression].objects++;
            model->pattern_use[suppression].bytes += object->bytes;
        } else {
            model->leaked_objects++;
            model->leaked_bytes += object->bytes;
            if (object->seq <= inherited_up_to) {
                model->inherited_objects++;
                model->inherited_bytes += object->bytes;
            }
        }
    }
    if (!order_sites(model))
        return 0;
    if (model->kept_objects && !collect_kept(b))
        return 0;
    return totals(model);
}

/* The misuse records, for the writers. Copied here, not when a report is
 * written, and before the stats are read: a misuse is counted before its
 * record is kept, so the count read after the copy covers every record in
 * it, while other threads' misuses during the snapshot, the grouping and
 * the symbolizing are in neither. One report never lists more records
 * than its `misuse_count` says there were. */
static void copy_misuse_records(lt_report_model *model)
{
    size_t kept = lt_misuse_kept();
    if (!kept)
        return;
    model->misuse = lt_malloc(kept * sizeof *model->misuse);
    /* Out of memory: the report lists none, the count still says how many. */
    model->misuse_kept = model->misuse ? lt_misuse_records(model->misuse, kept) : 0;
}

void lt_report_model_init(lt_report_model *model)
{
    memset(model, 0, sizeof *model);
    lt_site_groups_init(&model->groups);
    model->call_sites = lt_get_settings()->stack_depth > 0;
    model->suppressions = lt_suppressions_get();
    copy_misuse_records(model);
    livetrack_get_stats(&model->stats);
}

int lt_report_model_build(lt_report_model *model, uint64_t since_mark)
{
    lt_report_model_init(model);
    model->since_mark = since_mark;
    model->snapshot = since_mark ? livetrack_snapshot_since(LIVETRACK_DOMAIN_ANY, NULL, since_mark)
                                 : livetrack_snapshot_take(LIVETRACK_DOMAIN_ANY, NULL);
    if (!model->snapshot) {
        model->stats.incomplete = 1; /* the stats were read before: say so in this report too */
        return 0;
    }
    model->count = livetrack_snapshot_count(model->snapshot);

    builder b;
    memset(&b, 0, sizeof b);
    b.model = model;
    for (unsigned d = 0; d < LIVETRACK_DOMAIN_COUNT; d++)
        for (unsigned t = 0; t < LIVETRACK_MAX_TYPES; t++)
            b.type_pattern[d][t] = -2;
    int ok = build(&b);
    lt_free(b.group_site);
    lt_free(b.group_frames);
    lt_free(b.pairs);
    if (!ok) {
        lt_out_of_memory("a leak report");
        /* Say nothing rather than something wrong. */
        lt_report_model_free(model);
        lt_report_model_init(model);
        model->since_mark = since_mark;
        model->stats.incomplete = 1;
        return 0;
    }
    return 1;
}

uint64_t lt_report_model_leaks_to_count(const lt_report_model *model)
{
    /* No look at the live set (out of memory): which objects leaked is not known. */
    return model->snapshot ? model->leaked_objects : model->stats.live_objects;
}

void lt_report_model_free(lt_report_model *model)
{
    for (size_t i = 0; i < model->site_count; i++)
        lt_free(model->sites[i].kinds);
    for (size_t i = 0; i < model->peak_site_count; i++)
        lt_free(model->peak_sites[i].kinds);
    lt_free(model->sites);
    lt_free(model->peak_sites);
    lt_free(model->peak.sites);
    lt_free(model->site_of);
    lt_free(model->kept);
    lt_free(model->by_type);
    lt_free(model->pattern_use);
    lt_free(model->misuse);
    lt_site_groups_free(&model->groups);
    livetrack_snapshot_free(model->snapshot);
    memset(model, 0, sizeof *model);
}
