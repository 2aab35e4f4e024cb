/* CUDA graphs through Tandem (docs/graphs.md): examples/graph_capture.cu
 * captured across two streams joined by events, replayed several times on
 * the server as one graph, over TCP and shm, against a host reference; the
 * capture errors a program can meet; an executable graph updated from a
 * new capture of the same shape, and not from another shape; forged and
 * stale graph handles refused; a graph built node by node (graph_explicit);
 * and a session that makes a graph is
 * no longer protected by its standby while one without graphs stays so. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "guest_calls.h"
#include "takeover_pair.h"
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

/* What graph_capture computes, on the host: se_transform on both halves
 * (the first with factor k0), se_combine, FNV-1a over the result's bytes. */
static uint64_t reference_checksum(uint32_t k0)
{
    enum { N = 1 << 16, HALF = N / 2 };
    uint64_t h = 1469598103934665603ull;

    for (uint32_t i = 0; i < HALF; i++) {
        uint32_t a = (i * 2654435761u) * k0 + (i + 1u);
        uint32_t b = ((HALF + i) * 2654435761u) * 5u + (i + 2u);
        uint32_t v = (a ^ (b >> 3)) + 7u * i;
        for (int k = 0; k < 4; k++) {
            h ^= (v >> (8 * k)) & 0xffu;
            h *= 1099511628211ull;
        }
    }
    return h;
}

static void expected_output(int launches, char *out, size_t cap)
{
    uint64_t sum = reference_checksum(3u), updated = reference_checksum(7u);
    size_t len = (size_t)snprintf(out, cap,
                                  "end capture of a stream not capturing: cudaErrorIllegalState\n"
                                  "begin capture on the legacy stream: cudaErrorStreamCaptureUnsupported\n"
                                  "before capture: none\norigin stream: active\nforked stream: active\n"
                                  "forked stream after the end: none\n");
    for (int r = 0; r < launches; r++)
        len += (size_t)snprintf(out + len, cap - len, "launch %d: checksum %016llx\n", r, (unsigned long long)sum);
    snprintf(out + len, cap - len,
             "update, same topology: cudaSuccess (result %d)\n"
             "launch after the update: checksum %016llx\n"
             "update, other topology: cudaErrorGraphExecUpdateFailure (result %d)\n"
             "launch after the refused update: checksum %016llx\n"
             "synchronize a capturing stream: cudaErrorStreamCaptureUnsupported\n"
             "after the synchronize: invalidated\n"
             "end the invalidated capture: cudaErrorStreamCaptureInvalidated\n"
             "after its end: none\ngraph_capture: done\n",
             cudaGraphExecUpdateSuccess, (unsigned long long)updated, cudaGraphExecUpdateErrorTopologyChanged,
             (unsigned long long)updated);
}

/* Runs argv through Tandem at endpoint; its output must be want. */
static void expect_output(const char *endpoint, const char *const *argv, const char *want)
{
    th_result *r = calloc(1, sizeof(*r));

    cr_assert(r);
    th_run_guest(endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "%s (%s) exited %d:\n%s%s", argv[0], endpoint, r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want, "%s (%s) printed\n%s\nexpected\n%s", argv[0], endpoint, r->out, want);
    free(r);
}

static void expect_capture_replays(const char *endpoint)
{
    const char *argv[] = { th_example("graph_capture"), "4", NULL };
    char want[2048];

    expected_output(4, want, sizeof(want));
    expect_output(endpoint, argv, want);
}

Test(graphs, capture_across_two_streams_replays_identically, .init = up, .fini = down)
{
    expect_capture_replays(srv.endpoint);
}

Test(graphs_shm, capture_across_two_streams_replays_identically, .init = up, .fini = down)
{
    expect_capture_replays(srv.shm_endpoint);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the session did not go over shm; see %s", srv.log);
}

/* A graph built node by node (graph_explicit): the same computation, so the
 * same checksum, whatever order the independent nodes run in; new kernel
 * parameters for the graph's node reach execs made after, not before, and
 * for an exec's node that exec. */
static void expect_explicit_graph(const char *endpoint)
{
    const char *argv[] = { th_example("graph_explicit"), "3", NULL };
    unsigned long long sum = (unsigned long long)reference_checksum(3u), seven = reference_checksum(7u);
    char want[1024];

    snprintf(want, sizeof(want),
             "node upload: type %d\nnode memset: type %d\nnode transform: type %d\nnode empty: type %d\n"
             "node combine: type %d\nnode keep: type %d\n"
             "launch 0: checksum %016llx\nlaunch 1: checksum %016llx\nlaunch 2: checksum %016llx\n"
             "exec after the graph's node changed: checksum %016llx\nnew exec: checksum %016llx\n"
             "exec after its node changed: checksum %016llx\ngraph_explicit: done\n",
             cudaGraphNodeTypeMemcpy, cudaGraphNodeTypeMemset, cudaGraphNodeTypeKernel, cudaGraphNodeTypeEmpty,
             cudaGraphNodeTypeKernel, cudaGraphNodeTypeMemcpy, sum, sum, sum, sum, seven, seven);
    expect_output(endpoint, argv, want);
}

Test(graphs, explicit_graph_replays_identically, .init = up, .fini = down)
{
    expect_explicit_graph(srv.endpoint);
}

Test(graphs_shm, explicit_graph_replays_identically, .init = up, .fini = down)
{
    expect_explicit_graph(srv.shm_endpoint);
}

/* A session without graphs keeps its standby; the first capture ends
 * protection for good, and the active's log names the call that did it. */
