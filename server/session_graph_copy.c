/* Host memory in graphs (docs/graphs.md, "Host memory in graphs").
 *
 * A memcpy node's host side is, over shm, the guest's pinned memory in the
 * shared region, which the device reads or writes at each launch as
 * natively.  Otherwise the server cannot reach it, so the node copies from
 * or to staging the session keeps for it (a tdm_host_io of the graph's
 * tdm_kept_bytes, shared by the graph, its clones and its executable
 * graphs): the guest uploads the current bytes of a host-to-device node's
 * source before each launch, and fetches a device-to-host node's bytes
 * into its own memory at the next call that synchronizes with the launch.
 * Captured device-to-host copies into such memory work the same way. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "grow.h"
#include "log.h"
#include "session_graph_internal.h"
#include "tandem_rpc.h"

static const tdm_backend_ops *ops(tdm_session *s)
{
    return s->srv->ops;
}

static tdm_backend *be(tdm_session *s)
{
    return s->srv->be;
}

void tdm_kept_host_io_free(tdm_session *s, tdm_kept_bytes *k)
{
    for (size_t i = 0; i < k->nio; i++) {
        free(k->io[i].buf);
        s->kept_bytes -= k->io[i].n;
    }
    free(k->io);
    if (k->last_use)
        ops(s)->event_destroy(be(s), k->last_use);
}

/* New zeroed staging of n bytes in k (counted against the session's kept
 * bytes); NULL with *err. */
static tdm_host_io *io_add(tdm_session *s, tdm_kept_bytes *k, uint64_t n, bool dtoh, uint64_t guest, int *err)
{
    tdm_host_io *io;
    void *buf;

    *err = cudaErrorMemoryAllocation;
    if (n > TDM_SESSION_MAX_KEPT_BYTES - s->kept_bytes) {
        tdm_log_session(s->id, "graph host staging would keep more than %llu bytes",
                        (unsigned long long)TDM_SESSION_MAX_KEPT_BYTES);
        return NULL;
    }
    if (tdm_grow(&k->io, &k->iocap, k->nio + 1, sizeof(*k->io), 4) != 0 || !(buf = calloc(1, n ? n : 1)))
        return NULL;
    io = &k->io[k->nio++];
    *io = (tdm_host_io){ .guest = guest, .buf = buf, .n = n, .dtoh = dtoh };
    s->kept_bytes += n;
    *err = 0;
    return io;
}

static bool has_dtoh(const tdm_kept_bytes *k)
{
    for (size_t i = 0; i < k->nio; i++)
        if (k->io[i].dtoh)
            return true;
    return false;
}

int tdm_kept_launched(tdm_session *s, tdm_kept_bytes *k, tdm_stream_state *st)
{
    int err;

    if (!k || !k->nio)
        return 0;
    if (!k->last_use && (err = ops(s)->event_create(be(s), cudaEventDisableTiming, &k->last_use)) != 0)
        return err;
    if ((err = ops(s)->event_record(be(s), k->last_use, st->bs)) != 0)
        return err;
    /* Launched again before the guest fetched: the newer bytes are the ones. */
    k->fetch_i = 0;
    k->fetch_off = 0;
    if (k->pending || !has_dtoh(k))
        return 0;
    if (tdm_grow(&s->graph_pending, &s->graph_pending_cap, s->ngraph_pending + 1, sizeof(*s->graph_pending), 4) != 0)
        return cudaErrorMemoryAllocation;
    k->pending = true;
    k->refs++;
    s->graph_pending[s->ngraph_pending++] = k;
    return 0;
}

void tdm_session_graph_copy_release(tdm_session *s)
{
    while (s->ngraph_pending) {
        tdm_kept_bytes *k = s->graph_pending[--s->ngraph_pending];
        k->pending = false;
        tdm_kept_unref(s, k);
    }
    free(s->graph_pending);
    s->graph_pending = NULL;
    s->graph_pending_cap = 0;
}

