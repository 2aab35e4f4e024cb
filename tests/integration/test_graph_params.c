/* Graph node parameters after the nodes were made (docs/graphs.md "Node
 * parameters and updates"): examples/graph_params.cu over TCP (its
 * device-to-host node staged) and shm, every result checked against the
 * program's host reference — kernel, memset and memcpy nodes' parameters
 * as given, new kernel and memset parameters for a graph's node (execs
 * made before keep theirs) and for one exec's node, nodes disabled and
 * enabled again (a disabled device-to-host copy leaves host memory alone),
 * instantiation flags, kernel node attributes (set, got, copied; a
 * cooperative node launched), an exec's host node given functions of its
 * own (the graph's node and another exec keep theirs), refusals; and what the server refuses a guest
 * speaking the protocol: unknown and foreign nodes and execs, node types
 * that cannot be disabled, memset ranges the session does not own. */
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

/* What graph_params prints besides its checked results. */
static const char *const lines[] = {
    "kernel node: func ours, grid 64,1,1 block 256,1,1 shared 0, args x ours n 16384 k 3 base 11\n",
    "memset node: dst ours value 0x01010101 element 4 width 16384 height 1\n",
    "memcpy node: src ours dst ours extent 65536,1,1 kind 3\n",
    "1D memcpy node: src ours dst ours width 65536 kind 2\n",
    "exec flags: 0\n",
    /* 0, 0 and 0 natively (H100 run of 2026-11-24): the driver reports no
     * UseNodePriority flag, and a priority of 1 is out of the device's range
     * [-5, 0] and reads back as 0. */
    "exec flags with node priority: 0\n",
    "kernel node enabled: 1\n",
    "kernel node enabled after disabling: 0\n",
    "device-to-host copy disabled: host memory untouched\n",
    "the other exec's kernel node enabled: 1\n",
    "kernel node after set: k 5 base 7\n",
    "memset node after set: value 0x03030303\n",
    "the graph's memset node still: value 0x03030303\n",
    "kernel params of a memset node: cudaErrorInvalidValue\n",
    "memset params of a kernel node: cudaErrorInvalidValue\n",
    "memcpy params of an empty node: cudaErrorInvalidValue\n",
    "memset set on a kernel node: cudaErrorInvalidValue\n",
    "disabling an empty node: cudaErrorInvalidValue\n",
    "disabling a node of another graph: cudaErrorInvalidValue\n",
    "exec memset set of a node of another graph: cudaErrorInvalidValue\n",
    "exec copy to another buffer and host memory: ok, old buffer untouched, old host memory untouched\n",
    "memcpy node after set: src the new host memory\n",
    "exec copy changing direction: cudaErrorInvalidValue\n",
    "memcpy set on a kernel node: cudaErrorInvalidValue\n",
    "kernel node priority before: 0\n",
    "kernel node priority: 0\n",
    "kernel node cooperative: 1\n",
    "kernel node access policy window: base ours bytes 4096 hit ratio 0.50\n",
    "copied attributes: priority 0 cooperative 1\n",
    "access policy window hit ratio 2: cudaErrorInvalidValue\n",
    "attribute of a memset node: cudaErrorInvalidValue\n",
    "host nodes: a ran 2, b ran 31\n",
    "the graph's host node: its own function\n",
    "exec host params of an empty node: cudaErrorInvalidValue\n",
    "exec host params without a function: cudaErrorInvalidValue\n",
    "graph_params: done\n",
};

static void expect_graph_params(const char *endpoint)
{
    const char *argv[] = { th_example("graph_params"), "3", NULL };
    th_result *r = calloc(1, sizeof(*r));
    int checked = 0;

    cr_assert(r);
    th_run_guest(endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "graph_params (%s) exited %d:\n%s%s", endpoint, r->status, r->out, r->err);
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        cr_expect(strstr(r->out, lines[i]), "graph_params (%s) did not print %s:\n%s", endpoint, lines[i], r->out);
    cr_expect(!strstr(r->out, "MISMATCH"), "graph_params (%s):\n%s", endpoint, r->out);
    for (const char *p = r->out; (p = strstr(p, ": ok\n")); p++)
        checked++;
    /* 3 launches, 3 enable states, 4 launches with new memset and kernel
     * parameters, the other buffer, the launch after the refusals; 4
     * launches with new memcpy parameters, 2 with new symbol copies, the
     * cooperative kernel node. */
    cr_expect_eq(checked, 19, "graph_params (%s) checked %d results:\n%s", endpoint, checked, r->out);
    free(r);
}

