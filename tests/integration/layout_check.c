/* layout-check: pitched and 3D linear memory (cudaMallocPitch, cudaMalloc3D,
 * cudaMemcpy2D/3D of every kind and their Async forms, cudaMemset2D/3D),
 * with odd pitches and offsets, copies larger than one protocol chunk (so
 * they are split by slices, rows and parts of rows) and the pitch checks
 * CUDA makes.  Every device allocation has a host model the same
 * operations are applied to; each check reads the whole allocation back
 * with a plain cudaMemcpy and compares.  One line per check on stdout, the
 * same natively and through Tandem (docs/memory-layouts.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

static int failures;

/* cuda_runtime_api.h's make_cuda* helpers are C++ only. */
static struct cudaExtent extent(size_t w, size_t h, size_t d)
{
    return (struct cudaExtent){ .width = w, .height = h, .depth = d };
}

static struct cudaPos pos(size_t x, size_t y, size_t z)
{
    return (struct cudaPos){ .x = x, .y = y, .z = z };
}

static struct cudaPitchedPtr pitched_ptr(void *p, size_t pitch, size_t xsize, size_t ysize)
{
    return (struct cudaPitchedPtr){ .ptr = p, .pitch = pitch, .xsize = xsize, .ysize = ysize };
}

typedef struct model {
    unsigned char *dev;   /* the device allocation */
    unsigned char *host;  /* what it must hold */
    size_t pitch, rows, bytes;
} model;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7u + seed * 13u + (i >> 9));
}

static void check(const char *what, cudaError_t e)
{
    if (e != cudaSuccess) {
        printf("%s: %s\n", what, cudaGetErrorName(e));
        failures++;
    }
}

static void verify(const char *what, const model *m)
{
    unsigned char *back = malloc(m->bytes);
    cudaError_t e = cudaMemcpy(back, m->dev, m->bytes, cudaMemcpyDeviceToHost);

    if (e != cudaSuccess) {
        printf("%s: read back: %s\n", what, cudaGetErrorName(e));
        failures++;
    } else if (memcmp(back, m->host, m->bytes) != 0) {
        size_t i = 0;
        while (back[i] == m->host[i])
            i++;
        printf("%s: MISMATCH at byte %zu (row %zu)\n", what, i, i / m->pitch);
        failures++;
    } else {
        printf("%s: ok\n", what);
    }
    free(back);
}

static void pitched(model *m, size_t width, size_t height, unsigned seed)
{
    check("cudaMallocPitch", cudaMallocPitch((void **)&m->dev, &m->pitch, width, height));
    m->rows = height;
    m->bytes = m->pitch * height;
    m->host = malloc(m->bytes);
    fill(m->host, m->bytes, seed);
    check("fill", cudaMemcpy(m->dev, m->host, m->bytes, cudaMemcpyHostToDevice));
    if (m->pitch < width || m->pitch % 32 != 0)
        printf("pitch of a %zu-byte row: not a multiple of 32 at least the width\n", width);
}

/* The model's side of a 2D copy or memset. */
static void copy2d_host(unsigned char *dst, size_t dpitch, const unsigned char *src, size_t spitch, size_t w,
                        size_t h)
{
    for (size_t y = 0; y < h; y++)
        memmove(dst + y * dpitch, src + y * spitch, w);
}

static void set2d_host(unsigned char *dst, size_t pitch, int v, size_t w, size_t h)
{
    for (size_t y = 0; y < h; y++)
        memset(dst + y * pitch, v, w);
}

static void free_model(model *m)
{
    cudaFree(m->dev);
    free(m->host);
}

