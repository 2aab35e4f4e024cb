/* tests/integration/hostile_attacks.h */
#include <arpa/inet.h>
#include <driver_types.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostile_attacks.h"
#include "shm_region.h"
#include "shm_ring.h"
#include "shm_socket.h"
#include "tandem_rpc.h"
#include "xdr_extra.h"

static void breach(hv_attack *a, const char *fmt, ...)
{
    if (atomic_fetch_add(&a->breaches, 1) == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->note, sizeof(a->note), fmt, ap);
        va_end(ap);
    }
}

static void *attack_thread(void *arg)
{
    hv_attack *a = arg;

    while (!atomic_load(&a->stop)) {
        a->round(a);
        atomic_fetch_add(&a->rounds, 1);
    }
    return NULL;
}

void hv_attack_start(hv_attack *a)
{
    atomic_init(&a->stop, false);
    atomic_init(&a->rounds, 0);
    atomic_init(&a->breaches, 0);
    a->note[0] = 0;
    a->nfds = 0;
    if (pthread_create(&a->th, NULL, attack_thread, a) != 0) {
        breach(a, "cannot start the attacker's thread");
        atomic_store(&a->stop, true);
        return;
    }
    while (atomic_load(&a->rounds) == 0)
        usleep(1000);
}

void hv_attack_stop(hv_attack *a)
{
    atomic_store(&a->stop, true);
    pthread_join(a->th, NULL);
    for (unsigned i = 0; i < a->nfds; i++)
        close(a->fds[i]);
    a->nfds = 0;
}

