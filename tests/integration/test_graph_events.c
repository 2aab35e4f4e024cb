/* Event record and wait nodes, child graph nodes, user objects
 * (docs/graphs.md "Event nodes, child graphs and user objects"):
 * examples/graph_events.cu through a real
 * server on the sim backend over TCP and shm (a graph on one stream orders
 * another stream's graph through an event; nodes' events read and set in
 * graphs and executable graphs; user object destructors when the last
 * reference goes), and a guest speaking the protocol: unknown nodes and
 * events, nodes of another type or graph are refused; external semaphore
 * nodes are added but no exec may hold one. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdlib.h>
#include <string.h>

#include "guest_calls.h"
#include "harness.h"

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
    "event nodes: record type 7, wait type 6, producer has 2 nodes\n"
    "record node names its event: yes\n"
    "wait node names its event: yes\n"
    "round 0: producer wrote 7, consumer after the wait read it: 21\n"
    "round 1: producer wrote 7, consumer after the wait read it: 21\n"
    "round 2: producer wrote 7, consumer after the wait read it: 21\n"
    "execs set to another event: 7 21\n"
    "the graph's record node still names the first: yes\n"
    "record node set: yes\n"
    "wait node set: yes\n"
    "new execs: 7 21\n"
    "after the recorded event: 7, query cudaSuccess\n"
    "clone's record node names the same event: yes\n"
    "record event of a wait node: cudaErrorInvalidValue\n"
    "wait event of a kernel node: cudaErrorInvalidValue\n"
    "set record event of a kernel node: cudaErrorInvalidValue\n"
    "exec set of another graph's node: cudaErrorInvalidValue\n"
    "captured: producer 2 nodes, consumer 2 nodes, record node found, wait node found\n"
    "captured record node names its event: yes\n"
    "captured wait node names its event: yes\n"
    "captured graphs: 7 21\n"
    "wait with unknown flags: cudaErrorInvalidValue\n"
    "child node type 4, embedded graph has 1 nodes, asked twice the same: yes\n"
    "parent with child (the child changed after): 7 21 0\n"
    "exec's child node set to another graph: 7 28 0\n"
    "node added to the embedded graph, new exec: 7 21 42\n"
    "the exec made before: 7 28 0\n"
    "clone's embedded graph is its own: yes, 2 nodes\n"
    "embedded graph of a kernel node: cudaErrorInvalidValue\n"
    /* cudaErrorNotSupported natively (H100 run of 2026-11-24). */
    "child graph with memory nodes: cudaErrorNotSupported\n"
    "user object held by a graph: destroyed 0\n"
    "graph destroyed, its exec holds it: destroyed 0\n"
    "exec destroyed after its launches: destroyed 1\n"
    "clone holds it: destroyed 0\n"
    "clone destroyed: destroyed 1\n"
    "moved references gone with the graph: destroyed 0\n"
    "last reference released: destroyed 1\n"
    "create without cudaUserObjectNoDestructorSync: cudaErrorInvalidValue\n"
    "create with no reference: cudaErrorInvalidValue\n"
    "create without destructor: cudaErrorInvalidValue\n"
    "destructor counts: 1 1 1 0\n"
    /* cudaSuccess natively (H100 run of 2026-11-24): a node of NULL semaphores is added. */
    "signal node without an imported semaphore: cudaSuccess\n"
    "PASSED\n";

Test(graph_events, event_nodes_order_streams_and_user_objects_over_tcp_and_shm, .init = up, .fini = down)
{
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };
    const char *argv[] = { th_example("graph_events"), "3", NULL };

    for (int i = 0; i < 2; i++) {
        th_result *r = calloc(1, sizeof(*r));

        th_run_guest(endpoints[i], argv, 60, r);
        cr_assert_eq(r->status, 0, "graph_events (%s) exited %d:\n%s%s", endpoints[i], r->status, r->out, r->err);
        cr_expect_str_eq(r->out, want, "graph_events (%s) printed\n%s", endpoints[i], r->out);
        free(r);
    }
}

/* ---- a guest speaking the protocol directly ---- */

/* A node of type: src names an event node's event, size an external
 * semaphore node's number of semaphores. */
static tdm_handle_res add_typed_node(tdm_transport *t, uint64_t graph, int type, uint64_t src, uint64_t size)
{
    tdm_graph_add_node_args a;

    memset(&a, 0, sizeof(a));
    a.graph = graph;
    a.kind = type;
    a.src = src;
    a.size = size;
    return th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &a);
}

static tdm_handle_res add_event_node(tdm_transport *t, uint64_t graph, int type, uint64_t event)
{
    return add_typed_node(t, graph, type, event, 0);
}