Test(graphs, a_capture_ends_protection_and_the_log_says_so)
{
    const char *plain[] = { th_example("streams_events"), NULL };
    const char *graphs[] = { th_example("graph_capture"), "1", NULL };
    th_result *r = calloc(1, sizeof(*r));
    th_pair p;

    th_require_sim();
    cr_assert(r);
    th_pair_start(&p, NULL, NULL);
    th_run_guest(p.active.endpoint, plain, 120, r);
    cr_assert_eq(r->status, 0, "streams_events exited %d:\n%s", r->status, r->err);
    cr_expect(!th_server_log_has(&p.active, "no longer protected"),
              "a session without graphs lost its protection; see %s", p.active.log);
    th_run_guest(p.active.endpoint, graphs, 120, r);
    cr_assert_eq(r->status, 0, "graph_capture exited %d:\n%s", r->status, r->err);
    /* graph_capture's first graph call is a cudaStreamEndCapture (refused). */
    cr_expect(th_server_log_has(&p.active, "TDM_STREAM_END_CAPTURE made state no standby can have: the session "
                                           "is no longer protected"),
              "the log does not say which call ended protection; see %s", p.active.log);
    th_pair_stop(&p);
    free(r);
}

/* ---- a guest speaking the protocol directly: handles it has no right to ---- */

static tdm_transport *guest_open(void)
{
    return th_guest_open(srv.endpoint, "graphs-bad-input");
}

Test(graphs_bad_input, forged_stale_and_wrong_typed_handles_are_refused, .init = up, .fini = down)
{
    tdm_transport *t = guest_open();
    tdm_stream_create_args sc = { 0, 0 };
    tdm_handle_res stream = th_call_handle(t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc);
    tdm_handle forged[] = { 0x4700000100000007ull, 0x5800000100000001ull, 3, UINT64_MAX };
    tdm_capture_begin_args begin = { stream.handle, cudaStreamCaptureModeGlobal };
    tdm_capture_begin_args bad_mode = { stream.handle, 7 };
    tdm_handle unknown_stream = 0x5300000100000042ull;
    tdm_graph_instantiate_args inst = { 0, 0 };
    tdm_graph_launch_args launch = { 0, stream.handle };
    tdm_handle_res graph, exec;

    cr_assert_eq(stream.err, 0);
    for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
        inst.graph = forged[i];
        cr_expect_eq(th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst).err,
                     cudaErrorInvalidValue, "instantiate %#llx", (unsigned long long)forged[i]);
        cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &forged[i]), cudaErrorInvalidValue);
        cr_expect_eq(th_call_int(t, TDM_GRAPH_EXEC_DESTROY, (xdrproc_t)xdr_tdm_handle, &forged[i]),
                     cudaErrorInvalidValue);
    }
    cr_expect_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE, (xdrproc_t)xdr_tdm_capture_begin_args, &bad_mode),
                 cudaErrorInvalidValue, "an unknown capture mode");
    cr_expect_eq(th_call_handle(t, TDM_STREAM_END_CAPTURE, (xdrproc_t)xdr_tdm_handle, &unknown_stream).err,
                 cudaErrorInvalidResourceHandle, "end capture on a stream the session does not have");

    /* An empty capture makes an empty graph; its exec, once destroyed, is stale. */
    cr_assert_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE, (xdrproc_t)xdr_tdm_capture_begin_args, &begin), 0);
    graph = th_call_handle(t, TDM_STREAM_END_CAPTURE, (xdrproc_t)xdr_tdm_handle, &stream.handle);
    cr_assert_eq(graph.err, 0);
    inst.graph = graph.handle;
    exec = th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst);
    cr_assert_eq(exec.err, 0);
    /* A graph is not an exec, nor an exec a graph. */
    cr_expect_eq(th_call_int(t, TDM_GRAPH_EXEC_DESTROY, (xdrproc_t)xdr_tdm_handle, &graph.handle), cudaErrorInvalidValue);
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &exec.handle), cudaErrorInvalidValue);
    cr_expect_eq(th_call_int(t, TDM_GRAPH_EXEC_DESTROY, (xdrproc_t)xdr_tdm_handle, &exec.handle), 0);
    launch.exec = exec.handle;
    cr_assert_eq(t->ops->post(t, TDM_GRAPH_LAUNCH, (xdrproc_t)xdr_tdm_graph_launch_args, &launch), 0);
    cr_expect_eq(th_call_int(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL), cudaErrorInvalidResourceHandle,
                 "a launch of a destroyed exec reports at the next synchronizing call");
    cr_expect_eq(th_call_int(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL), 0, "and only once");
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &graph.handle), 0);

    /* A stream destroyed while it captures takes its capture with it; the
     * session goes on, and captures again on another stream. */
    cr_assert_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE, (xdrproc_t)xdr_tdm_capture_begin_args, &begin), 0);
    cr_expect_eq(th_call_int(t, TDM_STREAM_DESTROY, (xdrproc_t)xdr_tdm_handle, &stream.handle), 0);
    cr_expect_eq(th_call_int(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL), 0);
    stream = th_call_handle(t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc);
    cr_assert_eq(stream.err, 0);
    begin.stream = stream.handle;
    cr_expect_eq(th_call_int(t, TDM_STREAM_BEGIN_CAPTURE, (xdrproc_t)xdr_tdm_capture_begin_args, &begin), 0);
    graph = th_call_handle(t, TDM_STREAM_END_CAPTURE, (xdrproc_t)xdr_tdm_handle, &stream.handle);
    cr_expect_eq(graph.err, 0);
    t->ops->close(t);
}
