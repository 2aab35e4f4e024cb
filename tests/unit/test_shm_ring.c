/* The shm transport's building blocks: the SPSC ring (wrap-around, full
 * ring, two threads, corrupted indices), the region header checks, and the
 * futex wake-up latency. */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "shm_region.h"
#include "shm_ring.h"
#include "shm_wait.h"
#include "shm_watch.h"

typedef struct ring_mem {
    void *mem;
    tdm_shm_ring prod, cons;
} ring_mem;

static void ring_new(ring_mem *m, uint64_t cap)
{
    cr_assert_eq(posix_memalign(&m->mem, 64, TDM_SHM_RING_CTL_SIZE + cap), 0);
    memset(m->mem, 0, TDM_SHM_RING_CTL_SIZE + cap);
    tdm_shm_ring_attach(&m->prod, m->mem, cap);
    tdm_shm_ring_attach(&m->cons, m->mem, cap);
}

static tdm_shm_ring_ctl *ctl(ring_mem *m)
{
    return m->mem;
}

static bool dead(void *arg)
{
    return false;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed * 31 + i * 7);
}

static bool check(const uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seed * 31 + i * 7))
            return false;
    return true;
}

Test(shm_ring, wraps_around_many_times)
{
    ring_mem m;
    tdm_shm_msg msg = { 0 };
    uint8_t buf[1500];

    ring_new(&m, 4096);
    for (uint32_t i = 0; i < 200; i++) {
        size_t n = 1 + (i * 37) % sizeof(buf);   /* odd sizes: padding and split copies */
        fill(buf, n, i);
        cr_assert_eq(tdm_shm_ring_send(&m.prod, buf, n, dead, NULL), TDM_SHM_OK);
        cr_assert_eq(tdm_shm_ring_recv(&m.cons, &msg, 1 << 20, false, dead, NULL), TDM_SHM_OK);
        cr_assert_eq(msg.len, n);
        cr_assert(check(msg.p, n, i), "message %u came back different", i);
    }
    cr_expect_gt(atomic_load(&ctl(&m)->head), 20 * 4096, "the ring did not wrap");
    cr_expect_eq(tdm_shm_ring_recv(&m.cons, &msg, 1 << 20, false, dead, NULL), TDM_SHM_EMPTY);
    tdm_shm_msg_free(&msg);
    free(m.mem);
}

Test(shm_ring, message_larger_than_the_ring_goes_in_fragments)
{
    ring_mem m;
    tdm_shm_msg msg = { 0 };
    static uint8_t big[3000];

    ring_new(&m, 4096);
    fill(big, sizeof(big), 9);
    /* 3000 bytes = 3 frames of at most 1024: all fit at once. */
    cr_assert_eq(tdm_shm_ring_send(&m.prod, big, sizeof(big), dead, NULL), TDM_SHM_OK);
    cr_assert_eq(tdm_shm_ring_recv(&m.cons, &msg, 1 << 20, false, dead, NULL), TDM_SHM_OK);
    cr_assert_eq(msg.len, sizeof(big));
    cr_expect(check(msg.p, sizeof(big), 9));
    /* A receiver's limit is enforced across fragments. */
    cr_assert_eq(tdm_shm_ring_send(&m.prod, big, sizeof(big), dead, NULL), TDM_SHM_OK);
    cr_expect_eq(tdm_shm_ring_recv(&m.cons, &msg, 2000, false, dead, NULL), TDM_SHM_TOO_BIG);
    tdm_shm_msg_free(&msg);
    free(m.mem);
}

