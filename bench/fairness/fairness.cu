// Fair share (docs/security.md, "Fair share"): a victim's synchronous calls while another
// process floods one-way launches.  bench/fairness.sh runs it natively (two processes on the
// GPU) and through Tandem (two sessions of one server), alone and under each flood.
//
//   fairness victim [--iters N] [--label TEXT]
//       N times each (default 2000, after 100 warm-up): a tiny kernel + cudaStreamSynchronize
//       ("launch_sync"), and a 4 KiB cudaMemcpy device-to-host ("d2h_4k"); one JSON line per
//       measurement with p50, p99 and max in microseconds, and a checksum of what came back.
//   fairness attacker tiny|long [--seconds S] [--spin-us U]
//       launches fair_tiny (or fair_spin of U microseconds, default 1000) on its own stream,
//       never synchronizing, for S seconds (default 10), then exits: the launch queue is full
//       for as long as the driver (natively) or the server (Tandem) lets it be.
//
// The kernels' sim twins are server/sim_kernels/bench_fairness.c.
#include <cstdint>
#include <cstring>
#include <vector>

#include "bench.h"

const char *bench_prog = "fairness";

__global__ void fair_tiny() {}

__global__ void fair_spin(unsigned us)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < 1000ull * us);
}

static void report(const char *id, const char *what, const char *label, std::vector<double> &us, uint64_t sum)
{
    bench_stats s = bench_summarize(us.data(), us.size());

    printf("{\"bench\":\"fairness\",\"id\":\"%s\",\"what\":\"%s\",\"label\":\"%s\",\"unit\":\"us\","
           "\"better\":\"lower\",\"value\":%.3f,\"median_us\":%.3f,\"p99_us\":%.3f,\"max_us\":%.3f,"
           "\"n\":%zu,\"checksum\":\"%016llx\"}\n",
           id, what, label, s.p99, s.median, s.p99, s.max, s.n, (unsigned long long)sum);
    fflush(stdout);
}

static int victim(int iters, const char *label)
{
    const size_t bytes = 4096;
    std::vector<uint32_t> host(bytes / 4), back(bytes / 4);
    std::vector<double> launch_us, copy_us;
    cudaStream_t s;
    uint32_t *dev;
    uint64_t sum = BENCH_FNV_OFFSET;

    for (size_t i = 0; i < host.size(); i++)
        host[i] = (uint32_t)(i * 2654435761u);
    BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    BENCH_CHECK(cudaMalloc(&dev, bytes));
    BENCH_CHECK(cudaMemcpy(dev, host.data(), bytes, cudaMemcpyHostToDevice));
    for (int i = -100; i < iters; i++) {   // the first 100 warm up
        double t0 = bench_now_us();
        fair_tiny<<<1, 1, 0, s>>>();
        BENCH_CHECK(cudaGetLastError());
        BENCH_CHECK(cudaStreamSynchronize(s));
        double t1 = bench_now_us();
        BENCH_CHECK(cudaMemcpy(back.data(), dev, bytes, cudaMemcpyDeviceToHost));
        double t2 = bench_now_us();
        if (memcmp(back.data(), host.data(), bytes) != 0) {
            fprintf(stderr, "fairness: the victim read back other bytes than it wrote (iteration %d)\n", i);
            return 1;
        }
        if (i < 0)
            continue;
        launch_us.push_back(t1 - t0);
        copy_us.push_back(t2 - t1);
        sum = bench_fnv_u32(sum, back.data(), 1);
    }
    report("launch_sync", "tiny kernel + cudaStreamSynchronize", label, launch_us, sum);
    report("d2h_4k", "cudaMemcpy 4 KiB device to host", label, copy_us, sum);
    BENCH_CHECK(cudaFree(dev));
    BENCH_CHECK(cudaStreamDestroy(s));
    return 0;
}

static int attacker(bool long_kernels, double seconds, unsigned spin_us)
{
    cudaStream_t s;
    long launches = 0;

    BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    fair_tiny<<<1, 1, 0, s>>>();   // loads the module before the flood starts
    BENCH_CHECK(cudaStreamSynchronize(s));
    fprintf(stderr, "fairness: attacker flooding\n");
    double end = bench_now_us() + seconds * 1e6;
    while (bench_now_us() < end) {
        for (int i = 0; i < 64; i++) {
            if (long_kernels)
                fair_spin<<<1, 1, 0, s>>>(spin_us);
            else
                fair_tiny<<<1, 1, 0, s>>>();
        }
        launches += 64;
        BENCH_CHECK(cudaGetLastError());
    }
    fprintf(stderr, "fairness: attacker issued %ld launches in %.1f s\n", launches, seconds);
    return 0;   // exits without waiting: the process's end drops what is queued
}

int main(int argc, char **argv)
{
    int iters = 2000;
    double seconds = 10;
    unsigned spin_us = 1000;
    const char *label = "";

    if (argc < 2)
        goto usage;
    for (int i = 2 + (strcmp(argv[1], "attacker") == 0); i < argc; i += 2) {
        if (i + 1 >= argc)
            goto usage;
        if (!strcmp(argv[i], "--iters"))
            iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--spin-us"))
            spin_us = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--label"))
            label = argv[i + 1];
        else
            goto usage;
    }
    if (!strcmp(argv[1], "victim") && iters > 0)
        return victim(iters, label);
    if (!strcmp(argv[1], "attacker") && argc > 2 && (!strcmp(argv[2], "tiny") || !strcmp(argv[2], "long")) &&
        seconds > 0)
        return attacker(!strcmp(argv[2], "long"), seconds, spin_us);
usage:
    fprintf(stderr, "usage: fairness victim [--iters N] [--label TEXT]\n"
                    "       fairness attacker tiny|long [--seconds S] [--spin-us U]\n");
    return 2;
}
