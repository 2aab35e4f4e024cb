#include "resume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "journal_shm.h"
#include "log.h"
#include "clock.h"

#define DEFAULT_JOURNAL_MB 256
#define MAX_TAKEOVERS 4              /* takeovers in a row for one call (servers dying in turn) */
#define PROTECTION_CHECK_MS 100.0   /* how often a session asks whether it is protected */
#define DEFAULT_EPOCH_MS 2.0        /* at most one acknowledged point per this much time */

void tdm_resume_init(tdm_resume *r, const tdm_resume_program *program)
{
    memset(r, 0, sizeof(*r));
    r->program = program;
    tdm_journal_init(&r->journal, NULL);
}

int tdm_resume_policy_wanted(void)
{
    const char *p = getenv("TANDEM_RESUME");

    if (!p || !*p || strcmp(p, "exact") == 0)
        return TDM_RESUME_EXACT;
    if (strcmp(p, "replay") == 0)
        return TDM_RESUME_REPLAY;
    if (strcmp(p, "none") != 0)
        tdm_log("TANDEM_RESUME=%s is not exact, replay or none: using none", p);
    return TDM_RESUME_NONE;
}

/* A reply that says where the session resumes (hello, resume, protection
 * check).  A new standby (or a new token) means the server settled the
 * session at `epoch` and that standby starts there: the journal starts
 * afresh from it. */
static void adopt_protection(tdm_resume *r, const tdm_hello_res *h, uint64_t epoch)
{
    bool now = h->standby && h->standby[0] && h->resume_policy != TDM_RESUME_NONE;

    if (now && r->standby[0] && h->resume_token == r->token && strcmp(h->standby, r->standby) == 0)
        return;                                   /* unchanged */
    snprintf(r->standby, sizeof(r->standby), "%s", now ? h->standby : "");
    r->token = now ? h->resume_token : 0;
    r->policy = now ? h->resume_policy : TDM_RESUME_NONE;
    if (now)
        tdm_journal_restart(&r->journal, epoch);
    else if (tdm_journal_active(&r->journal))
        tdm_journal_stop(&r->journal);
}

static void hello(tdm_resume *r, tdm_conn *c, const tdm_hello_res *h, int wanted)
{
    const char *mb = getenv("TANDEM_JOURNAL_MB");
    const char *em = getenv("TANDEM_EPOCH_MS");
    const char *pm = getenv("TANDEM_PROTECT_CHECK_MS");

    tdm_journal_init(&r->journal, tdm_transport_shm_region(c->t));
    r->wanted = wanted;
    r->journal_limit = (size_t)(mb && atol(mb) > 0 ? atol(mb) : DEFAULT_JOURNAL_MB) << 20;
    r->epoch_ms = em && *em && atof(em) >= 0 ? atof(em) : DEFAULT_EPOCH_MS;
    r->check_ms = pm && *pm && atof(pm) >= 0 ? atof(pm) : PROTECTION_CHECK_MS;
    adopt_protection(r, h, 0);
}

static void acknowledge(tdm_resume *r, tdm_conn *c);

/* The server is gone: resume the session on its standby and send the
 * journal again.  0, or -1 after saying why. */
