#include "journal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"
#include "journal_shm.h"
#include "tandem_rpc.h"

#define NO_STREAM UINT64_MAX

/* Two segments: [0, older_len) holds the calls up to the epoch last sent
 * (`pending`), which the server may not have reached yet; the rest came
 * after it.  Any reply of the server proves it reached `pending` (calls are
 * served in order), and the older segment goes. */
static struct {
    bool on;
    uint8_t *buf;              /* entries: u32 proc, u32 len, len XDR bytes */
    size_t len, cap, older_len, n;
    uint64_t base;             /* position of buf[0]: bytes dropped so far */
    uint64_t seq, confirmed, pending;
    uint64_t only_stream;      /* the one stream used since the epoch */
    bool multi_stream, nonblocking_used;
    uint64_t *nonblocking;     /* handles of non-blocking streams */
    size_t n_nonblocking;
} J = { .only_stream = NO_STREAM };

static void new_segment(void)
{
    J.only_stream = NO_STREAM;
    J.multi_stream = J.nonblocking_used = false;
}

static void drop_entries(void)
{
    J.base += J.len;
    J.len = J.n = J.older_len = 0;
    J.pending = J.confirmed;
    new_segment();
}

/* The older segment's calls are done: they go, and the position of the
 * first entry kept moves past them. */
static void drop_older_segment(void)
{
    memmove(J.buf, J.buf + J.older_len, J.len - J.older_len);
    J.base += J.older_len;
    J.len -= J.older_len;
    J.older_len = 0;
}

void tdm_journal_restart(uint64_t epoch)
{
    J.on = true;
    J.confirmed = epoch;
    drop_entries();
}

void tdm_journal_resumed(uint64_t epoch)
{
    /* Resumed at the epoch sent: the older segment is done. */
    if (epoch == J.pending && J.pending != J.confirmed)
        drop_older_segment();
    J.older_len = 0;
    J.confirmed = J.pending = epoch;
}

void tdm_journal_stop(void)
{
    J.on = false;
    free(J.buf);
    J.buf = NULL;
    J.cap = 0;
    drop_entries();
    tdm_journal_shm_reset();
}

bool tdm_journal_active(void)
{
    return J.on;
}

uint64_t tdm_journal_seq(void) { return J.seq; }
uint64_t tdm_journal_confirmed(void) { return J.confirmed; }
uint64_t tdm_journal_pending(void) { return J.pending; }
size_t tdm_journal_bytes(void) { return J.len + tdm_journal_shm_bytes(); }
uint64_t tdm_journal_base(void) { return J.base; }

uint8_t *tdm_journal_entry(uint64_t pos)
{
    return pos >= J.base && pos - J.base < J.len ? J.buf + (pos - J.base) : NULL;
}

bool tdm_journal_empty(void) { return J.n == 0; }

void tdm_journal_confirm(void)
{
    if (J.older_len == 0 && J.pending == J.confirmed)
        return;
    drop_older_segment();
    J.confirmed = J.pending;
}

uint64_t tdm_journal_next_call(void)
{
    return ++J.seq;
}

/* The legacy stream, the per-thread stream and 0 are one stream to a
 * session (the server's null stream). */
static uint64_t canonical(uint64_t h)
{
    return h <= 2 ? 0 : h;
}

static void note_stream(uint64_t h)
{
    h = canonical(h);
    for (size_t i = 0; i < J.n_nonblocking; i++)
        if (J.nonblocking[i] == h)
            J.nonblocking_used = true;
    if (J.only_stream == NO_STREAM)
        J.only_stream = h;
    else if (J.only_stream != h)
        J.multi_stream = true;
}

void tdm_journal_stream_created(uint64_t handle, unsigned flags)
{
    uint64_t *v;

    if (!(flags & cudaStreamNonBlocking))
        return;
    v = realloc(J.nonblocking, (J.n_nonblocking + 1) * sizeof(*v));
    if (!v)
        return;
    J.nonblocking = v;
    v[J.n_nonblocking++] = handle;
}

