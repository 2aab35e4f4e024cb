/* Graph memory through Tandem (docs/graphs.md, "Graph memory"):
 * examples/graph_memory.cu over TCP and shm against host-computed sums
 * (allocation and free nodes around kernels, relaunched; an allocation left
 * to the program; captured cudaMallocAsync/cudaFreeAsync; the footprint
 * around trims, and growing with graphs running together in several
 * streams); what the server refuses a guest speaking the protocol
 * directly (unknown graphs and nodes, a free of memory no allocation node
 * made, a relaunch over an allocation still held, the server's own node
 * kinds, the attributes); the session's quota counting graph memory. */
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

/* The sum over i < N of v + i (pool_fill), as graph_memory computes it. */
static unsigned long long fill_sum(unsigned long long v)
{
    const unsigned long long n = 1ull << 20;

    return v * n + n * (n - 1) / 2;
}

static void expected_output(int launches, char *out, size_t cap)
{
    size_t len = (size_t)snprintf(out, cap,
                                  "a second allocation after the first one's free reuses its address: yes\n"
                                  "alloc node params: bytesize %d, dptr is the node's: yes; free node frees it: yes\n"
                                  "node types: alloc %d, free %d\n"
                                  "footprint before the first launch: 0\n",
                                  4 << 20, cudaGraphNodeTypeMemAlloc, cudaGraphNodeTypeMemFree);
    for (int r = 0; r < launches; r++)
        len += (size_t)snprintf(out + len, cap - len, "launch %d: sum %llu\n", r, 2 * fill_sum(7));
    len += (size_t)snprintf(out + len, cap - len,
                            "footprint after launches holds an allocation: yes\n"
                            "footprint after trim: 0\n"
                            "unfreed: the program reads it after the launch: sum %llu\n"
                            "unfreed: trim keeps it: yes\n"
                            "unfreed: after cudaFree and trim: 0\n"
                            "unfreed: relaunch then cudaFreeAsync: ok\n"
                            "unfreed: freed by another graph: ok\n"
                            "auto free on launch: three launches, sum %llu\n",
                            fill_sum(5), fill_sum(5));
    for (int r = 0; r < launches; r++)
        len += (size_t)snprintf(out + len, cap - len, "captured launch %d: sum %llu, kept sum %llu\n", r,
                                2 * fill_sum(11), 2 * fill_sum(11));
    for (int r = 0; r < 2; r++)
        len += (size_t)snprintf(out + len, cap - len, "captured across two streams, launch %d: sum %llu\n", r,
                                2 * fill_sum(13));
    snprintf(out + len, cap - len,
             "captured: footprint after trim: 0\n"
             "generic nodes: sum %llu\n"
             "generic nodes, exec's fill set: sum %llu\n"
             "generic nodes, graph's fill set: sum %llu\n"
             "generic node with reserved bytes set: cudaErrorInvalidValue\n"
             "concurrent streams: footprint grows with each launch: yes\n"
             "after the streams finished, a launch reuses their memory: yes\n"
             "concurrent streams: footprint after trim: 0\n"
             "high marks after reset: used 0, reserved 0\n"
             "set a high mark to 1: cudaErrorInvalidValue\n"
             "set the current footprint: cudaErrorInvalidValue\n"
             "attribute of device 7: cudaErrorInvalidDevice\n"
             "trim device 7: cudaErrorInvalidDevice\n"
             "allocation node of 0 bytes: cudaErrorInvalidValue\n"
             "graph_memory: done\n",
             2 * fill_sum(4), 2 * fill_sum(3), 2 * fill_sum(2));
}

static void expect_graph_memory(const char *endpoint, int launches)
{
    char n[16], want[4096];
    const char *argv[] = { th_example("graph_memory"), n, NULL };
    th_result *r = calloc(1, sizeof(*r));

    cr_assert(r);
    snprintf(n, sizeof(n), "%d", launches);
    expected_output(launches, want, sizeof(want));
    th_run_guest(endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "graph_memory (%s) exited %d:\n%s%s", endpoint, r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want, "graph_memory (%s) printed\n%s\nexpected\n%s", endpoint, r->out, want);
    free(r);
}

