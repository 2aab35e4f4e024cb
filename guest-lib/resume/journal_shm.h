/* The journal's part for the shm transport (docs/takeover.md, "Over shm").
 *
 * Over shm a copy's call names bytes of the shared region by offset, and
 * those bytes change after the call is journaled.  These hooks keep every
 * journaled copy replayable with the bytes it had, and keep a replay from
 * writing over memory the program may have changed since (journal_shm.c
 * says how).  The state is a member of the journal (journal.h), which is
 * passed to every function; all are called with the client's lock held.
 * Over TCP (no region) they find nothing to do. */
#ifndef TANDEM_GUEST_JOURNAL_SHM_H
#define TANDEM_GUEST_JOURNAL_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm_region.h"
#include "transport.h"

struct tdm_journal;

typedef struct tdm_journal_positions {
    uint64_t *v;
    size_t n, cap;
} tdm_journal_positions;

typedef struct tdm_journal_slot_copy {    /* the newest journaled copy naming a completion slot */
    uint64_t pos, seq;
    uint32_t ticket;
    bool set;
} tdm_journal_slot_copy;

typedef struct tdm_journal_snapshot {     /* the bytes of an INLINE entry: [off, off+len) of the store */
    uint64_t pos, off, len;
} tdm_journal_snapshot;

typedef struct tdm_journal_shm {
    const tdm_shm_region *region;       /* NULL over another transport */
    tdm_journal_slot_copy slots[TDM_SHM_MAX_SLOTS];
    uint64_t owner[TDM_SHM_MAX_SLOTS];  /* per chunk: the host-to-device copy whose bytes it holds */
    bool owned[TDM_SHM_MAX_SLOTS];
    tdm_journal_positions dtoh;         /* device-to-host copies not known done, in order */
    tdm_journal_positions pinned;       /* host-to-device copies from pinned memory, bytes not kept */
    tdm_journal_snapshot *snaps;
    size_t nsnaps, capsnaps;
    /* Snapshots are appended to one store that empties once none is left
     * (every acknowledgement): its memory is reused, as the journal's own
     * buffer is, rather than allocated and faulted in per snapshot. */
    uint8_t *store;
    uint64_t store_len, store_cap;
    uint64_t swept;                     /* journal base at the last sweep */
} tdm_journal_shm;

/* A call was journaled at position pos as call number seq. */
void tdm_journal_shm_recorded(struct tdm_journal *j, uint32_t proc, const void *args, uint64_t pos, uint64_t seq);
/* The guest is about to refill data area chunk `chunk`. */
void tdm_journal_shm_reuse(struct tdm_journal *j, uint32_t chunk);
/* The guest saw the copy with this slot and ticket complete (err: its
 * error).  True when that proves the session idle and may_ack (an
 * acknowledged point is due): the caller then acknowledges the journal, as
 * after a synchronizing reply. */
bool tdm_journal_shm_copy_done(struct tdm_journal *j, uint32_t slot, uint32_t ticket, int err, bool may_ack);
/* A synchronous call was answered; idle: the caller acknowledges the
 * journal next (its reply proves the session idle). */
void tdm_journal_shm_replied(struct tdm_journal *j, uint32_t proc, bool idle);
/* The caller acknowledges the journal: every call so far is complete.  True
 * when the caller must also confirm at once that the server reached the new
 * epoch (pinned bytes still journaled, which the program may now rewrite). */
bool tdm_journal_shm_acknowledged(struct tdm_journal *j);

size_t tdm_journal_shm_bytes(struct tdm_journal *j);     /* snapshot bytes held */
/* The journal stopped or restarted: nothing kept (the region stays). */
void tdm_journal_shm_reset(struct tdm_journal *j);

/* Replays the entry at position pos, one whose proc is TDM_JOURNAL_SKIP or
 * TDM_JOURNAL_INLINE; counts what it sends in *replayed.  TDM_T_OK or the
 * transport's error. */
int tdm_journal_shm_replay(struct tdm_journal *j, tdm_transport *t, uint64_t pos, const uint8_t *entry, size_t *replayed);

#endif
