/* Bulk copies over TCP (docs/protocol.md, "Bulk data over TCP"): the
 * session's staging buffers, decoded into by MEMCPY_HTOD and read out by
 * MEMCPY_DTOH_STREAM's reply.
 *
 * Upload buffers of TDM_MAX_CHUNK bytes (a whole MEMCPY_HTOD is decoded
 * into one, a lane piece into up to four) and two to four download buffers
 * of DOWN_CHUNK, page-aligned and
 * registered with the backend where it can (cuda: pinned, so copies to and
 * from them are asynchronous DMA), each with an event recorded after the
 * last copy that uses it.  Two upload buffers at first: the device copy of
 * one chunk overlaps the network transfer of the next.  When every upload
 * buffer is still queued behind work on its stream (copies queued behind a
 * kernel that waits for something the program does later, as
 * UnifiedMemoryPerf's latch), one more is made, up to UP_MAX: a copy from
 * pageable memory would not do, because the driver performs a large one
 * synchronously, in pieces through its own staging, each piece waiting for
 * the stream, and so would hold the session's thread behind the kernel (and
 * the program's next call, the one the kernel waits for, would never be
 * read: pinned_latch over TCP hung on the H100).  With separate download
 * buffers, a download never waits for an upload queued on another stream.
 * Made on first use, released with the session: whatever a session copies,
 * its staging is bounded by UP_MAX * 8 + NDOWN_MAX * 4 MiB. */
#include "session.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <driver_types.h>

#include "lanes.h"
#include "lanes_wire.h"
#include "log.h"
#include "tandem_rpc.h"

#define UP_FIRST 2                /* upload buffers made with the staging */
#define UP_MAX 16                 /* at most: 128 MiB of uploads queued behind work */
/* Download buffers: NDOWN_DEFAULT, or TANDEM_TCP_DOWN_BUFS (2..NDOWN_MAX).  Over 16 lanes, two 4 MiB buffers are 16 parts in
 * flight, one per lane: a lane that is done waits for the slowest before
 * the buffer can take the next device copy; four give each lane two. */
#define NDOWN_MAX 4
#define NDOWN_DEFAULT 4
/* Download chunks: enough to hide a chunk's fixed costs (an event, a
 * socket write), small enough to start sending early. */
#define DOWN_CHUNK ((uint64_t)4 << 20)

typedef struct stage_buf {
    void *p;                  /* mapped for this buffer alone (see buf_make) */
    size_t bytes;
    void *reg;                /* backend registration handle; NULL where not registered */
    tdm_bevent *done;         /* recorded after the last copy that uses p */
} stage_buf;

typedef struct tdm_copy_staging {
    stage_buf up[UP_MAX];
    unsigned nup;             /* upload buffers made so far */
    unsigned next;            /* the upload buffer htod_space tries first */
    stage_buf down[NDOWN_MAX];
    unsigned ndown;           /* of them in use (the server's setting) */
    /* The streamed device-to-host copy being encoded: chunk k lies in
     * down[k % st->ndown]; `queued` chunks are queued so far. */
    uint64_t src, size, stream, queued_bytes;
    unsigned queued;
} tdm_copy_staging;

static const tdm_backend_ops *ops_of(tdm_session *s)
{
    return s->srv->ops;
}

/* Waits until no queued copy uses b. */
static int drain(tdm_session *s, stage_buf *b)
{
    return ops_of(s)->event_synchronize(s->srv->be, b->done);
}

static void buf_release(tdm_session *s, stage_buf *b)
{
    if (b->done) {
        drain(s, b);   /* the device must be done with the memory before it goes */
        ops_of(s)->event_destroy(s->srv->be, b->done);
    }
    if (b->reg)
        ops_of(s)->host_unregister(s->srv->be, b->reg);
    if (b->p)
        munmap(b->p, b->bytes);
    *b = (stage_buf){ 0 };
}