static tdm_handle_res get_event(tdm_transport *t, uint64_t node, int record)
{
    tdm_graph_event_node_args a = { 0, node, 0, record };

    return th_call_handle(t, TDM_GRAPH_EVENT_NODE_GET, (xdrproc_t)xdr_tdm_graph_event_node_args, &a);
}

static int set_event(tdm_transport *t, uint64_t exec, uint64_t node, uint64_t event, int record)
{
    tdm_graph_event_node_args a = { exec, node, event, record };

    return th_call_int(t, TDM_GRAPH_EVENT_NODE_SET, (xdrproc_t)xdr_tdm_graph_event_node_args, &a);
}

Test(graph_events_protocol, bad_nodes_and_events_are_refused, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "graph-events-protocol");
    tdm_u32 zero = 0;
    tdm_handle_res g = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    tdm_handle_res g2 = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    tdm_handle_res ev = th_call_handle(t, TDM_EVENT_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    tdm_handle_res ev2 = th_call_handle(t, TDM_EVENT_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    tdm_handle_res rec, wait, empty, x2;
    tdm_graph_add_node_args a;
    tdm_graph_instantiate_args inst;

    cr_assert(g.err == 0 && g2.err == 0 && ev.err == 0 && ev2.err == 0);
    cr_expect_eq(add_event_node(t, g.handle, cudaGraphNodeTypeEventRecord, 0).err, cudaErrorInvalidResourceHandle,
                 "a record node of no event");
    cr_expect_eq(add_event_node(t, g.handle, cudaGraphNodeTypeWaitEvent, ev.handle + 4096).err,
                 cudaErrorInvalidResourceHandle, "a wait node of a forged event");
    cr_expect_eq(add_event_node(t, g.handle, cudaGraphNodeTypeEventRecord, g.handle).err,
                 cudaErrorInvalidResourceHandle, "a graph handle as an event");
    cr_expect_eq(add_event_node(t, ev.handle, cudaGraphNodeTypeEventRecord, ev.handle).err, cudaErrorInvalidValue,
                 "an event handle as a graph");
    rec = add_event_node(t, g.handle, cudaGraphNodeTypeEventRecord, ev.handle);
    wait = add_event_node(t, g2.handle, cudaGraphNodeTypeWaitEvent, ev.handle);
    memset(&a, 0, sizeof(a));
    a.graph = g.handle;
    a.kind = cudaGraphNodeTypeEmpty;
    empty = th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &a);
    cr_assert(rec.err == 0 && wait.err == 0 && empty.err == 0);

    cr_expect_eq(get_event(t, rec.handle, 1).handle, ev.handle, "the record node's event");
    cr_expect_eq(get_event(t, wait.handle, 0).handle, ev.handle, "the wait node's event");
    cr_expect_eq(get_event(t, rec.handle, 0).err, cudaErrorInvalidValue, "a record node asked as a wait node");
    cr_expect_eq(get_event(t, empty.handle, 1).err, cudaErrorInvalidValue, "an empty node");
    cr_expect_eq(get_event(t, rec.handle + 4096, 1).err, cudaErrorInvalidValue, "a forged node");
    cr_expect_eq(get_event(t, ev.handle, 1).err, cudaErrorInvalidValue, "an event handle as a node");

    cr_expect_eq(set_event(t, 0, rec.handle, ev.handle + 4096, 1), cudaErrorInvalidResourceHandle, "a forged event");
    cr_expect_eq(set_event(t, 0, empty.handle, ev.handle, 1), cudaErrorInvalidValue, "an empty node");
    cr_expect_eq(set_event(t, 0, rec.handle, ev2.handle, 1), 0);
    cr_expect_eq(get_event(t, rec.handle, 1).handle, ev2.handle, "the new event");
    inst = (tdm_graph_instantiate_args){ g2.handle, 0 };
    x2 = th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst);
    cr_assert_eq(x2.err, 0);
    cr_expect_eq(set_event(t, x2.handle, rec.handle, ev.handle, 1), cudaErrorInvalidValue,
                 "an exec of another graph");
    cr_expect_eq(set_event(t, x2.handle + 4096, wait.handle, ev.handle, 0), cudaErrorInvalidValue, "a forged exec");
    cr_expect_eq(set_event(t, x2.handle, wait.handle, ev2.handle, 0), 0, "the exec's wait node");
    cr_expect_eq(get_event(t, wait.handle, 0).handle, ev.handle, "the graph's node keeps its event");

    /* The event destroyed: the node has no handle of the session to name. */
    cr_expect_eq(th_call_int(t, TDM_EVENT_DESTROY, (xdrproc_t)xdr_tdm_handle, &ev2.handle), 0);
    cr_expect_eq(get_event(t, rec.handle, 1).err, cudaErrorInvalidResourceHandle, "a destroyed event");
    t->ops->close(t);
}

