#include "listener.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dispatch.h"
#include "handoff.h"
#include "lanes.h"
#include "lanes_wire.h"
#include "log.h"
#include "session.h"
#include "shm_socket.h"
#include "tenants.h"

#define MAX_CONNS 1024

typedef struct conn_set {
    const tdm_listener_config *cfg;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    int fds[MAX_CONNS];
    /* ---- tcp lanes (issue 14) ---- */
    tdm_lanes *lanes[MAX_CONNS]; /* fds[i]'s session's lanes, while lanes may join it */
    bool is_lane[MAX_CONNS];     /* fds[i] is a lane: not a session for max_sessions */
    int nlanes;
    int n;
} conn_set;

typedef struct conn {
    tdm_server *srv;
    conn_set *set;
    int fd;
    bool shm;                 /* a unix-socket guest of the shm transport */
    int region_fd;            /* its region's memfd when the front made its handshake, else -1 */
    long uid;                 /* its user (SO_PEERCRED), checked against its tenant's; -1 over TCP */
    char peer[128];
} conn;

static void set_remove(conn_set *cs, int fd)
{
    pthread_mutex_lock(&cs->lock);
    for (int i = 0; i < cs->n; i++) {
        if (cs->fds[i] == fd) {
            cs->nlanes -= cs->is_lane[i];
            --cs->n;
            cs->fds[i] = cs->fds[cs->n];
            cs->lanes[i] = cs->lanes[cs->n];
            cs->is_lane[i] = cs->is_lane[cs->n];
            break;
        }
    }
    pthread_cond_broadcast(&cs->idle);
    pthread_mutex_unlock(&cs->lock);
}

/* ---- tcp lanes (issue 14) ---- */
/* Whether fd's peer opened with a lane's preamble (lanes_wire.h).  Waits
 * for its first bytes (a guest sends at once either way); only a peer
 * whose bytes so far are the magic's start is waited for further, for a
 * while, so a short frame that is not a lane is served as before. */
static bool starts_as_lane(int fd)
{
    char head[TDM_LANE_MAGIC_LEN];
    const struct timespec tick = { 0, 10 * 1000 * 1000 };

    for (int waited = 0; waited < 1000; waited++) {
        ssize_t got = recv(fd, head, sizeof(head), MSG_PEEK);
        if (got <= 0 || memcmp(head, TDM_LANE_MAGIC, (size_t)got) != 0)
            return false;
        if (got == (ssize_t)sizeof(head))
            return true;
        nanosleep(&tick, NULL);
    }
    return false;
}

/* Publishes (or, with NULL, withdraws) the lanes of fd's session, under
 * the set's lock so that an attaching lane never sees them closed. */
static void set_lanes(conn_set *cs, int fd, tdm_lanes *l)
{
    pthread_mutex_lock(&cs->lock);
    for (int i = 0; i < cs->n; i++)
        if (cs->fds[i] == fd)
            cs->lanes[i] = l;
    pthread_mutex_unlock(&cs->lock);
}

/* A lane: its preamble names a session by id and secret; it joins that
 * session's lanes, or is closed with the reason logged.  Nothing else is
 * touched either way. */
static void serve_lane(conn *c)
{
    unsigned char pre[TDM_LANE_PREAMBLE_LEN], ack[4];
    const struct timeval patience = { 10, 0 }, forever = { 0, 0 };
    const char *why = "no session has that id and secret";
    tdm_lanes *l = NULL;
    uint64_t sid;
    int index = -1;

    /* A peer that stalls in its preamble does not keep a thread for good. */
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
    if (recv(c->fd, pre, sizeof(pre), MSG_WAITALL) != (ssize_t)sizeof(pre)) {
        tdm_log("lane from %s closed: incomplete preamble", c->peer);
        return;
    }
    /* A lane reads and writes only inside a job of its session's copy; a guest that stalls in its
     * slice fails the job after --frame-timeout, as a frame stalled on the main connection does,
     * instead of holding the session's thread for good (issue 16). */
    const struct timeval in_job = { (time_t)c->srv->cfg.frame_timeout_s, 0 };
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, c->srv->cfg.frame_timeout_s ? &in_job : &forever, sizeof(in_job));
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, c->srv->cfg.frame_timeout_s ? &in_job : &forever, sizeof(in_job));
    sid = tdm_lane_get64(pre + TDM_LANE_MAGIC_LEN);
    pthread_mutex_lock(&c->set->lock);
    for (int i = 0; i < c->set->n; i++) {
        if (c->set->fds[i] == c->fd)
            c->set->is_lane[i] = true;
        else if (c->set->lanes[i] && index < 0 && !l &&
                 tdm_lanes_match(c->set->lanes[i], sid, pre + TDM_LANE_MAGIC_LEN + 8)) {
            l = c->set->lanes[i];
            index = tdm_lanes_attach(l, c->fd, &why);
        }
    }
    c->set->nlanes++;
    pthread_mutex_unlock(&c->set->lock);
    if (index < 0) {
        tdm_log("lane from %s for session %llu closed: %s", c->peer, (unsigned long long)sid, why);
        return;
    }
    tdm_lane_put32(ack, (uint32_t)index);
    if (send(c->fd, ack, sizeof(ack), MSG_NOSIGNAL) == (ssize_t)sizeof(ack))
        tdm_log_session(sid, "lane %d opened by %s", index, c->peer);
    /* Even when the answer did not go: the lane's slot is served (and
     * fails at its first job) so that the session's count stays right. */
    tdm_lanes_serve(l, index, sid);
}

