/* What every benchmark program shares: the clock, summary statistics, the
 * result checksum, and the check that stops a program at the first failing
 * CUDA call.  C and CUDA (C++) include it alike.
 *
 * The programs print their measurements as JSON objects, one a line, on
 * stdout; diagnostics and progress go to stderr.  bench/run.sh adds the
 * mode (native, shm, tcp, host) to each line and collects them. */
#ifndef TANDEM_BENCH_H
#define TANDEM_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The program's name for diagnostics, set by main. */
extern const char *bench_prog;

#define BENCH_CHECK(call)                                                                        \
    do {                                                                                         \
        cudaError_t err_ = (call);                                                               \
        if (err_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s: %s failed at %s:%d: %s (%s)\n", bench_prog, #call, __FILE__,    \
                    __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_));                 \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

static inline double bench_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Summary of a set of samples (any unit). */
typedef struct bench_stats {
    double median, p99, mean, min, max;
    size_t n;
} bench_stats;

/* Sorts the samples in place.  n must be at least 1. */
bench_stats bench_summarize(double *samples, size_t n);

/* FNV-1a-64 over 32-bit words, whole words at a time (fast enough for the
 * GiB-sized results of the applications).  Every program, device path and
 * host reference alike, checksums its result with these. */
#define BENCH_FNV_OFFSET 14695981039346656037ull
#define BENCH_FNV_PRIME 1099511628211ull

static inline uint64_t bench_fnv_u32(uint64_t h, const uint32_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= v[i];
        h *= BENCH_FNV_PRIME;
    }
    return h;
}

/* Deterministic pseudo-random inputs (a 64-bit LCG, top bits). */
static inline uint32_t bench_rand(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*state >> 33);
}

/* Whether `name` is in the comma-separated list `only` (or there is no list). */
int bench_selected(const char *only, const char *name);
/* Whether every name of the comma-separated list is one of names[0..count): a typo would
 * otherwise run nothing and look like success.  0 after a line naming the unknown one. */
int bench_known_names(const char *only, const char *const *names, size_t count);

/* Parses a byte count with an optional K, M or G suffix (powers of 1024).
 * 0 on success. */
int bench_parse_bytes(const char *s, size_t *out);
/* "4K", "16M", "1G", ... for a power-of-two-ish size, else the number. */
void bench_size_label(size_t bytes, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
