// lud on the device: for each step k (a 16-column block), lud_diagonal
// factors the diagonal tile, lud_perimeter the tiles to its right (U) and
// below it (L), and lud_internal updates the trailing submatrix.  All
// arithmetic is modulo LUD_P.  Sim twins: server/sim_kernels/bench_lud.c.
#include "app.h"
#include "bench.h"
#include "lud.h"

typedef unsigned long long u64;

// (a * b) mod p for a, b < p: p = 2^31 - 1 folds the high bits onto the
// low ones (2^31 = 1 mod p).
__device__ unsigned mulmod(unsigned a, unsigned b)
{
    u64 x = (u64)a * b;

    x = (x & LUD_P) + (x >> 31);
    x = (x & LUD_P) + (x >> 31);
    return x == LUD_P ? 0u : (unsigned)x;
}

__device__ unsigned submod(unsigned a, unsigned b)
{
    return a >= b ? a - b : a + (LUD_P - b);
}

__device__ unsigned inverse(unsigned a)
{
    unsigned r = 1, e = LUD_P - 2;

    for (; e; e >>= 1) {
        if (e & 1)
            r = mulmod(r, a);
        a = mulmod(a, a);
    }
    return r;
}

// One block of 16 threads; thread tx owns row tx of the tile.  The
// inverses of the pivots go to dinv for lud_perimeter.
__global__ void lud_diagonal(unsigned *a, unsigned *dinv, int n, int k)
{
    __shared__ unsigned t[LUD_BS][LUD_BS];
    __shared__ unsigned inv;
    int tx = threadIdx.x, o = k * LUD_BS;

    for (int i = 0; i < LUD_BS; i++)
        t[i][tx] = a[(o + i) * n + o + tx];
    __syncthreads();
    for (int i = 0; i < LUD_BS; i++) {
        if (tx == 0) {
            inv = inverse(t[i][i]);
            dinv[o + i] = inv;
        }
        __syncthreads();
        if (tx > i) {
            unsigned l = mulmod(t[tx][i], inv);
            t[tx][i] = l;
            for (int j = i + 1; j < LUD_BS; j++)
                t[tx][j] = submod(t[tx][j], mulmod(l, t[i][j]));
        }
        __syncthreads();
    }
    for (int i = 0; i < LUD_BS; i++)
        a[(o + i) * n + o + tx] = t[i][tx];
}

// Block b of 32 threads: threads 0-15 finish column tx of the U tile
// (k, k+1+b), threads 16-31 row tx-16 of the L tile (k+1+b, k).
__global__ void lud_perimeter(unsigned *a, const unsigned *dinv, int n, int k)
{
    __shared__ unsigned d[LUD_BS][LUD_BS], row[LUD_BS][LUD_BS], col[LUD_BS][LUD_BS];
    int tx = threadIdx.x, o = k * LUD_BS, b = (k + 1 + blockIdx.x) * LUD_BS;

    if (tx < LUD_BS) {
        for (int i = 0; i < LUD_BS; i++) {
            d[i][tx] = a[(o + i) * n + o + tx];
            row[i][tx] = a[(o + i) * n + b + tx];
        }
    } else {
        for (int i = 0; i < LUD_BS; i++)
            col[i][tx - LUD_BS] = a[(b + i) * n + o + tx - LUD_BS];
    }
    __syncthreads();
    if (tx < LUD_BS) {
        for (int i = 1; i < LUD_BS; i++) {
            u64 s = 0;
            for (int m = 0; m < i; m++)
                s += mulmod(d[i][m], row[m][tx]);
            row[i][tx] = submod(row[i][tx], (unsigned)(s % LUD_P));
        }
    } else {
        int r = tx - LUD_BS;
        for (int j = 0; j < LUD_BS; j++) {
            u64 s = 0;
            for (int m = 0; m < j; m++)
                s += mulmod(col[r][m], d[m][j]);
            col[r][j] = mulmod(submod(col[r][j], (unsigned)(s % LUD_P)), dinv[o + j]);
        }
    }
    __syncthreads();
    if (tx < LUD_BS) {
        for (int i = 0; i < LUD_BS; i++)
            a[(o + i) * n + b + tx] = row[i][tx];
    } else {
        for (int i = 0; i < LUD_BS; i++)
            a[(b + i) * n + o + tx - LUD_BS] = col[i][tx - LUD_BS];
    }
}

// Block (bx, by) of 16 x 16 threads: A(k+1+by, k+1+bx) -= L(k+1+by, k) U(k, k+1+bx).
__global__ void lud_internal(unsigned *a, int n, int k)
{
    __shared__ unsigned l[LUD_BS][LUD_BS], u[LUD_BS][LUD_BS];
    int tx = threadIdx.x, ty = threadIdx.y, o = k * LUD_BS;
    int r = (k + 1 + blockIdx.y) * LUD_BS, c = (k + 1 + blockIdx.x) * LUD_BS;

    l[ty][tx] = a[(r + ty) * n + o + tx];
    u[ty][tx] = a[(o + ty) * n + c + tx];
    __syncthreads();
    u64 s = 0;
    for (int m = 0; m < LUD_BS; m++)
        s += mulmod(l[ty][m], u[m][tx]);
    int idx = (r + ty) * n + c + tx;
    a[idx] = submod(a[idx], (unsigned)(s % LUD_P));
}

static int lud_run_device(void *state)
{
    lud_state *s = (lud_state *)state;
    size_t bytes = (size_t)s->n * (size_t)s->n * 4;
    int nb = s->n / LUD_BS;
    unsigned *a, *dinv;

    BENCH_CHECK(cudaMalloc(&a, bytes));
    BENCH_CHECK(cudaMalloc(&dinv, (size_t)s->n * 4));
    BENCH_CHECK(cudaMemcpy(a, s->in, bytes, cudaMemcpyHostToDevice));
    for (int k = 0; k < nb; k++) {
        lud_diagonal<<<1, LUD_BS>>>(a, dinv, s->n, k);
        if (k == nb - 1)
            break;
        lud_perimeter<<<nb - k - 1, 2 * LUD_BS>>>(a, dinv, s->n, k);
        lud_internal<<<dim3(nb - k - 1, nb - k - 1), dim3(LUD_BS, LUD_BS)>>>(a, s->n, k);
    }
    BENCH_CHECK(cudaGetLastError());
    BENCH_CHECK(cudaMemcpy(s->out, a, bytes, cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaFree(a));
    BENCH_CHECK(cudaFree(dinv));
    return 0;
}

int main(int argc, char **argv)
{
    static const bench_app app = { "lud", "SIZE: matrix order, a multiple of 16", 0, lud_setup,
                                   lud_run_device, lud_run_host, lud_summarize, lud_teardown };

    return bench_app_main(&app, argc, argv);
}
