// Conditional graph nodes (docs/graphs.md, "Conditional nodes"): If (with
// and without an else body), While and Switch nodes built with
// cudaGraphAddNode, driven by kernels that call cudaGraphSetConditional; a
// handle's default value (cudaGraphCondAssignDefault); an If/else nested in
// a While body; a body filled by
// cudaStreamBeginCaptureToGraph; bad node parameters.  Each launch appends
// to a log on the device which it prints: the same natively and through
// Tandem.
// Usage: graph_conditional [launches]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            fprintf(stderr, "graph_conditional: %s failed at %s:%d: %s (%s)\n", #call,     \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static const int LOG_LEN = 64;

// The handle takes *flag.
__global__ void cond_set(const int *flag, cudaGraphConditionalHandle h)
{
    cudaGraphSetConditional(h, (unsigned)*flag);
}

// One more step of a loop: the handle becomes 0 once *counter reaches 0.
__global__ void cond_count_down(int *counter, cudaGraphConditionalHandle h)
{
    if (--*counter <= 0)
        cudaGraphSetConditional(h, 0);
}

// Appends v to the log (log[0] counts the entries).
__global__ void cond_record(int *log, int v)
{
    if (log[0] < LOG_LEN - 1)
        log[1 + log[0]++] = v;
}

static int *d_log, *d_flag, *d_counter;

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps, void *func, void **args)
{
    cudaGraphNodeParams p = {};
    cudaGraphNode_t node;

    p.type = cudaGraphNodeTypeKernel;
    p.kernel.func = func;
    p.kernel.gridDim = dim3(1);
    p.kernel.blockDim = dim3(1);
    p.kernel.kernelParams = args;
    CHECK(cudaGraphAddNode(&node, g, deps, NULL, ndeps, &p));
    return node;
}

static cudaGraphNode_t add_set(cudaGraph_t g, cudaGraphConditionalHandle h)
{
    void *args[] = { &d_flag, &h };
    return add_kernel(g, NULL, 0, (void *)cond_set, args);
}

static cudaGraphNode_t add_record(cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps, int v)
{
    void *args[] = { &d_log, &v };
    return add_kernel(g, deps, ndeps, (void *)cond_record, args);
}

static cudaGraphNode_t add_count_down(cudaGraph_t g, const cudaGraphNode_t *dep, cudaGraphConditionalHandle h)
{
    void *args[] = { &d_counter, &h };
    return add_kernel(g, dep, dep ? 1 : 0, (void *)cond_count_down, args);
}

static cudaError_t add_cond(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *dep,
                            cudaGraphConditionalHandle h, cudaGraphConditionalNodeType type, unsigned size,
                            cudaGraph_t **bodies)
{
    cudaGraphNodeParams p = {};
    cudaError_t err;

    p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = h;
    p.conditional.type = type;
    p.conditional.size = size;
    err = cudaGraphAddNode(node, g, dep, NULL, dep ? 1 : 0, &p);
    if (bodies)
        *bodies = err ? NULL : p.conditional.phGraph_out;
    return err;
}

static void set_int(int *d, int v)
{
    CHECK(cudaMemcpy(d, &v, sizeof(v), cudaMemcpyHostToDevice));
}

// Launches x once with *flag = flag and *counter = counter; prints the log.
static void run(const char *name, cudaGraphExec_t x, cudaStream_t s, int flag, int counter)
{
    int log[LOG_LEN];

    CHECK(cudaMemset(d_log, 0, LOG_LEN * sizeof(int)));
    set_int(d_flag, flag);
    set_int(d_counter, counter);
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(log, d_log, sizeof(log), cudaMemcpyDeviceToHost));
    printf("%s flag=%d counter=%d:", name, flag, counter);
    for (int i = 0; i < log[0]; i++)
        printf(" %d", log[1 + i]);
    printf("\n");
}

static cudaGraphExec_t instantiate(cudaGraph_t g)
{
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    return x;
}

