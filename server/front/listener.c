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
#include "log.h"
#include "session.h"
#include "shm_socket.h"

typedef struct conn_set {
    pthread_mutex_t lock;
    pthread_cond_t idle;
    int fds[1024];
    int n;
} conn_set;

typedef struct conn {
    tdm_server *srv;
    conn_set *set;
    int fd;
    bool shm;                 /* a unix-socket guest of the shm transport */
    char peer[128];
} conn;

static void set_remove(conn_set *cs, int fd)
{
    pthread_mutex_lock(&cs->lock);
    for (int i = 0; i < cs->n; i++) {
        if (cs->fds[i] == fd) {
            cs->fds[i] = cs->fds[--cs->n];
            break;
        }
    }
    pthread_cond_broadcast(&cs->idle);
    pthread_mutex_unlock(&cs->lock);
}

static void *serve_conn(void *arg)
{
    conn *c = arg;
    tdm_session *s = NULL;
    char why[160];
    int err;

    if (c->shm) {
        tdm_listener_serve_shm(c->srv, c->fd, c->peer);
        goto out;
    }
    err = tdm_session_create(c->srv, &s);
    if (err) {
        tdm_log("cannot open a session for %s (cudaError %d)", c->peer, err);
        goto out;
    }
    tdm_log("session %llu opened by %s", (unsigned long long)s->id, c->peer);
    tdm_rpc_end end = tdm_rpc_serve(&tdm_dispatch_program, s, c->fd, why, sizeof(why));
    tdm_log("session %llu (pid %d) closed: %s%s", (unsigned long long)s->id, s->pid,
            why, end == TDM_RPC_MALFORMED ? " (other sessions are unaffected)" : "");
    tdm_session_destroy(s);
out:
    set_remove(c->set, c->fd);
    close(c->fd);
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

static void accept_one(tdm_server *srv, conn_set *cs, int lfd, const char *shm_name)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
    int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC), one = 1;
    pthread_attr_t attr;
    pthread_t th;
    conn *c;

    if (fd < 0)
        return;
    if (shm_name) {
        struct ucred cred = { 0 };
        socklen_t cl = sizeof(cred);
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl);
        snprintf(host, sizeof(host), "shm:%s", shm_name);
        snprintf(serv, sizeof(serv), "pid %d", (int)cred.pid);
    } else {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
        getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV);
    }

    pthread_mutex_lock(&cs->lock);
    int full = cs->n >= (int)(sizeof(cs->fds) / sizeof(cs->fds[0])) ||
               (srv->cfg.max_sessions > 0 && cs->n >= srv->cfg.max_sessions);
    if (!full)
        cs->fds[cs->n++] = fd;
    pthread_mutex_unlock(&cs->lock);
    if (full) {
        tdm_log("refusing %s:%s: session limit reached", host, serv);
        close(fd);
        return;
    }
    c = calloc(1, sizeof(*c));
    if (!c)
        goto fail;
    c->srv = srv;
    c->set = cs;
    c->fd = fd;
    c->shm = shm_name != NULL;
    snprintf(c->peer, sizeof(c->peer), shm_name ? "%s %s" : "%s:%s", host, serv);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, serve_conn, c);
    pthread_attr_destroy(&attr);
    if (rc == 0)
        return;
    free(c);
fail:
    tdm_log("cannot serve %s:%s: out of resources", host, serv);
    set_remove(cs, fd);
    close(fd);
}

int tdm_listener_run(tdm_server *srv, const tdm_listener_config *cfg, volatile sig_atomic_t *stop)
{
    conn_set cs = { .n = 0 };
    int port = 0, lfd, sfd = -1;
    char err[300];

    pthread_mutex_init(&cs.lock, NULL);
    pthread_cond_init(&cs.idle, NULL);
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

    /* Wake every session thread; each destroys its session on the way out. */
    pthread_mutex_lock(&cs.lock);
    for (int i = 0; i < cs.n; i++)
        shutdown(cs.fds[i], SHUT_RDWR);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    while (cs.n > 0 && pthread_cond_timedwait(&cs.idle, &cs.lock, &until) == 0)
        ;
    int left = cs.n;
    pthread_mutex_unlock(&cs.lock);
    if (left) {
        tdm_log("%d session(s) did not finish within 10 s of the stop", left);
        return -1;  /* their threads still use the backend: do not tear it down */
    }
    return 0;
}