Test(shm_ring, full_ring_blocks_the_producer_until_there_is_room)
{
    ring_mem m;
    tdm_shm_msg msg = { 0 };
    uint8_t buf[1000];

    setenv("TANDEM_SHM_SPIN_US", "0", 1);
    ring_new(&m, 4096);
    /* 4 x 1008 bytes fit in 4096; the fifth does not. */
    for (int i = 0; i < 4; i++) {
        fill(buf, sizeof(buf), (uint32_t)i);
        cr_assert_eq(tdm_shm_ring_send(&m.prod, buf, sizeof(buf), dead, NULL), TDM_SHM_OK);
    }
    /* With a peer that never frees room, the producer waits, then gives up
     * when told the peer is gone. */
    cr_expect_eq(tdm_shm_ring_send(&m.prod, buf, sizeof(buf), dead, NULL), TDM_SHM_WAIT_DEAD);
    cr_assert_eq(tdm_shm_ring_recv(&m.cons, &msg, 1 << 20, false, dead, NULL), TDM_SHM_OK);
    cr_expect(check(msg.p, sizeof(buf), 0));
    fill(buf, sizeof(buf), 4);
    cr_expect_eq(tdm_shm_ring_send(&m.prod, buf, sizeof(buf), dead, NULL), TDM_SHM_OK);
    for (uint32_t i = 1; i <= 4; i++) {
        cr_assert_eq(tdm_shm_ring_recv(&m.cons, &msg, 1 << 20, false, dead, NULL), TDM_SHM_OK);
        cr_expect(check(msg.p, sizeof(buf), i), "message %u", i);
    }
    tdm_shm_msg_free(&msg);
    free(m.mem);
}

/* ---- two threads ---- */

#define NMSG 200000

static bool alive(void *arg)
{
    return true;
}

static void *producer(void *arg)
{
    ring_mem *m = arg;
    static uint8_t buf[20000];

    for (uint32_t i = 0; i < NMSG; i++) {
        /* Mostly launch-sized frames, now and then one split into fragments. */
        size_t n = i % 997 == 0 ? 20000 : 8 + i % 300;
        memcpy(buf, &i, sizeof(i));
        fill(buf + 4, n - 4, i);
        if (tdm_shm_ring_send(&m->prod, buf, n, alive, NULL) != TDM_SHM_OK)
            return (void *)1;
    }
    return NULL;
}

static void concurrent(uint64_t spin_us)
{
    ring_mem m;
    tdm_shm_msg msg = { 0 };
    pthread_t th;
    void *rc;
    char spin[16];

    snprintf(spin, sizeof(spin), "%llu", (unsigned long long)spin_us);
    setenv("TANDEM_SHM_SPIN_US", spin, 1);
    ring_new(&m, 64 << 10);
    cr_assert_eq(pthread_create(&th, NULL, producer, &m), 0);
    for (uint32_t i = 0; i < NMSG; i++) {
        uint32_t seq;
        size_t n = i % 997 == 0 ? 20000 : 8 + i % 300;
        cr_assert_eq(tdm_shm_ring_recv(&m.cons, &msg, 1 << 20, true, alive, NULL), TDM_SHM_OK);
        cr_assert_eq(msg.len, n, "message %u: %zu bytes, sent %zu", i, msg.len, n);
        memcpy(&seq, msg.p, sizeof(seq));
        cr_assert_eq(seq, i, "message %u arrived as number %u", i, seq);
        cr_assert(check(msg.p + 4, n - 4, i), "message %u came back different", i);
    }
    pthread_join(th, &rc);
    cr_expect_null(rc);
    tdm_shm_msg_free(&msg);
    free(m.mem);
}

Test(shm_ring, concurrent_producer_and_consumer_keep_order_and_content)
{
    concurrent(50);
}

Test(shm_ring, concurrent_with_futex_sleeps_only)
{
    concurrent(0);   /* every wait goes to sleep: exercises the wake protocol */
}

/* ---- corrupted indices: reported, never followed ---- */

static void expect_corrupt(ring_mem *m, const char *what)
{
    tdm_shm_msg msg = { 0 };

    cr_expect_eq(tdm_shm_ring_recv(&m->cons, &msg, 1 << 20, false, dead, NULL), TDM_SHM_CORRUPT);
    cr_expect(strstr(m->cons.why, what) != NULL, "why was '%s', expected '%s'", m->cons.why, what);
    tdm_shm_msg_free(&msg);
}

Test(shm_ring, head_beyond_capacity_is_corruption)
{
    ring_mem m;

    ring_new(&m, 4096);
    atomic_store(&ctl(&m)->head, 4096 + 8);
    expect_corrupt(&m, "beyond the ring's capacity");
    free(m.mem);
}

