#include "shadow.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "mirror_wire.h"
#include "session.h"
#include "tandem_rpc.h"

/* Hidden memory of the session (not in its range map, so the guest cannot
 * name it): a granularity multiple from the arena, mapped, and mirrored to
 * the standby with `type`. */
static int hidden_map(tdm_session *s, uint64_t size, uint64_t *addr, uint64_t *mapped, tdm_bmem **mem)
{
    tdm_server *srv = s->srv;

    if (tdm_arena_alloc(srv->arena, size, addr, mapped) != 0)
        return cudaErrorMemoryAllocation;
    int err = srv->ops->mem_map(srv->be, *addr, *mapped, mem);
    if (err)
        tdm_arena_free(srv->arena, *addr, *mapped);
    return err;
}

static void hidden_unmap(tdm_session *s, uint64_t addr, uint64_t mapped, tdm_bmem *mem)
{
    tdm_server *srv = s->srv;

    srv->ops->mem_unmap(srv->be, addr, mapped, mem);
    tdm_arena_free(srv->arena, addr, mapped);
    tdm_session_mirror(s, TDM_M_UNMAP, addr, 0, 0, 0, NULL, 0, -1);
}

static int markers_ready(tdm_session *s)
{
    tdm_shadow_markers *mk = &s->markers;
    int err;

    if (mk->mem)
        return 0;
    err = hidden_map(s, tdm_arena_granularity(s->srv->arena), &mk->addr, &mk->mapped, &mk->mem);
    if (err)
        return err;
    mk->nslots = (uint32_t)(mk->mapped / sizeof(uint64_t));
    tdm_session_mirror_mem(s, TDM_M_MARKERS, mk->mem, mk->addr, mk->mapped, 0, 0);
    return 0;
}

static int slot_take(tdm_shadow_markers *mk, uint32_t *slot)
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

static void slot_give(tdm_shadow_markers *mk, uint32_t slot)
{
    uint32_t *v = realloc(mk->free_slots, (mk->nfree + 1) * sizeof(*v));

    if (!v)
        return;                   /* the slot is lost, nothing else */
    mk->free_slots = v;
    v[mk->nfree++] = slot;
}

static int shadow_create(tdm_session *s, tdm_range *r)
{
    tdm_shadow *sh = calloc(1, sizeof(*sh));
    int err;

    if (!sh)
        return cudaErrorMemoryAllocation;
    err = markers_ready(s);
    if (!err && slot_take(&s->markers, &sh->slot) != 0)
        err = cudaErrorMemoryAllocation;
    if (!err) {
        err = hidden_map(s, r->mapped, &sh->addr, &sh->mapped, &sh->mem);
        if (err)
            slot_give(&s->markers, sh->slot);
    }
    if (err) {
        fprintf(stderr, "tandem-server: session %llu: no memory for the shadow of %#llx (%llu bytes): "
                        "exact resume falls back to replay for it\n",
                (unsigned long long)s->id, (unsigned long long)r->addr, (unsigned long long)r->mapped);
        free(sh);
        return err;
    }
    tdm_session_mirror_mem(s, TDM_M_SHADOW, sh->mem, sh->addr, sh->mapped, r->addr, sh->slot);
    r->shadow = sh;
    return 0;
}

int tdm_shadow_before_write(tdm_session *s, tdm_range *r, tdm_bstream *bs)
{
    const tdm_backend_ops *ops = s->srv->ops;
    uint64_t marker = s->epoch + 1;
    int err;

    if (s->resume_policy != TDM_RESUME_EXACT || r->kind != TDM_RANGE_ALLOC)
        return 0;
    if (r->shadow && r->shadow->taken == marker)
        return 0;
    if (!r->shadow && shadow_create(s, r) != 0)
        return 0;                 /* logged; the write itself goes on */
    err = ops->memcpy_dtod(s->srv->be, r->shadow->addr, r->addr, r->size, bs);
    if (!err)
        err = ops->memcpy_htod(s->srv->be, s->markers.addr + (uint64_t)r->shadow->slot * sizeof(marker), &marker,
                               sizeof(marker), bs);
    if (!err)
        r->shadow->taken = marker;
    return err;
}

int tdm_shadow_before_launch(tdm_session *s, const tdm_param_info *pi, const void *params, tdm_bstream *bs)
{
    if (s->resume_policy != TDM_RESUME_EXACT)
        return 0;
    /* Speculation from the arguments, as PhoenixOS does: any pointer-sized
     * parameter whose value falls inside an allocation may be written
     * through.  Pointers stored inside device memory are not seen. */
    for (uint32_t i = 0; i < pi->count; i++) {
        uint64_t v;
        if (pi->size[i] != sizeof(v))
            continue;
        memcpy(&v, (const uint8_t *)params + pi->offset[i], sizeof(v));
        tdm_range *r = tdm_range_map_find_mut(&s->ranges, v);
        if (!r)
            continue;
        int err = tdm_shadow_before_write(s, r, bs);
        if (err)
            return err;
    }
    return 0;
}

/* A variable's shadow: two copies carved from the session's globals area
 * (variables are small; one hidden mapping serves them all). */
