/* A session's stream captures, graphs and executable graphs
 * (docs/graphs.md).  The device records and replays the graphs itself (the
 * backend's capture and graph ops); this layer checks what the guest names,
 * bounds what it holds, and keeps alive the host bytes that captured
 * host-to-device copies read. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "grow.h"
#include "log.h"

enum { TAG_GRAPH = 0x47, TAG_GRAPH_EXEC = 0x58 };

/* Host bytes that captured copies read at each launch: shared by the graph
 * and every executable graph made from it, freed with the last of them. */
typedef struct tdm_kept_bytes {
    int refs;
    void **v;
    size_t n, cap;
    uint64_t bytes;
} tdm_kept_bytes;

/* A capture begun on one of the session's streams. */
typedef struct tdm_capture_entry {
    uint64_t id;             /* the backend's capture id */
    uint64_t origin;         /* the stream handle it began on */
    tdm_kept_bytes *kept;    /* NULL until a copy needs it */
} tdm_capture_entry;

typedef struct graph_entry {
    tdm_bgraph *bg;
    tdm_kept_bytes *kept;
} graph_entry;

typedef struct exec_entry {
    tdm_bgexec *bx;
    tdm_kept_bytes *kept;
} exec_entry;

static const tdm_backend_ops *ops(tdm_session *s)
{
    return s->srv->ops;
}

static tdm_backend *be(tdm_session *s)
{
    return s->srv->be;
}

void tdm_session_graphs_init(tdm_session *s)
{
    tdm_handles_init(&s->graphs, TAG_GRAPH);
    tdm_handles_init(&s->graph_execs, TAG_GRAPH_EXEC);
}

static void kept_unref(tdm_session *s, tdm_kept_bytes *k)
{
    if (!k || --k->refs > 0)
        return;
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i]);
    s->kept_bytes -= k->bytes;
    free(k->v);
    free(k);
}

/* The id of the capture st's work goes to, 0 when none. */
static uint64_t capture_id(tdm_session *s, const tdm_stream_state *st)
{
    int status = cudaStreamCaptureStatusNone;
    uint64_t id = 0;

    if (ops(s)->stream_capture_info(be(s), st->bs, &status, &id) || status == cudaStreamCaptureStatusNone)
        return 0;
    return id;
}

bool tdm_session_capturing(tdm_session *s, const tdm_stream_state *st)
{
    return s->ncaptures && capture_id(s, st) != 0;
}

static tdm_capture_entry *capture_find(tdm_session *s, uint64_t id)
{
    for (size_t i = 0; i < s->ncaptures; i++)
        if (s->captures[i].id == id)
            return &s->captures[i];
    return NULL;
}

const void *tdm_session_capture_keep(tdm_session *s, tdm_stream_state *st, const void *src, uint64_t n, int *err)
{
    tdm_capture_entry *c = capture_find(s, capture_id(s, st));
    void *copy;

    *err = cudaErrorStreamCaptureInvalidated;
    if (!c)
        return NULL;
    *err = cudaErrorMemoryAllocation;
    if (n > TDM_SESSION_MAX_KEPT_BYTES - s->kept_bytes) {
        tdm_log_session(s->id, "captured host-to-device copies would keep more than %llu bytes",
                        (unsigned long long)TDM_SESSION_MAX_KEPT_BYTES);
        return NULL;
    }
    if (!c->kept && !(c->kept = calloc(1, sizeof(*c->kept))))
        return NULL;
    c->kept->refs = c->kept->refs ? c->kept->refs : 1;
    if (tdm_grow(&c->kept->v, &c->kept->cap, c->kept->n + 1, sizeof(void *), 8) != 0 || !(copy = malloc(n)))
        return NULL;
    memcpy(copy, src, n);
    c->kept->v[c->kept->n++] = copy;
    c->kept->bytes += n;
    s->kept_bytes += n;
    *err = 0;
    return copy;
}

int tdm_session_begin_capture(tdm_session *s, uint64_t stream, int mode)
{
    tdm_stream_state *st;
    uint64_t id;
    int err;

    if (stream == TDM_STREAM_NULL || stream == TDM_STREAM_LEGACY)
        return cudaErrorStreamCaptureUnsupported;   /* as native: the legacy stream cannot capture */
    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    if (!(st = tdm_session_stream_state(s, stream)))
        return cudaErrorInvalidResourceHandle;
    if (tdm_grow(&s->captures, &s->captures_cap, s->ncaptures + 1, sizeof(*s->captures), 4) != 0)
        return cudaErrorMemoryAllocation;
    err = ops(s)->stream_begin_capture(be(s), st->bs, mode);
    if (err)
        return err;
    /* Counted before asking: tdm_session_capturing asks only while one is open. */
    s->captures[s->ncaptures++] = (tdm_capture_entry){ 0, stream, NULL };
    id = capture_id(s, st);
    s->captures[s->ncaptures - 1].id = id;
    return 0;
}

static void capture_remove(tdm_session *s, tdm_capture_entry *c)
{
    *c = s->captures[--s->ncaptures];
}

