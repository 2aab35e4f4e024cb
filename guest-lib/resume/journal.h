/* The guest's journal for takeover (docs/takeover.md).
 *
 * While a standby protects the session, every one-way call since the last
 * acknowledged point is kept, XDR-encoded, so it can be sent again to the
 * standby.  A point is acknowledged when a synchronous call proves the
 * session idle (cudaDeviceSynchronize, a legacy-stream cudaMemcpy with no
 * non-blocking stream in use, a synchronize of the only stream used, ...):
 * the server is told (TDM_EPOCH) so that it starts a new shadow epoch, and
 * the calls before it are dropped once a later reply proves the server got
 * that far.  Until then a takeover may resume at either epoch: the standby
 * says which one the active reached.
 *
 * One journal per client (client.c holds it in its resume state); every
 * function here is called with the client's lock held. */
#ifndef TANDEM_GUEST_JOURNAL_H
#define TANDEM_GUEST_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "calls.h"
#include "journal_shm.h"
#include "transport.h"

/* Two segments: [0, older_len) holds the calls up to the epoch last sent
 * (`pending`), which the server may not have reached yet; the rest came
 * after it.  Any reply of the server proves it reached `pending` (calls are
 * served in order), and the older segment goes. */
typedef struct tdm_journal {
    bool on;
    uint8_t *buf;              /* entries: u32 proc, u32 len, len XDR bytes */
    size_t len, cap, older_len, n;
    uint64_t base;             /* position of buf[0]: bytes dropped so far */
    uint64_t seq, confirmed, pending;
    uint64_t only_stream;      /* the one stream used since the epoch */
    bool multi_stream, nonblocking_used;
    uint64_t *nonblocking;     /* handles of non-blocking streams */
    size_t n_nonblocking, cap_nonblocking;
    tdm_journal_shm shm;       /* the shm transport's part (journal_shm.h) */
} tdm_journal;

/* An empty, stopped journal.  region: the shm transport's shared region,
 * or NULL over another transport (it stays for the process's life). */
void tdm_journal_init(tdm_journal *j, const struct tdm_shm_region *region);

void tdm_journal_stop(tdm_journal *j);
/* Starts (again) with nothing journaled: every call up to `epoch` is
 * complete and the server's standby starts from there. */
void tdm_journal_restart(tdm_journal *j, uint64_t epoch);
/* After a takeover resumed at `epoch` (the confirmed or the pending one)
 * and the journal after it was replayed: calls up to epoch are dropped, the
 * rest stay until the next acknowledged point. */
void tdm_journal_resumed(tdm_journal *j, uint64_t epoch);
bool tdm_journal_active(const tdm_journal *j);

/* Keeps a one-way call, encoded as its row of proto/calls.def says.  -1 when
 * out of memory (the journal then stops:
 * the session is no longer protected, and says so). */
int tdm_journal_record(tdm_journal *j, const tdm_call_info *call, void *args);
/* Numbers a synchronous call; returns its number. */
uint64_t tdm_journal_next_call(tdm_journal *j);
/* After a synchronous call answered with err: true when it proves every
 * journaled call complete, i.e. the caller should acknowledge (TDM_EPOCH
 * with tdm_journal_seq()) and tdm_journal_acknowledge(). */
/* Any reply: the server has seen the last TDM_EPOCH. */
void tdm_journal_confirm(tdm_journal *j);
bool tdm_journal_proves_idle(tdm_journal *j, uint32_t proc, const void *args, int err);
void tdm_journal_acknowledge(tdm_journal *j);
/* A stream the guest created, so idleness knows whether it is non-blocking. */
void tdm_journal_stream_created(tdm_journal *j, uint64_t handle, unsigned flags);

uint64_t tdm_journal_seq(const tdm_journal *j);       /* calls numbered so far */
uint64_t tdm_journal_confirmed(const tdm_journal *j); /* the last epoch the server is known to have seen */
uint64_t tdm_journal_pending(const tdm_journal *j);   /* the last epoch sent */
size_t tdm_journal_bytes(tdm_journal *j);
bool tdm_journal_empty(const tdm_journal *j);

/* Entries are named by their position: bytes journaled since the start,
 * which never changes while an entry is kept.  The shm transport's part
 * (journal_shm.h) edits entries in place through these. */
#define TDM_JOURNAL_SKIP 0x7fff0001u    /* proc of an entry the replay leaves out */
#define TDM_JOURNAL_INLINE 0x7fff0002u  /* proc of an shm copy whose bytes journal_shm.c holds */
uint64_t tdm_journal_base(const tdm_journal *j);        /* position of the first entry still kept */
/* The entry at position pos (u32 proc, u32 len, then len XDR bytes), or
 * NULL once it was dropped. */
uint8_t *tdm_journal_entry(tdm_journal *j, uint64_t pos);

/* Sends to t (a standby that resumed the session at `epoch`, the confirmed
 * or the pending one) every journaled call after it, in order; how many in
 * *replayed.  TDM_T_OK or the transport's error. */
int tdm_journal_replay(tdm_journal *j, tdm_transport *t, uint64_t epoch, size_t *replayed);

#endif