Test(shm_ring, head_going_backwards_is_corruption)
{
    ring_mem m;
    tdm_shm_msg msg = { 0 };
    uint8_t buf[64] = { 0 };

    ring_new(&m, 4096);
    cr_assert_eq(tdm_shm_ring_send(&m.prod, buf, sizeof(buf), dead, NULL), TDM_SHM_OK);
    cr_assert_eq(tdm_shm_ring_send(&m.prod, buf, sizeof(buf), dead, NULL), TDM_SHM_OK);
    cr_assert_eq(tdm_shm_ring_recv(&m.cons, &msg, 1 << 20, false, dead, NULL), TDM_SHM_OK);
    atomic_store(&ctl(&m)->head, 8);   /* behind what was consumed */
    expect_corrupt(&m, "behind the consumer's");
    tdm_shm_msg_free(&msg);
    free(m.mem);
}

Test(shm_ring, head_moved_back_but_ahead_of_tail_is_corruption)
{
    ring_mem m;
    uint8_t buf[64] = { 0 };

    ring_new(&m, 4096);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(tdm_shm_ring_send(&m.prod, buf, sizeof(buf), dead, NULL), TDM_SHM_OK);
    cr_assert_eq(tdm_shm_ring_unread(&m.cons), 3 * 72);
    /* The consumer has seen the head once... */
    {
        tdm_shm_msg msg = { 0 };
        cr_assert_eq(tdm_shm_ring_recv(&m.cons, &msg, 1 << 20, false, dead, NULL), TDM_SHM_OK);
        tdm_shm_msg_free(&msg);
    }
    atomic_store(&ctl(&m)->head, 2 * 72);    /* ...and now it goes back */
    expect_corrupt(&m, "went backwards");
    free(m.mem);
}

Test(shm_ring, misaligned_head_is_corruption)
{
    ring_mem m;

    ring_new(&m, 4096);
    atomic_store(&ctl(&m)->head, 13);
    expect_corrupt(&m, "misaligned");
    free(m.mem);
}

/* A hand-written frame header at the start of the ring, `published` bytes
 * announced. */
static void expect_bad_frame(tdm_shm_frame_hdr h, uint64_t published, const char *what)
{
    ring_mem m;

    ring_new(&m, 4096);
    memcpy((uint8_t *)m.mem + TDM_SHM_RING_CTL_SIZE, &h, sizeof(h));
    atomic_store(&ctl(&m)->head, published);
    expect_corrupt(&m, what);
    free(m.mem);
}

Test(shm_ring, frame_length_past_published_bytes_is_corruption)
{
    expect_bad_frame((tdm_shm_frame_hdr){ 0x7fffffffu, TDM_SHM_FRAME_LAST }, 64, "frame length past");
    expect_bad_frame((tdm_shm_frame_hdr){ 57, TDM_SHM_FRAME_LAST }, 64, "frame length past");  /* 8 + pad(57) = 72 */
}

/* Guards issue 16's finding 5: a guest whose first frame is empty made the
 * consumer memcpy 0 bytes into its still-NULL message buffer, undefined
 * behaviour that the UBSan build turned into an abort of the server and
 * every session.  An empty message is received as one of 0 bytes (the
 * RPC layer then refuses it as malformed, for that guest alone).  The same
 * frame then still computed NULL + 0 for the copy's destination, undefined
 * too, which fuzz_shm_ring found under clang's UBSan (gcc's does not check
 * it; tests/fuzz/corpus/fuzz_shm_ring/regress-empty-first-frame replays it
 * there). */
Test(shm_ring, an_empty_first_frame_is_an_empty_message)
{
    tdm_shm_frame_hdr h = { 0, TDM_SHM_FRAME_LAST };
    tdm_shm_msg msg = { 0 };
    ring_mem m;

    ring_new(&m, 4096);
    memcpy((uint8_t *)m.mem + TDM_SHM_RING_CTL_SIZE, &h, sizeof(h));
    atomic_store(&ctl(&m)->head, sizeof(h));
    cr_expect_eq(tdm_shm_ring_recv(&m.cons, &msg, 1 << 20, false, dead, NULL), TDM_SHM_OK, "%s", m.cons.why);
    cr_expect_eq(msg.len, 0);
    tdm_shm_msg_free(&msg);
    free(m.mem);
}

Test(shm_ring, unknown_frame_flags_are_corruption)
{
    expect_bad_frame((tdm_shm_frame_hdr){ 8, 0x80 }, 16, "unknown flags");
}

