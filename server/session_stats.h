/* What the control plane (issue 17, docs/node-agent.md) reads of a server's sessions: each
 * session's call count and a latency histogram of its calls, the placement key it was
 * admitted with, and the server's list of live sessions the control socket walks.
 *
 * The hot path is two clock reads and two relaxed atomic adds per call: a one-way call is
 * served in microseconds, and nothing here takes a lock on it.  The histogram is bounded
 * (TDM_LATENCY_BUCKETS counters, four per power of two of nanoseconds), so a session's
 * statistics never grow with its age. */
#ifndef TANDEM_SERVER_SESSION_STATS_H
#define TANDEM_SERVER_SESSION_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel_sampler.h"
#include "latency_hist.h"
#include "placement_key.h"

/* A placement key as the orchestrator gives it (docs/adr/0002-control-plane.md), with its NUL. */
#define TDM_PLACEMENT_KEY_MAX TDM_PLACEMENT_KEY_SIZE /* one rule for keys: proto/placement_key.h */


struct tdm_session;
struct tdm_server;

/* Placement keys of sessions that closed since the control socket's last stats: a guest that
 * leaves between two reports is never listed, and without this its placement would hold its
 * SMs until the orchestrator's reservation bound (H100 run of 2026-11-25).  Bounded: past
 * TDM_ENDED_KEYS_MAX the oldest is dropped, and that placement is released by the bound. */
#define TDM_ENDED_KEYS_MAX 64
typedef struct tdm_ended_keys {
    unsigned n;
    char key[TDM_ENDED_KEYS_MAX][TDM_PLACEMENT_KEY_MAX];
} tdm_ended_keys;

typedef struct tdm_session_stats {
    _Atomic uint64_t calls;                         /* calls served */
    _Atomic uint32_t latency[TDM_LATENCY_BUCKETS];  /* calls per latency bucket */
    uint64_t call_began_ns;                         /* the serving thread's alone */
    /* Owned by the reader under the server's sessions_lock: the histogram at its last
     * report, so that each report's percentiles are those of the calls since the one before. */
    uint32_t reported[TDM_LATENCY_BUCKETS];
    tdm_ksampler kernels;                           /* every 64th launch's time on the device */
    struct tdm_session *prev, *next;                /* the server's live sessions */
} tdm_session_stats;


/* Around a launch on bs (session.c): the sampled kernel latency (kernel_sampler.h), through
 * the backend's event ops.  begin answers the slot for end, -1 when the launch is not sampled
 * (a capturing stream is never sampled: the caller passes capturing). */
struct tdm_bstream;
int tdm_session_kernel_sample_begin(struct tdm_session *s, struct tdm_bstream *bs, bool capturing);
void tdm_session_kernel_sample_end(struct tdm_session *s, int slot, struct tdm_bstream *bs, int launch_err);
/* At the session's end, its work drained: the sampler's events go. */
void tdm_session_kernel_samples_release(struct tdm_session *s);

/* Around every served call (the RPC front's before_call and after_call). */
void tdm_session_stats_call_begins(struct tdm_session *s);
void tdm_session_stats_call_ends(struct tdm_session *s);

/* The server's list of live sessions: a session joins once created and leaves first thing
 * when destroyed, so a reader holding srv->sessions_lock may read any listed session. */
void tdm_server_sessions_init(struct tdm_server *srv);
void tdm_session_stats_join(struct tdm_session *s);
void tdm_session_stats_leave(struct tdm_session *s);
/* At a session's end (tdm_session_destroy): its placement key, if any, joins the ended keys. */
void tdm_session_stats_ended(struct tdm_session *s);
/* Hands the ended keys to fn one by one and forgets them; sessions_lock held by the caller. */
void tdm_server_ended_keys_drain_locked(struct tdm_server *srv, void (*fn)(void *ctx, const char *key), void *ctx);
/* A takeover swaps two sessions' states (tdm_session_take_over); the statistics and the
 * placement key are the connection's and are swapped back with this, both sessions out of
 * the list. */
void tdm_session_stats_swap(struct tdm_session *a, struct tdm_session *b);

/* The placement key the session's guest presented in HELLO (set under the sessions lock,
 * as the control socket reads it from another thread).  Keys longer than the limit are the
 * caller's to refuse; here they would be cut. */
void tdm_session_set_placement(struct tdm_session *s, const char *key);

#endif
