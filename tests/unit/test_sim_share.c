/* The sim backend's model of SM shares (sim_share_model.h, sim_share.c;
 * docs/sm-shares.md): rows of (blocks, SMs, wave) -> modelled time, then
 * the backend itself: a kernel's completion held as modelled, shares
 * outside the device refused, the device's SM count configurable. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <driver_types.h>

#include "backend.h"
#include "sim_share_model.h"

#define ARENA_BASE 0x200000000000ull
#define ARENA_SIZE (1ull << 30)
#define K_INCREMENT "_Z9incrementPji"

typedef struct model_row {
    uint64_t blocks;
    unsigned sms;
    uint32_t wave_us;
    uint64_t want_ns;
} model_row;

Test(sim_share_model, a_kernel_takes_ceil_blocks_over_sms_waves)
{
    static const model_row rows[] = {
        { 64, 8, 1000, 8000000 },    /* 8 waves */
        { 64, 64, 1000, 1000000 },   /* one wave */
        { 64, 132, 1000, 1000000 },  /* fewer blocks than SMs: still a wave */
        { 65, 64, 1000, 2000000 },   /* one block more: a second wave */
        { 1, 1, 250, 250000 },
        { 132 * 3, 132, 10, 30000 },
        { 64, 8, 0, 0 },             /* model off */
        { 0, 8, 1000, 0 },           /* nothing to run */
        { 64, 0, 1000, 0 },          /* no SMs: not modelled, never a division by zero */
        { UINT64_MAX, 1, UINT32_MAX, SIM_SHARE_MAX_NS },   /* a hostile grid is capped */
        { 1ull << 40, 1, 1000, SIM_SHARE_MAX_NS },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        cr_expect_eq(sim_share_kernel_ns(rows[i].blocks, rows[i].sms, rows[i].wave_us), rows[i].want_ns,
                     "row %zu: %llu blocks on %u SMs, %u us a wave", i, (unsigned long long)rows[i].blocks,
                     rows[i].sms, rows[i].wave_us);
}

static const tdm_backend_ops *ops = &tdm_backend_sim_ops;

static tdm_backend *up(unsigned sms, uint32_t wave_us)
{
    tdm_backend_config cfg = { .arena_base = ARENA_BASE, .arena_size = ARENA_SIZE, .sim_sms = sms,
                               .sim_wave_us = wave_us };
    tdm_backend *b = NULL;

    cr_assert_eq(ops->init(&b, &cfg), 0);
    cr_assert_eq(ops->arena_reserve(b), 0);
    return b;
}

Test(sim_share, device_reports_its_configured_sm_count)
{
    static const struct { unsigned cfg; int32_t want; } rows[] = { { 0, 132 }, { 16, 16 }, { 144, 144 } };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tdm_backend *b = up(rows[i].cfg, 0);
        tdm_device_info info;

        cr_assert_eq(ops->device_info(b, &info), 0);
        cr_expect_eq(info.attrs[cudaDevAttrMultiProcessorCount], rows[i].want, "--sim-sms %u", rows[i].cfg);
        ops->shutdown(b);
    }
}

Test(sim_share, share_outside_the_device_is_refused)
{
    static const struct { unsigned sms; int want; } rows[] = {
        { 0, cudaErrorInvalidValue }, { 1, 0 }, { 8, 0 }, { 16, 0 }, { 17, cudaErrorInvalidValue },
    };
    tdm_backend *b = up(16, 0);

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tdm_bshare *sh = NULL;
        unsigned granted = 0;

        cr_expect_eq(ops->share_get(b, rows[i].sms, &sh, &granted), rows[i].want, "share of %u", rows[i].sms);
        if (!rows[i].want) {
            cr_expect_eq(granted, rows[i].sms);
            ops->share_put(b, sh);
        } else
            cr_expect_null(sh);
    }
    ops->shutdown(b);
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Launches increment(x, n) with 64 blocks on a stream of a share of `sms`
 * SMs and returns how long it took to complete. */
