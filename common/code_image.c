#include "code_image.h"

#include <stdint.h>
#include <string.h>

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_HEADER 16u         /* magic u32, version u16, header_size u16, fat_size u64 */
#define FATBIN_ENTRY_HEADER 16u   /* kind u16, version u16, header_size u32, payload size u64 */
#define FATBIN_KIND_PTX 1u
#define FATBIN_KIND_ELF 2u
#define ELF_HEADER 64u            /* ELF64 */
#define ELF_SECTION 64u
#define ELF_SYMBOL 24u
#define SHT_SYMTAB 2u
#define SHT_NOBITS 8u
#define STT_FUNC 2u
#define STO_CUDA_ENTRY 0x10u      /* st_other bit of a kernel's symbol */

static uint16_t u16_at(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static uint32_t u32_at(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t u64_at(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* [off, off+n) lies inside len bytes. */
static int fits(uint64_t off, uint64_t n, size_t len)
{
    return off <= len && n <= len - off;
}

static int is_elf64(const uint8_t *p, size_t room)
{
    return room >= ELF_HEADER && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F' && p[4] == 2 && p[5] == 1;
}

/* The bytes an ELF's headers say it spans (header tables and section
 * contents); 0 if its section table is not where it says, within room. */
static uint64_t elf_span(const uint8_t *p, size_t room)
{
    uint64_t phoff = u64_at(p + 0x20), shoff = u64_at(p + 0x28);
    uint64_t phsize = (uint64_t)u16_at(p + 0x36) * u16_at(p + 0x38);
    uint64_t shn = u16_at(p + 0x3C), shsize = shn * u16_at(p + 0x3A);
    uint64_t end = ELF_HEADER;

    if (shn && u16_at(p + 0x3A) != ELF_SECTION)
        return 0;
    if (!fits(shoff, shsize, room) || (phsize && !fits(phoff, phsize, room)))
        return 0;
    end = shoff + shsize > end ? shoff + shsize : end;
    end = phsize && phoff + phsize > end ? phoff + phsize : end;
    for (uint64_t i = 0; i < shn; i++) {
        const uint8_t *sh = p + shoff + i * ELF_SECTION;
        uint64_t o = u64_at(sh + 0x18), n = u64_at(sh + 0x20);
        if (u32_at(sh + 4) == SHT_NOBITS)
            continue;
        if (!fits(o, n, room))
            return 0;
        end = o + n > end ? o + n : end;
    }
    return end;
}

static int ptx_like(const uint8_t *p, size_t n)
{
    /* PTX starts with comments or directives; ".version" is required. */
    static const char want[] = ".version";
    for (size_t i = 0; i + sizeof(want) - 1 <= n; i++)
        if (memcmp(p + i, want, sizeof(want) - 1) == 0)
            return 1;
    return 0;
}

tdm_image_kind tdm_code_image_kind(const void *image, size_t len)
{
    const uint8_t *p = image;

    if (!p || len < 4)
        return TDM_IMAGE_INVALID;
    if (u32_at(p) == FATBIN_MAGIC) {
        if (len < FATBIN_HEADER || u16_at(p + 6) < FATBIN_HEADER || !fits(u16_at(p + 6), u64_at(p + 8), len))
            return TDM_IMAGE_INVALID;
        return TDM_IMAGE_FATBIN;
    }
    if (is_elf64(p, len))
        return elf_span(p, len) && elf_span(p, len) <= len ? TDM_IMAGE_CUBIN : TDM_IMAGE_INVALID;
    if (p[len - 1] == '\0' && memchr(p, '\0', len) == p + len - 1 && ptx_like(p, len - 1))
        return TDM_IMAGE_PTX;
    return TDM_IMAGE_INVALID;
}

size_t tdm_code_image_length(const void *code, size_t limit)
{
    const uint8_t *p = code;
    const uint8_t *nul;

    if (!p || limit < 4)
        return 0;
    if (limit >= ELF_HEADER && is_elf64(p, limit)) {
        uint64_t n = elf_span(p, limit);
        return (size_t)n;
    }
    nul = memchr(p, '\0', limit);
    return nul && ptx_like(p, (size_t)(nul - p)) ? (size_t)(nul - p) + 1 : 0;
}

static int elf_kernels(const uint8_t *p, size_t len, int (*fn)(const char *, size_t, void *), void *arg)
{
    uint64_t shoff, shn;

    if (!is_elf64(p, len) || !elf_span(p, len))
        return 0;
    shoff = u64_at(p + 0x28);
    shn = u16_at(p + 0x3C);
    for (uint64_t i = 0; i < shn; i++) {
        const uint8_t *sh = p + shoff + i * ELF_SECTION;
        uint32_t link = u32_at(sh + 0x28);
        uint64_t off = u64_at(sh + 0x18), size = u64_at(sh + 0x20);
        const uint8_t *strsh;
        uint64_t stroff, strsize;

        if (u32_at(sh + 4) != SHT_SYMTAB || link >= shn)
            continue;
        strsh = p + shoff + (uint64_t)link * ELF_SECTION;
        stroff = u64_at(strsh + 0x18);
        strsize = u64_at(strsh + 0x20);
        /* elf_span did not check a SHT_NOBITS section's place: it has no
         * bytes in the image, so it holds no names (fuzz_code_image). */
        if (u32_at(strsh + 4) == SHT_NOBITS || !fits(stroff, strsize, len))
            continue;
        for (uint64_t s = 0; s + ELF_SYMBOL <= size; s += ELF_SYMBOL) {
            const uint8_t *sym = p + off + s;
            uint32_t name = u32_at(sym);
            const char *str;
            const void *end;
            int err;

            if ((sym[4] & 0xf) != STT_FUNC || !(sym[5] & STO_CUDA_ENTRY) || name >= strsize)
                continue;
            str = (const char *)p + stroff + name;
            end = memchr(str, '\0', strsize - name);
            if (!end || end == str)
                continue;
            err = fn(str, (size_t)((const char *)end - str), arg);
            if (err)
                return err;
        }
    }
    return 0;
}

static int is_name_char(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

static int ptx_kernels(const uint8_t *p, size_t len, int (*fn)(const char *, size_t, void *), void *arg)
{
    static const char entry[] = ".entry";
    const size_t el = sizeof(entry) - 1;

    for (size_t i = 0; i + el < len; i++) {
        size_t a, b;
        int err;
        if (memcmp(p + i, entry, el) != 0 || (i && is_name_char(p[i - 1])) || (p[i + el] != ' ' && p[i + el] != '\t'))
            continue;
        for (a = i + el; a < len && (p[a] == ' ' || p[a] == '\t'); a++)
            ;
        for (b = a; b < len && is_name_char(p[b]); b++)
            ;
        if (b == a)
            continue;
        err = fn((const char *)p + a, b - a, arg);
        if (err)
            return err;
        i = b;
    }
    return 0;
}

int tdm_code_image_kernels(const void *image, size_t len, int (*fn)(const char *name, size_t n, void *arg),
                           void *arg)
{
    const uint8_t *p = image;
    uint64_t off, end;

    switch (tdm_code_image_kind(image, len)) {
    case TDM_IMAGE_CUBIN:
        return elf_kernels(p, len, fn, arg);
    case TDM_IMAGE_PTX:
        return ptx_kernels(p, len - 1, fn, arg);
    case TDM_IMAGE_FATBIN:
        break;
    default:
        return 0;
    }
    /* Blocks back to back (8-byte aligned), each a header and its entries. */
    for (off = 0; fits(off, FATBIN_HEADER, len) && u32_at(p + off) == FATBIN_MAGIC;) {
        uint64_t hs = u16_at(p + off + 6), fs = u64_at(p + off + 8);
        uint64_t e;
        if (hs < FATBIN_HEADER || !fits(off + hs, fs, len))
            break;
        end = off + hs + fs;
        for (e = off + hs; fits(e, FATBIN_ENTRY_HEADER, end);) {
            const uint8_t *h = p + e;
            uint64_t eh = u32_at(h + 4), n = u64_at(h + 8);
            int err = 0;
            if (eh < FATBIN_ENTRY_HEADER || !fits(e + eh, n, end))
                break;
            /* A compressed payload is neither an ELF nor text: skipped. */
            if (u16_at(h) == FATBIN_KIND_ELF)
                err = elf_kernels(h + eh, (size_t)n, fn, arg);
            else if (u16_at(h) == FATBIN_KIND_PTX && ptx_like(h + eh, (size_t)n))
                err = ptx_kernels(h + eh, (size_t)n, fn, arg);
            if (err)
                return err;
            e += eh + n;
        }
        off = (end + 7) & ~(uint64_t)7;
    }
    return 0;
}
