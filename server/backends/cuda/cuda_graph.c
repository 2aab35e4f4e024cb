/* Stream capture and graphs on the GPU: the driver's own.  A capture is
 * cuStreamBeginCapture on the server's real stream, so the guest's work,
 * which lands on that stream in order, is recorded by the driver; a graph
 * launch is cuGraphLaunch of the real executable graph.  tdm_bgraph and
 * tdm_bgexec are the driver's handles, cast (they carry no state of ours). */
#include "cuda_backend_internal.h"

int tdm_cuda_stream_begin_capture(tdm_backend *b, tdm_bstream *s, int mode)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    /* cudaStreamCaptureMode and CUstreamCaptureMode share their values. */
    return tdm_cuda_err(tdm_cu.cuStreamBeginCapture(tdm_cuda_stream(s), (CUstreamCaptureMode)mode),
                        "cuStreamBeginCapture");
}

int tdm_cuda_stream_end_capture(tdm_backend *b, tdm_bstream *s, tdm_bgraph **out)
{
    CUgraph g = NULL;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuStreamEndCapture(tdm_cuda_stream(s), &g), "cuStreamEndCapture");
    if (!err)
        *out = (tdm_bgraph *)g;
    return err;
}

int tdm_cuda_stream_capture_info(tdm_backend *b, tdm_bstream *s, int *status, uint64_t *id)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t cid = 0;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuStreamGetCaptureInfo(tdm_cuda_stream(s), &st, &cid, NULL, NULL, NULL, NULL),
                       "cuStreamGetCaptureInfo");
    *status = (int)st;   /* cudaStreamCaptureStatus has the same values */
    *id = st == CU_STREAM_CAPTURE_STATUS_NONE ? 0 : cid;
    return err;
}

int tdm_cuda_graph_destroy(tdm_backend *b, tdm_bgraph *g)
{
    int err = tdm_cuda_enter(b);

    return err ? err : tdm_cuda_err(tdm_cu.cuGraphDestroy((CUgraph)g), "cuGraphDestroy");
}

int tdm_cuda_graph_instantiate(tdm_backend *b, tdm_bgraph *g, uint64_t flags, tdm_bgexec **out)
{
    CUgraphExec x = NULL;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuGraphInstantiateWithFlags(&x, (CUgraph)g, flags), "cuGraphInstantiateWithFlags");
    if (!err)
        *out = (tdm_bgexec *)x;
    return err;
}

int tdm_cuda_graph_exec_destroy(tdm_backend *b, tdm_bgexec *x)
{
    int err = tdm_cuda_enter(b);

    return err ? err : tdm_cuda_err(tdm_cu.cuGraphExecDestroy((CUgraphExec)x), "cuGraphExecDestroy");
}

int tdm_cuda_graph_launch(tdm_backend *b, tdm_bgexec *x, tdm_bstream *s)
{
    int err = tdm_cuda_enter(b);

    return err ? err : tdm_cuda_err(tdm_cu.cuGraphLaunch((CUgraphExec)x, tdm_cuda_stream(s)), "cuGraphLaunch");
}

int tdm_cuda_graph_exec_update(tdm_backend *b, tdm_bgexec *x, tdm_bgraph *g, int *result)
{
    CUgraphExecUpdateResultInfo info = { .result = CU_GRAPH_EXEC_UPDATE_SUCCESS };
    CUresult r;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    r = tdm_cu.cuGraphExecUpdate((CUgraphExec)x, (CUgraph)g, &info);
    *result = (int)info.result;   /* cudaGraphExecUpdateResult has the same values */
    /* A refused update is an answer for the program, not a failure to log. */
    return r == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE ? tdm_cuda_map_error(r) : tdm_cuda_err(r, "cuGraphExecUpdate");
}
