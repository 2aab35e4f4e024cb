/* MD2 (RFC 1319) and HMAC-MD2, the hash of the CUDA runtime's integrity check that Tandem's
 * libcuda answers (guest-lib/driver/drv_export.c).  Whether the runtime accepts the answer is
 * tested end to end by integration_test_driver_runtime. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "md2.h"

static void hex(const uint8_t d[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* RFC 1319, appendix A.5. */
Test(md2, rfc_1319_test_suite)
{
    static const char *const in[] = { "", "a", "abc", "message digest", "abcdefghijklmnopqrstuvwxyz",
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                                      "1234567890123456789012345678901234567890123456789012345678901234567890"
                                      "1234567890" };
    static const char *const want[] = { "8350e5a3e24c153df2275c9f80692773", "32ec01ec4a6dac72c0ab96fb34c0b5d1",
                                        "da853b0d3f88d99b30283a69e6ded6bb", "ab4f496bfb2a530b219ff33031fe06b0",
                                        "4e8ddff3650292ab5a4108c3aa47940b", "da33def2a42df13975352846c30338cd",
                                        "d5976f79d83d3a0dc9806c3c66f3efd8" };

    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        tdm_md2 m;
        uint8_t d[16];
        char got[33];
        tdm_md2_init(&m);
        tdm_md2_update(&m, in[i], strlen(in[i]));
        tdm_md2_final(&m, d);
        hex(d, got);
        cr_expect_str_eq(got, want[i], "MD2(\"%s\")", in[i]);
    }
}

/* Guards the parts loop: the runtime's message is a header and one record per device. */
Test(md2, hmac_over_parts_equals_hmac_over_their_concatenation)
{
    static const uint8_t key[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    const char *whole = "header of 48 bytes.............................device record of 28 bytes...";
    const void *one[1] = { whole };
    size_t one_len[1] = { strlen(whole) };
    const void *three[3] = { whole, whole + 48, whole + 60 };
    size_t three_len[3] = { 48, 12, strlen(whole) - 60 };
    uint8_t a[16], b[16];

    tdm_hmac_md2(key, one, one_len, 1, a);
    tdm_hmac_md2(key, three, three_len, 3, b);
    cr_expect_arr_eq(a, b, 16);
}

/* A regression value: the MAC this implementation computed, with the integrity check's key,
 * on the day NVIDIA's runtime accepted its answers (2026-11-24). */
Test(md2, hmac_regression_value)
{
    static const uint8_t key[16] = { 0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
                                     0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f };
    static const uint8_t want[16] = { 0x6f,0xf0,0xa9,0x2b,0x14,0x88,0xb5,0x79,0x07,0x82,0x66,0x8d,0xc4,0xf7,0x1b,0x6a };
    const char *msg = "The quick brown fox jumps over the lazy dog";
    const void *parts[1] = { msg };
    size_t lens[1] = { strlen(msg) };
    uint8_t mac[16];

    tdm_hmac_md2(key, parts, lens, 1, mac);
    cr_expect_arr_eq(mac, want, 16);
}
