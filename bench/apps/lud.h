/* lud: blocked LU decomposition (Doolittle, no pivoting) of an n x n matrix
 * over the integers modulo the prime p = 2^31 - 1.  Exact arithmetic makes
 * the result independent of the order of operations, so the blocked device
 * algorithm and the plain host reference must agree bit for bit, while the
 * device does the same work shape as a float LU: per 16-column step one
 * diagonal-block kernel, one perimeter kernel and one interior-update
 * kernel (3n/16 - 2 launches). */
#ifndef TANDEM_BENCH_LUD_H
#define TANDEM_BENCH_LUD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LUD_BS 16
#define LUD_P 2147483647u
#define LUD_MAX_N 16384

typedef struct lud_state {
    int n;
    uint32_t *in;      /* n x n, entries in [0, p) */
    uint32_t *out;     /* L (unit lower, below the diagonal) and U, in place */
} lud_state;

int lud_setup(long size, int iters, void **state, char *err, size_t errlen);
int lud_run_host(void *state);
void lud_summarize(void *state, uint64_t *checksum, char *summary, size_t len);
void lud_teardown(void *state);

/* Arithmetic modulo LUD_P for host code (the reference and the summary). */
uint32_t lud_mulmod(uint32_t a, uint32_t b);
uint32_t lud_submod(uint32_t a, uint32_t b);
/* a^(p-2): the inverse of a, and 0 for 0. */
uint32_t lud_inverse(uint32_t a);

#ifdef __cplusplus
}
#endif

#endif
