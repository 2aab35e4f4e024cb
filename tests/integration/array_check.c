/* array-check: CUDA arrays (cudaMallocArray, cudaMalloc3DArray,
 * cudaArrayGetInfo, cudaGetChannelDesc, cudaFreeArray) and the copies into,
 * out of and between them (cudaMemcpy2DToArray/FromArray and their Async
 * forms, cudaMemcpy2DArrayToArray, cudaMemcpyToArray/FromArray,
 * cudaMemcpy3D with arrays), each checked against a host model of the
 * array's elements.  One line per check on stdout, the same natively and
 * through Tandem (docs/memory-layouts.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

static int failures;

typedef struct model {
    cudaArray_t a;
    unsigned char *host;       /* its elements, row after row */
    size_t row, rows, depth;   /* row bytes, rows per slice, slices */
} model;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 11u + seed * 29u + (i >> 8));
}

static void check(const char *what, cudaError_t e)
{
    if (e != cudaSuccess) {
        printf("%s: %s\n", what, cudaGetErrorName(e));
        failures++;
    }
}

static void same(const char *what, const void *got, const void *want, size_t n)
{
    int bad = memcmp(got, want, n) != 0;
    printf("%s: %s\n", what, bad ? "MISMATCH" : "ok");
    failures += bad;
}

/* Reads the whole array back through cudaMemcpy3D and compares. */
static void verify(const char *what, const model *m)
{
    unsigned char *back = calloc(1, m->row * m->rows * m->depth);
    struct cudaMemcpy3DParms p;
    struct cudaChannelFormatDesc d;
    struct cudaExtent e;
    unsigned flags;
    size_t elem;

    memset(&p, 0, sizeof(p));
    check("cudaArrayGetInfo", cudaArrayGetInfo(&d, &e, &flags, m->a));
    elem = (size_t)(d.x + d.y + d.z + d.w) / 8;
    p.srcArray = m->a;
    p.dstPtr = (struct cudaPitchedPtr){ .ptr = back, .pitch = m->row, .xsize = m->row / elem, .ysize = m->rows };
    p.extent = (struct cudaExtent){ .width = m->row / elem, .height = m->rows, .depth = m->depth };
    p.kind = cudaMemcpyDeviceToHost;
    check("read back", cudaMemcpy3D(&p));
    same(what, back, m->host, m->row * m->rows * m->depth);
    free(back);
}

static void copy2d_host(unsigned char *dst, size_t dpitch, const unsigned char *src, size_t spitch, size_t w,
                        size_t h)
{
    for (size_t y = 0; y < h; y++)
        memmove(dst + y * dpitch, src + y * spitch, w);
}

static void make(model *m, struct cudaChannelFormatDesc desc, size_t w, size_t h, size_t d, unsigned seed)
{
    size_t elem = (size_t)(desc.x + desc.y + desc.z + desc.w) / 8;
    struct cudaExtent e = { .width = w, .height = h, .depth = d };

    m->row = w * elem;
    m->rows = h ? h : 1;
    m->depth = d ? d : 1;
    m->host = malloc(m->row * m->rows * m->depth);
    fill(m->host, m->row * m->rows * m->depth, seed);
    if (d)
        check("cudaMalloc3DArray", cudaMalloc3DArray(&m->a, &desc, e, 0));
    else
        check("cudaMallocArray", cudaMallocArray(&m->a, &desc, w, h, cudaArraySurfaceLoadStore));
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    p.srcPtr = (struct cudaPitchedPtr){ .ptr = m->host, .pitch = m->row, .xsize = w, .ysize = m->rows };
    p.dstArray = m->a;
    p.extent = (struct cudaExtent){ .width = w, .height = m->rows, .depth = m->depth };
    p.kind = cudaMemcpyHostToDevice;
    check("fill", cudaMemcpy3D(&p));
}

