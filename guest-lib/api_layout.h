/* Pitched, 2D and 3D copies and memsets of the guest (api_layout_copy.c),
 * shared by the entry points of api_layout.c.  docs/memory-layouts.md. */
#ifndef TANDEM_GUEST_API_LAYOUT_H
#define TANDEM_GUEST_API_LAYOUT_H

#include "guest.h"

/* One side of a copy, host or device: row r of slice z starts at
 * ptr + (z * rows + r) * pitch (rows matters only when depth > 1); or, when
 * array is not 0, that CUDA array (its server handle) from byte x of row y
 * of slice z. */
typedef struct tdm_layout_side {
    char *ptr;
    size_t pitch, rows;
    uint64_t array;
    size_t x, y, z;
} tdm_layout_side;

/* cudaMemcpy2D/3D semantics; ext.width in bytes. */
cudaError_t tdm_layout_copy(tdm_layout_side dst, tdm_layout_side src, struct cudaExtent ext,
                            enum cudaMemcpyKind kind, cudaStream_t stream);
/* ---- CUDA arrays the program holds (api_layout_array.c) ---- */
/* The array's server handle (0 for NULL), or cudaErrorInvalidResourceHandle
 * for one this process does not hold (*handle untouched). */
cudaError_t tdm_layout_array_handle(cudaArray_const_t a, uint64_t *handle);
/* Bytes of one element of the array; 0 if unknown. */
size_t tdm_layout_array_elem(uint64_t handle);
/* True when ext (width in bytes) at (x bytes, y, z) lies inside the array. */
bool tdm_layout_array_covers(uint64_t handle, size_t x, size_t y, size_t z, struct cudaExtent ext);

/* ---- mipmapped arrays (issue 14) ---- */
/* Records an array the process holds (a mipmapped array's level once the
 * server named it; nothing if already known), and forgets one. */
cudaError_t tdm_layout_array_remember(uint64_t handle, const struct cudaChannelFormatDesc *desc,
                                      struct cudaExtent ext, unsigned flags);
void tdm_layout_array_forget(uint64_t handle);

cudaError_t tdm_layout_memset(tdm_layout_side dst, int value, struct cudaExtent ext, cudaStream_t stream);

#endif