int tdm_graph_copy_desc(tdm_session *s, const tdm_memcpy_node_request *q, tdm_gnode_desc *d)
{
    int err = 0;

    *d = (tdm_gnode_desc){ .n = q->n };
    switch (q->kind) {
    case cudaMemcpyHostToDevice:
        d->kind = TDM_GNODE_COPY_HTOD;
        if (!tdm_session_resolve(s, q->dst, q->n, &d->dst))
            err = cudaErrorInvalidValue;
        break;
    case cudaMemcpyDeviceToHost:
        d->kind = TDM_GNODE_COPY_DTOH;
        if (!tdm_session_resolve(s, q->src, q->n, &d->src))
            err = cudaErrorInvalidValue;
        break;
    case cudaMemcpyDeviceToDevice:
        d->kind = TDM_GNODE_COPY_DTOD;
        if (!tdm_session_resolve(s, q->dst, q->n, &d->dst) || !tdm_session_resolve(s, q->src, q->n, &d->src))
            err = cudaErrorInvalidValue;
        break;
    default:
        err = cudaErrorInvalidMemcpyDirection;
    }
    if (err == cudaErrorInvalidValue)
        tdm_log_session(s->id, "memcpy node names memory the session does not own");
    return err;
}

int tdm_session_graph_add_memcpy_node(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps,
                                      const tdm_memcpy_node_request *q, uint64_t *node)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph);
    tdm_bgnode **bdeps = NULL, *bn = NULL;
    tdm_gnode_desc d;
    tdm_host_io *io = NULL;
    tdm_kept_bytes *k;
    int err = 0;

    if (!g)
        return cudaErrorInvalidValue;
    if (g->embedded && q->kind != cudaMemcpyDeviceToDevice)   /* ---- child graphs (issue 14) ---- */
        return tdm_graph_child_refuse(s, "a copy from or to host memory");
    if (s->graph_nodes.live >= TDM_SESSION_MAX_GRAPH_NODES)
        return cudaErrorMemoryAllocation;
    if (!q->n)
        return cudaErrorInvalidValue;
    if (ndeps && !(bdeps = malloc(ndeps * sizeof(*bdeps))))
        return cudaErrorMemoryAllocation;
    if (!tdm_graph_nodes_of(s, graph, deps, ndeps, bdeps)) {
        err = cudaErrorInvalidValue;
        goto out;
    }
    if ((err = tdm_graph_copy_desc(s, q, &d)) != 0)
        goto out;
    if (d.kind != TDM_GNODE_COPY_DTOD) {
        if (q->region) {
            d.host = q->region;
        } else {
            bool dtoh = d.kind == TDM_GNODE_COPY_DTOH;
            if (!(k = tdm_kept_get(&g->kept)) ||
                !(io = io_add(s, k, q->n, dtoh, dtoh ? q->dst : q->src, &err))) {
                err = err ? err : cudaErrorMemoryAllocation;
                goto out;
            }
            d.host = io->buf;
        }
    }
    /* A failed add leaves the staging with the graph: freed with it. */
    if ((err = ops(s)->graph_add_node(be(s), g->bg, &d, bdeps, ndeps, &bn)) != 0)
        goto out;
    if ((err = tdm_graph_node_name(s, graph, bn, cudaGraphNodeTypeMemcpy, node)) != 0)
        goto out;
    if (io)   /* io still points into g->kept->io: nothing grew it since */
        io->key = *node;
out:
    free(bdeps);
    return err;
}

int tdm_session_graph_host_upload(tdm_session *s, uint64_t exec, uint64_t key, uint64_t off, const void *data,
                                  uint64_t n)
{
    exec_entry *x = tdm_handles_get(&s->graph_execs, exec);
    tdm_kept_bytes *k = x ? x->kept : NULL;
    int err;

    if (!x)
        return cudaErrorInvalidResourceHandle;
    for (size_t i = 0; k && i < k->nio; i++) {
        tdm_host_io *io = &k->io[i];
        if (io->dtoh || io->key != key)
            continue;
        if (off > io->n || n > io->n - off)
            break;
        /* An earlier launch may still read the staging: the new bytes wait
         * for it, as the program's own buffer would not change under it. */
        if (k->last_use && (err = ops(s)->event_synchronize(be(s), k->last_use)) != 0)
            return err;
        memcpy((char *)io->buf + off, data, n);
        return 0;
    }
    tdm_log_session(s->id, "graph host upload names no host-to-device node of the executable graph");
    return cudaErrorInvalidValue;
}

static void pending_remove(tdm_session *s, size_t i)
{
    tdm_kept_bytes *k = s->graph_pending[i];

    s->graph_pending[i] = s->graph_pending[--s->ngraph_pending];
    k->pending = false;
    tdm_kept_unref(s, k);
}

