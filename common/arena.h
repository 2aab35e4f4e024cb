/* The logical address arena: one fixed virtual-address window, the same
 * number on every server, from which every session's allocations are carved.
 * This file only hands out address ranges; physical backing is the backend's
 * (mem_map) and the record of it is the session's range map. */
#ifndef TANDEM_COMMON_ARENA_H
#define TANDEM_COMMON_ARENA_H

#include <stdint.h>

typedef struct tdm_arena tdm_arena;

int tdm_arena_create(tdm_arena **out, uint64_t base, uint64_t size, uint64_t granularity);
void tdm_arena_destroy(tdm_arena *a);
/* size is rounded up to the granularity; 0 on success, -1 when no window fits. */
int tdm_arena_alloc(tdm_arena *a, uint64_t size, uint64_t *addr, uint64_t *rounded);
/* Takes exactly [addr, addr+size) (granularity-aligned) out of free space:
 * a standby places imported memory where its active server put it.  -1 if
 * any of it is not free. */
int tdm_arena_claim(tdm_arena *a, uint64_t addr, uint64_t size);
/* Returns -1 if [addr, addr+size) is not exactly an allocated range's extent
 * or overlaps free space. */
int tdm_arena_free(tdm_arena *a, uint64_t addr, uint64_t size);
uint64_t tdm_arena_free_bytes(tdm_arena *a);
uint64_t tdm_arena_granularity(const tdm_arena *a);

#endif
