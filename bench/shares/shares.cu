// SM shares on the GPU (issue 17, docs/sm-shares.md; run by bench/shares/shares.sh).
// One program, several measurements, each printing JSON lines on stdout:
//
//   shares throughput [--green N] [--ms T]
//       a compute-bound kernel back to back for T ms: GFLOP/s and the SMs its blocks ran on
//       (%smid).  --green N: in a green context of N SMs made here (native reference); without
//       it, wherever the process's context puts it (natively the whole GPU; through Tandem the
//       session's share).
//   shares resize [--streams N] [--kernels K] [--green A --to B]
//       N streams, each used once, then K small kernels on stream 0, each waited for: per kernel
//       its latency and SMs seen, so that a share changed meanwhile (through Tandem:
//       tandem-server --test-share-at-work, or the control socket's set_share) shows where it
//       took effect and what the first kernel at the new share cost.  Natively, --green A --to B
//       does the resize here at kernel K/2: a green context of B SMs and N new streams (timed).
//   shares lc [--ms T] [--green N]      a latency-critical 256x256 matmul, each waited for
//   shares be [--ms T] [--green N]      a best-effort compute-bound load
//   shares table6 --bes K [--ms T]      natively, one process: lc in a green context of 8 SMs,
//                                       K best-effort threads in one of the 8 others
//   shares mps --sms N [--ms T]         a context with CU_EXEC_AFFINITY_TYPE_SM_COUNT N (under an
//                                       MPS daemon with per-context partitioning): its creation
//                                       time, throughput and SMs seen
//
// Every kernel's result is checked; a wrong one exits with status 1.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

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
#define MM 256

// Wall-clock milliseconds: what another process (tandemctl share) can be compared with.
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

// Each thread runs FMA_ITERS dependent FMAs on two values; out[i] gets the result,
// the host recomputes one per block.  Thread 0 of each block marks its SM.
__global__ void compute(float *out, unsigned *sm_mask, float seed)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = seed + (float)(i % 97), b = 0.5f;
    for (int k = 0; k < FMA_ITERS; k++) {
        a = fmaf(a, 0.999f, b);
        b = fmaf(b, 0.998f, 0.001f);
    }
    out[i] = a + b;
    if (threadIdx.x == 0) {
        unsigned s = smid() % MAX_SMS;
        atomicOr(&sm_mask[s / 32], 1u << (s % 32));
    }
}

__global__ void matmul(const float *a, const float *b, float *c, int n)
{
    __shared__ float ta[16][16], tb[16][16];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += 16) {
        ta[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; k++)
            acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}

static float host_compute(unsigned i, float seed)
{
    float a = seed + (float)(i % 97), b = 0.5f;
    for (int k = 0; k < FMA_ITERS; k++) {
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
};

static load load_make(unsigned blocks)
{
    load l;
    l.blocks = blocks;
    CHECK(cudaMalloc(&l.out, (size_t)blocks * COMPUTE_THREADS * sizeof(float)));
    CHECK(cudaMalloc(&l.mask, MAX_SMS / 8));
    CHECK(cudaMemset(l.mask, 0, MAX_SMS / 8));
    return l;
}

static void load_launch(const load &l, cudaStream_t s, float seed)
{
    compute<<<l.blocks, COMPUTE_THREADS, 0, s>>>(l.out, l.mask, seed);
    CHECK(cudaGetLastError());
}

// SMs marked since the last call (then cleared); checks one result per block.
static int load_check(const load &l, cudaStream_t s, float seed)
{
    unsigned mask[MAX_SMS / 32];
    std::vector<float> out((size_t)l.blocks * COMPUTE_THREADS);
    CHECK(cudaMemcpyAsync(mask, l.mask, sizeof(mask), cudaMemcpyDeviceToHost, s));
    CHECK(cudaMemcpyAsync(out.data(), l.out, out.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaMemsetAsync(l.mask, 0, sizeof(mask), s));
    CHECK(cudaStreamSynchronize(s));
    for (unsigned b = 0; b < l.blocks; b++) {
        unsigned i = b * COMPUTE_THREADS + b % COMPUTE_THREADS;
        if (out[i] != host_compute(i, seed)) {
            fprintf(stderr, "shares: wrong result at %u: %g, want %g\n", i, out[i], host_compute(i, seed));
            exit(1);
        }
    }
    int n = 0;
    for (unsigned w = 0; w < MAX_SMS / 32; w++)
        n += __builtin_popcount(mask[w]);
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
    int green = 0, to = 0, streams = 1, kernels = 40, bes = 1, sms = 0;
    double ms = 2000;
};

static opts parse(int argc, char **argv)
{
    opts o;
    if (argc < 2) {
        fprintf(stderr, "usage: shares throughput|resize|lc|be|table6|mps [--green N] [--to N] [--streams N] "
                        "[--kernels K] [--bes K] [--sms N] [--ms T]\n");
        exit(2);
    }
    o.mode = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--green")) o.green = atoi(v);
        else if (!strcmp(k, "--to")) o.to = atoi(v);
        else if (!strcmp(k, "--streams")) o.streams = std::max(1, atoi(v));
        else if (!strcmp(k, "--kernels")) o.kernels = std::max(2, atoi(v));
        else if (!strcmp(k, "--bes")) o.bes = std::max(0, atoi(v));
        else if (!strcmp(k, "--sms")) o.sms = atoi(v);
        else if (!strcmp(k, "--ms")) o.ms = atof(v);
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
    load l = load_make((unsigned)device_sms() * 8);
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
    double flops = 4.0 * FMA_ITERS * (double)l.blocks * COMPUTE_THREADS * kernels;
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
    load l = load_make(2 * (unsigned)device_sms());
    for (auto &s : st)
        load_launch(l, s, 1.0f);
    CHECK(cudaDeviceSynchronize());
    load_check(l, st[0], 1.0f);
    for (int k = 0; k < o.kernels; k++) {
        double resize_ms = 0, t0 = now_ms(), wall0 = wall_ms();
        if (g && o.to && k == o.kernels / 2) {   // the native resize: a context and N streams
            CUgreenCtx g2 = green(d, (unsigned)o.to, 0, &granted);
            for (auto &s : st)
                s = green_stream(d, g2);
            resize_ms = now_ms() - t0;
        }
        load_launch(l, st[0], 1.0f);
        int seen = load_check(l, st[0], 1.0f);
        printf("{\"test\":\"resize\",\"streams\":%d,\"kernel\":%d,\"ms\":%.3f,\"sms_seen\":%d,\"resize_ms\":%.3f,"
               "\"wall_ms\":%.3f}\n",
               o.streams, k, now_ms() - t0, seen, resize_ms, wall0);
        fflush(stdout);
    }
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

// The latency-critical matmul, each iteration waited for; its latencies.
static std::vector<double> lc_loop(cudaStream_t s, double ms, std::atomic<bool> *started)
{
    std::vector<float> a(MM * MM), b(MM * MM), c(MM * MM);
    for (int i = 0; i < MM * MM; i++) {
        a[i] = (float)(i % 13) * 0.25f;
        b[i] = (float)(i % 7) * 0.5f;
    }
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, a.size() * 4));
    CHECK(cudaMalloc(&db, b.size() * 4));
    CHECK(cudaMalloc(&dc, c.size() * 4));
    CHECK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    std::vector<double> lat;
    if (started)
        while (!started->load())
            std::this_thread::yield();
    double t_end = now_ms() + ms;
    while (now_ms() < t_end) {
        double t0 = now_ms();
        matmul<<<dim3(MM / 16, MM / 16), dim3(16, 16), 0, s>>>(da, db, dc, MM);
        CHECK(cudaGetLastError());
        CHECK(cudaStreamSynchronize(s));
        lat.push_back(now_ms() - t0);
    }
    CHECK(cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost));
    for (int r = 0; r < MM; r += 61) {   // small integers times quarters: exact in float
        float want = 0;
        for (int k = 0; k < MM; k++)
            want += a[r * MM + k] * b[k * MM + r];
        if (c[r * MM + r] != want) {
            fprintf(stderr, "shares: matmul wrong at %d: %g, want %g\n", r, c[r * MM + r], want);
            exit(1);
        }
    }
    return lat;
}