static int failover(tdm_resume *r, tdm_conn *c)
{
    tdm_journal *j = &r->journal;
    tdm_resume_args a = { TDM_PROTO_VERSION, (int)getpid(), c->session, r->token, 0, 0,
                          tdm_guest_token_wire(&c->token), tdm_conn_placement(c) };
    tdm_hello_res h;
    char err[400], msg[800];
    size_t replayed = 0;
    uint64_t epoch;
    double t0 = tdm_now_ms();
    int rc, qerr = 0;

    if (!tdm_journal_active(j) || !r->standby[0])
        return -1;
    a.epoch = tdm_journal_confirmed(j);
    a.epoch_sent = tdm_journal_pending(j);
    tdm_log("lost the server; resuming session %llu on the standby at %s", (unsigned long long)c->session,
            r->standby);
    if (tdm_conn_reconnect(c, r->standby, err, sizeof(err)) != 0) {
        snprintf(msg, sizeof(msg), "takeover failed: cannot reach the standby at %s: %s", r->standby, err);
        goto fail;
    }
    memset(&h, 0, sizeof(h));
    rc = tdm_conn_call(c, TDM_RESUME, &a, &h);
    if (rc != TDM_T_OK || h.err) {
        snprintf(msg, sizeof(msg), "takeover failed: the standby at %s %s (its log says why)", r->standby,
                 rc != TDM_T_OK ? "did not answer" : "refused the session");
        if (rc == TDM_T_OK)
            xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&h);
        goto fail;
    }
    epoch = h.resumed_epoch;
    /* The standby gave the session an id of its own, and may protect it
     * with a standby of its own at once: from here a death of this server
     * resumes there. */
    uint64_t old_id = c->session;
    char was[256];
    int policy = r->policy;
    bool protected_now = h.standby && h.standby[0] && h.resume_policy != TDM_RESUME_NONE;
    c->session = h.session_id;
    snprintf(was, sizeof(was), "%s", r->standby);
    snprintf(r->standby, sizeof(r->standby), "%s", protected_now ? h.standby : "");
    r->token = protected_now ? h.resume_token : 0;
    r->policy = protected_now ? h.resume_policy : TDM_RESUME_NONE;
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&h);
    /* An shm session's pinned memory stays where it is, in its region;
     * the standby pins it too, and maps the blocks kernels reach by
     * address at those addresses, before anything is replayed. */
    rc = r->program->reregister(c->t);
    if (rc == TDM_T_OK)
        /* Sessions replay one at a time (server/replay_gate.h).  Dying
         * while this one waits for its turn is someone else's doing. */
        rc = tdm_conn_call(c, TDM_REPLAY_BEGIN, NULL, &qerr);
    if (rc == TDM_T_BROKEN && protected_now && ++r->depth <= MAX_TAKEOVERS)
        return failover(r, c);
    if (rc != TDM_T_OK) {
        snprintf(msg, sizeof(msg), "takeover failed: the standby at %s %s", was,
                  rc == TDM_T_BROKEN ? "went away while resuming"
                                    : "refused what the program had registered (pinned memory, its mappings at "
                                      "the program's addresses, function attributes; the lines above say which)");
        goto fail;
    }
    /* The replayed calls are done once a quiesce returns: that is the
     * recovery time users care about (fault to work resumed). */
    rc = tdm_journal_replay(j, c->t, epoch, &replayed);
    if (rc == TDM_T_OK)
        rc = tdm_conn_call(c, TDM_QUIESCE, NULL, &qerr);
    if (rc != TDM_T_OK) {
        /* This session alone was replaying when the server died: its own
         * work faulted again, as it did on the server before.  It is the
         * faulting session, and gets the fault a program gets natively. */
        snprintf(msg, sizeof(msg), "the standby at %s died while replaying this session's unacknowledged work: "
                 "this session's own kernel faulted (on the active first); not resuming it again", was);
        c->lost_err = cudaErrorLaunchFailure;
        goto fail;
    }
    r->depth = 0;
    tdm_log("session %llu resumed on %s (policy %s, %zu call(s) replayed) in %.2f ms%s%s", (unsigned long long)old_id,
            was, policy == TDM_RESUME_EXACT ? "exact" : "replay", replayed, tdm_now_ms() - t0,
            protected_now ? "; its standby is " : "; no standby behind it yet", r->standby);
    if (protected_now) {
        /* Protected again: the journal goes on from the resumed epoch, and
         * the replayed calls, all complete now, make the next epoch. */
        tdm_journal_resumed(j, epoch);
        acknowledge(r, c);
        return 0;
    }
    tdm_journal_stop(j);
    return 0;
fail:
    tdm_conn_drop(c);
    r->standby[0] = 0;
    tdm_journal_stop(j);
    tdm_conn_fail(c, msg);
    return -1;
}

/* One round trip proves the server reached the epoch just sent, and the
 * calls before it go: over shm they may name pinned bytes the program is
 * about to rewrite (journal_shm.c). */
static void confirm_epoch(tdm_resume *r, tdm_conn *c)
{
    int rc = tdm_conn_call(c, TDM_NULL, NULL, NULL);

    if (rc == TDM_T_OK)
        tdm_journal_confirm(&r->journal);
    else if (rc == TDM_T_BROKEN)
        failover(r, c);
}

/* A synchronous call that proves the session idle acknowledges the
 * journal: the server starts a new shadow epoch. */
static void acknowledge(tdm_resume *r, tdm_conn *c)
{
    uint64_t seq = tdm_journal_seq(&r->journal);
    bool confirm_now = tdm_journal_shm_acknowledged(&r->journal);

    r->last_epoch = tdm_now_ms();
    tdm_journal_acknowledge(&r->journal);
    if (tdm_conn_post(c, TDM_EPOCH, &seq) != TDM_T_OK)
        failover(r, c);   /* the epoch is lost with the server; the journal was kept until here */
    else if (confirm_now)
        confirm_epoch(r, c);
}

/* Every acknowledged point costs the server a copy of each allocation
 * written after it (the next epoch's shadows) and of the module variables.
 * A program that synchronizes every few microseconds would pay that each
 * time, so points closer than TANDEM_EPOCH_MS are let go: the journal keeps
 * growing a little longer, and a takeover replays at most about that much
 * work more. */
static bool epoch_due(tdm_resume *r)
{
    return tdm_now_ms() - r->last_epoch >= r->epoch_ms || tdm_journal_bytes(&r->journal) > r->journal_limit / 4;
}