Test(graph_mem, memory_nodes_captures_and_footprint, .init = up, .fini = down)
{
    expect_graph_memory(srv.endpoint, 3);
}

Test(graph_mem_shm, memory_nodes_captures_and_footprint, .init = up, .fini = down)
{
    expect_graph_memory(srv.shm_endpoint, 2);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the session did not go over shm; see %s", srv.log);
}

/* ---- a guest speaking the protocol directly ---- */

static tdm_graph_mem_node_res add_mem_node(tdm_transport *t, uint64_t graph, tdm_handle *deps, u_int ndeps, int free,
                                           uint64_t size, uint64_t addr)
{
    tdm_graph_mem_node_args a = { .graph = graph, .deps = { ndeps, deps }, .free = free, .size = size, .addr = addr };
    tdm_graph_mem_node_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_GRAPH_ADD_MEM_NODE, (xdrproc_t)xdr_tdm_graph_mem_node_args, &a,
                              (xdrproc_t)xdr_tdm_graph_mem_node_res, &r),
                 0, "transport failed");
    return r;
}

static int node_params(tdm_transport *t, uint64_t node)
{
    tdm_graph_mem_params_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_GRAPH_MEM_NODE_GET_PARAMS, (xdrproc_t)xdr_tdm_handle, &node,
                              (xdrproc_t)xdr_tdm_graph_mem_params_res, &r),
                 0, "transport failed");
    return r.err;
}

static uint64_t device_malloc(tdm_transport *t, uint64_t size, int *err)
{
    tdm_malloc_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_tdm_u64, &size, (xdrproc_t)xdr_tdm_malloc_res, &r), 0);
    *err = r.err;
    return r.addr;
}

static int sync_device(tdm_transport *t)
{
    return th_call_int(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL);
}

