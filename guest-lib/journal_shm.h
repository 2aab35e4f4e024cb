/* The journal's part for the shm transport (docs/takeover.md, "Over shm").
 *
 * Over shm a copy's call names bytes of the shared region by offset, and
 * those bytes change after the call is journaled.  These hooks keep every
 * journaled copy replayable with the bytes it had, and keep a replay from
 * writing over memory the program may have changed since (journal_shm.c
 * says how).  All are called with the connection lock held; over TCP they
 * find nothing to do. */
#ifndef TANDEM_GUEST_JOURNAL_SHM_H
#define TANDEM_GUEST_JOURNAL_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport.h"

/* A call was journaled at position pos as call number seq. */
void tdm_journal_shm_recorded(uint32_t proc, const void *args, uint64_t pos, uint64_t seq);
/* The guest is about to refill data area chunk `chunk`. */
void tdm_journal_shm_reuse(uint32_t chunk);
/* The guest saw the copy with this slot and ticket complete (err: its
 * error).  True when that proves the session idle and may_ack (an
 * acknowledged point is due): the caller then acknowledges the journal, as
 * after a synchronizing reply. */
bool tdm_journal_shm_copy_done(uint32_t slot, uint32_t ticket, int err, bool may_ack);
/* A synchronous call was answered; idle: the caller acknowledges the
 * journal next (its reply proves the session idle). */
void tdm_journal_shm_replied(uint32_t proc, bool idle);
/* The caller acknowledges the journal: every call so far is complete.  True
 * when the caller must also confirm at once that the server reached the new
 * epoch (pinned bytes still journaled, which the program may now rewrite). */
bool tdm_journal_shm_acknowledged(void);

size_t tdm_journal_shm_bytes(void);     /* snapshot bytes held */
void tdm_journal_shm_reset(void);       /* the journal stopped or restarted */

/* Replays the entry at position pos, one whose proc is TDM_JOURNAL_SKIP or
 * TDM_JOURNAL_INLINE; counts what it sends in *replayed.  TDM_T_OK or the
 * transport's error. */
int tdm_journal_shm_replay(tdm_transport *t, uint64_t pos, const uint8_t *entry, size_t *replayed);

#endif