static void note_work(uint32_t proc, const void *args)
{
    switch (proc) {
    case TDM_LAUNCH: note_stream(((const tdm_launch_args *)args)->stream); break;
    case TDM_MEMCPY_HTOD: note_stream(((const tdm_memcpy_htod_args *)args)->stream); break;
    case TDM_MEMCPY_DTOD: note_stream(((const tdm_memcpy_dtod_args *)args)->stream); break;
    case TDM_MEMSET: note_stream(((const tdm_memset_args *)args)->stream); break;
    case TDM_EVENT_RECORD: note_stream(((const tdm_event_record_args *)args)->stream); break;
    case TDM_STREAM_WAIT_EVENT: note_stream(((const tdm_stream_wait_args *)args)->stream); break;
    case TDM_SHM_HTOD:
    case TDM_SHM_DTOH: note_stream(((const tdm_shm_copy_args *)args)->stream); break;
    default: J.multi_stream = true; break;   /* unknown work: only a full sync proves idleness */
    }
}

int tdm_journal_record(uint32_t proc, xdrproc_t xargs, void *args)
{
    unsigned long size;
    XDR x;

    if (!J.on)
        return 0;
    J.seq++;
    size = xdr_sizeof(xargs, args);
    if (J.len + 8 + size > J.cap) {
        size_t cap = J.cap ? J.cap : 1 << 16;
        while (cap < J.len + 8 + size)
            cap *= 2;
        uint8_t *b = realloc(J.buf, cap);
        if (!b)
            goto fail;
        J.buf = b;
        J.cap = cap;
    }
    xdrmem_create(&x, (char *)J.buf + J.len + 8, (u_int)size, XDR_ENCODE);
    if (!xargs(&x, args)) {
        xdr_destroy(&x);
        goto fail;
    }
    xdr_destroy(&x);
    uint32_t hdr[2] = { proc, (uint32_t)size };
    memcpy(J.buf + J.len, hdr, sizeof(hdr));
    J.len += 8 + size;
    J.n++;
    note_work(proc, args);
    tdm_journal_shm_recorded(proc, args, J.base + J.len - 8 - size, J.seq);
    return 0;
fail:
    fprintf(stderr, "tandem: out of memory for the takeover journal: this session is no longer protected\n");
    tdm_journal_stop();
    return -1;
}

bool tdm_journal_proves_idle(uint32_t proc, const void *args, int err)
{
    if (!J.on || err || J.n == 0)
        return false;
    switch (proc) {
    case TDM_DEVICE_SYNCHRONIZE:
    case TDM_QUIESCE:
    case TDM_FREE:               /* waits for the whole session first */
    case TDM_SHM_HOST_UNREGISTER:
        return true;
    case TDM_MEMCPY_DTOH:        /* a legacy-stream copy waits for every blocking stream */
        return canonical(((const tdm_memcpy_dtoh_args *)args)->stream) == 0 && !J.nonblocking_used;
    case TDM_STREAM_SYNCHRONIZE:
        return !J.multi_stream && canonical(*(const tdm_handle *)args) == J.only_stream;
    default:
        return false;
    }
}

void tdm_journal_acknowledge(void)
{
    /* The caller confirmed the previous epoch with the reply that proved
     * this one: everything journaled now belongs to the new epoch's past. */
    J.older_len = J.len;
    J.n = 0;
    J.pending = J.seq;
    new_segment();
}

static bool_t xdr_raw(XDR *x, void *p)
{
    const uint8_t *e = p;
    uint32_t len;

    memcpy(&len, e + 4, 4);
    return XDR_PUTBYTES(x, (char *)e + 8, len);
}

int tdm_journal_replay(tdm_transport *t, uint64_t epoch, size_t *replayed)
{
    size_t off = epoch == J.pending && J.pending != J.confirmed ? J.older_len : 0;
    int rc;

    *replayed = 0;
    if (epoch != J.confirmed && epoch != J.pending)
        return TDM_T_REJECTED;
    for (; off < J.len;) {
        uint32_t hdr[2];
        memcpy(hdr, J.buf + off, sizeof(hdr));
        if (hdr[0] == TDM_JOURNAL_SKIP || hdr[0] == TDM_JOURNAL_INLINE) {
            rc = tdm_journal_shm_replay(t, J.base + off, J.buf + off, replayed);
        } else {
            rc = t->ops->post(t, hdr[0], (xdrproc_t)xdr_raw, J.buf + off);
            ++*replayed;
        }
        if (rc != TDM_T_OK)
            return rc;
        off += 8 + hdr[1];
    }
    return TDM_T_OK;
}
