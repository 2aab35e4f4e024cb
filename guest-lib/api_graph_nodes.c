/* Memcpy nodes with host sides, and a graph's structure (docs/graphs.md).
 * A host side in the shm region's pinned memory is named by its offset:
 * the server's node reads or writes it where it is at each launch.  Any
 * other host side is staged on the server, and graph_host.c moves its
 * bytes around each launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

static uint64_t h(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

enum cudaMemcpyKind tdm_graph_copy_kind(const void *dst, const void *src, enum cudaMemcpyKind kind)
{
    if (kind != cudaMemcpyDefault)
        return kind;
    bool d = tdm_allocs_is_device(dst), s = tdm_allocs_is_device(src);
    return d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
             : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
}

static cudaError_t add_memcpy(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps,
                              void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    tdm_graph_memcpy_node_args a;
    const struct tdm_shm_region *shm = tdm_shm();
    const void *host;
    tdm_handle_res r;
    cudaError_t err;

    if (!pNode || !graph || (ndeps && !deps) || ndeps > TDM_MAX_GRAPH_DEPS || !dst || !src || !n)
        return cudaErrorInvalidValue;
    if ((unsigned)kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    kind = tdm_graph_copy_kind(dst, src, kind);
    if (kind == cudaMemcpyHostToHost)
        return tdm_unsupported("cudaGraphAddMemcpyNode from host to host memory");
    memset(&a, 0, sizeof(a));
    a.graph = h(graph);
    /* cudaGraphNode_t values are the server's node handles. */
    a.deps.deps_val = (tdm_handle *)(uintptr_t)deps;
    a.deps.deps_len = (u_int)ndeps;
    a.kind = kind;
    a.dst = h(dst);
    a.src = h(src);
    a.size = n;
    host = kind == cudaMemcpyHostToDevice ? src : kind == cudaMemcpyDeviceToHost ? dst : NULL;
    if (host && shm)
        a.shm = tdm_shm_host_offset(shm, host, n, &a.shm_offset);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_ADD_MEMCPY_NODE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return err;
    *pNode = (cudaGraphNode_t)(uintptr_t)r.handle;
    if (host && !a.shm) {
        if (kind == cudaMemcpyHostToDevice)
            return tdm_graph_host_source(a.graph, r.handle, src, n);
        tdm_graph_host_output();
    }
    return cudaSuccess;
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                     const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dst,
                                     const void *src, size_t count, enum cudaMemcpyKind kind)
{
    cudaError_t err = add_memcpy(pGraphNode, graph, pDependencies, numDependencies, dst, src, count, kind);

    if (!err) {   /* graph node parameters (issue 14): cudaGraphMemcpyNodeGetParams answers the 3D form */
        struct cudaMemcpy3DParms p = { .srcPtr = { (void *)src, count, count, 1 },
                                       .dstPtr = { dst, count, count, 1 },
                                       .extent = { count, 1, 1 }, .kind = kind };
        tdm_graph_params_memcpy(h(*pGraphNode), h(graph), &p);
    }
    return tdm_ret(err);
}

/* The byte offset of pos in a pitched allocation. */
static size_t offset_of(struct cudaPitchedPtr p, struct cudaPos pos)
{
    return (pos.z * p.ysize + pos.y) * p.pitch + pos.x;
}

/* One side's rows follow each other with no gap for extent e. */
static bool contiguous(struct cudaPitchedPtr p, struct cudaExtent e)
{
    return e.height * e.depth == 1 || (p.pitch == e.width && (e.depth == 1 || p.ysize == e.height));
}

