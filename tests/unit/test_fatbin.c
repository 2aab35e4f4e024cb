/* How much of a registered fat binary the guest sends to the server.
 * Guards the bug that made programs built for an older GPU fail to load
 * (CUDA_ERROR_NO_BINARY_FOR_GPU): only the first block, the machine code,
 * was sent, never the PTX block after it. */
#include <criterion/criterion.h>
#include <string.h>

#include "fatbin.h"

#define BUF 4096

/* Writes one block (header + `payload` bytes of filler) at `at`. */
static size_t put_block(unsigned char *buf, size_t at, uint64_t payload)
{
    tdm_fatbin_header h = { TDM_FATBIN_MAGIC, 1, sizeof(h), payload };

    memcpy(buf + at, &h, sizeof(h));
    memset(buf + at + sizeof(h), 0x5a, payload);
    return at + sizeof(h) + payload;
}

typedef struct layout_case {
    const char *name;
    uint64_t payload[3];  /* blocks' payloads; 0 ends the list */
    size_t gap;           /* bytes between blocks */
    bool junk_after;      /* bytes that are not a block follow the last */
    size_t limit;         /* 0: BUF */
    size_t expected;
} layout_case;

static const layout_case cases[] = {
    { "one block", { 100 }, 0, false, 0, 16 + 100 },
    { "machine code then PTX, back to back", { 96, 200 }, 0, false, 0, 16 + 96 + 16 + 200 },
    { "three blocks", { 40, 48, 64 }, 0, true, 0, 3 * 16 + 40 + 48 + 64 },
    { "a second block after padding to 8 bytes", { 101, 64 }, 3, false, 0, 16 + 101 + 3 + 16 + 64 },
    { "junk after the only block", { 64 }, 0, true, 0, 16 + 64 },
    { "a second block past the limit is not read", { 64, 200 }, 0, false, 16 + 64 + 16 + 100, 16 + 64 },
};

Test(fatbin, image_size_covers_every_block)
{
    static _Alignas(8) unsigned char buf[BUF];

    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const layout_case *c = &cases[k];
        size_t at = 0;

        memset(buf, 0, sizeof(buf));
        for (int i = 0; i < 3 && c->payload[i]; i++) {
            if (i)
                at += c->gap;
            at = put_block(buf, at, c->payload[i]);
        }
        if (c->junk_after)
            memset(buf + at, 0xee, 32);
        cr_expect_eq(tdm_fatbin_image_size(buf, c->limit ? c->limit : BUF), c->expected, "%s", c->name);
    }
}

Test(fatbin, a_bad_first_header_is_no_image)
{
    static _Alignas(8) unsigned char buf[64];
    tdm_fatbin_header h = { 0x12345678, 1, sizeof(h), 8 };

    memcpy(buf, &h, sizeof(h));
    cr_expect_eq(tdm_fatbin_image_size(buf, sizeof(buf)), 0);
    h.magic = TDM_FATBIN_MAGIC;
    h.fat_size = 1000;   /* larger than what is there */
    memcpy(buf, &h, sizeof(h));
    cr_expect_eq(tdm_fatbin_image_size(buf, sizeof(buf)), 0);
}

/* Found by fuzz_code_image (tests/fuzz/corpus/fuzz_code_image/regress-header-past-room):
 * a header_size larger than the bytes left made `room - header_size` wrap,
 * so a block claimed tens of KiB past the limit and the guest would have
 * sent bytes it was never given.  Such a block is no block, first or later. */
Test(fatbin, a_header_longer_than_the_room_is_no_block)
{
    static _Alignas(8) unsigned char buf[256];
    tdm_fatbin_header h = { TDM_FATBIN_MAGIC, 1, 0xbc10, 0x1bf };
    size_t first;

    memset(buf, 0, sizeof(buf));
    memcpy(buf, &h, sizeof(h));
    cr_expect_eq(tdm_fatbin_block_size(buf, sizeof(buf)), 0);
    cr_expect_eq(tdm_fatbin_image_size(buf, sizeof(buf)), 0);

    first = put_block(buf, 0, 64);
    memcpy(buf + first, &h, sizeof(h));
    cr_expect_eq(tdm_fatbin_image_size(buf, sizeof(buf)), first, "a bad second block is not counted");
}
