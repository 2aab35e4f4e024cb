#include "mirror.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct tdm_mirror {
    pthread_mutex_t lock;
    int sock;
    bool dead;
    char endpoint[256];
};

int tdm_mirror_connect(tdm_mirror **out, const char *path, uint64_t arena_base, uint64_t arena_size)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    tdm_mirror_hdr h = { .type = TDM_M_HELLO, .a = arena_base, .b = arena_size, .c = TDM_MIRROR_MAGIC };
    tdm_mirror *m = NULL;
    void *payload = NULL;
    int fd = -1, sock;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "tandem-server: standby socket path too long: %s\n", path);
        return -1;
    }
    strcpy(sa.sun_path, path);
    sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        fprintf(stderr, "tandem-server: cannot reach the standby at %s: %s\n", path, strerror(errno));
        goto fail;
    }
    if (tdm_mirror_send(sock, &h, NULL, -1) != 0 || tdm_mirror_recv(sock, &h, &payload, &fd) != 0 ||
        h.type != TDM_M_HELLO) {
        fprintf(stderr, "tandem-server: the standby at %s did not answer the mirror handshake\n", path);
        goto fail;
    }
    if (h.a == 0 || !payload) {
        fprintf(stderr, "tandem-server: the standby at %s refused this server: %.*s\n", path, (int)h.len,
                payload ? (char *)payload : "");
        goto fail;
    }
    m = calloc(1, sizeof(*m));
    if (!m)
        goto fail;
    pthread_mutex_init(&m->lock, NULL);
    m->sock = sock;
    snprintf(m->endpoint, sizeof(m->endpoint), "%.*s", (int)h.len, (char *)payload);
    free(payload);
    fprintf(stderr, "tandem-server: standby at %s (guests resume at %s)\n", path, m->endpoint);
    *out = m;
    return 0;
fail:
    free(payload);
    if (fd >= 0)
        close(fd);
    if (sock >= 0)
        close(sock);
    return -1;
}

void tdm_mirror_close(tdm_mirror *m)
{
    if (!m)
        return;
    close(m->sock);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

const char *tdm_mirror_endpoint(tdm_mirror *m)
{
    const char *ep;

    pthread_mutex_lock(&m->lock);
    ep = m->dead ? "" : m->endpoint;
    pthread_mutex_unlock(&m->lock);
    return ep;
}

int tdm_mirror_post(tdm_mirror *m, const tdm_mirror_hdr *h, const void *payload, int fd)
{
    int rc = -1;

    pthread_mutex_lock(&m->lock);
    if (!m->dead) {
        rc = tdm_mirror_send(m->sock, h, payload, fd);
        if (rc != 0) {
            m->dead = true;
            fprintf(stderr, "tandem-server: lost the standby (%s): sessions are no longer protected\n",
                    strerror(errno));
        }
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}
