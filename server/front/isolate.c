#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <driver_types.h>

#include "first_call.h"
#include "handoff.h"
#include "lanes_wire.h"
#include "log.h"
#include "shm_server.h"
#include "shm_socket.h"
#include "supervise.h"

int tdm_isolate_init(tdm_isolate *iso, tdm_server *front, char **fwd, int nfwd, int device, const char *standby)
{
    tdm_tenants *ts = front->cfg.tenants;
    ssize_t n;

    memset(iso, 0, sizeof(*iso));
    iso->w = calloc(ts->n ? ts->n : 1, sizeof(*iso->w));
    if (!iso->w)
        return -ENOMEM;
    n = readlink("/proc/self/exe", iso->exe, sizeof(iso->exe) - 1);
    if (n <= 0) {
        free(iso->w);
        return -errno;
    }
    iso->exe[n] = '\0';
    for (size_t i = 0; i < ts->n; i++) {
        iso->w[i].tenant = &ts->v[i];
        iso->w[i].index = (int)i;
        iso->w[i].sock = -1;
    }
    iso->tenants = ts;
    iso->fwd = fwd;
    iso->nfwd = nfwd;
    iso->device = device;
    iso->standby = standby;
    iso->handshake_timeout_s = front->cfg.handshake_timeout_s;
    iso->front = front;
    pthread_mutex_init(&iso->lock, NULL);
    pthread_cond_init(&iso->reaped, NULL);
    return 0;
}

bool tdm_isolate_count_start(time_t now, time_t *window_start, int *starts)
{
    if (now - *window_start >= TDM_SUPERVISE_WINDOW_S) {
        *window_start = now;
        *starts = 0;
    }
    if (*starts > TDM_SUPERVISE_MAX_RESTARTS)
        return false;
    ++*starts;
    return true;
}

/* ---- the tenants' processes ---- */

typedef struct reaper_arg {
    tdm_isolate *iso;
    tdm_isolate_worker *w;
    pid_t pid;
} reaper_arg;

/* Waits for a tenant's process to end, says how, and marks it gone: its tenant's next
 * connection starts another. */
static void *reap(void *arg)
{
    reaper_arg a = *(reaper_arg *)arg;
    int status = 0;

    free(arg);
    while (waitpid(a.pid, &status, 0) < 0 && errno == EINTR)
        ;
    pthread_mutex_lock(&a.iso->lock);
    if (a.w->pid == a.pid) {
        close(a.w->sock);
        a.w->sock = -1;
        a.w->pid = 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && a.iso->stopping)
        tdm_log("tenant %s: process %d stopped", a.w->tenant->name, (int)a.pid);
    else if (WIFEXITED(status))
        tdm_log("tenant %s: process %d exited with status %d; its sessions ended (the other tenants' go on); "
                "its next connection starts a new one", a.w->tenant->name, (int)a.pid, WEXITSTATUS(status));
    else
        tdm_log("tenant %s: process %d was killed by signal %d; its sessions ended (the other tenants' go on); "
                "its next connection starts a new one", a.w->tenant->name, (int)a.pid, WTERMSIG(status));
    a.iso->reapers--;
    pthread_cond_broadcast(&a.iso->reaped);
    pthread_mutex_unlock(&a.iso->lock);
    return NULL;
}

/* Starts w's process: this program again, with the front's options and the tenant's name,
 * its end of a handoff pair and its index.  Called with iso->lock held.  0 or -errno. */
