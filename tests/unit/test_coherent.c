/* The host-copy state machine of guest-lib/coherent.c (docs/memory-models.md,
 * "How coherence works"), against a fake device: the copies it asks for are
 * served from an array standing for device memory and recorded.  Each case
 * is a table of steps (a host access, a launch, a copy, a prefetch) with
 * the uploads and fetches it must cause and the block states after it.
 * Host accesses fault for real: the library's SIGSEGV handler is installed. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "guest.h"

#define BLOCK (64u * 1024u)
#define NBLOCKS 4
#define SPAN (NBLOCKS * BLOCK)
#define SIZE (SPAN - 1000)          /* the device holds less than the last page */
#define DEV 0x7e0000000000ull       /* device address of the fake memory (mapped pairs) */

static uint8_t device[SPAN];
static uint8_t *host;

/* What the fake device was asked, in order: 'U' upload, 'F' fetch. */
typedef struct xfer {
    char dir;
    uint64_t off, n, stream;
} xfer;
/* Written by the fault handler's copies: volatile, so that the compiler
 * neither sinks the reset below a faulting access nor caches it. */
static volatile xfer log_[64];
static volatile int nlog;

/* The device address of the fake device memory: DEV, or for pinned memory
 * by its host pointer the host copy's own address. */
static uint64_t dev_base = DEV;

/* The library's stream for uploads before a wait (api_mapped.c). */
#define UPLOAD_STREAM 77u
cudaStream_t tdm_host_upload_stream(void)
{
    return (cudaStream_t)(uintptr_t)UPLOAD_STREAM;
}

/* Ordering with the upload stream is the device's business: counted only. */
static int fences, drains;
cudaError_t tdm_host_upload_fence(uint64_t stream)
{
    (void)stream;
    fences++;
    return cudaSuccess;
}

cudaError_t tdm_host_upload_drain(void)
{
    drains++;
    return cudaSuccess;
}

cudaError_t tdm_memcpy_direct(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t stream,
                              bool async)
{
    (void)async;
    cr_assert(nlog < 64);
    if (kind == cudaMemcpyHostToDevice) {
        uint64_t off = (uint64_t)(uintptr_t)dst - dev_base;
        cr_assert(off + n <= SIZE, "upload past the device memory");
        memcpy(device + off, src, n);
        log_[nlog++] = (xfer){ 'U', off, n, (uint64_t)(uintptr_t)stream };
    } else {
        uint64_t off = (uint64_t)(uintptr_t)src - dev_base;
        cr_assert_eq(kind, cudaMemcpyDeviceToHost);
        cr_assert(off + n <= SIZE, "fetch past the device memory");
        memcpy(dst, device + off, n);
        log_[nlog++] = (xfer){ 'F', off, n, (uint64_t)(uintptr_t)stream };
    }
    return cudaSuccess;
}

bool tdm_allocs_is_device(const void *p)
{
    return (uint64_t)(uintptr_t)p - DEV < SIZE;
}

enum op {
    READ,          /* the host reads block b */
    WRITE,         /* the host writes block b */
    LAUNCH,        /* a kernel on stream s (device writes 0x5a over block b if b >= 0) */
    COPY_IN,       /* cudaMemcpy HtoD of 16 bytes into block b from pageable memory */
    PREFETCH_HOST, /* the whole range */
    PREFETCH_DEVICE,
    ATTACH_SINGLE, /* to stream s */
    BEFORE_WAIT,   /* a call that waits for the device is about to be sent */
    AFTER_WAIT,    /* it returned */
};

typedef struct step {
    enum op op;
    int b;
    uint64_t s;
    const char *xfers;     /* expected: one letter per transfer, "" for none */
    const char *states;    /* expected: I, C or D per block */
} step;

