/* inplace: the buffer's content, the host reference of a step, the
 * checksum (inplace.h). */
#include "bench.h"
#include "inplace.h"

void inplace_init(uint32_t *x, size_t n)
{
    uint64_t seed = 0x1f9u;

    for (size_t i = 0; i < n; i++)
        x[i] = bench_rand(&seed);
}

/* A linear congruential update of each word, salted by the iteration and
 * the index (arithmetic modulo 2^32, as unsigned int on the device). */
void inplace_host_step(uint32_t *x, size_t n, uint32_t iter)
{
    for (size_t i = 0; i < n; i++)
        x[i] = x[i] * 1664525u + 1013904223u + (iter ^ (uint32_t)i);
}

uint64_t inplace_checksum(const uint32_t *x, size_t n)
{
    return bench_fnv_u32(BENCH_FNV_OFFSET, x, n);
}