int tdm_session_end_capture(tdm_session *s, uint64_t stream, uint64_t *graph)
{
    tdm_stream_state *st = tdm_session_stream_state(s, stream);
    tdm_capture_entry *c;
    tdm_kept_bytes *kept = NULL;
    tdm_bgraph *bg = NULL;
    graph_entry *g;
    int err;

    if (!st)
        return cudaErrorInvalidResourceHandle;
    if (s->graphs.live >= TDM_SESSION_MAX_GRAPHS)
        return cudaErrorMemoryAllocation;
    c = capture_find(s, capture_id(s, st));
    err = ops(s)->stream_end_capture(be(s), st->bs, &bg);
    /* Ended (or invalidated and so ended): the capture is gone. */
    if (c && !capture_id(s, st)) {
        kept = c->kept;
        capture_remove(s, c);
    }
    if (err) {
        kept_unref(s, kept);
        return err;
    }
    if (!(g = malloc(sizeof(*g)))) {
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    *g = (graph_entry){ bg, kept };
    if (!(*graph = tdm_handles_add(&s->graphs, g))) {
        free(g);
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    return 0;
fail:
    ops(s)->graph_destroy(be(s), bg);
    kept_unref(s, kept);
    return err;
}

int tdm_session_capture_info(tdm_session *s, uint64_t stream, int *status, uint64_t *id)
{
    tdm_stream_state *st = tdm_session_stream_state(s, stream);

    *status = cudaStreamCaptureStatusNone;
    *id = 0;
    if (!st)
        return cudaErrorInvalidResourceHandle;
    if (!s->ncaptures)
        return 0;
    return ops(s)->stream_capture_info(be(s), st->bs, status, id);
}

int tdm_session_graph_destroy(tdm_session *s, uint64_t graph)
{
    graph_entry *g = tdm_handles_remove(&s->graphs, graph);
    int err;

    if (!g)
        return cudaErrorInvalidValue;     /* as cudaGraphDestroy of a bad graph */
    err = ops(s)->graph_destroy(be(s), g->bg);
    kept_unref(s, g->kept);
    free(g);
    return err;
}

int tdm_session_graph_instantiate(tdm_session *s, uint64_t graph, uint64_t flags, uint64_t *exec)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph);
    exec_entry *x;
    tdm_bgexec *bx = NULL;
    int err;

    if (!g)
        return cudaErrorInvalidValue;
    if (s->graph_execs.live >= TDM_SESSION_MAX_GRAPHS)
        return cudaErrorMemoryAllocation;
    err = ops(s)->graph_instantiate(be(s), g->bg, flags, &bx);
    if (err)
        return err;
    if (!(x = malloc(sizeof(*x)))) {
        ops(s)->graph_exec_destroy(be(s), bx);
        return cudaErrorMemoryAllocation;
    }
    *x = (exec_entry){ bx, g->kept };
    if (!(*exec = tdm_handles_add(&s->graph_execs, x))) {
        ops(s)->graph_exec_destroy(be(s), bx);
        free(x);
        return cudaErrorMemoryAllocation;
    }
    if (g->kept)
        g->kept->refs++;
    return 0;
}

static void exec_free(tdm_session *s, exec_entry *x)
{
    ops(s)->graph_exec_destroy(be(s), x->bx);
    kept_unref(s, x->kept);
    free(x);
}

int tdm_session_graph_exec_destroy(tdm_session *s, uint64_t exec)
{
    exec_entry *x = tdm_handles_remove(&s->graph_execs, exec);

    if (!x)
        return cudaErrorInvalidValue;
    exec_free(s, x);
    return 0;
}

int tdm_session_graph_launch(tdm_session *s, uint64_t exec, uint64_t stream)
{
    exec_entry *x = tdm_handles_get(&s->graph_execs, exec);
    tdm_stream_state *st;
    int err;

    if (!x)
        return cudaErrorInvalidResourceHandle;
    if (!(st = tdm_session_stream_for_work(s, stream, &err)))
        return err;
    return ops(s)->graph_launch(be(s), x->bx, st->bs);
}

void tdm_session_graphs_release(tdm_session *s)
{
    void *obj;

    while (s->ncaptures) {
        tdm_capture_entry c = s->captures[--s->ncaptures];
        tdm_stream_state *st = tdm_session_stream_state(s, c.origin);
        tdm_bgraph *bg = NULL;

        if (st && !ops(s)->stream_end_capture(be(s), st->bs, &bg) && bg)
            ops(s)->graph_destroy(be(s), bg);
        kept_unref(s, c.kept);
    }
    while ((obj = tdm_handles_pop(&s->graph_execs, NULL)))
        exec_free(s, obj);
    while ((obj = tdm_handles_pop(&s->graphs, NULL))) {
        graph_entry *g = obj;
        ops(s)->graph_destroy(be(s), g->bg);
        kept_unref(s, g->kept);
        free(g);
    }
}

int tdm_session_graph_exec_update(tdm_session *s, uint64_t exec, uint64_t graph, int *result)
{
    exec_entry *x = tdm_handles_get(&s->graph_execs, exec);
    graph_entry *g = tdm_handles_get(&s->graphs, graph);
    int err;

    *result = cudaGraphExecUpdateError;
    if (!x || !g)
        return cudaErrorInvalidValue;
    err = ops(s)->graph_exec_update(be(s), x->bx, g->bg, result);
    if (err)
        return err;
    /* The exec now reads what g's captured copies read. */
    if (g->kept)
        g->kept->refs++;
    kept_unref(s, x->kept);
    x->kept = g->kept;
    return 0;
}
