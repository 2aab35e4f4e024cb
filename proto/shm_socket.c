#include "shm_socket.h"
#include "shm_layout.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static socklen_t make_addr(const char *name, struct sockaddr_un *sa)
{
    int n;

    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    /* sun_path[0] = 0: the abstract namespace. */
    n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "tandem-shm-%s", name);
    if (n < 0 || (size_t)n >= sizeof(sa->sun_path) - 1)
        return 0;
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int open_socket(const char *name, bool server, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    socklen_t len = make_addr(name, &sa);
    int fd, ok;

    if (!len) {
        snprintf(err, errlen, "shm name '%s' is too long", name);
        return -1;
    }
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    ok = fd >= 0 && (server ? bind(fd, (struct sockaddr *)&sa, len) == 0 && listen(fd, 64) == 0
                            : connect(fd, (struct sockaddr *)&sa, len) == 0);
    if (!ok) {
        snprintf(err, errlen, "cannot %s @tandem-shm-%s: %s", server ? "listen on" : "connect to", name,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int tdm_shm_listen(const char *name, char *err, size_t errlen)
{
    return open_socket(name, true, err, errlen);
}

int tdm_shm_connect(const char *name, char *err, size_t errlen)
{
    return open_socket(name, false, err, errlen);
}

int tdm_shm_offer_region(int sock, int region_fd, uint64_t region_size, char *err, size_t errlen)
{
    tdm_shm_hello h = { .magic = TDM_SHM_MAGIC, .version = TDM_SHM_VERSION, .region_size = region_size };
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct iovec iov = { &h, sizeof(h) };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof(ctl.buf) };
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    tdm_shm_verdict v;
    ssize_t n;

    memset(ctl.buf, 0, sizeof(ctl.buf));
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &region_fd, sizeof(int));
    if (sendmsg(sock, &m, MSG_NOSIGNAL) != (ssize_t)sizeof(h)) {
        snprintf(err, errlen, "cannot hand the region to the server: %s", strerror(errno));
        return -1;
    }
    memset(&v, 0, sizeof(v));
    do
        n = recv(sock, &v, sizeof(v), 0);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(v)) {
        snprintf(err, errlen, "the server closed the connection during the handshake");
        return -1;
    }
    if (v.status != 0) {
        v.msg[sizeof(v.msg) - 1] = 0;
        snprintf(err, errlen, "the server refused the region: %s", v.msg);
        return -1;
    }
    return 0;
}

int tdm_shm_take_region(int sock, tdm_shm_hello *hello, int *fd, char *err, size_t errlen)
{
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(4 * sizeof(int))];
    } ctl;
    struct iovec iov = { hello, sizeof(*hello) };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof(ctl.buf) };
    struct timeval tv = { 10, 0 };
    ssize_t n;
    int got = -1;

    *fd = -1;
    /* A guest that connects and says nothing must not hold a thread forever. */
    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    do
        n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfd; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (got < 0)
                got = f;
            else
                close(f);       /* only one region per session */
        }
    }
    tv.tv_sec = 0;
    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (n != (ssize_t)sizeof(*hello) || (m.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || got < 0) {
        snprintf(err, errlen, "bad shm handshake (%zd bytes%s)", n, got < 0 ? ", no region fd" : "");
        if (got >= 0)
            close(got);
        return -1;
    }
    *fd = got;
    return 0;
}

int tdm_shm_send_verdict(int sock, int status, const char *msg)
{
    tdm_shm_verdict v;

    memset(&v, 0, sizeof(v));
    v.status = status;
    snprintf(v.msg, sizeof(v.msg), "%s", msg ? msg : "");
    return send(sock, &v, sizeof(v), MSG_NOSIGNAL) == (ssize_t)sizeof(v) ? 0 : -1;
}

bool tdm_shm_peer_alive(int sock)
{
    struct pollfd p = { .fd = sock, .events = POLLIN };
    char c;

    if (poll(&p, 1, 0) <= 0)
        return true;
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
        return false;
    /* Nothing is sent after the handshake: readable means closed. */
    return recv(sock, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}
