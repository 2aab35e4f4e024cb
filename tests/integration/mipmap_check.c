/* mipmap-check: mipmapped arrays and the rest of the array surface
 * (docs/memory-layouts.md "Mipmapped arrays"): cudaMallocMipmappedArray,
 * cudaGetMipmappedArrayLevel, cudaFreeMipmappedArray, a mip chain built
 * level by level through copies and read back whole, 3D copies with the
 * levels of a 3D mipmapped array, cudaMemcpyArrayToArray across rows of
 * unequal width, cudaMemcpy3DPeer[Async] on device 0, a texture object over
 * a mipmapped array, and the refusals CUDA documents (sparse properties,
 * memory requirements and planes of ordinary arrays, bad levels and
 * devices).  Host code only; one line per check, the same natively and
 * through Tandem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

static int failures;

/* driver_functions.h's make_cuda* are for C++ and nvcc; plain C spells them. */
static struct cudaExtent make_cudaExtent(size_t w, size_t h, size_t d)
{
    return (struct cudaExtent){ .width = w, .height = h, .depth = d };
}

static struct cudaPitchedPtr make_cudaPitchedPtr(void *p, size_t pitch, size_t xsize, size_t ysize)
{
    return (struct cudaPitchedPtr){ .ptr = p, .pitch = pitch, .xsize = xsize, .ysize = ysize };
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

/* A refusal CUDA documents: prints the error, counts a failure if it is
 * not the one wanted. */
static void refused(const char *what, cudaError_t got, cudaError_t want)
{
    printf("%s: %s\n", what, cudaGetErrorName(got));
    failures += got != want;
    (void)cudaGetLastError();
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 13u + seed * 31u + (i >> 7));
}

/* ---- a 2D float mip chain, built level by level by copies ---- */

/* Level l + 1 from level l: each texel the mean of the 2x2 block it
 * covers (clamped at an odd edge). */
static void reduce(const float *src, size_t sw, size_t sh, float *dst, size_t dw, size_t dh)
{
    for (size_t y = 0; y < dh; y++)
        for (size_t x = 0; x < dw; x++) {
            size_t x0 = 2 * x < sw ? 2 * x : sw - 1, y0 = 2 * y < sh ? 2 * y : sh - 1;
            size_t x1 = x0 + 1 < sw ? x0 + 1 : x0, y1 = y0 + 1 < sh ? y0 + 1 : y0;
            dst[y * dw + x] = (src[y0 * sw + x0] + src[y0 * sw + x1] + src[y1 * sw + x0] + src[y1 * sw + x1]) / 4;
        }
}

