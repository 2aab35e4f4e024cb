// Stream capture: one stream forks into a second through an event, both
// transform half of a buffer uploaded by the capture, the second joins back,
// a kernel combines the halves and a device-to-device copy keeps the result.
// The graph is instantiated, the graph itself destroyed, and the executable
// graph launched several times: every launch must give the same checksum.
// Then the capture errors a program can meet.  Output is deterministic:
// error names and checksums only.  Usage: graph_capture [launches]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "graph_capture: %s failed at %s:%d: %s (%s)\n", #call,     \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#include "graph_common.cuh"

static const char *status_name(cudaStreamCaptureStatus s)
{
    return s == cudaStreamCaptureStatusNone ? "none" : s == cudaStreamCaptureStatusActive ? "active" : "invalidated";
}

static void print_status(const char *what, cudaStream_t s)
{
    cudaStreamCaptureStatus st;
    CHECK(cudaStreamIsCapturing(s, &st));
    printf("%s: %s\n", what, status_name(st));
}

// An expected failure: its name, then the last error is cleared.
static void expect(const char *what, cudaError_t err)
{
    printf("%s: %s\n", what, cudaGetErrorName(err));
    cudaGetLastError();
}

// The fork/join capture; k0 is the first half's factor.  verbose: say
// what the streams' capture status is along the way.
static cudaGraph_t capture(cudaStream_t s0, cudaStream_t s1, cudaEvent_t fork, cudaEvent_t join, unsigned int *d_buf,
                           unsigned int *d_out, unsigned int *d_keep, const unsigned int *h_in, unsigned int k0,
                           bool verbose)
{
    const int n = 1 << 16, half = n / 2, threads = 256, blocks = (half + threads - 1) / threads;
    const size_t bytes = (size_t)n * sizeof(unsigned int), half_bytes = bytes / 2;
    cudaGraph_t graph;

    CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
    if (verbose)
        print_status("origin stream", s0);
    CHECK(cudaMemcpyAsync(d_buf, h_in, bytes, cudaMemcpyHostToDevice, s0));
    CHECK(cudaMemsetAsync(d_out, 0, half_bytes, s0));
    CHECK(cudaEventRecord(fork, s0));
    CHECK(cudaStreamWaitEvent(s1, fork, 0));
    if (verbose)
        print_status("forked stream", s1);
    se_transform<<<blocks, threads, 0, s0>>>(d_buf, half, k0, 1u);
    CHECK(cudaGetLastError());
    se_transform<<<blocks, threads, 0, s1>>>(d_buf + half, half, 5u, 2u);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(join, s1));
    CHECK(cudaStreamWaitEvent(s0, join, 0));
    se_combine<<<blocks, threads, 0, s0>>>(d_buf, d_buf + half, d_out, half);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(d_keep, d_out, half_bytes, cudaMemcpyDeviceToDevice, s0));
    CHECK(cudaStreamEndCapture(s0, &graph));
    return graph;
}

int main(int argc, char **argv)
{
    const int launches = argc > 1 ? atoi(argv[1]) : 5;
    const int n = 1 << 16;
    const size_t bytes = (size_t)n * sizeof(unsigned int), half_bytes = bytes / 2;
    unsigned int *h_in = NULL, *h_out = (unsigned int *)malloc(half_bytes);
    unsigned int *d_buf, *d_out, *d_keep;
    cudaStream_t s0, s1;
    cudaEvent_t fork, join;
    cudaGraph_t graph, bad;
    cudaGraphExec_t exec;

    if (!h_out)
        return 1;
    CHECK(cudaSetDevice(0));
    // Pinned, as a captured upload's source should be (simpleCudaGraphs does so).
    CHECK(cudaMallocHost(&h_in, bytes));
    for (int i = 0; i < n; i++)
        h_in[i] = (unsigned int)i * 2654435761u;
    CHECK(cudaMalloc(&d_buf, bytes));
    CHECK(cudaMalloc(&d_out, half_bytes));
    CHECK(cudaMalloc(&d_keep, half_bytes));
    CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

    expect("end capture of a stream not capturing", cudaStreamEndCapture(s0, &bad));
    expect("begin capture on the legacy stream", cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeGlobal));
    print_status("before capture", s0);

    graph = capture(s0, s1, fork, join, d_buf, d_out, d_keep, h_in, 3u, true);
    print_status("forked stream after the end", s1);

    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphDestroy(graph));   // the executable graph stands alone
    for (int r = 0; r < launches; r++)
        printf("launch %d: checksum %016llx\n", r, (unsigned long long)launch_once(exec, s0, d_buf, d_keep, h_out, bytes));

    // The same topology with another factor updates the executable graph.
    cudaGraphExecUpdateResultInfo info;
    graph = capture(s0, s1, fork, join, d_buf, d_out, d_keep, h_in, 7u, false);
    cudaError_t uerr = cudaGraphExecUpdate(exec, graph, &info);
    printf("update, same topology: %s (result %d)\n", cudaGetErrorName(uerr), (int)info.result);
    CHECK(cudaGraphDestroy(graph));
    printf("launch after the update: checksum %016llx\n",
           (unsigned long long)launch_once(exec, s0, d_buf, d_keep, h_out, bytes));
    // Another topology (one memset) cannot update it; it stays as it was.
    CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemsetAsync(d_out, 2, half_bytes, s0));
    CHECK(cudaStreamEndCapture(s0, &graph));
    uerr = cudaGraphExecUpdate(exec, graph, &info);
    printf("update, other topology: %s (result %d)\n", cudaGetErrorName(uerr), (int)info.result);
    cudaGetLastError();
    CHECK(cudaGraphDestroy(graph));
    printf("launch after the refused update: checksum %016llx\n",
           (unsigned long long)launch_once(exec, s0, d_buf, d_keep, h_out, bytes));
    CHECK(cudaGraphExecDestroy(exec));

    // Synchronizing a capturing stream fails and invalidates the capture.
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemsetAsync(d_out, 1, half_bytes, s1));
    expect("synchronize a capturing stream", cudaStreamSynchronize(s1));
    print_status("after the synchronize", s1);
    expect("end the invalidated capture", cudaStreamEndCapture(s1, &bad));
    print_status("after its end", s1);

    CHECK(cudaEventDestroy(fork));
    CHECK(cudaEventDestroy(join));
    CHECK(cudaStreamDestroy(s0));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaFree(d_buf));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_keep));
    CHECK(cudaFreeHost(h_in));
    free(h_out);
    printf("graph_capture: done\n");
    return 0;
}
