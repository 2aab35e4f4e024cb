/* The sim backend, driven directly through tdm_backend_sim_ops: arena,
 * memory, copies, streams with real asynchrony, events, simulated kernels
 * and their faults, modules, shutdown. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <driver_types.h>

#include "backend.h"

/* ThreadSanitizer only accepts application memory in a few windows of the
 * address space; the default arena address is outside them. */
#if defined(__SANITIZE_THREAD__)
#define ARENA_BASE 0x4000000000ull
#else
#define ARENA_BASE 0x200000000000ull
#endif
#define ARENA_SIZE (8ull << 30)
#define GRAN (2ull << 20)

#define K_VECTOR_ADD "_Z10vector_addPKfS0_Pfi"
#define K_INCREMENT "_Z9incrementPji"
#define K_TRANSFORM "_Z12se_transformPjijj"
#define K_COMBINE "_Z10se_combinePKjS0_Pji"
#define K_MATMUL "_Z12matmul_tiledPKfS0_Pfi"
#define K_SPIN "_Z17mm_spin_until_setPVjPj"
#define K_STAMP "_Z8cb_stampPjj"

static const tdm_backend_ops *ops = &tdm_backend_sim_ops;
static tdm_backend *be;

static void up(void)
{
    tdm_backend_config cfg = { .device = 0, .arena_base = ARENA_BASE, .arena_size = ARENA_SIZE };

    cr_assert_eq(ops->init(&be, &cfg), 0);
    cr_assert_eq(ops->arena_reserve(be), 0);
}

static void down(void)
{
    ops->shutdown(be);
    be = NULL;
}

/* A fat binary header (16 bytes) followed by `payload` bytes. */
static size_t make_image(uint8_t *buf, size_t payload)
{
    uint32_t magic = 0xBA55ED50u;
    uint16_t version = 1, header_size = 16;
    uint64_t fat_size = payload;

    memcpy(buf, &magic, 4);
    memcpy(buf + 4, &version, 2);
    memcpy(buf + 6, &header_size, 2);
    memcpy(buf + 8, &fat_size, 8);
    memset(buf + 16, 0x5a, payload);
    return 16 + payload;
}

static tdm_bmodule *load_module(void)
{
    uint8_t img[64];
    tdm_bmodule *m = NULL;

    cr_assert_eq(ops->module_load(be, img, make_image(img, 48), &m), 0);
    return m;
}

static tdm_bfunc *get_func(tdm_bmodule *m, const char *name, tdm_param_info *pi)
{
    static tdm_param_info scratch;
    tdm_bfunc *f = NULL;

    cr_assert_eq(ops->module_get_function(be, m, name, &f, pi ? pi : &scratch), 0, "%s", name);
    return f;
}

static uint64_t map(uint64_t offset, uint64_t size, tdm_bmem **mem)
{
    uint64_t addr = ARENA_BASE + offset;

    cr_assert_eq(ops->mem_map(be, addr, size, mem), 0);
    return addr;
}

/* Packs parameters by the layout the backend reported. */
typedef struct packed {
    uint8_t buf[64];
    size_t len;
} packed;

static void pack(packed *p, const tdm_param_info *pi, unsigned i, const void *v)
{
    memcpy(p->buf + pi->offset[i], v, pi->size[i]);
    if (pi->offset[i] + pi->size[i] > p->len)
        p->len = pi->offset[i] + pi->size[i];
}

/* increment(x, n) on stream s, `times` times. */
static void launch_increment(tdm_bfunc *f, const tdm_param_info *pi, uint64_t x, int32_t n, int times,
                             tdm_bstream *s)
{
    packed p = { .len = 0 };
    tdm_dim3 grid = { (uint32_t)(n + 255) / 256, 1, 1 }, block = { 256, 1, 1 };

    pack(&p, pi, 0, &x);
    pack(&p, pi, 1, &n);
    for (int k = 0; k < times; k++)
        cr_assert_eq(ops->launch(be, f, grid, block, 0, s, p.buf, p.len), 0);
}

/* After cr_redirect_stderr(): whether what was written so far contains a
 * and b (one read: what a read took is gone). */
static bool stderr_contains_both(const char *a, const char *b)
{
    FILE *f = cr_get_redirected_stderr();
    char buf[8192];
    size_t n;

    fflush(stderr);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    return strstr(buf, a) && strstr(buf, b);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- device ---- */

Test(sim_device, says_it_is_simulated, .init = up, .fini = down)
{
    tdm_device_info di;
    int v = 0;
    uint64_t free_b = 0, total = 0;

    cr_expect(ops->simulated);
    cr_expect_str_eq(ops->name, "sim");
    cr_assert_eq(ops->device_info(be, &di), 0);
    cr_expect(di.simulated);
    cr_expect(strstr(di.name, "simulated") != NULL, "name: %s", di.name);
    cr_expect(strstr(di.name, "not a real GPU") != NULL, "name: %s", di.name);
    cr_expect_eq(di.total_mem, 16ull << 30);
    cr_expect_eq(di.attrs[cudaDevAttrMaxThreadsPerBlock], 1024);
    cr_expect_eq(di.attrs[cudaDevAttrMaxBlockDimZ], 64);
    cr_expect_eq(di.attrs[cudaDevAttrMaxGridDimX], 0x7fffffff);
    cr_expect_eq(di.attrs[cudaDevAttrWarpSize], 32);
    cr_expect_eq(di.attrs[cudaDevAttrComputeCapabilityMajor], 9);
    cr_expect_eq(di.attrs[cudaDevAttrComputeCapabilityMinor], 0);
    cr_expect_eq(di.attrs[cudaDevAttrUnifiedAddressing], 1);
    cr_expect_eq(di.attrs[cudaDevAttrConcurrentKernels], 1);
    cr_expect_gt(di.attrs[cudaDevAttrMultiProcessorCount], 0);
    cr_assert_eq(ops->driver_version(be, &v), 0);
    cr_expect_eq(v, 13000);
    cr_assert_eq(ops->mem_get_info(be, &free_b, &total), 0);
    cr_expect_eq(total, 16ull << 30);
    cr_expect_eq(free_b, total);
    cr_expect_eq(ops->granularity(be), GRAN);
}

/* ---- arena and memory ---- */

Test(sim_arena, is_at_the_fixed_address, .init = up, .fini = down)
{
    /* Something is at the base now: a second fixed mapping must be refused. */
    void *p = mmap((void *)(uintptr_t)ARENA_BASE, GRAN, PROT_NONE,
                   MAP_FIXED_NOREPLACE | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    cr_expect_eq(p, MAP_FAILED);
    cr_expect_eq(errno, EEXIST);
    /* Reserving twice is refused rather than silently remapped. */
    cr_expect_eq(ops->arena_reserve(be), cudaErrorMemoryAllocation);
}

Test(sim_arena, refuses_an_occupied_address)
{
    tdm_backend_config cfg = { .device = 0, .arena_base = ARENA_BASE, .arena_size = ARENA_SIZE };
    void *squatter = mmap((void *)(uintptr_t)(ARENA_BASE + ARENA_SIZE / 2), GRAN, PROT_READ,
                          MAP_FIXED_NOREPLACE | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    cr_assert_neq(squatter, MAP_FAILED);
    cr_assert_eq(ops->init(&be, &cfg), 0);
    cr_redirect_stderr();
    cr_expect_eq(ops->arena_reserve(be), cudaErrorMemoryAllocation);
    /* Nothing of the squatter was replaced. */
    cr_expect_eq(*(volatile char *)squatter, 0);
    ops->shutdown(be);
    munmap(squatter, GRAN);
}

Test(sim_arena, refuses_a_misaligned_arena)
{
    tdm_backend_config cfg = { .device = 0, .arena_base = ARENA_BASE + 4096, .arena_size = ARENA_SIZE };

    cr_assert_eq(ops->init(&be, &cfg), 0);
    cr_redirect_stderr();
    cr_expect_eq(ops->arena_reserve(be), cudaErrorMemoryAllocation);
    ops->shutdown(be);
}

Test(sim_memory, map_is_zeroed_and_unmap_returns_it, .init = up, .fini = down)
{
    tdm_bmem *mem = NULL;
    uint64_t addr = map(4 * GRAN, 2 * GRAN, &mem), free_b, total;
    uint8_t *buf = malloc(2 * GRAN);

    cr_assert_eq(ops->mem_get_info(be, &free_b, &total), 0);
    cr_expect_eq(free_b, total - 2 * GRAN);
    memset(buf, 0xee, 2 * GRAN);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, buf, addr, 2 * GRAN, NULL), 0);
    for (size_t i = 0; i < 2 * GRAN; i++)
        cr_assert_eq(buf[i], 0, "byte %zu of fresh memory is %u", i, buf[i]);
    cr_assert_eq(ops->mem_unmap(be, addr, 2 * GRAN, mem), 0);
    cr_assert_eq(ops->mem_get_info(be, &free_b, &total), 0);
    cr_expect_eq(free_b, total);
    /* Mapped again: zero again, not the old contents. */
    addr = map(4 * GRAN, GRAN, &mem);
    cr_assert_eq(ops->memset_d8(be, addr, 0x77, GRAN, NULL), 0);
    /* As the session layer does before freeing: queued work may still use it. */
    cr_assert_eq(ops->stream_synchronize(be, NULL), 0);
    cr_assert_eq(ops->mem_unmap(be, addr, GRAN, mem), 0);
    addr = map(4 * GRAN, GRAN, &mem);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, buf, addr, GRAN, NULL), 0);
    cr_expect_eq(buf[0], 0);
    cr_expect_eq(buf[GRAN - 1], 0);
    cr_assert_eq(ops->mem_unmap(be, addr, GRAN, mem), 0);
    free(buf);
}

