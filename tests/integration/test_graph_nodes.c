/* Graphs whose copies read and write host memory (docs/graphs.md, "Host
 * memory in graphs"): examples/graph_nodes.cu over TCP (every host side
 * staged on the server) and shm (pinned memory reached in place, pageable
 * staged) — explicit memcpy nodes from and to pinned and pageable memory,
 * the bytes of launch time, a clone, node/root/edge counts, exec update to
 * another destination, a captured graph with device-to-host copies into
 * pinned and pageable memory — checked against the program's host
 * reference; and what the server refuses: nodes of another graph, unknown
 * node handles, memory the session does not own, uploads for no node. */
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

/* What graph_nodes prints besides its checked results. */
static const char *const lines[] = {
    "pinned: explicit graph: 6 nodes, 2 roots, 5 edges\n",
    "pinned: device-to-host node: type 1\n",
    "pinned: clone: 6 nodes\n",
    "pinned: the transform's copy in the clone: type 0, another node\n",
    "pinned: exec update: result 0\n",
    "pageable: explicit graph: 6 nodes, 2 roots, 5 edges\n",
    "pageable: clone: 6 nodes\n",
    "pageable: exec update: result 0\n",
    "captured graph: 6 nodes\n",
    "captured graph 2: 6 nodes, exec update result 0\n",
    "structure: 4 nodes, 4 of them ours, slot 4 NULL\n",
    "structure: node 2 depends on 2 nodes (0 and 1)\n",
    "structure: 1 node depends on node 2\n",
    "structure: after removing 0->2: 2 edges, node 2 depends on 1\n",
    "structure: removing 0->2 again: cudaErrorInvalidValue\n",
    "structure: after destroying node 2: 3 nodes, 3 roots, 0 edges\n",
    "structure: dot file written\n",
    "structure: dot file in a missing directory: cudaErrorOperatingSystem\n",
    "symbols: 33 44\n",
    "symbols: past the end: cudaErrorInvalidValue\n",
    "graph_nodes: done\n",
};

static void expect_graph_nodes(const char *endpoint)
{
    const char *argv[] = { th_example("graph_nodes"), NULL };
    th_result *r = calloc(1, sizeof(*r));
    int checked = 0;

    cr_assert(r);
    th_run_guest(endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "graph_nodes (%s) exited %d:\n%s%s", endpoint, r->status, r->out, r->err);
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        cr_expect(strstr(r->out, lines[i]), "graph_nodes (%s) did not print %s:\n%s", endpoint, lines[i], r->out);
    cr_expect(!strstr(r->out, "MISMATCH"), "graph_nodes (%s):\n%s", endpoint, r->out);
    for (const char *p = r->out; (p = strstr(p, " ok\n")); p++)
        checked++;
    /* 5 results of the explicit graph and 3 of the captured, each variant. */
    cr_expect_eq(checked, 16, "graph_nodes (%s) checked %d results:\n%s", endpoint, checked, r->out);
    free(r);
}

Test(graph_nodes, host_memory_in_graphs_over_tcp, .init = up, .fini = down)
{
    expect_graph_nodes(srv.endpoint);
}

Test(graph_nodes_shm, host_memory_in_graphs_over_shm, .init = up, .fini = down)
{
    expect_graph_nodes(srv.shm_endpoint);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the session did not go over shm; see %s", srv.log);
}

/* ---- a guest speaking the protocol directly: what it has no right to ---- */

static int memcpy_node(tdm_transport *t, tdm_graph_memcpy_node_args *a)
{
    return th_call_handle(t, TDM_GRAPH_ADD_MEMCPY_NODE, (xdrproc_t)xdr_tdm_graph_memcpy_node_args, a).err;
}

static int nodes_err(tdm_transport *t, uint32_t proc, tdm_handle graph)
{
    tdm_graph_nodes_res r;
    int err;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, proc, (xdrproc_t)xdr_tdm_handle, &graph, (xdrproc_t)xdr_tdm_graph_nodes_res, &r), 0);
    err = r.err;
    xdr_free((xdrproc_t)xdr_tdm_graph_nodes_res, (char *)&r);
    return err;
}

static int sync_err(tdm_transport *t)
{
    return th_call_int(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL);
}