static int spawn(tdm_isolate *iso, tdm_isolate_worker *w)
{
    char fd_arg[16], index_arg[16], device_arg[16], tcp[160] = "", shm[160] = "", standby[4096 + 80];
    const char *fixed[] = { "--device", device_arg, "--worker-of", w->tenant->name, "--worker-fd", fd_arg,
                            "--worker-index", index_arg, "--worker-endpoint", tcp, "--worker-shm-endpoint", shm,
                            "--standby", standby };
    /* Without a standby the last two words are left out. */
    const int nfixed = (int)(sizeof(fixed) / sizeof(fixed[0])) - (iso->standby ? 0 : 2);
    char **argv = calloc((size_t)(1 + iso->nfwd + nfixed + 1), sizeof(char *));
    int sv[2] = { -1, -1 }, rc = 0, k = 0;
    reaper_arg *ra = malloc(sizeof(*ra));
    pid_t parent = getpid(), pid;

    if (!argv || !ra) {
        rc = -ENOMEM;
        goto out;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        rc = -errno;
        goto out;
    }
    snprintf(fd_arg, sizeof(fd_arg), "%d", sv[1]);
    snprintf(index_arg, sizeof(index_arg), "%d", w->index);
    snprintf(device_arg, sizeof(device_arg), "%d", iso->device);
    tdm_server_endpoint(iso->front, tcp, shm, sizeof(tcp));
    snprintf(standby, sizeof(standby), "%s.%s", iso->standby ? iso->standby : "", w->tenant->name);
    argv[k++] = iso->exe;
    for (int i = 0; i < iso->nfwd; i++)
        argv[k++] = iso->fwd[i];
    for (int i = 0; i < nfixed; i++)
        argv[k++] = (char *)fixed[i];
    argv[k] = NULL;
    pid = fork();
    if (pid < 0) {
        rc = -errno;
        goto out;
    }
    if (pid == 0) {
        /* Only async-signal-safe calls from here: the front has threads.  The tenant's process
         * stops when its end of the pair reads closed, which the front's exit does however it
         * ends (PR_SET_PDEATHSIG would not do: it fires when the thread that forked ends, and
         * that is a connection's). */
        if (fcntl(sv[1], F_SETFD, 0) != 0 || getppid() != parent)
            _exit(127);
        execv(iso->exe, argv);
        _exit(127);
    }
    close(sv[1]);
    sv[1] = -1;
    w->pid = pid;
    w->sock = sv[0];
    sv[0] = -1;
    *ra = (reaper_arg){ iso, w, pid };
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &attr, reap, ra) == 0) {
        ra = NULL;
        iso->reapers++;
    } else {
        /* Without a reaper nobody would notice it end: no process rather than a stale one. */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        w->pid = 0;
        close(w->sock);
        w->sock = -1;
        rc = -EAGAIN;
    }
    pthread_attr_destroy(&attr);
    if (rc)
        goto out;
    tdm_log("tenant %s: process %d started for its sessions (a CUDA context of its own)", w->tenant->name,
            (int)pid);
out:
    free(ra);
    free(argv);
    if (sv[0] >= 0)
        close(sv[0]);
    if (sv[1] >= 0)
        close(sv[1]);
    return rc;
}

/* Hands conn (and region) to w's process, starting it when it runs not, and once more when
 * the one there died since.  0, or why not in why. */
static int hand_to(tdm_isolate *iso, tdm_isolate_worker *w, const tdm_handoff *h, int conn, int region,
                   char *why, size_t whylen)
{
    time_t now = time(NULL);
    int rc = -ENOENT;

    pthread_mutex_lock(&iso->lock);
    for (int attempt = 0; attempt < 2 && !iso->stopping; attempt++) {
        if (w->pid == 0) {
            if (!tdm_isolate_count_start(now, &w->window_start, &w->starts)) {
                snprintf(why, whylen, "tenant %s's process was started %d times in %d s and died each time",
                         w->tenant->name, w->starts, TDM_SUPERVISE_WINDOW_S);
                rc = -EAGAIN;
                break;
            }
            rc = spawn(iso, w);
            if (rc) {
                snprintf(why, whylen, "cannot start tenant %s's process: %s", w->tenant->name, strerror(-rc));
                break;
            }
        }
        rc = tdm_handoff_send(w->sock, h, conn, region);
        if (rc == 0)
            break;
        snprintf(why, whylen, "tenant %s's process %d did not take it: %s", w->tenant->name, (int)w->pid,
                 strerror(-rc));
        /* Gone since (its reaper will say how): start another. */
        if (attempt == 0) {
            kill(w->pid, SIGKILL);
            close(w->sock);
            w->sock = -1;
            w->pid = 0;
        }
    }
    if (iso->stopping && rc)
        snprintf(why, whylen, "the server is stopping");
    pthread_mutex_unlock(&iso->lock);
    return rc;
}

