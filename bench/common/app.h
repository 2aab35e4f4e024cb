/* The frame every application benchmark (bench/apps/) runs in.
 *
 *   APP SIZE [--iters N] [--reps R] [--warmup W] [--host-reference]
 *
 * An application supplies its inputs, its device path, an independent host
 * reference that writes the same outputs, and a summary (checksum and a
 * line of figures) of those outputs.  app_main times the device path
 * (allocation, copies in, kernels, copies out, frees: everything the
 * program asks of the GPU, as Rodinia times it) R times after W untimed
 * runs and prints one JSON line with the median; with --host-reference it
 * runs the host code instead.  The checksum comes from the same summary function either way,
 * so bench/run.sh can compare native, Tandem and host runs. */
#ifndef TANDEM_BENCH_APP_H
#define TANDEM_BENCH_APP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_app {
    const char *name;
    const char *size_help;    /* what SIZE and --iters mean, for the usage line */
    int default_iters;        /* iterations (rounds, candidates...) unless --iters; 0: none */
    /* Checks the size and builds the host inputs and output buffers (every
     * page touched: first-touch faults are not the application's work); 0
     * or -1 with a reason in err. */
    int (*setup)(long size, int iters, void **state, char *err, size_t errlen);
    int (*run_device)(void *state);   /* 0, or -1 after printing why */
    int (*run_host)(void *state);
    void (*summarize)(void *state, uint64_t *checksum, char *summary, size_t len);
    void (*teardown)(void *state);
} bench_app;

int bench_app_main(const bench_app *app, int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
