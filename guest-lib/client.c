#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"
#include "journal.h"
#include "journal_shm.h"
#include "xdr_extra.h"
#include "transport.h"

#define DEFAULT_SERVER "tcp://127.0.0.1:7710"
#define DEFAULT_JOURNAL_MB 256
#define MAX_TAKEOVERS 4              /* takeovers in a row for one call (servers dying in turn) */
#define PROTECTION_CHECK_MS 100.0   /* how often a session asks whether it is protected */
#define DEFAULT_EPOCH_MS 2.0        /* at most one acknowledged point per this much time */

static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static tdm_transport *conn;
static tdm_hello_info hello;
static bool broken;
static unsigned conn_gen;      /* bumped each time conn is pointed at another server */

/* Where and how this session resumes if its server dies (docs/takeover.md). */
static struct {
    char standby[256];
    uint64_t token;
    int policy;               /* granted by the server: NONE while unprotected */
    int wanted;               /* what this process asked for */
    int depth;                /* takeovers in a row within one failover */
    cudaError_t lost_err;     /* what calls get once the session is lost */
    size_t journal_limit;
    double last_check;        /* ms: the last TDM_PROTECT */
    double epoch_ms;          /* TANDEM_EPOCH_MS */
    double last_epoch;        /* ms: the last acknowledged point */
} resume;

static int wanted_policy(void)
{
    const char *p = getenv("TANDEM_RESUME");

    if (!p || !*p || strcmp(p, "exact") == 0)
        return TDM_RESUME_EXACT;
    if (strcmp(p, "replay") == 0)
        return TDM_RESUME_REPLAY;
    if (strcmp(p, "none") != 0)
        fprintf(stderr, "tandem: TANDEM_RESUME=%s is not exact, replay or none: using none\n", p);
    return TDM_RESUME_NONE;
}

static void close_at_exit(void)
{
    pthread_mutex_lock(&conn_lock);
    if (conn) {
        /* One round trip so every queued one-way call has been taken by the
         * server before the process goes: the program may exit without a
         * final synchronize. */
        int err = 0;
        conn->ops->call(conn, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_int, &err);
        conn->ops->close(conn);
        conn = NULL;
    }
    pthread_mutex_unlock(&conn_lock);
}

static cudaError_t lost_error(void)
{
    return resume.lost_err ? resume.lost_err : cudaErrorDevicesUnavailable;
}