Test(graph_nodes_bad_input, foreign_unknown_and_unowned_are_refused, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "graph-nodes-bad-input");
    uint64_t size = 4096;
    tdm_malloc_res m;
    u_int zero = 0;
    tdm_handle_res ga, gb, na, nb, exec, stream;
    tdm_graph_add_node_args empty;
    tdm_graph_memcpy_node_args a;
    tdm_graph_instantiate_args inst;
    tdm_graph_upload_args up_args;
    tdm_graph_capture_dtoh_args cap;
    tdm_stream_create_args sc = { 0, 0 };
    tdm_handle forged = 0x4e00000100000042ull, unknown_graph = 0x4700000100000042ull;
    char bytes[16] = { 0 };

    memset(&m, 0, sizeof(m));
    cr_assert_eq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_tdm_u64, &size, (xdrproc_t)xdr_tdm_malloc_res, &m), 0);
    cr_assert_eq(m.err, 0);
    ga = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_u_int, &zero);
    gb = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_u_int, &zero);
    cr_assert(!ga.err && !gb.err);
    memset(&empty, 0, sizeof(empty));
    empty.graph = ga.handle;
    empty.kind = cudaGraphNodeTypeEmpty;
    na = th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &empty);
    cr_assert_eq(na.err, 0);

    /* A good device-to-device node of b, then what is wrong with it. */
    memset(&a, 0, sizeof(a));
    a = (tdm_graph_memcpy_node_args){ .graph = gb.handle, .kind = cudaMemcpyDeviceToDevice, .dst = m.addr,
                                      .src = m.addr + 2048, .size = 2048 };
    nb = th_call_handle(t, TDM_GRAPH_ADD_MEMCPY_NODE, (xdrproc_t)xdr_tdm_graph_memcpy_node_args, &a);
    cr_assert_eq(nb.err, 0);
    a.deps.deps_val = &na.handle;   /* a node of another graph */
    a.deps.deps_len = 1;
    cr_expect_eq(memcpy_node(t, &a), cudaErrorInvalidValue, "a dependency of another graph");
    a.deps.deps_val = &forged;      /* a node nobody made */
    cr_expect_eq(memcpy_node(t, &a), cudaErrorInvalidValue, "an unknown dependency");
    a.deps.deps_len = 0;
    a.graph = unknown_graph;
    cr_expect_eq(memcpy_node(t, &a), cudaErrorInvalidValue, "an unknown graph");
    a.graph = gb.handle;
    a.size = 4096;                  /* src runs past the allocation */
    cr_expect_eq(memcpy_node(t, &a), cudaErrorInvalidValue, "a source the session does not own");
    a.src = 0x1000;
    a.size = 16;
    cr_expect_eq(memcpy_node(t, &a), cudaErrorInvalidValue, "a forged source");
    a.kind = cudaMemcpyHostToDevice;
    a.dst = m.addr + 4096;
    cr_expect_eq(memcpy_node(t, &a), cudaErrorInvalidValue, "a destination past the allocation");
    a.kind = cudaMemcpyDeviceToHost;
    a.src = 0x1000;
    cr_expect_eq(memcpy_node(t, &a), cudaErrorInvalidValue, "a device-to-host source the session does not own");
    a.src = m.addr;
    a.shm = 1;                      /* a TCP session has no region */
    cr_expect_eq(memcpy_node(t, &a), cudaErrorInvalidValue, "shm bytes on a session without a region");
    a.shm = 0;
    a.kind = 9;
    cr_expect_eq(memcpy_node(t, &a), cudaErrorInvalidMemcpyDirection, "an unknown direction");

    /* Queries of graphs and nodes the session does not have. */
    cr_expect_eq(nodes_err(t, TDM_GRAPH_GET_NODES, unknown_graph), cudaErrorInvalidValue);
    cr_expect_eq(nodes_err(t, TDM_GRAPH_GET_ROOT_NODES, na.handle), cudaErrorInvalidValue, "a node is not a graph");
    cr_expect_eq(th_call_handle(t, TDM_GRAPH_CLONE, (xdrproc_t)xdr_tdm_handle, &unknown_graph).err, cudaErrorInvalidValue);
    cr_expect_eq(nodes_err(t, TDM_GRAPH_GET_NODES, gb.handle), 0);

    /* Uploads name an exec and one of its host-to-device nodes. */
    inst = (tdm_graph_instantiate_args){ gb.handle, 0 };
    exec = th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst);
    cr_assert_eq(exec.err, 0);
    up_args = (tdm_graph_upload_args){ .exec = exec.handle, .key = nb.handle, .offset = 0 };
    up_args.data.data_val = bytes;
    up_args.data.data_len = sizeof(bytes);
    cr_assert_eq(t->ops->post(t, TDM_GRAPH_HOST_UPLOAD, (xdrproc_t)xdr_tdm_graph_upload_args, &up_args), 0);
    cr_expect_eq(sync_err(t), cudaErrorInvalidValue, "an upload for a node that reads no host memory");
    up_args.exec = forged;
    cr_assert_eq(t->ops->post(t, TDM_GRAPH_HOST_UPLOAD, (xdrproc_t)xdr_tdm_graph_upload_args, &up_args), 0);
    cr_expect_eq(sync_err(t), cudaErrorInvalidResourceHandle, "an upload for an unknown exec");
    cr_expect_eq(sync_err(t), 0, "and only once");

    /* A staged capture of a copy needs a capturing stream and owned memory. */
    stream = th_call_handle(t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc);
    cr_assert_eq(stream.err, 0);
    cap = (tdm_graph_capture_dtoh_args){ .stream = stream.handle, .src = m.addr, .size = 16, .dst = 0x1234 };
    cr_expect_eq(th_call_int(t, TDM_GRAPH_CAPTURE_DTOH, (xdrproc_t)xdr_tdm_graph_capture_dtoh_args, &cap),
                 cudaErrorIllegalState, "not capturing");
    cap.src = 0x1000;
    cr_expect_eq(th_call_int(t, TDM_GRAPH_CAPTURE_DTOH, (xdrproc_t)xdr_tdm_graph_capture_dtoh_args, &cap),
                 cudaErrorInvalidValue, "a source the session does not own");
    t->ops->close(t);
}
