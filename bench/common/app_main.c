/* The application driver (app.h): arguments, timing, the JSON line. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "bench.h"

#define MAX_REPS 100

const char *bench_prog = "app";

static void usage(const bench_app *app, FILE *f)
{
    fprintf(f, "usage: %s SIZE%s [--reps R] [--warmup W] [--host-reference]\n  %s\n", app->name,
            app->default_iters ? " [--iters N]" : "", app->size_help);
}

/* A count option's value: 0 to max, or -1. */
static int count_arg(const char *s, int max)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);

    return end != s && !*end && v >= 0 && v <= max ? (int)v : -1;
}

/* One run of the device path or the host reference; its time in ms. */
static int run_once(const bench_app *app, void *state, int host, double *ms)
{
    double t0 = bench_now_us();
    int rc = host ? app->run_host(state) : app->run_device(state);

    *ms = (bench_now_us() - t0) / 1e3;
    return rc;
}

int bench_app_main(const bench_app *app, int argc, char **argv)
{
    long size = 0;
    int reps = 1, warmup = 0, iters = app->default_iters, host = 0;
    double ms[MAX_REPS];
    uint64_t checksum = 0;
    char summary[256] = "", err[256] = "";
    void *state = NULL;

    bench_prog = app->name;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--host-reference") == 0) {
            host = 1;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            if ((reps = count_arg(argv[++i], MAX_REPS)) < 1) {
                fprintf(stderr, "%s: --reps takes 1 to %d\n", app->name, MAX_REPS);
                return 2;
            }
        } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
            if ((warmup = count_arg(argv[++i], MAX_REPS)) < 0) {
                fprintf(stderr, "%s: --warmup takes 0 to %d\n", app->name, MAX_REPS);
                return 2;
            }
        } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc && app->default_iters) {
            if ((iters = count_arg(argv[++i], 1000000)) < 1) {
                fprintf(stderr, "%s: --iters takes 1 to 1000000\n", app->name);
                return 2;
            }
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(app, stdout);
            return 0;
        } else if (size == 0 && argv[i][0] != '-') {
            size = strtol(argv[i], &end, 10);
            if (*end || size <= 0) {
                usage(app, stderr);
                return 2;
            }
        } else {
            usage(app, stderr);
            return 2;
        }
    }
    if (size == 0) {
        usage(app, stderr);
        return 2;
    }
    if (app->setup(size, iters, &state, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", app->name, err);
        return 2;
    }
    if (!host) {
        /* The context (natively) or the session (Tandem) exists before the
         * clock starts: creating it is not the application's work. */
        BENCH_CHECK(cudaSetDevice(0));
        BENCH_CHECK(cudaFree(NULL));
    }
    /* Untimed runs first: lazy module loading, first allocations of a size
     * and cold caches are not what the median should show. */
    for (int r = 0; r < warmup + reps; r++) {
        uint64_t c;
        char s[256];
        double t;
        if (r < warmup)
            fprintf(stderr, "%s: size %ld, %s warm-up run %d of %d\n", app->name, size, host ? "host" : "device",
                    r + 1, warmup);
        else
            fprintf(stderr, "%s: size %ld, %s run %d of %d\n", app->name, size, host ? "host" : "device",
                    r - warmup + 1, reps);
        if (run_once(app, state, host, &t) != 0)
            return 1;
        app->summarize(state, &c, s, sizeof(s));
        if (r > 0 && (c != checksum || strcmp(s, summary) != 0)) {
            fprintf(stderr, "%s: run %d gave checksum %016" PRIx64 ", the first %016" PRIx64
                            ": the result is not deterministic\n", app->name, r + 1, c, checksum);
            return 1;
        }
        checksum = c;
        snprintf(summary, sizeof(summary), "%s", s);
        if (r >= warmup)
            ms[r - warmup] = t;
    }
    bench_stats st = bench_summarize(ms, (size_t)reps);
    printf("{\"bench\":\"app\",\"id\":\"app.%s\",\"what\":\"%s, size %ld\",\"app\":\"%s\",\"size\":%ld,"
           "\"iters\":%d,\"unit\":\"ms\",\"better\":\"lower\",\"value\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,"
           "\"reps\":%d,\"warmup\":%d,\"checksum\":\"%016" PRIx64 "\",\"result\":\"%s\"}\n",
           app->name, app->name, size, app->name, size, iters, st.median, st.min, st.max, reps, warmup, checksum,
           summary);
    app->teardown(state);
    return 0;
}