static cudaError_t fail_locked(const char *what)
{
    if (!broken)
        fprintf(stderr, "tandem: %s\n", what);
    broken = true;
    return lost_error();
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A reply that says where the session resumes (hello, resume, protection
 * check).  A new standby (or a new token) means the server settled the
 * session at `epoch` and that standby starts there: the journal starts
 * afresh from it. */
static void adopt_protection(const tdm_hello_res *r, uint64_t epoch)
{
    bool now = r->standby && r->standby[0] && r->resume_policy != TDM_RESUME_NONE;

    if (now && resume.standby[0] && r->resume_token == resume.token && strcmp(r->standby, resume.standby) == 0)
        return;                                   /* unchanged */
    snprintf(resume.standby, sizeof(resume.standby), "%s", now ? r->standby : "");
    resume.token = now ? r->resume_token : 0;
    resume.policy = now ? r->resume_policy : TDM_RESUME_NONE;
    if (now)
        tdm_journal_restart(epoch);
    else if (tdm_journal_active())
        tdm_journal_stop();
}

static cudaError_t connect_locked(void)
{
    const char *ep = getenv("TANDEM_SERVER");
    char err[400], msg[600];
    tdm_hello_args a = { 0 };
    tdm_hello_res r;
    char name[64];

    if (conn)
        return cudaSuccess;
    if (broken)
        return lost_error();
    if (!ep || !*ep)
        ep = DEFAULT_SERVER;
    if (tdm_transport_open(ep, &conn, err, sizeof(err)) != 0) {
        snprintf(msg, sizeof(msg), "cannot reach the Tandem server at %s: %s", ep, err);
        return fail_locked(msg);
    }
    snprintf(name, sizeof(name), "pid-%d", (int)getpid());
    a.proto_version = TDM_PROTO_VERSION;
    a.pid = (int)getpid();
    a.client = name;
    a.resume_policy = wanted_policy();
    memset(&r, 0, sizeof(r));
    if (conn->ops->call(conn, TDM_HELLO, (xdrproc_t)xdr_tdm_hello_args, &a, (xdrproc_t)xdr_tdm_hello_res, &r) != 0) {
        conn->ops->close(conn);
        conn = NULL;
        snprintf(msg, sizeof(msg), "the server at %s did not answer the Tandem handshake", ep);
        return fail_locked(msg);
    }
    if (r.err) {
        xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
        conn->ops->close(conn);
        conn = NULL;
        snprintf(msg, sizeof(msg), "the server at %s refused the session (protocol mismatch?)", ep);
        return fail_locked(msg);
    }
    hello.session_id = r.session_id;
    snprintf(hello.backend, sizeof(hello.backend), "%s", r.backend ? r.backend : "?");
    hello.simulated = r.simulated;
    hello.device_count = r.device_count;
    hello.driver_version = r.driver_version;
    hello.arena_base = r.arena_base;
    hello.arena_size = r.arena_size;
    resume.wanted = a.resume_policy;
    const char *mb = getenv("TANDEM_JOURNAL_MB");
    resume.journal_limit = (size_t)(mb && atol(mb) > 0 ? atol(mb) : DEFAULT_JOURNAL_MB) << 20;
    const char *em = getenv("TANDEM_EPOCH_MS");
    resume.epoch_ms = em && *em && atof(em) >= 0 ? atof(em) : DEFAULT_EPOCH_MS;
    adopt_protection(&r, 0);
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
    if (hello.simulated && getenv("TANDEM_QUIET") == NULL)
        fprintf(stderr, "tandem: connected to %s (backend %s: SIMULATED GPU, not a real device)\n", ep,
                hello.backend);
    atexit(close_at_exit);
    return cudaSuccess;
}

cudaError_t tdm_connect(void)
{
    cudaError_t err;

    pthread_mutex_lock(&conn_lock);
    err = connect_locked();
    pthread_mutex_unlock(&conn_lock);
    return err;
}

const tdm_hello_info *tdm_hello(void)
{
    return &hello;
}

static void acknowledge_locked(void);

/* Points conn at the server at `to` (the standby, or the new active of a
 * fail-back).  An shm session keeps its region, where the program's pinned
 * memory lives: that server gets the same one. */
static int reconnect_locked(const char *to, char *err, size_t len)
{
    conn_gen++;
    if (tdm_transport_shm_region(conn))
        return tdm_transport_shm_reattach(conn, to, err, len);
    if (conn)
        conn->ops->close(conn);
    conn = NULL;
    return tdm_transport_open(to, &conn, err, len);
}

/* After a failed takeover.  A dead shm connection stays, its region mapped
 * (the program's pinned memory); its calls fail at once. */
static void drop_conn_locked(void)
{
    if (conn && tdm_transport_shm_region(conn)) {
        tdm_transport_shm_drop(conn);
    } else if (conn) {
        conn->ops->close(conn);
        conn = NULL;
    }
}

/* The server is gone: resume the session on its standby and send the
 * journal again.  0, or -1 after saying why. */
static int failover_locked(void)
{
    tdm_resume_args a = { TDM_PROTO_VERSION, (int)getpid(), hello.session_id, resume.token, 0, 0 };
    tdm_hello_res r;
    char err[400], msg[800];
    size_t replayed = 0;
    uint64_t epoch;
    double t0 = now_ms();
    int rc, qerr = 0;

    if (!tdm_journal_active() || !resume.standby[0])
        return -1;
    a.epoch = tdm_journal_confirmed();
    a.epoch_sent = tdm_journal_pending();
    fprintf(stderr, "tandem: lost the server; resuming session %llu on the standby at %s\n",
            (unsigned long long)hello.session_id, resume.standby);
    if (reconnect_locked(resume.standby, err, sizeof(err)) != 0) {
        snprintf(msg, sizeof(msg), "takeover failed: cannot reach the standby at %s: %s", resume.standby, err);
        goto fail;
    }
    memset(&r, 0, sizeof(r));
    rc = conn->ops->call(conn, TDM_RESUME, (xdrproc_t)xdr_tdm_resume_args, &a, (xdrproc_t)xdr_tdm_hello_res, &r);
    if (rc != TDM_T_OK || r.err) {
        snprintf(msg, sizeof(msg), "takeover failed: the standby at %s %s (its log says why)", resume.standby,
                 rc != TDM_T_OK ? "did not answer" : "refused the session");
        if (rc == TDM_T_OK)
            xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
        goto fail;
    }
    epoch = r.resumed_epoch;
    /* The standby gave the session an id of its own, and may protect it
     * with a standby of its own at once: from here a death of this server
     * resumes there. */
    uint64_t old_id = hello.session_id;
    char was[256];
    int policy = resume.policy;
    bool protected_now = r.standby && r.standby[0] && r.resume_policy != TDM_RESUME_NONE;
    hello.session_id = r.session_id;
    snprintf(was, sizeof(was), "%s", resume.standby);
    snprintf(resume.standby, sizeof(resume.standby), "%s", protected_now ? r.standby : "");
    resume.token = protected_now ? r.resume_token : 0;
    resume.policy = protected_now ? r.resume_policy : TDM_RESUME_NONE;
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
    /* An shm session's pinned memory stays where it is, in its region;
     * the standby pins it too before anything is replayed. */
    rc = tdm_host_reregister(conn);
    if (rc == TDM_T_OK)
        /* Sessions replay one at a time (server/replay_gate.h).  Dying
         * while this one waits for its turn is someone else's doing. */
        rc = conn->ops->call(conn, TDM_REPLAY_BEGIN, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_int, &qerr);
    if (rc == TDM_T_BROKEN && protected_now && ++resume.depth <= MAX_TAKEOVERS)
        return failover_locked();
    if (rc != TDM_T_OK) {
        snprintf(msg, sizeof(msg), "takeover failed: the standby at %s %s", was,
                 rc == TDM_T_BROKEN ? "went away while resuming" : "did not take the program's pinned memory");
        goto fail;
    }
    /* The replayed calls are done once a quiesce returns: that is the
     * recovery time users care about (fault to work resumed). */
    rc = tdm_journal_replay(conn, epoch, &replayed);
    if (rc == TDM_T_OK)
        rc = conn->ops->call(conn, TDM_QUIESCE, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_int, &qerr);
    if (rc != TDM_T_OK) {
        /* This session alone was replaying when the server died: its own
         * work faulted again, as it did on the server before.  It is the
         * faulting session, and gets the fault a program gets natively. */
        snprintf(msg, sizeof(msg), "the standby at %s died while replaying this session's unacknowledged work: "
                 "this session's own kernel faulted (on the active first); not resuming it again", was);
        resume.lost_err = cudaErrorLaunchFailure;
        goto fail;
    }
    resume.depth = 0;
    fprintf(stderr, "tandem: session %llu resumed on %s (policy %s, %zu call(s) replayed) in %.2f ms%s%s\n",
            (unsigned long long)old_id, was, policy == TDM_RESUME_EXACT ? "exact" : "replay", replayed,
            now_ms() - t0, protected_now ? "; its standby is " : "; no standby behind it yet", resume.standby);
    if (protected_now) {
        /* Protected again: the journal goes on from the resumed epoch, and
         * the replayed calls, all complete now, make the next epoch. */
        tdm_journal_resumed(epoch);
        acknowledge_locked();
        return 0;
    }
    tdm_journal_stop();
    return 0;
fail:
    drop_conn_locked();
    resume.standby[0] = 0;
    tdm_journal_stop();
    fail_locked(msg);
    return -1;
}

/* One round trip proves the server reached the epoch just sent, and the
 * calls before it go: over shm they may name pinned bytes the program is
 * about to rewrite (journal_shm.c). */
static void confirm_epoch_locked(void)
{
    int rc = conn->ops->call(conn, TDM_NULL, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)tdm_xdr_void, NULL);

    if (rc == TDM_T_OK)
        tdm_journal_confirm();
    else if (rc == TDM_T_BROKEN)
        failover_locked();
}