Test(shm_ring, tail_beyond_head_is_corruption_for_the_producer)
{
    ring_mem m;
    uint8_t buf[64] = { 0 };

    ring_new(&m, 4096);
    cr_assert_eq(tdm_shm_ring_send(&m.prod, buf, sizeof(buf), dead, NULL), TDM_SHM_OK);
    atomic_store(&ctl(&m)->tail, 4096);
    cr_expect_eq(tdm_shm_ring_send(&m.prod, buf, sizeof(buf), dead, NULL), TDM_SHM_CORRUPT);
    cr_expect(strstr(m.prod.why, "beyond the producer's") != NULL, "why: %s", m.prod.why);
}

/* ---- region header ---- */

static tdm_shm_header good_header(uint64_t *size)
{
    tdm_shm_region r;
    tdm_shm_header h;
    char err[200];

    cr_assert_eq(tdm_shm_region_create(&r, 1 << 20, err, sizeof(err)), 0, "%s", err);
    memcpy(&h, r.base, sizeof(h));
    *size = r.g.size;
    tdm_shm_region_release(&r);
    return h;
}

static void expect_refused(const tdm_shm_header *h, uint64_t size, const char *what)
{
    tdm_shm_geom g;
    char err[300] = "";

    cr_expect_eq(tdm_shm_geom_check(h, size, &g, err, sizeof(err)), -1, "accepted a header with %s", what);
    cr_expect(strstr(err, what) != NULL, "reason '%s', expected '%s'", err, what);
}

