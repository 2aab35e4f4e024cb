/* Pitched, 2D and 3D copies and memsets of the guest (api_layout_copy.c),
 * shared by the entry points of api_layout.c.  docs/memory-layouts.md. */
#ifndef TANDEM_GUEST_API_LAYOUT_H
#define TANDEM_GUEST_API_LAYOUT_H

#include "guest.h"

/* One side of a copy, host or device: row r of slice z starts at
 * ptr + (z * rows + r) * pitch.  rows matters only when depth > 1. */
typedef struct tdm_layout_side {
    char *ptr;
    size_t pitch, rows;
} tdm_layout_side;

/* cudaMemcpy2D/3D semantics; ext.width in bytes. */
cudaError_t tdm_layout_copy(tdm_layout_side dst, tdm_layout_side src, struct cudaExtent ext,
                            enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t tdm_layout_memset(tdm_layout_side dst, int value, struct cudaExtent ext, cudaStream_t stream);

#endif