/* A synchronous call that proves the session idle acknowledges the
 * journal: the server starts a new shadow epoch. */
static void acknowledge_locked(void)
{
    uint64_t seq = tdm_journal_seq();
    bool confirm_now = tdm_journal_shm_acknowledged();

    resume.last_epoch = now_ms();
    tdm_journal_acknowledge();
    if (conn->ops->post(conn, TDM_EPOCH, (xdrproc_t)xdr_u_quad_t, &seq) != TDM_T_OK)
        failover_locked();   /* the epoch is lost with the server; the journal was kept until here */
    else if (confirm_now)
        confirm_epoch_locked();
}

/* Every acknowledged point costs the server a copy of each allocation
 * written after it (the next epoch's shadows) and of the module variables.
 * A program that synchronizes every few microseconds would pay that each
 * time, so points closer than TANDEM_EPOCH_MS are let go: the journal keeps
 * growing a little longer, and a takeover replays at most about that much
 * work more. */
static bool epoch_due(void)
{
    return now_ms() - resume.last_epoch >= resume.epoch_ms || tdm_journal_bytes() > resume.journal_limit / 4;
}

/* Waits for the session's work (deferred errors stay for the program's
 * next synchronizing call) so the journal can be emptied: before calls that
 * would make journaled work impossible to replay, and when it grows past
 * its limit. */