Test(shm_region, created_region_is_valid)
{
    uint64_t size;
    tdm_shm_header h = good_header(&size);
    tdm_shm_geom g;
    char err[300];

    cr_expect_eq(tdm_shm_geom_check(&h, size, &g, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(g.host_size, 1 << 20);
    cr_expect_eq(g.chunk * g.nslots, g.data_size);
}

Test(shm_region, bad_headers_are_refused)
{
    uint64_t size;
    tdm_shm_header h = good_header(&size), b;

    b = h; b.magic ^= 1;
    expect_refused(&b, size, "bad magic");
    b = h; b.version = 7;
    expect_refused(&b, size, "version");
    expect_refused(&h, size + 4096, "region size");
    b = h; b.ring_cap[0] = 5000;
    expect_refused(&b, size, "capacity");
    b = h; b.ring_off[1] = b.ring_off[0] + 64;
    expect_refused(&b, size, "overlaps");
    b = h; b.host_size = size;            /* runs past the end */
    expect_refused(&b, size, "outside");
    b = h; b.host_off = UINT64_MAX - 4095; /* wraps around */
    expect_refused(&b, size, "outside");
    b = h; b.nslots = 0;
    expect_refused(&b, size, "slots");
}

/* ---- wake-up latency ---- */

typedef struct pingpong {
    tdm_shm_waitpoint wp[2];
    _Atomic uint64_t flag[2];
    _Atomic uint64_t t_sent;
    uint64_t lat[2000];
    int n;
} pingpong;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct pp_cond {
    pingpong *p;
    int side;
    uint64_t want;
} pp_cond;

static int pp_ready(void *arg)
{
    pp_cond *c = arg;
    return atomic_load(&c->p->flag[c->side]) >= c->want;
}

static void *pp_echo(void *arg)
{
    pingpong *p = arg;

    for (int i = 1; i <= p->n; i++) {
        pp_cond c = { p, 1, (uint64_t)i };
        if (tdm_shm_wait(&p->wp[1], pp_ready, &c, alive, NULL) != 0)
            return (void *)1;
        p->lat[i - 1] = now_ns() - atomic_load(&p->t_sent);
        atomic_store(&p->flag[0], (uint64_t)i);
        tdm_shm_wake(&p->wp[0]);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median_wake_ns(const char *spin_us, int n, uint64_t *p99)
{
    pingpong *p = calloc(1, sizeof(*p));
    pthread_t th;
    uint64_t med;

    setenv("TANDEM_SHM_SPIN_US", spin_us, 1);
    p->n = n;
    cr_assert_eq(pthread_create(&th, NULL, pp_echo, p), 0);
    for (int i = 1; i <= n; i++) {
        pp_cond c = { p, 0, (uint64_t)i };
        if (spin_us[0] == '0') {
            struct timespec pause = { 0, 200000 };   /* let the peer fall asleep */
            nanosleep(&pause, NULL);
        }
        atomic_store(&p->t_sent, now_ns());
        atomic_store(&p->flag[1], (uint64_t)i);
        tdm_shm_wake(&p->wp[1]);
        cr_assert_eq(tdm_shm_wait(&p->wp[0], pp_ready, &c, alive, NULL), 0);
    }
    pthread_join(th, NULL);
    qsort(p->lat, (size_t)n, sizeof(p->lat[0]), cmp_u64);
    med = p->lat[n / 2];
    *p99 = p->lat[n * 99 / 100];
    free(p);
    return med;
}

static void report_wake(const char *what, const char *spin_us, int n)
{
    uint64_t p99, med = median_wake_ns(spin_us, n, &p99);

    printf("shm wake-up latency, %s: median %.2f us, p99 %.2f us\n", what, med / 1e3, p99 / 1e3);
    fflush(stdout);
    /* A lost wake-up would show as a 50 ms slice. */
    cr_expect_lt(med, 5000000, "median wake-up %llu ns", (unsigned long long)med);
}

/* The spin setting is read once per process, and Criterion runs each test
 * in its own process: one test per setting. */
Test(shm_wait, wake_up_latency_from_futex_sleep)
{
    report_wake("sleeping peer (futex)", "0", 1000);
}

Test(shm_wait, wake_up_latency_while_polling)
{
    report_wake("polling peer", "1000", 2000);
}

/* ---- a peer's death seen at once (shm_watch.h) ---- */

static int never(void *arg)
{
    (void)arg;
    return 0;
}

static bool watched_alive(void *arg)
{
    return !tdm_shm_watch_gone(arg);
}

typedef struct death_wait {
    tdm_shm_waitpoint wp;
    tdm_shm_watch w;
    int rc;
    uint64_t returned_ns;
} death_wait;

static void *wait_for_death(void *arg)
{
    death_wait *d = arg;

    d->rc = tdm_shm_wait(&d->wp, never, NULL, watched_alive, &d->w);
    d->returned_ns = now_ns();
    return NULL;
}

/* How long a waiter asleep on a waitpoint takes to return after its
 * peer's socket closes; `delay_us` after it started waiting. */
static double death_noticed_ms(unsigned delay_us)
{
    death_wait *d = calloc(1, sizeof(*d));
    tdm_shm_waitpoint *wps[] = { &d->wp };
    int sv[2];
    pthread_t th;

    cr_assert(d);
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    cr_assert_eq(tdm_shm_watch_start(&d->w, sv[0], wps, 1), 0);
    cr_assert_eq(pthread_create(&th, NULL, wait_for_death, d), 0);
    if (delay_us)
        usleep(delay_us);
    uint64_t closed = now_ns();
    close(sv[1]);
    pthread_join(th, NULL);
    cr_expect_eq(d->rc, TDM_SHM_WAIT_DEAD);
    double ms = (double)(d->returned_ns - closed) / 1e6;
    tdm_shm_watch_stop(&d->w);
    close(sv[0]);
    free(d);
    return ms;
}

/* A waiter asleep on a waitpoint returns TDM_SHM_WAIT_DEAD within a few
 * milliseconds of its peer's socket closing, not at the end of its sleep
 * slice (50 ms; 30-45 ms after the close in rounds 1 and 2); the peer going
 * before and while it sleeps.  A round gets a second try, so that one
 * scheduling delay on a loaded machine does not fail it; a waiter that only
 * the slice wakes fails both. */
Test(shm_wait, a_dead_peer_wakes_a_sleeper_at_once)
{
    static const unsigned delay_us[] = { 0, 5000, 20000 };   /* asleep: past the spin, early in a slice */

    for (int round = 0; round < 3; round++) {
        double ms = death_noticed_ms(delay_us[round]);
        if (ms >= 15.0)
            ms = death_noticed_ms(delay_us[round]);
        cr_expect_lt(ms, 15.0, "round %d: the waiter noticed the dead peer after %.2f ms", round, ms);
        cr_log_info("dead peer noticed after %.3f ms (round %d)\n", ms, round);
    }
}
