/* Conditional graph nodes through Tandem (docs/graphs.md, "Conditional
 * nodes"): examples/graph_conditional.cu over TCP and shm against logs
 * computed here (If, If/else, While with a default value, an If/else
 * nested in a While body, Switch, a body filled by a capture into it, a While node
 * added to a capture's own graph between captured kernels as
 * graphConditionalNodes does, bad body counts and another graph's handle); what the server refuses a guest
 * speaking the protocol directly (unknown handles and graphs, a handle of
 * another graph, a body graph destroyed on its own, the bounds on bodies
 * and nesting, captures into unknown graphs or after foreign nodes). */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "guest_calls.h"
#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"

static th_server srv;

static void up(void)
{
    th_server_start(&srv, NULL);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

/* One launch's line: name, flag, counter, then n copies of the pattern's
 * values (pattern of plen values, repeated n times), then the tail values. */
static size_t line(char *out, size_t cap, const char *name, int flag, int counter, const int *pattern, int plen,
                   int n, const int *tail, int tlen)
{
    size_t len = (size_t)snprintf(out, cap, "%s flag=%d counter=%d:", name, flag, counter);

    for (int r = 0; r < n; r++)
        for (int i = 0; i < plen; i++)
            len += (size_t)snprintf(out + len, cap - len, " %d", pattern[i]);
    for (int i = 0; i < tlen; i++)
        len += (size_t)snprintf(out + len, cap - len, " %d", tail[i]);
    len += (size_t)snprintf(out + len, cap - len, "\n");
    return len;
}

static void expected_output(int launches, char *out, size_t cap)
{
    static const int one[] = { 1 }, if_else0[] = { 20, 21, 99 }, if_else1[] = { 10, 99 }, five[] = { 5 },
                     seven[] = { 7 }, eight[] = { 8 }, captured[] = { 40, 41 },
                     fifty[] = { 50 }, sixty[] = { 60 };
    size_t len = 0;

    for (int i = 0; i < launches; i++) {
        len += line(out + len, cap - len, "if", 0, 0, NULL, 0, 0, NULL, 0);
        len += line(out + len, cap - len, "if", 1 + i, 0, one, 1, 1, NULL, 0);
    }
    for (int i = 0; i < launches; i++) {
        len += line(out + len, cap - len, "if-else", 0, 0, if_else0, 3, 1, NULL, 0);
        len += line(out + len, cap - len, "if-else", 1, 0, if_else1, 2, 1, NULL, 0);
    }
    for (int i = 0; i < launches; i++) {
        len += line(out + len, cap - len, "do-while", 0, 3 + i, five, 1, 3 + i, NULL, 0);
        len += line(out + len, cap - len, "do-while", 0, 0, five, 1, 1, NULL, 0);
    }
    for (int i = 0; i < launches; i++) {
        len += line(out + len, cap - len, "while-if", 0, 2, NULL, 0, 0, NULL, 0);
        len += line(out + len, cap - len, "while-if", 1, 3, seven, 1, 2, eight, 1);
    }
    for (int v = 0; v <= 5; v++) {
        int body = 30 + v;
        len += line(out + len, cap - len, "switch", v, 0, &body, 1, v < 4, NULL, 0);
    }
    for (int i = 0; i < launches; i++)
        len += line(out + len, cap - len, "captured-while", 0, 2 + i, captured, 2, 2 + i, NULL, 0);
    len += (size_t)snprintf(out + len, cap - len,
                            "capture info before any work: status %d, dependencies 0\n"
                            "capture info after a kernel: dependencies 1, type %d\n"
                            "the capture ended into the graph it named: yes\n",
                            cudaStreamCaptureStatusActive, cudaGraphNodeTypeKernel);
    for (int i = 0; i < launches; i++) {
        len += line(out + len, cap - len, "captured-graph-while", 1, 3 + i, fifty, 1, 3 + i, sixty, 1);
        len += line(out + len, cap - len, "captured-graph-while", 0, 2, NULL, 0, 0, sixty, 1);
    }
    snprintf(out + len, cap - len,
             "while of 2 bodies: cudaErrorInvalidValue\n"
             "if of 3 bodies: cudaErrorInvalidValue\n"
             "switch of 0 bodies: cudaErrorInvalidValue\n"
             "another graph's handle: cudaErrorInvalidValue\n"
             "graph_conditional: done\n");
}

static void expect_graph_conditional(const char *endpoint, int launches)
{
    char n[16], want[8192];
    const char *argv[] = { th_example("graph_conditional"), n, NULL };
    th_result *r = calloc(1, sizeof(*r));

    cr_assert(r);
    snprintf(n, sizeof(n), "%d", launches);
    expected_output(launches, want, sizeof(want));
    th_run_guest(endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "graph_conditional (%s) exited %d:\n%s%s", endpoint, r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want, "graph_conditional (%s) printed\n%s\nexpected\n%s", endpoint, r->out, want);
    free(r);
}

Test(graph_cond, if_while_switch_and_capture_to_graph, .init = up, .fini = down)
{
    expect_graph_conditional(srv.endpoint, 3);
}

Test(graph_cond_shm, if_while_switch_and_capture_to_graph, .init = up, .fini = down)
{
    expect_graph_conditional(srv.shm_endpoint, 2);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the session did not go over shm; see %s", srv.log);
}

/* ---- a guest speaking the protocol directly ---- */

static uint64_t new_graph(tdm_transport *t)
{
    unsigned flags = 0;
    tdm_handle_res g = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &flags);

    cr_assert_eq(g.err, 0);
    return g.handle;
}

