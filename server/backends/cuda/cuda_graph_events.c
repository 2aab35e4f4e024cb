/* Event record and wait nodes, child graph nodes on the GPU (docs/graphs.md
 * "Event nodes, child graphs and user objects"): the driver's own nodes;
 * event nodes name the session's CUevent (a tdm_bevent is one). */
#include "cuda_backend_internal.h"

#include <stdlib.h>

int tdm_cuda_graph_add_event_node(CUgraph g, const CUgraphNode *deps, size_t ndeps, bool record, tdm_bevent *e,
                                  CUgraphNode *out)
{
    CUevent ce = tdm_cuda_event(e);

    if (record)
        return tdm_cuda_err(tdm_cu.cuGraphAddEventRecordNode(out, g, deps, ndeps, ce), "cuGraphAddEventRecordNode");
    return tdm_cuda_err(tdm_cu.cuGraphAddEventWaitNode(out, g, deps, ndeps, ce), "cuGraphAddEventWaitNode");
}

/* n's type, or -1 when the driver cannot tell. */
static int node_type(tdm_bgnode *n)
{
    CUgraphNodeType t;

    return tdm_cu.cuGraphNodeGetType((CUgraphNode)n, &t) == CUDA_SUCCESS ? (int)t : -1;
}

int tdm_cuda_graph_event_node_get(tdm_backend *b, tdm_bgnode *n, tdm_bevent **out)
{
    CUevent ce = NULL;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    switch (node_type(n)) {
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        err = tdm_cuda_err(tdm_cu.cuGraphEventRecordNodeGetEvent((CUgraphNode)n, &ce),
                           "cuGraphEventRecordNodeGetEvent");
        break;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        err = tdm_cuda_err(tdm_cu.cuGraphEventWaitNodeGetEvent((CUgraphNode)n, &ce), "cuGraphEventWaitNodeGetEvent");
        break;
    default:
        return cudaErrorInvalidValue;
    }
    *out = (tdm_bevent *)ce;
    return err;
}

int tdm_cuda_graph_event_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, tdm_bevent *e)
{
    CUgraphNode cn = (CUgraphNode)n;
    CUevent ce = tdm_cuda_event(e);
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    switch (node_type(n)) {
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        if (x)
            return tdm_cuda_err(tdm_cu.cuGraphExecEventRecordNodeSetEvent((CUgraphExec)x, cn, ce),
                                "cuGraphExecEventRecordNodeSetEvent");
        return tdm_cuda_err(tdm_cu.cuGraphEventRecordNodeSetEvent(cn, ce), "cuGraphEventRecordNodeSetEvent");
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        if (x)
            return tdm_cuda_err(tdm_cu.cuGraphExecEventWaitNodeSetEvent((CUgraphExec)x, cn, ce),
                                "cuGraphExecEventWaitNodeSetEvent");
        return tdm_cuda_err(tdm_cu.cuGraphEventWaitNodeSetEvent(cn, ce), "cuGraphEventWaitNodeSetEvent");
    default:
        return cudaErrorInvalidValue;
    }
}

/* The driver makes the node itself on a capturing stream. */
int tdm_cuda_stream_event_external(tdm_backend *b, tdm_bstream *s, tdm_bevent *e, bool record)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if (record)
        return tdm_cuda_err(tdm_cu.cuEventRecordWithFlags(tdm_cuda_event(e), tdm_cuda_stream(s),
                                                          CU_EVENT_RECORD_EXTERNAL),
                            "cuEventRecordWithFlags");
    return tdm_cuda_err(tdm_cu.cuStreamWaitEvent(tdm_cuda_stream(s), tdm_cuda_event(e), CU_EVENT_WAIT_EXTERNAL),
                        "cuStreamWaitEvent");
}

int tdm_cuda_graph_add_child_node(tdm_backend *b, tdm_bgraph *g, tdm_bgraph *child, tdm_bgnode *const *deps,
                                  size_t ndeps, tdm_bgnode **out, tdm_bgraph **embedded)
{
    CUgraphNode n = NULL;
    CUgraph e = NULL;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuGraphAddChildGraphNode(&n, (CUgraph)g, (const CUgraphNode *)deps, ndeps, (CUgraph)child),
                       "cuGraphAddChildGraphNode");
    if (!err)
        err = tdm_cuda_err(tdm_cu.cuGraphChildGraphNodeGetGraph(n, &e), "cuGraphChildGraphNodeGetGraph");
    if (err)
        return err;
    *out = (tdm_bgnode *)n;
    *embedded = (tdm_bgraph *)e;
    return 0;
}

int tdm_cuda_graph_child_graph(tdm_backend *b, tdm_bgnode *n, tdm_bgraph **out)
{
    CUgraph e = NULL;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if (node_type(n) != CU_GRAPH_NODE_TYPE_GRAPH)
        return cudaErrorInvalidValue;
    err = tdm_cuda_err(tdm_cu.cuGraphChildGraphNodeGetGraph((CUgraphNode)n, &e), "cuGraphChildGraphNodeGetGraph");
    *out = (tdm_bgraph *)e;
    return err;
}

int tdm_cuda_graph_exec_child_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, tdm_bgraph *child)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuGraphExecChildGraphNodeSetParams((CUgraphExec)x, (CUgraphNode)n, (CUgraph)child),
                        "cuGraphExecChildGraphNodeSetParams");
}

/* ---- external semaphore nodes (issue 14) ---- */

/* A node of n semaphores, each NULL (no semaphore reaches the server), with
 * zeroed parameters: the driver answers as for the program's own NULLs. The
 * session never instantiates a graph holding one (docs/graphs.md). */
int tdm_cuda_graph_add_extsem_node(CUgraph g, const CUgraphNode *deps, size_t ndeps, bool signal, size_t n,
                                   CUgraphNode *out)
{
    CUexternalSemaphore *sems = calloc(n ? n : 1, sizeof(*sems));
    void *params = calloc(n ? n : 1, signal ? sizeof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS)
                                            : sizeof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS));
    int err = cudaErrorMemoryAllocation;

    if (sems && params && signal) {
        CUDA_EXT_SEM_SIGNAL_NODE_PARAMS p = { sems, params, (unsigned)n };
        err = tdm_cuda_err(tdm_cu.cuGraphAddExternalSemaphoresSignalNode(out, g, deps, ndeps, &p),
                           "cuGraphAddExternalSemaphoresSignalNode");
    } else if (sems && params) {
        CUDA_EXT_SEM_WAIT_NODE_PARAMS p = { sems, params, (unsigned)n };
        err = tdm_cuda_err(tdm_cu.cuGraphAddExternalSemaphoresWaitNode(out, g, deps, ndeps, &p),
                           "cuGraphAddExternalSemaphoresWaitNode");
    }
    free(sems);
    free(params);
    return err;
}