static void setup(void)
{
    host = mmap(NULL, SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(host != MAP_FAILED);
    memset(device, 0, sizeof(device));
    nlog = 0;
    cr_assert_eq(tdm_coherent_add((uintptr_t)host, DEV, SIZE, SPAN, cudaMemAttachGlobal, true), cudaSuccess);
}

static void teardown(void)
{
    tdm_coherent_remove((uintptr_t)host);
    munmap(host, SPAN);
}

static void run(const step *steps, size_t n)
{
    static const char names[] = "ICD";

    for (size_t i = 0; i < n; i++) {
        const step *t = &steps[i];
        volatile uint8_t *p = host + (size_t)(t->b < 0 ? 0 : t->b) * BLOCK + 8;
        char got[16] = { 0 }, states[NBLOCKS + 1] = { 0 };
        uint8_t src[16];
        void *dst;
        const void *from;
        enum cudaMemcpyKind kind = cudaMemcpyHostToDevice;

        nlog = 0;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        switch (t->op) {
        case READ:
            cr_expect_eq(*p, device[(size_t)t->b * BLOCK + 8], "step %zu: the host reads what the device has", i);
            break;
        case WRITE:
            *p = (uint8_t)(0x10 + i);
            break;
        case LAUNCH:
            cr_assert_eq(tdm_coherent_before_launch(t->s, false), cudaSuccess);
            if (t->b >= 0)
                memset(device + (size_t)t->b * BLOCK, 0x5a, BLOCK);
            break;
        case COPY_IN:
            memset(src, 0x77, sizeof(src));
            dst = (void *)p;
            from = src;
            cr_assert_eq(tdm_coherent_copy(&dst, &from, sizeof(src), &kind, t->s), cudaSuccess);
            cr_expect_eq((uint64_t)(uintptr_t)dst, DEV + (uint64_t)((uint8_t *)p - host), "step %zu: translated", i);
            cr_expect_eq(kind, cudaMemcpyHostToDevice);
            memcpy(device + ((uint8_t *)p - host), src, sizeof(src));   /* the copy the caller makes */
            break;
        case PREFETCH_HOST:
        case PREFETCH_DEVICE:
            cr_assert_eq(tdm_coherent_prefetch(host, SIZE, t->op == PREFETCH_HOST, t->s), cudaSuccess);
            break;
        case ATTACH_SINGLE:
            cr_assert_eq(tdm_coherent_attach(host, cudaMemAttachSingle, t->s), cudaSuccess);
            break;
        case BEFORE_WAIT:
            tdm_coherent_before_wait();
            break;
        case AFTER_WAIT:
            tdm_coherent_after_wait();
            break;
        }
        for (int k = 0; k < nlog; k++) {
            got[k] = log_[k].dir;
            if (dev_base != DEV && log_[k].dir == 'U')
                cr_expect_eq(log_[k].stream, UPLOAD_STREAM, "step %zu: pinned uploads go on the library's stream", i);
        }
        cr_expect_str_eq(got, t->xfers, "step %zu: transfers %s, want %s", i, got, t->xfers);
        for (int k = 0; k < NBLOCKS; k++)
            states[k] = names[tdm_coherent_state(host + (size_t)k * BLOCK)];
        cr_expect_str_eq(states, t->states, "step %zu: states %s, want %s", i, states, t->states);
    }
}

TestSuite(coherent, .init = setup, .fini = teardown);

/* A fresh allocation is CLEAN everywhere; a write makes one block DIRTY; a
 * launch uploads exactly that block and invalidates everything; a read
 * fetches from the faulting block to the end of the INVALID run, and sees
 * what the kernel wrote. */
Test(coherent, write_launch_read)
{
    const step steps[] = {
        { READ, 0, 0, "", "CCCC" },
        { WRITE, 1, 0, "", "CDCC" },
        { LAUNCH, 2, 0, "U", "IIII" },
        { READ, 2, 0, "F", "IICC" },
        { READ, 0, 0, "F", "CCCC" },
        { WRITE, 3, 0, "", "CCCD" },
        { LAUNCH, -1, 0, "U", "IIII" },
    };

    run(steps, sizeof(steps) / sizeof(steps[0]));
    cr_expect_eq(device[BLOCK + 8], 0x11, "the host's write reached the device");
    cr_expect_eq(device[3 * BLOCK + 8], 0x15, "the last block's write reached the device");
}

/* A copy into the memory is a device copy: the block's DIRTY bytes go
 * first, then the block is INVALID, and a read sees the copy. */
Test(coherent, copies_flush_then_invalidate_what_they_write)
{
    const step steps[] = {
        { WRITE, 0, 0, "", "DCCC" },
        { COPY_IN, 0, 0, "U", "ICCC" },
        { READ, 0, 0, "F", "CCCC" },
    };

    run(steps, sizeof(steps) / sizeof(steps[0]));
    cr_expect_eq(host[8], 0x77);
}

/* A write to an INVALID block fetches it first (the write may cover part
 * of it) and leaves it DIRTY; the next launch uploads it. */
Test(coherent, a_write_to_an_invalid_block_fetches_then_dirties_it)
{
    const step steps[] = {
        { LAUNCH, 1, 0, "", "IIII" },
        { WRITE, 1, 0, "F", "IDCC" },
        { LAUNCH, -1, 0, "U", "IIII" },
    };

    run(steps, sizeof(steps) / sizeof(steps[0]));
    cr_expect_eq(device[BLOCK + 8], 0x11, "the host's byte");
    cr_expect_eq(device[BLOCK + 9], 0x5a, "the kernel's bytes beside it");
}

/* Prefetches: to the device uploads what the host wrote (blocks stay
 * readable), to the host fetches every INVALID block at once. */
Test(coherent, prefetches_move_what_they_say)
{
    const step steps[] = {
        { WRITE, 2, 0, "", "CCDC" },
        { PREFETCH_DEVICE, 0, 5, "U", "CCCC" },
        { LAUNCH, -1, 0, "", "IIII" },
        { PREFETCH_HOST, 0, 5, "F", "CCCC" },
    };

    run(steps, sizeof(steps) / sizeof(steps[0]));
    cr_expect_eq(log_[0].stream, 5u, "the fetch ran on the prefetch's stream");
}

/* Attached to stream 7: launches on stream 9 leave it alone, launches on
 * 7 and on the legacy stream reach it. */
Test(coherent, single_attachment_limits_the_launches_that_reach_it)
{
    const step steps[] = {
        { ATTACH_SINGLE, 0, 7, "", "CCCC" },
        { WRITE, 0, 0, "", "DCCC" },
        { LAUNCH, -1, 9, "", "DCCC" },
        { LAUNCH, -1, 7, "U", "IIII" },
        { READ, 1, 0, "F", "ICCC" },
        { LAUNCH, -1, 0, "", "IIII" },
    };

    run(steps, sizeof(steps) / sizeof(steps[0]));
}

/* A stream being captured moves no data; its end restores the rule. */
Test(coherent, captured_launches_move_nothing)
{
    const step steps[] = {
        { WRITE, 0, 0, "", "DCCC" },
        { LAUNCH, -1, 4, "", "DCCC" },
    };

    tdm_coherent_capture(4, true);
    run(steps, sizeof(steps) / sizeof(steps[0]));
    tdm_coherent_capture(4, false);
    cr_assert_eq(tdm_coherent_before_launch(4, false), cudaSuccess);
    cr_expect_eq(tdm_coherent_state(host), 0, "INVALID after an ordinary launch");
}

/* Copies that name no coherent memory are left alone. */
Test(coherent, other_copies_are_untouched)
{
    char a[8], b[8];
    void *dst = a;
    const void *src = b;
    enum cudaMemcpyKind kind = cudaMemcpyHostToHost;

    cr_assert_eq(tdm_coherent_copy(&dst, &src, sizeof(a), &kind, 0), cudaSuccess);
    cr_expect(dst == a && src == b && kind == cudaMemcpyHostToHost);
    cr_expect_eq(nlog, 0);
}

/* ---- pinned memory by its host pointer over TCP (issue 14) ---- */
static void setup_pinned(void)
{
    host = mmap(NULL, SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(host != MAP_FAILED);
    memset(device, 0, sizeof(device));
    nlog = 0;
    dev_base = (uint64_t)(uintptr_t)host;
    cr_assert_eq(tdm_coherent_add_pinned((uintptr_t)host, SIZE, SPAN), cudaSuccess);
}

/* The latch: the host's bytes are the block's (all DIRTY), a launch
 * uploads them (on the library's stream, fenced before the kernel) and
 * leaves the blocks valid, so a host write while the kernel runs only
 * dirties its block (no fetch, which would wait for the kernel); the
 * wait's upload goes first on the library's non-blocking stream, and after
 * the wait the CLEAN blocks are INVALID (the kernel may have written them)
 * while a block the host wrote since keeps its bytes: a read fetches what
 * the kernel wrote, after the uploads.  No launch since: waits move
 * nothing. */
Test(coherent, pinned_blocks_stay_valid_across_a_launch_until_the_wait, .init = setup_pinned, .fini = teardown)
{
    const step steps[] = {
        { LAUNCH, -1, 1, "U", "CCCC" },
        { WRITE, 0, 0, "", "DCCC" },
        { BEFORE_WAIT, -1, 0, "U", "CCCC" },
        { LAUNCH, 2, 1, "", "CCCC" },
        { WRITE, 1, 0, "", "CDCC" },
        { AFTER_WAIT, -1, 0, "", "IDII" },
        { READ, 2, 0, "F", "IDCC" },
        { WRITE, 3, 0, "", "IDCD" },
        { BEFORE_WAIT, -1, 0, "", "IDCD" },
        { AFTER_WAIT, -1, 0, "", "IDCD" },
        { LAUNCH, -1, 1, "UU", "ICCC" },
    };

    run(steps, sizeof(steps) / sizeof(steps[0]));
    cr_expect_eq(fences, 2, "each launch's uploads are fenced before its kernel");
    cr_expect_eq(drains, 1, "the fetch after the uploads waited for them");
    cr_expect_eq(device[8], 0x11, "the host's write while the kernel ran reached the device");
    cr_expect_eq(host[2 * BLOCK + 8], 0x5a, "the host reads what the kernel wrote");
    dev_base = DEV;
}
