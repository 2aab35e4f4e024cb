/* common/code_image.c (issue 14, libraries): what an image is, how long a
 * cubin or PTX is, and which kernels it names, for images built here byte
 * by byte: a minimal ELF64 cubin (a kernel, a device function and a
 * variable in its symbol table), PTX text, fat binaries holding them. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "code_image.h"

/* ---- a minimal cubin: sections null, .strtab, .symtab ---- */

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static const char strtab[] = "\0lib_fill\0helper\0lib_bias\0";
enum { STR_FILL = 1, STR_HELPER = 10, STR_BIAS = 17 };

/* Writes the cubin into buf (room for 512 bytes); its length. */
static size_t cubin(uint8_t *buf)
{
    const size_t str_off = 64, sym_off = 96, nsyms = 4, sh_off = sym_off + nsyms * 24;
    uint8_t *sym, *sh;

    memset(buf, 0, 512);
    memcpy(buf, "\x7f" "ELF", 4);
    buf[4] = 2;                            /* 64-bit */
    buf[5] = 1;                            /* little-endian */
    put64(buf + 0x28, sh_off);
    put16(buf + 0x3A, 64);
    put16(buf + 0x3C, 3);
    memcpy(buf + str_off, strtab, sizeof(strtab));
    sym = buf + sym_off;                   /* symbol 0 is the null one */
    put32(sym + 24, STR_FILL);
    sym[24 + 4] = 0x12;                    /* GLOBAL FUNC */
    sym[24 + 5] = 0x10;                    /* STO_CUDA_ENTRY: a kernel */
    put32(sym + 48, STR_HELPER);
    sym[48 + 4] = 0x12;                    /* a device function: no entry bit */
    put32(sym + 72, STR_BIAS);
    sym[72 + 4] = 0x11;                    /* GLOBAL OBJECT */
    sh = buf + sh_off;                     /* section 0 is the null one */
    put32(sh + 64 + 4, 3);                 /* SHT_STRTAB */
    put64(sh + 64 + 0x18, str_off);
    put64(sh + 64 + 0x20, sizeof(strtab));
    put32(sh + 128 + 4, 2);                /* SHT_SYMTAB */
    put64(sh + 128 + 0x18, sym_off);
    put64(sh + 128 + 0x20, nsyms * 24);
    put32(sh + 128 + 0x28, 1);             /* its names are in section 1 */
    put64(sh + 128 + 0x38, 24);
    return sh_off + 3 * 64;
}

/* A fat binary of one block whose one entry (kind 2, ELF; or anything
 * else, as a compressed payload looks) holds payload. */
static size_t fatbin(uint8_t *buf, const uint8_t *payload, size_t n, bool compressed)
{
    const size_t eh = 64;

    memset(buf, 0, 16 + eh);
    put32(buf, 0xBA55ED50u);
    put16(buf + 4, 1);
    put16(buf + 6, 16);
    put64(buf + 8, eh + n);
    put16(buf + 16, 2);
    put32(buf + 16 + 4, (uint32_t)eh);
    put64(buf + 16 + 8, n);
    memcpy(buf + 16 + eh, payload, n);
    if (compressed)
        buf[16 + eh] ^= 0xff;              /* no longer starts with an ELF magic */
    return 16 + eh + n;
}

static const char ptx[] = "//\n// Generated\n.version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry lib_axpb(\n.param .u64 p0\n)\n{\nret;\n}\n"
                          "// a comment naming .entryfake\n"
                          ".visible .entry\tlib_fill (\n)\n{\nret;\n}\n";

typedef struct names {
    char v[8][32];
    int n;
} names;

static int collect(const char *name, size_t n, void *arg)
{
    names *l = arg;

    cr_assert_lt(l->n, 8);
    cr_assert_lt(n, 32);
    memcpy(l->v[l->n], name, n);
    l->v[l->n++][n] = '\0';
    return 0;
}

Test(code_image, a_cubin_is_known_by_its_elf_header_and_its_kernels_by_the_entry_bit)
{
    uint8_t buf[512];
    size_t len = cubin(buf);
    names l = { 0 };

    cr_expect_eq(tdm_code_image_kind(buf, len), TDM_IMAGE_CUBIN);
    cr_expect_eq(tdm_code_image_length(buf, sizeof(buf)), len);
    cr_expect_eq(tdm_code_image_kind(buf, len - 1), TDM_IMAGE_INVALID, "its section table cut short");
    cr_expect_eq(tdm_code_image_length(buf, len - 1), 0);
    cr_assert_eq(tdm_code_image_kernels(buf, len, collect, &l), 0);
    cr_assert_eq(l.n, 1, "the device function and the variable are no kernels");
    cr_expect_str_eq(l.v[0], "lib_fill");
}