Test(graph_params, node_parameters_over_tcp, .init = up, .fini = down)
{
    expect_graph_params(srv.endpoint);
}

Test(graph_params_shm, node_parameters_over_shm, .init = up, .fini = down)
{
    expect_graph_params(srv.shm_endpoint);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the session did not go over shm; see %s", srv.log);
}

/* ---- a guest speaking the protocol directly ---- */

static int set_enabled(tdm_transport *t, tdm_handle exec, tdm_handle node, unsigned enable)
{
    tdm_graph_node_enabled_args a = { exec, node, enable };

    return th_call_int(t, TDM_GRAPH_NODE_SET_ENABLED, (xdrproc_t)xdr_tdm_graph_node_enabled_args, &a);
}

static tdm_flags_res get_enabled(tdm_transport *t, tdm_handle exec, tdm_handle node)
{
    tdm_graph_node_enabled_args a = { exec, node, 0 };
    tdm_flags_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_GRAPH_NODE_GET_ENABLED, (xdrproc_t)xdr_tdm_graph_node_enabled_args, &a,
                              (xdrproc_t)xdr_tdm_flags_res, &r),
                 0);
    return r;
}

static int memset_set(tdm_transport *t, tdm_handle exec, tdm_handle node, uint64_t dst, uint64_t size, unsigned v)
{
    tdm_memset_node_set_args a = { exec, node, dst, size, v };

    return th_call_int(t, TDM_GRAPH_MEMSET_NODE_SET, (xdrproc_t)xdr_tdm_memset_node_set_args, &a);
}

static tdm_u64_res exec_flags(tdm_transport *t, tdm_handle exec)
{
    tdm_u64_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_GRAPH_EXEC_GET_FLAGS, (xdrproc_t)xdr_tdm_handle, &exec,
                              (xdrproc_t)xdr_tdm_u64_res, &r),
                 0);
    return r;
}

