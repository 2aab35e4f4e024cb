#include "mirror.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define RETRY_MS 100

struct tdm_mirror {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int sock;                /* -1 while not connected */
    uint64_t gen, last_gen;  /* gen: the live connection's (0: none) */
    char path[108];
    char endpoint[256];      /* where tcp guests resume */
    char shm_endpoint[256];  /* where shm guests resume; "" when the standby serves no shm */
    uint64_t arena_base, arena_size;
    bool stop, said_waiting;
    pthread_t watcher;
};

/* The standby's HELLO payload: NUL-ended endpoints, tcp first, then shm
 * when it serves shm (mirror_wire.h).  One without a NUL is a tcp one. */
static void parse_endpoints(const char *p, uint32_t len, char *tcp, char *shm, size_t eplen)
{
    const char *nul = memchr(p, 0, len);
    uint32_t first = nul ? (uint32_t)(nul - p) : len;
    const char *rest = p + first + 1;
    uint32_t left = nul ? len - first - 1 : 0;

    snprintf(tcp, eplen, "%.*s", (int)first, p);
    if (left && rest[left - 1] == 0)
        left--;
    shm[0] = 0;
    if (left > 4 && strncmp(rest, "shm:", 4) == 0)
        snprintf(shm, eplen, "%.*s", (int)left, rest);
}

/* Connects and exchanges HELLO.  The socket, or -1 with why in `why`. */
static int dial(const char *path, uint64_t base, uint64_t size, char *endpoint, char *shm_endpoint, size_t eplen,
                char *why, size_t whylen)
{
    tdm_mirror_hdr h = { .type = TDM_M_HELLO, .a = base, .b = size, .c = TDM_MIRROR_MAGIC }, r;
    void *payload = NULL;
    int sock = tdm_mirror_exchange(path, &h, NULL, &r, &payload);

    if (sock < 0) {
        snprintf(why, whylen, "cannot reach the standby at %s: %s", path, strerror(-sock));
        return -1;
    }
    if (r.a == 0 || !payload) {
        snprintf(why, whylen, "the standby at %s refused this server: %.*s", path, (int)r.len,
                 payload ? (char *)payload : "");
        free(payload);
        close(sock);
        return -1;
    }
    parse_endpoints(payload, r.len, endpoint, shm_endpoint, eplen);
    free(payload);
    return sock;
}

/* Under lock. */
static void hang_up_locked(tdm_mirror *m, const char *why)
{
    if (m->sock < 0)
        return;
    close(m->sock);
    m->sock = -1;
    m->gen = 0;
    m->said_waiting = false;
    tdm_log("lost the standby (%s): sessions are unprotected until a standby is back", why);
    pthread_cond_broadcast(&m->changed);
}

static bool try_connect(tdm_mirror *m, bool loud)
{
    char path[108], ep[256], shm_ep[256], why[400];
    int sock;

    pthread_mutex_lock(&m->lock);
    snprintf(path, sizeof(path), "%s", m->path);
    pthread_mutex_unlock(&m->lock);
    sock = dial(path, m->arena_base, m->arena_size, ep, shm_ep, sizeof(ep), why, sizeof(why));
    pthread_mutex_lock(&m->lock);
    if (sock >= 0 && (m->stop || strcmp(path, m->path) != 0)) {
        close(sock);             /* retargeted meanwhile: try the new path */
        sock = -1;
    } else if (sock >= 0) {
        m->sock = sock;
        m->gen = ++m->last_gen;
        snprintf(m->endpoint, sizeof(m->endpoint), "%s", ep);
        snprintf(m->shm_endpoint, sizeof(m->shm_endpoint), "%s", shm_ep);
        tdm_log("standby at %s (guests resume at %s%s%s)", path, ep,
                shm_ep[0] ? ", shm guests at " : "; it serves no shm, so shm guests are not protected", shm_ep);
        pthread_cond_broadcast(&m->changed);
    } else if (loud || !m->said_waiting) {
        tdm_log("%s%s", why, loud ? "" : "; trying again until one listens there");
        m->said_waiting = true;
    }
    pthread_mutex_unlock(&m->lock);
    return sock >= 0;
}

/* Watches the live connection (the standby never writes after the
 * handshake: readable means it is gone) and dials again while there is
 * none. */
static void *watch_main(void *arg)
{
    tdm_mirror *m = arg;

    for (;;) {
        pthread_mutex_lock(&m->lock);
        bool stop = m->stop;
        int sock = m->sock;
        pthread_mutex_unlock(&m->lock);
        if (stop)
            return NULL;
        if (sock < 0) {
            if (!try_connect(m, false))
                usleep(RETRY_MS * 1000);
            continue;
        }
        struct pollfd p = { .fd = sock, .events = POLLIN | POLLRDHUP };
        int n = poll(&p, 1, RETRY_MS);
        pthread_mutex_lock(&m->lock);
        if (n > 0 && m->sock == sock)
            hang_up_locked(m, "its socket closed");
        pthread_mutex_unlock(&m->lock);
    }
}

int tdm_mirror_open(tdm_mirror **out, const char *path, uint64_t arena_base, uint64_t arena_size, bool required)
{
    tdm_mirror *m;

    if (strlen(path) >= sizeof(m->path)) {
        tdm_log("standby socket path too long: %s", path);
        return -1;
    }
    m = calloc(1, sizeof(*m));
    if (!m)
        return -1;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->changed, NULL);
    m->sock = -1;
    m->arena_base = arena_base;
    m->arena_size = arena_size;
    snprintf(m->path, sizeof(m->path), "%s", path);
    if ((required && !try_connect(m, true)) || pthread_create(&m->watcher, NULL, watch_main, m) != 0) {
        if (m->sock >= 0)
            close(m->sock);
        free(m);
        return -1;
    }
    *out = m;
    return 0;
}

void tdm_mirror_close(tdm_mirror *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    m->stop = true;
    pthread_mutex_unlock(&m->lock);
    pthread_join(m->watcher, NULL);
    if (m->sock >= 0)
        close(m->sock);
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->changed);
    free(m);
}

void tdm_mirror_retarget(tdm_mirror *m, const char *path)
{
    pthread_mutex_lock(&m->lock);
    snprintf(m->path, sizeof(m->path), "%s", path);
    if (m->sock >= 0) {
        close(m->sock);
        m->sock = -1;
        m->gen = 0;
    }
    m->said_waiting = false;
    pthread_mutex_unlock(&m->lock);
}

uint64_t tdm_mirror_gen(tdm_mirror *m)
{
    uint64_t g;

    pthread_mutex_lock(&m->lock);
    g = m->gen;
    pthread_mutex_unlock(&m->lock);
    return g;
}

bool tdm_mirror_endpoint(tdm_mirror *m, uint64_t gen, bool shm, char *out, size_t len)
{
    bool live;

    pthread_mutex_lock(&m->lock);
    live = gen && m->gen == gen;
    snprintf(out, len, "%s", !live ? "" : shm ? m->shm_endpoint : m->endpoint);
    pthread_mutex_unlock(&m->lock);
    return live && out[0];
}

int tdm_mirror_post(tdm_mirror *m, uint64_t gen, const tdm_mirror_hdr *h, const void *payload, int fd)
{
    int rc = -ENOTCONN;

    pthread_mutex_lock(&m->lock);
    if (gen && m->gen == gen) {
        rc = tdm_mirror_send(m->sock, h, payload, fd);
        if (rc != 0)
            hang_up_locked(m, strerror(-rc));
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}
