/*
 * The peak section of the report model: the live set that peak.c copied
 * when live bytes were highest, grouped by application frames like the
 * leaks, largest first.
 */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"
#include "report_model.h"

static int compare_sites(const void *left, const void *right) { return lt_report_site_compare(left, right); }

int lt_report_peak_build(lt_report_model *model)
{
    if (model->peak_built)
        return model->have_peak;
    model->peak_built = 1;
    if (!lt_peak_get(&model->peak)) {
        memset(&model->peak, 0, sizeof model->peak);
        return 0;
    }
    model->have_peak = 1;
    size_t count = model->peak.site_count;
    if (!count || !model->peak.sites)
        return 1;
    /* At most one site per peak entry; groups usually merge a few. */
    model->peak_sites = lt_calloc(count, sizeof *model->peak_sites);
    size_t *site_of_group = NULL, groups_seen = 0;
    if (!model->peak_sites)
        goto out_of_memory;
    for (size_t i = 0; i < count; i++) {
        const lt_site_count *entry = &model->peak.sites[i];
        if (!entry->objects)
            continue;
        long group = lt_site_group_of(&model->groups, entry->stack, entry->domain, entry->type);
        if (group < 0)
            goto out_of_memory;
        if ((size_t)group >= groups_seen) {
            /* The group table may have grown from the leaks too. */
            size_t seen = model->groups.count;
            size_t *grown = lt_malloc(seen * sizeof *grown);
            if (!grown)
                goto out_of_memory;
            for (size_t g = 0; g < seen; g++)
                grown[g] = g < groups_seen ? site_of_group[g] : 0;
            lt_free(site_of_group);
            site_of_group = grown;
            groups_seen = seen;
        }
        if (!site_of_group[group]) {
            lt_report_site *fresh = &model->peak_sites[model->peak_site_count++];
            fresh->group = (size_t)group;
            fresh->suppression = -1;
            /* Ties go to the call site seen first (stack ids are given in
             * order), not to where peak.c's hash table put them. */
            fresh->first_seq = entry->stack;
            site_of_group[group] = model->peak_site_count;
        }
        lt_report_site *site = &model->peak_sites[site_of_group[group] - 1];
        if (entry->stack < site->first_seq)
            site->first_seq = entry->stack;
        if (!lt_report_site_add(site, entry->domain, entry->type, entry->bytes, entry->objects))
            goto out_of_memory;
    }
    lt_free(site_of_group);
    if (model->peak_site_count > 1)
        qsort(model->peak_sites, model->peak_site_count, sizeof *model->peak_sites, compare_sites);
    for (size_t i = 0; i < model->peak_site_count; i++) {
        model->peak_sites[i].id = (uint32_t)i + 1;
        lt_report_sort_kinds(model->peak_sites[i].kinds, model->peak_sites[i].kind_count);
    }
    return 1;

out_of_memory:
    lt_free(site_of_group);
    lt_out_of_memory("the peak report");
    for (size_t i = 0; i < model->peak_site_count; i++)
        lt_free(model->peak_sites[i].kinds);
    lt_free(model->peak_sites);
    model->peak_sites = NULL;
    model->peak_site_count = 0;
    /* Totals with no sites would not add up: no peak set, as when peak.c
     * could not copy it. */
    lt_free(model->peak.sites);
    memset(&model->peak, 0, sizeof model->peak);
    model->have_peak = 0;
    return 0;
}
