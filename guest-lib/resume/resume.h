/* Resilience on the guest side: where the session resumes if its server
 * dies (docs/takeover.md), and the journal a takeover replays.
 *
 * client.c connects and makes the calls; it tells this module what happens
 * on the call path through one entry point, tdm_resume_on(), and this
 * module does the rest: keeps the journal, acknowledges points where the
 * session is idle, checks now and then that a standby protects it, resumes
 * it on that standby when the server dies (or on the new active of a
 * fail-back), and replays the journal there.  Live migration and
 * checkpoints are to grow here as further events.
 *
 * Every event is delivered with the client's lock held. */
#ifndef TANDEM_GUEST_RESUME_H
#define TANDEM_GUEST_RESUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calls.h"
#include "conn.h"
#include "journal.h"
#include "tandem_rpc.h"

/* What this module asks of the rest of the guest library. */
typedef struct tdm_resume_program {
    /* addr starts a device allocation the program holds (allocation table) */
    bool (*holds_allocation)(uint64_t addr);
    /* the program holds this stream or event */
    bool (*holds_handle)(uint64_t handle);
    /* Registers the program's pinned blocks with the new server on t (an
     * shm session's region): TDM_T_OK, TDM_T_BROKEN or TDM_T_REJECTED. */
    int (*reregister)(tdm_transport *t);
} tdm_resume_program;

typedef struct tdm_resume {
    const tdm_resume_program *program;
    char standby[256];        /* where the session resumes; "" while unprotected */
    uint64_t token;
    int policy;               /* granted by the server: NONE while unprotected */
    int wanted;               /* what this process asked for */
    int depth;                /* takeovers in a row within one failover */
    size_t journal_limit;
    double last_check;        /* ms: the last TDM_PROTECT */
    unsigned posts_unchecked; /* one-way calls since the clock was last read for a check */
    double check_ms;          /* at most one TDM_PROTECT per this much time (TANDEM_PROTECT_CHECK_MS) */
    double epoch_ms;          /* TANDEM_EPOCH_MS */
    double last_epoch;        /* ms: the last acknowledged point */
    tdm_journal journal;
} tdm_resume;

typedef enum tdm_resume_event_kind {
    TDM_RESUME_HELLO,       /* the server answered the hello: hello, policy */
    TDM_RESUME_SENDING,     /* a synchronous call is about to be sent: call */
    TDM_RESUME_LOST,        /* the server died under a call: attempt (takeovers for it so far) */
    TDM_RESUME_RESENT,      /* a call sent again after a takeover was answered: call, args, res */
    TDM_RESUME_ANSWERED,    /* a synchronous call was answered: call, args, res */
    TDM_RESUME_POSTING,     /* a one-way call is about to be posted: call, args, piece */
    TDM_RESUME_POSTED,      /* a one-way call was posted (or is in the journal a takeover replayed) */
    TDM_RESUME_CHUNK_REUSE, /* the guest is about to refill data area chunk `chunk` */
    TDM_RESUME_COPY_DONE,   /* the guest saw the copy with slot, ticket complete (err: its error) */
} tdm_resume_event_kind;

typedef struct tdm_resume_event {
    tdm_resume_event_kind kind;
    const tdm_call_info *call;   /* its row of proto/calls.def */
    void *args, *res;
    const tdm_hello_res *hello;
    int policy;
    int attempt;
    uint32_t chunk, slot, ticket;
    int err;
    bool piece;                  /* POSTING: a piece of a copy posted in several */
} tdm_resume_event;

/* Unprotected, its journal stopped. */
void tdm_resume_init(tdm_resume *r, const tdm_resume_program *program);
/* The policy this process asks for (TANDEM_RESUME). */
int tdm_resume_policy_wanted(void);

/* The one entry point.  0; for TDM_RESUME_LOST: 0 when the session resumed
 * on its standby and the call is to be sent again, -1 when it is lost (c
 * then says so). */
int tdm_resume_on(tdm_resume *r, tdm_conn *c, const tdm_resume_event *e);

#endif
