/* The checks the server makes of a guest's shm region: the header the guest
 * wrote (tdm_shm_geom_check, as tdm_shm_region_attach calls it), then the
 * offsets a guest names memory by in its calls (tdm_shm_conn_span) and the
 * completion slots it asks for (tdm_shm_conn_complete).  A region the check
 * accepts must never let either reach outside it.
 *
 * Input: a tdm_shm_header, then any number of [u64 off][u64 len][u32 slot]
 * requests.  The region's actual size is the one the header claims (the
 * server compares it with the memfd's); regions up to RESERVE bytes get
 * memory behind them, so that a slot written out of place is seen. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "shm_server.h"

#define RESERVE (64ull << 20)

/* Address space for the region, mapped once; only touched pages cost. */
static uint8_t *reserve(void)
{
    static uint8_t *base;

    if (!base) {
        void *p = mmap(NULL, RESERVE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            abort();
        base = p;
    }
    return base;
}

/* Every section the check accepted lies in the region. */
static void check_geometry(const tdm_shm_geom *g)
{
    const uint64_t ends[][2] = {
        { g->ring_off[0], TDM_SHM_RING_CTL_SIZE + g->ring_cap[0] },
        { g->ring_off[1], TDM_SHM_RING_CTL_SIZE + g->ring_cap[1] },
        { g->slots_off, (uint64_t)g->nslots * sizeof(tdm_shm_slot) },
        { g->data_off, g->data_size },
        { g->host_off, g->host_size },
    };

    for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
        if (ends[i][0] < TDM_SHM_HEADER_SIZE || ends[i][1] > g->size || ends[i][0] > g->size - ends[i][1])
            abort();
    if (g->nslots == 0 || g->chunk * g->nslots != g->data_size)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const size_t req = 8 + 8 + 4;
    tdm_shm_header h;
    tdm_shm_conn c;
    char err[256];

    if (size < sizeof(h))
        return 0;
    memcpy(&h, data, sizeof(h));
    memset(&c, 0, sizeof(c));
    c.region.fd = -1;
    if (tdm_shm_geom_check(&h, h.region_size, &c.region.g, err, sizeof(err)) != 0)
        return 0;
    check_geometry(&c.region.g);
    if (c.region.g.size > RESERVE)
        return 0;
    c.region.base = reserve();
    for (size_t at = sizeof(h); size - at >= req; at += req) {
        uint64_t off, len;
        uint32_t slot;
        uint8_t *p;

        memcpy(&off, data + at, 8);
        memcpy(&len, data + at + 8, 8);
        memcpy(&slot, data + at + 16, 4);
        p = tdm_shm_conn_span(&c, off, len);
        if (p && (p < c.region.base || len > c.region.g.size || (uint64_t)(p - c.region.base) > c.region.g.size - len))
            abort();
        (void)tdm_shm_conn_complete(&c, slot, 1, 0);
    }
    return 0;
}