/* ---- refusing a connection that is no tenant's ---- */

/* ctx points at the error the first call gets: cudaErrorNoDevice for a token that is no tenant's
 * (as natively for a user the device nodes do not let in), cudaErrorSystemNotReady when the
 * tenant's process cannot be started or reached (the guest then says so, not that the server
 * "did not answer"). */
static bool refuse(void *ctx, void *args, void *res)
{
    tdm_hello_res *r = res;

    r->err = *(const int *)ctx;
    r->backend = strdup("");
    r->standby = strdup("");
    r->moved_to = strdup("");
    return false;
}

static const tdm_rpc_proc refusal_procs[TDM_RESUME + 1] = {
    [TDM_HELLO] = { (xdrproc_t)xdr_tdm_hello_args, sizeof(tdm_hello_args), (xdrproc_t)xdr_tdm_hello_res,
                    sizeof(tdm_hello_res), refuse },
    [TDM_RESUME] = { (xdrproc_t)xdr_tdm_resume_args, sizeof(tdm_resume_args), (xdrproc_t)xdr_tdm_hello_res,
                     sizeof(tdm_hello_res), refuse },
};

/* Answers the first call of a guest that no tenant's process will serve, as a tenant's process
 * would, so that the guest is told why: the front serves it with this program. */
static const tdm_rpc_program refusal_program = {
    .prog = TANDEM_PROG, .vers = TANDEM_V1, .procs = refusal_procs, .nprocs = TDM_RESUME + 1,
};

static const int no_tenant = cudaErrorNoDevice, no_process = cudaErrorSystemNotReady;

/* The tenant a first call names, or NULL after logging the refusal. */
static tdm_isolate_worker *tenant_of(tdm_isolate *iso, const tdm_first_call *fc, const char *peer)
{
    tdm_tenant *t = tdm_tenants_find(iso->tenants, fc->token, fc->token_len);

    if (!t) {
        tdm_log("%s refused: %s (--tenants)", peer, fc->token_len ? "its token is no tenant's" : "it presented no token");
        return NULL;
    }
    return &iso->w[t - iso->tenants->v];
}

/* ---- TCP ---- */

/* Milliseconds left until deadline (CLOCK_MONOTONIC seconds; 0: none): -1 for none, 0 when past. */
static int ms_left(const struct timespec *deadline)
{
    struct timespec now;
    long long ms;

    if (deadline->tv_sec == 0)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &now);
    ms = (deadline->tv_sec - now.tv_sec) * 1000LL + (deadline->tv_nsec - now.tv_nsec) / 1000000;
    return ms > 0 ? (int)ms : 0;
}

/* Peeks at fd until its first n bytes are there (want(buf, have) > 0 says how many it needs; 0:
 * more; < 0: never), leaving them unread for the tenant's process.  The bytes read so far, or
 * -1 with why. */
static long peek_until(int fd, unsigned char *buf, size_t cap, const struct timespec *deadline,
                       long (*want)(const void *, size_t, char *, size_t), char *why, size_t whylen)
{
    const struct timespec tick = { 0, 2 * 1000 * 1000 };

    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int left = ms_left(deadline), rc = poll(&p, 1, left);
        ssize_t got;
        long need;

        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0) {
            snprintf(why, whylen, "its first call did not come whole within the handshake timeout");
            return -1;
        }
        got = recv(fd, buf, cap, MSG_PEEK | MSG_DONTWAIT);
        if (got <= 0) {
            snprintf(why, whylen, got == 0 ? "it closed before its first call" : "its connection failed");
            return -1;
        }
        need = want(buf, (size_t)got, why, whylen);
        if (need < 0)
            return -1;
        if (need > 0 && got >= need)
            return got;
        if ((size_t)got == cap) {
            snprintf(why, whylen, "its first frame is longer than %zu bytes", cap);
            return -1;
        }
        nanosleep(&tick, NULL);   /* the rest is on its way: poll would say "readable" at once */
    }
}

