/* The hostile-tenant suite (issue 16; docs/security.md "Hostile-tenant suite"): each class of
 * attack runs against one server while a victim session works.  The victim checks every
 * iteration against a host reference (vector_add over a fresh allocation: malloc, two uploads,
 * a launch, a read back, a free) and times it, alone first and then under attack; the suite
 * asserts that no result differs, that the attacker got nothing it must not get, and that the
 * victim's p99 under attack stays below max(10 x its p99 alone, HV_FLOOR_MS = 250 ms).
 *
 * Why that bound: on a loaded 2-core CI machine under ASan the victim's iteration alone takes
 * about a millisecond and the scheduler alone can delay a round trip by tens of ms, so a tighter
 * bound fails for noise; a victim served behind the attacker (its kernel, its queue of one-way
 * calls, a lock held across either) waits for seconds here, which the bound catches. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "background.h"
#include "guest_calls.h"
#include "harness.h"
#include "hostile.h"
#include "hostile_attacks.h"
#include "raw_calls.h"
#include "takeover_pair.h"
#include "xdr_extra.h"

#define ALONE_ITERS 100
#define ATTACKED_ITERS 200
#define ATTACKED_MS 1000.0   /* and at least a second under attack */

static th_server srv;

static void up_with(const char *const *args)
{
    th_require_sim();   /* the victim and the attackers launch the sim's kernels by name */
    th_server_start(&srv, args);
}

static void up(void)
{
    up_with(NULL);
}