static void quiesce_locked(void)
{
    int qerr = 0;
    int rc;

    tdm_journal_next_call();
    rc = conn->ops->call(conn, TDM_QUIESCE, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_int, &qerr);
    if (rc == TDM_T_BROKEN && failover_locked() == 0)
        return;
    if (rc == TDM_T_OK)
        tdm_journal_confirm();
    if (rc == TDM_T_OK && tdm_journal_proves_idle(TDM_QUIESCE, NULL, qerr))
        acknowledge_locked();
}

/* Fail-back: the server handed the session, idle at call seq, to the
 * server at r->moved_to.  0, or -1 after saying why (the session is lost:
 * the old server has let it go). */
static int move_locked(const tdm_hello_res *moved, uint64_t seq)
{
    tdm_resume_args a = { TDM_PROTO_VERSION, (int)getpid(), moved->session_id, moved->resume_token, seq, seq };
    tdm_hello_res r;
    char err[400] = "", msg[800], to[256];
    double t0 = now_ms();
    int rc = -1;

    snprintf(to, sizeof(to), "%s", moved->moved_to);
    /* The new server may still be reading the handover off its feed. */
    for (int i = 0; i < 50 && rc != TDM_T_OK; i++) {
        if (reconnect_locked(to, err, sizeof(err)) != 0) {
            usleep(20000);
            continue;
        }
        memset(&r, 0, sizeof(r));
        rc = conn->ops->call(conn, TDM_RESUME, (xdrproc_t)xdr_tdm_resume_args, &a, (xdrproc_t)xdr_tdm_hello_res, &r);
        if (rc == TDM_T_OK && r.err) {
            xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
            rc = -1;
        }
        if (rc == TDM_T_OK && tdm_host_reregister(conn) != TDM_T_OK) {
            xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
            snprintf(err, sizeof(err), "it did not take the program's pinned memory");
            rc = -1;
            break;
        }
        if (rc != TDM_T_OK) {
            drop_conn_locked();
            usleep(20000);
        }
    }
    if (rc != TDM_T_OK) {
        drop_conn_locked();
        snprintf(msg, sizeof(msg), "fail-back failed: the server at %s did not take the session (%s)", to, err);
        fail_locked(msg);
        return -1;
    }
    hello.session_id = r.session_id;
    adopt_protection(&r, seq);
    fprintf(stderr, "tandem: session moved to %s (fail-back) in %.2f ms%s%s\n", to, now_ms() - t0,
            resume.standby[0] ? "; its standby is " : "", resume.standby);
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
    return 0;
}

