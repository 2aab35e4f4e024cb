/* Pitched, 2D and 3D memory on the simulated GPU: a box is its rows, each
 * queued as the 1D copy or memset the stream already knows how to order
 * (sim_work.c), so a 2D copy is exactly as ordered and checked as its rows. */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

/* A CUDA array of the simulated GPU: its elements row by row in host
 * memory of the server (no tiling: layout is the driver's business, and
 * no kernel twin reads arrays yet). */
struct tdm_barray {
    unsigned char *bytes;
    uint64_t row_bytes, rows;   /* rows of one slice */
};

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

int sim_array_create(tdm_backend *b, const tdm_array_desc *d, tdm_barray **out)
{
    uint64_t rows = d->height ? d->height : 1, depth = d->depth ? d->depth : 1, row_bytes, bytes;
    tdm_barray *a;

    (void)b;
    if (__builtin_mul_overflow(d->width, (uint64_t)(d->bits / 8 * d->channels), &row_bytes) ||
        __builtin_mul_overflow(row_bytes, rows, &bytes) || __builtin_mul_overflow(bytes, depth, &bytes))
        return cudaErrorMemoryAllocation;
    if (!(a = calloc(1, sizeof(*a))) || !(a->bytes = calloc(1, bytes ? bytes : 1))) {
        free(a);
        return cudaErrorMemoryAllocation;
    }
    a->row_bytes = row_bytes;
    a->rows = rows;
    *out = a;
    return 0;
}

int sim_array_destroy(tdm_backend *b, tdm_barray *a)
{
    /* Work that uses it ran synchronously (sim_copy_3d), so nothing waits. */
    (void)b;
    free(a->bytes);
    free(a);
    return 0;
}

/* Where row y of slice z of the box starts, in this process. */
static unsigned char *row_ptr(const tdm_box *box, uint64_t y, uint64_t z)
{
    if (box->array)
        return box->array->bytes + ((box->z + z) * box->array->rows + box->y + y) * box->array->row_bytes + box->x;
    if (box->host)
        return (unsigned char *)box->host + row_offset(box, y, z);
    return (unsigned char *)(uintptr_t)(box->dev + row_offset(box, y, z));
}

/* A copy from or to an array waits for the stream's earlier work and is
 * done at once, row by row: the array lies outside the simulated device's
 * mapped memory, which queued copies check against.  The session layer has
 * checked both boxes (sim device addresses are addresses of this process). */
static int copy_with_array(tdm_backend *b, const tdm_box *dst, const tdm_box *src, tdm_extent ext,
                           tdm_bstream *s)
{
    int err = sim_stream_synchronize(b, s);

    for (uint64_t z = 0; !err && z < ext.depth; z++)
        for (uint64_t y = 0; y < ext.height; y++)
            memmove(row_ptr(dst, y, z), row_ptr(src, y, z), ext.width);
    return err;
}

int sim_copy_3d(tdm_backend *b, const tdm_box *dst, const tdm_box *src, tdm_extent ext, tdm_bstream *s)
{
    int err = 0;

    if (dst->array || src->array)
        return copy_with_array(b, dst, src, ext, s);

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
