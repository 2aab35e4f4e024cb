/* Object churn: a cudaStreamCreate + cudaStreamDestroy pair, and a
 * cudaEventCreate + cudaEventDestroy pair, timed as one sample each.
 * Through Tandem both halves are synchronous calls (the handle comes from
 * the server). */
#include <stdlib.h>

#include "bench.h"
#include "micro.h"

static double *samples(const micro_opts *o)
{
    double *t = malloc(sizeof(*t) * (size_t)o->reps);

    if (!t) {
        fprintf(stderr, "micro: out of memory\n");
        exit(1);
    }
    return t;
}

static void stream_pairs(const micro_opts *o)
{
    double *t = samples(o);
    cudaStream_t s;

    for (int i = 0; i < o->warmup + o->reps; i++) {
        double t0 = bench_now_us();
        BENCH_CHECK(cudaStreamCreate(&s));
        BENCH_CHECK(cudaStreamDestroy(s));
        if (i >= o->warmup)
            t[i - o->warmup] = bench_now_us() - t0;
    }
    micro_print_latency("create.stream", "cudaStreamCreate + cudaStreamDestroy", t, (size_t)o->reps);
    free(t);
}

static void event_pairs(const micro_opts *o)
{
    double *t = samples(o);
    cudaEvent_t e;

    for (int i = 0; i < o->warmup + o->reps; i++) {
        double t0 = bench_now_us();
        BENCH_CHECK(cudaEventCreate(&e));
        BENCH_CHECK(cudaEventDestroy(e));
        if (i >= o->warmup)
            t[i - o->warmup] = bench_now_us() - t0;
    }
    micro_print_latency("create.event", "cudaEventCreate + cudaEventDestroy", t, (size_t)o->reps);
    free(t);
}

int micro_create_destroy(const micro_opts *o)
{
    stream_pairs(o);
    event_pairs(o);
    return 0;
}
