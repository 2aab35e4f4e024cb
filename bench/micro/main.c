/* micro: the API-cost micro benchmarks (docs/benchmarks.md).
 *
 *   micro [--only null,launch,memcpy,create] [--quick] [--max-bytes N[K|M|G]]
 *         [--reps N] [--launches N] [--batches N]
 *
 * The same binary runs natively (NVIDIA's libcudart.so.13) and through
 * Tandem (its libcudart.so.13 on LD_LIBRARY_PATH); bench/run.sh runs it
 * both ways and compares.  --quick sets the small repetition counts of the
 * smoke run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "micro.h"

const char *bench_prog = "micro";

static void usage(FILE *f)
{
    fprintf(f, "usage: micro [--only null,launch,memcpy,create] [--quick] [--max-bytes N[K|M|G]]\n"
               "             [--reps N] [--launches N] [--batches N]\n");
}

static int parse_int(const char *s, int *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);

    if (end == s || *end || v < 1 || v > 100000000)
        return -1;
    *out = (int)v;
    return 0;
}

#define NSECTIONS 4

int main(int argc, char **argv)
{
    static const char *const sections[NSECTIONS] = { "null", "launch", "memcpy", "create" };
    micro_opts o = { .reps = 20000, .warmup = 1000, .launches = 10000, .batches = 20,
                     .max_bytes = (size_t)1 << 30, .copy_budget = (size_t)256 << 20 };
    const char *only = NULL;
    int reps = 0, launches = 0, batches = 0;
    int (*const run[NSECTIONS])(const micro_opts *) = { micro_null_calls, micro_launches,
                                                        micro_copies, micro_create_destroy };

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--quick") == 0) {
            o.reps = 300, o.warmup = 30, o.launches = 500, o.batches = 5, o.copy_budget = (size_t)8 << 20;
        } else if (strcmp(a, "--only") == 0 && v) {
            only = v, i++;
        } else if (strcmp(a, "--max-bytes") == 0 && v) {
            bad = bench_parse_bytes(v, &o.max_bytes), i++;
        } else if (strcmp(a, "--reps") == 0 && v) {
            bad = parse_int(v, &reps), i++;
        } else if (strcmp(a, "--launches") == 0 && v) {
            bad = parse_int(v, &launches), i++;
        } else if (strcmp(a, "--batches") == 0 && v) {
            bad = parse_int(v, &batches), i++;
        } else {
            bad = 1;
        }
        if (bad) {
            fprintf(stderr, "micro: bad argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    /* Explicit counts win over --quick, wherever they stand. */
    if (reps)
        o.reps = reps, o.warmup = reps / 20 + 1;
    if (launches)
        o.launches = launches;
    if (batches)
        o.batches = batches;
    if (only && !bench_known_names(only, sections, NSECTIONS))
        return 2;
    /* Create the context (natively) or the session (Tandem) before timing
     * anything: neither is what these measure. */
    BENCH_CHECK(cudaSetDevice(0));
    BENCH_CHECK(cudaFree(NULL));
    for (size_t s = 0; s < NSECTIONS; s++)
        if (bench_selected(only, sections[s])) {
            fprintf(stderr, "micro: %s\n", sections[s]);
            if (run[s](&o) != 0)
                return 1;
            fflush(stdout);
        }
    BENCH_CHECK(cudaDeviceSynchronize());
    return 0;
}
