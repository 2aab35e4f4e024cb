// Host callbacks (docs/runtime-api.md, "Host callbacks"): one line per fact
// on stdout, the same natively and through Tandem.
//   callbacks-check          ordering on two streams, the caller running
//                            ahead, other streams not waiting
//   callbacks-check fault    a callback's status after a failed kernel
//                            (leaves the context broken: run it last)
//   callbacks-check nested   a callback calling CUDA (Tandem refuses it with
//                            cudaErrorNotPermitted; natively the driver may
//                            answer otherwise: not for the comparison)
//   callbacks-check hang     a callback that does not return for 60 s, and a
//                            synchronize behind it (a test kills it: its
//                            server must release the stream; CI only)
//   callbacks-check exit     a callback that exits the program with status 3,
//                            as a failed check in a callback does (CI only)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>

#include "spin_ms.cuh"

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            fprintf(stderr, "callbacks_check: %s failed at %s:%d: %s (%s)\n", #call,     \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

__global__ void cb_stamp(unsigned int *out, unsigned int value)
{
    *out = value;
}

__global__ void cb_spin(unsigned int ms)
{
    spin_ms(ms);
}

// Spins, then writes where no memory is: an illegal address.
__global__ void cb_fault(unsigned int *p, unsigned int ms)
{
    spin_ms(ms);
    *p = 1;
}

enum { ROUNDS = 4 };

struct stream_log {
    volatile unsigned int *slot;   // pinned: where the copy before each callback put its stamp
    unsigned int seen[ROUNDS + 1];
    int count;
    cudaError_t status;
};

static void CUDART_CB record(void *p)
{
    stream_log *l = (stream_log *)p;
    if (l->count < ROUNDS + 1)
        l->seen[l->count] = *l->slot;
    l->count++;
}

static void CUDART_CB record_status(cudaStream_t, cudaError_t status, void *p)
{
    stream_log *l = (stream_log *)p;
    l->status = status;
    record(p);
}

// Two streams, each: a kernel stamps a number, a copy brings it to pinned
// memory, a host function records what it reads there.  Each function must
// see the stamp of the kernel just before it, in order.
static void ordering(void)
{
    cudaStream_t s[2];
    unsigned int *pinned, *d;
    stream_log log[2];

    CHECK(cudaMallocHost(&pinned, 2 * sizeof(unsigned int)));
    CHECK(cudaMalloc(&d, 2 * sizeof(unsigned int)));
    memset(log, 0, sizeof(log));
    for (int i = 0; i < 2; i++) {
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        pinned[i] = 0;
        log[i].slot = &pinned[i];
    }
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < 2; i++) {
            cb_stamp<<<1, 1, 0, s[i]>>>(d + i, 100u * (unsigned int)i + (unsigned int)r + 1u);
            CHECK(cudaGetLastError());
            CHECK(cudaMemcpyAsync(&pinned[i], d + i, sizeof(unsigned int), cudaMemcpyDeviceToHost, s[i]));
            if (r == ROUNDS - 1 && i == 1)
                CHECK(cudaStreamAddCallback(s[i], record_status, &log[i], 0));
            else
                CHECK(cudaLaunchHostFunc(s[i], record, &log[i]));
        }
    }
    // Once more on stream 0, after a copy that a host function fed.
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < 2; i++) {
        printf("stream %d saw:", i);
        for (int k = 0; k < log[i].count && k < ROUNDS + 1; k++)
            printf(" %u", log[i].seen[k]);
        printf(" (%d calls)\n", log[i].count);
    }
    printf("stream callback status: %s\n", cudaGetErrorName(log[1].status));
    for (int i = 0; i < 2; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(pinned));
}

static void CUDART_CB set_flag(void *p)
{
    *(volatile int *)p = 1;
}

