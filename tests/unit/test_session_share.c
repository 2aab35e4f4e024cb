/* A session's SM share through the server core (session_share.c,
 * docs/sm-shares.md), on the sim backend with its share model on: shares
 * outside the device refused, the server's default for new sessions, and a
 * change while work is queued: that work finishes at the old share, later
 * kernels run at the new one, on the guest's own streams too, with results
 * exact and no error for the guest. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>
#include <time.h>

#include <driver_types.h>

#include "server.h"
#include "session.h"

#define K_INCREMENT "_Z9incrementPji"
#define WAVE_US 5000u        /* 64 blocks: 40 ms on 8 SMs, 5 ms on 64 */
#define BLOCKS 64u

typedef struct world {
    tdm_server srv;
    tdm_session *s;
    uint64_t func, x;
} world;

static size_t fatbin(uint8_t *buf)
{
    uint32_t magic = 0xBA55ED50u;
    uint16_t version = 1, header_size = 16;
    uint64_t fat_size = 16;

    memcpy(buf, &magic, 4);
    memcpy(buf + 4, &version, 2);
    memcpy(buf + 6, &header_size, 2);
    memcpy(buf + 8, &fat_size, 8);
    memset(buf + 16, 0x5a, 16);
    return 32;
}

static int world_start(world *w, unsigned device_sms, unsigned session_sms)
{
    tdm_server_config cfg = { .backend = "sim", .arena_base = TDM_DEFAULT_ARENA_BASE, .arena_size = 1ull << 30,
                              .max_sessions = 4, .sim_sms = device_sms, .sim_wave_us = WAVE_US,
                              .session_sms = session_sms };
    const char *names[] = { K_INCREMENT };
    uint8_t image[32];
    uint64_t module;
    int ferr, err;

    memset(w, 0, sizeof(*w));
    if ((err = tdm_server_start(&w->srv, &cfg)) != 0)
        return err;
    cr_assert_eq(tdm_session_create(&w->srv, &w->s), 0);
    cr_assert_eq(tdm_session_module_load(w->s, image, fatbin(image), names, 1, NULL, 0, NULL, &module, &w->func,
                                         &ferr, NULL, NULL, NULL), 0);
    cr_assert_eq(ferr, 0);
    cr_assert_eq(tdm_session_malloc(w->s, BLOCKS * 32 * 4, &w->x), 0);
    return 0;
}

static void world_stop(world *w)
{
    tdm_session_destroy(w->s);
    tdm_server_stop(&w->srv);
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* increment(x, n) over 64 blocks of 32 threads on `stream`, not waited for. */
static void launch(world *w, uint64_t stream)
{
    const tdm_func_entry *f = tdm_session_func(w->s, w->func);
    uint8_t params[16] = { 0 };
    int32_t n = BLOCKS * 32;

    cr_assert_not_null(f);
    memcpy(params + f->params.offset[0], &w->x, sizeof(w->x));
    memcpy(params + f->params.offset[1], &n, sizeof(n));
    cr_assert_eq(tdm_session_launch(w->s, w->func, (tdm_dim3){ BLOCKS, 1, 1 }, (tdm_dim3){ 32, 1, 1 }, 0, stream,
                                    params, f->params.offset[1] + f->params.size[1]), 0);
}

static double timed(world *w, uint64_t stream)
{
    double t0 = now_ms();

    launch(w, stream);
    cr_assert_eq(tdm_session_stream_synchronize(w->s, stream), 0);
    return now_ms() - t0;
}

/* Every word was incremented `times` times, exactly (what the twin does). */
static void expect_incremented(world *w, unsigned times)
{
    uint32_t v[BLOCKS * 32];

    cr_assert_eq(tdm_session_memcpy_dtoh(w->s, v, w->x, sizeof(v), 0), 0);
    for (unsigned i = 0; i < BLOCKS * 32; i++)
        cr_assert_eq(v[i], times * (1u + i % 7), "word %u after %u kernels: %u", i, times, v[i]);
}

typedef struct share_row {
    unsigned sms;
    int want;
    unsigned shown;          /* what the session says it runs with afterwards */
} share_row;

Test(session_share, shares_outside_the_device_are_refused)
{
    static const share_row rows[] = {
        { 0, cudaErrorInvalidValue, 16 },   /* none set yet: the whole device */
        { 8, 0, 8 },
        { 17, cudaErrorInvalidValue, 8 },   /* a refusal leaves the share as it was */
        { 1, 0, 1 },
        { 16, 0, 16 },
        { 4294967295u, cudaErrorInvalidValue, 16 },
    };
    world w;
    uint64_t applied;

    cr_assert_eq(world_start(&w, 16, 0), 0);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cr_expect_eq(tdm_session_set_sm_share(w.s, rows[i].sms, &applied), rows[i].want, "share of %u",
                     rows[i].sms);
        cr_expect_eq(tdm_session_sm_share(w.s), rows[i].shown, "after asking %u", rows[i].sms);
    }
    expect_incremented(&w, 0);   /* nothing the guest does failed meanwhile */
    world_stop(&w);
}

Test(session_share, a_default_beyond_the_device_stops_the_server)
{
    world w;

    cr_expect_eq(world_start(&w, 16, 17), cudaErrorInvalidValue);
}

/* --session-sms: a new session starts in its share, and its kernels take
 * the modelled 8 waves. */