static long lane_or_record(const void *buf, size_t have, char *why, size_t whylen)
{
    size_t cmp = have < TDM_LANE_MAGIC_LEN ? have : TDM_LANE_MAGIC_LEN;

    if (memcmp(buf, TDM_LANE_MAGIC, cmp) == 0)
        return have < TDM_LANE_MAGIC_LEN ? 0 : TDM_LANE_PREAMBLE_LEN;
    return tdm_first_record_length(buf, have, why, whylen);
}

static void route_tcp(tdm_isolate *iso, int fd, const char *peer, const struct timespec *deadline)
{
    unsigned char buf[TDM_FIRST_CALL_MAX];
    tdm_handoff h = { .kind = TDM_HANDOFF_TCP, .uid = -1 };
    tdm_isolate_worker *w = NULL;
    tdm_first_call fc;
    char why[300], end_why[160];
    long n = peek_until(fd, buf, sizeof(buf), deadline, lane_or_record, why, sizeof(why));

    if (n < 0) {
        tdm_log("connection from %s closed: %s", peer, why);
        return;
    }
    snprintf(h.peer, sizeof(h.peer), "%s", peer);
    if (n >= TDM_LANE_PREAMBLE_LEN && memcmp(buf, TDM_LANE_MAGIC, TDM_LANE_MAGIC_LEN) == 0) {
        /* A lane names its session, and so the process whose numbers it has. */
        uint64_t sid = tdm_lane_get64(buf + TDM_LANE_MAGIC_LEN), k = (sid >> TDM_ISOLATE_ID_SHIFT) - 1;
        if ((sid >> TDM_ISOLATE_ID_SHIFT) == 0 || k >= iso->tenants->n) {
            tdm_log("lane from %s for session %llu closed: no tenant's process has that session", peer,
                    (unsigned long long)sid);
            return;
        }
        w = &iso->w[k];
        pthread_mutex_lock(&iso->lock);
        int rc = w->pid ? tdm_handoff_send(w->sock, &h, fd, -1) : -ESRCH;
        pthread_mutex_unlock(&iso->lock);
        if (rc)
            tdm_log("lane from %s for session %llu closed: tenant %s's process is gone", peer,
                    (unsigned long long)sid, w->tenant->name);
        return;
    }
    if (tdm_first_call_decode(buf + 4, (size_t)n - 4, &fc, why, sizeof(why)) != 0) {
        tdm_log("connection from %s closed: %s", peer, why);
        return;
    }
    w = tenant_of(iso, &fc, peer);
    if (!w) {
        tdm_rpc_serve(&refusal_program, (void *)&no_tenant, fd, end_why, sizeof(end_why));
        return;
    }
    if (hand_to(iso, w, &h, fd, -1, why, sizeof(why)) != 0) {
        tdm_log("connection from %s refused: %s", peer, why);
        tdm_rpc_serve(&refusal_program, (void *)&no_process, fd, end_why, sizeof(end_why));
    }
}

/* ---- shm ---- */

typedef struct shm_wait_ctx {
    int sock;
    const struct timespec *deadline;
} shm_wait_ctx;

static bool shm_guest_waits(void *arg)
{
    shm_wait_ctx *c = arg;

    return tdm_shm_peer_alive(c->sock) && ms_left(c->deadline) != 0;
}

/* Serves the refusal program to an shm guest from its ring's start: the peek published nothing. */
static void refuse_shm(tdm_shm_conn *c, const int *err)
{
    char why[160];

    tdm_shm_ring_attach(&c->rx, tdm_shm_at(&c->region, c->region.g.ring_off[TDM_SHM_G2S]),
                        c->region.g.ring_cap[TDM_SHM_G2S]);
    tdm_shm_serve(&refusal_program, (void *)err, c, why, sizeof(why));
}

