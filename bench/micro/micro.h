/* The micro benchmarks: the sections of the `micro` program and the options
 * they share.  Each section prints one JSON object per measurement. */
#ifndef TANDEM_BENCH_MICRO_H
#define TANDEM_BENCH_MICRO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct micro_opts {
    int reps;            /* timed calls for null calls and create/destroy pairs */
    int warmup;          /* untimed calls before them */
    int launches;        /* launches per batch */
    int batches;         /* timed batches of launches */
    size_t max_bytes;    /* largest copy (sizes go 4 KiB, 16 KiB, ... up to it) */
    size_t copy_budget;  /* bytes to copy per size and direction, which sets the repetitions */
} micro_opts;

/* Each returns 0, or exits at the first failing CUDA call. */
int micro_null_calls(const micro_opts *o);
int micro_launches(const micro_opts *o);
int micro_copies(const micro_opts *o);
int micro_create_destroy(const micro_opts *o);

/* Prints one latency measurement: value is the median in microseconds. */
void micro_print_latency(const char *id, const char *what, double *samples_us, size_t n);

#ifdef __cplusplus
}
#endif

#endif
