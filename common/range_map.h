/* A sorted map of logical address ranges: a session's allocations and
 * module variables (server), or the guest's record of them.  The map knows
 * extents only; what a range stands for is its owner's: each side keeps its
 * own record behind `backing`.  Lookups are binary searches over a sorted
 * array. */
#ifndef TANDEM_COMMON_RANGE_MAP_H
#define TANDEM_COMMON_RANGE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    TDM_RANGE_ALLOC = 1,   /* cudaMalloc */
    TDM_RANGE_GLOBAL = 2,  /* a module's __device__/__constant__ variable */
    /* ---- ipc (issue 14) ---- */
    TDM_RANGE_IMPORT = 3,  /* another session's allocation opened with cudaIpcOpenMemHandle */
} tdm_range_kind;

typedef struct tdm_range {
    uint64_t addr;
    uint64_t size;         /* what the guest asked for; accesses are checked against it */
    uint64_t mapped;       /* what is mapped (size rounded up to the granularity) */
    tdm_range_kind kind;
    void *backing;         /* the owner's record of the range; the map never reads it */
} tdm_range;

typedef struct tdm_range_map {
    tdm_range *v;
    size_t n, cap;
} tdm_range_map;

void tdm_range_map_init(tdm_range_map *m);
void tdm_range_map_release(tdm_range_map *m);
/* -1 if the range is empty, wraps, or overlaps one already there. */
int tdm_range_map_insert(tdm_range_map *m, const tdm_range *r);
/* Removes the range that starts exactly at addr; -1 if there is none. */
int tdm_range_map_remove(tdm_range_map *m, uint64_t addr, tdm_range *out);
/* The range containing addr, or NULL. */
const tdm_range *tdm_range_map_find(const tdm_range_map *m, uint64_t addr);
/* True when [addr, addr+len) lies inside one range; len 0 needs addr inside. */
bool tdm_range_map_covers(const tdm_range_map *m, uint64_t addr, uint64_t len);

#endif
