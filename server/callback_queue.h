/* The due/done state machine of a session's host callbacks (issue 14,
 * docs/runtime-api.md "Host callbacks").  No locking and no device: the
 * session layer (session_callbacks.c) holds the lock and talks to the
 * backend; the unit test drives this table directly.
 *
 * An instance is one run of a host function on a stream:
 *
 *   add        -> QUEUED     (the stream has it; its earlier work is not done)
 *   due        QUEUED -> DUE (the stream reached it; status is its error)
 *   take_due   DUE -> TAKEN  (handed to the guest by a poll, once)
 *   done       TAKEN -> gone (the guest ran it; the stream may go on)
 *
 * Any other transition is refused, so a guest cannot release a stream
 * whose callback it was never given, nor report one done twice. */
#ifndef TANDEM_SERVER_CALLBACK_QUEUE_H
#define TANDEM_SERVER_CALLBACK_QUEUE_H

#include <stddef.h>
#include <stdint.h>

/* At most this many instances per session not yet reported done: more
 * would let one guest pin unbounded server memory and streams. */
#define TDM_CBQ_MAX 1024

typedef enum { TDM_CB_QUEUED, TDM_CB_DUE, TDM_CB_TAKEN } tdm_cb_state;

typedef struct tdm_cb_inst {
    uint64_t seq;        /* the session's number for this instance, from 1 */
    uint64_t fn;         /* the guest's key, handed back when due */
    int status;          /* DUE, TAKEN: the stream's error when it got here */
    tdm_cb_state state;
    void *hold;          /* the backend's hold on the stream (released at done) */
} tdm_cb_inst;

typedef struct tdm_cbq {
    tdm_cb_inst *v;      /* in the order they were added */
    size_t n, cap;
    uint64_t next_seq;
} tdm_cbq;

void tdm_cbq_init(tdm_cbq *q);
/* Frees the table (the caller has released every hold). */
void tdm_cbq_release(tdm_cbq *q);
/* A new QUEUED instance; cudaErrorLaunchOutOfResources at TDM_CBQ_MAX,
 * cudaErrorMemoryAllocation if the table cannot grow. */
int tdm_cbq_add(tdm_cbq *q, uint64_t fn, uint64_t *seq);
/* The instance, or NULL. */
tdm_cb_inst *tdm_cbq_find(tdm_cbq *q, uint64_t seq);
/* Forgets an instance whatever its state (its enqueue failed). */
void tdm_cbq_remove(tdm_cbq *q, uint64_t seq);
/* QUEUED -> DUE with status; -1 if seq is not QUEUED. */
int tdm_cbq_due(tdm_cbq *q, uint64_t seq, int status);
/* Up to max DUE instances, oldest first, become TAKEN and are copied to
 * out; returns how many. */
size_t tdm_cbq_take_due(tdm_cbq *q, tdm_cb_inst *out, size_t max);
/* TAKEN -> gone; *hold gets its hold.  cudaErrorInvalidValue for an
 * instance that is unknown (never added, already done, another
 * session's) or not yet handed to the guest. */
int tdm_cbq_done(tdm_cbq *q, uint64_t seq, void **hold);

#endif
