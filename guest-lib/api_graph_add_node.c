/* The generic node calls of CUDA 12+ (cudaGraphAddNode, cudaGraphNodeSetParams,
 * cudaGraphExecNodeSetParams): each node type is handed to its typed entry
 * point, so a type works through the generic call exactly as far as through
 * its own (and is refused the same way where that is not remoted yet).
 * Conditional nodes go to api_graph_cond.c (docs/graphs.md). */
#include <string.h>

#include "guest.h"

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *c = p;

    for (size_t i = 0; i < n; i++)
        if (c[i])
            return false;
    return true;
}

/* The reserved fields must be zero, as the runtime checks. */
static bool params_valid(const struct cudaGraphNodeParams *p)
{
    return p && all_zero(p->reserved0, sizeof(p->reserved0)) && p->reserved2 == 0;
}

static struct cudaKernelNodeParams kernel_v1(const struct cudaKernelNodeParamsV2 *k)
{
    struct cudaKernelNodeParams v = { k->func, k->gridDim, k->blockDim, k->sharedMemBytes, k->kernelParams,
                                      k->extra };
    return v;
}

static struct cudaMemsetParams memset_v1(const struct cudaMemsetParamsV2 *m)
{
    struct cudaMemsetParams v = { m->dst, m->pitch, m->value, m->elementSize, m->width, m->height };
    return v;
}

static struct cudaHostNodeParams host_v1(const struct cudaHostNodeParamsV2 *h)
{
    struct cudaHostNodeParams v = { h->fn, h->userData };
    return v;
}

static cudaError_t add_typed(cudaGraphNode_t *n, cudaGraph_t g, const cudaGraphNode_t *d, size_t nd,
                             struct cudaGraphNodeParams *p)
{
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = kernel_v1(&p->kernel);
        return cudaGraphAddKernelNode(n, g, d, nd, &k);
    }
    case cudaGraphNodeTypeMemcpy:
        if (p->memcpy.flags || !all_zero(p->memcpy.reserved, sizeof(p->memcpy.reserved)))
            return cudaErrorInvalidValue;
        return cudaGraphAddMemcpyNode(n, g, d, nd, &p->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m = memset_v1(&p->memset);
        return cudaGraphAddMemsetNode(n, g, d, nd, &m);
    }
    case cudaGraphNodeTypeHost: {
        struct cudaHostNodeParams h = host_v1(&p->host);
        return cudaGraphAddHostNode(n, g, d, nd, &h);
    }
    case cudaGraphNodeTypeGraph:
        if (p->graph.ownership != cudaGraphChildGraphOwnershipClone)
            return tdm_unsupported("cudaGraphAddNode of a child graph it moves");
        return cudaGraphAddChildGraphNode(n, g, d, nd, p->graph.graph);
    case cudaGraphNodeTypeEmpty:
        return cudaGraphAddEmptyNode(n, g, d, nd);
    case cudaGraphNodeTypeWaitEvent:
        return cudaGraphAddEventWaitNode(n, g, d, nd, p->eventWait.event);
    case cudaGraphNodeTypeEventRecord:
        return cudaGraphAddEventRecordNode(n, g, d, nd, p->eventRecord.event);
    case cudaGraphNodeTypeExtSemaphoreSignal: {
        struct cudaExternalSemaphoreSignalNodeParams e = { p->extSemSignal.extSemArray, p->extSemSignal.paramsArray,
                                                           p->extSemSignal.numExtSems };
        return cudaGraphAddExternalSemaphoresSignalNode(n, g, d, nd, &e);
    }
    case cudaGraphNodeTypeExtSemaphoreWait: {
        struct cudaExternalSemaphoreWaitNodeParams e = { p->extSemWait.extSemArray, p->extSemWait.paramsArray,
                                                         p->extSemWait.numExtSems };
        return cudaGraphAddExternalSemaphoresWaitNode(n, g, d, nd, &e);
    }
    case cudaGraphNodeTypeMemAlloc: {
        /* cudaMemAllocNodeParamsV2 has cudaMemAllocNodeParams's layout. */
        struct cudaMemAllocNodeParams a;
        cudaError_t err;
        memcpy(&a, &p->alloc, sizeof(a));
        err = cudaGraphAddMemAllocNode(n, g, d, nd, &a);
        p->alloc.dptr = a.dptr;
        return err;
    }
    case cudaGraphNodeTypeMemFree:
        return cudaGraphAddMemFreeNode(n, g, d, nd, p->free.dptr);
    case cudaGraphNodeTypeConditional:   /* ---- conditional graph nodes (issue 14) ---- */
        return tdm_graph_add_cond_node(n, g, d, nd, &p->conditional);
    default:
        return cudaErrorInvalidValue;
    }
}

cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                             const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                             struct cudaGraphNodeParams *nodeParams)
{
    if (!params_valid(nodeParams))
        return tdm_ret(cudaErrorInvalidValue);
    /* Default edges (all zero) are plain dependencies; others are not remoted. */
    if (dependencyData && numDependencies && !all_zero(dependencyData, numDependencies * sizeof(*dependencyData)))
        return tdm_ret(tdm_unsupported("cudaGraphAddNode with edge data"));
    return tdm_ret(add_typed(pGraphNode, graph, pDependencies, numDependencies, nodeParams));
}

cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node, struct cudaGraphNodeParams *nodeParams)
{
    if (!params_valid(nodeParams))
        return tdm_ret(cudaErrorInvalidValue);
    switch (nodeParams->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = kernel_v1(&nodeParams->kernel);
        return cudaGraphKernelNodeSetParams(node, &k);
    }
    case cudaGraphNodeTypeMemcpy:
        return cudaGraphMemcpyNodeSetParams(node, &nodeParams->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m = memset_v1(&nodeParams->memset);
        return cudaGraphMemsetNodeSetParams(node, &m);
    }
    case cudaGraphNodeTypeHost: {
        struct cudaHostNodeParams h = host_v1(&nodeParams->host);
        return cudaGraphHostNodeSetParams(node, &h);
    }
    case cudaGraphNodeTypeWaitEvent:
        return cudaGraphEventWaitNodeSetEvent(node, nodeParams->eventWait.event);
    case cudaGraphNodeTypeEventRecord:
        return cudaGraphEventRecordNodeSetEvent(node, nodeParams->eventRecord.event);
    case cudaGraphNodeTypeConditional:
        return tdm_ret(tdm_unsupported("cudaGraphNodeSetParams of a conditional node"));
    default:
        /* Empty, child graph, memory nodes: nothing that can be set (as natively). */
        return tdm_ret(cudaErrorInvalidValue);
    }
}

cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t graphExec, cudaGraphNode_t node,
                                       struct cudaGraphNodeParams *nodeParams)
{
    if (!params_valid(nodeParams))
        return tdm_ret(cudaErrorInvalidValue);
    switch (nodeParams->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = kernel_v1(&nodeParams->kernel);
        return cudaGraphExecKernelNodeSetParams(graphExec, node, &k);
    }
    case cudaGraphNodeTypeMemcpy:
        return cudaGraphExecMemcpyNodeSetParams(graphExec, node, &nodeParams->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m = memset_v1(&nodeParams->memset);
        return cudaGraphExecMemsetNodeSetParams(graphExec, node, &m);
    }
    case cudaGraphNodeTypeHost: {
        struct cudaHostNodeParams h = host_v1(&nodeParams->host);
        return cudaGraphExecHostNodeSetParams(graphExec, node, &h);
    }
    case cudaGraphNodeTypeGraph:
        return cudaGraphExecChildGraphNodeSetParams(graphExec, node, nodeParams->graph.graph);
    case cudaGraphNodeTypeWaitEvent:
        return cudaGraphExecEventWaitNodeSetEvent(graphExec, node, nodeParams->eventWait.event);
    case cudaGraphNodeTypeEventRecord:
        return cudaGraphExecEventRecordNodeSetEvent(graphExec, node, nodeParams->eventRecord.event);
    case cudaGraphNodeTypeConditional:
        return tdm_ret(tdm_unsupported("cudaGraphExecNodeSetParams of a conditional node"));
    default:
        return tdm_ret(cudaErrorInvalidValue);
    }
}