cudaError_t tdm_graph_copy_flat(const struct cudaMemcpy3DParms *p, void **dst, const void **src, size_t *n)
{
    struct cudaExtent e;

    if (!p)
        return cudaErrorInvalidValue;
    e = p->extent;
    if (p->srcArray || p->dstArray)
        return tdm_unsupported("a graph memcpy node with a CUDA array");
    if (!p->srcPtr.ptr || !p->dstPtr.ptr || !e.width || !e.height || !e.depth ||
        (e.height * e.depth > 1 && (p->srcPtr.pitch < e.width || p->dstPtr.pitch < e.width)))
        return cudaErrorInvalidValue;
    /* A box with gaps between rows: not remoted yet (docs/graphs.md). */
    if (!contiguous(p->srcPtr, e) || !contiguous(p->dstPtr, e))
        return tdm_unsupported("a graph memcpy node of a pitched box with gaps between rows");
    *dst = (char *)p->dstPtr.ptr + offset_of(p->dstPtr, p->dstPos);
    *src = (const char *)p->srcPtr.ptr + offset_of(p->srcPtr, p->srcPos);
    *n = e.width * e.height * e.depth;
    return cudaSuccess;
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies, const struct cudaMemcpy3DParms *p)
{
    void *dst;
    const void *src;
    size_t n;
    cudaError_t err = tdm_graph_copy_flat(p, &dst, &src, &n);

    if (err)
        return tdm_ret(err);
    err = add_memcpy(pGraphNode, graph, pDependencies, numDependencies, dst, src, n, p->kind);
    if (!err)   /* graph node parameters (issue 14): for cudaGraphMemcpyNodeGetParams */
        tdm_graph_params_memcpy(h(*pGraphNode), h(graph), p);
    return tdm_ret(err);
}

cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
    tdm_handle g = h(originalGraph);
    tdm_handle_res r;
    cudaError_t err;

    if (!pGraphClone || !originalGraph)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_CLONE, &g, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        err = tdm_graph_host_copy(g, false, r.handle, false);
    if (!err)   /* ---- user objects (issue 14): the clone holds the original's references ---- */
        err = tdm_user_objects_copy(g, r.handle, false);
    if (!err)
        *pGraphClone = (cudaGraph_t)(uintptr_t)r.handle;
    return tdm_ret(err);
}

/* A node list as the runtime answers it: with out NULL the count; else at
 * most *num nodes, the rest of out NULL, and *num the number given. */
static cudaError_t node_list(uint32_t proc, cudaGraph_t graph, cudaGraphNode_t *out, size_t *num)
{
    tdm_handle g = h(graph);
    tdm_graph_nodes_res r;
    cudaError_t err;

    if (!graph || !num)
        return cudaErrorInvalidValue;
    memset(&r, 0, sizeof(r));
    err = tdm_call(proc, &g, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err && !out) {
        *num = r.nodes.nodes_len;
    } else if (!err) {
        size_t k = 0;
        for (; k < *num && k < r.nodes.nodes_len; k++)
            out[k] = (cudaGraphNode_t)(uintptr_t)r.nodes.nodes_val[k];
        for (size_t i = k; i < *num; i++)
            out[i] = NULL;
        *num = k;
    }
    xdr_free((xdrproc_t)xdr_tdm_graph_nodes_res, (char *)&r);
    return err;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
    return tdm_ret(node_list(TDM_GRAPH_GET_NODES, graph, nodes, numNodes));
}

cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes, size_t *pNumRootNodes)
{
    return tdm_ret(node_list(TDM_GRAPH_GET_ROOT_NODES, graph, pRootNodes, pNumRootNodes));
}

cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                              cudaGraphEdgeData *edgeData, size_t *numEdges)
{
    tdm_handle g = h(graph);
    tdm_graph_edges_res r;
    cudaError_t err;

    if (!graph || !numEdges || (!from != !to) || (edgeData && !from))
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_GET_EDGES, &g, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err && !from) {
        *numEdges = r.from.from_len;
    } else if (!err) {
        size_t k = 0;
        for (; k < *numEdges && k < r.from.from_len; k++) {
            from[k] = (cudaGraphNode_t)(uintptr_t)r.from.from_val[k];
            to[k] = (cudaGraphNode_t)(uintptr_t)r.to.to_val[k];
        }
        for (size_t i = k; i < *numEdges; i++)
            from[i] = to[i] = NULL;
        /* Every edge Tandem builds is a default (full) dependency. */
        if (edgeData)
            memset(edgeData, 0, *numEdges * sizeof(*edgeData));
        *numEdges = k;
    }
    xdr_free((xdrproc_t)xdr_tdm_graph_edges_res, (char *)&r);
    return tdm_ret(err);
}