static void chain_2d(void)
{
    enum { W = 64, H = 40, ASKED = 12 };
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaMipmappedArray_t mm = NULL;
    float *model[8] = { 0 }, *back = calloc(W * H, sizeof(float));
    size_t w = W, h = H, pw = W, ph = H;   /* this level's and the previous one's */
    unsigned levels = 0;
    double sum = 0;

    check("cudaMallocMipmappedArray 2D", cudaMallocMipmappedArray(&mm, &desc, make_cudaExtent(W, H, 0), ASKED, 0));
    for (unsigned l = 0; l < 8; l++) {
        cudaArray_t level = NULL;
        struct cudaChannelFormatDesc d;
        struct cudaExtent e;
        unsigned flags;
        cudaError_t err = cudaGetMipmappedArrayLevel(&level, mm, l);
        if (err != cudaSuccess) {
            refused("level past the last (clamped count)", err, cudaErrorInvalidValue);
            break;
        }
        levels++;
        check("cudaArrayGetInfo of a level", cudaArrayGetInfo(&d, &e, &flags, level));
        printf("level %u: %zu x %zu x %zu, %d-bit kind %d\n", l, e.width, e.height, e.depth, d.x, (int)d.f);
        if (e.width != w || e.height != h) {
            printf("level %u: wanted %zu x %zu\n", l, w, h);
            failures++;
        }
        model[l] = malloc(w * h * sizeof(float));
        if (l == 0)
            for (size_t i = 0; i < w * h; i++)
                model[0][i] = (float)((i * 7) % 101);
        else
            reduce(model[l - 1], pw, ph, model[l], w, h);
        /* Level l + 1 from the device's level l, read back: a chain built by copies. */
        if (l > 0) {
            cudaArray_t prev = NULL;
            float *down = malloc(w * h * sizeof(float));
            check("previous level", cudaGetMipmappedArrayLevel(&prev, mm, l - 1));
            check("read the previous level", cudaMemcpy2DFromArray(back, pw * sizeof(float), prev, 0, 0,
                                                                   pw * sizeof(float), ph, cudaMemcpyDeviceToHost));
            reduce(back, pw, ph, down, w, h);
            check("write the level", cudaMemcpy2DToArray(level, 0, 0, down, w * sizeof(float), w * sizeof(float), h,
                                                         cudaMemcpyHostToDevice));
            free(down);
        } else {
            check("write level 0", cudaMemcpy2DToArray(level, 0, 0, model[0], w * sizeof(float), w * sizeof(float),
                                                       h, cudaMemcpyHostToDevice));
        }
        pw = w;
        ph = h;
        w = w > 1 ? w / 2 : 1;
        h = h > 1 ? h / 2 : 1;
    }
    printf("levels of a 64 x 40 mipmapped array asked for %d: %u\n", ASKED, levels);
    /* Every level back, whole, against the model. */
    w = W;
    h = H;
    for (unsigned l = 0; l < levels; l++) {
        cudaArray_t level = NULL;
        char what[64];
        check("level again", cudaGetMipmappedArrayLevel(&level, mm, l));
        memset(back, 0, W * H * sizeof(float));
        check("read a level", cudaMemcpy2DFromArray(back, w * sizeof(float), level, 0, 0, w * sizeof(float), h,
                                                    cudaMemcpyDeviceToHost));
        snprintf(what, sizeof(what), "level %u read back", l);
        same(what, back, model[l], w * h * sizeof(float));
        for (size_t i = 0; i < w * h; i++)
            sum += back[i];
        w = w > 1 ? w / 2 : 1;
        h = h > 1 ? h / 2 : 1;
    }
    printf("mip chain checksum: %.4f\n", sum);

    {
        struct cudaResourceDesc rd = { .resType = cudaResourceTypeMipmappedArray };
        struct cudaResourceDesc got;
        struct cudaTextureDesc td;
        cudaTextureObject_t t = 0;
        memset(&td, 0, sizeof(td));
        rd.res.mipmap.mipmap = mm;
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModeLinear;
        td.mipmapFilterMode = cudaFilterModeLinear;
        td.normalizedCoords = 1;
        td.maxMipmapLevelClamp = (float)(levels - 1);
        check("texture object over a mipmapped array", cudaCreateTextureObject(&t, &rd, &td, NULL));
        check("its resource", cudaGetTextureObjectResourceDesc(&got, t));
        printf("texture over a mipmapped array: type %d, the same mipmapped array: %s\n", (int)got.resType,
               got.res.mipmap.mipmap == mm ? "yes" : "no");
        check("destroy it", cudaDestroyTextureObject(t));
    }
    {
        struct cudaArraySparseProperties sp;
        struct cudaArrayMemoryRequirements mr;
        refused("sparse properties of a mipmapped array made without cudaArraySparse",
                cudaMipmappedArrayGetSparseProperties(&sp, mm), cudaErrorInvalidValue);
        refused("memory requirements of a mipmapped array made without cudaArrayDeferredMapping",
                cudaMipmappedArrayGetMemoryRequirements(&mr, mm, 0), cudaErrorInvalidValue);
    }
    {
        cudaArray_t level = NULL;
        refused("a level of no mipmapped array", cudaGetMipmappedArrayLevel(&level, NULL, 0),
                cudaErrorInvalidResourceHandle);
    }
    check("cudaFreeMipmappedArray", cudaFreeMipmappedArray(mm));
    for (unsigned l = 0; l < 8; l++)
        free(model[l]);
    free(back);
}

/* ---- 3D copies with the levels of a 3D mipmapped array ---- */