static void info(void)
{
    cudaArray_t a;
    struct cudaChannelFormatDesc d = cudaCreateChannelDesc(32, 32, 0, 0, cudaChannelFormatKindFloat), got;
    struct cudaExtent e;
    unsigned flags = 99;

    check("cudaMallocArray", cudaMallocArray(&a, &d, 40, 0, cudaArraySurfaceLoadStore));
    check("cudaArrayGetInfo", cudaArrayGetInfo(&got, &e, &flags, a));
    printf("float2 array of 40: desc %d %d %d %d kind %d, extent %zu %zu %zu, flags %u\n", got.x, got.y, got.z,
           got.w, (int)got.f, e.width, e.height, e.depth, flags);
    memset(&got, 0, sizeof(got));
    check("cudaGetChannelDesc", cudaGetChannelDesc(&got, a));
    printf("cudaGetChannelDesc: %d %d %d %d kind %d\n", got.x, got.y, got.z, got.w, (int)got.f);
    check("cudaFreeArray", cudaFreeArray(a));
    printf("cudaFreeArray(NULL): %s\n", cudaGetErrorName(cudaFreeArray(NULL)));
    d = cudaCreateChannelDesc(8, 16, 0, 0, cudaChannelFormatKindUnsigned);
    printf("channels of unequal width: %s\n", cudaGetErrorName(cudaMallocArray(&a, &d, 8, 8, 0)));
    cudaGetLastError();
}

