// Event record and wait nodes, user objects (docs/graphs.md "Event nodes,
// child graphs and user objects"): a graph on one stream records an event
// after a slow kernel, a graph on another stream waits for it before
// reading the kernel's result (without the wait it would read 0); the
// nodes' events are read back and changed, in the graph and in executable
// graphs; user object destructors run once the last reference goes (the
// program's, a graph's, an executable graph's); external event records and
// waits captured as event nodes; child graph nodes (a clone of the child,
// the embedded graph read and changed, an exec's child node set); bad input.  Prints the
// same natively and through Tandem.
// Usage: graph_events [rounds]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <thread>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            fprintf(stderr, "graph_events: %s failed at %s:%d: %s (%s)\n", #call,          \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

// Runs about ms milliseconds, then *p = v.
__global__ void ge_slow_store(unsigned *p, unsigned v, unsigned ms)
{
    for (unsigned i = 0; i < ms; i++)
        __nanosleep(1000000);
    *p = v;
}

// *dst = *src * k.
__global__ void ge_scale(unsigned *dst, const unsigned *src, unsigned k)
{
    *dst = *src * k;
}

static unsigned *d_buf;

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps, void *func, void **args)
{
    cudaKernelNodeParams p = {};
    cudaGraphNode_t node;

    p.func = func;
    p.gridDim = dim3(1);
    p.blockDim = dim3(1);
    p.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&node, g, deps, ndeps, &p));
    return node;
}

// d_buf[0] and d_buf[1] after the producer's exec on s1 and the
// consumer's on s2, from zero.
static void run_pair(cudaGraphExec_t producer, cudaGraphExec_t consumer, cudaStream_t s1, cudaStream_t s2,
                     unsigned out[2])
{
    CHECK(cudaMemset(d_buf, 0, 2 * sizeof(unsigned)));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGraphLaunch(producer, s1));
    CHECK(cudaGraphLaunch(consumer, s2));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, d_buf, 2 * sizeof(unsigned), cudaMemcpyDeviceToHost));
}

static std::atomic<int> destroyed[4];

static void destroy_obj(void *p)
{
    destroyed[(int)(size_t)p]++;
}

