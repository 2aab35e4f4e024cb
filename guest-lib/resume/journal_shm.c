/* The journal's part for the shm transport.
 *
 * Over shm a copy's call names bytes of the shared region, and those bytes
 * change after the call is journaled: the guest refills a data area chunk
 * for its next pageable copy, the server writes device-to-host copies into
 * the region, the program rewrites its pinned buffers.  A replay must still
 * send each host-to-device copy the bytes it had, and must not write a
 * device-to-host result over memory the program may have changed since.
 * Entries are edited in place to keep both true:
 *
 *  - Host-to-device from a chunk: the chunk keeps the bytes until the guest
 *    refills it, or a device-to-host copy is sent into it.  Only then, and
 *    only if the entry is still journaled, are its bytes copied into the
 *    journal (the entry becomes INLINE and is replayed as TDM_MEMCPY_HTOD,
 *    as over TCP).  A program whose journal is acknowledged before a chunk
 *    comes round again copies nothing.
 *  - Host-to-device from pinned memory: the program may rewrite its buffer
 *    once it may know the copy done.  The bytes are kept at every point
 *    where it may (a reply to a call that waits for or reports the device's
 *    progress without acknowledging the journal, a synchronous copy's
 *    completion) and before a device-to-host copy is sent into them.  A
 *    synchronous upload of ACK_UPLOAD_MIN or more that proves the session
 *    idle acknowledges the journal instead.
 *  - An acknowledgement while region bytes are journaled (pinned uploads,
 *    chunks not yet kept) is confirmed at once (journal_shm.h), so that no
 *    epoch the standby could fall back to still needs them.
 *  - Device-to-host (into a chunk or pinned memory): the server finishes one
 *    before it serves its next call (the backend's memcpy_dtoh_sync returns
 *    once the bytes are there), so any later reply, or a later copy's
 *    completion, proves it done: its bytes are delivered, and it becomes
 *    SKIP.  One not known done is replayed: the program cannot have touched
 *    its destination yet.
 *  - Completion slots: once the guest saw a copy's ticket, its entry loses
 *    the slot, so a replay never writes an older ticket over one the guest
 *    waits for.  The copies a replay completes are the ones not seen yet,
 *    each the newest of its slot.
 *
 * Entries are named by journal position (journal.h); what refers to dropped
 * entries is swept lazily.  Every function runs under the client's lock. */
#include "journal_shm.h"

#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "journal.h"
#include "log.h"
#include "tandem_rpc.h"
#include "grow.h"

/* A synchronous pinned upload at least this big acknowledges the journal
 * (when it proves the session idle) instead of having its bytes kept. */
#define ACK_UPLOAD_MIN ((uint64_t)1 << 20)


static void out_of_memory(tdm_journal *j)
{
    tdm_log("out of memory for the takeover journal: this session is no longer protected");
    tdm_journal_stop(j);          /* resets the shm part: callers return at once */
}

static bool push(tdm_journal_positions *p, uint64_t pos)
{
    if (tdm_grow(&p->v, &p->cap, p->n + 1, sizeof(*p->v), 64) != 0)
        return false;
    p->v[p->n++] = pos;
    return true;
}

static void prune(tdm_journal_positions *p, uint64_t base)
{
    size_t k = 0;

    for (size_t i = 0; i < p->n; i++)
        if (p->v[i] >= base)
            p->v[k++] = p->v[i];
    p->n = k;
}

static uint32_t proc_of(const uint8_t *e)
{
    uint32_t p;

    memcpy(&p, e, sizeof(p));
    return p;
}

static void set_proc(uint8_t *e, uint32_t p)
{
    memcpy(e, &p, sizeof(p));
}

/* An entry's arguments are a tdm_shm_copy_args, fixed in size: it can be
 * decoded and encoded again in place. */
static bool decode(const uint8_t *e, tdm_shm_copy_args *a)
{
    uint32_t len;
    bool ok;
    XDR x;

    memcpy(&len, e + 4, sizeof(len));
    xdrmem_create(&x, (char *)e + 8, len, XDR_DECODE);
    ok = xdr_tdm_shm_copy_args(&x, a);
    xdr_destroy(&x);
    return ok;
}