Test(graph_mem_bad_input, unknown_handles_foreign_frees_and_held_allocations_are_refused, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "graph-mem-bad-input");
    tdm_stream_create_args sc = { 0, 0 };
    tdm_handle_res stream = th_call_handle(t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc);
    unsigned flags = 0;
    tdm_handle_res graph = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &flags);
    tdm_handle forged = 0x4700000100000007ull, forged_node = 0x4e00000100000003ull;
    int err = -1;
    uint64_t plain = device_malloc(t, 4096, &err);

    cr_assert_eq(stream.err, 0);
    cr_assert_eq(graph.err, 0);
    cr_assert_eq(err, 0);
    /* Unknown graph, unknown dependency, zero bytes. */
    cr_expect_eq(add_mem_node(t, forged, NULL, 0, 0, 4096, 0).err, cudaErrorInvalidValue);
    cr_expect_eq(add_mem_node(t, graph.handle, &forged_node, 1, 0, 4096, 0).err, cudaErrorInvalidValue);
    cr_expect_eq(add_mem_node(t, graph.handle, NULL, 0, 0, 0, 0).err, cudaErrorInvalidValue);
    /* A free node only for memory an allocation node made: not a cudaMalloc's,
     * not an address inside a graph allocation, not an address of nothing. */
    cr_expect_eq(add_mem_node(t, graph.handle, NULL, 0, 1, 0, plain).err, cudaErrorInvalidValue);
    cr_expect_eq(add_mem_node(t, graph.handle, NULL, 0, 1, 0, 0x7777000ull).err, cudaErrorInvalidValue);
    tdm_graph_mem_node_res alloc = add_mem_node(t, graph.handle, NULL, 0, 0, 1 << 20, 0);
    cr_assert_eq(alloc.err, 0);
    cr_expect_neq(alloc.addr, 0);
    cr_expect_eq(add_mem_node(t, graph.handle, &alloc.node, 1, 1, 0, alloc.addr + 64).err, cudaErrorInvalidValue);
    /* Node parameters: of memory nodes only. */
    cr_expect_eq(node_params(t, alloc.node), 0);
    cr_expect_eq(node_params(t, forged_node), cudaErrorInvalidValue);
    tdm_graph_add_node_args empty = { .graph = graph.handle, .kind = cudaGraphNodeTypeEmpty };
    tdm_handle_res e = th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &empty);
    cr_assert_eq(e.err, 0);
    cr_expect_eq(node_params(t, e.handle), cudaErrorInvalidValue);
    /* The server's own node kinds cannot be asked for through the generic call. */
    tdm_graph_add_node_args typed = { .graph = graph.handle, .kind = cudaGraphNodeTypeMemAlloc };
    cr_expect_eq(th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &typed).err,
                 cudaErrorInvalidValue);
    typed.kind = cudaGraphNodeTypeMemFree;
    cr_expect_eq(th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &typed).err,
                 cudaErrorInvalidValue);

    /* The graph leaves its allocation to the program: relaunching before
     * it is freed is refused (at the next synchronizing call), freeing it
     * twice too; freed, the graph launches again. */
    tdm_graph_instantiate_args inst = { graph.handle, 0 };
    tdm_handle_res exec = th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst);
    tdm_graph_launch_args launch = { 0, stream.handle };
    tdm_addr a = alloc.addr;
    cr_assert_eq(exec.err, 0);
    cr_expect_eq(th_call_int(t, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &a), cudaErrorInvalidValue,
                 "not allocated before a launch");
    launch.exec = exec.handle;
    cr_assert_eq(t->ops->post(t, TDM_GRAPH_LAUNCH, (xdrproc_t)xdr_tdm_graph_launch_args, &launch), 0);
    cr_expect_eq(sync_device(t), 0);
    cr_assert_eq(t->ops->post(t, TDM_GRAPH_LAUNCH, (xdrproc_t)xdr_tdm_graph_launch_args, &launch), 0);
    cr_expect_eq(sync_device(t), cudaErrorInvalidValue, "a relaunch over an allocation still held");
    cr_expect_eq(th_call_int(t, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &a), 0);
    cr_expect_eq(th_call_int(t, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &a), cudaErrorInvalidValue, "freed twice");
    cr_assert_eq(t->ops->post(t, TDM_GRAPH_LAUNCH, (xdrproc_t)xdr_tdm_graph_launch_args, &launch), 0);
    cr_expect_eq(sync_device(t), 0);
    /* A free graph over memory that is not allocated: refused at launch. */
    tdm_handle_res g2 = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &flags);
    cr_assert_eq(g2.err, 0);
    tdm_graph_mem_node_res fr = add_mem_node(t, g2.handle, NULL, 0, 1, 0, alloc.addr);
    cr_assert_eq(fr.err, 0);
    inst.graph = g2.handle;
    tdm_handle_res x2 = th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst);
    cr_assert_eq(x2.err, 0);
    launch.exec = x2.handle;
    cr_assert_eq(t->ops->post(t, TDM_GRAPH_LAUNCH, (xdrproc_t)xdr_tdm_graph_launch_args, &launch), 0);
    cr_expect_eq(sync_device(t), 0, "frees what the last launch left");
    cr_assert_eq(t->ops->post(t, TDM_GRAPH_LAUNCH, (xdrproc_t)xdr_tdm_graph_launch_args, &launch), 0);
    cr_expect_eq(sync_device(t), cudaErrorInvalidValue, "frees it again");

    /* Attributes: unknown ones, and high marks only reset. */
    tdm_graph_mem_attr_args attr = { 9, 0 };
    cr_expect_eq(th_call_int(t, TDM_DEVICE_SET_GRAPH_MEM_ATTR, (xdrproc_t)xdr_tdm_graph_mem_attr_args, &attr),
                 cudaErrorInvalidValue);
    attr = (tdm_graph_mem_attr_args){ cudaGraphMemAttrReservedMemHigh, 5 };
    cr_expect_eq(th_call_int(t, TDM_DEVICE_SET_GRAPH_MEM_ATTR, (xdrproc_t)xdr_tdm_graph_mem_attr_args, &attr),
                 cudaErrorInvalidValue);
    tdm_u64_res v;
    memset(&v, 0, sizeof(v));
    attr.attr = -1;
    cr_assert_eq(t->ops->call(t, TDM_DEVICE_GET_GRAPH_MEM_ATTR, (xdrproc_t)xdr_tdm_graph_mem_attr_args, &attr,
                              (xdrproc_t)xdr_tdm_u64_res, &v),
                 0);
    cr_expect_eq(v.err, cudaErrorInvalidValue);

    /* Graphs gone, the memory goes; the session ends cleanly with an exec left. */
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &graph.handle), 0);
    cr_expect_eq(th_call_int(t, TDM_GRAPH_EXEC_DESTROY, (xdrproc_t)xdr_tdm_handle, &exec.handle), 0);
    cr_expect_eq(add_mem_node(t, g2.handle, NULL, 0, 1, 0, alloc.addr).err, cudaErrorInvalidValue,
                 "the allocation is no graph's any more");
    t->ops->close(t);
}