// The destructor count of object i once it had a while to run: natively it
// runs asynchronously, on a thread of the driver.
static int settled(int i, int want)
{
    for (int t = 0; t < 5000 && destroyed[i].load() != want; t++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return destroyed[i].load();
}

static void event_nodes(int rounds)
{
    cudaStream_t s1, s2;
    cudaEvent_t ev, ev2, ev3, got;
    cudaGraph_t producer, consumer;
    cudaGraphNode_t store, rec, wait, scale;
    cudaGraphExec_t xp, xc, xp2, xc2;
    enum cudaGraphNodeType t1, t2;
    unsigned out[2], seven = 7, ms = 50, three = 3;
    size_t n = 0;

    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&ev2, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&ev3, cudaEventDisableTiming));

    // producer: slow store of 7 into d_buf[0], then record ev.
    void *store_args[] = { &d_buf, &seven, &ms };
    CHECK(cudaGraphCreate(&producer, 0));
    store = add_kernel(producer, NULL, 0, (void *)ge_slow_store, store_args);
    CHECK(cudaGraphAddEventRecordNode(&rec, producer, &store, 1, ev));
    // consumer: wait for ev, then d_buf[1] = d_buf[0] * 3.
    unsigned *d_out = d_buf + 1;
    void *scale_args[] = { &d_out, &d_buf, &three };
    CHECK(cudaGraphCreate(&consumer, 0));
    CHECK(cudaGraphAddEventWaitNode(&wait, consumer, NULL, 0, ev));
    scale = add_kernel(consumer, &wait, 1, (void *)ge_scale, scale_args);

    CHECK(cudaGraphNodeGetType(rec, &t1));
    CHECK(cudaGraphNodeGetType(wait, &t2));
    CHECK(cudaGraphGetNodes(producer, NULL, &n));
    printf("event nodes: record type %d, wait type %d, producer has %zu nodes\n", (int)t1, (int)t2, n);
    CHECK(cudaGraphEventRecordNodeGetEvent(rec, &got));
    printf("record node names its event: %s\n", got == ev ? "yes" : "no");
    CHECK(cudaGraphEventWaitNodeGetEvent(wait, &got));
    printf("wait node names its event: %s\n", got == ev ? "yes" : "no");

    CHECK(cudaGraphInstantiate(&xp, producer, 0));
    CHECK(cudaGraphInstantiate(&xc, consumer, 0));
    for (int r = 0; r < rounds; r++) {
        run_pair(xp, xc, s1, s2, out);
        printf("round %d: producer wrote %u, consumer after the wait read it: %u\n", r, out[0], out[1]);
    }

    // The executable graphs' nodes get another event: still ordered.
    CHECK(cudaGraphExecEventRecordNodeSetEvent(xp, rec, ev2));
    CHECK(cudaGraphExecEventWaitNodeSetEvent(xc, wait, ev2));
    run_pair(xp, xc, s1, s2, out);
    printf("execs set to another event: %u %u\n", out[0], out[1]);
    CHECK(cudaGraphEventRecordNodeGetEvent(rec, &got));
    printf("the graph's record node still names the first: %s\n", got == ev ? "yes" : "no");

    // The graphs' nodes get a third: new execs follow it.
    CHECK(cudaGraphEventRecordNodeSetEvent(rec, ev3));
    CHECK(cudaGraphEventWaitNodeSetEvent(wait, ev3));
    CHECK(cudaGraphEventRecordNodeGetEvent(rec, &got));
    printf("record node set: %s\n", got == ev3 ? "yes" : "no");
    CHECK(cudaGraphEventWaitNodeGetEvent(wait, &got));
    printf("wait node set: %s\n", got == ev3 ? "yes" : "no");
    CHECK(cudaGraphInstantiate(&xp2, producer, 0));
    CHECK(cudaGraphInstantiate(&xc2, consumer, 0));
    run_pair(xp2, xc2, s1, s2, out);
    printf("new execs: %u %u\n", out[0], out[1]);

    // The record completes after the slow kernel before it.
    CHECK(cudaMemset(d_buf, 0, 2 * sizeof(unsigned)));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGraphLaunch(xp2, s1));
    CHECK(cudaEventSynchronize(ev3));
    CHECK(cudaMemcpy(out, d_buf, sizeof(unsigned), cudaMemcpyDeviceToHost));
    printf("after the recorded event: %u, query %s\n", out[0], cudaGetErrorName(cudaEventQuery(ev3)));

    // A clone's event nodes name the same events.
    cudaGraph_t clone;
    cudaGraphNode_t crec;
    CHECK(cudaGraphClone(&clone, producer));
    CHECK(cudaGraphNodeFindInClone(&crec, rec, clone));
    CHECK(cudaGraphEventRecordNodeGetEvent(crec, &got));
    printf("clone's record node names the same event: %s\n", got == ev3 ? "yes" : "no");
    CHECK(cudaGraphDestroy(clone));

    // Bad input, refused as the driver refuses it.
    printf("record event of a wait node: %s\n", cudaGetErrorName(cudaGraphEventRecordNodeGetEvent(wait, &got)));
    printf("wait event of a kernel node: %s\n", cudaGetErrorName(cudaGraphEventWaitNodeGetEvent(scale, &got)));
    printf("set record event of a kernel node: %s\n", cudaGetErrorName(cudaGraphEventRecordNodeSetEvent(store, ev)));
    printf("exec set of another graph's node: %s\n",
           cudaGetErrorName(cudaGraphExecEventRecordNodeSetEvent(xc, rec, ev)));
    cudaGetLastError();

    CHECK(cudaGraphExecDestroy(xp));
    CHECK(cudaGraphExecDestroy(xc));
    CHECK(cudaGraphExecDestroy(xp2));
    CHECK(cudaGraphExecDestroy(xc2));
    CHECK(cudaGraphDestroy(producer));
    CHECK(cudaGraphDestroy(consumer));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaEventDestroy(ev2));
    CHECK(cudaEventDestroy(ev3));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
}

// The node of type t among g's nodes (the first).
static cudaGraphNode_t node_of_type(cudaGraph_t g, enum cudaGraphNodeType t)
{
    cudaGraphNode_t nodes[8];
    size_t n = 8;

    CHECK(cudaGraphGetNodes(g, nodes, &n));
    for (size_t i = 0; i < n; i++) {
        enum cudaGraphNodeType nt;
        CHECK(cudaGraphNodeGetType(nodes[i], &nt));
        if (nt == t)
            return nodes[i];
    }
    return NULL;
}