/* Waits for the session's work (deferred errors stay for the program's
 * next synchronizing call) so the journal can be emptied: before calls that
 * would make journaled work impossible to replay, and when it grows past
 * its limit. */
static void quiesce(tdm_resume *r, tdm_conn *c)
{
    int qerr = 0;
    int rc;

    tdm_journal_next_call(&r->journal);
    rc = tdm_conn_call(c, TDM_QUIESCE, NULL, &qerr);
    if (rc == TDM_T_BROKEN && failover(r, c) == 0)
        return;
    if (rc == TDM_T_OK)
        tdm_journal_confirm(&r->journal);
    if (rc == TDM_T_OK && tdm_journal_proves_idle(&r->journal, TDM_QUIESCE, NULL, qerr))
        acknowledge(r, c);
}

/* Fail-back: the server handed the session, idle at call seq, to the
 * server at moved->moved_to.  0, or -1 after saying why (the session is
 * lost: the old server has let it go). */
static int move(tdm_resume *r, tdm_conn *c, const tdm_hello_res *moved, uint64_t seq)
{
    tdm_resume_args a = { TDM_PROTO_VERSION, (int)getpid(), moved->session_id, moved->resume_token, seq, seq,
                          tdm_guest_token_wire(&c->token), tdm_conn_placement(c) };
    tdm_hello_res h;
    char err[400] = "", msg[800], to[256];
    double t0 = tdm_now_ms();
    int rc = -1;

    snprintf(to, sizeof(to), "%s", moved->moved_to);
    /* The new server may still be reading the handover off its feed. */
    for (int i = 0; i < 50 && rc != TDM_T_OK; i++) {
        if (tdm_conn_reconnect(c, to, err, sizeof(err)) != 0) {
            usleep(20000);
            continue;
        }
        memset(&h, 0, sizeof(h));
        rc = tdm_conn_call(c, TDM_RESUME, &a, &h);
        if (rc == TDM_T_OK && h.err) {
            xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&h);
            rc = -1;
        }
        if (rc == TDM_T_OK && r->program->reregister(c->t) != TDM_T_OK) {
            xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&h);
            snprintf(err, sizeof(err), "it did not take the program's pinned memory");
            rc = -1;
            break;
        }
        if (rc != TDM_T_OK) {
            tdm_conn_drop(c);
            usleep(20000);
        }
    }
    if (rc != TDM_T_OK) {
        tdm_conn_drop(c);
        snprintf(msg, sizeof(msg), "fail-back failed: the server at %s did not take the session (%s)", to, err);
        tdm_conn_fail(c, msg);
        return -1;
    }
    c->session = h.session_id;
    adopt_protection(r, &h, seq);
    tdm_log("session moved to %s (fail-back) in %.2f ms%s%s", to, tdm_now_ms() - t0,
            r->standby[0] ? "; its standby is " : "", r->standby);
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&h);
    return 0;
}

/* Now and then (before a synchronous call, at most every check_ms): is the
 * session protected by a live standby, and does its server want to hand it
 * to another (fail-back)?  Before a call, not after an answer: after one,
 * the program has not yet noted what the call did (cudaFreeHost takes its
 * block out of the table once the server let go of it), and a takeover
 * started there would register with the standby a block the program is
 * about to forget. */
static void check_protection(tdm_resume *r, tdm_conn *c)
{
    tdm_protect_args a = { 0, r->wanted };
    tdm_hello_res h;
    double t = tdm_now_ms();
    int rc;

    if (t - r->last_check < r->check_ms)
        return;
    r->last_check = t;
    a.seq = tdm_journal_next_call(&r->journal);
    memset(&h, 0, sizeof(h));
    rc = tdm_conn_call(c, TDM_PROTECT, &a, &h);
    if (rc == TDM_T_BROKEN) {
        if (failover(r, c) != 0)
            tdm_conn_fail(c, "lost the connection to the Tandem server: " TDM_CONN_LOST_HINT);
        return;
    }
    if (rc != TDM_T_OK)
        return;
    if (tdm_journal_active(&r->journal))
        tdm_journal_confirm(&r->journal);
    if (!h.err && h.moved_to && h.moved_to[0])
        move(r, c, &h, a.seq);
    else if (!h.err)
        adopt_protection(r, &h, a.seq);
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&h);
}

/* A call sent again to the standby after a takeover.  A release (cudaFree,
 * a stream's or event's destroy) the active completed just before it died
 * was mirrored there, as every release is, so the standby finds nothing to
 * release: the program's call did succeed.  Only what the program holds
 * counts, so a release of a bad pointer or handle still fails as it would
 * have.  The row's RESOURCE column says where the program's holdings are:
 * memory in the allocation table, streams and events among its live
 * handles. */
