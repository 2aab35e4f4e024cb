/* Epoch shadows for exact resume (docs/takeover.md).
 *
 * An epoch begins at each point the guest acknowledged (TDM_EPOCH: all its
 * work so far is complete).  Before the first operation of an epoch that may
 * write an allocation (a copy or memset into it, or a kernel given a pointer
 * into it), the active server copies the allocation to its shadow, in stream
 * order, then writes epoch+1 into the shadow's marker slot.  Shadow memory
 * and the marker table are exported to the standby like any allocation.
 * After a crash the standby restores every shadow whose marker names the
 * guest's last acknowledged epoch: exactly the allocations that work after
 * that point may have changed, back to their state at that point.  A marker
 * that never got written means the shadowed write never ran either.
 *
 * A session's shadows are its takeover state's (takeover_state.h), kept by
 * the address of the range they shadow; the session core's range map knows
 * nothing of them. */
#ifndef TANDEM_RESILIENCE_SHADOW_H
#define TANDEM_RESILIENCE_SHADOW_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "range_map.h"

struct tdm_session;

typedef struct tdm_shadow {
    uint64_t addr, mapped;   /* hidden arena range holding the copy */
    tdm_bmem *mem;           /* mapped here (active) or imported (standby);
                              * NULL for a variable's shadow (the globals area's) */
    uint32_t slot;           /* marker slot */
    uint32_t slot_odd;       /* a variable's second copy, at addr + mapped */
    uint64_t taken;          /* epoch + 1 of the last copy; 0 = never */
    /* The range it shadows: where a restore writes, and how much. */
    uint64_t of_addr, of_size, of_dev;
    bool global;             /* a module's variable (two copies), not an allocation */
} tdm_shadow;

/* The session's marker table: one 8-byte marker per shadow slot, and the
 * area that holds module variables' shadows. */
typedef struct tdm_shadow_markers {
    uint64_t addr, mapped;
    tdm_bmem *mem;
    uint32_t nslots, used;
    uint32_t *free_slots;
    uint32_t nfree;
    size_t free_cap;
    uint64_t gaddr, gmapped, gused;   /* globals area */
    tdm_bmem *gmem;
    uint64_t epochs;                  /* epochs begun: picks a variable's copy */
} tdm_shadow_markers;

/* ---- the marker bookkeeping (shadow_markers.c: no device, unit-tested) ---- */

/* A free slot (one given back first, else the next never used); -1 when
 * the table is full. */
int tdm_markers_slot_take(tdm_shadow_markers *mk, uint32_t *slot);
/* Gives a slot back for reuse. */
void tdm_markers_slot_give(tdm_shadow_markers *mk, uint32_t slot);
/* A standby imported a shadow at `slot`: should the session become its
 * server's, new shadows must not take it. */
void tdm_markers_slot_in_use(tdm_shadow_markers *mk, uint32_t slot);
/* True when a write in epoch `epoch` must copy sh first (not yet this epoch). */
bool tdm_shadow_due(const tdm_shadow *sh, uint64_t epoch);
/* Marks sh copied in epoch `epoch`: the marker value the copy writes. */
uint64_t tdm_shadow_mark(tdm_shadow *sh, uint64_t epoch);
/* Which copy a restore at `epoch` puts back, given the marker table
 * `marks` (nmarks slots): true and the copy's address in *from, false when
 * the shadowed range was not written after that epoch. */
bool tdm_shadow_restore_from(const tdm_shadow *sh, const uint64_t *marks, uint32_t nmarks, uint64_t epoch,
                             uint64_t *from);
/* One past the highest slot sh uses. */
uint32_t tdm_shadow_top_slot(const tdm_shadow *sh);

/* ---- shadows of a session (shadow.c) ---- */

/* Before work on stream bs that may write r: copies r to its shadow if this
 * epoch has not yet.  cudaError_t. */
int tdm_shadow_before_write(struct tdm_session *s, const tdm_range *r, tdm_bstream *bs);
/* Before a kernel launch: shadows every allocation a pointer-sized
 * parameter points into. */
int tdm_shadow_before_launch(struct tdm_session *s, const tdm_param_info *pi, const void *params,
                             tdm_bstream *bs);
/* A new epoch (TDM_EPOCH): module variables cannot be seen being written,
 * so all of them are copied now, while the session is idle, into the copy
 * the previous epoch did not use; then the standby is told the epoch. */
int tdm_shadow_begin_epoch(struct tdm_session *s, uint64_t epoch);
/* Standby: puts back what work after `epoch` may have changed.  Returns how
 * many ranges, or -1 with *err set. */
int tdm_shadow_restore(struct tdm_session *s, uint64_t epoch, int *err);
/* The shadow of the range starting at range_addr, or NULL. */
tdm_shadow *tdm_shadow_of(struct tdm_session *s, uint64_t range_addr);
/* Records sh as the shadow of the range it names (of_addr): 0, or -1. */
int tdm_shadow_attach(struct tdm_session *s, tdm_shadow *sh);
/* Frees the shadow of the range starting at range_addr, if it has one
 * (the range is going away). */
void tdm_shadow_drop(struct tdm_session *s, uint64_t range_addr);
/* Frees the marker table only. */
void tdm_shadow_release_markers(struct tdm_session *s);

#endif