/* must_pin: a buffer the backend fails to pin is no use (the extra upload
 * buffers exist only to be copied from asynchronously); a backend that
 * pins nothing (sim) copies from any memory asynchronously. */
static int buf_make(tdm_session *s, stage_buf *b, size_t bytes, bool must_pin)
{
    int err;

    /* A mapping of its own, not the heap's: with --tcp-send splice, lanes'
     * sockets refer to these pages until the guest has read them (a guest
     * that stops reading keeps its socket's references), and pages the heap
     * handed to something else afterwards (another session's data) must
     * never be what such a socket still delivers.  Unmapped, they are
     * nobody's but the sockets'. */
    b->p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->p == MAP_FAILED) {
        b->p = NULL;
        return cudaErrorMemoryAllocation;
    }
    b->bytes = bytes;
    err = ops_of(s)->event_create(s->srv->be, cudaEventDisableTiming, &b->done);
    if (err) {
        b->done = NULL;
        goto fail;
    }
    /* Unregistered staging still works (the backend then copies from
     * pageable memory, synchronously), only slower: logged, not fatal. */
    if (ops_of(s)->host_register && ops_of(s)->host_register(s->srv->be, b->p, bytes, &b->reg) != 0) {
        b->reg = NULL;
        if (must_pin) {
            err = cudaErrorMemoryAllocation;
            goto fail;
        }
        tdm_log_session(s->id, "cannot pin a copy staging buffer: bulk copies over TCP go slower");
    }
    return 0;
fail:
    buf_release(s, b);
    return err;
}

void tdm_session_copy_staging_release(tdm_session *s)
{
    tdm_copy_staging *st = s->copy_staging;

    if (!st)
        return;
    for (unsigned i = 0; i < st->nup; i++)
        buf_release(s, &st->up[i]);
    for (unsigned i = 0; i < st->ndown; i++)
        buf_release(s, &st->down[i]);
    free(st);
    s->copy_staging = NULL;
}

static tdm_copy_staging *staging(tdm_session *s, int *err)
{
    tdm_copy_staging *st = s->copy_staging;

    if (st)
        return st;
    st = calloc(1, sizeof(*st));
    if (!st) {
        *err = cudaErrorMemoryAllocation;
        return NULL;
    }
    s->copy_staging = st;
    for (; st->nup < UP_FIRST; st->nup++)
        if ((*err = buf_make(s, &st->up[st->nup], TDM_MAX_CHUNK, false)) != 0)
            goto fail;
    st->ndown = s->srv->cfg.tcp_down_bufs;
    if (st->ndown < 2 || st->ndown > NDOWN_MAX)
        st->ndown = NDOWN_DEFAULT;
    for (unsigned i = 0; i < st->ndown; i++)
        if ((*err = buf_make(s, &st->down[i], DOWN_CHUNK, false)) != 0)
            goto fail;
    return st;
fail:
    tdm_session_copy_staging_release(s);
    return NULL;
}

/* ---- host to device ---- */

/* Never waits: a buffer whose last copy is still queued (behind a long
 * kernel on its stream, say) is not handed out; when all are, one more is
 * made (see the top), and past UP_MAX the upload is decoded into a fresh
 * allocation as before staging existed (the backend then copies it from
 * pageable memory, which may wait for the stream: the bound's price).
 * Waiting here instead would hold up every later call of the session, on
 * every stream, until that stream's work is done.  When the device keeps
 * up with the network, as for a large copy in TDM_MAX_CHUNK calls, the
 * first two buffers alternate. */
/* An upload buffer the device is done with and that is not among
 * taken[0..ntaken) (a lane piece's other segments), made if need be. */