static void levels_3d(void)
{
    enum { W = 16, H = 8, D = 4 };
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    cudaMipmappedArray_t mm = NULL;
    size_t w = W, h = H, d = D;

    check("cudaMallocMipmappedArray 3D", cudaMallocMipmappedArray(&mm, &desc, make_cudaExtent(W, H, D), 3, 0));
    for (unsigned l = 0; l < 3; l++) {
        size_t n = w * h * d * 4;
        unsigned char *src = malloc(n), *back = calloc(1, n);
        struct cudaMemcpy3DParms p;
        cudaArray_t level = NULL;
        char what[64];
        fill(src, n, l + 1);
        check("3D level", cudaGetMipmappedArrayLevel(&level, mm, l));
        memset(&p, 0, sizeof(p));
        p.srcPtr = make_cudaPitchedPtr(src, w * 4, w, h);
        p.dstArray = level;
        p.extent = make_cudaExtent(w, h, d);
        p.kind = cudaMemcpyHostToDevice;
        check("3D to a level", cudaMemcpy3D(&p));
        memset(&p, 0, sizeof(p));
        p.srcArray = level;
        p.dstPtr = make_cudaPitchedPtr(back, w * 4, w, h);
        p.extent = make_cudaExtent(w, h, d);
        p.kind = cudaMemcpyDeviceToHost;
        check("3D from a level", cudaMemcpy3D(&p));
        snprintf(what, sizeof(what), "3D level %u (%zu x %zu x %zu) round trip", l, w, h, d);
        same(what, back, src, n);
        free(src);
        free(back);
        w /= 2;
        h /= 2;
        d = d > 1 ? d / 2 : 1;
    }
    check("cudaFreeMipmappedArray 3D", cudaFreeMipmappedArray(mm));
}

/* ---- cudaMemcpyArrayToArray: count bytes across rows of unequal width ---- */

/* Deprecated, still exported; programs call it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static void array_to_array(void)
{
    enum { SW = 40, SH = 10, DW = 24, DH = 20 };
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
    unsigned char src[SW * SH], dst[DW * DH], model[DW * DH], back[DW * DH];
    cudaArray_t a = NULL, b = NULL;
    const size_t count = 7 * SW + 9;   /* from (5, 1) of a to (3, 2) of b */

    fill(src, sizeof(src), 3);
    fill(dst, sizeof(dst), 4);
    memcpy(model, dst, sizeof(dst));
    memcpy(model + 2 * DW + 3, src + 1 * SW + 5, count);
    check("source array", cudaMallocArray(&a, &desc, SW, SH, 0));
    check("destination array", cudaMallocArray(&b, &desc, DW, DH, 0));
    check("fill source", cudaMemcpy2DToArray(a, 0, 0, src, SW, SW, SH, cudaMemcpyHostToDevice));
    check("fill destination", cudaMemcpy2DToArray(b, 0, 0, dst, DW, DW, DH, cudaMemcpyHostToDevice));
    check("cudaMemcpyArrayToArray", cudaMemcpyArrayToArray(b, 3, 2, a, 5, 1, count, cudaMemcpyDeviceToDevice));
    check("read destination", cudaMemcpy2DFromArray(back, DW, b, 0, 0, DW, DH, cudaMemcpyDeviceToHost));
    same("cudaMemcpyArrayToArray across rows of unequal width", back, model, sizeof(back));
    /* Whole rows of equal width, cudaMemcpyDefault. */
    memcpy(model, src, SW * 4);
    check("cudaMemcpyArrayToArray whole rows", cudaMemcpyArrayToArray(a, 0, 6, a, 0, 0, SW * 4, cudaMemcpyDefault));
    check("read source", cudaMemcpy2DFromArray(back, SW, a, 0, 6, SW, 4, cudaMemcpyDeviceToHost));
    same("cudaMemcpyArrayToArray of whole rows", back, model, SW * 4);
    {
        struct cudaArraySparseProperties sp;
        struct cudaArrayMemoryRequirements mr;
        cudaArray_t plane = NULL;
        refused("sparse properties of an array made without cudaArraySparse", cudaArrayGetSparseProperties(&sp, a),
                cudaErrorInvalidValue);
        refused("memory requirements of an array made without cudaArrayDeferredMapping",
                cudaArrayGetMemoryRequirements(&mr, a, 0), cudaErrorInvalidValue);
        refused("plane 0 of a single-planar array", cudaArrayGetPlane(&plane, a, 0), cudaErrorInvalidValue);
    }
    check("free a", cudaFreeArray(a));
    check("free b", cudaFreeArray(b));
}

#pragma GCC diagnostic pop

/* ---- cudaMemcpy3DPeer on the one device ---- */