/* Graph memory is the session's memory: its quota counts it. */
Test(graph_mem_bad_input, the_session_quota_counts_graph_memory)
{
    const char *args[] = { "--session-quota", "8M", NULL };
    th_server q;
    unsigned flags = 0;
    int err = -1;

    th_server_start(&q, args);
    tdm_transport *t = th_guest_open(q.endpoint, "graph-mem-quota");
    tdm_handle_res graph = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &flags);
    cr_assert_eq(graph.err, 0);
    cr_expect_eq(add_mem_node(t, graph.handle, NULL, 0, 0, 16u << 20, 0).err, cudaErrorMemoryAllocation);
    tdm_graph_mem_node_res a = add_mem_node(t, graph.handle, NULL, 0, 0, 6u << 20, 0);
    cr_expect_eq(a.err, 0);
    device_malloc(t, 4u << 20, &err);
    cr_expect_eq(err, cudaErrorMemoryAllocation, "the graph's 6 MiB leave no room for 4 more");
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &graph.handle), 0);
    device_malloc(t, 4u << 20, &err);
    cr_expect_eq(err, 0, "destroying the graph gave its memory back");
    t->ops->close(t);
    cr_expect_eq(th_server_stop(&q), 0);
}

/* Guards tdm_session_malloc's relaxed capture mode (server/session.c).  The server begins a
 * guest's global-mode capture in thread-local mode on the session's thread (session_graph.c),
 * and the sim, as CUDA, then refuses memory made on that thread unless it is relaxed.  The
 * server's allocation is not the program's unsafe call: PyTorch's caching allocator allocates
 * while it captures, after switching its own thread to relaxed mode, which the guest keeps to
 * itself; neither that session nor a bystander may be refused. */
Test(graph_mem_bad_input, a_capture_in_global_mode_refuses_no_sessions_allocation, .init = up, .fini = down)
{
    tdm_transport *a = th_guest_open(srv.endpoint, "global-capture");
    tdm_transport *b = th_guest_open(srv.endpoint, "bystander");
    tdm_stream_create_args sc = { 0, 0 };
    tdm_handle_res stream = th_call_handle(a, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc);
    int err = -1;

    cr_assert_eq(stream.err, 0);
    tdm_capture_begin_args begin = { stream.handle, cudaStreamCaptureModeGlobal };
    cr_assert_eq(th_call_int(a, TDM_STREAM_BEGIN_CAPTURE, (xdrproc_t)xdr_tdm_capture_begin_args, &begin), 0);
    cr_expect_neq(device_malloc(b, 1 << 20, &err), 0);
    cr_expect_eq(err, 0, "another session's capture in global mode refused a bystander's cudaMalloc (%d)", err);
    err = -1;
    cr_expect_neq(device_malloc(a, 1 << 20, &err), 0);
    cr_expect_eq(err, 0, "the capturing session's own cudaMalloc was refused (%d)", err);
    a->ops->close(a);
    b->ops->close(b);
}