static void print_lc(const char *mode, int bes, std::vector<double> lat)
{
    if (lat.size() < 10) {   // the first ones warm up
        fprintf(stderr, "shares: too few matmuls (%zu)\n", lat.size());
        exit(1);
    }
    lat.erase(lat.begin(), lat.begin() + 5);
    double sum = 0, sq = 0;
    for (double v : lat) {
        sum += v;
        sq += v * v;
    }
    double mean = sum / lat.size(), sd = std::sqrt(std::max(0.0, sq / lat.size() - mean * mean));
    std::sort(lat.begin(), lat.end());
    printf("{\"test\":\"lc\",\"mode\":\"%s\",\"bes\":%d,\"n\":%zu,\"mean_ms\":%.4f,\"p50_ms\":%.4f,\"p99_ms\":%.4f,"
           "\"cv_pct\":%.3f}\n",
           mode, bes, lat.size(), mean, lat[lat.size() / 2], lat[lat.size() * 99 / 100], 100.0 * sd / mean);
}

static void be_loop(cudaStream_t s, double ms, std::atomic<bool> *stop)
{
    load l = load_make((unsigned)device_sms() * 8);
    double t_end = now_ms() + ms;
    int k = 0;
    while ((stop && !stop->load()) || (!stop && now_ms() < t_end)) {
        load_launch(l, s, 2.0f);
        if (++k % 4 == 0)
            CHECK(cudaStreamSynchronize(s));
    }
    load_check(l, s, 2.0f);
}

static void run_table6(const opts &o)
{
    driver d = load_driver();
    unsigned g_lc, g_be, first_be = 0;
    CUgreenCtx lc = green(d, 8, 0, &g_lc);
    // The best-effort ones share the other 8 SMs of the 16-SM budget: the groups after lc's.
    unsigned gs = 0;
    green_groups(d, &gs);
    first_be = (8 + gs - 1) / gs;
    CUgreenCtx be = green(d, 8, first_be, &g_be);
    std::atomic<bool> stop{ false };
    cudaStream_t lcs = green_stream(d, lc);
    std::vector<std::thread> ts;
    for (int i = 0; i < o.bes; i++)
        ts.emplace_back([&] {
            CHECK(cudaSetDevice(0));
            be_loop(green_stream(d, be), 0, &stop);
        });
    std::vector<double> lat = lc_loop(lcs, o.ms, nullptr);
    stop = true;
    for (auto &t : ts)
        t.join();
    print_lc("native-green", o.bes, lat);
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
    else if (!strcmp(o.mode, "lc")) {
        driver d;
        print_lc(o.green ? "green" : "plain", o.bes, lc_loop(stream_for(o, &d), o.ms, nullptr));
    } else if (!strcmp(o.mode, "be")) {
        driver d;
        be_loop(stream_for(o, &d), o.ms, nullptr);
    } else if (!strcmp(o.mode, "table6"))
        run_table6(o);
    else if (!strcmp(o.mode, "mps"))
        run_mps(o);
    else {
        fprintf(stderr, "shares: unknown mode %s\n", o.mode);
        return 2;
    }
    return 0;
}