Test(sim_memory, refuses_overlap_and_ranges_outside_the_arena, .init = up, .fini = down)
{
    tdm_bmem *a = NULL, *b = NULL;
    uint64_t addr = map(0, 2 * GRAN, &a);

    cr_expect_eq(ops->mem_map(be, addr + GRAN, 2 * GRAN, &b), cudaErrorInvalidValue);
    cr_expect_eq(ops->mem_map(be, ARENA_BASE + ARENA_SIZE, GRAN, &b), cudaErrorInvalidValue);
    cr_expect_eq(ops->mem_map(be, ARENA_BASE + 4096, GRAN, &b), cudaErrorInvalidValue);
    cr_expect_eq(ops->mem_map(be, ARENA_BASE + ARENA_SIZE - GRAN, 2 * GRAN, &b), cudaErrorInvalidValue);
    cr_expect_eq(ops->mem_unmap(be, addr, GRAN, a), cudaErrorInvalidValue);
    cr_assert_eq(ops->mem_unmap(be, addr, 2 * GRAN, a), 0);
}

Test(sim_memory, copies_and_memset, .init = up, .fini = down)
{
    tdm_bmem *mem = NULL;
    uint64_t addr = map(0, GRAN, &mem);
    uint8_t src[1000], out[1000];

    for (int i = 0; i < 1000; i++)
        src[i] = (uint8_t)(i * 7);
    cr_assert_eq(ops->memcpy_htod(be, addr + 100, src, sizeof(src), NULL), 0);
    /* The backend took its own copy: changing ours changes nothing. */
    memset(src, 0, sizeof(src));
    cr_assert_eq(ops->memcpy_dtod(be, addr + 5000, addr + 100, 1000, NULL), 0);
    cr_assert_eq(ops->memset_d8(be, addr + 5000 + 10, 0xab, 20, NULL), 0);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, out, addr + 5000, sizeof(out), NULL), 0);
    for (int i = 0; i < 1000; i++) {
        uint8_t want = i >= 10 && i < 30 ? 0xab : (uint8_t)(i * 7);
        cr_assert_eq(out[i], want, "byte %d: %u, want %u", i, out[i], want);
    }
    /* Overlapping device-to-device copies behave like memmove. */
    cr_assert_eq(ops->memcpy_dtod(be, addr + 5001, addr + 5000, 999, NULL), 0);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, out, addr + 5000, sizeof(out), NULL), 0);
    cr_expect_eq(out[1], 0);     /* (uint8_t)(0 * 7) */
    cr_expect_eq(out[2], 7);
    cr_assert_eq(ops->mem_unmap(be, addr, GRAN, mem), 0);
}

Test(sim_memory, copy_to_unmapped_memory_faults_the_stream, .init = up, .fini = down)
{
    tdm_bmem *mem = NULL;
    tdm_bstream *s = NULL;
    uint64_t addr = map(0, GRAN, &mem);
    uint32_t v = 1;

    cr_assert_eq(ops->mem_unmap(be, addr, GRAN, mem), 0);
    cr_assert_eq(ops->stream_create(be, 0, 0, NULL, &s), 0);
    cr_redirect_stderr();
    cr_assert_eq(ops->memcpy_htod(be, addr, &v, sizeof(v), s), 0);
    cr_expect_eq(ops->stream_synchronize(be, s), cudaErrorIllegalAddress);
    cr_expect_eq(ops->stream_destroy(be, s), 0);
}

/* ---- streams ---- */

Test(sim_stream, work_is_asynchronous_and_ordered, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_INCREMENT, &pi);
    tdm_bstream *s = NULL;
    tdm_bmem *mem = NULL;
    const int32_t n = 1 << 22;
    uint64_t x = map(0, (uint64_t)n * 4, &mem);
    uint32_t *out = malloc((size_t)n * 4);
    double t0, enqueue_s, total_s;

    cr_assert_eq(ops->stream_create(be, cudaStreamNonBlocking, 0, NULL, &s), 0);
    cr_assert_eq(ops->memset_d8(be, x, 0, (size_t)n * 4, s), 0);
    t0 = now_s();
    launch_increment(f, &pi, x, n, 20, s);
    enqueue_s = now_s() - t0;
    /* The stream's worker has 20 launches over 4M elements to go. */
    cr_expect_eq(ops->stream_query(be, s), cudaErrorNotReady);
    cr_assert_eq(ops->stream_synchronize(be, s), 0);
    total_s = now_s() - t0;
    cr_expect_lt(enqueue_s, total_s / 2, "enqueueing took %.3fs of %.3fs: not asynchronous", enqueue_s, total_s);
    cr_expect_eq(ops->stream_query(be, s), 0);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, out, x, (size_t)n * 4, s), 0);
    for (int32_t i = 0; i < n; i++)
        cr_assert_eq(out[i], 20u * (1u + (uint32_t)(i % 7)), "x[%d] = %u", i, out[i]);
    cr_assert_eq(ops->stream_destroy(be, s), 0);
    cr_assert_eq(ops->mem_unmap(be, x, (uint64_t)n * 4, mem), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
    free(out);
}

