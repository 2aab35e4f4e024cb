/* ONC RPC over TCP with libtirpc's client (clnt_vc).
 *
 * One-way calls use ONC RPC's message-passing form: a call whose result
 * decoder is xdr_void and whose timeout is zero is written to the socket at
 * once and clnt_call returns RPC_TIMEDOUT without waiting; the server never
 * replies to those procedures. */
#include "transport.h"
#include "xdr_extra.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tandem_rpc.h"

#define TCP_BUF_SIZE (1u << 20)

typedef struct tcp_transport {
    tdm_transport base;
    CLIENT *clnt;
} tcp_transport;

/* Long enough for any synchronize; a dead server shows as a closed socket,
 * not as a time-out. */
static const struct timeval call_timeout = { 7 * 24 * 3600, 0 };
static const struct timeval post_timeout = { 0, 0 };

static int tcp_call(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args,
                    xdrproc_t xres, void *res)
{
    tcp_transport *tt = (tcp_transport *)t;
    enum clnt_stat st = clnt_call(tt->clnt, proc, xargs, args, xres, res, call_timeout);

    if (st == RPC_SUCCESS)
        return TDM_T_OK;
    if (st == RPC_CANTDECODEARGS || st == RPC_PROCUNAVAIL || st == RPC_PROGVERSMISMATCH ||
        st == RPC_PROGUNAVAIL || st == RPC_CANTDECODERES)
        return TDM_T_REJECTED;
    return TDM_T_BROKEN;
}

static int tcp_post(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args)
{
    tcp_transport *tt = (tcp_transport *)t;
    enum clnt_stat st = clnt_call(tt->clnt, proc, xargs, args, (xdrproc_t)tdm_xdr_void, NULL, post_timeout);

    return (st == RPC_TIMEDOUT || st == RPC_SUCCESS) ? TDM_T_OK : TDM_T_BROKEN;
}

static void tcp_close(tdm_transport *t)
{
    tcp_transport *tt = (tcp_transport *)t;

    if (tt->clnt)
        clnt_destroy(tt->clnt);
    free(tt);
}

static const tdm_transport_ops tcp_ops = { tcp_call, tcp_post, tcp_close };

static int connect_tcp(const char *host, int port, char *err, size_t errlen)
{
    struct addrinfo hints = { 0 }, *res = NULL, *ai;
    char portstr[16];
    int fd = -1, rc;

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(portstr, sizeof(portstr), "%d", port);
    rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        rc = errno;
        close(fd);
        fd = -1;
        errno = rc;
    }
    if (fd < 0)
        snprintf(err, errlen, "cannot connect to %s:%d: %s", host, port, strerror(errno));
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    }
    return fd;
}

int tdm_transport_tcp_open(const char *host, int port, tdm_transport **out, char *err, size_t errlen)
{
    tcp_transport *tt = calloc(1, sizeof(*tt));
    struct netbuf addr = { 0 };
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof(ss);
    int fd = -1;

    if (!tt) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    fd = connect_tcp(host, port, err, errlen);
    if (fd < 0)
        goto fail;
    if (getpeername(fd, (struct sockaddr *)&ss, &sslen) == 0) {
        addr.buf = &ss;
        addr.len = addr.maxlen = sslen;
    }
    tt->clnt = clnt_vc_create(fd, &addr, TANDEM_PROG, TANDEM_V1, TCP_BUF_SIZE, TCP_BUF_SIZE);
    if (!tt->clnt) {
        snprintf(err, errlen, "cannot create RPC client for %s:%d: %s", host, port,
                 clnt_spcreateerror("clnt_vc_create"));
        goto fail;
    }
    clnt_control(tt->clnt, CLSET_FD_CLOSE, NULL);
    fd = -1;
    tt->base.ops = &tcp_ops;
    snprintf(tt->base.desc, sizeof(tt->base.desc), "tcp://%s:%d", host, port);
    *out = &tt->base;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    free(tt);
    return -1;
}