static void encode(uint8_t *e, tdm_shm_copy_args *a)
{
    uint32_t len;
    XDR x;

    memcpy(&len, e + 4, sizeof(len));
    xdrmem_create(&x, (char *)e + 8, len, XDR_ENCODE);
    (void)xdr_tdm_shm_copy_args(&x, a);
    xdr_destroy(&x);
}

/* The entry at pos if it is still journaled as `proc`. */
static uint8_t *entry_if(tdm_journal *j, uint64_t pos, uint32_t proc)
{
    uint8_t *e = tdm_journal_entry(j, pos);

    return e && proc_of(e) == proc ? e : NULL;
}

/* The data area chunk holding all of [off, off+len), or -1 (pinned memory). */
static int chunk_of(const tdm_shm_region *r, uint64_t off, uint64_t len)
{
    const tdm_shm_geom *g = &r->g;
    uint64_t in, k;

    if (off < g->data_off || off - g->data_off >= g->data_size)
        return -1;
    in = off - g->data_off;
    k = in / g->chunk;
    return len <= g->chunk - (in - k * g->chunk) ? (int)k : -1;
}

/* Forgets what refers to entries the journal dropped. */
static void sweep(tdm_journal *j)
{
    tdm_journal_shm *S = &j->shm;
    uint64_t base = tdm_journal_base(j);
    size_t k = 0;

    if (base == S->swept)
        return;
    S->swept = base;
    for (size_t i = 0; i < S->nsnaps; i++)
        if (S->snaps[i].pos >= base)
            S->snaps[k++] = S->snaps[i];
    S->nsnaps = k;
    if (k == 0)
        S->store_len = 0;
    prune(&S->dtoh, base);
    prune(&S->pinned, base);
    for (unsigned i = 0; i < TDM_SHM_MAX_SLOTS; i++) {
        S->slots[i].set &= S->slots[i].pos >= base;
        S->owned[i] &= S->owner[i] >= base;
    }
}

/* Copies the bytes of the host-to-device copy at pos into the journal; the
 * entry becomes INLINE.  -1 when out of memory (the journal stopped). */
static int keep_bytes(tdm_journal *j, uint64_t pos)
{
    tdm_journal_shm *S = &j->shm;
    const tdm_shm_region *r = S->region;
    uint8_t *e = entry_if(j, pos, TDM_SHM_HTOD);
    tdm_shm_copy_args a;

    /* A span outside the region fails on the server too; replayed as it is,
     * it fails again the same way. */
    if (!e || !r || !decode(e, &a) || a.offset > r->g.size || a.size > r->g.size - a.offset)
        return 0;
    if (tdm_grow(&S->snaps, &S->capsnaps, S->nsnaps + 1, sizeof(*S->snaps), 16) != 0)
        goto oom;
    if (tdm_grow(&S->store, &S->store_cap, S->store_len + a.size, 1, 1 << 20) != 0)
        goto oom;
    memcpy(S->store + S->store_len, r->base + a.offset, a.size);
    S->snaps[S->nsnaps++] = (tdm_journal_snapshot){ pos, S->store_len, a.size };
    S->store_len += a.size;
    set_proc(e, TDM_JOURNAL_INLINE);
    return 0;
oom:
    out_of_memory(j);
    return -1;
}

/* The guest or the server is about to write chunk c: the copy whose bytes
 * it holds keeps them. */
static int keep_chunk(tdm_journal *j, uint32_t c)
{
    tdm_journal_shm *S = &j->shm;

    if (c >= TDM_SHM_MAX_SLOTS || !S->owned[c])
        return 0;
    S->owned[c] = false;
    return keep_bytes(j, S->owner[c]);
}

/* Keeps the bytes of the pinned host-to-device copies still journaled:
 * all of them, or those overlapping [off, off+len).  One still waiting for
 * its own completion is left to it (the program cannot rewrite its source
 * before the copy returns).  -1 when the journal stopped. */
