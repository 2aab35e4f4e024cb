/* srad: speckle-reducing anisotropic diffusion of an n x n image, the
 * iterative stencil of Rodinia's srad in its own form.  Each iteration
 * (--iters, default SRAD_ITERS): a reduction of the image's sum and sum of
 * squares (exact: 64-bit integer atomics), read back to the host, which
 * derives the speckle scale q0^2; a kernel computing every pixel's
 * diffusion coefficient; a kernel updating the image from its four
 * neighbours.
 *
 * Pixels are 16.16 fixed-point integers in [1, 255].  The per-pixel
 * arithmetic is single-precision float, each operation rounded once and in
 * source order (the device code is built with --fmad=false, the C code in
 * ISO C mode, which contracts nothing), then rounded to nearest-even fixed
 * point: float is exact to the last bit here because every operation is an
 * IEEE-rounded +, -, *, / with no library function in between. */
#ifndef TANDEM_BENCH_SRAD_H
#define TANDEM_BENCH_SRAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SRAD_ITERS 100            /* default --iters */
#define SRAD_LAMBDA 0.5f
#define SRAD_ONE 65536             /* 1.0 in 16.16 */
#define SRAD_LO (1 * SRAD_ONE)     /* pixels are clamped to [1, 255] */
#define SRAD_HI (255 * SRAD_ONE)
#define SRAD_MAX_N 16384

typedef struct srad_state {
    int n, iters;
    int32_t *in;        /* n x n, 16.16 fixed point */
    int32_t *out;       /* the image after iters iterations */
} srad_state;

int srad_setup(long size, int iters, void **state, char *err, size_t errlen);
int srad_run_host(void *state);
void srad_summarize(void *state, uint64_t *checksum, char *summary, size_t len);
void srad_teardown(void *state);

/* q0^2 = variance / mean^2 of the image, from the reduction's sums: sum of
 * the pixels, and sum of (pixel >> 8)^2.  Host code, shared by the device
 * path and the reference (it is the host half of the algorithm). */
float srad_q0sqr(uint64_t sum, uint64_t sum_sq, size_t npix);

#ifdef __cplusplus
}
#endif

#endif
