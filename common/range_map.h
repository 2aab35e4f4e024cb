/* A session's logical-to-physical translation: every logical range the
 * session owns, what backs it, and its user-visible size.  Lookups are binary
 * searches over a sorted array. */
#ifndef TANDEM_COMMON_RANGE_MAP_H
#define TANDEM_COMMON_RANGE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    TDM_RANGE_ALLOC = 1,   /* cudaMalloc: arena address, physical memory from the backend */
    TDM_RANGE_GLOBAL = 2,  /* a module's __device__/__constant__ variable: module memory */
} tdm_range_kind;

typedef struct tdm_range {
    uint64_t addr;
    uint64_t size;         /* what the guest asked for; accesses are checked against it */
    uint64_t mapped;       /* what is mapped (size rounded up to the granularity) */
    tdm_range_kind kind;
    void *backing;         /* tdm_bmem * for ALLOC; the owning module for GLOBAL */
    /* The device address behind addr.  The same number for allocations (the
     * arena is at one address everywhere); for a variable of a module a
     * standby loaded, where this process's copy of it lives. */
    uint64_t dev;
    struct tdm_shadow *shadow; /* exact resume: the ALLOC's epoch shadow (shadow.h) */
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
/* The same, writable: for bookkeeping fields (shadow), never the extent. */
tdm_range *tdm_range_map_find_mut(tdm_range_map *m, uint64_t addr);
/* True when [addr, addr+len) lies inside one range; len 0 needs addr inside. */
bool tdm_range_map_covers(const tdm_range_map *m, uint64_t addr, uint64_t len);

#endif