/* Guards the CI hang of 2026-11-24 (integration_test_hostmem): a kernel
 * spinning on a latch held the memory table's lock for as long as it spun,
 * so another session's unmap waited for it, and every copy of every
 * session after that unmap waited too: the host write that would end the
 * spin never reached the device.  Now a map and an unmap return while the
 * kernel spins, and the latch set afterwards still ends it. */
Test(sim_kernel, a_spinning_kernel_does_not_hold_up_maps_and_unmaps, .init = up, .fini = down, .timeout = 30)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi, spi;
    tdm_bfunc *f = get_func(m, K_SPIN, &pi), *stamp = get_func(m, K_STAMP, &spi);
    tdm_bstream *spinner = NULL, *other = NULL;
    tdm_bmem *mem = NULL, *more = NULL;
    uint64_t latch = map(0, GRAN, &mem), seen = latch + 64, started = latch + 128, extra;
    /* The sim maps device memory at its device address, in this process. */
    volatile uint32_t *started_word = (volatile uint32_t *)(uintptr_t)started;
    uint32_t set = 7, got = 0, mark = 1;
    packed p = { .len = 0 }, sp = { .len = 0 };
    tdm_dim3 one = { 1, 1, 1 };
    double t0, waited;

    cr_assert_eq(ops->stream_create(be, cudaStreamNonBlocking, 0, NULL, &spinner), 0);
    cr_assert_eq(ops->stream_create(be, cudaStreamNonBlocking, 0, NULL, &other), 0);
    cr_assert_eq(ops->memset_d8(be, latch, 0, GRAN, spinner), 0);
    /* The zeros land before anything else: the host's write below goes on
     * another stream and must not be overwritten by them. */
    cr_assert_eq(ops->stream_synchronize(be, spinner), 0);
    pack(&sp, &spi, 0, &started);
    pack(&sp, &spi, 1, &mark);
    pack(&p, &pi, 0, &latch);
    pack(&p, &pi, 1, &seen);
    /* A stamp, then the spin on the same stream: once the stamp shows, the
     * worker is on to the spinning kernel (50 ms later it surely spins), so
     * the map below races a running kernel, not a queued one. */
    cr_assert_eq(ops->launch(be, stamp, one, one, 0, spinner, sp.buf, sp.len), 0);
    cr_assert_eq(ops->launch(be, f, one, one, 0, spinner, p.buf, p.len), 0);
    for (int i = 0; i < 5000 && *started_word != mark; i++)
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    cr_assert_eq(*started_word, mark, "the stamp before the spin never ran");
    nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
    t0 = now_s();
    extra = map(GRAN, GRAN, &more);
    cr_assert_eq(ops->mem_unmap(be, extra, GRAN, more), 0);
    waited = now_s() - t0;
    cr_expect_lt(waited, 5.0, "a map and an unmap waited %.1fs for a spinning kernel", waited);
    cr_expect_eq(ops->stream_query(be, spinner), cudaErrorNotReady, "the kernel stopped spinning on its own");
    /* The host's write, as a copy on another stream, ends the spin. */
    cr_assert_eq(ops->memcpy_htod(be, latch, &set, sizeof(set), other), 0);
    cr_assert_eq(ops->stream_synchronize(be, other), 0);
    cr_assert_eq(ops->stream_synchronize(be, spinner), 0);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, &got, seen, sizeof(got), spinner), 0);
    cr_expect_eq(got, set, "the kernel saw %u", got);
    cr_assert_eq(ops->stream_destroy(be, other), 0);
    cr_assert_eq(ops->stream_destroy(be, spinner), 0);
    cr_assert_eq(ops->mem_unmap(be, latch, GRAN, mem), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

/* ---- tenant isolation (issue 16) ---- */

/* Guards finding 2 of issue 16: a kernel that computes for long, without
 * ever waiting, held the memory table's lock for its whole run, so another
 * session's allocation waited for it and every later copy of every session
 * queued behind that allocation.  Now a map and a copy on another stream
 * finish while the kernel still runs. */
/* No .timeout: criterion's runner leaks a block for a second test with one
 * in the same run, which fails the LeakSanitizer build; ctest's bounds it. */
Test(sim_kernel, a_long_kernel_does_not_hold_up_other_streams_maps_and_copies, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi, spi;
    tdm_bfunc *f = get_func(m, K_MATMUL, &pi), *stamp = get_func(m, K_STAMP, &spi);
    tdm_bstream *busy = NULL, *other = NULL;
    tdm_bmem *mats = NULL, *mark_mem = NULL, *more = NULL;
    const int32_t n = 512;             /* one launch of n^3 checked multiply-adds: seconds, never a wait */
    uint64_t a = map(0, 2 * GRAN, &mats), b = a + (uint64_t)n * n * 4, c = b + (uint64_t)n * n * 4;
    uint64_t started = map(2 * GRAN, GRAN, &mark_mem), extra;
    volatile uint32_t *started_word = (volatile uint32_t *)(uintptr_t)started;
    uint32_t mark = 1, word = 0x5eed, back = 0;
    packed p = { .len = 0 }, sp = { .len = 0 };
    tdm_dim3 one = { 1, 1, 1 };

    cr_assert_eq(ops->stream_create(be, cudaStreamNonBlocking, 0, NULL, &busy), 0);
    cr_assert_eq(ops->stream_create(be, cudaStreamNonBlocking, 0, NULL, &other), 0);
    pack(&sp, &spi, 0, &started);
    pack(&sp, &spi, 1, &mark);
    pack(&p, &pi, 0, &a);
    pack(&p, &pi, 1, &b);
    pack(&p, &pi, 2, &c);
    pack(&p, &pi, 3, &n);
    cr_assert_eq(ops->launch(be, stamp, one, one, 0, busy, sp.buf, sp.len), 0);
    cr_assert_eq(ops->launch(be, f, (tdm_dim3){ 32, 32, 1 }, (tdm_dim3){ 16, 16, 1 }, 0, busy, p.buf, p.len), 0);
    for (int i = 0; i < 5000 && *started_word != mark; i++)
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    cr_assert_eq(*started_word, mark, "the stamp before the long kernel never ran");
    double t_started = now_s();
    nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
    double t0 = now_s();
    extra = map(3 * GRAN, GRAN, &more);
    cr_assert_eq(ops->memcpy_htod(be, extra, &word, sizeof(word), other), 0);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, &back, extra, sizeof(back), other), 0);
    double waited = now_s() - t0;
    cr_expect_eq(back, word);
    cr_assert_eq(ops->stream_synchronize(be, busy), 0);
    double ran = now_s() - t_started;
    /* Held up, they would take about as long as the kernel had left. */
    cr_expect_lt(waited, ran / 4, "the map and the copy took %.3f s beside a kernel of %.3f s", waited, ran);
    cr_assert_eq(ops->mem_unmap(be, extra, GRAN, more), 0);
    cr_assert_eq(ops->stream_destroy(be, other), 0);
    cr_assert_eq(ops->stream_destroy(be, busy), 0);
    cr_assert_eq(ops->mem_unmap(be, started, GRAN, mark_mem), 0);
    cr_assert_eq(ops->mem_unmap(be, a, 2 * GRAN, mats), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

/* Guards finding 1 of issue 16: a kernel reached any mapped memory, so a
 * guest that guessed another session's address read and wrote it.  Now a
 * kernel touches only what was granted to its stream's space: the owner's
 * kernel works on the memory, another space's kernel faults and leaves it
 * as it was. */
Test(sim_space, a_kernel_touches_only_memory_granted_to_its_space, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_INCREMENT, &pi);
    tdm_bspace *owner = NULL, *intruder = NULL;
    tdm_bstream *os = NULL, *is = NULL;
    tdm_bmem *mem = NULL;
    uint64_t x = map(0, GRAN, &mem);
    uint32_t *words = (uint32_t *)(uintptr_t)x;   /* mapped here, at its device address */

    cr_assert_eq(ops->space_create(be, &owner), 0);
    cr_assert_eq(ops->space_create(be, &intruder), 0);
    cr_assert_eq(ops->space_grant(be, owner, x), 0);
    cr_assert_eq(ops->stream_create(be, 0, 0, owner, &os), 0);
    cr_assert_eq(ops->stream_create(be, 0, 0, intruder, &is), 0);
    for (uint32_t i = 0; i < 64; i++)
        words[i] = 1000 + i;
    launch_increment(f, &pi, x, 64, 1, os);
    cr_assert_eq(ops->stream_synchronize(be, os), 0, "the owner's kernel was refused its own memory");
    cr_expect_eq(words[3], 1000 + 3 + 1 + 3);
    cr_redirect_stderr();
    launch_increment(f, &pi, x, 64, 1, is);
    cr_expect_eq(ops->stream_synchronize(be, is), cudaErrorIllegalAddress);
    cr_expect(stderr_contains_both("another session's memory", K_INCREMENT), "no fault naming the kernel");
    for (uint32_t i = 0; i < 64; i++)
        cr_assert_eq(words[i], 1000 + i + 1 + i % 7, "word %u changed by the other space's kernel", i);
    ops->stream_destroy(be, is);
    ops->stream_destroy(be, os);
    ops->space_destroy(be, intruder);
    ops->space_destroy(be, owner);
}

