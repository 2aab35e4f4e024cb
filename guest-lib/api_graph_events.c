/* Event record and wait nodes, child graph nodes, and the external
 * semaphore node family (docs/graphs.md "Event nodes, child graphs and
 * user objects").
 *
 * External semaphores: a cudaExternalSemaphore_t comes only from
 * cudaImportExternalSemaphore, which is not remoted (the Vulkan or D3D
 * object it imports lives in the guest's own VM), so no value a program
 * can pass here names a semaphore.  A node whose semaphores are all NULL
 * is added, as the driver adds it (H100 run of 2026-11-24); any other
 * value is refused as an invalid handle.  Such a node names nothing, so
 * the server refuses to instantiate a graph holding one
 * (docs/graphs.md). */
#include <string.h>

#include "guest.h"

/* ---- event record and wait nodes ---- */
/* The server's node names the session's event; its handle is the
 * program's cudaEvent_t. */

static cudaError_t add_event_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                  size_t ndeps, cudaEvent_t event, int type)
{
    tdm_graph_add_node_args a;

    if (!pNode || !graph)
        return cudaErrorInvalidValue;
    memset(&a, 0, sizeof(a));
    a.kind = type;
    a.src = (uint64_t)(uintptr_t)event;
    return tdm_graph_add_node_call(pNode, graph, deps, ndeps, &a);
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                        const cudaGraphNode_t *pDependencies, size_t numDependencies, cudaEvent_t event)
{
    return tdm_ret(add_event_node(pGraphNode, graph, pDependencies, numDependencies, event,
                                  cudaGraphNodeTypeEventRecord));
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                      const cudaGraphNode_t *pDependencies, size_t numDependencies, cudaEvent_t event)
{
    return tdm_ret(add_event_node(pGraphNode, graph, pDependencies, numDependencies, event,
                                  cudaGraphNodeTypeWaitEvent));
}

static cudaError_t event_get(cudaGraphNode_t node, cudaEvent_t *out, bool record)
{
    tdm_graph_event_node_args a = { 0, (uint64_t)(uintptr_t)node, 0, record };
    tdm_handle_res r;
    cudaError_t err;

    if (!node || !out)
        return cudaErrorInvalidValue;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_EVENT_NODE_GET, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *out = (cudaEvent_t)(uintptr_t)r.handle;
    return err;
}

static cudaError_t event_set(cudaGraphExec_t exec, cudaGraphNode_t node, cudaEvent_t event, bool record)
{
    tdm_graph_event_node_args a = { (uint64_t)(uintptr_t)exec, (uint64_t)(uintptr_t)node,
                                    (uint64_t)(uintptr_t)event, record };

    if (!node)
        return cudaErrorInvalidValue;
    return tdm_call_err(TDM_GRAPH_EVENT_NODE_SET, &a);
}

cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event_out)
{
    return tdm_ret(event_get(node, event_out, true));
}

cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event_out)
{
    return tdm_ret(event_get(node, event_out, false));
}

cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event)
{
    return tdm_ret(event_set(NULL, node, event, true));
}

cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event)
{
    return tdm_ret(event_set(NULL, node, event, false));
}

cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, cudaEvent_t event)
{
    return tdm_ret(hGraphExec ? event_set(hGraphExec, hNode, event, true) : cudaErrorInvalidValue);
}

cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, cudaEvent_t event)
{
    return tdm_ret(hGraphExec ? event_set(hGraphExec, hNode, event, false) : cudaErrorInvalidValue);
}

/* ---- child graph nodes ---- */
/* The node embeds a clone of the child made by the server; the graph the
 * program gets for it is the node's (it must not destroy it). */

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                       const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                       cudaGraph_t childGraph)
{
    tdm_graph_child_node_args a;
    tdm_handle_res r;
    cudaError_t err;

    if (!pGraphNode || !graph || !childGraph || (numDependencies && !pDependencies) ||
        numDependencies > TDM_MAX_GRAPH_DEPS)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&a, 0, sizeof(a));
    a.graph = (uint64_t)(uintptr_t)graph;
    a.child = (uint64_t)(uintptr_t)childGraph;
    a.deps.deps_len = (u_int)numDependencies;
    a.deps.deps_val = (tdm_handle *)(uintptr_t)pDependencies;   /* a cudaGraphNode_t is a handle */
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_ADD_CHILD_NODE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *pGraphNode = (cudaGraphNode_t)(uintptr_t)r.handle;
    return tdm_ret(err);
}

cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *pGraph)
{
    tdm_handle n = (uint64_t)(uintptr_t)node;
    tdm_handle_res r;
    cudaError_t err;

    if (!node || !pGraph)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_CHILD_NODE_GRAPH, &n, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *pGraph = (cudaGraph_t)(uintptr_t)r.handle;
    return tdm_ret(err);
}

cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                 cudaGraph_t childGraph)
{
    tdm_graph_exec_child_args a = { (uint64_t)(uintptr_t)hGraphExec, (uint64_t)(uintptr_t)node,
                                    (uint64_t)(uintptr_t)childGraph };

    if (!hGraphExec || !node || !childGraph)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(tdm_call_err(TDM_GRAPH_EXEC_CHILD_SET, &a));
}

/* ---- external semaphore nodes ---- */

/* A node of n semaphores, each of which must be NULL (see above); the
 * server learns only their number. */
static cudaError_t add_extsem_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                   size_t ndeps, cudaExternalSemaphore_t *sems, const void *params, unsigned n,
                                   int type)
{
    tdm_graph_add_node_args a;

    if (!pNode || !graph || (n && (!sems || !params)))
        return cudaErrorInvalidValue;
    for (unsigned i = 0; i < n; i++)
        if (sems[i])
            return cudaErrorInvalidValue;
    memset(&a, 0, sizeof(a));
    a.kind = type;
    a.size = n;
    return tdm_graph_add_node_call(pNode, graph, deps, ndeps, &a);
}

cudaError_t cudaGraphAddExternalSemaphoresSignalNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                     const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                     const struct cudaExternalSemaphoreSignalNodeParams *nodeParams)
{
    if (!nodeParams)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(add_extsem_node(pGraphNode, graph, pDependencies, numDependencies, nodeParams->extSemArray,
                                   nodeParams->paramsArray, nodeParams->numExtSems,
                                   cudaGraphNodeTypeExtSemaphoreSignal));
}

cudaError_t cudaGraphAddExternalSemaphoresWaitNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                   const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                   const struct cudaExternalSemaphoreWaitNodeParams *nodeParams)
{
    if (!nodeParams)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(add_extsem_node(pGraphNode, graph, pDependencies, numDependencies, nodeParams->extSemArray,
                                   nodeParams->paramsArray, nodeParams->numExtSems,
                                   cudaGraphNodeTypeExtSemaphoreWait));
}

/* Parameters of a node of NULL semaphores are not kept: refused as for a
 * node that is none (docs/graphs.md). */
cudaError_t cudaGraphExternalSemaphoresSignalNodeGetParams(cudaGraphNode_t hNode,
                                                           struct cudaExternalSemaphoreSignalNodeParams *params_out)
{
    return tdm_ret(cudaErrorInvalidValue);
}

cudaError_t cudaGraphExternalSemaphoresSignalNodeSetParams(cudaGraphNode_t hNode,
                                                           const struct cudaExternalSemaphoreSignalNodeParams *nodeParams)
{
    return tdm_ret(cudaErrorInvalidValue);
}

cudaError_t cudaGraphExternalSemaphoresWaitNodeGetParams(cudaGraphNode_t hNode,
                                                         struct cudaExternalSemaphoreWaitNodeParams *params_out)
{
    return tdm_ret(cudaErrorInvalidValue);
}

cudaError_t cudaGraphExternalSemaphoresWaitNodeSetParams(cudaGraphNode_t hNode,
                                                         const struct cudaExternalSemaphoreWaitNodeParams *nodeParams)
{
    return tdm_ret(cudaErrorInvalidValue);
}

cudaError_t cudaGraphExecExternalSemaphoresSignalNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, const struct cudaExternalSemaphoreSignalNodeParams *nodeParams)
{
    return tdm_ret(cudaErrorInvalidValue);
}

cudaError_t cudaGraphExecExternalSemaphoresWaitNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, const struct cudaExternalSemaphoreWaitNodeParams *nodeParams)
{
    return tdm_ret(cudaErrorInvalidValue);
}