static void down(void)
{
    if (srv.pid > 0)
        cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

/* The victim on endpoint (token: its credential, or NULL), alone and then under a's attack. */
static void victim_unharmed_by(hv_attack *a, const char *endpoint, const char *token, const char *what)
{
    hv_victim v;

    hv_victim_open(&v, endpoint, token);
    hv_latency alone = hv_victim_run(&v, ALONE_ITERS, 0);
    a->srv = &srv;
    hv_attack_start(a);
    hv_latency hit = hv_victim_run(&v, ATTACKED_ITERS, ATTACKED_MS);
    long rounds = atomic_load(&a->rounds);
    hv_attack_stop(a);
    double bound = hv_bound_ms(alone);

    fprintf(stderr,
            "hostile: %s: victim alone p50 %.2f ms p99 %.2f ms; under attack p50 %.2f ms p99 %.2f ms max %.2f ms "
            "(bound %.0f ms); %d iterations, %ld attack rounds\n",
            what, alone.p50, alone.p99, hit.p50, hit.p99, hit.max, bound, hit.n, rounds);
    cr_expect_eq(v.wrong, 0, "%s: %d of the victim's iterations gave wrong results", what, v.wrong);
    cr_expect_lt(hit.p99, bound, "%s: the victim's p99 under attack was %.2f ms (alone %.2f ms): over the bound %.0f ms",
                 what, hit.p99, alone.p99, bound);
    cr_expect_eq(atomic_load(&a->breaches), 0, "%s: the attacker %s", what, a->note);
    cr_expect_gt(rounds, 1, "%s: the attack barely ran (%ld rounds)", what, rounds);
    /* And it still works once the attack is over. */
    hv_victim_step(&v);
    cr_expect_eq(v.wrong, 0);
    hv_victim_close(&v);
}

Test(hostile, garbage_frames_in_a_loop_leave_the_victim_exact_and_prompt, .init = up, .fini = down)
{
    hv_attack a = { .round = hv_garbage_frames };

    victim_unharmed_by(&a, srv.endpoint, NULL, "garbage frames");
    cr_expect(th_server_log_has(&srv, "malformed frame"), "no line about the garbage; see %s", srv.log);
}

Test(hostile, forged_pointers_and_handles_reach_nothing_of_the_victims, .init = up, .fini = down)
{
    hv_attack a = { .round = hv_forged_pointers };

    a.t = th_guest_open(srv.endpoint, "hostile-forger");
    victim_unharmed_by(&a, srv.endpoint, NULL, "forged pointers and handles");
    a.t->ops->close(a.t);
}

/* The attacker's stream and event bounds, stated: each is a server thread or record. */
static void up_bounded(void)
{
    const char *args[] = { "--session-streams", "128", "--session-events", "2048", NULL };
    up_with(args);
}

Test(hostile, exhausting_streams_and_events_stops_at_the_attackers_own_bounds, .init = up_bounded, .fini = down)
{
    hv_attack a = { .round = hv_exhausted_asks };
    tdm_stream_create_args sc = { 0, 0 };
    unsigned flags = 0;

    a.t = th_guest_open(srv.endpoint, "hostile-hoarder");
    for (int i = 0; i < 128; i++)
        cr_assert_eq(th_call_handle(a.t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc).err, 0,
                     "stream %d of the bound was refused", i);
    for (int i = 0; i < 2048; i++)
        cr_assert_eq(th_call_handle(a.t, TDM_EVENT_CREATE, (xdrproc_t)xdr_tdm_u32, &flags).err, 0,
                     "event %d of the bound was refused", i);
    victim_unharmed_by(&a, srv.endpoint, NULL, "streams and events exhausted");
    /* The victim's own bounds are untouched by the attacker's. */
    tdm_transport *t = th_guest_open(srv.endpoint, "hostile-bystander");
    cr_expect_eq(th_call_handle(t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc).err, 0);
    cr_expect_eq(th_call_handle(t, TDM_EVENT_CREATE, (xdrproc_t)xdr_tdm_u32, &flags).err, 0);
    t->ops->close(t);
    a.t->ops->close(a.t);
}

/* Eight slots, one second to speak: the attacker holds up to 64 silent connections. */
static void up_few_slots(void)
{
    const char *args[] = { "--max-sessions", "8", "--handshake-timeout", "1", NULL };
    up_with(args);
}

/* A new guest's session within ms milliseconds, trying every 20 ms: a server at --max-sessions
 * closes a new connection unanswered until a slot frees.  NULL when none came in time. */
static tdm_transport *open_within(const char *endpoint, int ms)
{
    for (int waited = 0;; waited += 20) {
        tdm_transport *t = NULL;
        char err[256];
        tdm_hello_args a = { TDM_PROTO_VERSION, (int)getpid(), (char *)"hostile-latecomer", TDM_RESUME_NONE,
                             { 0, NULL }, { 0, NULL } };
        tdm_hello_res r;

        memset(&r, 0, sizeof(r));
        if (tdm_transport_open(endpoint, &t, err, sizeof(err)) == 0) {
            int rc = t->ops->call(t, TDM_HELLO, (xdrproc_t)xdr_tdm_hello_args, &a, (xdrproc_t)xdr_tdm_hello_res, &r);
            int refused = rc == 0 ? r.err : -1;
            if (rc == 0)
                xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
            if (refused == 0)
                return t;
            t->ops->close(t);
        }
        if (waited >= ms)
            return NULL;
        usleep(20 * 1000);
    }
}

Test(hostile, silent_connections_do_not_slow_a_working_session, .init = up_few_slots, .fini = down)
{
    hv_attack a = { .round = hv_silent_connections };

    victim_unharmed_by(&a, srv.endpoint, NULL, "silent connections");
    /* The attacker gone, its slots are free again as soon as the server sees its connections
     * close: well inside the 1 s handshake timeout that would free them anyway (a clean-clone
     * CI run under load once saw the first try come before the server had noticed). */
    tdm_transport *t = open_within(srv.endpoint, 500);
    cr_assert_not_null(t, "no slot within 0.5 s of the attacker leaving; see %s", srv.log);
    cr_expect_eq(th_call_int(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL), 0);
    t->ops->close(t);
}

Test(hostile, empty_first_shm_frames_close_only_the_attackers_session, .init = up, .fini = down)
{
    hv_attack a = { .round = hv_empty_shm_frame };

    victim_unharmed_by(&a, srv.shm_endpoint, NULL, "empty first shm frames");
}

/* ---- credentials ---- */

#define VICTIM_TOKEN "victim-token-0123456789abcdef"

static char tenants_dir[64];

static void up_tenants(void)
{
    char path[128];
    FILE *f;

    snprintf(tenants_dir, sizeof(tenants_dir), "/tmp/tandem-hostile-XXXXXX");
    cr_assert_not_null(mkdtemp(tenants_dir));
    snprintf(path, sizeof(path), "%s/tenants.ini", tenants_dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "[victim]\ntoken = " VICTIM_TOKEN "\n");
    fclose(f);
    cr_assert_eq(chmod(path, 0600), 0);
    const char *args[] = { "--tenants", path, NULL };
    up_with(args);
}

static void down_tenants(void)
{
    char path[128];

    down();
    snprintf(path, sizeof(path), "%s/tenants.ini", tenants_dir);
    unlink(path);
    rmdir(tenants_dir);
}

Test(hostile, missing_and_wrong_credentials_open_nothing_and_leave_the_victim_prompt, .init = up_tenants,
     .fini = down_tenants)
{
    hv_attack a = { .round = hv_bad_credentials, .token = "attacker-guess-0123456789abcdef" };

    victim_unharmed_by(&a, srv.endpoint, VICTIM_TOKEN, "bad credentials");
    cr_expect(th_server_log_has(&srv, "refused: its token is no tenant's"), "no refusal line; see %s", srv.log);
}

/* ---- launches ---- */

static void attacker_with_kernel(hv_attack *a, const char *kernel, uint64_t bytes)
{
    const char *names[] = { kernel };

    a->t = th_guest_open(srv.endpoint, "hostile-launcher");
    cr_assert_eq(hv_load(a->t, names, 1, &a->k, NULL, NULL), 0, "the attacker cannot load %s", kernel);
    a->mem = th_raw_malloc(a->t, bytes);
}

Test(hostile, a_flood_of_one_way_launches_leaves_the_victim_its_share, .init = up, .fini = down)
{
    hv_attack a = { .round = hv_launch_flood };

    attacker_with_kernel(&a, HV_INCREMENT, 65536 * 4);
    a.mem_elems = 65536;
    victim_unharmed_by(&a, srv.endpoint, NULL, "a flood of one-way launches");
    a.t->ops->close(a.t);
}

/* ---- one long legal kernel, and the server's stop ---- */

#define LONG_N 2048   /* matmul of 2048 x 2048: 2^33 multiply-adds in one launch, half a minute or more on the sim */

/* Starts matmul LONG_N on the attacker's session (null stream); returns once it runs. */
static tdm_transport *start_long_kernel(void)
{
    hv_attack a = { .round = NULL };
    const uint64_t bytes = (uint64_t)LONG_N * LONG_N * 4;

    attacker_with_kernel(&a, HV_MATMUL, 3 * bytes);
    uint64_t vals[4] = { a.mem, a.mem + bytes, a.mem + 2 * bytes, LONG_N };
    cr_assert_eq(hv_launch(a.t, &a.k, (tdm_xdim3){ LONG_N / 16, LONG_N / 16, 1 }, (tdm_xdim3){ 16, 16, 1 }, 0, vals),
                 0);
    tdm_handle null_stream = 0;
    cr_assert_eq(th_call_int(a.t, TDM_STREAM_QUERY, (xdrproc_t)xdr_tdm_handle, &null_stream), cudaErrorNotReady,
                 "the long kernel is not running");
    return a.t;
}

static bool still_running(tdm_transport *t)
{
    tdm_handle null_stream = 0;
    return th_call_int(t, TDM_STREAM_QUERY, (xdrproc_t)xdr_tdm_handle, &null_stream) == cudaErrorNotReady;
}

/* A session blocked in cudaDeviceSynchronize behind the long kernel, as a guest waits for it. */
static void *wait_for_device(void *arg)
{
    tdm_transport *t = arg;
    hv_call_int(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL);
    return NULL;
}

/* Stops the server with a session waiting for t's long kernel: the stop must end the kernel and
 * exit 0 within 5 s (the listener gives sessions 10 s, then exits 1 with the kernel running). */
static void expect_stop_ends_the_long_kernel(tdm_transport *t)
{
    pthread_t waiter;

    cr_assert_eq(pthread_create(&waiter, NULL, wait_for_device, t), 0);
    usleep(100000);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = th_server_stop(&srv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    pthread_join(waiter, NULL);
    t->ops->close(t);
    fprintf(stderr, "hostile: the stop took %.2f s with a long kernel running (status %d)\n", took, st);
    cr_expect_eq(st, 0, "the server stopped with status %d with a long kernel running; see %s", st, srv.log);
    cr_expect_lt(took, 5.0, "the stop took %.1f s with a long kernel running", took);
    cr_expect(th_server_log_has(&srv, "stopping: ending the device work of"), "no line about the stop; see %s",
              srv.log);
    cr_expect(!th_server_log_has(&srv, "did not finish within"), "sessions outlived the stop; see %s", srv.log);
}

Test(hostile, a_long_kernel_does_not_stall_the_victims_allocations_and_copies, .init = up, .fini = down)
{
    hv_victim v;

    hv_victim_open(&v, srv.endpoint, NULL);
    hv_latency alone = hv_victim_run(&v, ALONE_ITERS, 0);
    tdm_transport *t = start_long_kernel();
    hv_latency hit = hv_victim_run(&v, ATTACKED_ITERS, ATTACKED_MS);
    bool overlapped = still_running(t);
    double bound = hv_bound_ms(alone);

    fprintf(stderr,
            "hostile: a long kernel: victim alone p50 %.2f ms p99 %.2f ms; beside it p50 %.2f ms p99 %.2f ms max %.2f "
            "ms (bound %.0f ms)\n",
            alone.p50, alone.p99, hit.p50, hit.p99, hit.max, bound);
    cr_expect(overlapped, "the long kernel ended before the victim's loop: make it longer");
    cr_expect_eq(v.wrong, 0);
    cr_expect_lt(hit.p99, bound, "beside a long kernel the victim's p99 was %.2f ms (alone %.2f ms): over %.0f ms",
                 hit.p99, alone.p99, bound);
    hv_victim_close(&v);
    expect_stop_ends_the_long_kernel(t);
}

/* Issue 16: "server stop ends long kernels and exits cleanly".  Before, a session waiting for a
 * long kernel held the stop up for the listener's 10 s, and the server exited 1 with it running. */
Test(hostile, server_stop_ends_a_long_kernel_and_exits_cleanly, .init = up, .fini = down)
{
    expect_stop_ends_the_long_kernel(start_long_kernel());
}

/* ---- a kernel on the victim's memory ---- */

/* The sim faults a kernel that touches memory its session was not granted (docs/security.md,
 * finding 1), and the fault loses the context of every session of that server, as on a GPU
 * (docs/health.md): a victim without a standby gets the error, never wrong data.  Here the
 * victim (tests/faults/victim.cu through the guest library) is protected by a standby, so it
 * must resume there and finish with the fault-free checksum, while the intruder gets
 * cudaErrorIllegalAddress or loses its server. */
Test(hostile, a_kernel_on_the_victims_address_faults_and_the_victim_resumes_exactly)
{
    const char *victim[] = { th_fault_bin("victim"), "36000", "1024", NULL };
    const char *names[] = { HV_INCREMENT };
    char ref[4096], out[8192], err[8192];
    th_result *r = calloc(1, sizeof(*r));
    hv_kernel k;
    th_bg v;
    th_pair p;

    th_require_sim();
    cr_assert_not_null(r);
    th_pair_start(&p, NULL, NULL);
    th_run_guest(p.standby.endpoint, victim, 120, r);
    cr_assert_eq(r->status, 0, "fault-free victim run failed:\n%s\n%s", r->out, r->err);
    cr_assert(strstr(r->out, "victim iterations="), "%s", r->out);
    snprintf(ref, sizeof(ref), "%s", strstr(r->out, "victim iterations="));

    th_bg_start(&v, p.active.endpoint, victim, NULL, "victim: running");
    tdm_transport *t = th_guest_open(p.active.endpoint, "hostile-intruder");
    cr_assert_eq(hv_load(t, names, 1, &k, NULL, NULL), 0);
    /* The victim's buffer: its first allocation, at the arena's base. */
    uint64_t vals[2] = { HV_ARENA_BASE, 1024 };
    cr_assert_eq(hv_launch(t, &k, (tdm_xdim3){ 4, 1, 1 }, (tdm_xdim3){ 256, 1, 1 }, 0, vals), 0);
    int e = hv_call_int(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL);
    t->ops->close(t);
    cr_expect(e == cudaErrorIllegalAddress || e == -1, "the intruder's kernel was answered %d", e);
    cr_expect(th_bg_alive(&v), "the victim finished before the fault; give it more iterations");

    int st = th_bg_wait(&v, 120, out, sizeof(out), err, sizeof(err));
    cr_expect_eq(st, 0, "the victim died (status %d):\n%s\n%s", st, out, err);
    const char *line = strstr(out, "victim iterations=");
    cr_expect(line && strcmp(line, ref) == 0, "the victim's checksum differs from the fault-free run:\n%s\nvs\n%s",
              out, ref);
    cr_expect(strstr(err, "resumed on") != NULL, "no takeover reported:\n%s", err);
    cr_expect(th_server_log_has(&p.active, "to another session's memory"), "the fault was not the isolation's; see %s",
              p.active.log);
    th_pair_stop(&p);
    free(r);
}
