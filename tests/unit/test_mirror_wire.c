/* The mirror feed's wire format (server/resilience/mirror_wire.c): what one
 * end sends the other reads back, with and without a descriptor; what is
 * malformed is refused, one case per row, and nothing it carried leaks. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mirror_wire.h"

static void pair(int sv[2])
{
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static tdm_mirror_hdr header(uint32_t type, uint32_t len)
{
    return (tdm_mirror_hdr){ .type = type, .len = len, .session = 42, .a = 1, .b = 2, .c = 3, .d = 4 };
}

/* ---- round trips ---- */

typedef struct trip_case {
    const char *what;
    uint32_t type;
    uint32_t len;       /* payload bytes */
    bool with_fd;
} trip_case;

static const trip_case trip_cases[] = {
    { "a header alone", TDM_M_UNMAP, 0, false },
    { "a header with a payload", TDM_M_MODULE_LOAD, 4096, false },
    { "a descriptor with the header", TDM_M_MAP, 0, true },
    { "a descriptor and a payload", TDM_M_SHADOW, 100, true },
    /* Larger than a socket buffer: the payload follows in pieces. */
    { "a payload longer than the socket buffer", TDM_M_MODULE_LOAD, 4u << 20, false },
};

ParameterizedTestParameters(mirror_wire, round_trip)
{
    return cr_make_param_array(trip_case, trip_cases, sizeof(trip_cases) / sizeof(trip_cases[0]));
}

typedef struct sender {
    int sock;
    const tdm_mirror_hdr *h;
    const void *payload;
    int fd;
} sender;

ParameterizedTest(const trip_case *c, mirror_wire, round_trip)
{
    int sv[2], pipefd[2] = { -1, -1 }, fd = -1;
    tdm_mirror_hdr h = header(c->type, c->len), got;
    char *payload = malloc(c->len + 1);
    void *back = NULL;

    cr_assert_not_null(payload);
    for (uint32_t i = 0; i < c->len; i++)
        payload[i] = (char)(i * 7 + 1);
    pair(sv);
    if (c->with_fd)
        cr_assert_eq(pipe(pipefd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* The writer blocks on a payload larger than the socket buffer. */
        close(sv[1]);
        _exit(tdm_mirror_send(sv[0], &h, payload, c->with_fd ? pipefd[1] : -1) == 0 ? 0 : 1);
    }
    close(sv[0]);
    cr_assert_eq(tdm_mirror_recv(sv[1], &got, &back, &fd), 0, "%s", c->what);
    cr_assert_eq(memcmp(&got, &h, sizeof(h)), 0, "%s: the header differs", c->what);
    if (c->len) {
        cr_assert_not_null(back, "%s", c->what);
        cr_assert_eq(memcmp(back, payload, c->len), 0, "%s: the payload differs", c->what);
    } else {
        cr_assert_null(back, "%s: no payload, no buffer", c->what);
    }
    if (c->with_fd) {
        cr_assert_geq(fd, 0, "%s: the descriptor did not arrive", c->what);
        cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC, "%s: a received descriptor is close-on-exec", c->what);
        /* It is the pipe's write end: what goes in comes out of ours. */
        cr_assert_eq(write(fd, "x", 1), 1);
        char ch = 0;
        cr_assert_eq(read(pipefd[0], &ch, 1), 1);
        cr_assert_eq(ch, 'x');
        close(fd);
        close(pipefd[0]);
        close(pipefd[1]);
    } else {
        cr_assert_eq(fd, -1, "%s: no descriptor was sent", c->what);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the send failed", c->what);
    free(back);
    free(payload);
    close(sv[1]);
}

/* ---- malformed input ---- */

typedef struct bad_case {
    const char *what;
    size_t header_bytes;   /* how much of a header is written before the writer closes */
    uint32_t len;          /* the header's payload length */
    size_t payload_bytes;  /* how much payload follows */
    bool with_fd;          /* a descriptor rides with the first byte */
    int rc;                /* what tdm_mirror_recv returns: 1 a clean end, -EPROTO malformed */
} bad_case;

static const bad_case bad_cases[] = {
    { "a clean end of the feed, before any byte", 0, 0, 0, false, 1 },
    { "a header cut short", sizeof(tdm_mirror_hdr) / 2, 0, 0, false, -EPROTO },
    { "a header cut short after its first byte", 1, 0, 0, false, -EPROTO },
    /* Regression: an oversize claim must be refused before anything is
     * allocated for it. */
    { "a payload claim over TDM_MIRROR_MAX_PAYLOAD", sizeof(tdm_mirror_hdr), TDM_MIRROR_MAX_PAYLOAD + 1, 0, false,
      -EPROTO },
    { "the largest length there is", sizeof(tdm_mirror_hdr), UINT32_MAX, 0, false, -EPROTO },
    { "a payload cut short", sizeof(tdm_mirror_hdr), 64, 10, false, -EPROTO },
    { "a payload cut short, with a descriptor (closed, not leaked)", sizeof(tdm_mirror_hdr), 64, 10, true, -EPROTO },
    { "an oversize claim with a descriptor (closed, not leaked)", sizeof(tdm_mirror_hdr),
      TDM_MIRROR_MAX_PAYLOAD + 1, 0, true, -EPROTO },
};

ParameterizedTestParameters(mirror_wire, malformed)
{
    return cr_make_param_array(bad_case, bad_cases, sizeof(bad_cases) / sizeof(bad_cases[0]));
}

/* Writes raw bytes, the first of them with a descriptor when fd >= 0. */
static void raw_send(int sock, const void *p, size_t n, int fd)
{
    struct iovec iov = { (void *)p, n };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

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
    cr_assert_eq(sendmsg(sock, &msg, MSG_NOSIGNAL), (ssize_t)n);
}

ParameterizedTest(const bad_case *c, mirror_wire, malformed)
{
    int sv[2], pipefd[2] = { -1, -1 }, fd = 12345;
    tdm_mirror_hdr h = header(TDM_M_MAP, c->len), got;
    char junk[64] = { 0 };
    void *payload = (void *)1;

    pair(sv);
    if (c->with_fd)
        cr_assert_eq(pipe(pipefd), 0);
    if (c->header_bytes)
        raw_send(sv[0], &h, c->header_bytes, c->with_fd ? pipefd[1] : -1);
    if (c->payload_bytes)
        raw_send(sv[0], junk, c->payload_bytes, -1);
    close(sv[0]);
    if (c->with_fd)
        close(pipefd[1]);
    cr_assert_eq(tdm_mirror_recv(sv[1], &got, &payload, &fd), c->rc, "%s", c->what);
    cr_assert_null(payload, "%s: no payload is handed out", c->what);
    cr_assert_eq(fd, -1, "%s: no descriptor is handed out", c->what);
    if (c->with_fd) {
        /* The descriptor that came along was closed: the pipe's only write
         * end is gone, so its read end sees the end. */
        char ch;
        cr_assert_eq(read(pipefd[0], &ch, 1), 0, "%s: the descriptor leaked", c->what);
        close(pipefd[0]);
    }
    close(sv[1]);
}