/* Guards finding 1 of issue 16: module globals were server heap pointers,
 * which told a guest where the server's heap is.  They are now device
 * addresses in the window the sim reserves right after the arena (1 GiB,
 * sim_internal.h), as a GPU gives device addresses. */
Test(sim_module, globals_are_device_addresses_beside_the_arena, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    uint64_t addr = 0, size = 0, window = ARENA_BASE + ARENA_SIZE;
    void *heap = malloc(64);

    cr_assert_eq(ops->module_get_global(be, m, "vadd_scale", &addr, &size), 0);
    cr_expect(addr >= window && addr + size <= window + (1ull << 30), "global at %#llx", (unsigned long long)addr);
    cr_expect_neq(addr >> 32, (uint64_t)(uintptr_t)heap >> 32, "a global next to the heap");
    free(heap);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

Test(sim_stream, destroy_finishes_queued_work, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_INCREMENT, &pi);
    tdm_bstream *s = NULL;
    tdm_bmem *mem = NULL;
    uint64_t x = map(0, GRAN, &mem);
    uint32_t out[8];

    cr_assert_eq(ops->stream_create(be, 0, 0, NULL, &s), 0);
    launch_increment(f, &pi, x, 1 << 18, 10, s);
    cr_assert_eq(ops->stream_destroy(be, s), 0);
    /* The legacy stream (NULL) sees the finished result. */
    cr_assert_eq(ops->memcpy_dtoh_sync(be, out, x, sizeof(out), NULL), 0);
    for (int i = 0; i < 8; i++)
        cr_expect_eq(out[i], 10u * (1u + (uint32_t)(i % 7)));
    cr_assert_eq(ops->mem_unmap(be, x, GRAN, mem), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

/* ---- events ---- */

Test(sim_event, never_recorded_is_complete, .init = up, .fini = down)
{
    tdm_bevent *e = NULL, *e2 = NULL;
    tdm_bstream *s = NULL;
    float ms = -1;

    cr_assert_eq(ops->event_create(be, 0, &e), 0);
    cr_assert_eq(ops->event_create(be, 0, &e2), 0);
    cr_expect_eq(ops->event_query(be, e), 0);
    cr_expect_eq(ops->event_synchronize(be, e), 0);
    cr_expect_eq(ops->event_elapsed_ms(be, e, e2, &ms), cudaErrorInvalidResourceHandle);
    cr_assert_eq(ops->stream_create(be, 0, 0, NULL, &s), 0);
    cr_expect_eq(ops->stream_wait_event(be, s, e), 0);
    cr_expect_eq(ops->stream_synchronize(be, s), 0);
    cr_assert_eq(ops->stream_destroy(be, s), 0);
    cr_assert_eq(ops->event_destroy(be, e), 0);
    cr_assert_eq(ops->event_destroy(be, e2), 0);
}

Test(sim_event, wait_orders_work_across_streams, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_INCREMENT, &pi);
    tdm_bstream *a = NULL, *b = NULL;
    tdm_bevent *done = NULL;
    tdm_bmem *mem = NULL;
    const int32_t n = 1 << 21;
    uint64_t x = map(0, 2 * (uint64_t)n * 4, &mem), y = x + (uint64_t)n * 4;
    uint32_t *out = malloc((size_t)n * 4);

    cr_assert_eq(ops->stream_create(be, cudaStreamNonBlocking, 0, NULL, &a), 0);
    cr_assert_eq(ops->stream_create(be, cudaStreamNonBlocking, 0, NULL, &b), 0);
    cr_assert_eq(ops->event_create(be, cudaEventDisableTiming, &done), 0);
    launch_increment(f, &pi, x, n, 15, a);
    cr_assert_eq(ops->event_record(be, done, a), 0);
    cr_expect_eq(ops->event_query(be, done), cudaErrorNotReady);
    /* b copies x only after a's increments: without the wait it would
     * copy (mostly) zeros. */
    cr_assert_eq(ops->stream_wait_event(be, b, done), 0);
    cr_assert_eq(ops->memcpy_dtod(be, y, x, (size_t)n * 4, b), 0);
    cr_expect_eq(ops->stream_query(be, b), cudaErrorNotReady);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, out, y, (size_t)n * 4, b), 0);
    for (int32_t i = 0; i < n; i++)
        cr_assert_eq(out[i], 15u * (1u + (uint32_t)(i % 7)), "y[%d] = %u", i, out[i]);
    cr_expect_eq(ops->event_query(be, done), 0);
    /* Destroying an event whose record is queued is allowed. */
    launch_increment(f, &pi, x, n, 2, a);
    cr_assert_eq(ops->event_record(be, done, a), 0);
    cr_assert_eq(ops->event_destroy(be, done), 0);
    cr_assert_eq(ops->stream_synchronize(be, a), 0);
    cr_assert_eq(ops->stream_destroy(be, a), 0);
    cr_assert_eq(ops->stream_destroy(be, b), 0);
    cr_assert_eq(ops->mem_unmap(be, x, 2 * (uint64_t)n * 4, mem), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
    free(out);
}