Test(code_image, ptx_is_text_ending_in_its_nul_and_its_kernels_are_its_entries)
{
    names l = { 0 };
    char two_nuls[] = ".version 8.0\0.entry x(\n";

    cr_expect_eq(tdm_code_image_kind(ptx, sizeof(ptx)), TDM_IMAGE_PTX);
    cr_expect_eq(tdm_code_image_length(ptx, 1u << 20), sizeof(ptx));
    cr_expect_eq(tdm_code_image_kind(ptx, sizeof(ptx) - 1), TDM_IMAGE_INVALID, "no NUL");
    cr_expect_eq(tdm_code_image_kind(two_nuls, sizeof(two_nuls)), TDM_IMAGE_INVALID, "a NUL inside");
    cr_expect_eq(tdm_code_image_kind("no version here", 16), TDM_IMAGE_INVALID);
    cr_assert_eq(tdm_code_image_kernels(ptx, sizeof(ptx), collect, &l), 0);
    cr_assert_eq(l.n, 2);
    cr_expect_str_eq(l.v[0], "lib_axpb");
    cr_expect_str_eq(l.v[1], "lib_fill");
}

Test(code_image, a_fat_binary_names_the_kernels_of_its_uncompressed_code)
{
    uint8_t elf[512], buf[1024];
    size_t n = cubin(elf), len = fatbin(buf, elf, n, false);
    names l = { 0 };

    cr_expect_eq(tdm_code_image_kind(buf, len), TDM_IMAGE_FATBIN);
    cr_expect_eq(tdm_code_image_kind(buf, len - 1), TDM_IMAGE_INVALID, "its block cut short");
    cr_assert_eq(tdm_code_image_kernels(buf, len, collect, &l), 0);
    cr_assert_eq(l.n, 1);
    cr_expect_str_eq(l.v[0], "lib_fill");

    memset(&l, 0, sizeof(l));
    len = fatbin(buf, elf, n, true);
    cr_expect_eq(tdm_code_image_kind(buf, len), TDM_IMAGE_FATBIN);
    cr_assert_eq(tdm_code_image_kernels(buf, len, collect, &l), 0);
    cr_expect_eq(l.n, 0, "a compressed payload is skipped");
}

Test(code_image, what_is_no_code_is_invalid)
{
    static const uint8_t junk[64] = { 1, 2, 3, 4 };
    uint8_t elf[512];
    size_t n = cubin(elf);

    cr_expect_eq(tdm_code_image_kind(NULL, 100), TDM_IMAGE_INVALID);
    cr_expect_eq(tdm_code_image_kind(junk, 3), TDM_IMAGE_INVALID);
    cr_expect_eq(tdm_code_image_kind(junk, sizeof(junk)), TDM_IMAGE_INVALID);
    cr_expect_eq(tdm_code_image_length(junk, sizeof(junk)), 0);
    put64(elf + 0x28, 1u << 30);           /* a section table far away */
    cr_expect_eq(tdm_code_image_kind(elf, n), TDM_IMAGE_INVALID);
    cr_expect_eq(tdm_code_image_length(elf, n), 0);
}

/* Found by fuzz_code_image (tests/fuzz/corpus/fuzz_code_image/regress-nobits-strtab):
 * a symbol table whose names section is SHT_NOBITS, which elf_span does not
 * place, had its names read at whatever offset that section claimed; the
 * server (the sim backend lists a library's kernels) then read far outside
 * the guest's image and died with every session.  Such names are not read. */
Test(code_image, a_symbol_table_naming_a_nobits_section_names_no_kernel)
{
    uint8_t buf[512];
    size_t len = cubin(buf);
    uint8_t *strsh = buf + 96 + 4 * 24 + 64;
    names l = { 0 };

    put32(strsh + 4, 8);                   /* SHT_NOBITS */
    put64(strsh + 0x18, 1ull << 40);
    cr_expect_eq(tdm_code_image_kind(buf, len), TDM_IMAGE_CUBIN, "a NOBITS section may lie anywhere");
    cr_assert_eq(tdm_code_image_kernels(buf, len, collect, &l), 0);
    cr_expect_eq(l.n, 0);
}
