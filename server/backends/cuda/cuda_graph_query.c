/* A graph's structure on the GPU (docs/graphs.md): clones and queries of
 * the driver's own graph.  tdm_bgraph and tdm_bgnode are the driver's
 * CUgraph and CUgraphNode, cast. */
#include "cuda_backend_internal.h"

int tdm_cuda_graph_clone(tdm_backend *b, tdm_bgraph *g, tdm_bgraph **out)
{
    CUgraph c = NULL;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuGraphClone(&c, (CUgraph)g), "cuGraphClone");
    if (!err)
        *out = (tdm_bgraph *)c;
    return err;
}

int tdm_cuda_graph_nodes(tdm_backend *b, tdm_bgraph *g, tdm_bgnode **out, size_t cap, size_t *n)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    /* With out NULL the driver only counts; else it fills at most *n. */
    *n = cap;
    return tdm_cuda_err(tdm_cu.cuGraphGetNodes((CUgraph)g, cap ? (CUgraphNode *)out : NULL, n), "cuGraphGetNodes");
}

int tdm_cuda_graph_node_type(tdm_backend *b, tdm_bgnode *n, int *type)
{
    CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    /* CUgraphNodeType and cudaGraphNodeType share their values. */
    err = tdm_cuda_err(tdm_cu.cuGraphNodeGetType((CUgraphNode)n, &t), "cuGraphNodeGetType");
    *type = (int)t;
    return err;
}

int tdm_cuda_graph_node_deps(tdm_backend *b, tdm_bgnode *n, tdm_bgnode **out, size_t cap, size_t *count)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    *count = cap;
    return tdm_cuda_err(tdm_cu.cuGraphNodeGetDependencies((CUgraphNode)n, cap ? (CUgraphNode *)out : NULL, NULL, count),
                        "cuGraphNodeGetDependencies");
}

int tdm_cuda_graph_remove_dependencies(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *const *from, tdm_bgnode *const *to,
                                       size_t n)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuGraphRemoveDependencies((CUgraph)g, (const CUgraphNode *)from,
                                                         (const CUgraphNode *)to, NULL, n),
                        "cuGraphRemoveDependencies");
}

int tdm_cuda_graph_destroy_node(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *n)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuGraphDestroyNode((CUgraphNode)n), "cuGraphDestroyNode");
}

int tdm_cuda_graph_find_in_clone(tdm_backend *b, tdm_bgraph *clone, tdm_bgnode *n, tdm_bgnode **out)
{
    CUgraphNode c = NULL;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuGraphNodeFindInClone(&c, (CUgraphNode)n, (CUgraph)clone), "cuGraphNodeFindInClone");
    if (!err)
        *out = (tdm_bgnode *)c;
    return err;
}
