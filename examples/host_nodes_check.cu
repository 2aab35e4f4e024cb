// Host nodes of graphs (docs/graphs.md "Host nodes"), as cuda-samples'
// simpleCudaGraphs uses them: a kernel, a device-to-host copy, then a host
// function reading what the copy wrote, in a graph captured from a stream
// (cudaLaunchHostFunc) and in one built node by node (cudaGraphAddHostNode),
// each launched 3 times and its clone once, with pinned and with pageable
// host memory.  One line per fact on stdout, the same natively and through
// Tandem; the sums are checked against a host reference.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            fprintf(stderr, "host_nodes_check: %s failed at %s:%d: %s (%s)\n", #call,   \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

// The same kernel as examples/increment_loop.cu (its sim twin runs it).
__global__ void increment(unsigned int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1u + (unsigned int)(i % 7);
}

enum { N = 64, BYTES = N * sizeof(unsigned int), LAUNCHES = 3, MAX_SEEN = 16 };

// What the host function saw: the sum of the copied result, per run.
struct seen {
    const unsigned int *result;
    unsigned long long sums[MAX_SEEN];
    int runs;
};

static void CUDART_CB record(void *p)
{
    seen *s = (seen *)p;
    unsigned long long sum = 0;

    for (int i = 0; i < N; i++)
        sum += s->result[i];
    if (s->runs < MAX_SEEN)
        s->sums[s->runs] = sum;
    s->runs++;
}

// The host's reference: after k increments every x[i] is k * (1 + i % 7).
static unsigned long long expected(int k)
{
    unsigned long long sum = 0;

    for (int i = 0; i < N; i++)
        sum += (unsigned long long)k * (1u + (unsigned int)(i % 7));
    return sum;
}

// Launches exec LAUNCHES times and its graph's clone once; prints what the
// host function saw after k0 earlier increments of d_x.
static int run_and_report(const char *what, cudaGraph_t g, seen *s, int k0, cudaStream_t st)
{
    cudaGraphExec_t exec, cexec;
    cudaGraph_t clone;
    int bad = 0;

    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphClone(&clone, g));
    CHECK(cudaGraphInstantiate(&cexec, clone, 0));
    for (int l = 0; l < LAUNCHES; l++)
        CHECK(cudaGraphLaunch(exec, st));
    CHECK(cudaStreamSynchronize(st));
    CHECK(cudaGraphLaunch(cexec, st));
    CHECK(cudaStreamSynchronize(st));
    printf("%s: host function ran %d times, saw", what, s->runs);
    for (int r = 0; r < s->runs && r < MAX_SEEN; r++) {
        printf(" %llu", s->sums[r]);
        bad |= s->sums[r] != expected(k0 + r + 1);
    }
    printf(" (%s)\n", bad || s->runs != LAUNCHES + 1 ? "WRONG" : "as the host reference");
    CHECK(cudaGraphExecDestroy(cexec));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(clone));
    return bad || s->runs != LAUNCHES + 1;
}

static int captured(const char *mem, unsigned int *result, unsigned int *d_x, int k0, cudaStream_t st)
{
    seen s = { result, {0}, 0 };
    cudaGraph_t g;
    size_t count = 0;
    char what[64];
    int bad;

    CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    increment<<<1, N, 0, st>>>(d_x, N);
    CHECK(cudaMemcpyAsync(result, d_x, BYTES, cudaMemcpyDeviceToHost, st));
    CHECK(cudaLaunchHostFunc(st, record, &s));
    CHECK(cudaStreamEndCapture(st, &g));
    CHECK(cudaGraphGetNodes(g, NULL, &count));
    printf("captured (%s): %zu nodes, host function ran at capture: %s\n", mem, count, s.runs ? "yes" : "no");
    snprintf(what, sizeof(what), "captured (%s)", mem);
    bad = run_and_report(what, g, &s, k0, st);
    CHECK(cudaGraphDestroy(g));
    return bad;
}

