/* See node_servers.h. */
#include "node_servers.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Formats into a local first: out lies in the server table, which the compiler cannot tell
 * apart from the configuration the arguments come from. */
static int fits(char *out, size_t len, const char *fmt, const char *a, const char *b)
{
    char tmp[512];
    int n = snprintf(tmp, sizeof(tmp), fmt, a, b);

    if (n < 0 || (size_t)n >= len)
        return -ENAMETOOLONG;
    memcpy(out, tmp, (size_t)n + 1);
    return 0;
}

int tdm_node_servers_plan(const tdm_node_conf *c, tdm_node_servers *s)
{
    memset(s, 0, sizeof(*s));
    for (int g = 0; g < c->ngpus; g++) {
        const tdm_node_gpu *gpu = &c->gpus[g];
        for (int j = 0; j < gpu->servers; j++) {
            tdm_node_server *a = &s->list[s->n++], *sb = NULL;
            a->gpu = g;
            a->port = gpu->base_port + 2 * j;
            char gpu_slot[32];
            snprintf(gpu_slot, sizeof(gpu_slot), "gpu%d-s%d", gpu->index, j);
            if (fits(a->id, sizeof(a->id), "%s-%s", c->node, gpu_slot))
                return -ENAMETOOLONG;
            memcpy(a->shm, a->id, sizeof(a->shm));
            if (fits(a->control, sizeof(a->control), "%s/%s.ctl", c->state_dir, a->id))
                return -ENAMETOOLONG;
            if (!gpu->standby)
                continue;
            sb = &s->list[s->n++];
            *sb = *a;
            sb->is_standby = true;
            sb->port = a->port + 1;
            if (fits(sb->id, sizeof(sb->id), "%s%s", a->id, "-sb"))
                return -ENAMETOOLONG;
            memcpy(sb->shm, sb->id, sizeof(sb->shm));
            memcpy(a->standby_id, sb->id, sizeof(a->standby_id));
            /* The standby's mirror socket: the active mirrors there, and a restarted active
             * finds the same standby there. */
            if (fits(sb->control, sizeof(sb->control), "%s/%s.ctl", c->state_dir, sb->id) ||
                fits(a->mirror, sizeof(a->mirror), "%s/%s.mirror", c->state_dir, sb->id))
                return -ENAMETOOLONG;
            memcpy(sb->mirror, a->mirror, sizeof(sb->mirror));
        }
    }
    return 0;
}

void tdm_node_server_argv(const tdm_node_conf *c, const tdm_node_server *s, const char *mps_pipe, char *buf,
                          size_t buflen, const char **argv)
{
    const tdm_node_gpu *gpu = &c->gpus[s->gpu];
    size_t used = 0;
    int n = 0;

/* Each argument is copied into buf so that argv outlives the call's locals. */
#define ARG(...)                                                                   \
    do {                                                                           \
        int w_ = snprintf(buf + used, buflen - used, __VA_ARGS__);                 \
        if (w_ < 0 || (size_t)w_ >= buflen - used)                                 \
            break;                                                                 \
        argv[n++] = buf + used;                                                    \
        used += (size_t)w_ + 1;                                                    \
    } while (0)
    ARG("%s", c->server_bin);
    ARG("--backend"); ARG("%s", c->backend);
    /* An MPS daemon sees its GPU only (CUDA_VISIBLE_DEVICES): to its clients it is device 0. */
    ARG("--device"); ARG("%d", c->mps && !s->is_standby && strcmp(c->backend, "cuda") == 0 ? 0 : gpu->index);
    ARG("--listen"); ARG("%s", c->server_host);
    ARG("--port"); ARG("%d", s->port);
    ARG("--shm"); ARG("%s", s->shm);
    ARG("--control"); ARG("%s", s->control);
    if (c->tenants[0]) {
        ARG("--tenants"); ARG("%s", c->tenants);
    }
    for (int i = 0; i < c->nserver_options; i++)
        ARG("%s", c->server_options[i]);
    if (s->mirror[0]) {
        ARG(s->is_standby ? "--standby-listen" : "--standby");
        ARG("%s", s->mirror);
    }
    /* Actives are clients of the GPU's MPS domain; a standby stays outside it, so that an MPS
     * fault that ends the actives does not reach it (docs/takeover.md). */
    if (c->mps && !s->is_standby) {
        if (strcmp(c->backend, "sim") == 0) {
            ARG("--sim-mps-domain"); ARG("%s-gpu%d", c->node, gpu->index);
        } else {
            ARG("--mps"); ARG("attach"); ARG("%s", mps_pipe);
        }
    }
#undef ARG
    argv[n] = NULL;
}

int tdm_node_server_spawn(const tdm_node_conf *c, tdm_node_server *s, const char *mps_pipe, const char *log_path)
{
    char buf[32768];   /* every option at its longest fits: none is dropped */
    const char *argv[48];
    pid_t pid;

    tdm_node_server_argv(c, s, mps_pipe, buf, sizeof(buf), argv);
    pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        /* Its own process group: a ^C to the agent's terminal is the agent's to handle, and the
         * servers outlive an agent that is killed (they are re-adopted). */
        setpgid(0, 0);
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "tandem-node: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    s->pid = pid;
    s->child = true;
    return 0;
}

static long ms_left(const struct timespec *until)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (until->tv_sec - now.tv_sec) * 1000 + (until->tv_nsec - now.tv_nsec) / 1000000;
}

json_object *tdm_node_control_ask(const char *sock, const char *line, int timeout_ms)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct timespec until;
    const size_t cap = 1 << 20;   /* a stats answer of many sessions */
    char *answer = malloc(cap);
    size_t got = 0, n = strlen(line);
    json_object *o = NULL;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    if (fd < 0 || !answer) {
        free(answer);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    /* A unix socket connects at once or not at all; its one line fits the socket's buffer. */
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || send(fd, line, n, MSG_NOSIGNAL) != (ssize_t)n ||
        send(fd, "\n", 1, MSG_NOSIGNAL) != 1)
        goto out;
    while (got + 1 < cap) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        long left = ms_left(&until);
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            goto out;
        ssize_t r = recv(fd, answer + got, cap - 1 - got, 0);
        if (r <= 0)
            goto out;
        got += (size_t)r;
        if (memchr(answer, '\n', got))
            break;
    }
    answer[got] = '\0';
    o = json_tokener_parse(answer);
out:
    close(fd);
    free(answer);
    return o;
}

bool tdm_node_server_answers(pid_t pid, const char *sock)
{
    if (pid <= 0 || kill(pid, 0) != 0)
        return false;
    json_object *o = tdm_node_control_ask(sock, "{\"op\":\"stats\"}", 2000), *ok;
    bool yes = o && json_object_object_get_ex(o, "ok", &ok) && json_object_get_boolean(ok);
    json_object_put(o);
    return yes;
}
