#include "journal.h"

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "calls.h"
#include "journal_shm.h"
#include "log.h"
#include "tandem_rpc.h"
#include "grow.h"

#define NO_STREAM UINT64_MAX

void tdm_journal_init(tdm_journal *j, const struct tdm_shm_region *region)
{
    memset(j, 0, sizeof(*j));
    j->only_stream = NO_STREAM;
    j->shm.region = region;
}

static void new_segment(tdm_journal *j)
{
    j->only_stream = NO_STREAM;
    j->multi_stream = j->nonblocking_used = false;
}

static void drop_entries(tdm_journal *j)
{
    j->base += j->len;
    j->len = j->n = j->older_len = 0;
    j->pending = j->confirmed;
    new_segment(j);
}

/* The older segment's calls are done: they go, and the position of the
 * first entry kept moves past them. */
static void drop_older_segment(tdm_journal *j)
{
    memmove(j->buf, j->buf + j->older_len, j->len - j->older_len);
    j->base += j->older_len;
    j->len -= j->older_len;
    j->older_len = 0;
}

void tdm_journal_restart(tdm_journal *j, uint64_t epoch)
{
    j->on = true;
    j->confirmed = epoch;
    drop_entries(j);
}

void tdm_journal_resumed(tdm_journal *j, uint64_t epoch)
{
    /* Resumed at the epoch sent: the older segment is done. */
    if (epoch == j->pending && j->pending != j->confirmed)
        drop_older_segment(j);
    j->older_len = 0;
    j->confirmed = j->pending = epoch;
}

void tdm_journal_stop(tdm_journal *j)
{
    j->on = false;
    free(j->buf);
    j->buf = NULL;
    j->cap = 0;
    drop_entries(j);
    tdm_journal_shm_reset(j);
}

bool tdm_journal_active(const tdm_journal *j)
{
    return j->on;
}

uint64_t tdm_journal_seq(const tdm_journal *j) { return j->seq; }
uint64_t tdm_journal_confirmed(const tdm_journal *j) { return j->confirmed; }
uint64_t tdm_journal_pending(const tdm_journal *j) { return j->pending; }
size_t tdm_journal_bytes(tdm_journal *j) { return j->len + tdm_journal_shm_bytes(j); }
uint64_t tdm_journal_base(const tdm_journal *j) { return j->base; }

uint8_t *tdm_journal_entry(tdm_journal *j, uint64_t pos)
{
    return pos >= j->base && pos - j->base < j->len ? j->buf + (pos - j->base) : NULL;
}

bool tdm_journal_empty(const tdm_journal *j) { return j->n == 0; }

void tdm_journal_confirm(tdm_journal *j)
{
    if (j->older_len == 0 && j->pending == j->confirmed)
        return;
    drop_older_segment(j);
    j->confirmed = j->pending;
}

uint64_t tdm_journal_next_call(tdm_journal *j)
{
    return ++j->seq;
}

/* The legacy stream, the per-thread stream and 0 are one stream to a
 * session (the server's null stream). */
static uint64_t canonical(uint64_t h)
{
    return h <= 2 ? 0 : h;
}

static void note_stream(tdm_journal *j, uint64_t h)
{
    h = canonical(h);
    for (size_t i = 0; i < j->n_nonblocking; i++)
        if (j->nonblocking[i] == h)
            j->nonblocking_used = true;
    if (j->only_stream == NO_STREAM)
        j->only_stream = h;
    else if (j->only_stream != h)
        j->multi_stream = true;
}

void tdm_journal_stream_created(tdm_journal *j, uint64_t handle, unsigned flags)
{
    if (!(flags & cudaStreamNonBlocking))
        return;
    if (tdm_grow(&j->nonblocking, &j->cap_nonblocking, j->n_nonblocking + 1, sizeof(*j->nonblocking), 8) != 0)
        return;
    j->nonblocking[j->n_nonblocking++] = handle;
}