static cudaError_t neighbours(cudaGraphNode_t node, bool dependents, cudaGraphNode_t *out,
                              cudaGraphEdgeData *edgeData, size_t *num)
{
    tdm_graph_node_neighbours_args a = { h(node), dependents };
    tdm_graph_nodes_res r;
    cudaError_t err;

    if (!node || !num || (edgeData && !out))
        return cudaErrorInvalidValue;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_NODE_NEIGHBOURS, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err && !out) {
        *num = r.nodes.nodes_len;
    } else if (!err) {
        size_t k = 0;
        for (; k < *num && k < r.nodes.nodes_len; k++)
            out[k] = (cudaGraphNode_t)(uintptr_t)r.nodes.nodes_val[k];
        for (size_t i = k; i < *num; i++)
            out[i] = NULL;
        if (edgeData)   /* default edges only (see cudaGraphGetEdges) */
            memset(edgeData, 0, *num * sizeof(*edgeData));
        *num = k;
    }
    xdr_free((xdrproc_t)xdr_tdm_graph_nodes_res, (char *)&r);
    return err;
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                         cudaGraphEdgeData *edgeData, size_t *pNumDependencies)
{
    return tdm_ret(neighbours(node, false, pDependencies, edgeData, pNumDependencies));
}

cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *pDependentNodes,
                                           cudaGraphEdgeData *edgeData, size_t *pNumDependentNodes)
{
    return tdm_ret(neighbours(node, true, pDependentNodes, edgeData, pNumDependentNodes));
}

cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                        const cudaGraphEdgeData *edgeData, size_t numDependencies)
{
    tdm_graph_deps_args a;

    if (!graph || (numDependencies && (!from || !to)) || numDependencies > TDM_MAX_GRAPH_DEPS)
        return tdm_ret(cudaErrorInvalidValue);
    /* Tandem's edges are default ones: edge data naming another kind names no edge. */
    for (size_t i = 0; edgeData && i < numDependencies; i++) {
        static const cudaGraphEdgeData zero;
        if (memcmp(&edgeData[i], &zero, sizeof(zero)) != 0)
            return tdm_ret(cudaErrorInvalidValue);
    }
    a.graph = h(graph);
    a.from.from_val = (tdm_handle *)(uintptr_t)from;
    a.from.from_len = (u_int)numDependencies;
    a.to.to_val = (tdm_handle *)(uintptr_t)to;
    a.to.to_len = (u_int)numDependencies;
    return tdm_ret(tdm_call_err(TDM_GRAPH_REMOVE_DEPENDENCIES, &a));
}

cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node)
{
    tdm_handle n = h(node);

    cudaError_t err;

    if (!node)
        return tdm_ret(cudaErrorInvalidValue);
    if (!(err = tdm_call_err(TDM_GRAPH_DESTROY_NODE, &n)))
        tdm_graph_params_forget_node(n);   /* graph node parameters (issue 14) */
    return tdm_ret(err);
}

cudaError_t cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                           const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                           const void *symbol, const void *src, size_t count, size_t offset,
                                           enum cudaMemcpyKind kind)
{
    uint64_t addr = 0;
    cudaError_t err = tdm_symbol_range(symbol, count, offset, &addr);

    if (err)
        return tdm_ret(err);
    if (kind == cudaMemcpyDefault)
        kind = tdm_allocs_is_device(src) ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice)
        return tdm_ret(cudaErrorInvalidMemcpyDirection);
    return tdm_ret(add_memcpy(pGraphNode, graph, pDependencies, numDependencies, (void *)(uintptr_t)addr, src, count,
                              kind));
}

cudaError_t cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                             const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dst,
                                             const void *symbol, size_t count, size_t offset,
                                             enum cudaMemcpyKind kind)
{
    uint64_t addr = 0;
    cudaError_t err = tdm_symbol_range(symbol, count, offset, &addr);

    if (err)
        return tdm_ret(err);
    if (kind == cudaMemcpyDefault)
        kind = tdm_allocs_is_device(dst) ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice)
        return tdm_ret(cudaErrorInvalidMemcpyDirection);
    return tdm_ret(add_memcpy(pGraphNode, graph, pDependencies, numDependencies, dst, (const void *)(uintptr_t)addr,
                              count, kind));
}