static int handle_create(tdm_transport *t, uint64_t graph, unsigned flags, uint64_t *h)
{
    tdm_cond_handle_args a = { graph, 1, flags };
    tdm_u64_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_GRAPH_COND_HANDLE_CREATE, (xdrproc_t)xdr_tdm_cond_handle_args, &a,
                              (xdrproc_t)xdr_tdm_u64_res, &r),
                 0, "transport failed");
    *h = r.value;
    return r.err;
}

/* Adds a conditional node; *body gets its first body graph. */
static int cond_node(tdm_transport *t, uint64_t graph, tdm_handle *deps, u_int ndeps, uint64_t h, int type,
                     unsigned size, uint64_t *body)
{
    tdm_cond_node_args a = { .graph = graph, .deps = { ndeps, deps }, .handle = h, .type = type, .size = size };
    tdm_cond_node_res r;
    int err;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_GRAPH_ADD_COND_NODE, (xdrproc_t)xdr_tdm_cond_node_args, &a,
                              (xdrproc_t)xdr_tdm_cond_node_res, &r),
                 0, "transport failed");
    err = r.err;
    if (!err) {
        cr_expect_eq(r.bodies.bodies_len, size);
        if (body)
            *body = r.bodies.bodies_val[0];
    }
    xdr_free((xdrproc_t)xdr_tdm_cond_node_res, (char *)&r);
    return err;
}