Test(sim_event, elapsed_time, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_INCREMENT, &pi);
    tdm_bstream *s = NULL;
    tdm_bevent *start = NULL, *stop = NULL, *untimed = NULL;
    tdm_bmem *mem = NULL;
    const int32_t n = 1 << 21;
    uint64_t x = map(0, (uint64_t)n * 4, &mem);
    float ms = -1;
    double t0;

    cr_assert_eq(ops->stream_create(be, 0, 0, NULL, &s), 0);
    cr_assert_eq(ops->event_create(be, 0, &start), 0);
    cr_assert_eq(ops->event_create(be, 0, &stop), 0);
    cr_assert_eq(ops->event_create(be, cudaEventDisableTiming, &untimed), 0);
    t0 = now_s();
    cr_assert_eq(ops->event_record(be, start, s), 0);
    launch_increment(f, &pi, x, n, 10, s);
    cr_assert_eq(ops->event_record(be, stop, s), 0);
    cr_assert_eq(ops->event_record(be, untimed, s), 0);
    cr_expect_eq(ops->event_elapsed_ms(be, start, stop, &ms), cudaErrorNotReady);
    cr_assert_eq(ops->event_synchronize(be, stop), 0);
    double wall_ms = (now_s() - t0) * 1e3;
    cr_assert_eq(ops->event_elapsed_ms(be, start, stop, &ms), 0);
    cr_expect_gt(ms, 0.0f);
    cr_expect_leq(ms, wall_ms + 1.0, "elapsed %.3f ms, but only %.3f ms passed", ms, wall_ms);
    cr_assert_eq(ops->event_synchronize(be, untimed), 0);
    cr_expect_eq(ops->event_elapsed_ms(be, start, untimed, &ms), cudaErrorInvalidResourceHandle);
    cr_assert_eq(ops->event_destroy(be, start), 0);
    cr_assert_eq(ops->event_destroy(be, stop), 0);
    cr_assert_eq(ops->event_destroy(be, untimed), 0);
    cr_assert_eq(ops->stream_destroy(be, s), 0);
    cr_assert_eq(ops->mem_unmap(be, x, (uint64_t)n * 4, mem), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

/* ---- kernels and faults ---- */

/* As on a GPU, a kernel's illegal address loses the whole context: the
 * error is sticky for its own stream and every other one, the legacy stream
 * and streams made later included; the backend knows which stream's work
 * lost it (docs/health.md). */
Test(sim_kernel, illegal_address_loses_the_context_for_every_stream, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_INCREMENT, &pi);
    tdm_bstream *bad = NULL, *good = NULL, *later = NULL;
    tdm_bmem *mem = NULL;
    uint64_t x = map(0, GRAN, &mem);
    uint32_t out[4] = { 0 }, in[4] = { 1, 2, 3, 4 };

    cr_assert_eq(ops->stream_create(be, cudaStreamNonBlocking, 0, NULL, &bad), 0);
    cr_assert_eq(ops->stream_create(be, cudaStreamNonBlocking, 0, NULL, &good), 0);
    /* Before the fault the other stream works. */
    cr_assert_eq(ops->memcpy_htod(be, x, in, sizeof(in), good), 0);
    launch_increment(f, &pi, x, 4, 1, good);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, out, x, sizeof(out), good), 0);
    cr_expect_eq(out[3], 4u + 1u + 3u);
    cr_expect_not(ops->stream_lost_context(be, bad));
    cr_redirect_stderr();
    /* Runs off the end of the 2 MiB mapping into reserved, unmapped arena. */
    launch_increment(f, &pi, x, (int32_t)(GRAN / 4) + 256, 1, bad);
    cr_expect_eq(ops->stream_synchronize(be, bad), cudaErrorIllegalAddress);
    cr_expect(ops->stream_lost_context(be, bad));
    cr_expect_not(ops->stream_lost_context(be, good));
    /* Sticky: later work on that stream is not done and the error stays. */
    launch_increment(f, &pi, x, 4, 1, bad);
    cr_expect_eq(ops->stream_synchronize(be, bad), cudaErrorIllegalAddress);
    cr_expect_eq(ops->stream_query(be, bad), cudaErrorIllegalAddress);
    cr_expect_eq(ops->memcpy_dtoh_sync(be, out, x, sizeof(out), bad), cudaErrorIllegalAddress);
    /* Every other stream of the context too, its work not done. */
    launch_increment(f, &pi, x, 4, 1, good);
    cr_expect_eq(ops->stream_synchronize(be, good), cudaErrorIllegalAddress);
    cr_expect_eq(ops->memcpy_dtoh_sync(be, out, x, sizeof(out), good), cudaErrorIllegalAddress);
    cr_expect_eq(ops->stream_synchronize(be, NULL), cudaErrorIllegalAddress);
    cr_assert_eq(ops->stream_create(be, 0, 0, NULL, &later), 0);
    cr_expect_eq(ops->stream_synchronize(be, later), cudaErrorIllegalAddress);
    cr_expect_not(ops->stream_lost_context(be, later));
    cr_expect_neq(ops->device_synchronize(be), 0);
    fflush(stderr);
    cr_expect(stderr_contains_both("tandem-server[sim]: kernel '_Z9incrementPji' faulted (illegal address)",
                                   "tandem-server[sim]: a kernel's fatal fault (cudaError 700) lost the simulated "
                                   "device context"));
    cr_assert_eq(ops->stream_destroy(be, bad), 0);
    cr_assert_eq(ops->stream_destroy(be, good), 0);
    cr_assert_eq(ops->stream_destroy(be, later), 0);
    cr_assert_eq(ops->mem_unmap(be, x, GRAN, mem), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

/* A bad pointer of each kind faults as on the GPU, each in a fresh context
 * (a fault loses the one it happens in), and never crashes the server. */
static void expect_fault(uint64_t (*ptr)(uint64_t x, uint32_t *host), int want)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_INCREMENT, &pi);
    tdm_bstream *st = NULL;
    tdm_bmem *mem = NULL;
    uint64_t x = map(0, GRAN, &mem);
    uint32_t host_word = 0;

    cr_assert_eq(ops->stream_create(be, 0, 0, NULL, &st), 0);
    launch_increment(f, &pi, ptr(x, &host_word), 1, 1, st);
    cr_expect_eq(ops->stream_synchronize(be, st), want);
    cr_expect_eq(host_word, 0u);
    cr_assert_eq(ops->stream_destroy(be, st), 0);
    cr_assert_eq(ops->mem_unmap(be, x, GRAN, mem), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

static uint64_t host_ptr(uint64_t x, uint32_t *host)
{
    (void)x;
    return (uint64_t)(uintptr_t)host;   /* a host pointer is no device address */
}

static uint64_t null_ptr(uint64_t x, uint32_t *host)
{
    (void)x;
    (void)host;
    return 0;
}

static uint64_t misaligned_ptr(uint64_t x, uint32_t *host)
{
    (void)host;
    return x + 2;
}

Test(sim_kernel, bad_pointers_fault_as_on_the_gpu, .init = up, .fini = down)
{
    cr_redirect_stderr();
    expect_fault(host_ptr, cudaErrorIllegalAddress);
    down();
    up();
    expect_fault(null_ptr, cudaErrorIllegalAddress);
    down();
    up();
    expect_fault(misaligned_ptr, cudaErrorMisalignedAddress);
}

Test(sim_kernel, unknown_kernel_is_named_in_the_log, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_bfunc *f = (tdm_bfunc *)1;
    tdm_param_info pi;

    cr_redirect_stderr();
    cr_expect_eq(ops->module_get_function(be, m, "_Z6nosuchPf", &f, &pi), cudaErrorInvalidDeviceFunction);
    cr_expect_null(f);
    fflush(stderr);
    cr_expect_stderr_eq_str("tandem-server[sim]: no simulated implementation of kernel '_Z6nosuchPf'\n");
    cr_assert_eq(ops->module_unload(be, m), 0);
}

Test(sim_kernel, bad_images_are_refused, .init = up, .fini = down)
{
    uint8_t img[64];
    tdm_bmodule *m = NULL;
    size_t len = make_image(img, 32);

    cr_redirect_stderr();
    cr_expect_eq(ops->module_load(be, img, 15, &m), cudaErrorInvalidKernelImage);
    cr_expect_eq(ops->module_load(be, img, len - 1, &m), cudaErrorInvalidKernelImage);
    cr_expect_eq(ops->module_load(be, img, len + 1, &m), cudaErrorInvalidKernelImage);
    img[0] ^= 1;
    cr_expect_eq(ops->module_load(be, img, len, &m), cudaErrorInvalidKernelImage);
    img[0] ^= 1;
    uint64_t huge = UINT64_MAX - 8;   /* header_size + fat_size wraps around */
    memcpy(img + 8, &huge, 8);
    cr_expect_eq(ops->module_load(be, img, len, &m), cudaErrorInvalidKernelImage);
    cr_expect_null(m);
    len = make_image(img, 0);         /* a bare header is a valid (empty) image */
    cr_assert_eq(ops->module_load(be, img, len, &m), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

Test(sim_kernel, parameter_layouts_match_nvcc, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;

    get_func(m, K_VECTOR_ADD, &pi);
    cr_assert_eq(pi.count, 4);
    cr_expect(pi.offset[0] == 0 && pi.offset[1] == 8 && pi.offset[2] == 16 && pi.offset[3] == 24);
    cr_expect(pi.size[0] == 8 && pi.size[1] == 8 && pi.size[2] == 8 && pi.size[3] == 4);
    get_func(m, K_TRANSFORM, &pi);
    cr_assert_eq(pi.count, 4);
    cr_expect(pi.offset[0] == 0 && pi.offset[1] == 8 && pi.offset[2] == 12 && pi.offset[3] == 16);
    get_func(m, K_INCREMENT, &pi);
    cr_assert_eq(pi.count, 2);
    cr_expect(pi.offset[1] == 8 && pi.size[1] == 4);
    get_func(m, K_COMBINE, &pi);
    cr_expect_eq(pi.count, 4);
    get_func(m, K_MATMUL, &pi);
    cr_expect_eq(pi.count, 4);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

Test(sim_kernel, bad_launches_are_refused_at_once, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_INCREMENT, &pi);
    uint8_t params[12] = { 0 };
    tdm_dim3 one = { 1, 1, 1 };

    cr_expect_eq(ops->launch(be, f, one, (tdm_dim3){ 1025, 1, 1 }, 0, NULL, params, 12), cudaErrorInvalidConfiguration);
    cr_expect_eq(ops->launch(be, f, one, (tdm_dim3){ 32, 32, 2 }, 0, NULL, params, 12), cudaErrorInvalidConfiguration);
    cr_expect_eq(ops->launch(be, f, (tdm_dim3){ 1, 65536, 1 }, one, 0, NULL, params, 12), cudaErrorInvalidConfiguration);
    cr_expect_eq(ops->launch(be, f, (tdm_dim3){ 0, 1, 1 }, one, 0, NULL, params, 12), cudaErrorInvalidConfiguration);
    cr_expect_eq(ops->launch(be, f, one, one, 0, NULL, params, 8), cudaErrorInvalidValue);
    cr_expect_eq(ops->launch(be, f, one, one, 1u << 20, NULL, params, 12), cudaErrorInvalidValue);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

Test(sim_kernel, vector_add_reads_its_constant, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module(), *m2 = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_VECTOR_ADD, &pi);
    tdm_bmem *mem = NULL;
    const int32_t n = 1000;
    uint64_t a = map(0, GRAN, &mem), b = a + 4096, c = a + 8192, scale_addr = 0, scale_size = 0, a2 = 0, s2 = 0;
    float ha[1000], hb[1000], hc[1000], scale = 3.0f, other = 100.0f;
    packed p = { .len = 0 };

    cr_assert_eq(ops->module_get_global(be, m, "vadd_scale", &scale_addr, &scale_size), 0);
    cr_expect_eq(scale_size, 4);
    cr_expect(scale_addr < ARENA_BASE || scale_addr >= ARENA_BASE + ARENA_SIZE, "globals live outside the arena");
    /* Each module has its own storage. */
    cr_assert_eq(ops->module_get_global(be, m2, "vadd_scale", &a2, &s2), 0);
    cr_expect_neq(a2, scale_addr);
    cr_redirect_stderr();
    cr_expect_eq(ops->module_get_global(be, m, "no_such_var", &a2, &s2), cudaErrorInvalidSymbol);
    for (int i = 0; i < n; i++) {
        ha[i] = (float)i;
        hb[i] = (float)(2 * i);
    }
    cr_assert_eq(ops->memcpy_htod(be, a, ha, sizeof(ha), NULL), 0);
    cr_assert_eq(ops->memcpy_htod(be, b, hb, sizeof(hb), NULL), 0);
    cr_assert_eq(ops->memcpy_htod(be, scale_addr, &scale, 4, NULL), 0);
    cr_assert_eq(ops->memcpy_htod(be, a2, &other, 4, NULL), 0);
    pack(&p, &pi, 0, &a);
    pack(&p, &pi, 1, &b);
    pack(&p, &pi, 2, &c);
    pack(&p, &pi, 3, &n);
    cr_assert_eq(ops->launch(be, f, (tdm_dim3){ 4, 1, 1 }, (tdm_dim3){ 256, 1, 1 }, 0, NULL, p.buf, p.len), 0);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, hc, c, sizeof(hc), NULL), 0);
    for (int i = 0; i < n; i++)
        cr_assert_eq(hc[i], 3.0f * (float)i + (float)(2 * i), "c[%d] = %f", i, hc[i]);
    cr_assert_eq(ops->mem_unmap(be, a, GRAN, mem), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
    cr_assert_eq(ops->module_unload(be, m2), 0);
}

Test(sim_kernel, matmul_and_its_counter, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_MATMUL, &pi);
    tdm_bmem *mem = NULL;
    enum { N = 48 };
    static float A[N * N], B[N * N], C[N * N];
    const int32_t n = N;
    uint64_t dA = map(0, GRAN, &mem), dB = dA + sizeof(A), dC = dB + sizeof(B), cnt = 0, cnt_size = 0;
    uint32_t positive = 0, want_positive = 0, junk = 77;
    packed p = { .len = 0 };

    for (int i = 0; i < N * N; i++) {
        A[i] = (float)(i % 5 - 2);
        B[i] = (float)(i % 3 - 1);
    }
    cr_assert_eq(ops->module_get_global(be, m, "matmul_positive", &cnt, &cnt_size), 0);
    cr_assert_eq(ops->memcpy_htod(be, cnt, &junk, 4, NULL), 0);
    cr_assert_eq(ops->memset_d8(be, cnt, 0, 4, NULL), 0);
    cr_assert_eq(ops->memcpy_htod(be, dA, A, sizeof(A), NULL), 0);
    cr_assert_eq(ops->memcpy_htod(be, dB, B, sizeof(B), NULL), 0);
    pack(&p, &pi, 0, &dA);
    pack(&p, &pi, 1, &dB);
    pack(&p, &pi, 2, &dC);
    pack(&p, &pi, 3, &n);
    cr_assert_eq(ops->launch(be, f, (tdm_dim3){ 3, 3, 1 }, (tdm_dim3){ 16, 16, 1 }, 0, NULL, p.buf, p.len), 0);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, C, dC, sizeof(C), NULL), 0);
    cr_assert_eq(ops->memcpy_dtoh_sync(be, &positive, cnt, 4, NULL), 0);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int want = 0;
            for (int k = 0; k < N; k++)
                want += (int)A[i * N + k] * (int)B[k * N + j];
            want_positive += want > 0;
            cr_assert_eq(C[i * N + j], (float)want, "C[%d][%d] = %f, want %d", i, j, C[i * N + j], want);
        }
    cr_expect_eq(positive, want_positive);
    cr_expect_gt(want_positive, 0);
    /* After unload the module's globals are no device memory any more. */
    cr_assert_eq(ops->module_unload(be, m), 0);
    cr_redirect_stderr();
    cr_assert_eq(ops->memcpy_htod(be, cnt, &junk, 4, NULL), 0);
    cr_expect_eq(ops->stream_synchronize(be, NULL), cudaErrorIllegalAddress);
    cr_assert_eq(ops->mem_unmap(be, dA, GRAN, mem), 0);
}