// Captured external records and waits become event nodes.
static void captured_event_nodes(void)
{
    cudaStream_t s1, s2;
    cudaEvent_t ev, got;
    cudaGraph_t producer, consumer;
    cudaGraphExec_t xp, xc;
    cudaGraphNode_t rec, wait;
    unsigned out[2];
    size_t np = 0, nc = 0;

    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    ge_slow_store<<<1, 1, 0, s1>>>(d_buf, 7, 50);
    CHECK(cudaEventRecordWithFlags(ev, s1, cudaEventRecordExternal));
    CHECK(cudaStreamEndCapture(s1, &producer));
    CHECK(cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal));
    CHECK(cudaStreamWaitEvent(s2, ev, cudaEventWaitExternal));
    ge_scale<<<1, 1, 0, s2>>>(d_buf + 1, d_buf, 3);
    CHECK(cudaStreamEndCapture(s2, &consumer));
    CHECK(cudaGraphGetNodes(producer, NULL, &np));
    CHECK(cudaGraphGetNodes(consumer, NULL, &nc));
    rec = node_of_type(producer, cudaGraphNodeTypeEventRecord);
    wait = node_of_type(consumer, cudaGraphNodeTypeWaitEvent);
    printf("captured: producer %zu nodes, consumer %zu nodes, record node %s, wait node %s\n", np, nc,
           rec ? "found" : "missing", wait ? "found" : "missing");
    if (rec && wait) {
        CHECK(cudaGraphEventRecordNodeGetEvent(rec, &got));
        printf("captured record node names its event: %s\n", got == ev ? "yes" : "no");
        CHECK(cudaGraphEventWaitNodeGetEvent(wait, &got));
        printf("captured wait node names its event: %s\n", got == ev ? "yes" : "no");
    }
    CHECK(cudaGraphInstantiate(&xp, producer, 0));
    CHECK(cudaGraphInstantiate(&xc, consumer, 0));
    run_pair(xp, xc, s1, s2, out);
    printf("captured graphs: %u %u\n", out[0], out[1]);
    printf("wait with unknown flags: %s\n", cudaGetErrorName(cudaStreamWaitEvent(s2, ev, 0x10)));
    cudaGetLastError();
    CHECK(cudaGraphExecDestroy(xp));
    CHECK(cudaGraphExecDestroy(xc));
    CHECK(cudaGraphDestroy(producer));
    CHECK(cudaGraphDestroy(consumer));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
}