static double timed_kernel(tdm_backend *b, unsigned sms, uint64_t x)
{
    uint8_t img[64] = { 0 };
    uint32_t magic = 0xBA55ED50u;
    uint16_t version = 1, hsize = 16;
    uint64_t fat = 48;
    tdm_bmodule *m = NULL;
    tdm_bfunc *f = NULL;
    tdm_param_info pi;
    tdm_bshare *sh = NULL;
    tdm_bstream *s = NULL;
    unsigned granted;
    uint8_t params[16] = { 0 };
    int32_t n = 64 * 32;
    double t0, t;

    memcpy(img, &magic, 4);
    memcpy(img + 4, &version, 2);
    memcpy(img + 6, &hsize, 2);
    memcpy(img + 8, &fat, 8);
    cr_assert_eq(ops->module_load(b, img, sizeof(img), &m), 0);
    cr_assert_eq(ops->module_get_function(b, m, K_INCREMENT, &f, &pi), 0);
    cr_assert_eq(ops->share_get(b, sms, &sh, &granted), 0);
    cr_assert_eq(ops->share_stream_create(b, sh, 0, 0, NULL, &s), 0);
    memcpy(params + pi.offset[0], &x, sizeof(x));
    memcpy(params + pi.offset[1], &n, sizeof(n));
    t0 = now_ms();
    cr_assert_eq(ops->launch(b, f, (tdm_dim3){ 64, 1, 1 }, (tdm_dim3){ 32, 1, 1 }, 0, s, params,
                             pi.offset[1] + pi.size[1]), 0);
    cr_assert_eq(ops->stream_synchronize(b, s), 0);
    t = now_ms() - t0;
    cr_assert_eq(ops->stream_destroy(b, s), 0);
    ops->share_put(b, sh);
    cr_assert_eq(ops->module_unload(b, m), 0);
    return t;
}

/* 64 blocks, 5 ms a wave: 8 SMs take 8 waves (40 ms), 64 SMs one (5 ms).
 * The lower bounds are the model's; the upper ones leave room for a busy
 * machine and still tell one wave from eight. */
Test(sim_share, a_kernel_is_held_for_its_modelled_waves)
{
    tdm_backend *b = up(132, 5000);
    tdm_bmem *mem = NULL;
    uint64_t x = ARENA_BASE;
    double small, large;

    cr_assert_eq(ops->mem_map(b, x, 2u << 20, &mem), 0);
    small = timed_kernel(b, 8, x);
    large = timed_kernel(b, 64, x);
    cr_expect_geq(small, 40.0, "8 SMs: %.1f ms, modelled 40", small);
    cr_expect_geq(large, 5.0, "64 SMs: %.1f ms, modelled 5", large);
    cr_expect_lt(large, 30.0, "64 SMs: %.1f ms, modelled 5", large);
    /* The twin ran both times: every word was incremented twice, exactly. */
    uint32_t w[4];
    cr_assert_eq(ops->memcpy_dtoh_sync(b, w, x, sizeof(w), NULL), 0);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(w[i], 2u * (1u + (uint32_t)(i % 7)), "word %d", i);
    cr_assert_eq(ops->mem_unmap(b, x, 2u << 20, mem), 0);
    ops->shutdown(b);
}

/* Without --sim-wave-us nothing is held: the other suites keep their speed. */
Test(sim_share, no_model_without_a_wave_time)
{
    tdm_backend *b = up(132, 0);
    tdm_bmem *mem = NULL;

    cr_assert_eq(ops->mem_map(b, ARENA_BASE, 2u << 20, &mem), 0);
    cr_expect_lt(timed_kernel(b, 1, ARENA_BASE), 30.0);
    cr_assert_eq(ops->mem_unmap(b, ARENA_BASE, 2u << 20, mem), 0);
    ops->shutdown(b);
}
