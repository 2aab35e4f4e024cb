#include "handoff.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int tdm_handoff_send(int sock, const tdm_handoff *h, int conn_fd, int region_fd)
{
    int fds[2] = { conn_fd, region_fd }, nfds = region_fd >= 0 ? 2 : 1;
    union {
        char buf[CMSG_SPACE(sizeof(fds))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = { (void *)(uintptr_t)h, sizeof(*h) };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds) };
    struct cmsghdr *cm;
    ssize_t n;

    memset(&ctl, 0, sizeof(ctl));
    cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
    do
        n = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    return n == (ssize_t)sizeof(*h) ? 0 : -EPROTO;
}

int tdm_handoff_recv(int sock, tdm_handoff *h, int *conn_fd, int *region_fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * 2)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = { h, sizeof(*h) };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof(ctl.buf) };
    int fds[2] = { -1, -1 }, got = 0;
    ssize_t n;

    *conn_fd = *region_fd = -1;
    do
        n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if (n == 0)
        return -ENOTCONN;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        got = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        if (got > 2)
            got = 2;
        memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)got);
    }
    h->peer[sizeof(h->peer) - 1] = '\0';
    if (n != (ssize_t)sizeof(*h) || (m.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || got < 1 ||
        (h->kind == TDM_HANDOFF_SHM) != (got == 2) || (h->kind != TDM_HANDOFF_TCP && h->kind != TDM_HANDOFF_SHM)) {
        for (int i = 0; i < got; i++)
            close(fds[i]);
        return -EPROTO;
    }
    *conn_fd = fds[0];
    *region_fd = fds[1];
    return 0;
}