Test(graph_params_bad_input, unknown_foreign_and_unowned_are_refused, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "graph-params-bad-input");
    uint64_t size = 4096;
    tdm_malloc_res m;
    u_int zero = 0;
    tdm_handle_res ga, gb, set, empty, other, exec;
    tdm_graph_add_node_args node;
    tdm_graph_instantiate_args inst;
    tdm_handle forged = 0x4e00000100000042ull, forged_exec = 0x5800000100000042ull;
    tdm_flags_res en;

    memset(&m, 0, sizeof(m));
    cr_assert_eq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_tdm_u64, &size, (xdrproc_t)xdr_tdm_malloc_res, &m), 0);
    cr_assert_eq(m.err, 0);
    ga = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_u_int, &zero);
    gb = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_u_int, &zero);
    cr_assert(!ga.err && !gb.err);
    memset(&node, 0, sizeof(node));
    node = (tdm_graph_add_node_args){ .graph = ga.handle, .kind = cudaGraphNodeTypeMemset, .dst = m.addr,
                                      .size = 4096, .value = 1 };
    set = th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &node);
    node.kind = cudaGraphNodeTypeEmpty;
    empty = th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &node);
    node.graph = gb.handle;
    node.kind = cudaGraphNodeTypeMemset;
    other = th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &node);
    cr_assert(!set.err && !empty.err && !other.err);
    inst = (tdm_graph_instantiate_args){ ga.handle, cudaGraphInstantiateFlagAutoFreeOnLaunch };
    exec = th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst);
    cr_assert_eq(exec.err, 0);

    /* Enabling: a kernel, memcpy or memset node of the exec's own graph. */
    en = get_enabled(t, exec.handle, set.handle);
    cr_expect(!en.err && en.flags == 1, "a new exec's node is enabled (%d, %u)", en.err, en.flags);
    cr_expect_eq(set_enabled(t, exec.handle, set.handle, 0), 0);
    en = get_enabled(t, exec.handle, set.handle);
    cr_expect(!en.err && en.flags == 0, "disabled (%d, %u)", en.err, en.flags);
    cr_expect_eq(set_enabled(t, exec.handle, empty.handle, 0), cudaErrorInvalidValue, "an empty node");
    cr_expect_eq(get_enabled(t, exec.handle, empty.handle).err, cudaErrorInvalidValue, "an empty node");
    cr_expect_eq(set_enabled(t, exec.handle, other.handle, 0), cudaErrorInvalidValue, "a node of another graph");
    cr_expect_eq(set_enabled(t, exec.handle, forged, 0), cudaErrorInvalidValue, "an unknown node");
    cr_expect_eq(set_enabled(t, forged_exec, set.handle, 0), cudaErrorInvalidValue, "an unknown exec");
    cr_expect_eq(set_enabled(t, 0, set.handle, 0), cudaErrorInvalidValue, "no exec");
    cr_expect_eq(set_enabled(t, exec.handle, ga.handle, 0), cudaErrorInvalidValue, "a graph is no node");

    /* Flags as instantiated. */
    cr_expect_eq(exec_flags(t, exec.handle).value, cudaGraphInstantiateFlagAutoFreeOnLaunch);
    cr_expect_eq(exec_flags(t, forged_exec).err, cudaErrorInvalidValue, "an unknown exec");
    cr_expect_eq(exec_flags(t, ga.handle).err, cudaErrorInvalidValue, "a graph is no exec");

    /* New memset parameters: the session's memory, a memset node, one byte. */
    cr_expect_eq(memset_set(t, 0, set.handle, m.addr, 4096, 2), 0);
    cr_expect_eq(memset_set(t, exec.handle, set.handle, m.addr + 1024, 1024, 3), 0);
    cr_expect_eq(memset_set(t, 0, set.handle, m.addr, 4097, 2), cudaErrorInvalidValue, "past the allocation");
    cr_expect_eq(memset_set(t, exec.handle, set.handle, 0x1000, 16, 2), cudaErrorInvalidValue, "memory not owned");
    cr_expect_eq(memset_set(t, 0, set.handle, m.addr, 0, 2), cudaErrorInvalidValue, "nothing to set");
    cr_expect_eq(memset_set(t, 0, set.handle, m.addr, 16, 0x100), cudaErrorInvalidValue, "a wider pattern");
    cr_expect_eq(memset_set(t, 0, empty.handle, m.addr, 16, 2), cudaErrorInvalidValue, "an empty node");
    cr_expect_eq(memset_set(t, exec.handle, other.handle, m.addr, 16, 2), cudaErrorInvalidValue,
                 "a node of another graph");
    cr_expect_eq(memset_set(t, forged_exec, set.handle, m.addr, 16, 2), cudaErrorInvalidValue, "an unknown exec");
    cr_expect_eq(memset_set(t, 0, forged, m.addr, 16, 2), cudaErrorInvalidValue, "an unknown node");
    {
        tdm_exec_host_node_args h = { exec.handle, set.handle, 7 };
        cr_expect_eq(th_call_int(t, TDM_GRAPH_EXEC_HOST_NODE_SET, (xdrproc_t)xdr_tdm_exec_host_node_args, &h),
                     cudaErrorInvalidValue, "host functions for a memset node");
        h.exec = 0;
        cr_expect_eq(th_call_int(t, TDM_GRAPH_EXEC_HOST_NODE_SET, (xdrproc_t)xdr_tdm_exec_host_node_args, &h),
                     cudaErrorInvalidValue, "no exec");
    }

    /* Kernel attributes that reach the device: a kernel node's cooperative and priority. */
    {
        tdm_kernel_node_attr_args a = { set.handle, cudaLaunchAttributeCooperative, 1 };
        cr_expect_eq(th_call_int(t, TDM_GRAPH_KERNEL_NODE_ATTR, (xdrproc_t)xdr_tdm_kernel_node_attr_args, &a),
                     cudaErrorInvalidValue, "a memset node");
        a.node = forged;
        cr_expect_eq(th_call_int(t, TDM_GRAPH_KERNEL_NODE_ATTR, (xdrproc_t)xdr_tdm_kernel_node_attr_args, &a),
                     cudaErrorInvalidValue, "an unknown node");
    }
    t->ops->close(t);
}

static int memcpy_set(tdm_transport *t, tdm_memcpy_node_set_args *a)
{
    return th_call_int(t, TDM_GRAPH_MEMCPY_NODE_SET, (xdrproc_t)xdr_tdm_memcpy_node_set_args, a);
}