static void *up_space(tdm_session *s, void *const *taken, unsigned ntaken)
{
    int err = 0;
    tdm_copy_staging *st = staging(s, &err);

    for (unsigned k = 0; st && k < st->nup; k++) {
        unsigned i = (st->next + k) % st->nup;
        bool mine = false;
        for (unsigned t = 0; t < ntaken; t++)
            mine |= taken[t] == st->up[i].p;
        if (!mine && ops_of(s)->event_query(s->srv->be, st->up[i].done) == 0)
            return st->up[i].p;
    }
    if (!st || st->nup == UP_MAX)
        return NULL;
    if (buf_make(s, &st->up[st->nup], TDM_MAX_CHUNK, true) != 0)
        return NULL;
    if (st->nup == UP_FIRST)
        tdm_log_session(s->id, "uploads queue behind unfinished device work: more upload staging (up to %u MiB)",
                        (unsigned)(UP_MAX * (TDM_MAX_CHUNK >> 20)));
    return st->up[st->nup++].p;
}

void *tdm_session_htod_space(tdm_session *s)
{
    return up_space(s, NULL, 0);
}

bool tdm_session_is_staging(const tdm_session *s, const void *p)
{
    const tdm_copy_staging *st = s->copy_staging;

    for (unsigned i = 0; p && st && i < st->nup; i++)
        if (p == st->up[i].p)
            return true;
    return false;
}

int tdm_session_memcpy_htod_bulk(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream)
{
    tdm_copy_staging *st = s->copy_staging;

    for (unsigned i = 0; st && i < st->nup; i++)
        if (src == st->up[i].p) {
            st->next = (i + 1) % st->nup;
            return tdm_session_memcpy_htod_fenced(s, dst, src, n, stream, st->up[i].done);
        }
    return tdm_session_memcpy_htod(s, dst, src, n, stream);
}

/* ---- device to host ---- */

/* Queues the streamed copy's next chunk into its buffer, once the encoder
 * is done with what that buffer held. */
static int queue_next(tdm_session *s, tdm_copy_staging *st)
{
    stage_buf *b = &st->down[st->queued % st->ndown];
    uint64_t left = st->size - st->queued_bytes;
    uint64_t n = left < DOWN_CHUNK ? left : DOWN_CHUNK;
    int err;

    err = tdm_session_memcpy_dtoh_queue(s, b->p, st->src + st->queued_bytes, n, st->stream, b->done);
    if (err)
        return err;
    st->queued++;
    st->queued_bytes += n;
    return 0;
}

/* tdm_stream_next_fn.  The encoder asks for the chunks in order, each after
 * it has sent the one before (its bytes are in the socket's buffers, the
 * staging buffer is free again): queue the chunk after this one, then wait
 * for this one. */
static const void *next_chunk(void *source, uint64_t off, size_t max, size_t *got, int *err)
{
    tdm_session *s = source;
    tdm_copy_staging *st = s->copy_staging;
    uint64_t k = off / DOWN_CHUNK;
    stage_buf *b = &st->down[k % st->ndown];
    uint64_t n = st->size - off < DOWN_CHUNK ? st->size - off : DOWN_CHUNK;
    int e = 0;

    if (off % DOWN_CHUNK || k >= st->queued || n > max) {
        e = cudaErrorUnknown;   /* not how the encoder asks: a bug, reported as one */
        goto fail;
    }
    if (st->queued_bytes < st->size && (e = queue_next(s, st)) != 0)
        goto fail;
    if ((e = drain(s, b)) != 0)
        goto fail;
    /* The last chunk: the copies' own errors (a fault shows as the
     * stream's error, not the event's) and any deferred one. */
    if (off + n == st->size && (e = tdm_session_stream_synchronize(s, st->stream)) != 0)
        goto fail;
    *got = (size_t)n;
    return b->p;
fail:
    *err = e;
    return NULL;
}

