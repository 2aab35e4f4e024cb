#include "shadow.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "log.h"
#include "mirror_wire.h"
#include "session.h"
#include "takeover_state.h"
#include "tandem_rpc.h"

/* Hidden memory of the session (not in its range map, so the guest cannot
 * name it): a granularity multiple from the arena, mapped. */
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
    tdm_takeover_mirror(s, TDM_M_UNMAP, addr, 0, 0, 0, NULL, 0, -1);
}

static int markers_ready(tdm_session *s)
{
    tdm_shadow_markers *mk = &tdm_takeover(s)->markers;
    int err;

    if (mk->mem)
        return 0;
    err = hidden_map(s, tdm_arena_granularity(s->srv->arena), &mk->addr, &mk->mapped, &mk->mem);
    if (err)
        return err;
    mk->nslots = (uint32_t)(mk->mapped / sizeof(uint64_t));
    tdm_takeover_mirror_mem(s, TDM_M_MARKERS, mk->mem, mk->addr, mk->mapped, 0, 0);
    return 0;
}

tdm_shadow *tdm_shadow_of(tdm_session *s, uint64_t range_addr)
{
    const tdm_range *e = tdm_range_map_find(&tdm_takeover(s)->shadows, range_addr);

    return e && e->addr == range_addr ? e->backing : NULL;
}

int tdm_shadow_attach(tdm_session *s, tdm_shadow *sh)
{
    tdm_range e = { .addr = sh->of_addr, .size = sh->of_size, .mapped = sh->of_size,
                    .kind = sh->global ? TDM_RANGE_GLOBAL : TDM_RANGE_ALLOC, .backing = sh };

    return tdm_range_map_insert(&tdm_takeover(s)->shadows, &e);
}

/* A new shadow of r, named in the session's shadows. */
static tdm_shadow *shadow_new(tdm_session *s, const tdm_range *r)
{
    tdm_shadow *sh = calloc(1, sizeof(*sh));

    if (!sh)
        return NULL;
    sh->of_addr = r->addr;
    sh->of_size = r->size;
    sh->of_dev = tdm_session_range_dev(r);
    sh->global = r->kind == TDM_RANGE_GLOBAL;
    return sh;
}

static tdm_shadow *shadow_create(tdm_session *s, const tdm_range *r)
{
    tdm_shadow_markers *mk = &tdm_takeover(s)->markers;
    tdm_shadow *sh = shadow_new(s, r);
    int err = sh ? 0 : cudaErrorMemoryAllocation;

    if (!err)
        err = markers_ready(s);
    if (!err && tdm_markers_slot_take(mk, &sh->slot) != 0)
        err = cudaErrorMemoryAllocation;
    if (!err) {
        err = tdm_shadow_attach(s, sh) == 0 ? hidden_map(s, r->mapped, &sh->addr, &sh->mapped, &sh->mem)
                                            : cudaErrorMemoryAllocation;
        if (err) {
            tdm_range_map_remove(&tdm_takeover(s)->shadows, r->addr, NULL);
            tdm_markers_slot_give(mk, sh->slot);
        }
    }
    if (err) {
        tdm_log_session(s->id, "no memory for the shadow of %#llx (%llu bytes): exact resume falls back to "
                               "replay for it", (unsigned long long)r->addr, (unsigned long long)r->mapped);
        free(sh);
        return NULL;
    }
    tdm_takeover_mirror_mem(s, TDM_M_SHADOW, sh->mem, sh->addr, sh->mapped, r->addr, sh->slot);
    return sh;
}

int tdm_shadow_before_write(tdm_session *s, const tdm_range *r, tdm_bstream *bs)
{
    tdm_takeover_state *t = tdm_takeover(s);
    const tdm_backend_ops *ops = s->srv->ops;
    tdm_shadow *sh;
    uint64_t marker;
    int err;

    if (t->resume_policy != TDM_RESUME_EXACT || r->kind != TDM_RANGE_ALLOC)
        return 0;
    sh = tdm_shadow_of(s, r->addr);
    if (sh && !tdm_shadow_due(sh, t->epoch))
        return 0;
    if (!sh && !(sh = shadow_create(s, r)))
        return 0;                 /* logged; the write itself goes on */
    marker = t->epoch + 1;
    err = ops->memcpy_dtod(s->srv->be, sh->addr, r->addr, r->size, bs);
    if (!err)
        err = ops->memcpy_htod(s->srv->be, t->markers.addr + (uint64_t)sh->slot * sizeof(marker), &marker,
                               sizeof(marker), bs);
    if (!err)
        tdm_shadow_mark(sh, t->epoch);
    return err;
}

