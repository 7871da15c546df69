/*
 * The addresses graph memory nodes allocate (cuGraphAddMemAllocNode, or
 * cuGraphAddNode with a memory allocation node). A graph's allocation
 * keeps its address for the graph's life; its memory is allocated each
 * time the graph runs and freed by a free node in the graph, or outside
 * it with cuMemFree or cuMemFreeAsync, once per launch. Whether a launch
 * ran, and so whether the memory is there, is not known here: these
 * allocations are not tracked, only remembered, so that a free outside
 * the graph is not taken for a free of something never allocated.
 *
 * An address the driver then hands out for an allocation livetrack
 * tracks is no longer the graph's (the graph and its memory are gone):
 * it is forgotten here, so frees of it are checked again.
 */
#include <stdatomic.h>

#include "cuda_front_end.h"
#include "handle_map.h"

static ltcu_map graph_addresses = LTCU_MAP_INIT;
/* How many addresses are remembered: while none are, frees and
 * allocations skip the map's lock. */
static atomic_size_t remembered;

void ltcu_graph_allocation_add(uint64_t address)
{
    uint64_t already = 0;
    if (!address || ltcu_map_get(&graph_addresses, address, &already))
        return;
    if (ltcu_map_put(&graph_addresses, address, 1))
        atomic_fetch_add(&remembered, 1);
}

int ltcu_graph_allocation_known(uint64_t address)
{
    uint64_t unused = 0;
    return atomic_load_explicit(&remembered, memory_order_relaxed) &&
           ltcu_map_get(&graph_addresses, address, &unused);
}

void ltcu_graph_allocation_forget(uint64_t address)
{
    if (atomic_load_explicit(&remembered, memory_order_relaxed) && ltcu_map_take(&graph_addresses, address, NULL))
        atomic_fetch_sub(&remembered, 1);
}
