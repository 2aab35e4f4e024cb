/* MD2 (RFC 1319) and HMAC (RFC 2104) over it: the integrity check of the CUDA runtime's
 * private export table (drv_export.c) is an HMAC-MD2. */
#ifndef TANDEM_MD2_H
#define TANDEM_MD2_H

#include <stddef.h>
#include <stdint.h>

#define TDM_MD2_BLOCK 16

typedef struct tdm_md2 {
    uint8_t x[48];             /* the state, then the block and their xor */
    uint8_t checksum[16];
    uint8_t block[16];
    unsigned used;             /* bytes in block */
    uint8_t last;              /* the checksum's running byte */
} tdm_md2;

void tdm_md2_init(tdm_md2 *m);
void tdm_md2_update(tdm_md2 *m, const void *data, size_t len);
void tdm_md2_final(tdm_md2 *m, uint8_t digest[16]);
/* HMAC-MD2 with a key of one block (16 bytes), over the concatenation of `parts`. */
void tdm_hmac_md2(const uint8_t key[16], const void *const *parts, const size_t *lens, unsigned nparts,
                  uint8_t mac[16]);

#endif