static void peer(void)
{
    enum { W = 12, H = 6, D = 3 };
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc(16, 16, 0, 0, cudaChannelFormatKindSigned);
    unsigned char src[W * H * D * 4], back[W * H * D * 4];
    struct cudaMemcpy3DPeerParms p;
    struct cudaMemcpy3DParms c;
    struct cudaPitchedPtr lin, lin2;
    cudaArray_t arr = NULL;
    cudaStream_t st = NULL;

    fill(src, sizeof(src), 9);
    memset(back, 0, sizeof(back));
    check("3D array", cudaMalloc3DArray(&arr, &desc, make_cudaExtent(W, H, D), 0));
    check("3D memory", cudaMalloc3D(&lin, make_cudaExtent(W * 4, H, D)));
    check("3D memory 2", cudaMalloc3D(&lin2, make_cudaExtent(W * 4, H, D)));
    check("stream", cudaStreamCreate(&st));
    /* Up with cudaMemcpy3D; then, peer copies on device 0: linear to
     * array, array to linear on a stream, linear to linear at positions;
     * down with cudaMemcpy3D. */
    memset(&c, 0, sizeof(c));
    c.srcPtr = make_cudaPitchedPtr(src, W * 4, W * 4, H);
    c.dstPtr = lin;
    c.extent = make_cudaExtent(W * 4, H, D);
    c.kind = cudaMemcpyHostToDevice;
    check("up", cudaMemcpy3D(&c));
    memset(&p, 0, sizeof(p));
    p.srcPtr = lin;
    p.dstArray = arr;
    p.extent = make_cudaExtent(W, H, D);
    check("cudaMemcpy3DPeer device to array", cudaMemcpy3DPeer(&p));
    memset(&p, 0, sizeof(p));
    p.srcArray = arr;
    p.dstPtr = lin2;
    p.extent = make_cudaExtent(W, H, D);
    check("cudaMemcpy3DPeerAsync array to device", cudaMemcpy3DPeerAsync(&p, st));
    check("synchronize", cudaStreamSynchronize(st));
    memset(&c, 0, sizeof(c));
    c.srcPtr = lin2;
    c.dstPtr = make_cudaPitchedPtr(back, W * 4, W * 4, H);
    c.extent = make_cudaExtent(W * 4, H, D);
    c.kind = cudaMemcpyDeviceToHost;
    check("down", cudaMemcpy3D(&c));
    same("cudaMemcpy3DPeer through an array", back, src, sizeof(src));
    /* A box at positions, linear to linear. */
    memset(&p, 0, sizeof(p));
    p.srcPtr = lin;
    p.srcPos = (struct cudaPos){ 4, 1, 1 };
    p.dstPtr = lin2;
    p.dstPos = (struct cudaPos){ 8, 2, 0 };
    p.extent = make_cudaExtent(W * 4 - 8, H - 2, D - 1);
    check("cudaMemcpy3DPeer at positions", cudaMemcpy3DPeer(&p));
    for (size_t z = 0; z < D - 1; z++)
        for (size_t y = 0; y < H - 2; y++)
            memcpy(src + ((z + 0) * H + y + 2) * W * 4 + 8, src + ((z + 1) * H + y + 1) * W * 4 + 4 + 0,
                   W * 4 - 8);
    check("down again", cudaMemcpy3D(&c));
    same("cudaMemcpy3DPeer at positions", back, src, sizeof(src));
    p.dstDevice = 1;
    refused("cudaMemcpy3DPeer to device 1", cudaMemcpy3DPeer(&p), cudaErrorInvalidDevice);
    p.dstDevice = 0;
    p.srcDevice = -1;
    refused("cudaMemcpy3DPeerAsync from device -1", cudaMemcpy3DPeerAsync(&p, st), cudaErrorInvalidDevice);
    check("free", cudaFree(lin.ptr));
    check("free 2", cudaFree(lin2.ptr));
    check("free array", cudaFreeArray(arr));
    check("destroy stream", cudaStreamDestroy(st));
}

int main(void)
{
    chain_2d();
    levels_3d();
    array_to_array();
    peer();
    if (failures) {
        printf("%d mipmap checks failed\n", failures);
        return 1;
    }
    printf("all mipmap checks passed\n");
    return 0;
}