static void released_before_the_takeover(tdm_resume *r, const tdm_call_info *call, const void *args, void *res)
{
    int *err = res;

    if (call->effect != TDM_EFFECT_RELEASES)
        return;
    if (call->resource == TDM_RES_MEMORY && *err == cudaErrorInvalidValue &&
        r->program->holds_allocation(*(const tdm_addr *)args))
        *err = 0;
    if ((call->resource == TDM_RES_STREAM || call->resource == TDM_RES_EVENT) &&
        *err == cudaErrorInvalidResourceHandle && r->program->holds_handle(*(const tdm_handle *)args))
        *err = 0;
}

/* Journaled work on memory, a stream or an event about to be released
 * could not be replayed after it: the standby mirrors the release at once,
 * and the address may be handed out again before the next acknowledged
 * point.  So before every call whose row releases a resource, the journal
 * is emptied, and the standby hears the new epoch before the release. */
static void sending(tdm_resume *r, tdm_conn *c, const tdm_call_info *call)
{
    if (c->t)
        check_protection(r, c);
    if (c->t && tdm_journal_active(&r->journal) && !tdm_journal_empty(&r->journal) && call->effect == TDM_EFFECT_RELEASES)
        quiesce(r, c);
    tdm_journal_next_call(&r->journal);
}

/* A program whose calls are all one-way over shm (launches, uploads, downloads that end in a
 * completion slot) never sends a synchronous call, so the check before those would never see a
 * standby that came back: the session stayed unprotected (7 s of a 4 s loop on the sim,
 * 2026-12-02).  Before a one-way call the check runs too, reading the clock only every 16th
 * post (a launch costs ~0.4 us; the clock, ~20 ns).  Never between the pieces of one copy:
 * the server would quiesce the session with the copy half posted. */
enum { POSTS_PER_CLOCK = 16 };

static void posting(tdm_resume *r, tdm_conn *c, bool piece)
{
    if (piece || !c->t || ++r->posts_unchecked < POSTS_PER_CLOCK)
        return;
    r->posts_unchecked = 0;
    check_protection(r, c);
}

static void answered(tdm_resume *r, tdm_conn *c, const tdm_call_info *call, void *args, void *res)
{
    tdm_journal *j = &r->journal;

    if (tdm_journal_active(j)) {
        tdm_journal_confirm(j);
        /* A new stream: idleness needs to know whether it is non-blocking. */
        if (call->effect == TDM_EFFECT_CREATES && call->resource == TDM_RES_STREAM && ((tdm_handle_res *)res)->err == 0)
            tdm_journal_stream_created(j, ((tdm_handle_res *)res)->handle, ((tdm_stream_create_args *)args)->flags);
        /* Every reply starts with its error. */
        bool idle = tdm_journal_proves_idle(j, call->proc, args, *(int *)res) && epoch_due(r);
        tdm_journal_shm_replied(j, call->proc, idle);
        if (idle)
            acknowledge(r, c);
    }
}

static int lost(tdm_resume *r, tdm_conn *c, int attempt)
{
    return attempt < MAX_TAKEOVERS && failover(r, c) == 0 ? 0 : -1;
}

static void posted(tdm_resume *r, tdm_conn *c)
{
    if (tdm_journal_active(&r->journal) && tdm_journal_bytes(&r->journal) > r->journal_limit)
        quiesce(r, c);
}

static void copy_done(tdm_resume *r, tdm_conn *c, uint32_t slot, uint32_t ticket, int err)
{
    if (c->t && tdm_journal_active(&r->journal) &&
        tdm_journal_shm_copy_done(&r->journal, slot, ticket, err, epoch_due(r)))
        acknowledge(r, c);
}

int tdm_resume_on(tdm_resume *r, tdm_conn *c, const tdm_resume_event *e)
{
    switch (e->kind) {
    case TDM_RESUME_HELLO: hello(r, c, e->hello, e->policy); break;
    case TDM_RESUME_SENDING: sending(r, c, e->call); break;
    case TDM_RESUME_LOST: return lost(r, c, e->attempt);
    case TDM_RESUME_RESENT: released_before_the_takeover(r, e->call, e->args, e->res); break;
    case TDM_RESUME_ANSWERED: answered(r, c, e->call, e->args, e->res); break;
    case TDM_RESUME_POSTING: posting(r, c, e->piece); tdm_journal_record(&r->journal, e->call, e->args); break;
    case TDM_RESUME_POSTED: posted(r, c); break;
    case TDM_RESUME_CHUNK_REUSE:
        if (tdm_journal_active(&r->journal))
            tdm_journal_shm_reuse(&r->journal, e->chunk);
        break;
    case TDM_RESUME_COPY_DONE: copy_done(r, c, e->slot, e->ticket, e->err); break;
    }
    return 0;
}