static int tcp_connect(int port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* An RPC call of Tandem's program for a procedure no version has, with no HELLO before it. */
static size_t bogus_call(char *buf, size_t cap)
{
    uint32_t words[] = { 7, 0 /* CALL */, 2, TANDEM_PROG, TANDEM_V1, 9999, 0, 0, 0, 0 };
    size_t n = sizeof(words);
    uint32_t mark = htonl(0x80000000u | (uint32_t)n);

    if (cap < n + 4)
        return 0;
    memcpy(buf, &mark, 4);
    for (size_t i = 0; i < sizeof(words) / 4; i++) {
        uint32_t w = htonl(words[i]);
        memcpy(buf + 4 + 4 * i, &w, 4);
    }
    return n + 4;
}

void hv_garbage_frames(hv_attack *a)
{
    static const char http[] = "\x80\x00\x00\x28GET / HTTP/1.1\r\nHost: x\r\n\r\nxxxxxxxxxxxxxx";
    static const char partial[] = "\x80\x10\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00";
    char buf[128];
    size_t n = 0;
    long r = atomic_load(&a->rounds);
    int fd = tcp_connect(a->srv->port);

    if (fd < 0)
        return;
    switch (r % 4) {
    case 0:
        memcpy(buf, http, n = sizeof(http) - 1);
        break;
    case 1:   /* claims 1 MiB, sends 12 bytes, goes away */
        memcpy(buf, partial, n = sizeof(partial) - 1);
        break;
    case 2:   /* noise, record marker included */
        for (n = 0; n < 96; n++)
            buf[n] = (char)((r * 2654435761u + n * 40503u) >> 7);
        break;
    default:
        n = bogus_call(buf, sizeof(buf));
        break;
    }
    if (write(fd, buf, n) != (ssize_t)n)
        breach(a, "could not even send garbage");
    close(fd);
}

static int read_at(tdm_transport *t, uint64_t addr, void *out, uint32_t n)
{
    tdm_memcpy_dtoh_args args = { .src = addr, .size = n, .stream = 0 };
    tdm_memcpy_dtoh_res r;
    int err;

    memset(&r, 0, sizeof(r));
    if (t->ops->call(t, TDM_MEMCPY_DTOH, (xdrproc_t)xdr_tdm_memcpy_dtoh_args, &args,
                     (xdrproc_t)xdr_tdm_memcpy_dtoh_res, &r) != 0)
        return -1;
    err = r.err;
    if (!err && r.data.data_len == n)
        memcpy(out, r.data.data_val, n);
    xdr_free((xdrproc_t)xdr_tdm_memcpy_dtoh_res, (char *)&r);
    return err;
}

void hv_forged_pointers(hv_attack *a)
{
    unsigned char buf[256];
    tdm_transport *t = a->t;

    memset(buf, 0xee, sizeof(buf));
    /* The victim's buffers: the arena's first granules, and just inside them. */
    for (uint64_t k = 0; k < 8; k++) {
        uint64_t addr = HV_ARENA_BASE + k * (2ull << 20) + (k & 1) * 64;
        tdm_memcpy_htod_args w = { .dst = addr, .stream = 0 };
        tdm_memset_args ms = { .dst = addr, .value = 0, .size = sizeof(buf), .stream = 0 };
        tdm_addr f = addr;
        int err;

        if ((err = read_at(t, addr, buf, sizeof(buf))) == 0)
            breach(a, "read %zu bytes at %#llx", sizeof(buf), (unsigned long long)addr);
        w.data.data_val = (char *)buf;
        w.data.data_len = sizeof(buf);
        t->ops->post(t, TDM_MEMCPY_HTOD, (xdrproc_t)xdr_tdm_memcpy_htod_args, &w);
        t->ops->post(t, TDM_MEMSET, (xdrproc_t)xdr_tdm_memset_args, &ms);
        if (hv_call_int(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL) == 0)
            breach(a, "wrote and set memory at %#llx without an error", (unsigned long long)addr);
        if (hv_call_int(t, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &f) == 0)
            breach(a, "freed %#llx", (unsigned long long)addr);
    }
    /* Handles of the kinds the server hands out, numbered as it numbers them. */
    for (uint64_t k = 1; k < 8; k++) {
        tdm_handle s = 0x5300000100000000ull | k, e = 0x4500000100000000ull | k;
        if (hv_call_int(t, TDM_STREAM_SYNCHRONIZE, (xdrproc_t)xdr_tdm_handle, &s) == 0)
            breach(a, "synchronized stream %#llx", (unsigned long long)s);
        if (hv_call_int(t, TDM_EVENT_QUERY, (xdrproc_t)xdr_tdm_handle, &e) == 0)
            breach(a, "queried event %#llx", (unsigned long long)e);
        if (hv_call_int(t, TDM_STREAM_DESTROY, (xdrproc_t)xdr_tdm_handle, &s) == 0)
            breach(a, "destroyed stream %#llx", (unsigned long long)s);
    }
}

void hv_launch_flood(hv_attack *a)
{
    uint64_t vals[2] = { a->mem, a->mem_elems };

    for (int i = 0; i < 256 && !atomic_load(&a->stop); i++)
        if (hv_launch(a->t, &a->k, (tdm_xdim3){ (unsigned)(a->mem_elems + 255) / 256, 1, 1 }, (tdm_xdim3){ 256, 1, 1 },
                      0, vals) != 0) {
            breach(a, "the attacker's transport failed at launch %d", i);
            atomic_store(&a->stop, true);
        }
}

void hv_silent_connections(hv_attack *a)
{
    const unsigned cap = sizeof(a->fds) / sizeof(a->fds[0]);

    if (a->nfds == cap) {    /* the oldest was closed by the server by now, or is closed by us */
        close(a->fds[0]);
        memmove(a->fds, a->fds + 1, (cap - 1) * sizeof(a->fds[0]));
        a->nfds--;
    }
    int fd = tcp_connect(a->srv->port);
    if (fd >= 0)
        a->fds[a->nfds++] = fd;
    usleep(10000);
}

static bool peer_alive(void *arg)
{
    return tdm_shm_peer_alive(*(int *)arg);
}

void hv_empty_shm_frame(hv_attack *a)
{
    tdm_shm_region r;
    tdm_shm_ring tx;
    char err[300];
    const char nothing[1] = { 0 };

    memset(&r, 0, sizeof(r));
    if (tdm_shm_region_create(&r, 1 << 20, err, sizeof(err)) != 0) {
        breach(a, "no region: %s", err);
        atomic_store(&a->stop, true);
        return;
    }
    int sock = tdm_shm_connect(a->srv->shm_name, err, sizeof(err));
    if (sock >= 0 && tdm_shm_offer_region(sock, r.fd, r.g.size, err, sizeof(err)) == 0) {
        tdm_shm_ring_attach(&tx, tdm_shm_at(&r, r.g.ring_off[TDM_SHM_G2S]), r.g.ring_cap[TDM_SHM_G2S]);
        tdm_shm_ring_send(&tx, nothing, 0, peer_alive, &sock);   /* one frame, length 0, the last */
        usleep(2000);
    }
    if (sock >= 0)
        close(sock);
    tdm_shm_region_release(&r);
}

void hv_bad_credentials(hv_attack *a)
{
    const char *tokens[] = { NULL, a->token };
    long r = atomic_load(&a->rounds);
    tdm_transport *t = NULL;
    char err[256];

    if (tdm_transport_open(a->srv->endpoint, &t, err, sizeof(err)) != 0)
        return;
    if (r % 3 == 2) {   /* a call before the credential */
        tdm_malloc_res m;
        u_quad_t sz = 4096;
        memset(&m, 0, sizeof(m));
        if (t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_u_quad_t, &sz, (xdrproc_t)xdr_tdm_malloc_res, &m) == 0 &&
            m.err == 0)
            breach(a, "allocated at %#llx without presenting a credential", (unsigned long long)m.addr);
    } else {
        const char *tok = tokens[r % 3];
        tdm_hello_args h = { TDM_PROTO_VERSION, (int)getpid(), "hostile-guesser", TDM_RESUME_NONE,
                             { tok ? (u_int)strlen(tok) : 0, (char *)tok }, { 0, NULL } };
        tdm_hello_res res;
        memset(&res, 0, sizeof(res));
        if (t->ops->call(t, TDM_HELLO, (xdrproc_t)xdr_tdm_hello_args, &h, (xdrproc_t)xdr_tdm_hello_res, &res) == 0 &&
            res.err == 0)
            breach(a, "a session opened with %s", tok ? "a token of no tenant" : "no token");
        xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&res);
    }
    t->ops->close(t);
}

void hv_exhausted_asks(hv_attack *a)
{
    tdm_stream_create_args sc = { 0, 0 };
    unsigned flags = 0;
    tdm_handle_res r;

    memset(&r, 0, sizeof(r));
    if (a->t->ops->call(a->t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc,
                        (xdrproc_t)xdr_tdm_handle_res, &r) == 0 &&
        r.err != cudaErrorMemoryAllocation)
        breach(a, "a stream beyond the bound was answered %d", r.err);
    memset(&r, 0, sizeof(r));
    if (a->t->ops->call(a->t, TDM_EVENT_CREATE, (xdrproc_t)xdr_tdm_u32, &flags, (xdrproc_t)xdr_tdm_handle_res,
                        &r) == 0 &&
        r.err != cudaErrorMemoryAllocation)
        breach(a, "an event beyond the bound was answered %d", r.err);
}
