/* MD2 as RFC 1319 specifies it, and HMAC (RFC 2104) with MD2's 16-byte block. */
#include <string.h>

#include "md2.h"

/* RFC 1319's permutation of 0..255, built from the digits of pi. */
static const uint8_t S[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,   243, 192, 199,
    115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212, 224, 22,  103, 66,  111, 24,
    138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142, 187, 47,  238, 122, 169, 104,
    121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,  128, 127, 93,  154, 90,  144, 50,  39,
    53,  62,  204, 231, 191, 247, 151, 3,   255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,
    170, 198, 79,  184, 56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,
    100, 113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246, 28,  70,
    97,  105, 52,  64,  126, 15,  85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,
    44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,  106, 220, 55,  200, 108, 193,
    171, 250, 36,  225, 123, 8,   12,  189, 177, 74,  120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254,
    59,  0,   29,  57,  242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,  49,  68,
    80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20,
};

void tdm_md2_init(tdm_md2 *m)
{
    memset(m, 0, sizeof(*m));
}

/* One 16-byte block: 18 rounds over the 48-byte state, and the checksum. */
static void compress(tdm_md2 *m)
{
    uint8_t t = 0;

    for (int j = 0; j < 16; j++) {
        m->x[16 + j] = m->block[j];
        m->x[32 + j] = (uint8_t)(m->block[j] ^ m->x[j]);
    }
    for (int round = 0; round < 18; round++) {
        for (int k = 0; k < 48; k++)
            t = m->x[k] ^= S[t];
        t = (uint8_t)(t + round);
    }
    for (int j = 0; j < 16; j++)
        m->last = m->checksum[j] ^= S[m->block[j] ^ m->last];
}

void tdm_md2_update(tdm_md2 *m, const void *data, size_t len)
{
    const uint8_t *p = data;

    for (size_t i = 0; i < len; i++) {
        m->block[m->used++] = p[i];
        if (m->used == TDM_MD2_BLOCK) {
            compress(m);
            m->used = 0;
        }
    }
}

void tdm_md2_final(tdm_md2 *m, uint8_t digest[16])
{
    uint8_t pad[16], sum[16];
    unsigned n = TDM_MD2_BLOCK - m->used;   /* 1..16 bytes of value n */

    memset(pad, (int)n, sizeof(pad));
    tdm_md2_update(m, pad, n);
    memcpy(sum, m->checksum, sizeof(sum));
    tdm_md2_update(m, sum, sizeof(sum));
    memcpy(digest, m->x, 16);
}

void tdm_hmac_md2(const uint8_t key[16], const void *const *parts, const size_t *lens, unsigned nparts,
                  uint8_t mac[16])
{
    uint8_t pad[16], inner[16];
    tdm_md2 m;

    for (int i = 0; i < 16; i++)
        pad[i] = key[i] ^ 0x36;
    tdm_md2_init(&m);
    tdm_md2_update(&m, pad, sizeof(pad));
    for (unsigned i = 0; i < nparts; i++)
        tdm_md2_update(&m, parts[i], lens[i]);
    tdm_md2_final(&m, inner);
    for (int i = 0; i < 16; i++)
        pad[i] = key[i] ^ 0x5c;
    tdm_md2_init(&m);
    tdm_md2_update(&m, pad, sizeof(pad));
    tdm_md2_update(&m, inner, sizeof(inner));
    tdm_md2_final(&m, mac);
}
