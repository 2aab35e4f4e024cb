/* Synchronous null calls: calls that do no work but must be answered by
 * whoever owns the device, so through Tandem each is one full round trip to
 * the server (guest-lib/api_stream_event.c and api_device.c send them as
 * synchronous calls; nothing is answered from a cache in the guest).
 *
 *   null.cudaStreamQuery        on an idle stream of our own: the null call
 *                               the targets name (docs/benchmarks.md)
 *   null.cudaEventQuery         on an event that has completed
 *   null.cudaDeviceSynchronize  with nothing in flight */
#include <stdlib.h>

#include "bench.h"
#include "micro.h"

typedef cudaError_t (*null_fn)(void *arg);

static cudaError_t stream_query(void *arg)
{
    return cudaStreamQuery(*(cudaStream_t *)arg);
}

static cudaError_t event_query(void *arg)
{
    return cudaEventQuery(*(cudaEvent_t *)arg);
}

static cudaError_t device_sync(void *arg)
{
    (void)arg;
    return cudaDeviceSynchronize();
}

static void measure(const micro_opts *o, const char *id, const char *what, null_fn fn, void *arg)
{
    double *t = malloc(sizeof(*t) * (size_t)o->reps);

    if (!t) {
        fprintf(stderr, "micro: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < o->warmup; i++)
        BENCH_CHECK(fn(arg));
    for (int i = 0; i < o->reps; i++) {
        double t0 = bench_now_us();
        cudaError_t err = fn(arg);
        t[i] = bench_now_us() - t0;
        BENCH_CHECK(err);   /* an idle stream and a completed event answer cudaSuccess */
    }
    micro_print_latency(id, what, t, (size_t)o->reps);
    free(t);
}

int micro_null_calls(const micro_opts *o)
{
    cudaStream_t s;
    cudaEvent_t e;

    BENCH_CHECK(cudaStreamCreate(&s));
    BENCH_CHECK(cudaEventCreate(&e));
    BENCH_CHECK(cudaEventRecord(e, s));
    BENCH_CHECK(cudaStreamSynchronize(s));
    measure(o, "null.cudaStreamQuery", "cudaStreamQuery, idle stream", stream_query, &s);
    measure(o, "null.cudaEventQuery", "cudaEventQuery, completed event", event_query, &e);
    measure(o, "null.cudaDeviceSynchronize", "cudaDeviceSynchronize, idle device", device_sync, NULL);
    BENCH_CHECK(cudaEventDestroy(e));
    BENCH_CHECK(cudaStreamDestroy(s));
    return 0;
}