static tdm_handle_res add_child(tdm_transport *t, uint64_t graph, uint64_t child)
{
    tdm_graph_child_node_args a;

    memset(&a, 0, sizeof(a));
    a.graph = graph;
    a.child = child;
    return th_call_handle(t, TDM_GRAPH_ADD_CHILD_NODE, (xdrproc_t)xdr_tdm_graph_child_node_args, &a);
}

Test(graph_events_protocol, child_graph_nodes_refuse_bad_input_and_own_their_graph, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "graph-child-protocol");
    tdm_u32 zero = 0;
    tdm_handle_res g = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    tdm_handle_res c = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    tdm_handle_res node, emb, emb2, x, gone;
    tdm_graph_add_node_args a;
    tdm_graph_instantiate_args inst;
    tdm_graph_exec_child_args set;

    cr_assert(g.err == 0 && c.err == 0);
    cr_expect_eq(add_child(t, g.handle, g.handle).err, cudaErrorInvalidValue, "a graph as its own child");
    cr_expect_eq(add_child(t, g.handle, c.handle + 4096).err, cudaErrorInvalidValue, "a forged child");
    cr_expect_eq(add_child(t, c.handle + 4096, c.handle).err, cudaErrorInvalidValue, "a forged graph");
    /* A child with a host node: not remoted in a child graph. */
    memset(&a, 0, sizeof(a));
    a.graph = c.handle;
    a.kind = cudaGraphNodeTypeHost;
    a.src = 5;
    cr_assert_eq(th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &a).err, 0);
    cr_expect_eq(add_child(t, g.handle, c.handle).err, cudaErrorNotSupported, "a child with a host node");
    c = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    node = add_child(t, g.handle, c.handle);
    cr_assert_eq(node.err, 0);

    emb = th_call_handle(t, TDM_GRAPH_CHILD_NODE_GRAPH, (xdrproc_t)xdr_tdm_handle, &node.handle);
    cr_assert_eq(emb.err, 0);
    emb2 = th_call_handle(t, TDM_GRAPH_CHILD_NODE_GRAPH, (xdrproc_t)xdr_tdm_handle, &node.handle);
    cr_expect_eq(emb2.handle, emb.handle, "the same handle each time");
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY, (xdrproc_t)xdr_tdm_handle, &emb.handle), cudaErrorInvalidValue,
                 "the node's graph is not the program's to destroy");
    a.graph = emb.handle;
    cr_expect_eq(th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &a).err,
                 cudaErrorNotSupported, "a host node in an embedded graph");
    a.kind = cudaGraphNodeTypeEmpty;
    cr_expect_eq(th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &a).err, 0,
                 "an empty node in an embedded graph");
    cr_expect_eq(th_call_handle(t, TDM_GRAPH_CHILD_NODE_GRAPH, (xdrproc_t)xdr_tdm_handle, &g.handle).err,
                 cudaErrorInvalidValue, "a graph handle as a node");

    inst = (tdm_graph_instantiate_args){ g.handle, 0 };
    x = th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst);
    cr_assert_eq(x.err, 0);
    set = (tdm_graph_exec_child_args){ x.handle, node.handle, c.handle + 4096 };
    cr_expect_eq(th_call_int(t, TDM_GRAPH_EXEC_CHILD_SET, (xdrproc_t)xdr_tdm_graph_exec_child_args, &set),
                 cudaErrorInvalidValue, "a forged child");
    set = (tdm_graph_exec_child_args){ x.handle, emb.handle, c.handle };
    cr_expect_eq(th_call_int(t, TDM_GRAPH_EXEC_CHILD_SET, (xdrproc_t)xdr_tdm_graph_exec_child_args, &set),
                 cudaErrorInvalidValue, "a graph handle as the node");
    set = (tdm_graph_exec_child_args){ x.handle, node.handle, c.handle };
    if (th_simulated())   /* the sim compares node counts; the driver the whole topology */
        cr_expect_eq(th_call_int(t, TDM_GRAPH_EXEC_CHILD_SET, (xdrproc_t)xdr_tdm_graph_exec_child_args, &set),
                     cudaErrorInvalidValue, "a child of another shape");
    a.graph = c.handle;
    cr_assert_eq(th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &a).err, 0);
    cr_expect_eq(th_call_int(t, TDM_GRAPH_EXEC_CHILD_SET, (xdrproc_t)xdr_tdm_graph_exec_child_args, &set), 0,
                 "a child of the same shape");

    /* The node destroyed: its graph's handle goes with it. */
    cr_expect_eq(th_call_int(t, TDM_GRAPH_DESTROY_NODE, (xdrproc_t)xdr_tdm_handle, &node.handle), 0);
    gone = th_call_handle(t, TDM_GRAPH_CHILD_NODE_GRAPH, (xdrproc_t)xdr_tdm_handle, &node.handle);
    cr_expect_eq(gone.err, cudaErrorInvalidValue, "a destroyed node");
    a.graph = emb.handle;
    cr_expect_eq(th_call_handle(t, TDM_GRAPH_ADD_NODE, (xdrproc_t)xdr_tdm_graph_add_node_args, &a).err,
                 cudaErrorInvalidValue, "the destroyed node's graph is gone");
    t->ops->close(t);
}

