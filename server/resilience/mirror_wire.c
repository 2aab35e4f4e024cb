#include "mirror_wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* 0 or -errno. */
static int write_all(int sock, const void *p, size_t n)
{
    const char *c = p;

    while (n) {
        ssize_t w = send(sock, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        if (w == 0)
            return -EPIPE;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 0, 1 at end of stream before any byte, -EPROTO for a stream that ends
 * inside the message, -errno on an error. */
static int read_all(int sock, void *p, size_t n)
{
    char *c = p;
    size_t got = 0;

    while (got < n) {
        ssize_t r = recv(sock, c + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return got == 0 ? 1 : -EPROTO;
        if (r < 0)
            return -errno;
        got += (size_t)r;
    }
    return 0;
}

int tdm_mirror_send(int sock, const tdm_mirror_hdr *h, const void *payload, int fd)
{
    struct iovec iov = { (void *)h, sizeof(*h) };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr msg = { 0 };
    ssize_t w;

    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        memset(&ctl, 0, sizeof(ctl));
        msg.msg_control = ctl.buf;
        msg.msg_controllen = sizeof(ctl.buf);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    }
    do
        w = sendmsg(sock, &msg, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w < 0)
        return -errno;
    /* The descriptor went with the first byte; the rest of the header and
     * the payload follow as plain bytes. */
    int rc = (size_t)w < sizeof(*h) ? write_all(sock, (const char *)h + w, sizeof(*h) - (size_t)w) : 0;
    return rc == 0 && h->len ? write_all(sock, payload, h->len) : rc;
}

int tdm_mirror_recv(int sock, tdm_mirror_hdr *h, void **payload, int *fd)
{
    struct iovec iov = { h, sizeof(*h) };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr msg = { 0 };
    ssize_t r;
    int rc = 0;

    *payload = NULL;
    *fd = -1;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.buf;
    msg.msg_controllen = sizeof(ctl.buf);
    do
        r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        return 1;
    if (r < 0)
        return -errno;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(fd, CMSG_DATA(cm), sizeof(int));
    if ((size_t)r < sizeof(*h) && (rc = read_all(sock, (char *)h + r, sizeof(*h) - (size_t)r)) != 0)
        goto bad;
    if (h->len > TDM_MIRROR_MAX_PAYLOAD) {
        rc = -EPROTO;           /* refused before anything is allocated for it */
        goto bad;
    }
    if (h->len) {
        *payload = malloc(h->len);
        if (!*payload) {
            rc = -ENOMEM;
            goto bad;
        }
        if ((rc = read_all(sock, *payload, h->len)) != 0)
            goto bad;
    }
    return 0;
bad:
    free(*payload);
    *payload = NULL;
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
    return rc > 0 ? -EPROTO : rc;   /* the end inside a message is no clean end */
}

int tdm_mirror_exchange(const char *path, const tdm_mirror_hdr *h, const void *payload, tdm_mirror_hdr *reply,
                        void **reply_payload)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int sock, fd = -1, rc;

    *reply_payload = NULL;
    if (strlen(path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    strcpy(sa.sun_path, path);
    sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return -errno;
    rc = connect(sock, (struct sockaddr *)&sa, sizeof(sa)) != 0 ? -errno : tdm_mirror_send(sock, h, payload, -1);
    if (rc == 0)
        rc = tdm_mirror_recv(sock, reply, reply_payload, &fd);
    if (rc == 0 && reply->type != TDM_M_HELLO)
        rc = -EPROTO;
    if (rc != 0) {
        free(*reply_payload);
        *reply_payload = NULL;
        if (fd >= 0)
            close(fd);
        close(sock);
        return rc > 0 ? -ECONNRESET : rc;   /* it hung up without an answer */
    }
    if (fd >= 0)
        close(fd);   /* an answer carries no memory */
    return sock;
}