static int global_shadow_create(tdm_session *s, tdm_range *r)
{
    tdm_shadow_markers *mk = &s->markers;
    uint64_t span = (r->size + 255) & ~255ull;
    tdm_shadow *sh;
    int err = markers_ready(s);

    if (err)
        return err;
    if (!mk->gmem) {
        err = hidden_map(s, tdm_arena_granularity(s->srv->arena), &mk->gaddr, &mk->gmapped, &mk->gmem);
        if (err)
            return err;
        tdm_session_mirror_mem(s, TDM_M_GLOBALS_AREA, mk->gmem, mk->gaddr, mk->gmapped, 0, 0);
    }
    if (2 * span > mk->gmapped - mk->gused) {
        fprintf(stderr, "tandem-server: session %llu: no room to shadow the variable at %#llx: exact resume "
                        "cannot restore it\n", (unsigned long long)s->id, (unsigned long long)r->addr);
        return cudaErrorMemoryAllocation;
    }
    sh = calloc(1, sizeof(*sh));
    if (!sh)
        return cudaErrorMemoryAllocation;
    if (slot_take(mk, &sh->slot) != 0 || slot_take(mk, &sh->slot_odd) != 0) {
        free(sh);
        return cudaErrorMemoryAllocation;
    }
    sh->addr = mk->gaddr + mk->gused;
    sh->mapped = span;
    mk->gused += 2 * span;
    tdm_session_mirror(s, TDM_M_GLOBAL_SHADOW, sh->addr, span, r->addr,
                       (uint64_t)sh->slot | (uint64_t)sh->slot_odd << 32, NULL, 0, -1);
    r->shadow = sh;
    return 0;
}

int tdm_shadow_begin_epoch(tdm_session *s, uint64_t epoch)
{
    const tdm_backend_ops *ops = s->srv->ops;
    uint64_t marker = epoch + 1;
    bool odd = (s->markers.epochs++ & 1) != 0;
    bool any = false;
    int err = 0;

    /* Only exact resume needs the variables' copies; every policy's standby
     * needs the epoch. */
    for (size_t i = 0; !err && s->resume_policy == TDM_RESUME_EXACT && i < s->ranges.n; i++) {
        tdm_range *r = &s->ranges.v[i];
        if (r->kind != TDM_RANGE_GLOBAL || (!r->shadow && global_shadow_create(s, r) != 0))
            continue;
        err = ops->memcpy_dtod(s->srv->be, r->shadow->addr + (odd ? r->shadow->mapped : 0), r->dev, r->size,
                               s->null_stream.bs);
        if (!err)
            err = ops->memcpy_htod(s->srv->be,
                                   s->markers.addr + (uint64_t)(odd ? r->shadow->slot_odd : r->shadow->slot) * 8,
                                   &marker, sizeof(marker), s->null_stream.bs);
        any = true;
    }
    /* Copied before the standby hears of the epoch: if this server dies in
     * between, the standby resumes at the previous epoch, whose copies the
     * other half still holds. */
    if (!err && any)
        err = ops->stream_synchronize(s->srv->be, s->null_stream.bs);
    if (!err)
        tdm_session_mirror(s, TDM_M_EPOCH, epoch, 0, 0, 0, NULL, 0, -1);
    return err;
}

int tdm_shadow_restore(tdm_session *s, uint64_t epoch, int *err)
{
    const tdm_backend_ops *ops = s->srv->ops;
    uint32_t top = 0;
    uint64_t *marks = NULL;
    int restored = 0;

    *err = 0;
    if (!s->markers.mem)
        return 0;
    for (size_t i = 0; i < s->ranges.n; i++) {
        const tdm_shadow *sh = s->ranges.v[i].shadow;
        if (sh && sh->slot + 1 > top)
            top = sh->slot + 1;
        if (sh && s->ranges.v[i].kind == TDM_RANGE_GLOBAL && sh->slot_odd + 1 > top)
            top = sh->slot_odd + 1;
    }
    if (top == 0 || top > s->markers.nslots)
        return 0;
    marks = malloc((size_t)top * sizeof(*marks));
    if (!marks) {
        *err = cudaErrorMemoryAllocation;
        return -1;
    }
    *err = ops->memcpy_dtoh_sync(s->srv->be, marks, s->markers.addr, (size_t)top * sizeof(*marks),
                                 s->null_stream.bs);
    for (size_t i = 0; !*err && i < s->ranges.n; i++) {
        tdm_range *r = &s->ranges.v[i];
        uint64_t from;
        if (!r->shadow)
            continue;
        if (marks[r->shadow->slot] == epoch + 1)
            from = r->shadow->addr;
        else if (r->kind == TDM_RANGE_GLOBAL && marks[r->shadow->slot_odd] == epoch + 1)
            from = r->shadow->addr + r->shadow->mapped;
        else
            continue;
        *err = ops->memcpy_dtod(s->srv->be, r->dev, from, r->size, s->null_stream.bs);
        restored++;
    }
    if (!*err)
        *err = ops->stream_synchronize(s->srv->be, s->null_stream.bs);
    free(marks);
    return *err ? -1 : restored;
}

void tdm_shadow_drop(tdm_session *s, tdm_range *r)
{
    tdm_shadow *sh = r->shadow;

    if (!sh)
        return;
    if (sh->mem)
        hidden_unmap(s, sh->addr, sh->mapped, sh->mem);
    else
        slot_give(&s->markers, sh->slot_odd);   /* a variable's: its area stays */
    slot_give(&s->markers, sh->slot);
    free(sh);
    r->shadow = NULL;
}

void tdm_shadow_release_markers(tdm_session *s)
{
    tdm_shadow_markers *mk = &s->markers;

    if (mk->gmem)
        hidden_unmap(s, mk->gaddr, mk->gmapped, mk->gmem);
    if (mk->mem)
        hidden_unmap(s, mk->addr, mk->mapped, mk->mem);
    free(mk->free_slots);
    memset(mk, 0, sizeof(*mk));
}