/* ---- concurrency and shutdown ---- */

typedef struct worker_arg {
    tdm_bfunc *f;
    const tdm_param_info *pi;
    uint64_t x;
    int ok;
} worker_arg;

/* One "session": its own stream, copies and launches, checked at the end. */
static void *session_thread(void *p)
{
    worker_arg *w = p;
    tdm_bstream *s = NULL;
    tdm_bevent *e = NULL;
    enum { N = 4096 };
    uint32_t *buf = calloc(N, 4);
    packed pk = { .len = 0 };
    int32_t n = N;
    int ok = 1;

    if (!buf || ops->stream_create(be, cudaStreamNonBlocking, 0, NULL, &s) || ops->event_create(be, 0, &e))
        ok = 0;
    pack(&pk, w->pi, 0, &w->x);
    pack(&pk, w->pi, 1, &n);
    for (int round = 0; ok && round < 20; round++) {
        ok &= ops->memset_d8(be, w->x, 0, N * 4, s) == 0;
        for (int k = 0; k < 5; k++)
            ok &= ops->launch(be, w->f, (tdm_dim3){ N / 256, 1, 1 }, (tdm_dim3){ 256, 1, 1 }, 0, s, pk.buf, pk.len) == 0;
        ok &= ops->event_record(be, e, s) == 0;
        ok &= ops->memcpy_dtoh_sync(be, buf, w->x, N * 4, s) == 0;
        ok &= ops->event_synchronize(be, e) == 0;
        for (int i = 0; ok && i < N; i++)
            ok &= buf[i] == 5u * (1u + (uint32_t)(i % 7));
    }
    if (e)
        ops->event_destroy(be, e);
    if (s)
        ops->stream_destroy(be, s);
    free(buf);
    w->ok = ok;
    return NULL;
}