/* Now and then (after a synchronous call, at most every
 * PROTECTION_CHECK_MS): is the session protected by a live standby, and
 * does its server want to hand it to another (fail-back)? */
static void check_protection_locked(void)
{
    tdm_protect_args a = { 0, resume.wanted };
    tdm_hello_res r;
    double t = now_ms();
    int rc;

    if (t - resume.last_check < PROTECTION_CHECK_MS)
        return;
    resume.last_check = t;
    a.seq = tdm_journal_next_call();
    memset(&r, 0, sizeof(r));
    rc = conn->ops->call(conn, TDM_PROTECT, (xdrproc_t)xdr_tdm_protect_args, &a, (xdrproc_t)xdr_tdm_hello_res, &r);
    if (rc == TDM_T_BROKEN) {
        if (failover_locked() != 0)
            fail_locked("lost the connection to the Tandem server");
        return;
    }
    if (rc != TDM_T_OK)
        return;
    if (tdm_journal_active())
        tdm_journal_confirm();
    if (!r.err && r.moved_to && r.moved_to[0])
        move_locked(&r, a.seq);
    else if (!r.err)
        adopt_protection(&r, a.seq);
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
}

/* A call sent again to the standby after a takeover.  A release (cudaFree,
 * a stream's or event's destroy) the active completed just before it died
 * was mirrored there, as every release is, so the standby finds nothing to
 * release: the program's call did succeed.  Only what the program holds
 * counts, so a release of a bad pointer or handle still fails as it would
 * have. */
static void released_before_the_takeover(uint32_t proc, const void *args, void *res)
{
    int *err = res;

    if (proc == TDM_FREE && *err == cudaErrorInvalidValue && tdm_allocs_holds(*(const tdm_addr *)args))
        *err = 0;
    if ((proc == TDM_STREAM_DESTROY || proc == TDM_EVENT_DESTROY) && *err == cudaErrorInvalidResourceHandle &&
        tdm_live_handle_held(*(const tdm_handle *)args))
        *err = 0;
}

cudaError_t tdm_call(uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res)
{
    cudaError_t err;
    int rc;

    pthread_mutex_lock(&conn_lock);
    err = connect_locked();
    if (err)
        goto out;
    /* Journaled work on memory, a stream or an event about to be released
     * could not be replayed after it: the standby mirrors the release at
     * once, and the address may be handed out again before the next
     * acknowledged point.  So the journal is emptied first, and the standby
     * hears the new epoch before the release. */
    if (tdm_journal_active() && !tdm_journal_empty() &&
        (proc == TDM_FREE || proc == TDM_SHM_HOST_UNREGISTER || proc == TDM_STREAM_DESTROY ||
         proc == TDM_EVENT_DESTROY || proc == TDM_MODULE_UNLOAD || proc == TDM_DEVICE_RESET))
        quiesce_locked();
    if (!conn) {
        err = lost_error();
        goto out;
    }
    tdm_journal_next_call();
    rc = conn->ops->call(conn, proc, xargs, args, xres, res);
    /* The server is gone: resume on its standby and send the call again
     * there.  That server may die too before it answers (a faulting
     * session's replay kills it): then on to its own standby. */
    for (int again = 0; rc == TDM_T_BROKEN && again < MAX_TAKEOVERS && failover_locked() == 0; again++) {
        rc = conn->ops->call(conn, proc, xargs, args, xres, res);
        if (rc == TDM_T_OK)
            released_before_the_takeover(proc, args, res);
    }
    if (rc == TDM_T_REJECTED)
        err = cudaErrorInvalidValue;
    else if (rc != TDM_T_OK)
        err = fail_locked("lost the connection to the Tandem server");
    else if (tdm_journal_active()) {
        tdm_journal_confirm();
        if (proc == TDM_STREAM_CREATE && ((tdm_handle_res *)res)->err == 0)
            tdm_journal_stream_created(((tdm_handle_res *)res)->handle, ((tdm_stream_create_args *)args)->flags);
        /* Every reply starts with its error. */
        bool idle = tdm_journal_proves_idle(proc, args, *(int *)res) && epoch_due();
        tdm_journal_shm_replied(proc, idle);
        if (idle)
            acknowledge_locked();
    }
    if (!err && conn)
        check_protection_locked();
out:
    pthread_mutex_unlock(&conn_lock);
    return err;
}

