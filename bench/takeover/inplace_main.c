/* inplace: the takeover suite's program (inplace.h, docs/benchmarks.md).
 *
 *   inplace MIB [--iters N] [--host-reference]
 *   inplace MIB [--iters N] --kill PID --kill-after W [--seed S]
 *
 * MIB: the buffer, in MiB.  Each of the N iterations (default 1000) is one
 * launch of the in-place step and one cudaDeviceSynchronize; the loop stamps
 * the moment each synchronize returns (CLOCK_MONOTONIC).
 *
 * Without --kill it prints the line "loop.SIZE": the median iteration in
 * microseconds and the checksum of the buffer after the loop (with
 * --host-reference, the same loop on the host).
 *
 * With --kill, once W iterations are done a thread SIGKILLs process PID (the
 * active Tandem server) at a moment drawn uniformly from the next two median
 * iterations (seed S picks it), and the line is "recovery.SIZE": the time
 * from the kill to the completion of the resumed iteration
 * (resumed_iteration), the time to the first completion after the kill, the
 * iteration times before and after, and the checksum, which must equal a
 * run without a kill.  A failing iteration ends the program with status 1
 * and a line saying where it failed relative to the kill: that is how a run
 * with no standby ends. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "bench.h"
#include "inplace.h"
#include "killer.h"

const char *bench_prog = "inplace";

typedef struct opts {
    long mib, iters, kill_after, seed;
    pid_t kill_pid;
    int host;
} opts;

static void usage(FILE *f)
{
    fprintf(f, "usage: inplace MIB [--iters N] [--host-reference]\n"
               "       inplace MIB [--iters N] --kill PID --kill-after W [--seed S]\n");
}

static int long_arg(const char *s, long min, long max, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);

    if (end == s || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse(int argc, char **argv, opts *o)
{
    long pid = 0;

    *o = (opts){ .iters = 1000, .seed = 1 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "--host-reference") == 0)
            o->host = 1;
        else if (strcmp(a, "--iters") == 0 && v)
            bad = long_arg(argv[++i], 1, 10000000, &o->iters);
        else if (strcmp(a, "--kill") == 0 && v)
            bad = long_arg(argv[++i], 1, 1L << 30, &pid);
        else if (strcmp(a, "--kill-after") == 0 && v)
            bad = long_arg(argv[++i], 10, 10000000, &o->kill_after);
        else if (strcmp(a, "--seed") == 0 && v)
            bad = long_arg(argv[++i], 0, 1L << 30, &o->seed);
        else if (o->mib == 0 && a[0] != '-')
            bad = long_arg(a, 1, INPLACE_MAX_MIB, &o->mib);
        else
            bad = 1;
        if (bad) {
            usage(stderr);
            return -1;
        }
    }
    o->kill_pid = (pid_t)pid;
    if (o->mib == 0 || (o->kill_pid && o->host) || (o->kill_pid != 0) != (o->kill_after != 0)) {
        usage(stderr);
        return -1;
    }
    /* Room after the kill (at most two iterations past W) for iterations
     * to complete on the standby. */
    if (o->kill_pid && o->iters < o->kill_after + 20) {
        fprintf(stderr, "inplace: --iters must be at least --kill-after + 20\n");
        return -1;
    }
    return 0;
}

/* The median of iterations [from, to) of the stamps (done[i + 1] - done[i]). */
static double median_iteration(const double *done, long from, long to)
{
    long n = to - from;
    double *t = malloc((size_t)(n > 0 ? n : 1) * sizeof(*t));

    if (!t || n <= 0) {
        free(t);
        return 0;
    }
    for (long i = 0; i < n; i++)
        t[i] = done[from + i + 1] - done[from + i];
    double m = bench_summarize(t, (size_t)n).median;
    free(t);
    return m;
}

