#include "fatbin.h"

#include <string.h>

static int block_size(const unsigned char *p, size_t room, size_t *size)
{
    tdm_fatbin_header h;

    if (room < sizeof(h))
        return -1;
    memcpy(&h, p, sizeof(h));
    /* header_size first: room - header_size must not wrap (fuzz_code_image). */
    if (h.magic != TDM_FATBIN_MAGIC || h.header_size < sizeof(h) || h.header_size > room ||
        h.fat_size > room - h.header_size)
        return -1;
    *size = h.header_size + h.fat_size;
    return 0;
}

size_t tdm_fatbin_block_size(const void *data, size_t limit)
{
    size_t size;

    return block_size(data, limit, &size) == 0 ? size : 0;
}

size_t tdm_fatbin_image_size(const void *data, size_t limit)
{
    const unsigned char *p = data;
    size_t total = 0, size;

    if (block_size(p, limit, &size) != 0)
        return 0;
    total = size;
    /* Blocks are 8-byte aligned; the one after the last is not a block
     * (the section ends, or another program's data follows). */
    for (;;) {
        size_t next = (total + 7) & ~(size_t)7;
        if (next >= limit || block_size(p + next, limit - next, &size) != 0)
            break;
        total = next + size;
    }
    return total;
}
