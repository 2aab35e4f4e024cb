/* Writes the fuzz harnesses' seed corpus (corpus/<harness>/) from messages
 * encoded by Tandem's own encoders: the procedure table's XDR routines, the
 * shm ring's producer, the region's creator.  Run by `scripts/fuzz.sh
 * --seeds`; its output is committed, this program is how it was made.
 *
 *   fuzz-seeds <corpus directory> */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "shm_region.h"
#include "shm_ring.h"

static const char *root;

static void put(const char *harness, const char *name, const void *p, size_t n)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s/%s", root, harness, name);
    f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* ---- device code: an ELF with one kernel, PTX text, a fat binary of both ---- */

static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry _Z3addPf(\n.param .u64 p)\n{\nret;\n}\n";

static void le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A 64-bit ELF: header, string table, symbol table (a null symbol and one
 * kernel), section headers (null, symtab, strtab).  Returns its size. */
static size_t elf(uint8_t *p)
{
    static const char strtab[16] = "\0_Z6kernelPf";
    const size_t str = 64, sym = str + sizeof(strtab), sh = sym + 2 * 24;

    memset(p, 0, sh + 3 * 64);
    memcpy(p, "\x7f" "ELF\x02\x01\x01", 7);
    le(p + 0x28, sh, 8);      /* e_shoff */
    le(p + 0x34, 64, 2);      /* e_ehsize */
    le(p + 0x3A, 64, 2);      /* e_shentsize */
    le(p + 0x3C, 3, 2);       /* e_shnum */
    memcpy(p + str, strtab, sizeof(strtab));
    le(p + sym + 24, 1, 4);   /* the kernel: name at 1, STT_FUNC, STO_CUDA_ENTRY */
    p[sym + 24 + 4] = 0x12;
    p[sym + 24 + 5] = 0x10;
    le(p + sh + 64 + 4, 2, 4);          /* [1] SHT_SYMTAB, linked to [2] */
    le(p + sh + 64 + 0x18, sym, 8);
    le(p + sh + 64 + 0x20, 2 * 24, 8);
    le(p + sh + 64 + 0x28, 2, 4);
    le(p + sh + 128 + 4, 3, 4);         /* [2] SHT_STRTAB */
    le(p + sh + 128 + 0x18, str, 8);
    le(p + sh + 128 + 0x20, sizeof(strtab), 8);
    return sh + 3 * 64;
}

/* A fat binary block whose entries are the ELF and the PTX. */
static size_t fatbin(uint8_t *p)
{
    uint8_t e[1024];
    size_t n = elf(e), at = 16;

    memset(p, 0, 2048);
    le(p, 0xBA55ED50u, 4);
    le(p + 4, 1, 2);
    le(p + 6, 16, 2);
    le(p + at, 2, 2);                   /* ELF entry */
    le(p + at + 4, 16, 4);
    le(p + at + 8, n, 8);
    memcpy(p + at + 16, e, n);
    at += 16 + n;
    le(p + at, 1, 2);                   /* PTX entry */
    le(p + at + 4, 16, 4);
    le(p + at + 8, sizeof(ptx), 8);
    memcpy(p + at + 16, ptx, sizeof(ptx));
    at += 16 + sizeof(ptx);
    le(p + 8, at - 16, 8);
    return at;
}

static void code_images(void)
{
    uint8_t b[4096];
    size_t n;

    put("fuzz_code_image", "ptx", ptx, sizeof(ptx));
    put("fuzz_code_image", "cubin", b, elf(b));
    n = fatbin(b);
    put("fuzz_code_image", "fatbin", b, n);
    /* nvcc's layout: machine code and PTX in blocks back to back. */
    n = (n + 7) & ~(size_t)7;
    put("fuzz_code_image", "fatbin-two-blocks", b, n + fatbin(b + n));
}

/* ---- calls ---- */

/* Encodes `args` of procedure `proc` as a call message into out (after
 * `skip` bytes left for a record mark).  Returns the message's length. */
static size_t call(uint8_t *out, size_t cap, size_t skip, uint32_t proc, void *args)
{
    const tdm_call_info *c = tdm_call_find(proc);
    struct rpc_msg m;
    XDR x;
    size_t n;

    tdm_rpc_call_msg(&m, 0x1000 + proc, proc);
    xdrmem_create(&x, (char *)out + skip, (u_int)(cap - skip), XDR_ENCODE);
    if (!c || !xdr_callmsg(&x, &m) || !c->xargs(&x, args)) {
        fprintf(stderr, "fuzz-seeds: cannot encode procedure %u\n", proc);
        exit(1);
    }
    n = xdr_getpos(&x);
    xdr_destroy(&x);
    return n;
}

/* A few calls of different shapes: none, a number, bytes to copy (more
 * than one ring frame), a module (the fat binary above). */
typedef struct seed_call {
    const char *name;
    uint32_t proc;
    void *args;
} seed_call;

static uint8_t image[4096], payload[1500];
static tdm_u64 malloc_args = 4096;
static tdm_memcpy_htod_args htod = { .dst = 0x7f0000001000ull, .data = { sizeof(payload), (char *)payload } };
static tdm_module_load_args module = { .image = { 0, (char *)image } };
static tdm_hello_args hello = { .proto_version = TDM_PROTO_VERSION, .pid = 42, .client = "pid-42",
                                .token = { 28, "alice-token-0123456789abcdef" } };
static tdm_resume_args resume = { .proto_version = TDM_PROTO_VERSION, .pid = 42, .session_id = 1ull << 40,
                                  .resume_token = 7, .epoch = 3, .epoch_sent = 4,
                                  .token = { 28, "alice-token-0123456789abcdef" } };