Test(graph_cond_bad_input, unknown_and_foreign_handles_bounds_and_bodies_are_refused, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "graph-cond-bad-input");
    uint64_t g = new_graph(t), other = new_graph(t), h = 0, oh = 0, body = 0, inner = 0;
    tdm_handle forged = 0x4700000100000007ull, forged_node = 0x4e00000100000003ull;

    /* Handles: of a graph the session has, flags cudaGraphCondAssignDefault or 0. */
    cr_expect_eq(handle_create(t, forged, 0, &h), cudaErrorInvalidValue);
    cr_expect_eq(handle_create(t, g, 2, &h), cudaErrorInvalidValue);
    cr_assert_eq(handle_create(t, g, cudaGraphCondAssignDefault, &h), 0);
    cr_assert_eq(handle_create(t, other, 0, &oh), 0);
    /* Nodes: a known handle of this graph, a known type and body count, known dependencies. */
    cr_expect_eq(cond_node(t, g, NULL, 0, 0x123456789ull, cudaGraphCondTypeIf, 1, NULL), cudaErrorInvalidValue);
    cr_expect_eq(cond_node(t, g, NULL, 0, oh, cudaGraphCondTypeIf, 1, NULL), cudaErrorInvalidValue);
    cr_expect_eq(cond_node(t, g, NULL, 0, h, 7, 1, NULL), cudaErrorInvalidValue);
    cr_expect_eq(cond_node(t, g, NULL, 0, h, cudaGraphCondTypeWhile, 0, NULL), cudaErrorInvalidValue);
    cr_expect_eq(cond_node(t, g, &forged_node, 1, h, cudaGraphCondTypeIf, 1, NULL), cudaErrorInvalidValue);
    cr_expect_eq(cond_node(t, forged, NULL, 0, h, cudaGraphCondTypeIf, 1, NULL), cudaErrorInvalidValue);
    /* The server's bound on one node's bodies. */
    cr_expect_eq(cond_node(t, g, NULL, 0, h, cudaGraphCondTypeSwitch, TDM_MAX_COND_BODIES + 1, NULL),
                 cudaErrorMemoryAllocation);
    cr_assert_eq(cond_node(t, g, NULL, 0, h, cudaGraphCondTypeSwitch, 3, &body), 0);
    /* A handle serves one node. */
    cr_expect_eq(cond_node(t, g, NULL, 0, h, cudaGraphCondTypeIf, 1, NULL), cudaErrorInvalidValue);
    /* A body is its node's: not destroyed on its own; it holds no memory nodes. */
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &body), cudaErrorInvalidValue);
    tdm_graph_mem_node_args mem = { .graph = body, .size = 4096 };
    tdm_graph_mem_node_res mr;
    memset(&mr, 0, sizeof(mr));
    cr_assert_eq(t->ops->call(t, TDM_GRAPH_ADD_MEM_NODE, (xdrproc_t)xdr_tdm_graph_mem_node_args, &mem,
                              (xdrproc_t)xdr_tdm_graph_mem_node_res, &mr),
                 0);
    cr_expect_eq(mr.err, cudaErrorNotSupported);
    /* Nesting: bodies inside bodies up to the bound, then refused (each
     * node with a new handle of the outer graph). */
    uint64_t at = body, hn = 0;
    int depth = 1, err = 0;
    while (handle_create(t, g, 0, &hn) == 0 && !(err = cond_node(t, at, NULL, 0, hn, cudaGraphCondTypeIf, 1, &inner))) {
        at = inner;
        depth++;
        cr_assert_lt(depth, 100, "nesting is not bounded");
    }
    cr_expect_eq(err, cudaErrorMemoryAllocation);
    cr_expect_eq(depth, 8, "nesting stopped at %d", depth);
    /* Another graph's handle is refused inside a body too; a body's own handle serves there. */
    cr_expect_eq(cond_node(t, body, NULL, 0, oh, cudaGraphCondTypeIf, 1, NULL), cudaErrorInvalidValue);
    uint64_t bh = 0, fresh = 0;
    cr_assert_eq(handle_create(t, body, 0, &bh), 0);
    cr_expect_eq(cond_node(t, g, NULL, 0, bh, cudaGraphCondTypeIf, 1, NULL), cudaErrorInvalidValue);
    cr_expect_eq(cond_node(t, body, NULL, 0, bh, cudaGraphCondTypeIf, 1, NULL), 0);
    /* Destroying the graph forgets its bodies and its handles. */
    cr_assert_eq(handle_create(t, g, 0, &fresh), 0);
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &g), 0);
    cr_expect_eq(cond_node(t, body, NULL, 0, fresh, cudaGraphCondTypeIf, 1, NULL), cudaErrorInvalidValue);
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &body), cudaErrorInvalidValue);
    uint64_t g3 = new_graph(t);
    cr_expect_eq(cond_node(t, g3, NULL, 0, fresh, cudaGraphCondTypeIf, 1, NULL), cudaErrorInvalidValue);
    t->ops->close(t);
}

