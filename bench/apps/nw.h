/* nw: Needleman-Wunsch global alignment of two sequences of n symbols, as a
 * wavefront: the (n+1) x (n+1) score matrix is cut into 16 x 16 tiles and
 * one small kernel per anti-diagonal of tiles computes that diagonal's tiles
 * (2n/16 - 1 launches).  Each round aligns another query against the same
 * reference and reads back the last row of scores (one small synchronous
 * copy per round); the last round's whole matrix is read back at the end.
 * Integer scores: every path gives the same bits. */
#ifndef TANDEM_BENCH_NW_H
#define TANDEM_BENCH_NW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NW_TILE 16
#define NW_SYMBOLS 24
#define NW_MAX_N 32768      /* (n+1)^2 cells must fit the kernels' int indices */
#define NW_ROUNDS 16        /* default --iters */

typedef struct nw_state {
    int n, rounds, penalty;
    int32_t *queries;           /* rounds x (n + 1) symbols; index 0 of each is unused */
    int32_t *ref;               /* n + 1 symbols, index 0 unused */
    int32_t *sub;               /* NW_SYMBOLS x NW_SYMBOLS substitution scores */
    int32_t *last_rows;         /* rounds x (n + 1): row n of each round's matrix */
    int32_t *score;             /* (n+1) x (n+1), row-major: the last round's matrix */
} nw_state;

int nw_setup(long size, int rounds, void **state, char *err, size_t errlen);
int nw_run_host(void *state);
void nw_summarize(void *state, uint64_t *checksum, char *summary, size_t len);
void nw_teardown(void *state);

#ifdef __cplusplus
}
#endif

#endif