static const seed_call calls[] = {
    { "hello", TDM_HELLO, &hello },
    { "resume", TDM_RESUME, &resume },
    { "null", TDM_NULL, NULL },
    { "malloc", TDM_MALLOC, &malloc_args },
    { "memcpy-htod", TDM_MEMCPY_HTOD, &htod },
    { "module-load", TDM_MODULE_LOAD, &module },
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))

static void tcp_calls(void)
{
    static uint8_t all[1 << 16], b[1 << 14];
    size_t at = 0;

    for (size_t i = 0; i < NCALLS; i++) {
        size_t n = call(b, sizeof(b), 4, calls[i].proc, calls[i].args);

        le(b, 0, 4);   /* the record mark is big-endian: last fragment, n bytes */
        b[0] = 0x80 | (uint8_t)(n >> 24);
        b[1] = (uint8_t)(n >> 16);
        b[2] = (uint8_t)(n >> 8);
        b[3] = (uint8_t)n;
        put("fuzz_rpc_tcp", calls[i].name, b, n + 4);
        /* The front of a server with a process per tenant reads the first record alone. */
        put("fuzz_first_call", calls[i].name, b, n + 4);
        memcpy(all + at, b, n + 4);
        at += n + 4;
    }
    put("fuzz_rpc_tcp", "all-in-one-stream", all, at);
}

/* The ring as the harness reads it: [u8 capacity][u64 start][u64 head][bytes]. */
static void ring_calls(void)
{
    static _Alignas(64) uint8_t ring[TDM_SHM_RING_CTL_SIZE + TDM_SHM_MIN_RING];
    static uint8_t b[1 << 14], seed[sizeof(ring)];
    const uint64_t starts[] = { 0, TDM_SHM_MIN_RING - 64 };   /* from the start; wrapping round the end */

    for (size_t s = 0; s < 2; s++) {
        for (size_t i = 0; i < NCALLS; i++) {
            size_t n = call(b, sizeof(b), 0, calls[i].proc, calls[i].args);
            tdm_shm_ring r;
            char name[64];
            uint64_t head;

            if (n > TDM_SHM_MIN_RING / 2)   /* more than fits unread in the smallest ring */
                continue;
            memset(ring, 0, sizeof(ring));
            tdm_shm_ring_attach(&r, ring, TDM_SHM_MIN_RING);
            r.pos = r.seen = starts[s];
            atomic_store(&r.ctl->tail, starts[s]);
            if (tdm_shm_ring_send(&r, b, n, NULL, NULL) != TDM_SHM_OK)
                exit(1);
            head = atomic_load(&r.ctl->head);
            seed[0] = 0;
            le(seed + 1, starts[s], 8);
            le(seed + 9, head, 8);
            memcpy(seed + 17, ring + TDM_SHM_RING_CTL_SIZE, TDM_SHM_MIN_RING);
            snprintf(name, sizeof(name), "%s%s", calls[i].name, s ? "-wrapped" : "");
            put("fuzz_shm_ring", name, seed, 17 + TDM_SHM_MIN_RING);
        }
    }
}

/* What a guest's call names: offset, length, completion slot. */
static size_t request(uint8_t *p, uint64_t off, uint64_t len, uint32_t slot)
{
    le(p, off, 8);
    le(p + 8, len, 8);
    le(p + 16, slot, 4);
    return 20;
}

static void region(void)
{
    tdm_shm_region r;
    uint8_t b[sizeof(tdm_shm_header) + 4 * 20];
    size_t n = sizeof(tdm_shm_header);
    char err[256];

    if (tdm_shm_region_create(&r, 4096, err, sizeof(err))) {
        fprintf(stderr, "fuzz-seeds: %s\n", err);
        exit(1);
    }
    memcpy(b, r.base, sizeof(tdm_shm_header));
    put("fuzz_shm_region", "created", b, n);
    n += request(b + n, r.g.data_off, r.g.chunk, 0);
    n += request(b + n, r.g.host_off, r.g.host_size, TDM_SHM_NO_SLOT);
    n += request(b + n, r.g.data_off + r.g.data_size - 8, 16, r.g.nslots - 1);
    n += request(b + n, r.g.host_off - 8, 16, r.g.nslots);
    put("fuzz_shm_region", "created-spans", b, n);
    tdm_shm_region_release(&r);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz-seeds <corpus directory>\n");
        return 2;
    }
    root = argv[1];
    module.image.image_len = (u_int)fatbin(image);
    memset(payload, 0xa5, sizeof(payload));
    code_images();
    tcp_calls();
    ring_calls();
    region();
    /* The arguments of every procedure whose decoder has not been seen
     * yet, each value its least (decoded from zeros: numbers 0, strings and
     * arrays empty), re-encoded: [row, little-endian u16][the arguments]. */
    for (size_t i = 0; i < tdm_ncalls; i++) {
        static const uint8_t zeros[4096];
        static uint8_t args[4096], b[4096];
        const tdm_call_info *c = &tdm_calls[i];
        size_t j;
        XDR in, out;

        for (j = 0; j < i && tdm_calls[j].xargs != c->xargs; j++)
            ;
        if (j < i || c->args_size > sizeof(args))
            continue;
        memset(args, 0, sizeof(args));
        xdrmem_create(&in, (char *)zeros, sizeof(zeros), XDR_DECODE);
        xdrmem_create(&out, (char *)b + 2, sizeof(b) - 2, XDR_ENCODE);
        if (c->xargs(&in, args) && c->xargs(&out, args)) {
            le(b, i, 2);
            put("fuzz_xdr_args", c->name, b, 2 + xdr_getpos(&out));
        }
        in.x_op = XDR_FREE;
        c->xargs(&in, args);
        xdr_destroy(&in);
        xdr_destroy(&out);
    }
    return 0;
}