/* Whether the peer sent its first bytes within the handshake timeout: a connection that stays
 * silent holds a session slot and a thread, and as many of them as --max-sessions would lock
 * every guest out (issue 16).  The guest speaks at once: its HELLO, or a lane's preamble. */
static bool speaks_in_time(const conn *c)
{
    struct pollfd p = { .fd = c->fd, .events = POLLIN };
    int timeout_s = c->srv->cfg.handshake_timeout_s, rc;

    if (timeout_s <= 0)
        return true;
    do
        rc = poll(&p, 1, timeout_s * 1000);
    while (rc < 0 && errno == EINTR);
    if (rc > 0)
        return true;
    tdm_log("connection from %s closed: it sent nothing in %d s (--handshake-timeout)", c->peer, timeout_s);
    return false;
}

static void *serve_conn(void *arg)
{
    conn *c = arg;
    tdm_session *s = NULL;
    tdm_lanes *lanes = NULL;
    char why[160];
    int err;

    /* An shm guest the front handed over spoke already: its handshake was the front's. */
    if (c->region_fd < 0 && !speaks_in_time(c))
        goto out;
    if (c->set->cfg->route) {   /* ---- a process per tenant (issue 16): the front ---- */
        c->set->cfg->route(c->set->cfg->route_ctx, c->fd, c->shm, c->uid, c->peer);
        goto out;
    }
    if (c->shm) {
        tdm_listener_serve_shm(c->srv, c->fd, c->peer, c->uid, c->region_fd);
        c->region_fd = -1;
        goto out;
    }
    if (starts_as_lane(c->fd)) {
        serve_lane(c);
        goto out;
    }
    err = tdm_session_create(c->srv, &s);
    if (err) {
        tdm_log("cannot open a session for %s (cudaError %d)", c->peer, err);
        goto out;
    }
    snprintf(s->peer, sizeof(s->peer), "%s", c->peer);
    tdm_log("session %llu opened by %s", (unsigned long long)s->id, c->peer);
    /* Without lanes (out of memory) the session copies on this connection. */
    s->lanes = lanes = tdm_lanes_create(c->srv->cfg.tcp_send);
    set_lanes(c->set, c->fd, lanes);
    tdm_rpc_end end = tdm_rpc_serve_timed(&tdm_dispatch_program, s, c->fd, &s->wire, why, sizeof(why));
    tdm_log("session %llu (pid %d%s%s) closed: %s%s", (unsigned long long)s->id, s->pid,
            s->placement[0] ? ", placement " : "", s->placement, /* ---- on-boarding (issue 17) ---- */
            why, end == TDM_RPC_MALFORMED ? " (other sessions are unaffected)" : "");
    /* No lane joins from now on; those joined leave before the session goes. */
    set_lanes(c->set, c->fd, NULL);
    tdm_lanes_close(lanes);
    s->lanes = NULL;
    tdm_tenants_release(s);
    tdm_session_destroy(s);
out:
    set_remove(c->set, c->fd);
    close(c->fd);
    if (c->region_fd >= 0)
        close(c->region_fd);
    free(c);
    return NULL;
}

