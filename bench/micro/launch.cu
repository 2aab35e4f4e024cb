// Kernel launch cost with an empty kernel on the legacy default stream.
//
//   launch.issue    guest-side: the time to issue N launches, divided by N
//                   (median over the batches; nothing waits for the device).
//                   One more batch times each launch alone for its median
//                   and p99.
//   launch.drained  N launches and one cudaDeviceSynchronize, divided by N:
//                   what a launch costs once the device has run it.
//
// Through Tandem a launch is a one-way call (guest-lib/launch.c).  The
// kernel's sim twin is server/sim_kernels/bench_micro.c.
#include <cstdlib>
#include <vector>

#include "bench.h"
#include "micro.h"

__global__ void bench_empty() {}

static void launch_one()
{
    bench_empty<<<1, 1>>>();
}

// One batch of n launches; microseconds per launch.
static double batch(int n)
{
    double t0 = bench_now_us();
    for (int i = 0; i < n; i++)
        launch_one();
    return (bench_now_us() - t0) / n;
}

static void print_issue(std::vector<double> &per_batch, std::vector<double> &single, int n)
{
    bench_stats b = bench_summarize(per_batch.data(), per_batch.size());
    bench_stats s = bench_summarize(single.data(), single.size());

    printf("{\"bench\":\"micro\",\"id\":\"launch.issue\",\"what\":\"empty kernel <<<1,1>>>, guest-side issue "
           "cost\",\"unit\":\"us\",\"better\":\"lower\",\"value\":%.3f,\"median_us\":%.3f,\"p99_us\":%.3f,"
           "\"batch_min_us\":%.3f,\"batch_max_us\":%.3f,\"launches\":%d,\"batches\":%zu}\n",
           b.median, s.median, s.p99, b.min, b.max, n, b.n);
}

extern "C" int micro_launches(const micro_opts *o)
{
    const int n = o->launches;
    std::vector<double> per_batch, single((size_t)n), drained;

    // Warm-up: loads the module (lazily, on the first launch) and fills the
    // paths both ways.
    batch(n < 1000 ? n : 1000);
    BENCH_CHECK(cudaGetLastError());
    BENCH_CHECK(cudaDeviceSynchronize());

    for (int b = 0; b < o->batches; b++) {
        per_batch.push_back(batch(n));
        BENCH_CHECK(cudaGetLastError());
        BENCH_CHECK(cudaDeviceSynchronize());   // not timed: the next batch starts idle
    }
    for (int i = 0; i < n; i++) {
        double t0 = bench_now_us();
        launch_one();
        single[(size_t)i] = bench_now_us() - t0;
    }
    BENCH_CHECK(cudaGetLastError());
    BENCH_CHECK(cudaDeviceSynchronize());
    print_issue(per_batch, single, n);

    for (int b = 0; b < o->batches; b++) {
        double t0 = bench_now_us();
        for (int i = 0; i < n; i++)
            launch_one();
        BENCH_CHECK(cudaDeviceSynchronize());
        drained.push_back((bench_now_us() - t0) / n);
    }
    BENCH_CHECK(cudaGetLastError());
    bench_stats d = bench_summarize(drained.data(), drained.size());
    printf("{\"bench\":\"micro\",\"id\":\"launch.drained\",\"what\":\"empty kernel <<<1,1>>>, issue + run "
           "(N launches + cudaDeviceSynchronize) / N\",\"unit\":\"us\",\"better\":\"lower\",\"value\":%.3f,"
           "\"median_us\":%.3f,\"p99_us\":%.3f,\"batch_min_us\":%.3f,\"batch_max_us\":%.3f,\"launches\":%d,"
           "\"batches\":%zu}\n",
           d.median, d.median, d.p99, d.min, d.max, n, d.n);
    return 0;
}
