// SM shares on the GPU (issue 17, docs/sm-shares.md; run by bench/shares/shares.sh,
// tests/gpu/run-control-plane-gpu.sh and bench/control-plane/timeline.sh).
// One program, several measurements, each printing JSON lines on stdout:
//
//   shares throughput [--green N] [--ms T] [--iters I]
//       a compute-bound kernel back to back for T ms: GFLOP/s and the SMs its blocks ran on
//       (%smid).  --green N: in a green context of N SMs made here (native reference); without
//       it, wherever the process's context puts it (natively the whole GPU; through Tandem the
//       session's share).
//   shares resize [--streams N] [--kernels K | --ms T [--after A]] [--iters I] [--green A --to B]
//       N streams, each used once, then short kernels on stream 0 (2 blocks per SM of the
//       device, I FMA steps: 0.28 ms at 8 SMs of an H100 with the default 4096), each waited
//       for: per kernel its latency, the SMs it ran on and the wall-clock time its wait ended,
//       so that a share changed meanwhile (tandem-server --test-share-at-work, or the control
//       socket's set_share) shows where it took effect.  K kernels, or kernels for T ms and at
//       most A more once the SMs seen changed.  Natively, --green A --to B does the resize
//       here at kernel K/2: a green context of B SMs and N new streams (timed).
//   shares lc [--n N] [--ms T] [--green N]
//       Flyt's C-App: an N x N FP32 tiled matmul (N = 4096 by default: 137 GFLOP, on the order
//       of 0.1-0.4 s on 8 SMs of an H100), each call waited for, for T ms after 2 warm-up calls;
//       prints the mean, standard deviation and percentiles of the calls.
//   shares be [--n N] [--ms T] [--green N] [--stop FILE] [--ready FILE]
//       Flyt's G-App: the same matmul until FILE exists (or T ms); touches --ready's file once
//       warmed up; prints its own latencies as the C-App does ("test":"gapp").
//   shares table6 --bes K [--n N] [--ms T] [--be-shared]
//       natively, one process: the C-App in a green context of 8 SMs, K G-App threads each in a
//       green context of 8 SMs of its own (as Tandem's --session-sms 8 gives them), or with
//       --be-shared all in one other green context of 8 SMs (Flyt's 16-SM budget)
//   shares app --phases B:S[,B:S...] [--iters I] [--tick-ms T]
//       a latency-bound application for the control plane's timeline: kernels of B blocks,
//       each waited for, for S seconds per phase; every T ms (500) a line with the kernels'
//       mean and worst latency and the SMs they ran on.
//   shares mps --sms N [--ms T]         a context with CU_EXEC_AFFINITY_TYPE_SM_COUNT N (under an
//                                       MPS daemon with per-context partitioning): its creation
//                                       time, throughput and SMs seen
//
// Every kernel's result is checked; a wrong one exits with status 1.  On the sim backend the
// kernels run as twins (server/sim_kernels/bench_shares.c, matmul.c): use small sizes there.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        cudaError_t err_ = (call);                                                                   \
        if (err_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "shares: %s failed at line %d: %s\n", #call, __LINE__, cudaGetErrorName(err_)); \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)
#define CHECK_CU(call)                                                                               \
    do {                                                                                             \
        CUresult r_ = (call);                                                                        \
        if (r_ != CUDA_SUCCESS) {                                                                    \
            fprintf(stderr, "shares: %s failed at line %d: CUresult %d\n", #call, __LINE__, (int)r_); \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

#define MAX_SMS 1024
#define FMA_ITERS 4096
#define COMPUTE_THREADS 256
#define TILE 16

// Wall-clock milliseconds: what another process (the orchestrator, the node agent, the server)
// can be compared with.
static double wall_ms()
{
    return std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
}

static double now_ms()
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

__device__ unsigned smid()
{
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

// Each thread runs `iters` steps of two dependent FMAs; out[i] gets the result, the host
// recomputes some.  Thread 0 of each block marks its SM.  The sim runs its twin
// (server/sim_kernels/bench_shares.c): name, parameters and body must stay as they are there.
__global__ void shares_compute(float *out, unsigned *sm_mask, float seed, int iters)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = seed + (float)(i % 97), b = 0.5f;
    for (int k = 0; k < iters; k++) {
        a = fmaf(a, 0.999f, b);
        b = fmaf(b, 0.998f, 0.001f);
    }
    out[i] = a + b;
    if (threadIdx.x == 0) {
        unsigned s = smid() % MAX_SMS;
        atomicOr(&sm_mask[s / 32], 1u << (s % 32));
    }
}

// Flyt's C-App and G-App: examples/matmul.cu's tiled matmul, name, global and body unchanged,
// so that the sim backend runs its twin (server/sim_kernels/matmul.c).
__device__ unsigned int matmul_positive;

__global__ void matmul_tiled(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;

    for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
        int ac = t * TILE + tx, br = t * TILE + ty;
        As[ty][tx] = (row < n && ac < n) ? A[row * n + ac] : 0.0f;
        Bs[ty][tx] = (br < n && col < n) ? B[br * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < n && col < n) {
        C[row * n + col] = acc;
        if (acc > 0.0f)
            atomicAdd(&matmul_positive, 1u);
    }
}

static float host_compute(unsigned i, float seed, int iters)
{
    float a = seed + (float)(i % 97), b = 0.5f;
    for (int k = 0; k < iters; k++) {
        a = fmaf(a, 0.999f, b);
        b = fmaf(b, 0.998f, 0.001f);
    }
    return a + b;
}

// ---- green contexts, natively (the driver API through the runtime's entry points: the
// program links no libcuda, so that through Tandem it loads only Tandem's runtime) ----
struct driver {
    decltype(&cuDeviceGetDevResource) getDevResource;
    decltype(&cuDevSmResourceSplitByCount) split;
    decltype(&cuDevResourceGenerateDesc) generateDesc;
    decltype(&cuGreenCtxCreate) greenCreate;
    decltype(&cuGreenCtxStreamCreate) greenStream;
    decltype(&cuCtxCreate) ctxCreate;
    decltype(&cuCtxSetCurrent) ctxSetCurrent;
    decltype(&cuCtxDestroy) ctxDestroy;
};

template <typename F> static void entry(const char *name, F *fn)
{
    cudaDriverEntryPointQueryResult q;
    void *p = nullptr;
    CHECK(cudaGetDriverEntryPointByVersion(name, &p, 13000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !p) {
        fprintf(stderr, "shares: the driver has no %s\n", name);
        exit(1);
    }
    *fn = (F)p;
}

static driver load_driver()
{
    driver d;
    entry("cuDeviceGetDevResource", &d.getDevResource);
    entry("cuDevSmResourceSplitByCount", &d.split);
    entry("cuDevResourceGenerateDesc", &d.generateDesc);
    entry("cuGreenCtxCreate", &d.greenCreate);
    entry("cuGreenCtxStreamCreate", &d.greenStream);
    entry("cuCtxCreate", &d.ctxCreate);
    entry("cuCtxSetCurrent", &d.ctxSetCurrent);
    entry("cuCtxDestroy", &d.ctxDestroy);
    return d;
}

// The device's SMs split as the server splits them (docs/sm-shares.md): at most 64 equal
// groups, without SM co-scheduling.  Returns how many; *group_sms their size.
static unsigned green_groups(const driver &d, unsigned *group_sms, CUdevResource *groups = nullptr)
{
    CUdevResource all, local[64];
    unsigned n = 64, min;
    if (!groups)
        groups = local;
    CHECK(cudaFree(0));   // the primary context first, as cuGreenCtxCreate advises
    CHECK_CU(d.getDevResource(0, &all, CU_DEV_RESOURCE_TYPE_SM));
    min = (all.sm.smCount + 63) / 64;
    CHECK_CU(d.split(groups, &n, &all, nullptr, CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, min ? min : 1));
    *group_sms = groups[0].sm.smCount;
    return n;
}

// A green context of at least `sms` SMs made of groups [first, first + k); *granted its SMs.
static CUgreenCtx green(const driver &d, unsigned sms, unsigned first, unsigned *granted)
{
    CUdevResource groups[64];
    CUdevResourceDesc desc;
    CUgreenCtx g;
    unsigned g_sms, n = green_groups(d, &g_sms, groups), k = std::max(1u, (sms + g_sms - 1) / g_sms);
    if (first + k > n) {
        fprintf(stderr, "shares: %u SMs from group %u do not fit the device's %u groups of %u\n", sms, first, n, g_sms);
        exit(1);
    }
    CHECK_CU(d.generateDesc(&desc, groups + first, k));
    CHECK_CU(d.greenCreate(&g, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    *granted = k * g_sms;
    return g;
}

static cudaStream_t green_stream(const driver &d, CUgreenCtx g)
{
    CUstream s;
    CHECK_CU(d.greenStream(&s, g, CU_STREAM_NON_BLOCKING, 0));
    return (cudaStream_t)s;
}

// ---- the compute load ----
struct load {
    float *out = nullptr;
    unsigned *mask = nullptr;
    unsigned blocks = 0;
    int iters = FMA_ITERS;
};

static load load_make(unsigned blocks, int iters = FMA_ITERS)
{
    load l;
    l.blocks = blocks;
    l.iters = iters;
    CHECK(cudaMalloc(&l.out, (size_t)blocks * COMPUTE_THREADS * sizeof(float)));
    CHECK(cudaMalloc(&l.mask, MAX_SMS / 8));
    CHECK(cudaMemset(l.mask, 0, MAX_SMS / 8));
    return l;
}

static void load_launch(const load &l, cudaStream_t s, float seed)
{
    shares_compute<<<l.blocks, COMPUTE_THREADS, 0, s>>>(l.out, l.mask, seed, l.iters);
    CHECK(cudaGetLastError());
}

static int popcount_mask(const unsigned *mask)
{
    int n = 0;
    for (unsigned w = 0; w < MAX_SMS / 32; w++)
        n += __builtin_popcount(mask[w]);
    return n;
}

// The SMs marked since the last call (then cleared); the stream is synchronized.
static int load_sms(const load &l, cudaStream_t s)
{
    unsigned mask[MAX_SMS / 32];
    CHECK(cudaMemcpyAsync(mask, l.mask, sizeof(mask), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemsetAsync(l.mask, 0, sizeof(mask), s));
    return popcount_mask(mask);
}

// Checks one element of `nblocks` blocks spread over the grid (all with nblocks 0) against the
// host; the stream is synchronized.
static void load_verify(const load &l, cudaStream_t s, float seed, unsigned nblocks)
{
    std::vector<float> out((size_t)l.blocks * COMPUTE_THREADS);
    CHECK(cudaMemcpyAsync(out.data(), l.out, out.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    unsigned step = nblocks && nblocks < l.blocks ? l.blocks / nblocks : 1;
    for (unsigned b = 0; b < l.blocks; b += step) {
        unsigned i = b * COMPUTE_THREADS + b % COMPUTE_THREADS;
        float want = host_compute(i, seed, l.iters);
        if (out[i] != want) {
            fprintf(stderr, "shares: wrong result at %u: %g, want %g\n", i, out[i], want);
            exit(1);
        }
    }
}

// The SMs marked since the last call (then cleared), and a check of one result per block.
static int load_check(const load &l, cudaStream_t s, float seed)
{
    int n = load_sms(l, s);
    load_verify(l, s, seed, 0);
    return n;
}

static int device_sms()
{
    int n = 0;
    CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0));
    return n;
}

// ---- options ----
struct opts {
    const char *mode = "";
    int green = 0, to = 0, streams = 1, kernels = 40, bes = 1, sms = 0, n = 4096, iters = FMA_ITERS, after = 20;
    bool be_shared = false;
    double ms = 2000, tick_ms = 500;
    bool ms_given = false;
    std::string stop, ready, phases;
};

static opts parse(int argc, char **argv)
{
    opts o;
    if (argc < 2) {
        fprintf(stderr, "usage: shares throughput|resize|lc|be|table6|app|mps [--green N] [--to N] [--streams N] "
                        "[--kernels K] [--after A] [--bes K] [--be-shared] [--sms N] [--n N] [--iters I] [--ms T] "
                        "[--stop FILE] [--ready FILE] [--phases B:S,...] [--tick-ms T]\n");
        exit(2);
    }
    o.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *k = argv[i];
        if (!strcmp(k, "--be-shared")) {
            o.be_shared = true;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "shares: %s needs a value\n", k);
            exit(2);
        }
        const char *v = argv[++i];
        if (!strcmp(k, "--green")) o.green = atoi(v);
        else if (!strcmp(k, "--to")) o.to = atoi(v);
        else if (!strcmp(k, "--streams")) o.streams = std::max(1, atoi(v));
        else if (!strcmp(k, "--kernels")) o.kernels = std::max(2, atoi(v));
        else if (!strcmp(k, "--after")) o.after = std::max(1, atoi(v));
        else if (!strcmp(k, "--bes")) o.bes = std::max(0, atoi(v));
        else if (!strcmp(k, "--sms")) o.sms = atoi(v);
        else if (!strcmp(k, "--n")) o.n = std::max(TILE, atoi(v) / TILE * TILE);
        else if (!strcmp(k, "--iters")) o.iters = std::max(1, atoi(v));
        else if (!strcmp(k, "--ms")) { o.ms = atof(v); o.ms_given = true; }
        else if (!strcmp(k, "--tick-ms")) o.tick_ms = std::max(50.0, atof(v));
        else if (!strcmp(k, "--stop")) o.stop = v;
        else if (!strcmp(k, "--ready")) o.ready = v;
        else if (!strcmp(k, "--phases")) o.phases = v;
        else {
            fprintf(stderr, "shares: unknown option %s\n", k);
            exit(2);
        }
    }
    return o;
}

// Kernels back to back for o.ms on s; prints one line.
static void throughput_on(const opts &o, cudaStream_t s, const char *mode, int asked, double setup_ms)
{
    load l = load_make((unsigned)device_sms() * 8, o.iters);
    float seed = 1.0f;
    load_launch(l, s, seed);   // warm-up
    load_check(l, s, seed);
    int kernels = 0;
    double t0 = now_ms(), t;
    do {
        load_launch(l, s, seed);
        kernels++;
        if (kernels % 8 == 0)
            CHECK(cudaStreamSynchronize(s));
        t = now_ms() - t0;
    } while (t < o.ms);
    CHECK(cudaStreamSynchronize(s));
    t = now_ms() - t0;
    int seen = load_check(l, s, seed);
    double flops = 4.0 * l.iters * (double)l.blocks * COMPUTE_THREADS * kernels;
    printf("{\"test\":\"throughput\",\"mode\":\"%s\",\"sms_asked\":%d,\"sms_seen\":%d,\"kernels\":%d,"
           "\"ms\":%.3f,\"gflops\":%.1f,\"setup_ms\":%.3f}\n",
           mode, asked, seen, kernels, t, flops / t / 1e6, setup_ms);
}

static void run_throughput(const opts &o)
{
    if (o.green) {
        driver d = load_driver();
        unsigned granted;
        double t0 = now_ms();
        CUgreenCtx g = green(d, (unsigned)o.green, 0, &granted);
        cudaStream_t s = green_stream(d, g);
        throughput_on(o, s, "green", (int)granted, now_ms() - t0);
    } else {
        cudaStream_t s;
        CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        throughput_on(o, s, "plain", device_sms(), 0);
    }
}

// Per kernel: its launch, a wait for it (its latency "ms", "done_wall_ms" when the wait ended),
// then the SMs it ran on (a 128-byte copy and a memset).  That is 3 pieces of work a kernel (a
// launch, a copy, a memset), and every 16th kernel a 4th: a copy of its results, checked on 8
// blocks (bench/shares/shares.sh counts them for --test-share-at-work).  The checks are kept
// short so that the kernel in flight, not the guest's own host work, is what a share change
// waits for.
static void run_resize(const opts &o)
{
    driver d{};
    CUgreenCtx g = nullptr;
    unsigned granted = 0;
    std::vector<cudaStream_t> st((size_t)o.streams);
    if (o.green) {
        d = load_driver();
        g = green(d, (unsigned)o.green, 0, &granted);
    }
    for (auto &s : st) {
        if (g)
            s = green_stream(d, g);
        else
            CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    load l = load_make(2 * (unsigned)device_sms(), o.iters);
    for (auto &s : st)
        load_launch(l, s, 1.0f);
    CHECK(cudaDeviceSynchronize());
    load_check(l, st[0], 1.0f);
    int first_seen = -1, changed_at = -1;
    float last_seed = 1.0f;
    double t_start = now_ms();
    for (int k = 0;; k++) {
        if (!o.ms_given && k >= o.kernels)
            break;
        if (o.ms_given && (now_ms() - t_start >= o.ms || (changed_at >= 0 && k - changed_at >= o.after)))
            break;
        double resize_ms = 0, t0 = now_ms(), wall0 = wall_ms();
        if (g && o.to && k == o.kernels / 2) {   // the native resize: a context and N streams
            CUgreenCtx g2 = green(d, (unsigned)o.to, 0, &granted);
            for (auto &s : st)
                s = green_stream(d, g2);
            resize_ms = now_ms() - t0;
        }
        float seed = 1.0f + (float)(k % 3);
        last_seed = seed;
        load_launch(l, st[0], seed);
        CHECK(cudaStreamSynchronize(st[0]));
        double lat = now_ms() - t0, done_wall = wall_ms();
        int seen = load_sms(l, st[0]);
        if (k % 16 == 15)
            load_verify(l, st[0], seed, 8);
        if (first_seen < 0)
            first_seen = seen;
        else if (changed_at < 0 && seen != first_seen)
            changed_at = k;
        printf("{\"test\":\"resize\",\"streams\":%d,\"kernel\":%d,\"ms\":%.3f,\"sms_seen\":%d,\"resize_ms\":%.3f,"
               "\"wall_ms\":%.3f,\"done_wall_ms\":%.3f}\n",
               o.streams, k, lat, seen, resize_ms, wall0, done_wall);
        fflush(stdout);
    }
    load_verify(l, st[0], last_seed, 0);   // a last full check, of the last kernel
}

static cudaStream_t stream_for(const opts &o, driver *d)
{
    cudaStream_t s;
    if (o.green) {
        unsigned granted;
        *d = load_driver();
        return green_stream(*d, green(*d, (unsigned)o.green, 0, &granted));
    }
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}

// ---- Flyt's Table 6: the matmul of the C-App and the G-Apps ----
struct matmul_job {
    int n = 0;
    std::vector<float> a, b;
    float *da = nullptr, *db = nullptr, *dc = nullptr;
};

// Small integers times quarters and halves: every partial sum is a multiple of 1/8 below 2^21,
// exact in float whatever the order of the additions (N up to 8192).
static matmul_job matmul_make(int n)
{
    matmul_job j;
    size_t e = (size_t)n * n;
    j.n = n;
    j.a.resize(e);
    j.b.resize(e);
    for (size_t i = 0; i < e; i++) {
        j.a[i] = (float)(i % 13) * 0.25f;
        j.b[i] = (float)(i % 7) * 0.5f;
    }
    CHECK(cudaMalloc(&j.da, e * 4));
    CHECK(cudaMalloc(&j.db, e * 4));
    CHECK(cudaMalloc(&j.dc, e * 4));
    CHECK(cudaMemcpy(j.da, j.a.data(), e * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(j.db, j.b.data(), e * 4, cudaMemcpyHostToDevice));
    return j;
}

// One call: the matmul, waited for; its latency in ms.
static double matmul_call(const matmul_job &j, cudaStream_t s)
{
    double t0 = now_ms();
    matmul_tiled<<<dim3(j.n / TILE, j.n / TILE), dim3(TILE, TILE), 0, s>>>(j.da, j.db, j.dc, j.n);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    return now_ms() - t0;
}

// 64 elements of C (a diagonal stride and a row) against the host's sums.
static void matmul_verify(const matmul_job &j, const char *who)
{
    int n = j.n;
    for (int q = 0; q < 64; q++) {
        int r = (q * 61 + 7) % n, c = q < 32 ? (q * 97 + 3) % n : (r * 5 + q) % n;
        float got, want = 0;
        CHECK(cudaMemcpy(&got, j.dc + (size_t)r * n + c, 4, cudaMemcpyDeviceToHost));
        for (int k = 0; k < n; k++)
            want += j.a[(size_t)r * n + k] * j.b[(size_t)k * n + c];
        if (got != want) {
            fprintf(stderr, "shares: %s: matmul wrong at (%d,%d): %g, want %g\n", who, r, c, got, want);
            exit(1);
        }
    }
}

static void matmul_free(matmul_job &j)
{
    CHECK(cudaFree(j.da));
    CHECK(cudaFree(j.db));
    CHECK(cudaFree(j.dc));
}

// Latencies of a run, as one JSON line: n calls (after the warm-up ones), mean, sd and
// percentiles.  Exits with 1 when there were fewer than 3.
static void print_lat(const char *test, const char *mode, int bes, int n, int app, std::vector<double> lat)
{
    if (lat.size() < 3) {
        fprintf(stderr, "shares: %s: too few matmuls (%zu)\n", test, lat.size());
        exit(1);
    }
    double sum = 0, sq = 0;
    for (double v : lat)
        sum += v;
    double mean = sum / lat.size();
    for (double v : lat)
        sq += (v - mean) * (v - mean);
    double sd = std::sqrt(sq / (lat.size() - 1));
    std::sort(lat.begin(), lat.end());
    printf("{\"test\":\"%s\",\"mode\":\"%s\",\"bes\":%d,\"app\":%d,\"matmul_n\":%d,\"n\":%zu,\"mean_ms\":%.4f,"
           "\"sd_ms\":%.4f,\"min_ms\":%.4f,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"max_ms\":%.4f,\"cv_pct\":%.3f}\n",
           test, mode, bes, app, n, lat.size(), mean, sd, lat.front(), lat[lat.size() / 2],
           lat[(lat.size() - 1) * 99 / 100], lat.back(), 100.0 * sd / mean);
    fflush(stdout);
}

// The C-App: 2 warm-up calls, then calls for ms; their latencies.
static std::vector<double> lc_loop(const matmul_job &j, cudaStream_t s, double ms)
{
    std::vector<double> lat;
    matmul_call(j, s);
    matmul_call(j, s);
    double t_end = now_ms() + ms;
    while (now_ms() < t_end || lat.size() < 3)
        lat.push_back(matmul_call(j, s));
    return lat;
}

static bool file_exists(const std::string &f)
{
    return !f.empty() && access(f.c_str(), F_OK) == 0;
}

// A G-App: 1 warm-up call (then `ready` is touched), then calls until stop says so; their
// latencies.
template <typename Stop> static std::vector<double> be_loop(const matmul_job &j, cudaStream_t s, Stop stop,
                                                             const std::string &ready)
{
    std::vector<double> lat;
    matmul_call(j, s);
    if (!ready.empty()) {
        FILE *f = fopen(ready.c_str(), "w");
        if (f)
            fclose(f);
    }
    while (!stop())
        lat.push_back(matmul_call(j, s));
    return lat;
}

static void run_lc(const opts &o)
{
    driver d;
    cudaStream_t s = stream_for(o, &d);
    matmul_job j = matmul_make(o.n);
    std::vector<double> lat = lc_loop(j, s, o.ms);
    matmul_verify(j, "C-App");
    print_lat("lc", o.green ? "green" : "plain", o.bes, o.n, 0, lat);
    matmul_free(j);
}

static void run_be(const opts &o)
{
    driver d;
    cudaStream_t s = stream_for(o, &d);
    matmul_job j = matmul_make(o.n);
    double t_end = now_ms() + o.ms;
    std::vector<double> lat = be_loop(j, s, [&] { return file_exists(o.stop) || now_ms() >= t_end; }, o.ready);
    matmul_verify(j, "G-App");
    print_lat("gapp", o.green ? "green" : "plain", o.bes, o.n, 1, lat);
    matmul_free(j);
}

static void run_table6(const opts &o)
{
    driver d = load_driver();
    unsigned g_lc, gs = 0, granted;
    CUgreenCtx lc = green(d, 8, 0, &g_lc);
    green_groups(d, &gs);
    unsigned per = (8 + gs - 1) / gs;   // groups in 8 SMs
    // The G-Apps' green contexts: each its own 8 SMs after the C-App's (what Tandem's
    // --session-sms 8 gives each session while the GPU has room), or one shared 8 SMs.
    std::vector<CUgreenCtx> bectx;
    for (int i = 0; i < (o.be_shared ? std::min(1, o.bes) : o.bes); i++)
        bectx.push_back(green(d, 8, per * (unsigned)(1 + i), &granted));
    cudaStream_t lcs = green_stream(d, lc);
    std::atomic<bool> stop{ false };
    std::atomic<int> ready{ 0 };
    std::vector<std::vector<double>> be_lat((size_t)o.bes);
    std::vector<matmul_job> jobs;
    for (int i = 0; i < o.bes; i++)
        jobs.push_back(matmul_make(o.n));
    std::vector<std::thread> ts;
    for (int i = 0; i < o.bes; i++)
        ts.emplace_back([&, i] {
            CHECK(cudaSetDevice(0));
            cudaStream_t s = green_stream(d, bectx[o.be_shared ? 0 : (size_t)i]);
            matmul_call(jobs[(size_t)i], s);   // warm-up
            ready++;
            be_lat[(size_t)i] = be_loop(jobs[(size_t)i], s, [&] { return stop.load(); }, "");
        });
    while (ready.load() < o.bes)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    matmul_job j = matmul_make(o.n);
    std::vector<double> lat = lc_loop(j, lcs, o.ms);
    stop = true;
    for (auto &t : ts)
        t.join();
    matmul_verify(j, "C-App");
    print_lat("lc", o.be_shared ? "native-green-shared" : "native-green", o.bes, o.n, 0, lat);
    for (int i = 0; i < o.bes; i++) {
        matmul_verify(jobs[(size_t)i], "G-App");
        print_lat("gapp", o.be_shared ? "native-green-shared" : "native-green", o.bes, o.n, i + 1,
                  be_lat[(size_t)i]);
    }
}

// ---- the timeline's application: phases of kernels of B blocks ----
static void run_app(const opts &o)
{
    std::vector<std::pair<unsigned, double>> phases;   // blocks, seconds
    unsigned most = 1;
    for (size_t at = 0; at < o.phases.size();) {
        size_t comma = o.phases.find(',', at);
        std::string ph = o.phases.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        unsigned b = 0;
        double sec = 0;
        if (sscanf(ph.c_str(), "%u:%lf", &b, &sec) != 2 || b < 1 || sec <= 0) {
            fprintf(stderr, "shares: --phases takes BLOCKS:SECONDS[,BLOCKS:SECONDS...], not '%s'\n", ph.c_str());
            exit(2);
        }
        phases.push_back({ b, sec });
        most = std::max(most, b);
        if (comma == std::string::npos)
            break;
        at = comma + 1;
    }
    if (phases.empty()) {
        fprintf(stderr, "shares: app needs --phases\n");
        exit(2);
    }
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    load l = load_make(most, o.iters);
    for (size_t p = 0; p < phases.size(); p++) {
        l.blocks = phases[p].first;
        double t_end = now_ms() + phases[p].second * 1000, tick = now_ms() + o.tick_ms;
        std::vector<double> lat;
        long total = 0;
        while (now_ms() < t_end) {
            double t0 = now_ms();
            load_launch(l, s, 1.0f);
            CHECK(cudaStreamSynchronize(s));
            lat.push_back(now_ms() - t0);
            total++;
            if (now_ms() >= tick || now_ms() >= t_end) {
                int seen = load_sms(l, s);
                // 4 results of the latest kernel against the host, by single-element copies
                // (the whole output of a large phase would be megabytes per tick).
                for (unsigned q = 0; q < 4; q++) {
                    unsigned b = (q * 7919u) % l.blocks, i = b * COMPUTE_THREADS + (q * 31u) % COMPUTE_THREADS;
                    float got;
                    CHECK(cudaMemcpy(&got, l.out + i, 4, cudaMemcpyDeviceToHost));
                    if (got != host_compute(i, 1.0f, l.iters)) {
                        fprintf(stderr, "shares: app: wrong result at %u: %g\n", i, got);
                        exit(1);
                    }
                }
                double sum = 0, worst = 0;
                for (double v : lat) {
                    sum += v;
                    worst = std::max(worst, v);
                }
                printf("{\"test\":\"app\",\"wall_ms\":%.1f,\"phase\":%zu,\"blocks\":%u,\"kernels\":%zu,"
                       "\"mean_ms\":%.3f,\"max_ms\":%.3f,\"sms_seen\":%d}\n",
                       wall_ms(), p, l.blocks, lat.size(), lat.empty() ? 0.0 : sum / lat.size(), worst, seen);
                fflush(stdout);
                lat.clear();
                tick = now_ms() + o.tick_ms;
            }
        }
        fprintf(stderr, "shares: app: phase %zu: %ld kernels of %u blocks\n", p, total, l.blocks);
    }
    printf("ok\n");
}

static void run_mps(const opts &o)
{
    driver d = load_driver();
    CUexecAffinityParam aff;
    aff.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    aff.param.smCount.val = (unsigned)o.sms;
    CUctxCreateParams p = {};
    p.execAffinityParams = &aff;
    p.numExecAffinityParams = 1;
    CUcontext ctx;
    CHECK(cudaFree(0));
    double t0 = now_ms();
    CHECK_CU(d.ctxCreate(&ctx, &p, 0, 0));
    double create_ms = now_ms() - t0;
    CHECK_CU(d.ctxSetCurrent(ctx));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    throughput_on(o, s, "mps-affinity", o.sms, create_ms);
}

int main(int argc, char **argv)
{
    opts o = parse(argc, argv);
    if (!strcmp(o.mode, "throughput"))
        run_throughput(o);
    else if (!strcmp(o.mode, "resize"))
        run_resize(o);
    else if (!strcmp(o.mode, "lc"))
        run_lc(o);
    else if (!strcmp(o.mode, "be"))
        run_be(o);
    else if (!strcmp(o.mode, "table6"))
        run_table6(o);
    else if (!strcmp(o.mode, "app"))
        run_app(o);
    else if (!strcmp(o.mode, "mps"))
        run_mps(o);
    else {
        fprintf(stderr, "shares: unknown mode %s\n", o.mode);
        return 2;
    }
    return 0;
}