static void two_d(cudaStream_t stream)
{
    model a, b;
    size_t W = 100, H = 37, spitch = 123, dpitch = 111;
    unsigned char *src = malloc(spitch * H), *out = malloc(dpitch * H), *want = malloc(dpitch * H);

    pitched(&a, W, H, 1);
    pitched(&b, 300, 50, 2);
    fill(src, spitch * H, 3);

    /* host to device at an offset, with a source pitch that is no alignment */
    check("2D host to device", cudaMemcpy2D(a.dev + 2 * a.pitch + 5, a.pitch, src, spitch, W - 9, H - 4,
                                            cudaMemcpyHostToDevice));
    copy2d_host(a.host + 2 * a.pitch + 5, a.pitch, src, spitch, W - 9, H - 4);
    verify("2D host to device, odd source pitch, offset destination", &a);

    /* device to host into an odd pitch */
    fill(out, dpitch * H, 4);
    memcpy(want, out, dpitch * H);
    check("2D device to host", cudaMemcpy2D(out + 1, dpitch, a.dev + 3, a.pitch, W - 3, H, cudaMemcpyDeviceToHost));
    copy2d_host(want + 1, dpitch, a.host + 3, a.pitch, W - 3, H);
    printf("2D device to host, odd destination pitch: %s\n", memcmp(out, want, dpitch * H) ? "MISMATCH" : "ok");
    failures += memcmp(out, want, dpitch * H) != 0;

    /* device to device between two pitches, and cudaMemcpyDefault */
    check("2D device to device", cudaMemcpy2D(b.dev + 7 * b.pitch + 11, b.pitch, a.dev + a.pitch + 1, a.pitch, 60,
                                              30, cudaMemcpyDeviceToDevice));
    copy2d_host(b.host + 7 * b.pitch + 11, b.pitch, a.host + a.pitch + 1, a.pitch, 60, 30);
    check("2D default", cudaMemcpy2D(b.dev + 250, b.pitch, src, spitch, 40, 20, cudaMemcpyDefault));
    copy2d_host(b.host + 250, b.pitch, src, spitch, 40, 20);
    verify("2D device to device and cudaMemcpyDefault", &b);

    /* memset of a sub-rectangle */
    check("2D memset", cudaMemset2D(a.dev + 4 * a.pitch + 9, a.pitch, 0x5a, 33, 17));
    set2d_host(a.host + 4 * a.pitch + 9, a.pitch, 0x5a, 33, 17);
    verify("2D memset", &a);

    /* the same on a stream, asynchronously */
    check("2D async host to device", cudaMemcpy2DAsync(b.dev + 1, b.pitch, src, spitch, 99, 36,
                                                       cudaMemcpyHostToDevice, stream));
    copy2d_host(b.host + 1, b.pitch, src, spitch, 99, 36);
    check("2D async memset", cudaMemset2DAsync(b.dev + 20 * b.pitch, b.pitch, 0xc3, 299, 3, stream));
    set2d_host(b.host + 20 * b.pitch, b.pitch, 0xc3, 299, 3);
    check("2D async device to device", cudaMemcpy2DAsync(a.dev, a.pitch, b.dev + 2, b.pitch, 98, 30,
                                                         cudaMemcpyDeviceToDevice, stream));
    copy2d_host(a.host, a.pitch, b.host + 2, b.pitch, 98, 30);
    fill(out, dpitch * H, 5);
    memcpy(want, out, dpitch * H);
    check("2D async device to host", cudaMemcpy2DAsync(out, dpitch, a.dev, a.pitch, W, H, cudaMemcpyDeviceToHost,
                                                       stream));
    check("stream synchronize", cudaStreamSynchronize(stream));
    copy2d_host(want, dpitch, a.host, a.pitch, W, H);
    printf("2D async round trip: %s\n", memcmp(out, want, dpitch * H) ? "MISMATCH" : "ok");
    failures += memcmp(out, want, dpitch * H) != 0;
    verify("2D async, first allocation", &a);
    verify("2D async, second allocation", &b);

    /* host to host */
    fill(out, dpitch * H, 6);
    memcpy(want, out, dpitch * H);
    check("2D host to host", cudaMemcpy2D(out, dpitch, src, spitch, 90, H, cudaMemcpyHostToHost));
    copy2d_host(want, dpitch, src, spitch, 90, H);
    printf("2D host to host: %s\n", memcmp(out, want, dpitch * H) ? "MISMATCH" : "ok");
    failures += memcmp(out, want, dpitch * H) != 0;

    free_model(&a);
    free_model(&b);
    free(src);
    free(out);
    free(want);
}

/* Copies larger than one protocol chunk (8 MiB): by rows, and a row wider
 * than a chunk by parts of the row. */