// A child graph node embeds a clone of its child graph.
static void child_graphs(void)
{
    cudaGraph_t child, child2, parent, embedded, again, clone, cembedded, withmem;
    cudaGraphNode_t store, cnode, knode, ccnode, enodes[4], bad;
    cudaGraphExec_t x, x2;
    enum cudaGraphNodeType t;
    unsigned out[3], seven = 7, ms = 20, three = 3, four = 4, five = 5, two = 2;
    unsigned *a1 = d_buf + 1, *a2 = d_buf + 2;
    size_t n = 0;

    // child: d_buf[1] = d_buf[0] * 3; parent: store 7 into d_buf[0], then the child.
    void *scale_args[] = { &a1, &d_buf, &three };
    CHECK(cudaGraphCreate(&child, 0));
    knode = add_kernel(child, NULL, 0, (void *)ge_scale, scale_args);
    void *store_args[] = { &d_buf, &seven, &ms };
    CHECK(cudaGraphCreate(&parent, 0));
    store = add_kernel(parent, NULL, 0, (void *)ge_slow_store, store_args);
    CHECK(cudaGraphAddChildGraphNode(&cnode, parent, &store, 1, child));
    // The node has its own copy: the child changed or gone later does not matter.
    cudaKernelNodeParams kp = {};
    void *five_args[] = { &a1, &d_buf, &five };
    kp.func = (void *)ge_scale;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(1);
    kp.kernelParams = five_args;
    CHECK(cudaGraphKernelNodeSetParams(knode, &kp));
    CHECK(cudaGraphDestroy(child));
    CHECK(cudaGraphNodeGetType(cnode, &t));
    CHECK(cudaGraphChildGraphNodeGetGraph(cnode, &embedded));
    CHECK(cudaGraphChildGraphNodeGetGraph(cnode, &again));
    CHECK(cudaGraphGetNodes(embedded, NULL, &n));
    printf("child node type %d, embedded graph has %zu nodes, asked twice the same: %s\n", (int)t, n,
           embedded == again ? "yes" : "no");

    CHECK(cudaGraphInstantiate(&x, parent, 0));
    CHECK(cudaMemset(d_buf, 0, 3 * sizeof(unsigned)));
    CHECK(cudaGraphLaunch(x, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, d_buf, 3 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    printf("parent with child (the child changed after): %u %u %u\n", out[0], out[1], out[2]);

    // The exec's child node runs another graph of the same shape.
    void *four_args[] = { &a1, &d_buf, &four };
    CHECK(cudaGraphCreate(&child2, 0));
    add_kernel(child2, NULL, 0, (void *)ge_scale, four_args);
    CHECK(cudaGraphExecChildGraphNodeSetParams(x, cnode, child2));
    CHECK(cudaMemset(d_buf, 0, 3 * sizeof(unsigned)));
    CHECK(cudaGraphLaunch(x, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, d_buf, 3 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    printf("exec's child node set to another graph: %u %u %u\n", out[0], out[1], out[2]);

    // A node added to the embedded graph: new execs run it, the old one not.
    n = 4;
    CHECK(cudaGraphGetNodes(embedded, enodes, &n));
    void *two_args[] = { &a2, &a1, &two };
    add_kernel(embedded, enodes, 1, (void *)ge_scale, two_args);
    CHECK(cudaGraphInstantiate(&x2, parent, 0));
    CHECK(cudaMemset(d_buf, 0, 3 * sizeof(unsigned)));
    CHECK(cudaGraphLaunch(x2, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, d_buf, 3 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    printf("node added to the embedded graph, new exec: %u %u %u\n", out[0], out[1], out[2]);
    CHECK(cudaMemset(d_buf, 0, 3 * sizeof(unsigned)));
    CHECK(cudaGraphLaunch(x, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, d_buf, 3 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    printf("the exec made before: %u %u %u\n", out[0], out[1], out[2]);

    // A clone of the parent has its own embedded graph.
    CHECK(cudaGraphClone(&clone, parent));
    CHECK(cudaGraphNodeFindInClone(&ccnode, cnode, clone));
    CHECK(cudaGraphChildGraphNodeGetGraph(ccnode, &cembedded));
    CHECK(cudaGraphGetNodes(cembedded, NULL, &n));
    printf("clone's embedded graph is its own: %s, %zu nodes\n", cembedded != embedded ? "yes" : "no", n);

    // Bad input.
    printf("embedded graph of a kernel node: %s\n",
           cudaGetErrorName(cudaGraphChildGraphNodeGetGraph(store, &again)));
    cudaMemAllocNodeParams mp = {};
    cudaGraphNode_t mnode;
    mp.poolProps.allocType = cudaMemAllocationTypePinned;
    mp.poolProps.location.type = cudaMemLocationTypeDevice;
    mp.poolProps.location.id = 0;
    mp.bytesize = 1 << 20;
    CHECK(cudaGraphCreate(&withmem, 0));
    CHECK(cudaGraphAddMemAllocNode(&mnode, withmem, NULL, 0, &mp));
    CHECK(cudaGraphAddMemFreeNode(&bad, withmem, &mnode, 1, mp.dptr));
    printf("child graph with memory nodes: %s\n",
           cudaGetErrorName(cudaGraphAddChildGraphNode(&bad, parent, NULL, 0, withmem)));
    cudaGetLastError();

    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphExecDestroy(x2));
    CHECK(cudaGraphDestroy(clone));
    CHECK(cudaGraphDestroy(withmem));
    CHECK(cudaGraphDestroy(child2));
    CHECK(cudaGraphDestroy(parent));
}

static void user_objects(void)
{
    cudaUserObject_t o0, o1, o2, bad;
    cudaGraph_t g, clone, moved;
    cudaGraphExec_t x;
    cudaStream_t s;
    unsigned seven = 7, ms = 20;

    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    // o0: the program's reference and two of a graph's; the exec made from
    // the graph holds them too, and outlives the graph.
    CHECK(cudaUserObjectCreate(&o0, (void *)0, destroy_obj, 1, cudaUserObjectNoDestructorSync));
    CHECK(cudaGraphCreate(&g, 0));
    void *store_args[] = { &d_buf, &seven, &ms };
    add_kernel(g, NULL, 0, (void *)ge_slow_store, store_args);
    CHECK(cudaGraphRetainUserObject(g, o0, 2, 0));
    CHECK(cudaUserObjectRelease(o0, 1));
    CHECK(cudaGraphReleaseUserObject(g, o0, 1));
    printf("user object held by a graph: destroyed %d\n", settled(0, 0));
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphDestroy(g));
    printf("graph destroyed, its exec holds it: destroyed %d\n", settled(0, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaStreamSynchronize(s));
    printf("exec destroyed after its launches: destroyed %d\n", settled(0, 1));

    // o1: retained by a graph, which is cloned: the clone holds it too.
    CHECK(cudaUserObjectCreate(&o1, (void *)1, destroy_obj, 1, cudaUserObjectNoDestructorSync));
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphRetainUserObject(g, o1, 1, 0));
    CHECK(cudaUserObjectRelease(o1, 1));
    CHECK(cudaGraphClone(&clone, g));
    CHECK(cudaGraphDestroy(g));
    printf("clone holds it: destroyed %d\n", settled(1, 0));
    CHECK(cudaGraphDestroy(clone));
    printf("clone destroyed: destroyed %d\n", settled(1, 1));

    // o2: the program's references moved to a graph, and one more kept.
    CHECK(cudaUserObjectCreate(&o2, (void *)2, destroy_obj, 2, cudaUserObjectNoDestructorSync));
    CHECK(cudaUserObjectRetain(o2, 1));
    CHECK(cudaGraphCreate(&moved, 0));
    CHECK(cudaGraphRetainUserObject(moved, o2, 2, cudaGraphUserObjectMove));
    CHECK(cudaGraphDestroy(moved));
    printf("moved references gone with the graph: destroyed %d\n", settled(2, 0));
    CHECK(cudaUserObjectRelease(o2, 1));
    printf("last reference released: destroyed %d\n", settled(2, 1));

    // Bad input.
    printf("create without cudaUserObjectNoDestructorSync: %s\n",
           cudaGetErrorName(cudaUserObjectCreate(&bad, (void *)3, destroy_obj, 1, 0)));
    printf("create with no reference: %s\n",
           cudaGetErrorName(cudaUserObjectCreate(&bad, (void *)3, destroy_obj, 0, cudaUserObjectNoDestructorSync)));
    printf("create without destructor: %s\n",
           cudaGetErrorName(cudaUserObjectCreate(&bad, (void *)3, NULL, 1, cudaUserObjectNoDestructorSync)));
    cudaGetLastError();
    printf("destructor counts: %d %d %d %d\n", destroyed[0].load(), destroyed[1].load(), destroyed[2].load(),
           destroyed[3].load());
    CHECK(cudaStreamDestroy(s));
}

static void external_semaphores(void)
{
    cudaGraph_t g;
    cudaGraphNode_t node;
    cudaExternalSemaphore_t sem = NULL;
    cudaExternalSemaphoreSignalParams sp = {};
    cudaExternalSemaphoreSignalNodeParams p = {};

    // No semaphore can be imported into this program's graphs here: none
    // was imported, so the node names no semaphore.
    p.extSemArray = &sem;
    p.paramsArray = &sp;
    p.numExtSems = 1;
    CHECK(cudaGraphCreate(&g, 0));
    printf("signal node without an imported semaphore: %s\n",
           cudaGetErrorName(cudaGraphAddExternalSemaphoresSignalNode(&node, g, NULL, 0, &p)));
    cudaGetLastError();
    CHECK(cudaGraphDestroy(g));
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 2;

    CHECK(cudaMalloc(&d_buf, 3 * sizeof(unsigned)));
    event_nodes(rounds);
    captured_event_nodes();
    child_graphs();
    user_objects();
    external_semaphores();
    CHECK(cudaFree(d_buf));
    printf("PASSED\n");
    return 0;
}
