/* The marker table's bookkeeping, apart from any device: which slot a new
 * shadow takes, whether a write must copy first, which copy a restore puts
 * back.  shadow.c does the copies; tests/unit/test_shadow_markers.c checks
 * these rules row by row. */
#include "shadow.h"
#include "grow.h"

#include <stdlib.h>

int tdm_markers_slot_take(tdm_shadow_markers *mk, uint32_t *slot)
{
    if (mk->nfree) {
        *slot = mk->free_slots[--mk->nfree];
        return 0;
    }
    if (mk->used == mk->nslots)
        return -1;
    *slot = mk->used++;
    return 0;
}

void tdm_markers_slot_give(tdm_shadow_markers *mk, uint32_t slot)
{
    if (tdm_grow(&mk->free_slots, &mk->free_cap, (size_t)mk->nfree + 1, sizeof(*mk->free_slots), 16) != 0)
        return;                   /* the slot is lost, nothing else */
    mk->free_slots[mk->nfree++] = slot;
}

void tdm_markers_slot_in_use(tdm_shadow_markers *mk, uint32_t slot)
{
    if (slot + 1 > mk->used)
        mk->used = slot + 1;
}

/* A marker holds epoch + 1, so that 0 (a slot never written) names no
 * epoch at all. */
bool tdm_shadow_due(const tdm_shadow *sh, uint64_t epoch)
{
    return sh->taken != epoch + 1;
}

uint64_t tdm_shadow_mark(tdm_shadow *sh, uint64_t epoch)
{
    sh->taken = epoch + 1;
    return sh->taken;
}

bool tdm_shadow_restore_from(const tdm_shadow *sh, const uint64_t *marks, uint32_t nmarks, uint64_t epoch,
                             uint64_t *from)
{
    if (sh->slot < nmarks && marks[sh->slot] == epoch + 1) {
        *from = sh->addr;
        return true;
    }
    if (sh->global && sh->slot_odd < nmarks && marks[sh->slot_odd] == epoch + 1) {
        *from = sh->addr + sh->mapped;
        return true;
    }
    return false;
}

uint32_t tdm_shadow_top_slot(const tdm_shadow *sh)
{
    uint32_t top = sh->slot + 1;

    if (sh->global && sh->slot_odd + 1 > top)
        top = sh->slot_odd + 1;
    return top;
}