static int keep_pinned(tdm_journal *j, bool all, uint64_t off, uint64_t len)
{
    tdm_journal_shm *S = &j->shm;
    size_t k = 0;

    for (size_t i = 0; i < S->pinned.n; i++) {
        uint64_t pos = S->pinned.v[i];
        uint8_t *e = entry_if(j, pos, TDM_SHM_HTOD);
        tdm_shm_copy_args a;

        if (!e || !decode(e, &a))
            continue;             /* kept already, or dropped */
        bool hit = all || (a.offset < off + len && off < a.offset + a.size);
        if (hit && a.slot == TDM_SHM_NO_SLOT) {
            if (keep_bytes(j, pos) != 0)
                return -1;
            continue;
        }
        S->pinned.v[k++] = pos;
    }
    S->pinned.n = k;
    return 0;
}

/* Device-to-host copies up to position upto are done, their bytes where the
 * program reads them: a replay must not write them again. */
static void dtoh_done(tdm_journal *j, uint64_t upto)
{
    tdm_journal_shm *S = &j->shm;
    size_t k = 0;

    for (size_t i = 0; i < S->dtoh.n; i++) {
        uint64_t pos = S->dtoh.v[i];
        uint8_t *e;

        if (pos > upto) {
            S->dtoh.v[k++] = pos;
            continue;
        }
        if ((e = entry_if(j, pos, TDM_SHM_DTOH)))
            set_proc(e, TDM_JOURNAL_SKIP);
    }
    S->dtoh.n = k;
}

void tdm_journal_shm_recorded(tdm_journal *j, uint32_t proc, const void *args, uint64_t pos, uint64_t seq)
{
    tdm_journal_shm *S = &j->shm;
    const tdm_shm_copy_args *a = args;
    const tdm_shm_region *r;
    int chunk;

    if ((proc != TDM_SHM_HTOD && proc != TDM_SHM_DTOH) || !(r = S->region))
        return;
    sweep(j);
    chunk = chunk_of(r, a->offset, a->size);
    if (proc == TDM_SHM_DTOH) {
        /* The server will write these bytes: journaled copies reading them
         * keep their own first. */
        if ((chunk >= 0 ? keep_chunk(j, (uint32_t)chunk) : keep_pinned(j, false, a->offset, a->size)) != 0)
            return;
        if (!push(&S->dtoh, pos))
            goto oom;
    } else if (chunk >= 0) {
        S->owner[chunk] = pos;     /* the guest kept the previous owner's bytes before refilling */
        S->owned[chunk] = true;
    } else if (!push(&S->pinned, pos)) {
        goto oom;
    }
    if (a->slot < TDM_SHM_MAX_SLOTS)
        S->slots[a->slot] = (tdm_journal_slot_copy){ pos, seq, a->ticket, true };
    return;
oom:
    out_of_memory(j);
}

void tdm_journal_shm_reuse(tdm_journal *j, uint32_t chunk)
{
    sweep(j);
    keep_chunk(j, chunk);
}

/* As a legacy-stream cudaMemcpy to the host over TCP: the server
 * synchronized the session's null stream, which waits for every blocking
 * stream (journal.c decides). */
static bool proves_idle(tdm_journal *j, uint64_t stream, int err)
{
    tdm_memcpy_dtoh_args d = { .stream = stream };

    return tdm_journal_proves_idle(j, TDM_MEMCPY_DTOH, &d, err);
}

bool tdm_journal_shm_copy_done(tdm_journal *j, uint32_t slot, uint32_t ticket, int err, bool may_ack)
{
    tdm_journal_shm *S = &j->shm;
    const tdm_shm_region *r = S->region;
    tdm_shm_copy_args a;
    tdm_journal_slot_copy c;
    uint32_t proc;
    uint8_t *e;

    if (!r || slot >= TDM_SHM_MAX_SLOTS)
        return false;
    sweep(j);
    c = S->slots[slot];
    if (!c.set || c.ticket != ticket || !(e = tdm_journal_entry(j, c.pos)) || !decode(e, &a))
        return false;             /* acknowledged meanwhile: nothing of it is journaled */
    S->slots[slot].set = false;
    proc = proc_of(e);
    /* Calls are served in order: every device-to-host copy up to this one
     * is done (this one too, if it is one). */
    dtoh_done(j, c.pos);
    /* The end of a synchronous copy on the legacy stream that proves the
     * session idle, as a legacy-stream copy to the host does over TCP.  A
     * pinned upload acknowledges only when it is big: keeping a small one's
     * bytes costs less than the shadow copies a new epoch brings. */
    bool idle = may_ack && c.seq == tdm_journal_seq(j) && proves_idle(j, a.stream, err);
    if (proc == TDM_SHM_HTOD) {
        a.slot = TDM_SHM_NO_SLOT;
        encode(e, &a);
        if (chunk_of(r, a.offset, a.size) >= 0)
            return false;         /* a chunk of a pageable copy: the program learns nothing yet */
        idle &= a.size >= ACK_UPLOAD_MIN;
    }
    if (idle) {
        /* The last epoch was sent before this copy, so the server reached
         * it too: confirmed, as a reply would (acknowledging needs it). */
        tdm_journal_confirm(j);
        return true;
    }
    /* It may rewrite pinned sources now, this copy's too (no longer
     * waiting for its slot, it is kept with the others). */
    keep_pinned(j, true, 0, 0);
    return false;
}

