/* The fat binaries nvcc embeds in a program, as the guest reads them. */
#ifndef TANDEM_GUEST_FATBIN_H
#define TANDEM_GUEST_FATBIN_H

#include <stddef.h>
#include <stdint.h>

#define TDM_FATBIN_WRAPPER_MAGIC 0x466243b1u
#define TDM_FATBIN_MAGIC 0xBA55ED50u

/* What nvcc's host stub passes to __cudaRegisterFatBinary. */
typedef struct tdm_fatbin_wrapper {
    int magic;
    int version;
    const unsigned long long *data;
    void *filename_or_fatbins;
} tdm_fatbin_wrapper;

/* The header of one fat binary block. */
typedef struct tdm_fatbin_header {
    uint32_t magic;
    uint16_t version;
    uint16_t header_size;
    uint64_t fat_size;
} tdm_fatbin_header;

/* The size of the image starting at `data`: every fat binary block that
 * follows the first back to back.  nvcc puts machine code and PTX in
 * separate blocks behind one wrapper (a program built for sm_75 carries its
 * sm_75 code in the first block and the PTX the driver compiles for newer
 * GPUs in the next), and the driver reads them all.  At most `limit` bytes;
 * 0 when the first block's header is not valid. */
size_t tdm_fatbin_image_size(const void *data, size_t limit);
/* The first block alone (0 when its header is not valid). */
size_t tdm_fatbin_block_size(const void *data, size_t limit);

#endif
