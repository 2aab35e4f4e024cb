/* The JSON line of a latency measurement. */
#include <stdio.h>

#include "bench.h"
#include "micro.h"

void micro_print_latency(const char *id, const char *what, double *samples_us, size_t n)
{
    bench_stats st = bench_summarize(samples_us, n);

    printf("{\"bench\":\"micro\",\"id\":\"%s\",\"what\":\"%s\",\"unit\":\"us\",\"better\":\"lower\","
           "\"value\":%.3f,\"median_us\":%.3f,\"p99_us\":%.3f,\"mean_us\":%.3f,\"min_us\":%.3f,\"reps\":%zu}\n",
           id, what, st.median, st.median, st.p99, st.mean, st.min, st.n);
}