/* A node kind's name in the DOT file, as the driver spells the kinds. */
static const char *dot_kind(enum cudaGraphNodeType t)
{
    static const char *const names[] = {
        [cudaGraphNodeTypeKernel] = "KERNEL",          [cudaGraphNodeTypeMemcpy] = "MEMCPY",
        [cudaGraphNodeTypeMemset] = "MEMSET",          [cudaGraphNodeTypeHost] = "HOST",
        [cudaGraphNodeTypeGraph] = "CHILD_GRAPH",      [cudaGraphNodeTypeEmpty] = "EMPTY",
        [cudaGraphNodeTypeWaitEvent] = "WAIT_EVENT",   [cudaGraphNodeTypeEventRecord] = "EVENT_RECORD",
        [cudaGraphNodeTypeMemAlloc] = "MEM_ALLOC",     [cudaGraphNodeTypeMemFree] = "MEM_FREE",
        [cudaGraphNodeTypeConditional] = "CONDITIONAL",
    };

    return (size_t)t < sizeof(names) / sizeof(names[0]) && names[t] ? names[t] : "NODE";
}

static long dot_index(const cudaGraphNode_t *nodes, size_t n, cudaGraphNode_t x)
{
    for (size_t i = 0; i < n; i++)
        if (nodes[i] == x)
            return (long)i;
    return -1;
}

/* The graph's structure as the server has it: its nodes with their kinds,
 * and its edges (docs/graphs.md says what the driver's file has besides). */
cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags)
{
    cudaGraphNode_t *nodes = NULL, *from = NULL, *to = NULL;
    size_t n = 0, ne = 0;
    FILE *f = NULL;
    cudaError_t err;

    if (!graph || !path)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = node_list(TDM_GRAPH_GET_NODES, graph, NULL, &n)) != cudaSuccess ||
        (err = cudaGraphGetEdges(graph, NULL, NULL, NULL, &ne)) != cudaSuccess)
        return tdm_ret(err);
    nodes = calloc(n + 1, sizeof(*nodes));
    from = calloc(ne + 1, sizeof(*from));
    to = calloc(ne + 1, sizeof(*to));
    if (!nodes || !from || !to) {
        err = cudaErrorMemoryAllocation;
        goto out;
    }
    if ((err = node_list(TDM_GRAPH_GET_NODES, graph, nodes, &n)) != cudaSuccess ||
        (err = cudaGraphGetEdges(graph, from, to, NULL, &ne)) != cudaSuccess)
        goto out;
    if (!(f = fopen(path, "w"))) {
        err = cudaErrorOperatingSystem;
        goto out;
    }
    fprintf(f, "digraph dot {\nsubgraph cluster_1 {\nlabel=\"graph_1\" graph[style=\"dashed\"];\n");
    for (size_t i = 0; i < n && !err; i++) {
        enum cudaGraphNodeType t = cudaGraphNodeTypeEmpty;
        err = cudaGraphNodeGetType(nodes[i], &t);
        fprintf(f, "\"graph_1_node_%zu\"[style=\"solid\" shape=\"rectangle\" label=\"%zu\\n%s\"];\n", i, i,
                dot_kind(t));
    }
    for (size_t i = 0; i < ne; i++)
        fprintf(f, "\"graph_1_node_%ld\" -> \"graph_1_node_%ld\";\n", dot_index(nodes, n, from[i]),
                dot_index(nodes, n, to[i]));
    fprintf(f, "}\n}\n");
    if (fclose(f) != 0 && !err)
        err = cudaErrorOperatingSystem;
out:
    free(nodes);
    free(from);
    free(to);
    return tdm_ret(err);
}

cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *pNode, cudaGraphNode_t originalNode, cudaGraph_t clonedGraph)
{
    tdm_graph_find_in_clone_args a = { h(originalNode), h(clonedGraph) };
    tdm_handle_res r;
    cudaError_t err;

    if (!pNode || !originalNode || !clonedGraph)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_NODE_FIND_IN_CLONE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *pNode = (cudaGraphNode_t)(uintptr_t)r.handle;
    return tdm_ret(err);
}