int main(int argc, char **argv)
{
    int launches = argc > 1 ? atoi(argv[1]) : 2;
    cudaGraphConditionalHandle h, h2, other;
    cudaGraphNode_t set, cond, node;
    cudaGraph_t g, g2, *bodies, *inner;
    cudaGraphExec_t x;
    cudaStream_t s, cs;

    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamCreate(&cs));
    CHECK(cudaMalloc(&d_log, LOG_LEN * sizeof(int)));
    CHECK(cudaMalloc(&d_flag, sizeof(int)));
    CHECK(cudaMalloc(&d_counter, sizeof(int)));

    // If: the body runs when the kernel before it set a non-zero value.
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphConditionalHandleCreate(&h, g));
    set = add_set(g, h);
    CHECK(add_cond(&cond, g, &set, h, cudaGraphCondTypeIf, 1, &bodies));
    add_record(bodies[0], NULL, 0, 1);
    x = instantiate(g);
    for (int i = 0; i < launches; i++) {
        run("if", x, s, 0, 0);
        run("if", x, s, 1 + i, 0);
    }
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));

    // If/else.
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphConditionalHandleCreate(&h, g));
    set = add_set(g, h);
    CHECK(add_cond(&cond, g, &set, h, cudaGraphCondTypeIf, 2, &bodies));
    add_record(bodies[0], NULL, 0, 10);
    node = add_record(bodies[1], NULL, 0, 20);
    add_record(bodies[1], &node, 1, 21);
    add_record(g, &cond, 1, 99);
    x = instantiate(g);
    for (int i = 0; i < launches; i++) {
        run("if-else", x, s, 0, 0);
        run("if-else", x, s, 1, 0);
    }
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));

    // While with a default of 1 applied at each launch: a do-while loop
    // counting *counter down (once when it starts at 0).
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
    CHECK(add_cond(&cond, g, NULL, h, cudaGraphCondTypeWhile, 1, &bodies));
    node = add_record(bodies[0], NULL, 0, 5);
    add_count_down(bodies[0], &node, h);
    x = instantiate(g);
    for (int i = 0; i < launches; i++) {
        run("do-while", x, s, 0, 3 + i);
        run("do-while", x, s, 0, 0);
    }
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));

    // While set by a kernel first, with an If/else nested in its body (its
    // own handle, made on the body graph that holds it, set from the
    // counter): its if body runs on each round the count-down leaves the
    // counter non-zero, its else body on the last.
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphConditionalHandleCreate(&h, g));
    set = add_set(g, h);
    CHECK(add_cond(&cond, g, &set, h, cudaGraphCondTypeWhile, 1, &bodies));
    CHECK(cudaGraphConditionalHandleCreate(&h2, bodies[0]));
    node = add_count_down(bodies[0], NULL, h);
    {
        void *args[] = { &d_counter, &h2 };
        node = add_kernel(bodies[0], &node, 1, (void *)cond_set, args);
    }
    CHECK(add_cond(&node, bodies[0], &node, h2, cudaGraphCondTypeIf, 2, &inner));
    add_record(inner[0], NULL, 0, 7);
    add_record(inner[1], NULL, 0, 8);
    x = instantiate(g);
    for (int i = 0; i < launches; i++) {
        run("while-if", x, s, 0, 2);
        run("while-if", x, s, 1, 3);
    }
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));

    // Switch over four bodies; 4 and more run none.
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphConditionalHandleCreate(&h, g));
    set = add_set(g, h);
    CHECK(add_cond(&cond, g, &set, h, cudaGraphCondTypeSwitch, 4, &bodies));
    for (int i = 0; i < 4; i++)
        add_record(bodies[i], NULL, 0, 30 + i);
    x = instantiate(g);
    for (int v = 0; v <= 5; v++)
        run("switch", x, s, v, 0);
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));

    // A While body captured into (cudaStreamBeginCaptureToGraph).
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
    CHECK(add_cond(&cond, g, NULL, h, cudaGraphCondTypeWhile, 1, &bodies));
    CHECK(cudaStreamBeginCaptureToGraph(cs, bodies[0], NULL, NULL, 0, cudaStreamCaptureModeGlobal));
    cond_record<<<1, 1, 0, cs>>>(d_log, 40);
    cond_count_down<<<1, 1, 0, cs>>>(d_counter, h);
    cond_record<<<1, 1, 0, cs>>>(d_log, 41);
    CHECK(cudaStreamEndCapture(cs, NULL));
    x = instantiate(g);
    for (int i = 0; i < launches; i++)
        run("captured-while", x, s, 0, 2 + i);
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));

    // A capture that names its own graph (cudaStreamGetCaptureInfo): a
    // handle made on it, a While node added after the captured kernel, the
    // capture going on after the node (cudaStreamUpdateCaptureDependencies).
    {
        cudaStreamCaptureStatus status;
        const cudaGraphNode_t *deps;
        size_t ndeps;
        cudaGraph_t cg, captured;
        cudaGraphNodeType type;

        CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
        CHECK(cudaStreamGetCaptureInfo(cs, &status, NULL, &cg, &deps, NULL, &ndeps));
        printf("capture info before any work: status %d, dependencies %zu\n", (int)status, ndeps);
        CHECK(cudaGraphConditionalHandleCreate(&h, cg));
        cond_set<<<1, 1, 0, cs>>>(d_flag, h);
        CHECK(cudaStreamGetCaptureInfo(cs, &status, NULL, &cg, &deps, NULL, &ndeps));
        CHECK(cudaGraphNodeGetType(deps[0], &type));
        printf("capture info after a kernel: dependencies %zu, type %d\n", ndeps, (int)type);
        CHECK(add_cond(&cond, cg, deps, h, cudaGraphCondTypeWhile, 1, &bodies));
        CHECK(cudaStreamUpdateCaptureDependencies(cs, &cond, NULL, 1, cudaStreamSetCaptureDependencies));
        cond_record<<<1, 1, 0, cs>>>(d_log, 60);
        CHECK(cudaStreamEndCapture(cs, &captured));
        printf("the capture ended into the graph it named: %s\n", captured == cg ? "yes" : "no");
        CHECK(cudaStreamBeginCaptureToGraph(cs, bodies[0], NULL, NULL, 0, cudaStreamCaptureModeGlobal));
        cond_record<<<1, 1, 0, cs>>>(d_log, 50);
        cond_count_down<<<1, 1, 0, cs>>>(d_counter, h);
        CHECK(cudaStreamEndCapture(cs, NULL));
        x = instantiate(captured);
        for (int i = 0; i < launches; i++) {
            run("captured-graph-while", x, s, 1, 3 + i);
            run("captured-graph-while", x, s, 0, 2);
        }
        CHECK(cudaGraphExecDestroy(x));
        g = captured;
    }

    // Bad parameters: body counts the type does not allow, another graph's handle.
    CHECK(cudaGraphCreate(&g2, 0));
    CHECK(cudaGraphConditionalHandleCreate(&other, g2));
    printf("while of 2 bodies: %s\n", cudaGetErrorName(add_cond(&node, g, NULL, h, cudaGraphCondTypeWhile, 2, NULL)));
    printf("if of 3 bodies: %s\n", cudaGetErrorName(add_cond(&node, g, NULL, h, cudaGraphCondTypeIf, 3, NULL)));
    printf("switch of 0 bodies: %s\n", cudaGetErrorName(add_cond(&node, g, NULL, h, cudaGraphCondTypeSwitch, 0, NULL)));
    printf("another graph's handle: %s\n",
           cudaGetErrorName(add_cond(&node, g, NULL, other, cudaGraphCondTypeIf, 1, NULL)));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphDestroy(g));

    CHECK(cudaFree(d_log));
    CHECK(cudaFree(d_flag));
    CHECK(cudaFree(d_counter));
    CHECK(cudaStreamDestroy(cs));
    CHECK(cudaStreamDestroy(s));
    printf("graph_conditional: done\n");
    return 0;
}