cudaError_t tdm_post(uint32_t proc, xdrproc_t xargs, void *args)
{
    cudaError_t err;
    int rc;

    pthread_mutex_lock(&conn_lock);
    err = connect_locked();
    if (err)
        goto out;
    tdm_journal_record(proc, xargs, args);
    rc = conn->ops->post(conn, proc, xargs, args);
    /* The journal holds this call too: the replay sends it. */
    if (rc != TDM_T_OK && failover_locked() != 0)
        err = fail_locked("lost the connection to the Tandem server");
    else if (tdm_journal_active() && tdm_journal_bytes() > resume.journal_limit)
        quiesce_locked();
out:
    pthread_mutex_unlock(&conn_lock);
    return err;
}

const struct tdm_shm_region *tdm_shm(void)
{
    const struct tdm_shm_region *r = NULL;

    pthread_mutex_lock(&conn_lock);
    if (connect_locked() == cudaSuccess)
        r = tdm_transport_shm_region(conn);
    pthread_mutex_unlock(&conn_lock);
    return r;
}

const struct tdm_shm_region *tdm_shm_locked(void)
{
    return conn ? tdm_transport_shm_region(conn) : NULL;
}

void tdm_shm_chunk_reuse(uint32_t chunk)
{
    pthread_mutex_lock(&conn_lock);
    if (tdm_journal_active())
        tdm_journal_shm_reuse(chunk);
    pthread_mutex_unlock(&conn_lock);
}

cudaError_t tdm_shm_wait_copy(uint32_t slot, uint32_t ticket, int *err)
{
    cudaError_t rc = cudaSuccess;
    tdm_transport *t;
    unsigned gen;
    int w;

    /* Not under conn_lock: the server may need further calls of another
     * thread to get there, and waiting touches no ring. */
    for (;;) {
        pthread_mutex_lock(&conn_lock);
        t = conn;
        gen = conn_gen;
        pthread_mutex_unlock(&conn_lock);
        w = t ? tdm_transport_shm_wait_slot(t, slot, ticket, err) : TDM_T_BROKEN;
        if (w == TDM_T_OK)
            break;
        if (w == TDM_T_REJECTED)
            return cudaErrorInvalidValue;
        /* The server is gone: resume on the standby (unless another thread
         * did meanwhile), whose replay completes the copy; then wait again. */
        pthread_mutex_lock(&conn_lock);
        if (gen == conn_gen && (!conn || failover_locked() != 0))
            rc = fail_locked("lost the connection to the Tandem server");
        pthread_mutex_unlock(&conn_lock);
        if (rc)
            return rc;
    }
    pthread_mutex_lock(&conn_lock);
    if (conn && tdm_journal_active() && tdm_journal_shm_copy_done(slot, ticket, *err, epoch_due()))
        acknowledge_locked();
    pthread_mutex_unlock(&conn_lock);
    return rc;
}

cudaError_t tdm_call_err(uint32_t proc, xdrproc_t xargs, void *args)
{
    int res = 0;
    cudaError_t err = tdm_call(proc, xargs, args, (xdrproc_t)xdr_int, &res);

    return err ? err : (cudaError_t)res;
}