/* ---- external semaphore nodes (issue 14) ---- */

static tdm_handle_res add_extsem_node(tdm_transport *t, uint64_t graph, int type, uint64_t n)
{
    return add_typed_node(t, graph, type, 0, n);
}

static int instantiate(tdm_transport *t, uint64_t graph)
{
    tdm_graph_instantiate_args inst = { graph, 0 };

    return th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst).err;
}

/* A node of NULL semaphores is added with its type (as the driver adds
 * one), but names nothing to signal or wait for: no exec may hold one, in
 * the graph itself, a clone, or an embedded child graph; an update from a
 * graph holding one fails. */
Test(graph_events_protocol, external_semaphore_nodes_are_added_but_never_run, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "graph-extsem-protocol");
    tdm_u32 zero = 0;
    tdm_handle_res g = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    tdm_handle_res plain = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    tdm_handle_res sig, wait, clone, x;
    tdm_flags_res type;
    tdm_graph_child_node_args child;
    tdm_graph_exec_update_args up_args;
    tdm_graph_exec_update_res up_res;

    cr_assert(g.err == 0 && plain.err == 0);
    sig = add_extsem_node(t, g.handle, cudaGraphNodeTypeExtSemaphoreSignal, 1);
    wait = add_extsem_node(t, g.handle, cudaGraphNodeTypeExtSemaphoreWait, 3);
    cr_assert(sig.err == 0 && wait.err == 0, "signal %d wait %d", sig.err, wait.err);
    memset(&type, 0, sizeof(type));
    cr_assert_eq(t->ops->call(t, TDM_GRAPH_NODE_GET_TYPE, (xdrproc_t)xdr_tdm_handle, &sig.handle,
                              (xdrproc_t)xdr_tdm_flags_res, &type), 0);
    cr_expect_eq(type.flags, cudaGraphNodeTypeExtSemaphoreSignal, "the signal node's type");
    cr_expect_eq(add_extsem_node(t, g.handle, cudaGraphNodeTypeExtSemaphoreWait, 1u << 20).err,
                 cudaErrorMemoryAllocation, "a node of more semaphores than the session's bound");

    cr_expect_eq(instantiate(t, g.handle), cudaErrorInvalidValue, "a graph with external semaphore nodes");
    clone = th_call_handle(t, TDM_GRAPH_CLONE, (xdrproc_t)xdr_tdm_handle, &g.handle);
    cr_assert_eq(clone.err, 0);
    cr_expect_eq(instantiate(t, clone.handle), cudaErrorInvalidValue, "a clone keeps the nodes' type");
    memset(&child, 0, sizeof(child));
    child.graph = plain.handle;
    child.child = g.handle;
    cr_assert_eq(th_call_handle(t, TDM_GRAPH_ADD_CHILD_NODE, (xdrproc_t)xdr_tdm_graph_child_node_args, &child).err,
                 0, "a child graph of external semaphore nodes");
    cr_expect_eq(instantiate(t, plain.handle), cudaErrorInvalidValue, "one in an embedded graph");

    /* An exec of an empty node, updated from a graph of a signal node. */
    plain = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    cr_assert_eq(add_extsem_node(t, plain.handle, cudaGraphNodeTypeEmpty, 0).err, 0);
    {
        tdm_graph_instantiate_args inst = { plain.handle, 0 };
        x = th_call_handle(t, TDM_GRAPH_INSTANTIATE, (xdrproc_t)xdr_tdm_graph_instantiate_args, &inst);
    }
    cr_assert_eq(x.err, 0);
    g = th_call_handle(t, TDM_GRAPH_CREATE, (xdrproc_t)xdr_tdm_u32, &zero);
    cr_assert_eq(add_extsem_node(t, g.handle, cudaGraphNodeTypeExtSemaphoreSignal, 1).err, 0);
    up_args = (tdm_graph_exec_update_args){ x.handle, g.handle };
    memset(&up_res, 0, sizeof(up_res));
    cr_assert_eq(t->ops->call(t, TDM_GRAPH_EXEC_UPDATE, (xdrproc_t)xdr_tdm_graph_exec_update_args, &up_args,
                              (xdrproc_t)xdr_tdm_graph_exec_update_res, &up_res), 0);
    cr_expect_eq(up_res.err, cudaErrorGraphExecUpdateFailure, "an update bringing an external semaphore node");
    cr_expect_eq(up_res.result, cudaGraphExecUpdateErrorNodeTypeChanged);
    t->ops->close(t);
}