static int listen_on(const tdm_listener_config *cfg, int *port_out)
{
    struct addrinfo hints = { 0 }, *res = NULL;
    char portstr[16];
    int fd = -1, one = 1, rc;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    snprintf(portstr, sizeof(portstr), "%d", cfg->port);
    rc = getaddrinfo(cfg->host, portstr, &hints, &res);
    if (rc != 0) {
        tdm_log("cannot resolve %s: %s", cfg->host, gai_strerror(rc));
        return -1;
    }
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        goto fail;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0)
        goto fail;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        goto fail;
    *port_out = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                               : ((struct sockaddr_in *)&ss)->sin_port);
    freeaddrinfo(res);
    return fd;
fail:
    tdm_log("cannot listen on %s:%d: %s", cfg->host, cfg->port, strerror(errno));
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return -1;
}

static int write_port_file(const char *path, int port)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        tdm_log("cannot write port file %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Serves connection fd (from accept, or handed over by the front) on a thread of its own, or
 * refuses it at the session limit; fd (and region_fd) are closed either way. */
static void serve_new(tdm_server *srv, conn_set *cs, int fd, bool shm, long uid, const char *peer, int region_fd)
{
    pthread_attr_t attr;
    pthread_t th;
    conn *c;

    pthread_mutex_lock(&cs->lock);
    /* Lanes are not sessions; a lane not yet known as one counts as a
     * session until its preamble is read. */
    int full = cs->n >= MAX_CONNS || (srv->cfg.max_sessions > 0 && cs->n - cs->nlanes >= srv->cfg.max_sessions);
    if (!full) {
        cs->lanes[cs->n] = NULL;
        cs->is_lane[cs->n] = false;
        cs->fds[cs->n++] = fd;
    }
    pthread_mutex_unlock(&cs->lock);
    if (full) {
        tdm_log("refusing %s: session limit reached", peer);
        goto drop;
    }
    c = calloc(1, sizeof(*c));
    if (!c)
        goto fail;
    c->srv = srv;
    c->set = cs;
    c->fd = fd;
    c->shm = shm;
    c->region_fd = region_fd;
    c->uid = uid;
    snprintf(c->peer, sizeof(c->peer), "%s", peer);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, serve_conn, c);
    pthread_attr_destroy(&attr);
    if (rc == 0)
        return;
    free(c);
fail:
    tdm_log("cannot serve %s: out of resources", peer);
    set_remove(cs, fd);
drop:
    close(fd);
    if (region_fd >= 0)
        close(region_fd);
}

static void accept_one(tdm_server *srv, conn_set *cs, int lfd, const char *shm_name)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?", peer[sizeof(host) + sizeof(serv) + 2];
    int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC), one = 1;
    struct ucred cred = { .uid = (uid_t)-1 };

    if (fd < 0)
        return;
    if (shm_name) {
        socklen_t cl = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0)
            cred.uid = (uid_t)-1;   /* unknown: a tenant bound to a uid refuses it */
        snprintf(host, sizeof(host), "shm:%s", shm_name);
        snprintf(serv, sizeof(serv), "pid %d", (int)cred.pid);
    } else {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
        getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV);
    }
    snprintf(peer, sizeof(peer), shm_name ? "%s %s" : "%s:%s", host, serv);
    serve_new(srv, cs, fd, shm_name != NULL, shm_name ? (long)cred.uid : -1, peer, -1);
}

/* ---- a process per tenant (issue 16): a tenant's process takes connections from the front ---- */
/* False when the front is gone: the process stops as on SIGTERM. */
static bool take_handed(tdm_server *srv, conn_set *cs, int hfd)
{
    tdm_handoff h;
    int fd, region_fd, rc = tdm_handoff_recv(hfd, &h, &fd, &region_fd);

    if (rc && rc != -EPROTO) {
        tdm_log("the server's front is gone (%s): stopping", rc == -ENOTCONN ? "its socket closed" : strerror(-rc));
        return false;
    }
    if (rc) {
        tdm_log("a message from the front that hands no connection: ignored");
        return true;
    }
    serve_new(srv, cs, fd, h.kind == TDM_HANDOFF_SHM, h.uid, h.peer, region_fd);
    return true;
}

/* The front's endpoints stand for a tenant's process: guests and the standby know no other. */
static void run_handed(tdm_server *srv, conn_set *cs, const tdm_listener_config *cfg, volatile sig_atomic_t *stop)
{
    tdm_server_set_endpoint(srv, cfg->endpoint ? cfg->endpoint : "", cfg->shm_endpoint && *cfg->shm_endpoint
                                                                         ? cfg->shm_endpoint : NULL);
    tdm_log("serving the connections the front hands over, backend %s%s", srv->ops->name,
            srv->ops->simulated ? " (SIMULATED GPU, not a real device)" : "");
    while (!*stop) {
        struct pollfd p = { .fd = cfg->handoff_fd, .events = POLLIN };
        if (poll(&p, 1, 200) <= 0)
            continue;
        if (!take_handed(srv, cs, cfg->handoff_fd))
            break;
    }
}