int tdm_shadow_before_launch(tdm_session *s, const tdm_param_info *pi, const void *params, tdm_bstream *bs)
{
    if (tdm_takeover(s)->resume_policy != TDM_RESUME_EXACT)
        return 0;
    /* Speculation from the arguments, as PhoenixOS does: any pointer-sized
     * parameter whose value falls inside an allocation may be written
     * through.  Pointers stored inside device memory are not seen. */
    for (uint32_t i = 0; i < pi->count; i++) {
        uint64_t v;
        if (pi->size[i] != sizeof(v))
            continue;
        memcpy(&v, (const uint8_t *)params + pi->offset[i], sizeof(v));
        const tdm_range *r = tdm_range_map_find(&s->ranges, v);
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
static tdm_shadow *global_shadow_create(tdm_session *s, const tdm_range *r)
{
    tdm_shadow_markers *mk = &tdm_takeover(s)->markers;
    uint64_t span = (r->size + 255) & ~255ull;
    tdm_shadow *sh;

    if (markers_ready(s) != 0)
        return NULL;
    if (!mk->gmem) {
        if (hidden_map(s, tdm_arena_granularity(s->srv->arena), &mk->gaddr, &mk->gmapped, &mk->gmem) != 0)
            return NULL;
        tdm_takeover_mirror_mem(s, TDM_M_GLOBALS_AREA, mk->gmem, mk->gaddr, mk->gmapped, 0, 0);
    }
    if (2 * span > mk->gmapped - mk->gused) {
        tdm_log_session(s->id, "no room to shadow the variable at %#llx: exact resume cannot restore it",
                        (unsigned long long)r->addr);
        return NULL;
    }
    sh = shadow_new(s, r);
    if (!sh)
        return NULL;
    if (tdm_markers_slot_take(mk, &sh->slot) != 0 || tdm_markers_slot_take(mk, &sh->slot_odd) != 0 ||
        tdm_shadow_attach(s, sh) != 0) {
        free(sh);
        return NULL;
    }
    sh->addr = mk->gaddr + mk->gused;
    sh->mapped = span;
    mk->gused += 2 * span;
    tdm_takeover_mirror(s, TDM_M_GLOBAL_SHADOW, sh->addr, span, r->addr,
                        (uint64_t)sh->slot | (uint64_t)sh->slot_odd << 32, NULL, 0, -1);
    return sh;
}

int tdm_shadow_begin_epoch(tdm_session *s, uint64_t epoch)
{
    tdm_takeover_state *t = tdm_takeover(s);
    const tdm_backend_ops *ops = s->srv->ops;
    uint64_t marker = epoch + 1;
    bool odd = (t->markers.epochs++ & 1) != 0;
    bool any = false;
    int err = 0;

    /* Only exact resume needs the variables' copies; every policy's standby
     * needs the epoch. */
    for (size_t i = 0; !err && t->resume_policy == TDM_RESUME_EXACT && i < s->ranges.n; i++) {
        const tdm_range *r = &s->ranges.v[i];
        tdm_shadow *sh;
        if (r->kind != TDM_RANGE_GLOBAL)
            continue;
        sh = tdm_shadow_of(s, r->addr);
        if (!sh && !(sh = global_shadow_create(s, r)))
            continue;
        err = ops->memcpy_dtod(s->srv->be, sh->addr + (odd ? sh->mapped : 0), sh->of_dev, r->size,
                               s->null_stream.bs);
        if (!err)
            err = ops->memcpy_htod(s->srv->be, t->markers.addr + (uint64_t)(odd ? sh->slot_odd : sh->slot) * 8,
                                   &marker, sizeof(marker), s->null_stream.bs);
        any = true;
    }
    /* Copied before the standby hears of the epoch: if this server dies in
     * between, the standby resumes at the previous epoch, whose copies the
     * other half still holds. */
    if (!err && any)
        err = ops->stream_synchronize(s->srv->be, s->null_stream.bs);
    if (!err)
        tdm_takeover_mirror(s, TDM_M_EPOCH, epoch, 0, 0, 0, NULL, 0, -1);
    return err;
}

int tdm_shadow_restore(tdm_session *s, uint64_t epoch, int *err)
{
    tdm_takeover_state *t = tdm_takeover(s);
    const tdm_backend_ops *ops = s->srv->ops;
    uint32_t top = 0;
    uint64_t *marks = NULL;
    int restored = 0;

    *err = 0;
    if (!t->markers.mem)
        return 0;
    for (size_t i = 0; i < t->shadows.n; i++) {
        uint32_t st = tdm_shadow_top_slot(t->shadows.v[i].backing);
        if (st > top)
            top = st;
    }
    if (top == 0 || top > t->markers.nslots)
        return 0;
    marks = malloc((size_t)top * sizeof(*marks));
    if (!marks) {
        *err = cudaErrorMemoryAllocation;
        return -1;
    }
    *err = ops->memcpy_dtoh_sync(s->srv->be, marks, t->markers.addr, (size_t)top * sizeof(*marks),
                                 s->null_stream.bs);
    for (size_t i = 0; !*err && i < t->shadows.n; i++) {
        const tdm_shadow *sh = t->shadows.v[i].backing;
        uint64_t from;
        if (!tdm_shadow_restore_from(sh, marks, top, epoch, &from))
            continue;
        *err = ops->memcpy_dtod(s->srv->be, sh->of_dev, from, sh->of_size, s->null_stream.bs);
        restored++;
    }
    if (!*err)
        *err = ops->stream_synchronize(s->srv->be, s->null_stream.bs);
    free(marks);
    return *err ? -1 : restored;
}

void tdm_shadow_drop(tdm_session *s, uint64_t range_addr)
{
    tdm_takeover_state *t = tdm_takeover(s);
    tdm_shadow *sh = tdm_shadow_of(s, range_addr);

    if (!sh)
        return;
    tdm_range_map_remove(&t->shadows, range_addr, NULL);
    if (sh->mem)
        hidden_unmap(s, sh->addr, sh->mapped, sh->mem);
    else
        tdm_markers_slot_give(&t->markers, sh->slot_odd);   /* a variable's: its area stays */
    tdm_markers_slot_give(&t->markers, sh->slot);
    free(sh);
}

void tdm_shadow_release_markers(tdm_session *s)
{
    tdm_shadow_markers *mk = &tdm_takeover(s)->markers;

    if (mk->gmem)
        hidden_unmap(s, mk->gaddr, mk->gmapped, mk->gmem);
    if (mk->mem)
        hidden_unmap(s, mk->addr, mk->mapped, mk->mem);
    free(mk->free_slots);
    memset(mk, 0, sizeof(*mk));
}