static void print_loop(const opts *o, const char *size, const double *done, uint64_t sum)
{
    double *t = malloc((size_t)o->iters * sizeof(*t));

    if (!t) {
        fprintf(stderr, "inplace: out of host memory\n");
        exit(1);
    }
    for (long i = 0; i < o->iters; i++)
        t[i] = done[i + 1] - done[i];
    bench_stats st = bench_summarize(t, (size_t)o->iters);
    printf("{\"bench\":\"takeover\",\"id\":\"loop.%s\",\"what\":\"in-place step + cudaDeviceSynchronize, %s "
           "buffer\",\"size\":\"%s\",\"bytes\":%ld,\"iters\":%ld,\"unit\":\"us\",\"better\":\"lower\","
           "\"value\":%.3f,\"min_us\":%.3f,\"p99_us\":%.3f,\"total_ms\":%.3f,\"checksum\":\"%016" PRIx64 "\"}\n",
           size, size, size, o->mib << 20, o->iters, st.median, st.min, st.p99,
           (done[o->iters] - done[0]) / 1e3, sum);
    free(t);
}

/* The kill's moment: uniform over the two median iterations after done[W]
 * (the seed's draw), so kills land in every phase of an iteration. */
static double kill_moment(const opts *o, const double *done, double *delay_us)
{
    uint64_t state = (uint64_t)o->seed * 0x9e3779b97f4a7c15ull + 1;
    double frac = (double)bench_rand(&state) / 2147483648.0;

    *delay_us = frac * 2 * median_iteration(done, o->kill_after / 2, o->kill_after);
    return done[o->kill_after] + *delay_us;
}

/* The resumed iteration: of the first three iterations completed after the
 * kill, the one that waited longest (from the kill or from the previous
 * completion, whichever is later).  Usually that is the first: the kill
 * caught it in flight and it completed once the session resumed.  But a
 * synchronize whose reply the active sent just before it died completes
 * after the kill without any resume, and then the resume stalls the next
 * iteration instead. */
static long resumed_iteration(const opts *o, const double *done, double killed_us, long first)
{
    long best = first;
    double best_wait = done[first + 1] - killed_us;

    for (long i = first + 1; i < o->iters && i <= first + 2; i++)
        if (done[i + 1] - done[i] > best_wait) {
            best_wait = done[i + 1] - done[i];
            best = i;
        }
    return best;
}

static void print_recovery(const opts *o, const char *size, const double *done, const killer *k,
                           double delay_us, uint64_t sum)
{
    long first = -1, resumed;

    for (long i = 0; i < o->iters && first < 0; i++)
        if (done[i + 1] > k->killed_us)
            first = i;
    if (first < 0) {
        fprintf(stderr, "inplace: no iteration completed after the kill\n");
        exit(1);
    }
    resumed = resumed_iteration(o, done, k->killed_us, first);
    printf("{\"bench\":\"takeover\",\"id\":\"recovery.%s\",\"what\":\"kill of the active server to the completion "
           "of the resumed iteration, %s buffer\",\"size\":\"%s\",\"bytes\":%ld,\"iters\":%ld,\"unit\":\"ms\","
           "\"better\":\"lower\",\"value\":%.3f,\"first_ms\":%.3f,\"kill_after\":%ld,\"seed\":%ld,"
           "\"kill_delay_us\":%.1f,\"resumed_iter\":%ld,\"iter_us\":%.3f,\"after_us\":%.3f,"
           "\"checksum\":\"%016" PRIx64 "\"}\n",
           size, size, size, o->mib << 20, o->iters, (done[resumed + 1] - k->killed_us) / 1e3,
           (done[first + 1] - k->killed_us) / 1e3, o->kill_after, o->seed, delay_us, resumed,
           median_iteration(done, o->kill_after / 2, o->kill_after), median_iteration(done, resumed + 1, o->iters),
           sum);
}

enum { NO_KILLER, KILLER_RUNNING, KILLER_JOINED };