/* One-way work is ordered on the stream its row's STREAM column names.  Work
 * with none: only a full sync proves idleness. */
static void note_work(tdm_journal *j, const tdm_call_info *call, const void *args)
{
    uint64_t stream;

    if (tdm_call_stream(call, args, &stream))
        note_stream(j, stream);
    else
        j->multi_stream = true;
}

int tdm_journal_record(tdm_journal *j, const tdm_call_info *call, void *args)
{
    unsigned long size;
    XDR x;

    if (!j->on)
        return 0;
    j->seq++;
    size = xdr_sizeof(call->xargs, args);
    if (tdm_grow(&j->buf, &j->cap, j->len + 8 + size, 1, 1 << 16) != 0)
        goto fail;
    xdrmem_create(&x, (char *)j->buf + j->len + 8, (u_int)size, XDR_ENCODE);
    if (!call->xargs(&x, args)) {
        xdr_destroy(&x);
        goto fail;
    }
    xdr_destroy(&x);
    uint32_t hdr[2] = { call->proc, (uint32_t)size };
    memcpy(j->buf + j->len, hdr, sizeof(hdr));
    j->len += 8 + size;
    j->n++;
    note_work(j, call, args);
    tdm_journal_shm_recorded(j, call->proc, args, j->base + j->len - 8 - size, j->seq);
    return 0;
fail:
    tdm_log("out of memory for the takeover journal: this session is no longer protected");
    tdm_journal_stop(j);
    return -1;
}

/* The row's IDLE column says what a successful reply proves. */
bool tdm_journal_proves_idle(tdm_journal *j, uint32_t proc, const void *args, int err)
{
    const tdm_call_info *call = tdm_call_find(proc);
    uint64_t stream;

    if (!j->on || err || j->n == 0 || !call)
        return false;
    switch (call->idle) {
    case TDM_IDLE_ALWAYS:        /* waits for the whole session first */
        return true;
    case TDM_IDLE_LEGACY_STREAM: /* a legacy-stream call waits for every blocking stream */
        return tdm_call_stream(call, args, &stream) && canonical(stream) == 0 && !j->nonblocking_used;
    case TDM_IDLE_ONLY_STREAM:
        return tdm_call_stream(call, args, &stream) && !j->multi_stream && canonical(stream) == j->only_stream;
    case TDM_IDLE_NEVER:
        break;
    }
    return false;
}

void tdm_journal_acknowledge(tdm_journal *j)
{
    /* The caller confirmed the previous epoch with the reply that proved
     * this one: everything journaled now belongs to the new epoch's past. */
    j->older_len = j->len;
    j->n = 0;
    j->pending = j->seq;
    new_segment(j);
}

static bool_t xdr_raw(XDR *x, void *p)
{
    const uint8_t *e = p;
    uint32_t len;

    memcpy(&len, e + 4, 4);
    return XDR_PUTBYTES(x, (char *)e + 8, len);
}

int tdm_journal_replay(tdm_journal *j, tdm_transport *t, uint64_t epoch, size_t *replayed)
{
    size_t off = epoch == j->pending && j->pending != j->confirmed ? j->older_len : 0;
    int rc;

    *replayed = 0;
    if (epoch != j->confirmed && epoch != j->pending)
        return TDM_T_REJECTED;
    for (; off < j->len;) {
        uint32_t hdr[2];
        memcpy(hdr, j->buf + off, sizeof(hdr));
        if (hdr[0] == TDM_JOURNAL_SKIP || hdr[0] == TDM_JOURNAL_INLINE) {
            rc = tdm_journal_shm_replay(j, t, j->base + off, j->buf + off, replayed);
        } else {
            rc = t->ops->post(t, hdr[0], (xdrproc_t)xdr_raw, j->buf + off);
            ++*replayed;
        }
        if (rc != TDM_T_OK)
            return rc;
        off += 8 + hdr[1];
    }
    return TDM_T_OK;
}
