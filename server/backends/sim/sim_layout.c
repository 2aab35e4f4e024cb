/* Pitched, 2D and 3D memory on the simulated GPU: a box is its rows, each
 * queued as the 1D copy or memset the stream already knows how to order
 * (sim_work.c), so a 2D copy is exactly as ordered and checked as its rows. */
#include "sim_internal.h"

/* What current NVIDIA GPUs give cuMemAllocPitch's rows. */
#define SIM_PITCH_ALIGNMENT 512

int sim_pitch_alignment(tdm_backend *b, uint64_t *align)
{
    (void)b;
    *align = SIM_PITCH_ALIGNMENT;
    return 0;
}

static uint64_t row_offset(const tdm_box *box, uint64_t y, uint64_t z)
{
    return (z * box->rows + y) * box->pitch;
}

static int copy_row(tdm_backend *b, const tdm_box *dst, const tdm_box *src, uint64_t doff, uint64_t soff,
                    size_t n, tdm_bstream *s)
{
    if (src->host && dst->host)
        return cudaErrorInvalidValue;   /* the session layer never asks for host to host */
    if (src->host)
        return sim_memcpy_htod(b, dst->dev + doff, (const char *)src->host + soff, n, s);
    if (dst->host)
        return sim_memcpy_dtoh_sync(b, (char *)dst->host + doff, src->dev + soff, n, s);
    return sim_memcpy_dtod(b, dst->dev + doff, src->dev + soff, n, s);
}

int sim_copy_3d(tdm_backend *b, const tdm_box *dst, const tdm_box *src, tdm_extent ext, tdm_bstream *s)
{
    int err = 0;

    for (uint64_t z = 0; !err && z < ext.depth; z++)
        for (uint64_t y = 0; !err && y < ext.height; y++)
            err = copy_row(b, dst, src, row_offset(dst, y, z), row_offset(src, y, z), ext.width, s);
    return err;
}

int sim_memset_3d(tdm_backend *b, const tdm_box *dst, uint8_t value, tdm_extent ext, tdm_bstream *s)
{
    int err = 0;

    for (uint64_t z = 0; !err && z < ext.depth; z++)
        for (uint64_t y = 0; !err && y < ext.height; y++)
            err = sim_memset_d8(b, dst->dev + row_offset(dst, y, z), value, ext.width, s);
    return err;
}
