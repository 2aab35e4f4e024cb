/* See control.h.  One thread polls the listening socket and every connection; the number of
 * connections and the length of a line are bounded, so a client that floods or stalls costs
 * the server a buffer, never a session. */
#include "control.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control_ops.h"
#include "control_server.h"
#include "log.h"
#include "reservations.h"

#define CONTROL_MAX_CONNS 8      /* the node agent needs one; a few for an operator's tools */
#define CONTROL_LINE_MAX 4096    /* a request line, its newline included */
#define CONTROL_SEND_TIMEOUT_S 2 /* a client that reads no answer is dropped after this */

typedef struct control_conn {
    int fd;
    size_t len;
    char buf[CONTROL_LINE_MAX];
} control_conn;

struct tdm_control {
    tdm_server *srv;
    tdm_reservations reservations;
    tdm_control_target target;
    int lfd;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    pthread_t thread;
    atomic_bool stop;
    control_conn conns[CONTROL_MAX_CONNS];
    int nconns;
};

/* Sends all of text and a newline; false when the client is gone or does not read. */
static bool send_line(int fd, const char *text)
{
    size_t n = strlen(text);
    char *line = malloc(n + 1);
    bool ok = line != NULL;

    if (ok) {
        memcpy(line, text, n);
        line[n] = '\n';
        for (size_t at = 0; ok && at <= n;) {
            ssize_t w = send(fd, line + at, n + 1 - at, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
            ok = w > 0;
            at += ok ? (size_t)w : 0;
        }
    }
    free(line);
    return ok;
}

static void drop(tdm_control *c, int i)
{
    close(c->conns[i].fd);
    c->conns[i] = c->conns[--c->nconns];
}

/* The answer to one line, logged when it changes something or fails (stats lines are the
 * telemetry's, every interval: not logged). */
static bool answer(tdm_control *c, int fd, const char *line, size_t len)
{
    char *text = tdm_control_answer(&c->target, line, len);

    if (!text)
        return send_line(fd, "{\"ok\":false,\"error\":\"out of memory\"}");
    if (strstr(text, "\"ok\":false"))
        tdm_log("control: refused a request: %s", text);
    else if (!memmem(line, len, "\"stats\"", 7))
        tdm_log("control: %.*s -> %s", (int)(len > 300 ? 300 : len), line, text);
    bool ok = send_line(fd, text);
    free(text);
    return ok;
}

/* Answers every complete line of connection i; false when it must be closed. */
static bool serve_lines(tdm_control *c, control_conn *cc)
{
    char *nl;

    while ((nl = memchr(cc->buf, '\n', cc->len)) != NULL) {
        size_t len = (size_t)(nl - cc->buf);
        if (len > 0 && !answer(c, cc->fd, cc->buf, len))
            return false;
        cc->len -= len + 1;
        memmove(cc->buf, nl + 1, cc->len);
    }
    if (cc->len == sizeof(cc->buf)) {
        /* No end in sight: the rest of the line cannot be told from the next one. */
        send_line(cc->fd, "{\"ok\":false,\"error\":\"line longer than 4096 bytes: connection closed\"}");
        return false;
    }
    return true;
}

static void accept_one(tdm_control *c)
{
    const struct timeval patience = { CONTROL_SEND_TIMEOUT_S, 0 };
    int fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);

    if (fd < 0)
        return;
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &patience, sizeof(patience));
    if (c->nconns == CONTROL_MAX_CONNS) {
        send_line(fd, "{\"ok\":false,\"error\":\"too many control connections (at most 8)\"}");
        close(fd);
        return;
    }
    c->conns[c->nconns++] = (control_conn){ .fd = fd, .len = 0 };
}

static void *control_thread(void *arg)
{
    tdm_control *c = arg;
    struct pollfd p[CONTROL_MAX_CONNS + 1];

    while (!atomic_load(&c->stop)) {
        int n = c->nconns;
        p[0] = (struct pollfd){ .fd = c->lfd, .events = POLLIN };
        for (int i = 0; i < n; i++)
            p[i + 1] = (struct pollfd){ .fd = c->conns[i].fd, .events = POLLIN };
        if (poll(p, (nfds_t)n + 1, 200) <= 0)
            continue;
        /* Backwards: drop() moves the last connection into the dropped one's place. */
        for (int i = n - 1; i >= 0; i--) {
            if (!(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            control_conn *cc = &c->conns[i];
            ssize_t got = recv(cc->fd, cc->buf + cc->len, sizeof(cc->buf) - cc->len, 0);
            if (got <= 0 && !(got < 0 && errno == EINTR)) {
                drop(c, i);
                continue;
            }
            cc->len += got > 0 ? (size_t)got : 0;
            if (!serve_lines(c, cc))
                drop(c, i);
        }
        if (p[0].revents & POLLIN)
            accept_one(c);
    }
    return NULL;
}

/* A socket file at path that no process answers on is a leftover of a server that died. */
static int claim_path(const struct sockaddr_un *sa)
{
    struct stat st;
    int fd;

    if (lstat(sa->sun_path, &st) != 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISSOCK(st.st_mode))
        return -EEXIST;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
    close(fd);
    if (live)
        return -EADDRINUSE;
    return unlink(sa->sun_path) == 0 ? 0 : -errno;
}

static int listen_at(tdm_control *c, const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int rc;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        tdm_log("--control %s: the path is longer than a unix socket's (%zu bytes)", path, sizeof(sa.sun_path) - 1);
        return -ENAMETOOLONG;
    }
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    snprintf(c->path, sizeof(c->path), "%s", path);
    rc = claim_path(&sa);
    if (rc) {
        tdm_log("--control %s: %s", path, rc == -EADDRINUSE ? "another process answers on that socket"
                                          : rc == -EEXIST     ? "a file that is not a socket is there"
                                                              : strerror(-rc));
        return rc;
    }
    c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->lfd < 0)
        return -errno;
    /* Mode 0600 before listen(): nobody can connect before the mode is the agent's alone. */
    if (bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(path, 0600) != 0 ||
        listen(c->lfd, CONTROL_MAX_CONNS) != 0) {
        rc = -errno;
        tdm_log("--control %s: %s", path, strerror(-rc));
        close(c->lfd);
        c->lfd = -1;
        unlink(path);
        return rc;
    }
    return 0;
}

int tdm_control_start(tdm_control **out, tdm_server *srv, const char *path)
{
    tdm_control *c = calloc(1, sizeof(*c));
    int rc;

    if (!c)
        return -ENOMEM;
    c->srv = srv;
    c->lfd = -1;
    rc = tdm_reservations_init(&c->reservations, 0, 0);
    if (rc)
        goto fail;
    rc = listen_at(c, path);
    if (rc)
        goto fail;
    tdm_control_server_target(srv, &c->reservations, &c->target);
    srv->reservations = &c->reservations;
    rc = -pthread_create(&c->thread, NULL, control_thread, c);
    if (rc) {
        srv->reservations = NULL;
        close(c->lfd);
        unlink(path);
        goto fail;
    }
    tdm_log("control socket %s (mode 0600): reserve, set_share, stats", path);
    *out = c;
    return 0;
fail:
    tdm_reservations_destroy(&c->reservations);
    free(c);
    return rc;
}

void tdm_control_stop(tdm_control *c)
{
    if (!c)
        return;
    atomic_store(&c->stop, true);
    pthread_join(c->thread, NULL);
    while (c->nconns > 0)
        drop(c, c->nconns - 1);
    close(c->lfd);
    unlink(c->path);
    c->srv->reservations = NULL;
    tdm_reservations_destroy(&c->reservations);
    free(c);
}