static void route_shm(tdm_isolate *iso, int fd, long uid, const char *peer, const struct timespec *deadline)
{
    tdm_handoff h = { .kind = TDM_HANDOFF_SHM, .uid = (int32_t)uid };
    tdm_shm_conn c;
    tdm_shm_msg first = { 0 };
    shm_wait_ctx wc = { fd, deadline };
    tdm_isolate_worker *w;
    tdm_first_call fc;
    char why[300];
    int region = -1, rc;

    /* The handshake is the front's (the guest waits for its verdict before its first call). */
    if (tdm_shm_conn_accept_keep(&c, fd, TDM_SHM_MAX_REGION, &region, why, sizeof(why)) != 0) {
        tdm_log("refusing shm guest %s: %s (other sessions are unaffected)", peer, why);
        goto out;
    }
    rc = tdm_shm_ring_peek(&c.rx, &first, TDM_FIRST_CALL_MAX, shm_guest_waits, &wc);
    if (rc != TDM_SHM_OK) {
        tdm_log("shm guest %s closed: %s", peer,
                rc == TDM_SHM_TOO_BIG ? "its first message is longer than a HELLO"
                : rc == TDM_SHM_CORRUPT ? c.rx.why
                                        : "its first call did not come within the handshake timeout");
        goto out;
    }
    if (tdm_first_call_decode(first.p, first.len, &fc, why, sizeof(why)) != 0) {
        tdm_log("shm guest %s closed: %s", peer, why);
        goto out;
    }
    snprintf(h.peer, sizeof(h.peer), "%s", peer);
    w = tenant_of(iso, &fc, peer);
    if (!w) {
        refuse_shm(&c, &no_tenant);
        goto out;
    }
    if (hand_to(iso, w, &h, fd, region, why, sizeof(why)) != 0) {
        tdm_log("shm guest %s refused: %s", peer, why);
        refuse_shm(&c, &no_process);
    }
out:
    tdm_shm_msg_free(&first);
    tdm_shm_conn_release(&c);
    if (region >= 0)
        close(region);
}

void tdm_isolate_route(void *arg, int fd, bool shm, long uid, const char *peer)
{
    tdm_isolate *iso = arg;
    struct timespec deadline = { 0, 0 };

    if (iso->handshake_timeout_s > 0) {
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += iso->handshake_timeout_s;
    }
    if (shm)
        route_shm(iso, fd, uid, peer, &deadline);
    else
        route_tcp(iso, fd, peer, &deadline);
}

/* ---- stop ---- */

void tdm_isolate_stop(tdm_isolate *iso)
{
    struct timespec until;

    pthread_mutex_lock(&iso->lock);
    iso->stopping = true;
    for (size_t i = 0; i < iso->tenants->n; i++)
        if (iso->w[i].pid)
            kill(iso->w[i].pid, SIGTERM);
    /* Each stops its sessions as a server does on SIGTERM (up to 10 s). */
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 15;
    while (iso->reapers > 0 && pthread_cond_timedwait(&iso->reaped, &iso->lock, &until) == 0)
        ;
    for (size_t i = 0; i < iso->tenants->n; i++)
        if (iso->w[i].pid) {
            tdm_log("tenant %s: process %d did not stop within 15 s: killed", iso->w[i].tenant->name,
                    (int)iso->w[i].pid);
            kill(iso->w[i].pid, SIGKILL);
        }
    while (iso->reapers > 0)
        pthread_cond_wait(&iso->reaped, &iso->lock);
    pthread_mutex_unlock(&iso->lock);
}

void tdm_isolate_free(tdm_isolate *iso)
{
    free(iso->w);
    iso->w = NULL;
    pthread_cond_destroy(&iso->reaped);
    pthread_mutex_destroy(&iso->lock);
}
