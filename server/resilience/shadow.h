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
 * that never got written means the shadowed write never ran either. */
#ifndef TANDEM_SERVER_SHADOW_H
#define TANDEM_SERVER_SHADOW_H

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
} tdm_shadow;

/* The session's marker table: one 8-byte marker per shadow slot, and the
 * area that holds module variables' shadows. */
typedef struct tdm_shadow_markers {
    uint64_t addr, mapped;
    tdm_bmem *mem;
    uint32_t nslots, used;
    uint32_t *free_slots;
    uint32_t nfree;
    uint64_t gaddr, gmapped, gused;   /* globals area */
    tdm_bmem *gmem;
    uint64_t epochs;                  /* epochs begun: picks a variable's copy */
} tdm_shadow_markers;

/* Before work on stream bs that may write r: copies r to its shadow if this
 * epoch has not yet.  cudaError_t. */
int tdm_shadow_before_write(struct tdm_session *s, tdm_range *r, tdm_bstream *bs);
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
/* Frees r's shadow (the allocation is going away). */
void tdm_shadow_drop(struct tdm_session *s, tdm_range *r);
/* Frees the marker table (session end). */
void tdm_shadow_release_markers(struct tdm_session *s);

#endif