/* The row's PROGRESS column: may the reply tell the program its earlier
 * work progressed (so it may rewrite what that work reads)?  A procedure
 * the table does not have is taken to show it. */
static bool observes(uint32_t proc)
{
    const tdm_call_info *call = tdm_call_find(proc);

    return !call || call->progress == TDM_PROGRESS_SHOWN;
}

void tdm_journal_shm_replied(tdm_journal *j, uint32_t proc, bool idle)
{
    tdm_journal_shm *S = &j->shm;

    if (S->dtoh.n == 0 && S->pinned.n == 0)
        return;
    sweep(j);
    dtoh_done(j, UINT64_MAX);
    if (!idle && observes(proc))
        keep_pinned(j, true, 0, 0);
}

bool tdm_journal_shm_acknowledged(tdm_journal *j)
{
    tdm_journal_shm *S = &j->shm;
    bool owned = false;

    sweep(j);
    dtoh_done(j, UINT64_MAX);        /* every call so far is complete */
    if (keep_pinned(j, false, 0, 0) != 0)   /* only forgets the entries kept already */
        return false;
    for (unsigned i = 0; i < TDM_SHM_MAX_SLOTS; i++)
        owned |= S->owned[i] && entry_if(j, S->owner[i], TDM_SHM_HTOD) != NULL;
    /* Region bytes journaled before the new epoch: one round trip now is
     * cheaper than keeping them when the chunk or the buffer is reused. */
    return S->pinned.n > 0 || owned;
}

size_t tdm_journal_shm_bytes(tdm_journal *j)
{
    tdm_journal_shm *S = &j->shm;

    sweep(j);
    return (size_t)S->store_len;
}

void tdm_journal_shm_reset(tdm_journal *j)
{
    tdm_journal_shm *S = &j->shm;

    free(S->store);
    free(S->snaps);
    free(S->dtoh.v);
    const tdm_shm_region *region = S->region;

    free(S->pinned.v);
    memset(S, 0, sizeof(*S));
    S->region = region;
    S->swept = tdm_journal_base(j);
}

int tdm_journal_shm_replay(tdm_journal *j, tdm_transport *t, uint64_t pos, const uint8_t *entry, size_t *replayed)
{
    tdm_journal_shm *S = &j->shm;
    const tdm_journal_snapshot *sn = NULL;
    tdm_shm_copy_args a;

    if (proc_of(entry) == TDM_JOURNAL_SKIP)
        return TDM_T_OK;
    for (size_t i = 0; i < S->nsnaps && !sn; i++)
        if (S->snaps[i].pos == pos)
            sn = &S->snaps[i];
    if (!sn || !decode(entry, &a))
        return TDM_T_REJECTED;
    /* As over TCP: the bytes travel inside the calls. */
    for (uint64_t off = 0; off < sn->len;) {
        uint64_t n = sn->len - off < TDM_MAX_CHUNK ? sn->len - off : TDM_MAX_CHUNK;
        tdm_memcpy_htod_args h = { .dst = a.dev + off, .stream = a.stream };
        int rc;

        h.data.data_val = (char *)S->store + sn->off + off;
        h.data.data_len = (u_int)n;
        rc = t->ops->post(t, TDM_MEMCPY_HTOD, (xdrproc_t)xdr_tdm_memcpy_htod_args, &h);
        if (rc != TDM_T_OK)
            return rc;
        off += n;
    }
    ++*replayed;
    return TDM_T_OK;
}