int tdm_session_dtoh_stream_begin(tdm_session *s, uint64_t src, uint64_t n, uint64_t stream,
                                  tdm_dtoh_stream_res *r)
{
    tdm_copy_staging *st;
    int err = tdm_session_check_copy(s, src, n, stream);

    if (err)
        return err;
    if (n == 0)
        return 0;
    /* graph memcpy nodes (issue 14): a reply cannot give a graph's bytes. */
    if (s->ncaptures && tdm_session_capturing(s, tdm_session_stream_state(s, stream)))
        return TDM_ERR_CAPTURE_STAGE;
    if (!(st = staging(s, &err)))
        return err;
    /* An earlier streamed copy that failed half way may have left a copy
     * queued into a buffer. */
    for (unsigned i = 0; i < st->ndown; i++)
        if ((err = drain(s, &st->down[i])) != 0)
            return tdm_session_sync_result(s, err);
    st->src = src;
    st->size = n;
    st->stream = stream;
    st->queued = 0;
    st->queued_bytes = 0;
    /* The first chunk goes now; each next_chunk queues the one after. */
    err = queue_next(s, st);
    if (err)
        return err;
    /* Wait for the first chunk here rather than while the reply is sent:
     * the work it waits for may have printed (device printf), and that must
     * be known before the reply's err is written (device_output.h). */
    err = drain(s, &st->down[0]);
    if (err)
        return tdm_session_sync_result(s, err);
    r->size = n;
    r->next = next_chunk;
    r->source = s;
    return 0;
}

/* ---- tcp lanes (issue 14) ---- */
/* Over lanes the staging is the same: the upload buffers for
 * MEMCPY_HTOD_LANES (one call per piece of up to four TDM_MAX_CHUNK
 * chunks, the lanes receiving piece k+1 into some buffers while the device
 * copies piece k from others), the download buffers for MEMCPY_DTOH_LANES. */

int tdm_session_htod_lanes(tdm_session *s, uint64_t dst, uint64_t n, uint64_t stream, uint32_t xfer,
                           unsigned nlanes)
{
    unsigned char *seg[TDM_LANE_PIECE_MAX / TDM_MAX_CHUNK] = { 0 };
    unsigned nseg = (unsigned)((n + TDM_MAX_CHUNK - 1) / TDM_MAX_CHUNK);
    unsigned char *fresh = NULL;
    int rc;

    if (n == 0 || n > TDM_LANE_PIECE_MAX) {
        /* The lanes carry bytes nobody will take: they must go. */
        tdm_lanes_recv(s->lanes, 0, xfer, NULL, 0);
        tdm_session_defer(s, cudaErrorInvalidValue);
        return TDM_ERR_LANE_FAILED;
    }
    /* A piece of several chunks (lanes_wire.h) takes as many upload
     * buffers, each as MEMCPY_HTOD takes one: one the device is done with,
     * else a new one, else (UP_MAX of them queued behind work on their
     * streams) one fresh allocation for the whole piece, so that the
     * session's other streams are not held up. */
    for (unsigned i = 0; i < nseg; i++)
        if (!(seg[i] = up_space(s, (void *const *)seg, i))) {
            if (!(fresh = malloc(n))) {
                tdm_lanes_recv(s->lanes, 0, xfer, NULL, 0);
                return TDM_ERR_LANE_FAILED;
            }
            for (unsigned k = 0; k < nseg; k++)
                seg[k] = fresh + (uint64_t)k * TDM_MAX_CHUNK;
            break;
        }
    /* Each buffer goes to the device as soon as its parts are in, while the
     * lanes fill the next: the piece's last device copy is all that waits
     * for its last byte.  One device copy per buffer, in order on the
     * stream, as the MEMCPY_HTODs of the chunks would have been; the first
     * error is the session's to report (tdm_session_defer), and the rest of
     * the piece is not copied (but still received). */
    uint64_t job = 0;
    int err = 0;
    rc = tdm_lanes_recv_start(s->lanes, nlanes, xfer, seg, n, &job);
    for (unsigned i = 0; !rc && !err && i < nseg && tdm_lanes_recv_segment(s->lanes, job, i) == 0; i++) {
        uint64_t off = (uint64_t)i * TDM_MAX_CHUNK, len = n - off < TDM_MAX_CHUNK ? n - off : TDM_MAX_CHUNK;
        err = tdm_session_memcpy_htod_bulk(s, dst + off, seg[i], len, stream);
    }
    if (!rc)
        rc = tdm_lanes_recv_finish(s->lanes, job);
    if (!rc) {
        tdm_session_defer(s, err);
        tdm_lanes_note_answer(s->lanes);
    } else {
        /* The guest sends it again on its main connection, and every piece
         * of the copy it sent after it (the lanes are broken until its next
         * LANE_TICKET, so those are refused too). */
        tdm_log_session(s->id, "upload piece %u (%llu bytes to 0x%llx) did not come over the lanes: the guest "
                        "sends it again on its main connection", xfer, (unsigned long long)n,
                        (unsigned long long)dst);
    }
    free(fresh);
    return rc;
}