static void large(void)
{
    model a, b;
    size_t W = 3000, H = 3000, spitch = 3001;
    unsigned char *src = malloc(spitch * H), *out = malloc(spitch * H);

    pitched(&a, W, H, 7);
    fill(src, spitch * H, 8);
    check("large 2D host to device", cudaMemcpy2D(a.dev, a.pitch, src, spitch, W, H, cudaMemcpyHostToDevice));
    copy2d_host(a.host, a.pitch, src, spitch, W, H);
    verify("2D of 9 MB by rows", &a);
    memcpy(out, src, spitch * H);   /* the padding byte of each row stays */
    check("large 2D device to host", cudaMemcpy2D(out, spitch, a.dev, a.pitch, W, H, cudaMemcpyDeviceToHost));
    copy2d_host(src, spitch, a.host, a.pitch, W, H);
    printf("2D of 9 MB back by rows: %s\n", memcmp(out, src, spitch * H) ? "MISMATCH" : "ok");
    failures += memcmp(out, src, spitch * H) != 0;
    free_model(&a);
    free(src);
    free(out);

    W = (9u << 20) + 3;
    H = 2;
    src = malloc(W * 2 * H);
    out = malloc(W * 2 * H);
    pitched(&b, W, H, 9);
    fill(src, W * 2 * H, 10);
    check("wide 2D host to device", cudaMemcpy2D(b.dev, b.pitch, src, 2 * W, W, H, cudaMemcpyHostToDevice));
    copy2d_host(b.host, b.pitch, src, 2 * W, W, H);
    verify("2D of rows wider than a chunk", &b);
    memset(out, 0, W * 2 * H);
    check("wide 2D device to host", cudaMemcpy2D(out, 2 * W, b.dev, b.pitch, W, H, cudaMemcpyDeviceToHost));
    memset(src, 0, W * 2 * H);
    copy2d_host(src, 2 * W, b.host, b.pitch, W, H);
    printf("2D of rows wider than a chunk, back: %s\n", memcmp(out, src, W * 2 * H) ? "MISMATCH" : "ok");
    failures += memcmp(out, src, W * 2 * H) != 0;
    free_model(&b);
    free(src);
    free(out);
}

/* The model of a 3D copy between pitched pointers at positions. */
static unsigned char *at3(struct cudaPitchedPtr p, struct cudaPos pos, size_t x, size_t y, size_t z)
{
    return (unsigned char *)p.ptr + ((pos.z + z) * p.ysize + pos.y + y) * p.pitch + pos.x + x;
}

static void copy3d_host(struct cudaPitchedPtr d, struct cudaPos dp, struct cudaPitchedPtr s, struct cudaPos sp,
                        struct cudaExtent e)
{
    for (size_t z = 0; z < e.depth; z++)
        for (size_t y = 0; y < e.height; y++)
            memmove(at3(d, dp, 0, y, z), at3(s, sp, 0, y, z), e.width);
}

static struct cudaPitchedPtr host_twin(const model *m, size_t xsize)
{
    return pitched_ptr(m->host, m->pitch, xsize, m->rows);
}