static int explicit_graph(const char *mem, unsigned int *result, const unsigned int *upload, unsigned int *d_x,
                          unsigned int *d_scratch, int k0, cudaStream_t st)
{
    seen s = { result, {0}, 0 };
    cudaGraph_t g;
    cudaGraphNode_t un, kn, cn, hn;
    cudaKernelNodeParams kp = {};
    cudaHostNodeParams hp = {}, got = {};
    cudaGraphNodeType type;
    int n = N;
    void *args[] = { &d_x, &n };
    char what[64];
    int bad;

    CHECK(cudaGraphCreate(&g, 0));
    kp.func = (void *)increment;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(N);
    kp.kernelParams = args;
    // An upload first (its bytes go with each launch, staged over TCP):
    // the next launch's waits for this one's host node.
    CHECK(cudaGraphAddMemcpyNode1D(&un, g, NULL, 0, d_scratch, upload, BYTES, cudaMemcpyHostToDevice));
    CHECK(cudaGraphAddKernelNode(&kn, g, &un, 1, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&cn, g, &kn, 1, result, d_x, BYTES, cudaMemcpyDeviceToHost));
    hp.fn = record;
    hp.userData = &s;
    CHECK(cudaGraphAddHostNode(&hn, g, &cn, 1, &hp));
    CHECK(cudaGraphNodeGetType(hn, &type));
    CHECK(cudaGraphHostNodeGetParams(hn, &got));
    printf("explicit (%s): host node type %d, params %s\n", mem, (int)type,
           got.fn == record && got.userData == &s ? "as given" : "WRONG");
    snprintf(what, sizeof(what), "explicit (%s)", mem);
    bad = run_and_report(what, g, &s, k0, st);
    CHECK(cudaGraphDestroy(g));
    return bad;
}

// Bad input, refused as the runtime refuses it.
static void bad_input(unsigned int *d_x)
{
    cudaGraph_t g;
    cudaGraphNode_t kn, hn;
    cudaKernelNodeParams kp = {};
    cudaHostNodeParams hp = {};
    int n = N;
    void *args[] = { &d_x, &n };

    CHECK(cudaGraphCreate(&g, 0));
    printf("host node, NULL fn: %s\n", cudaGetErrorName(cudaGraphAddHostNode(&hn, g, NULL, 0, &hp)));
    printf("host node, NULL params: %s\n", cudaGetErrorName(cudaGraphAddHostNode(&hn, g, NULL, 0, NULL)));
    kp.func = (void *)increment;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(N);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&kn, g, NULL, 0, &kp));
    printf("host params of a kernel node: %s\n", cudaGetErrorName(cudaGraphHostNodeGetParams(kn, &hp)));
    hp.fn = record;
    printf("set host params of a kernel node: %s\n", cudaGetErrorName(cudaGraphHostNodeSetParams(kn, &hp)));
    printf("cudaLaunchHostFunc, NULL fn: %s\n", cudaGetErrorName(cudaLaunchHostFunc(0, NULL, NULL)));
    CHECK(cudaGraphDestroy(g));
    (void)cudaGetLastError();
}

int main(void)
{
    unsigned int *d_x, *d_scratch, *pinned, *pageable, *pinned_in, *pageable_in;
    cudaStream_t st;
    int bad = 0, k = 0;

    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&d_x, BYTES));
    CHECK(cudaMemset(d_x, 0, BYTES));
    // cudaMemset runs on the legacy stream, which st (non-blocking) does
    // not wait for: without this the zeros could land after a launch.
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMalloc(&d_scratch, BYTES));
    CHECK(cudaMallocHost(&pinned, BYTES));
    CHECK(cudaMallocHost(&pinned_in, BYTES));
    pageable = (unsigned int *)malloc(BYTES);
    pageable_in = (unsigned int *)malloc(BYTES);
    memset(pageable, 0, BYTES);
    memset(pinned_in, 7, BYTES);
    memset(pageable_in, 7, BYTES);

    bad |= captured("pinned", pinned, d_x, k, st);
    k += LAUNCHES + 1;
    bad |= captured("pageable", pageable, d_x, k, st);
    k += LAUNCHES + 1;
    bad |= explicit_graph("pinned", pinned, pinned_in, d_x, d_scratch, k, st);
    k += LAUNCHES + 1;
    bad |= explicit_graph("pageable", pageable, pageable_in, d_x, d_scratch, k, st);
    bad_input(d_x);

    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFreeHost(pinned_in));
    free(pageable);
    free(pageable_in);
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_scratch));
    CHECK(cudaStreamDestroy(st));
    printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad;
}