int tdm_session_graph_host_fetch(tdm_session *s, int *got, int *more, uint64_t *dst, const void **data,
                                 uint64_t *n)
{
    *got = 0;
    *more = 0;
    for (size_t i = 0; i < s->ngraph_pending;) {
        tdm_kept_bytes *k = s->graph_pending[i];
        int q = ops(s)->event_query(be(s), k->last_use);

        if (q == cudaErrorNotReady) {
            *more = 1;
            i++;
            continue;
        }
        /* Done (or failed: its error surfaces at the synchronizing call
         * itself): the next piece of its device-to-host bytes. */
        while (k->fetch_i < k->nio && (!k->io[k->fetch_i].dtoh || k->io[k->fetch_i].off ||
                                     k->fetch_off >= k->io[k->fetch_i].n)) {
            k->fetch_i++;
            k->fetch_off = 0;
        }
        if (k->fetch_i >= k->nio || q != 0) {
            pending_remove(s, i);   /* the last piece went in an earlier reply */
            continue;
        }
        tdm_host_io *io = &k->io[k->fetch_i];
        uint64_t len = io->n - k->fetch_off;
        if (len > TDM_MAX_CHUNK)
            len = TDM_MAX_CHUNK;
        *dst = io->guest + k->fetch_off;
        *data = (const char *)io->buf + k->fetch_off;
        *n = len;
        k->fetch_off += len;
        *got = 1;
        return 0;
    }
    return 0;
}

int tdm_session_graph_capture_dtoh(tdm_session *s, uint64_t stream, uint64_t src, uint64_t n, uint64_t dst)
{
    tdm_stream_state *st;
    tdm_kept_bytes *k;
    tdm_host_io *io;
    uint64_t dev;
    int err;

    if (!n)
        return 0;
    if (!tdm_session_resolve(s, src, n, &dev)) {
        tdm_log_session(s->id, "captured device-to-host copy names memory the session does not own");
        return cudaErrorInvalidValue;
    }
    if (!(st = tdm_session_stream_for_work(s, stream, &err)))
        return err;
    if (!tdm_session_capturing(s, st))
        return cudaErrorIllegalState;
    if (!(k = tdm_session_capture_kept(s, st, &err)) || !(io = io_add(s, k, n, true, dst, &err)))
        return err;
    return ops(s)->memcpy_dtoh_async(be(s), io->buf, dev, n, st->bs);
}

int tdm_session_memcpy_dtoh_pinned(tdm_session *s, void *dst, uint64_t src, uint64_t n, uint64_t stream)
{
    tdm_stream_state *st = s->ncaptures ? tdm_session_stream_state(s, stream) : NULL;
    uint64_t dev;

    if (!n || !st || !tdm_session_capturing(s, st))
        return tdm_session_memcpy_dtoh(s, dst, src, n, stream);
    if (!tdm_session_resolve(s, src, n, &dev))
        return cudaErrorInvalidValue;
    /* The region is registered for the device and outlives the session's
     * graphs: the node writes it at each launch, as natively. */
    return ops(s)->memcpy_dtoh_async(be(s), dst, dev, n, st->bs);
}

int tdm_session_graph_capture_htod(tdm_session *s, uint64_t stream, uint64_t dst, uint64_t n, uint64_t src,
                                   uint64_t *key, uint64_t *id)
{
    tdm_stream_state *st;
    tdm_kept_bytes *k;
    tdm_host_io *io;
    uint64_t dev;
    int err, status = 0;

    if (!(st = tdm_session_stream_for_work(s, stream, &err)))
        return err;
    if (!n || !tdm_session_capturing(s, st))
        return TDM_ERR_NOT_CAPTURING;
    if (!tdm_session_resolve(s, dst, n, &dev)) {
        tdm_log_session(s->id, "captured host-to-device copy names memory the session does not own");
        return cudaErrorInvalidValue;
    }
    if ((err = ops(s)->stream_capture_info(be(s), st->bs, &status, id)) != 0)
        return err;
    if (!(k = tdm_session_capture_kept(s, st, &err)) || !(io = io_add(s, k, n, false, src, &err)))
        return err;
    io->key = *key = ++s->graph_io_keys;
    /* The staging outlives the graph: the node reads it at each launch. */
    return ops(s)->memcpy_htod(be(s), dev, io->buf, n, st->bs);
}