void tdm_session_dtoh_lanes(tdm_session *s, uint64_t src, uint64_t n, uint64_t stream, uint32_t xfer,
                            unsigned nlanes, int *err, int *copy_err)
{
    tdm_copy_staging *st = NULL;
    uint64_t off, job[NDOWN_MAX] = { 0 };   /* the lanes' job sending from down[i], 0: none */
    int e;

    *err = *copy_err = 0;
    e = tdm_session_check_copy(s, src, n, stream);
    /* graph memcpy nodes (issue 14): the guest stages a captured copy itself. */
    if (!e && n > 0 && s->ncaptures && tdm_session_capturing(s, tdm_session_stream_state(s, stream)))
        e = TDM_ERR_CAPTURE_STAGE;
    if (!e && n > 0)
        st = staging(s, &e);
    if (e || !st)
        goto end;
    for (unsigned i = 0; i < st->ndown; i++)
        if ((e = drain(s, &st->down[i])) != 0) {
            e = tdm_session_sync_result(s, e);
            goto end;
        }
    st->src = src;
    st->size = n;
    st->stream = stream;
    st->queued = 0;
    st->queued_bytes = 0;
    if ((e = queue_next(s, st)) != 0)
        goto end;
    /* Piece k in down[k % st->ndown]: once its device copy is done it is
     * posted to the lanes, which send it after the pieces before it without
     * a pause; then the next piece's device copy is queued into the buffer
     * whose job is done (its bytes in the sockets, or with splice in the
     * guest's hands), so the device copies overlap the sending. */
    for (unsigned k = 0; (off = (uint64_t)k * DOWN_CHUNK) < n; k++) {
        stage_buf *b = &st->down[k % st->ndown];
        uint64_t len = n - off < DOWN_CHUNK ? n - off : DOWN_CHUNK;
        if ((*copy_err = drain(s, b)) != 0)
            break;
        if (tdm_lanes_post_send(s->lanes, nlanes, xfer, b->p, off, len, &job[k % st->ndown]) != 0) {
            *err = TDM_ERR_LANE_FAILED;
            return;
        }
        if (st->queued_bytes < n) {
            uint64_t *next = &job[st->queued % st->ndown];
            if (*next && tdm_lanes_wait(s->lanes, *next) != 0) {
                *err = TDM_ERR_LANE_FAILED;
                return;
            }
            *next = 0;
            if ((*copy_err = queue_next(s, st)) != 0)
                break;
        }
    }
    /* The copies' own errors show as the stream's (a fault), as in
     * next_chunk. */
    if (!*copy_err)
        *copy_err = tdm_session_stream_synchronize(s, stream);
    else
        *copy_err = tdm_session_sync_result(s, *copy_err);
end:
    *err = e;
    /* After the parts on every lane; done once every job before it is (the
     * staging is free again). */
    if (tdm_lanes_send_end(s->lanes, nlanes, xfer) != 0)
        *err = TDM_ERR_LANE_FAILED;
}