static void three_d(cudaStream_t stream)
{
    struct cudaExtent ext = extent(64, 10, 5);
    struct cudaPitchedPtr p, q;
    model a, b;
    size_t hp = 70, hy = 12, hz = 6;
    unsigned char *src = malloc(hp * hy * hz), *out = malloc(hp * hy * hz), *want = malloc(hp * hy * hz);
    struct cudaPitchedPtr hs = pitched_ptr(src, hp, 64, hy), ho = pitched_ptr(out, hp, 64, hy),
                          hw = pitched_ptr(want, hp, 64, hy);

    check("cudaMalloc3D", cudaMalloc3D(&p, ext));
    check("cudaMalloc3D", cudaMalloc3D(&q, ext));
    if (p.pitch < 64 || p.xsize != 64 || p.ysize != 10)
        printf("cudaMalloc3D: pitch %zu xsize %zu ysize %zu\n", p.pitch, p.xsize, p.ysize);
    a = (model){ p.ptr, malloc(p.pitch * 50), p.pitch, 10, p.pitch * 50 };
    b = (model){ q.ptr, malloc(q.pitch * 50), q.pitch, 10, q.pitch * 50 };
    fill(a.host, a.bytes, 11);
    fill(b.host, b.bytes, 12);
    check("fill", cudaMemcpy(a.dev, a.host, a.bytes, cudaMemcpyHostToDevice));
    check("fill", cudaMemcpy(b.dev, b.host, b.bytes, cudaMemcpyHostToDevice));
    fill(src, hp * hy * hz, 13);

    struct cudaMemcpy3DParms h2d = { 0 };
    h2d.srcPtr = hs;
    h2d.srcPos = pos(3, 1, 1);
    h2d.dstPtr = p;
    h2d.dstPos = pos(2, 3, 1);
    h2d.extent = extent(50, 6, 4);
    h2d.kind = cudaMemcpyHostToDevice;
    check("3D host to device", cudaMemcpy3D(&h2d));
    copy3d_host(host_twin(&a, 64), h2d.dstPos, hs, h2d.srcPos, h2d.extent);
    verify("3D host to device at positions", &a);

    struct cudaMemcpy3DParms d2d = { 0 };
    d2d.srcPtr = p;
    d2d.srcPos = pos(1, 2, 0);
    d2d.dstPtr = q;
    d2d.dstPos = pos(5, 0, 2);
    d2d.extent = extent(40, 8, 3);
    d2d.kind = cudaMemcpyDeviceToDevice;
    check("3D device to device", cudaMemcpy3DAsync(&d2d, stream));
    copy3d_host(host_twin(&b, 64), d2d.dstPos, host_twin(&a, 64), d2d.srcPos, d2d.extent);
    struct cudaPitchedPtr qs = q;
    qs.ptr = (char *)q.ptr + q.pitch * 10;   /* slices 1.. */
    check("3D memset", cudaMemset3DAsync(qs, 0x77, extent(30, 4, 2), stream));
    for (size_t z = 1; z < 3; z++)
        set2d_host(b.host + z * 10 * b.pitch, b.pitch, 0x77, 30, 4);
    check("stream synchronize", cudaStreamSynchronize(stream));
    verify("3D device to device and memset on a stream", &b);

    struct cudaMemcpy3DParms d2h = { 0 };
    fill(out, hp * hy * hz, 14);
    memcpy(want, out, hp * hy * hz);
    d2h.srcPtr = q;
    d2h.srcPos = pos(0, 1, 1);
    d2h.dstPtr = ho;
    d2h.dstPos = pos(4, 2, 0);
    d2h.extent = extent(64, 9, 4);
    d2h.kind = cudaMemcpyDefault;
    check("3D device to host", cudaMemcpy3D(&d2h));
    copy3d_host(hw, d2h.dstPos, host_twin(&b, 64), d2h.srcPos, d2h.extent);
    printf("3D device to host at positions (cudaMemcpyDefault): %s\n",
           memcmp(out, want, hp * hy * hz) ? "MISMATCH" : "ok");
    failures += memcmp(out, want, hp * hy * hz) != 0;

    check("3D memset, whole", cudaMemset3D(p, 0, ext));
    memset(a.host, 0, a.bytes);
    for (size_t z = 0; z < 5; z++)   /* the pitch's padding beyond the width stays */
        for (size_t y = 0; y < 10; y++)
            fill(a.host + (z * 10 + y) * a.pitch + 64, a.pitch - 64, 0);
    check("read padding", cudaMemcpy2D(a.host + 64, a.pitch, a.dev + 64, a.pitch, a.pitch - 64, 50,
                                       cudaMemcpyDeviceToHost));
    verify("3D memset of the whole extent", &a);

    free_model(&a);
    free_model(&b);
    free(src);
    free(out);
    free(want);
}

/* What CUDA refuses before any copy: a pitch smaller than the width. */
static void refusals(void)
{
    void *d;
    size_t pitch;
    char host[256];

    check("cudaMallocPitch", cudaMallocPitch(&d, &pitch, 64, 4));
    printf("2D copy with a destination pitch below the width: %s\n",
           cudaGetErrorName(cudaMemcpy2D(d, 32, host, 64, 64, 4, cudaMemcpyHostToDevice)));
    printf("2D copy with a source pitch below the width: %s\n",
           cudaGetErrorName(cudaMemcpy2D(host, 64, d, 16, 64, 4, cudaMemcpyDeviceToHost)));
    printf("last error is the last refusal: %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("empty 2D copy: %s\n", cudaGetErrorName(cudaMemcpy2D(d, pitch, host, 64, 0, 4, cudaMemcpyHostToDevice)));
    printf("cudaMallocPitch without a pitch pointer: %s\n", cudaGetErrorName(cudaMallocPitch(&d, NULL, 64, 4)));
    cudaGetLastError();
    cudaFree(d);
}

int main(void)
{
    cudaStream_t stream;

    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        fprintf(stderr, "layout-check: cannot create a stream\n");
        return 1;
    }
    two_d(stream);
    large();
    three_d(stream);
    refusals();
    cudaStreamDestroy(stream);
    printf("%s\n", failures ? "FAILED" : "all layout checks passed");
    return failures ? 1 : 0;
}