Test(session_share, new_sessions_start_in_the_default_share)
{
    world w;
    double t;

    cr_assert_eq(world_start(&w, 132, 8), 0);
    cr_expect_eq(tdm_session_sm_share(w.s), 8);
    t = timed(&w, 0);
    cr_expect_geq(t, 40.0, "8 SMs: %.1f ms, modelled 40", t);
    expect_incremented(&w, 1);
    world_stop(&w);
}

/* The kernel queued at 8 SMs finishes at 8 (40 ms), the one launched after
 * the change waits for it and runs at 64 (5 ms): 45 ms for both; then a
 * kernel alone takes one wave. */
Test(session_share, queued_work_finishes_at_the_old_share_later_work_runs_at_the_new)
{
    world w;
    uint64_t applied = 0;
    double t0, both, alone;

    cr_assert_eq(world_start(&w, 132, 8), 0);
    t0 = now_ms();
    launch(&w, 0);
    cr_assert_eq(tdm_session_set_sm_share(w.s, 64, &applied), 0);
    launch(&w, 0);
    cr_assert_eq(tdm_session_stream_synchronize(w.s, 0), 0);
    both = now_ms() - t0;
    alone = timed(&w, 0);
    cr_expect_geq(both, 45.0, "old then new share: %.1f ms, modelled 40 + 5", both);
    cr_expect_geq(alone, 5.0, "64 SMs: %.1f ms, modelled 5", alone);
    cr_expect_lt(alone, 30.0, "64 SMs: %.1f ms, modelled 5 (8 SMs would be 40)", alone);
    cr_expect_eq(tdm_session_sm_share(w.s), 64);
    expect_incremented(&w, 3);
    world_stop(&w);
}

/* A stream the guest made moves with the session, and one it makes after
 * the change is made in the new share. */
Test(session_share, the_guests_streams_move_with_the_session)
{
    world w;
    uint64_t before, after, applied;
    double t_before, t_after;

    cr_assert_eq(world_start(&w, 132, 64), 0);
    cr_assert_eq(tdm_session_stream_create(w.s, cudaStreamNonBlocking, 0, &before), 0);
    cr_expect_lt(timed(&w, before), 30.0);
    cr_assert_eq(tdm_session_set_sm_share(w.s, 8, &applied), 0);
    t_before = timed(&w, before);
    cr_assert_eq(tdm_session_stream_create(w.s, 0, 0, &after), 0);
    t_after = timed(&w, after);
    cr_expect_geq(t_before, 40.0, "a stream made before the change: %.1f ms at 8 SMs", t_before);
    cr_expect_geq(t_after, 40.0, "a stream made after the change: %.1f ms at 8 SMs", t_after);
    expect_incremented(&w, 3);
    cr_assert_eq(tdm_session_stream_destroy(w.s, before), 0);
    cr_assert_eq(tdm_session_stream_destroy(w.s, after), 0);
    world_stop(&w);
}

/* Many changes between two kernels: only the last counts, and every share
 * and retired stream is given back (ASan's leak check sees the rest). */
Test(session_share, the_last_of_many_changes_wins)
{
    world w;
    uint64_t applied;
    double t;

    cr_assert_eq(world_start(&w, 132, 0), 0);
    for (unsigned i = 0; i < 50; i++) {
        cr_assert_eq(tdm_session_set_sm_share(w.s, i % 2 ? 8 : 132, &applied), 0);
        launch(&w, 0);   /* each applies the change asked before it */
    }
    cr_assert_eq(tdm_session_set_sm_share(w.s, 64, &applied), 0);
    cr_assert_eq(tdm_session_set_sm_share(w.s, 8, &applied), 0);
    cr_assert_eq(tdm_session_stream_synchronize(w.s, 0), 0);
    t = timed(&w, 0);
    cr_expect_geq(t, 40.0, "the last share asked, 8 SMs: %.1f ms", t);
    expect_incremented(&w, 51);
    world_stop(&w);
}

/* cudaStreamSetAttribute's value survives the move to the new share. */
Test(session_share, stream_attributes_move_with_the_stream)
{
    world w;
    uint64_t st, applied;
    tdm_bstream_attr set = { .id = cudaLaunchAttributeSynchronizationPolicy, .value = cudaSyncPolicyYield };
    tdm_bstream_attr got = { .id = cudaLaunchAttributeSynchronizationPolicy };

    cr_assert_eq(world_start(&w, 132, 0), 0);
    cr_assert_eq(tdm_session_stream_create(w.s, 0, 0, &st), 0);
    cr_assert_eq(tdm_session_stream_set_attribute(w.s, st, &set), 0);
    cr_assert_eq(tdm_session_set_sm_share(w.s, 16, &applied), 0);
    launch(&w, st);      /* the move happens here */
    cr_assert_eq(tdm_session_stream_get_attribute(w.s, st, &got), 0);
    cr_expect_eq(got.value, cudaSyncPolicyYield);
    cr_assert_eq(tdm_session_stream_synchronize(w.s, st), 0);
    expect_incremented(&w, 1);
    world_stop(&w);
}

/* A default share is in force from the session's creation: its null stream
 * is made in it, no stream is made twice and moved (a stream made and lost
 * at creation was a thread leaked per session). */
Test(session_share, a_default_share_needs_no_move_at_creation, .init = cr_redirect_stderr)
{
    world w;
    char buf[4096];
    size_t n;
    FILE *f;

    cr_assert_eq(world_start(&w, 132, 8), 0);
    cr_expect_lt(timed(&w, 0), 1000.0);
    world_stop(&w);
    fflush(stderr);
    f = cr_get_redirected_stderr();
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    cr_expect_null(strstr(buf, "streams moved"), "a stream moved at creation: %s", buf);
}