Test(graph_cond_bad_input, captures_into_unknown_graphs_or_after_foreign_nodes_are_refused, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "graph-cond-capture");
    tdm_stream_create_args sc = { 0, 0 };
    tdm_handle_res stream = th_call_handle(t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc);
    uint64_t g = new_graph(t), other = new_graph(t);
    tdm_graph_add_node_args empty = { .graph = other, .kind = cudaGraphNodeTypeEmpty };
    tdm_handle_res foreign = th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &empty);
    tdm_handle forged = 0x4700000100000007ull;

    cr_assert_eq(stream.err, 0);
    cr_assert_eq(foreign.err, 0);
    /* Capture dependencies: only while capturing, only nodes of the capture's graph, known flags. */
    tdm_capture_deps_args u = { stream.handle, { 0, NULL }, cudaStreamSetCaptureDependencies };
    cr_expect_eq(th_call_int(t, TDM_STREAM_UPDATE_CAPTURE_DEPS, (xdrproc_t)xdr_tdm_capture_deps_args, &u),
                 cudaErrorIllegalState);
    tdm_capture_graph_res info;
    memset(&info, 0, sizeof(info));
    cr_assert_eq(t->ops->call(t, TDM_STREAM_CAPTURE_GRAPH, (xdrproc_t)xdr_tdm_handle, &stream.handle,
                              (xdrproc_t)xdr_tdm_capture_graph_res, &info),
                 0);
    cr_expect_eq(info.err, 0);
    cr_expect_eq(info.status, cudaStreamCaptureStatusNone);
    cr_expect_eq(info.graph, 0);
    xdr_free((xdrproc_t)xdr_tdm_capture_graph_res, (char *)&info);
    tdm_capture_begin_args plain = { stream.handle, cudaStreamCaptureModeGlobal };
    cr_assert_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE, (xdrproc_t)xdr_tdm_capture_begin_args, &plain), 0);
    u.deps.deps_len = 1;
    u.deps.deps_val = &foreign.handle;
    cr_expect_eq(th_call_int(t, TDM_STREAM_UPDATE_CAPTURE_DEPS, (xdrproc_t)xdr_tdm_capture_deps_args, &u),
                 cudaErrorInvalidValue);
    u.deps.deps_len = 0;
    u.flags = 5;
    cr_expect_eq(th_call_int(t, TDM_STREAM_UPDATE_CAPTURE_DEPS, (xdrproc_t)xdr_tdm_capture_deps_args, &u),
                 cudaErrorInvalidValue);
    memset(&info, 0, sizeof(info));
    cr_assert_eq(t->ops->call(t, TDM_STREAM_CAPTURE_GRAPH, (xdrproc_t)xdr_tdm_handle, &stream.handle,
                              (xdrproc_t)xdr_tdm_capture_graph_res, &info),
                 0);
    cr_expect_eq(info.status, cudaStreamCaptureStatusActive);
    cr_expect_neq(info.graph, 0);
    /* The capture's graph, named, stays while the capture is open and is what it ends into. */
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &info.graph), cudaErrorInvalidValue);
    tdm_handle_res ended = th_call_handle(t, TDM_STREAM_END_CAPTURE, (xdrproc_t)xdr_tdm_handle, &stream.handle);
    cr_expect_eq(ended.err, 0);
    cr_expect_eq(ended.handle, info.graph);
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &info.graph), 0);
    xdr_free((xdrproc_t)xdr_tdm_capture_graph_res, (char *)&info);
    tdm_capture_to_graph_args a = { stream.handle, forged, { 0, NULL }, cudaStreamCaptureModeGlobal };
    cr_expect_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE_TO_GRAPH, (xdrproc_t)xdr_tdm_capture_to_graph_args, &a),
                 cudaErrorInvalidValue);
    a.graph = g;
    a.deps.deps_len = 1;
    a.deps.deps_val = &foreign.handle;
    cr_expect_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE_TO_GRAPH, (xdrproc_t)xdr_tdm_capture_to_graph_args, &a),
                 cudaErrorInvalidValue);
    a.deps.deps_len = 0;
    a.deps.deps_val = NULL;
    a.mode = 9;
    cr_expect_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE_TO_GRAPH, (xdrproc_t)xdr_tdm_capture_to_graph_args, &a),
                 cudaErrorInvalidValue);
    a.mode = cudaStreamCaptureModeGlobal;
    cr_assert_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE_TO_GRAPH, (xdrproc_t)xdr_tdm_capture_to_graph_args, &a), 0);
    /* The graph being filled stays while the capture is open. */
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &g), cudaErrorInvalidValue);
    tdm_handle_res end = th_call_handle(t, TDM_STREAM_END_CAPTURE, (xdrproc_t)xdr_tdm_handle, &stream.handle);
    cr_expect_eq(end.err, 0);
    cr_expect_eq(end.handle, g, "the capture's graph is the one it went into");
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &g), 0);
    /* A capture into a graph left open at session end is released with it (the server stops cleanly). */
    a.graph = other;
    cr_expect_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE_TO_GRAPH, (xdrproc_t)xdr_tdm_capture_to_graph_args, &a), 0);
    /* So is a capture whose own graph was named. */
    tdm_handle_res s2 = th_call_handle(t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc);
    cr_assert_eq(s2.err, 0);
    plain.stream = s2.handle;
    cr_assert_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE, (xdrproc_t)xdr_tdm_capture_begin_args, &plain), 0);
    memset(&info, 0, sizeof(info));
    cr_assert_eq(t->ops->call(t, TDM_STREAM_CAPTURE_GRAPH, (xdrproc_t)xdr_tdm_handle, &s2.handle,
                              (xdrproc_t)xdr_tdm_capture_graph_res, &info),
                 0);
    cr_expect_neq(info.graph, 0);
    xdr_free((xdrproc_t)xdr_tdm_capture_graph_res, (char *)&info);
    t->ops->close(t);
}