// The call returns at once, long before its stream gets to the function;
// another stream's later work finishes before it.
static void running_ahead(void)
{
    cudaStream_t a, b;
    cudaEvent_t after_cb, other_done;
    volatile int flag = 0;
    unsigned int *d;
    float ms = 0;

    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&after_cb));
    CHECK(cudaEventCreate(&other_done));
    CHECK(cudaMalloc(&d, sizeof(unsigned int)));
    cb_spin<<<1, 1, 0, a>>>(400);
    CHECK(cudaGetLastError());
    CHECK(cudaLaunchHostFunc(a, set_flag, (void *)&flag));
    printf("call returned before its function ran: %s\n", flag == 0 ? "yes" : "no");
    CHECK(cudaEventRecord(after_cb, a));
    cb_stamp<<<1, 1, 0, b>>>(d, 7u);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(other_done, b));
    CHECK(cudaStreamSynchronize(a));
    printf("function ran by the stream's synchronize: %s\n", flag == 1 ? "yes" : "no");
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventElapsedTime(&ms, other_done, after_cb));
    printf("other stream's later work finished first: %s\n", ms > 100.0f ? "yes" : "no");
    CHECK(cudaEventDestroy(after_cb));
    CHECK(cudaEventDestroy(other_done));
    CHECK(cudaStreamDestroy(a));
    CHECK(cudaStreamDestroy(b));
    CHECK(cudaFree(d));
}

static void CUDART_CB bad_stream_cb(cudaStream_t, cudaError_t, void *) {}

static void bad_input(void)
{
    cudaStream_t s;

    CHECK(cudaStreamCreate(&s));
    printf("NULL function: %s\n", cudaGetErrorName(cudaLaunchHostFunc(s, NULL, NULL)));
    printf("NULL callback: %s\n", cudaGetErrorName(cudaStreamAddCallback(s, NULL, NULL, 0)));
    printf("flags 1: %s\n", cudaGetErrorName(cudaStreamAddCallback(s, bad_stream_cb, NULL, 1)));
    cudaGetLastError();
    CHECK(cudaStreamDestroy(s));
}

static void fault(void)
{
    cudaStream_t s;
    stream_log l;
    unsigned int zero = 0;

    memset(&l, 0, sizeof(l));
    l.slot = &zero;
    l.status = cudaSuccess;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cb_fault<<<1, 1, 0, s>>>((unsigned int *)16, 300);
    printf("launch: %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("add callback: %s\n", cudaGetErrorName(cudaStreamAddCallback(s, record_status, &l, 0)));
    printf("synchronize: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    printf("callback calls: %d\n", l.count);
    printf("callback status: %s\n", cudaGetErrorName(l.status));
}

static cudaError_t nested_result = cudaSuccess;

static void CUDART_CB call_cuda(void *)
{
    void *p = NULL;
    nested_result = cudaMalloc(&p, 16);
}

static void nested(void)
{
    cudaStream_t s;

    CHECK(cudaStreamCreate(&s));
    CHECK(cudaLaunchHostFunc(s, call_cuda, NULL));
    CHECK(cudaStreamSynchronize(s));
    printf("cudaMalloc in a host function: %s\n", cudaGetErrorName(nested_result));
    CHECK(cudaStreamDestroy(s));
}

static void CUDART_CB sleep_long(void *)
{
    struct timespec t = { 60, 0 };
    nanosleep(&t, NULL);
}

static void hang(void)
{
    cudaStream_t s;

    CHECK(cudaStreamCreate(&s));
    cb_spin<<<1, 1, 0, s>>>(10);
    CHECK(cudaLaunchHostFunc(s, sleep_long, NULL));
    printf("waiting\n");
    fflush(stdout);
    CHECK(cudaStreamSynchronize(s));
}

static void CUDART_CB exit_3(void *)
{
    exit(3);
}

static void exit_from_callback(void)
{
    cudaStream_t s;

    CHECK(cudaStreamCreate(&s));
    CHECK(cudaLaunchHostFunc(s, exit_3, NULL));
    CHECK(cudaStreamSynchronize(s));
    printf("not reached\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exit") == 0) {
        exit_from_callback();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "hang") == 0) {
        hang();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "fault") == 0) {
        fault();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "nested") == 0) {
        nested();
        return 0;
    }
    ordering();
    running_ahead();
    bad_input();
    return 0;
}