/* Wakes every session thread and waits (10 s at most) for them: each destroys its session on
 * the way out.  0, or -1 when some did not finish. */
static int drain(tdm_server *srv, conn_set *cs)
{
    pthread_mutex_lock(&cs->lock);
    for (int i = 0; i < cs->n; i++)
        shutdown(cs->fds[i], SHUT_RDWR);
    tdm_server_end_work(srv, cs->n);   /* a session waiting for a long kernel would hold the stop up */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    while (cs->n > 0 && pthread_cond_timedwait(&cs->idle, &cs->lock, &until) == 0)
        ;
    int left = cs->n;
    pthread_mutex_unlock(&cs->lock);
    if (left) {
        tdm_log("%d session(s) did not finish within 10 s of the stop", left);
        return -1;  /* their threads still use the backend: do not tear it down */
    }
    return 0;
}

int tdm_listener_run(tdm_server *srv, const tdm_listener_config *cfg, volatile sig_atomic_t *stop)
{
    conn_set cs = { .n = 0, .cfg = cfg };
    int port = 0, lfd, sfd = -1;
    char err[300];

    pthread_mutex_init(&cs.lock, NULL);
    pthread_cond_init(&cs.idle, NULL);
    if (cfg->handoff_fd >= 0) {
        run_handed(srv, &cs, cfg, stop);
        return drain(srv, &cs);
    }
    lfd = listen_on(cfg, &port);
    if (lfd < 0)
        return -1;
    if (cfg->shm_name) {
        sfd = tdm_shm_listen(cfg->shm_name, err, sizeof(err));
        if (sfd < 0) {
            tdm_log("%s", err);
            close(lfd);
            return -1;
        }
    }
    char ep[160], shm_ep[160];
    snprintf(ep, sizeof(ep), "tcp://%s:%d", cfg->host, port);
    snprintf(shm_ep, sizeof(shm_ep), "shm:%s", cfg->shm_name ? cfg->shm_name : "");
    tdm_server_set_endpoint(srv, ep, cfg->shm_name ? shm_ep : NULL);
    /* Said before the port file and "listening": whoever waits for either (a supervisor, the
     * tests) finds these written already (a CI run of 2026-12-02 read the log in between). */
    /* ---- tcp bulk data (issue 14): not the default, so said ---- */
    if (srv->cfg.tcp_send == TDM_TX_SPLICE && !cfg->route)
        tdm_log("TCP lanes send downloads spliced from the staging (--tcp-send splice)");
    /* ---- tenants (issue 16): who may use it, said once at start ---- */
    if (srv->cfg.tenants)
        tdm_log("%zu tenant(s) from --tenants: a guest must present its tenant's token (TANDEM_TOKEN)",
                srv->cfg.tenants->n);
    else
        tdm_log("no --tenants: any guest that can reach %s%s%s may use the GPU", ep, cfg->shm_name ? " or " : "",
                cfg->shm_name ? shm_ep : "");
    /* Written last: whoever waits for the port file may connect at once. */
    if (cfg->port_file && write_port_file(cfg->port_file, port) != 0) {
        close(lfd);
        if (sfd >= 0)
            close(sfd);
        return -1;
    }
    printf("tandem-server: listening on tcp://%s:%d", cfg->host, port);
    if (cfg->shm_name)
        printf(" and shm:%s (unix socket @tandem-shm-%s)", cfg->shm_name, cfg->shm_name);
    if (cfg->route)
        printf(", a process per tenant\n");
    else
        printf(", backend %s%s\n", srv->ops->name, srv->ops->simulated ? " (SIMULATED GPU, not a real device)" : "");
    fflush(stdout);

    while (!*stop) {
        struct pollfd p[2] = { { .fd = lfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
        if (poll(p, sfd >= 0 ? 2 : 1, 200) <= 0)
            continue;
        if (p[0].revents & POLLIN)
            accept_one(srv, &cs, lfd, NULL);
        if (sfd >= 0 && (p[1].revents & POLLIN))
            accept_one(srv, &cs, sfd, cfg->shm_name);
    }
    close(lfd);
    if (sfd >= 0)
        close(sfd);

    return drain(srv, &cs);
}