Test(graph_params_bad_input, memcpy_parameters_are_checked, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "graph-params-memcpy");
    uint64_t size = 4096;
    tdm_malloc_res m;
    u_int zero = 0;
    tdm_handle_res g, dtod, dtoh, set, exec;
    tdm_graph_memcpy_node_args add;
    tdm_graph_add_node_args node;
    tdm_graph_instantiate_args inst;
    tdm_memcpy_node_set_args a;
    tdm_handle forged = 0x4e00000100000042ull;

    memset(&m, 0, sizeof(m));
    cr_assert_eq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_tdm_u64, &size, (xdrproc_t)xdr_tdm_malloc_res, &m), 0);
    cr_assert_eq(m.err, 0);
    g = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_u_int, &zero);
    cr_assert_eq(g.err, 0);
    memset(&add, 0, sizeof(add));
    add = (tdm_graph_memcpy_node_args){ .graph = g.handle, .kind = cudaMemcpyDeviceToDevice, .dst = m.addr,
                                        .src = m.addr + 2048, .size = 1024 };
    dtod = th_call_handle(t, TDM_GRAPH_ADD_MEMCPY_NODE, (xdrproc_t)xdr_tdm_graph_memcpy_node_args, &add);
    add.kind = cudaMemcpyDeviceToHost;
    add.dst = 0x7000;   /* the guest's (staged) host address */
    dtoh = th_call_handle(t, TDM_GRAPH_ADD_MEMCPY_NODE, (xdrproc_t)xdr_tdm_graph_memcpy_node_args, &add);
    memset(&node, 0, sizeof(node));
    node = (tdm_graph_add_node_args){ .graph = g.handle, .kind = cudaGraphNodeTypeMemset, .dst = m.addr,
                                      .size = 16, .value = 1 };
    set = th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &node);
    cr_assert(!dtod.err && !dtoh.err && !set.err);
    inst = (tdm_graph_instantiate_args){ g.handle, 0 };
    exec = th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst);
    cr_assert_eq(exec.err, 0);

    a = (tdm_memcpy_node_set_args){ .node = dtod.handle, .kind = cudaMemcpyDeviceToDevice, .dst = m.addr + 1024,
                                    .src = m.addr + 3072, .size = 1024 };
    cr_expect_eq(memcpy_set(t, &a), 0, "new device sides for the graph's node");
    a.exec = exec.handle;
    cr_expect_eq(memcpy_set(t, &a), 0, "and for the exec's");
    a.size = 2048;
    cr_expect_eq(memcpy_set(t, &a), cudaErrorInvalidValue, "a source past the allocation");
    a.size = 1024;
    a.src = 0x1000;
    cr_expect_eq(memcpy_set(t, &a), cudaErrorInvalidValue, "memory the session does not own");
    a.src = m.addr;
    a.kind = 9;
    cr_expect_eq(memcpy_set(t, &a), cudaErrorInvalidMemcpyDirection, "an unknown direction");
    a.kind = cudaMemcpyDeviceToDevice;
    a.node = set.handle;
    cr_expect_eq(memcpy_set(t, &a), cudaErrorInvalidValue, "a memset node");
    a.node = forged;
    cr_expect_eq(memcpy_set(t, &a), cudaErrorInvalidValue, "an unknown node");
    a.node = dtod.handle;
    a.size = 0;
    cr_expect_eq(memcpy_set(t, &a), cudaErrorInvalidValue, "nothing to copy");
    a.size = 1024;
    a.shm = 1;
    cr_expect_eq(memcpy_set(t, &a), cudaErrorInvalidValue, "shm bytes on a session without a region");
    a.shm = 0;

    /* Staging: kept in direction and size, neither made nor dropped. */
    a = (tdm_memcpy_node_set_args){ .exec = exec.handle, .node = dtoh.handle, .kind = cudaMemcpyDeviceToHost,
                                    .dst = 0x9000, .src = m.addr, .size = 1024 };
    cr_expect_eq(memcpy_set(t, &a), 0, "a staged device-to-host node's new host address");
    a.size = 512;
    cr_expect_eq(memcpy_set(t, &a), cudaErrorNotSupported, "a staged side of another size");
    a = (tdm_memcpy_node_set_args){ .node = dtoh.handle, .kind = cudaMemcpyDeviceToDevice, .dst = m.addr,
                                    .src = m.addr + 2048, .size = 1024 };
    cr_expect_eq(memcpy_set(t, &a), cudaErrorNotSupported, "a staged node losing its staging");
    a.node = dtod.handle;
    a.kind = cudaMemcpyHostToDevice;
    a.src = 0x8000;
    cr_expect_eq(memcpy_set(t, &a), cudaErrorNotSupported, "a node gaining staging");
    t->ops->close(t);
}
