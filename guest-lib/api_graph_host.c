/* Host nodes of graphs (docs/graphs.md "Host nodes"): the program's
 * function runs in this process at each launch, in graph order, through
 * the host callbacks' channel (callbacks.c).  The server's node carries
 * only a key; the function and its data stay here. */
#include <string.h>

#include "guest.h"

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                 size_t numDependencies, const struct cudaHostNodeParams *pNodeParams)
{
    tdm_graph_add_node_args a;
    uint64_t key = 0;
    cudaError_t err;

    if (!pGraphNode || !graph || !pNodeParams || !pNodeParams->fn)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = tdm_callback_host_node(pNodeParams->fn, pNodeParams->userData, &key)) != cudaSuccess)
        return tdm_ret(err);
    memset(&a, 0, sizeof(a));
    a.kind = cudaGraphNodeTypeHost;
    a.src = key;
    err = tdm_graph_add_node_call(pGraphNode, graph, pDependencies, numDependencies, &a);
    if (err)
        tdm_callback_host_node_drop(key);
    else
        tdm_callback_host_node_named(key, (uint64_t)(uintptr_t)*pGraphNode);
    return tdm_ret(err);
}

cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, struct cudaHostNodeParams *pNodeParams)
{
    if (!node || !pNodeParams)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(tdm_callback_host_node_params((uint64_t)(uintptr_t)node, &pNodeParams->fn,
                                                 &pNodeParams->userData, false));
}

/* Deliberate difference (docs/graphs.md): executable graphs already made
 * from the node's graph run the new function too. */
cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const struct cudaHostNodeParams *pNodeParams)
{
    cudaHostFn_t fn;
    void *data;

    if (!node || !pNodeParams || !pNodeParams->fn)
        return tdm_ret(cudaErrorInvalidValue);
    fn = pNodeParams->fn;
    data = pNodeParams->userData;
    return tdm_ret(tdm_callback_host_node_params((uint64_t)(uintptr_t)node, &fn, &data, true));
}