/* A failed call: where it failed relative to the kill, then exit 1. */
static void lost(const char *what, long iter, cudaError_t e, killer *k, int killer_state)
{
    if (killer_state == KILLER_RUNNING)
        killer_join(k);
    if (killer_state != NO_KILLER && k->killed_us > 0)
        fprintf(stderr, "inplace: session lost: %s of iteration %ld failed %.2f ms after the kill: %s (%s)\n",
                what, iter, (bench_now_us() - k->killed_us) / 1e3, cudaGetErrorName(e), cudaGetErrorString(e));
    else
        fprintf(stderr, "inplace: %s of iteration %ld failed: %s (%s)\n", what, iter, cudaGetErrorName(e),
                cudaGetErrorString(e));
    exit(1);
}

static int run_device(const opts *o, uint32_t *x, size_t n, double *done, killer *k, double *delay_us)
{
    uint32_t *dx = NULL;
    size_t bytes = n * sizeof(*x);
    cudaError_t e;

    /* The session exists and the buffer is on the device before the clock
     * starts; the first iterations also load the module. */
    BENCH_CHECK(cudaSetDevice(0));
    BENCH_CHECK(cudaMalloc((void **)&dx, bytes));
    BENCH_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaDeviceSynchronize());
    if (o->kill_pid && killer_start(k, o->kill_pid) != 0) {
        fprintf(stderr, "inplace: cannot start the killer thread: %s\n", strerror(errno));
        return -1;
    }
    done[0] = bench_now_us();
    for (long i = 0; i < o->iters; i++) {
        if ((e = inplace_launch(dx, (int)n, (uint32_t)i)) != cudaSuccess)
            lost("the launch", i, e, k, o->kill_pid ? KILLER_RUNNING : NO_KILLER);
        if ((e = cudaDeviceSynchronize()) != cudaSuccess)
            lost("cudaDeviceSynchronize", i, e, k, o->kill_pid ? KILLER_RUNNING : NO_KILLER);
        done[i + 1] = bench_now_us();
        if (o->kill_pid && i + 1 == o->kill_after) {
            killer_arm(k, kill_moment(o, done, delay_us));
            fprintf(stderr, "inplace: %ld iterations done; killing process %d in %.1f us\n", i + 1,
                    (int)o->kill_pid, *delay_us);
        }
    }
    if (o->kill_pid) {
        killer_join(k);
        if (k->killed_us <= 0) {
            fprintf(stderr, "inplace: kill(%d) failed: %s\n", (int)o->kill_pid, strerror(k->err));
            return -1;
        }
    }
    if ((e = cudaMemcpy(x, dx, bytes, cudaMemcpyDeviceToHost)) != cudaSuccess)
        /* The kill may land after the last iteration (a busy machine). */
        lost("the copy of the result", o->iters, e, k, o->kill_pid ? KILLER_JOINED : NO_KILLER);
    BENCH_CHECK(cudaFree(dx));
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    killer k;
    char size[32];
    double delay_us = 0;

    if (parse(argc, argv, &o) != 0)
        return 2;
    size_t n = (size_t)o.mib << 18;
    uint32_t *x = malloc(n * sizeof(*x));
    double *done = malloc(((size_t)o.iters + 1) * sizeof(*done));
    if (!x || !done) {
        fprintf(stderr, "inplace: out of host memory\n");
        return 1;
    }
    bench_size_label((size_t)o.mib << 20, size, sizeof(size));
    inplace_init(x, n);
    if (o.host) {
        done[0] = bench_now_us();
        for (long i = 0; i < o.iters; i++) {
            inplace_host_step(x, n, (uint32_t)i);
            done[i + 1] = bench_now_us();
        }
    } else if (run_device(&o, x, n, done, &k, &delay_us) != 0) {
        return 1;
    }
    uint64_t sum = inplace_checksum(x, n);
    if (o.kill_pid)
        print_recovery(&o, size, done, &k, delay_us, sum);
    else
        print_loop(&o, size, done, sum);
    free(x);
    free(done);
    return 0;
}