static void two_d(cudaStream_t stream)
{
    model a, b;
    struct cudaChannelFormatDesc f = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    size_t spitch = 171, H = 19;
    unsigned char *src = malloc(spitch * H), *out = malloc(spitch * H), *want = malloc(spitch * H);
    void *lin;
    size_t lpitch;

    make(&a, f, 37, 19, 0, 1);
    make(&b, f, 50, 25, 0, 2);
    verify("2D float array filled", &a);
    fill(src, spitch * H, 3);

    check("2D to array", cudaMemcpy2DToArray(a.a, 3 * 4, 2, src, spitch, 30 * 4, 15, cudaMemcpyHostToDevice));
    copy2d_host(a.host + 2 * a.row + 12, a.row, src, spitch, 120, 15);
    verify("2D host to array at an offset", &a);

    fill(out, spitch * H, 4);
    memcpy(want, out, spitch * H);
    check("2D from array", cudaMemcpy2DFromArray(out + 1, spitch, a.a, 4, 1, 36 * 4, 18, cudaMemcpyDeviceToHost));
    copy2d_host(want + 1, spitch, a.host + a.row + 4, a.row, 144, 18);
    same("2D array to host at an offset", out, want, spitch * H);

    check("cudaMallocPitch", cudaMallocPitch(&lin, &lpitch, 200, 30));
    check("2D array to device", cudaMemcpy2DFromArray(lin, lpitch, a.a, 0, 0, 37 * 4, 19, cudaMemcpyDeviceToDevice));
    check("2D device to array", cudaMemcpy2DToArray(b.a, 8, 3, lin, lpitch, 37 * 4, 19, cudaMemcpyDefault));
    copy2d_host(b.host + 3 * b.row + 8, b.row, a.host, a.row, 148, 19);
    verify("2D array to device to array", &b);

    check("2D array to array", cudaMemcpy2DArrayToArray(a.a, 0, 0, b.a, 40, 5, 20 * 4, 10,
                                                         cudaMemcpyDeviceToDevice));
    copy2d_host(a.host, a.row, b.host + 5 * b.row + 40, b.row, 80, 10);
    verify("2D array to array", &a);

    check("2D async to array", cudaMemcpy2DToArrayAsync(b.a, 0, 20, src, spitch, 160, 5, cudaMemcpyHostToDevice,
                                                        stream));
    copy2d_host(b.host + 20 * b.row, b.row, src, spitch, 160, 5);
    memset(out, 0, spitch * H);
    check("2D async from array", cudaMemcpy2DFromArrayAsync(out, spitch, b.a, 0, 18, 160, 7, cudaMemcpyDeviceToHost,
                                                            stream));
    check("stream synchronize", cudaStreamSynchronize(stream));
    memset(want, 0, spitch * H);
    copy2d_host(want, spitch, b.host + 18 * b.row, b.row, 160, 7);
    same("2D async to and from an array", out, want, spitch * H);

    /* the deprecated 1D forms run on across rows (still exported; programs call them) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    check("to array, 1D", cudaMemcpyToArray(a.a, 100, 4, src, 3 * a.row + 10, cudaMemcpyHostToDevice));
    memcpy(a.host + 4 * a.row + 100, src, 3 * a.row + 10);
    verify("cudaMemcpyToArray across rows", &a);
    memset(out, 0, spitch * H);
    check("from array, 1D", cudaMemcpyFromArray(out, a.a, 60, 2, 2 * a.row + 30, cudaMemcpyDeviceToHost));
    same("cudaMemcpyFromArray across rows", out, a.host + 2 * a.row + 60, 2 * a.row + 30);
#pragma GCC diagnostic pop

    printf("2D to array past its width: %s\n",
           cudaGetErrorName(cudaMemcpy2DToArray(a.a, 4, 0, src, spitch, 37 * 4, 2, cudaMemcpyHostToDevice)));
    printf("2D from array past its height: %s\n",
           cudaGetErrorName(cudaMemcpy2DFromArray(out, spitch, a.a, 0, 10, 16, 10, cudaMemcpyDeviceToHost)));
    cudaGetLastError();

    cudaFree(lin);
    check("cudaFreeArray", cudaFreeArray(a.a));
    check("cudaFreeArray", cudaFreeArray(b.a));
    free(a.host);
    free(b.host);
    free(src);
    free(out);
    free(want);
}

static void three_d(void)
{
    model m;
    struct cudaChannelFormatDesc u4 = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    size_t hp = 90, hy = 9, hz = 5;
    unsigned char *src = malloc(hp * hy * hz), *out = calloc(1, hp * hy * hz), *want = calloc(1, hp * hy * hz);
    struct cudaMemcpy3DParms p;

    make(&m, u4, 16, 8, 4, 5);
    verify("3D uchar4 array filled", &m);
    fill(src, hp * hy * hz, 6);
    memset(&p, 0, sizeof(p));
    p.srcPtr = (struct cudaPitchedPtr){ .ptr = src, .pitch = hp, .xsize = 20, .ysize = hy };
    p.srcPos = (struct cudaPos){ .x = 4, .y = 1, .z = 1 };
    p.dstArray = m.a;
    p.dstPos = (struct cudaPos){ .x = 2, .y = 3, .z = 1 };
    p.extent = (struct cudaExtent){ .width = 12, .height = 5, .depth = 3 };
    p.kind = cudaMemcpyHostToDevice;
    check("3D host to array", cudaMemcpy3D(&p));
    for (size_t z = 0; z < 3; z++)
        copy2d_host(m.host + ((1 + z) * m.rows + 3) * m.row + 8, m.row, src + ((1 + z) * hy + 1) * hp + 4, hp, 48, 5);
    verify("3D host to array at positions", &m);

    memset(&p, 0, sizeof(p));
    p.srcArray = m.a;
    p.srcPos = (struct cudaPos){ .x = 1, .y = 2, .z = 0 };
    p.dstPtr = (struct cudaPitchedPtr){ .ptr = out, .pitch = hp, .xsize = 20, .ysize = hy };
    p.dstPos = (struct cudaPos){ .x = 3, .y = 0, .z = 2 };
    p.extent = (struct cudaExtent){ .width = 15, .height = 6, .depth = 3 };
    p.kind = cudaMemcpyDeviceToHost;
    check("3D array to host", cudaMemcpy3D(&p));
    for (size_t z = 0; z < 3; z++)
        copy2d_host(want + ((2 + z) * hy) * hp + 3, hp, m.host + (z * m.rows + 2) * m.row + 4, m.row, 60, 6);
    same("3D array to host at positions", out, want, hp * hy * hz);

    check("cudaFreeArray", cudaFreeArray(m.a));
    free(m.host);
    free(src);
    free(out);
    free(want);
}

int main(void)
{
    cudaStream_t stream;

    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        fprintf(stderr, "array-check: cannot create a stream\n");
        return 1;
    }
    info();
    two_d(stream);
    three_d();
    cudaStreamDestroy(stream);
    printf("%s\n", failures ? "FAILED" : "all array checks passed");
    return failures ? 1 : 0;
}