Test(sim_concurrency, sessions_on_threads_do_not_interfere, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_param_info pi;
    tdm_bfunc *f = get_func(m, K_INCREMENT, &pi);
    pthread_t t[4];
    worker_arg w[4];
    tdm_bmem *mem[4];

    for (int i = 0; i < 4; i++) {
        w[i] = (worker_arg){ .f = f, .pi = &pi, .x = map((uint64_t)i * GRAN, GRAN, &mem[i]) };
        cr_assert_eq(pthread_create(&t[i], NULL, session_thread, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        cr_expect(w[i].ok, "session %d saw wrong results", i);
    }
    cr_assert_eq(ops->device_synchronize(be), 0);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(ops->mem_unmap(be, w[i].x, GRAN, mem[i]), 0);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

Test(sim_shutdown, with_work_pending)
{
    tdm_param_info pi;
    tdm_bstream *s[3] = { NULL };
    tdm_bevent *e = NULL;
    tdm_bmem *mem = NULL;
    const int32_t n = 1 << 22;
    double t0;

    up();
    tdm_bmodule *m = load_module();
    tdm_bfunc *f = get_func(m, K_INCREMENT, &pi);
    uint64_t x = map(0, (uint64_t)n * 4, &mem);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ops->stream_create(be, 0, 0, NULL, &s[i]), 0);
    cr_assert_eq(ops->event_create(be, 0, &e), 0);
    launch_increment(f, &pi, x, n, 200, s[0]);
    cr_assert_eq(ops->event_record(be, e, s[0]), 0);
    cr_assert_eq(ops->stream_wait_event(be, s[1], e), 0);
    launch_increment(f, &pi, x, n, 200, s[1]);
    cr_assert_eq(ops->memset_d8(be, x, 1, (size_t)n * 4, s[2]), 0);
    /* Nothing is released by the caller: shutdown owns all of it.  It drops
     * the queued work (about 400 x 4M increments) instead of running it. */
    t0 = now_s();
    ops->shutdown(be);
    be = NULL;
    cr_expect_lt(now_s() - t0, 5.0, "shutdown ran the queued work instead of dropping it");
}

/* ---- cluster launch (issue 14) ---- */
#define K_CLUSTER_FIXED "_Z17cluster_sum_fixedPKjPjii" /* __cluster_dims__(2,1,1) */
#define K_CLUSTER_ANY "_Z15cluster_sum_anyPKjPjii"

/* The H100 driver's checks of cluster shapes, as the sim makes them: a
 * launch's own dimensions, else the kernel's; the grid a whole number of
 * clusters; at most 8 blocks, 16 when the kernel allows non-portable
 * sizes; a preferred cluster a multiple of the regular one. */
Test(sim_cluster, shapes_are_checked_as_the_driver_checks_them, .init = up, .fini = down)
{
    static const struct {
        const char *kernel;
        tdm_dim3 grid, cluster, preferred;
        int policy, non_portable, must_be_set;
        bool plain; /* through the launch op, not launch_cluster */
        int want;
    } cases[] = {
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 2, 1, 1 }, { 0, 0, 0 }, 0, 0, 0, false, 0 },
        { K_CLUSTER_ANY, { 8, 4, 1 }, { 2, 2, 1 }, { 0, 0, 0 }, 0, 0, 0, false, 0 },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 3, 1, 1 }, { 0, 0, 0 }, 0, 0, 0, false, cudaErrorInvalidClusterSize },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 2, 0, 1 }, { 0, 0, 0 }, 0, 0, 0, false, cudaErrorInvalidClusterSize },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 8, 1, 1 }, { 0, 0, 0 }, 0, 0, 0, false, 0 },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 16, 1, 1 }, { 0, 0, 0 }, 0, 0, 0, false, cudaErrorInvalidClusterSize },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 16, 1, 1 }, { 0, 0, 0 }, 0, 1, 0, false, 0 },
        { K_CLUSTER_ANY, { 32, 1, 1 }, { 32, 1, 1 }, { 0, 0, 0 }, 0, 1, 0, false, cudaErrorInvalidClusterSize },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 2, 1, 1 }, { 4, 1, 1 }, 0, 0, 0, false, 0 },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 2, 1, 1 }, { 3, 1, 1 }, 0, 0, 0, false, cudaErrorInvalidClusterSize },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 0, 0, 0 }, { 2, 1, 1 }, 0, 0, 0, false, cudaErrorInvalidClusterSize },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 2, 1, 1 }, { 0, 0, 0 }, 3, 0, 0, false, cudaErrorInvalidValue },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, 0, 0, 1, false, cudaErrorInvalidClusterSize },
        { K_CLUSTER_ANY, { 15, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, 0, 0, 0, true, 0 },
        { K_CLUSTER_ANY, { 16, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, 0, 0, 1, true, cudaErrorInvalidClusterSize },
        { K_CLUSTER_FIXED, { 16, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, 0, 0, 0, false, 0 },
        { K_CLUSTER_FIXED, { 16, 1, 1 }, { 2, 1, 1 }, { 0, 0, 0 }, 0, 0, 0, false, 0 },
        { K_CLUSTER_FIXED, { 16, 1, 1 }, { 4, 1, 1 }, { 0, 0, 0 }, 0, 0, 0, false, cudaErrorInvalidClusterSize },
        { K_CLUSTER_FIXED, { 16, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, 0, 0, 0, true, 0 },
        { K_CLUSTER_FIXED, { 15, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, 0, 0, 0, true, cudaErrorInvalidClusterSize },
    };
    tdm_bmodule *m = load_module();
    uint8_t params[24] = { 0 };
    tdm_bstream *s = NULL;

    /* Accepted launches run their twin, which faults on these parameters:
     * on a stream of their own. */
    cr_assert_eq(ops->stream_create(be, 0, 0, NULL, &s), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tdm_bfunc *f = get_func(m, cases[i].kernel, NULL);
        tdm_cluster_config c = { .grid = cases[i].grid, .block = { 32, 1, 1 }, .cluster = cases[i].cluster,
                                 .preferred = cases[i].preferred, .policy = cases[i].policy };

        cr_assert_eq(ops->func_set_attribute(be, f, cudaFuncAttributeNonPortableClusterSizeAllowed,
                                             cases[i].non_portable), 0);
        cr_assert_eq(ops->func_set_attribute(be, f, cudaFuncAttributeClusterDimMustBeSet, cases[i].must_be_set), 0);
        int got = cases[i].plain ? ops->launch(be, f, c.grid, c.block, 0, s, params, sizeof(params))
                                 : ops->launch_cluster(be, f, &c, s, params, sizeof(params));
        cr_expect_eq(got, cases[i].want, "case %zu: %d, want %d", i, got, cases[i].want);
    }
    ops->stream_destroy(be, s);
    cr_assert_eq(ops->module_unload(be, m), 0);
}

/* The kernel's cluster attributes: compiled-in dimensions cannot change;
 * the others read back as set; values out of range are refused. */
Test(sim_cluster, function_attributes_read_back_as_set, .init = up, .fini = down)
{
    tdm_bmodule *m = load_module();
    tdm_bfunc *fixed = get_func(m, K_CLUSTER_FIXED, NULL), *any = get_func(m, K_CLUSTER_ANY, NULL);
    tdm_func_cluster_attrs a;
    tdm_cluster_config c = { .grid = { 64, 1, 1 }, .block = { 128, 1, 1 }, .cluster = { 2, 1, 1 } };
    int v = 0;

    cr_assert_eq(ops->func_cluster_attrs(be, fixed, &a), 0);
    cr_expect(a.width == 2 && a.height == 1 && a.depth == 1 && a.non_portable == 0);
    cr_expect_eq(ops->func_set_attribute(be, fixed, cudaFuncAttributeRequiredClusterWidth, 4), cudaErrorNotPermitted);
    cr_expect_eq(ops->occupancy_max_cluster_size(be, fixed, &c, &v), 0);
    cr_expect_eq(v, 2);

    cr_expect_eq(ops->occupancy_max_cluster_size(be, any, &c, &v), 0);
    cr_expect_eq(v, 8);
    cr_expect_eq(ops->func_set_attribute(be, any, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), 0);
    cr_expect_eq(ops->func_set_attribute(be, any, cudaFuncAttributeClusterSchedulingPolicyPreference, 2), 0);
    cr_expect_eq(ops->func_set_attribute(be, any, cudaFuncAttributeClusterSchedulingPolicyPreference, 3),
                 cudaErrorInvalidValue);
    cr_expect_eq(ops->func_set_attribute(be, any, cudaFuncAttributeRequiredClusterWidth, -1), cudaErrorInvalidValue);
    cr_assert_eq(ops->func_cluster_attrs(be, any, &a), 0);
    cr_expect(a.width == 0 && a.non_portable == 1 && a.policy == 2);
    cr_expect_eq(ops->occupancy_max_cluster_size(be, any, &c, &v), 0);
    cr_expect_eq(v, 16);
    cr_expect_eq(ops->occupancy_max_active_clusters(be, any, &c, &v), 0);
    cr_expect_gt(v, 0);
    c.cluster = (tdm_dim3){ 0, 0, 0 };
    cr_expect_eq(ops->occupancy_max_active_clusters(be, any, &c, &v), cudaErrorInvalidClusterSize);
    cr_assert_eq(ops->module_unload(be, m), 0);
}
