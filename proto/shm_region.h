/* The shared region of one shm session: created by the guest (a sealed
 * memfd), handed to the server over a unix socket, mapped by both. */
#ifndef TANDEM_PROTO_SHM_REGION_H
#define TANDEM_PROTO_SHM_REGION_H

#include <stddef.h>
#include <stdint.h>

#include "shm_layout.h"

/* The geometry as validated: each side's private copy of the header. */
typedef struct tdm_shm_geom {
    uint64_t size;
    uint64_t ring_off[2], ring_cap[2];
    uint64_t slots_off;
    uint32_t nslots;
    uint64_t data_off, data_size, chunk;   /* chunk = data_size / nslots */
    uint64_t host_off, host_size;
} tdm_shm_geom;

typedef struct tdm_shm_region {
    uint8_t *base;
    tdm_shm_geom g;
    int fd;              /* the memfd while this side still holds it, else -1 */
} tdm_shm_region;

#define TDM_SHM_DEFAULT_HOST_MB 256u
#define TDM_SHM_DEFAULT_RING (1u << 20)
#define TDM_SHM_DEFAULT_SLOTS 4u
#define TDM_SHM_DEFAULT_CHUNK (4u << 20)

/* Guest: creates a region with host_size bytes of host memory (rounded up
 * to a page), the default rings and data area, sealed against shrinking and
 * growing so the server can never fault on a page that vanished.  0, or -1
 * and a reason in err. */
int tdm_shm_region_create(tdm_shm_region *r, uint64_t host_size, char *err, size_t errlen);

/* Server: checks that fd is a memfd sealed against shrinking whose size is
 * what its header says, at most max_size, maps it and validates the header
 * (tdm_shm_geom_check).  Takes no ownership of fd.  0, or -1 and a reason. */
int tdm_shm_region_attach(tdm_shm_region *r, int fd, uint64_t max_size, char *err, size_t errlen);

/* Validates a header copied out of a region of actual_size bytes: magic,
 * version, sizes, every section inside the region, aligned, and no two
 * overlapping.  Fills g.  0, or -1 and a reason. */
int tdm_shm_geom_check(const tdm_shm_header *h, uint64_t actual_size, tdm_shm_geom *g, char *err, size_t errlen);

/* Unmaps and closes what this side holds. */
void tdm_shm_region_release(tdm_shm_region *r);

static inline void *tdm_shm_at(const tdm_shm_region *r, uint64_t off)
{
    return r->base + off;
}

#endif
