/* Graph host nodes (docs/graphs.md "Host nodes"): host-nodes-check
 * (examples/host_nodes_check.cu) through a real server on the sim backend
 * over TCP and shm: captured and explicit host nodes read what the
 * device-to-host copy before them wrote, in pinned and pageable memory, at
 * each of the launches; bad input is refused. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
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

static const char want[] =
    "captured (pinned): 3 nodes, host function ran at capture: no\n"
    "captured (pinned): host function ran 4 times, saw 253 506 759 1012 (as the host reference)\n"
    "captured (pageable): 3 nodes, host function ran at capture: no\n"
    "captured (pageable): host function ran 4 times, saw 1265 1518 1771 2024 (as the host reference)\n"
    "explicit (pinned): host node type 3, params as given\n"
    "explicit (pinned): host function ran 4 times, saw 2277 2530 2783 3036 (as the host reference)\n"
    "explicit (pageable): host node type 3, params as given\n"
    "explicit (pageable): host function ran 4 times, saw 3289 3542 3795 4048 (as the host reference)\n"
    "host node, NULL fn: cudaErrorInvalidValue\n"
    "host node, NULL params: cudaErrorInvalidValue\n"
    "host params of a kernel node: cudaErrorInvalidValue\n"
    "set host params of a kernel node: cudaErrorInvalidValue\n"
    "cudaLaunchHostFunc, NULL fn: cudaErrorInvalidValue\n"
    "PASSED\n";

Test(graph_host_nodes, run_in_graph_order_at_each_launch_over_tcp_and_shm, .init = up, .fini = down)
{
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };
    const char *argv[] = { th_bin("host-nodes-check"), NULL };

    for (int i = 0; i < 2; i++) {
        th_result *r = calloc(1, sizeof(*r));

        th_run_guest(endpoints[i], argv, 60, r);
        cr_assert_eq(r->status, 0, "host-nodes-check (%s) exited %d:\n%s%s", endpoints[i], r->status, r->out,
                     r->err);
        cr_expect_str_eq(r->out, want, "host-nodes-check (%s) printed\n%s", endpoints[i], r->out);
        free(r);
    }
}

/* ---- a guest speaking the protocol directly ---- */

static tdm_handle_res handle_call(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a)
{
    tdm_handle_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, proc, xa, a, (xdrproc_t)xdr_tdm_handle_res, &r), 0, "transport failed");
    return r;
}

/* Reports done (0: none), then polls until an instance is due (at most
 * `waits` more polls 10 ms apart): its number (0: none) and key. */
static uint64_t poll_due(tdm_transport *t, uint64_t done, uint64_t *key, int waits)
{
    uint64_t seq = 0;

    *key = 0;
    for (;; waits--, done = 0) {
        tdm_callback_poll_args a = { .done = { done ? 1u : 0u, &done } };
        tdm_callback_poll_res r = { 0 };

        cr_assert_eq(t->ops->call(t, TDM_CALLBACK_POLL, (xdrproc_t)xdr_tdm_callback_poll_args, &a,
                                  (xdrproc_t)xdr_tdm_callback_poll_res, &r),
                     0);
        cr_assert_eq(r.err, 0, "poll refused: %d", r.err);
        if (r.due.due_len) {
            seq = r.due.due_val[0].seq;
            *key = r.due.due_val[0].fn;
        }
        xdr_free((xdrproc_t)xdr_tdm_callback_poll_res, (char *)&r);
        if (seq || waits <= 0)
            return seq;
        usleep(10 * 1000);
    }
}

/* The stream's state once its work is done or after `waits` tries 10 ms apart. */
static int stream_state(tdm_transport *t, uint64_t stream, int waits)
{
    for (int res = -1;; waits--) {
        cr_assert_eq(t->ops->call(t, TDM_STREAM_QUERY, (xdrproc_t)xdr_u_quad_t, &stream, (xdrproc_t)xdr_int, &res),
                     0);
        if (res != cudaErrorNotReady || waits <= 0)
            return res;
        usleep(10 * 1000);
    }
}

/* A host node without a key is refused; each launch holds its stream at
 * the node until the guest reports the node's instance done; a session
 * that ends with a launch held there releases it (the server stops
 * cleanly). */
Test(graph_host_nodes_protocol, a_launch_waits_at_the_node_until_reported_done, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "host-nodes-protocol");
    u_int zero = 0;
    tdm_handle_res g, n, exec, stream;
    tdm_graph_add_node_args node;
    tdm_graph_instantiate_args inst;
    tdm_stream_create_args sc = { 0, 0 };
    tdm_graph_launch_args launch;
    tdm_graph_fetch_res f;
    tdm_handle cursor = 0;
    uint64_t seq = 0, key = 0;

    g = handle_call(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_u_int, &zero);
    cr_assert_eq(g.err, 0);
    memset(&node, 0, sizeof(node));
    node.graph = g.handle;
    node.kind = cudaGraphNodeTypeHost;
    cr_expect_eq(handle_call(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &node).err,
                 cudaErrorInvalidValue, "a host node without a key");
    node.src = 77;
    n = handle_call(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &node);
    cr_assert_eq(n.err, 0);
    inst = (tdm_graph_instantiate_args){ g.handle, 0 };
    exec = handle_call(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst);
    cr_assert_eq(exec.err, 0);
    stream = handle_call(t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc);
    cr_assert_eq(stream.err, 0);

    launch = (tdm_graph_launch_args){ exec.handle, stream.handle };
    cr_assert_eq(t->ops->post(t, TDM_GRAPH_LAUNCH, (xdrproc_t)xdr_tdm_graph_launch_args, &launch), 0);
    seq = poll_due(t, 0, &key, 500);
    cr_assert_neq(seq, 0, "the host node never became due");
    cr_expect_eq(key, 77, "the node's key");
    cr_expect_eq(stream_state(t, stream.handle, 0), cudaErrorNotReady, "the stream waits at the node");
    memset(&f, 0, sizeof(f));
    cr_assert_eq(t->ops->call(t, TDM_GRAPH_HOST_FETCH_NOW, (xdrproc_t)xdr_tdm_handle, &cursor,
                              (xdrproc_t)xdr_tdm_graph_fetch_res, &f),
                 0);
    cr_expect(f.err == 0 && f.got == 0, "no staged output to take");
    xdr_free((xdrproc_t)xdr_tdm_graph_fetch_res, (char *)&f);
    poll_due(t, seq, &key, 0);
    cr_expect_eq(stream_state(t, stream.handle, 500), 0, "the launch finished once the node was reported done");

    /* Launched again and never reported: the session's end releases it. */
    cr_assert_eq(t->ops->post(t, TDM_GRAPH_LAUNCH, (xdrproc_t)xdr_tdm_graph_launch_args, &launch), 0);
    t->ops->close(t);
}
