/*
 * The size of each range cuMemMap mapped, by its start. cuMemUnmap names
 * a range that may cover several mappings made one after another; the
 * registry keeps no size for a mapping (its memory is counted once, on
 * the physical allocation it maps), so the sizes live here.
 */
#include "cuda_front_end.h"
#include "handle_map.h"

static ltcu_map mapped_ranges = LTCU_MAP_INIT;

void ltcu_mapping_add(uint64_t start, uint64_t size) { ltcu_map_put(&mapped_ranges, start, size); }

uint64_t ltcu_mapping_take(uint64_t start)
{
    uint64_t size = 0;
    return ltcu_map_take(&mapped_ranges, start, &size) ? size : 0;
}
