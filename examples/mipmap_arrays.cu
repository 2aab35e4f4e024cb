// mipmap_arrays: a mip chain built on the GPU level by level (a kernel reads
// level l through a surface and writes the 2x2 means into level l + 1
// through another), every level read back with cudaMemcpy2DFromArray, a
// texture object over the whole mipmapped array sampled with tex2DLod at
// fractional levels (point and linear mipmap filtering), and a level copied
// to a plain array with cudaMemcpyArrayToArray.  Prints checksums of the bit
// patterns, so a native run and a run through Tandem on the same GPU print
// the same lines (docs/memory-layouts.md "Mipmapped arrays").  GPU only:
// the sim backend has no twin that reads surfaces or samples textures
// (tests/integration/mipmap_check.c covers the same calls with copies).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::printf("%s: %s\n", #x, cudaGetErrorName(e_));                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static const int W = 128, H = 96, LEVELS = 8;   // 128 x 96 has 1 + log2(128) = 8 levels

__global__ void fill_level0(cudaSurfaceObject_t s, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    surf2Dwrite((float)((x * 7 + y * 13) % 64) * 0.25f, s, x * (int)sizeof(float), y);
}

// Texel (x, y) of the next level: the mean of the 2x2 block it covers,
// clamped at an odd edge.
__global__ void reduce(cudaSurfaceObject_t src, int sw, int sh, cudaSurfaceObject_t dst, int dw, int dh)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= dw || y >= dh)
        return;
    int x0 = min(2 * x, sw - 1), y0 = min(2 * y, sh - 1), x1 = min(x0 + 1, sw - 1), y1 = min(y0 + 1, sh - 1);
    float a = surf2Dread<float>(src, x0 * (int)sizeof(float), y0), b = surf2Dread<float>(src, x1 * (int)sizeof(float), y0);
    float c = surf2Dread<float>(src, x0 * (int)sizeof(float), y1), d = surf2Dread<float>(src, x1 * (int)sizeof(float), y1);
    surf2Dwrite((a + b + c + d) * 0.25f, dst, x * (int)sizeof(float), y);
}

// 64 samples along the diagonal at level lod, normalized coordinates.
__global__ void sample_lod(cudaTextureObject_t t, float lod, float *out)
{
    int i = threadIdx.x;
    float u = (i + 0.5f) / 64.0f, v = (63 - i + 0.5f) / 64.0f;
    out[i] = tex2DLod<float>(t, u, v, lod);
}

static unsigned sum_bits(const float *v, size_t n)
{
    unsigned s = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned u;
        std::memcpy(&u, &v[i], sizeof(u));
        s = s * 31u + u;
    }
    return s;
}

static cudaError_t surface_of(cudaArray_t a, cudaSurfaceObject_t *s)
{
    cudaResourceDesc rd;
    std::memset(&rd, 0, sizeof(rd));
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = a;
    return cudaCreateSurfaceObject(s, &rd);
}

static int sample(cudaMipmappedArray_t mm, cudaTextureFilterMode mipfilter, const char *name, float *d_out)
{
    cudaResourceDesc rd;
    cudaTextureDesc td;
    cudaTextureObject_t t = 0;
    float out[64];
    std::memset(&rd, 0, sizeof(rd));
    std::memset(&td, 0, sizeof(td));
    rd.resType = cudaResourceTypeMipmappedArray;
    rd.res.mipmap.mipmap = mm;
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.mipmapFilterMode = mipfilter;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    td.minMipmapLevelClamp = 0;
    td.maxMipmapLevelClamp = (float)(LEVELS - 1);
    CHECK(cudaCreateTextureObject(&t, &rd, &td, nullptr));
    for (float lod = 0.0f; lod <= 5.0f; lod += 1.25f) {
        sample_lod<<<1, 64>>>(t, lod, d_out);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
        std::printf("tex2DLod %s filtering, level %.2f: %08x\n", name, lod, sum_bits(out, 64));
    }
    CHECK(cudaDestroyTextureObject(t));
    return 0;
}

int main()
{
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t mm = nullptr;
    cudaSurfaceObject_t surf[LEVELS] = {};
    static float back[W * H];
    float *d_out = nullptr;
    dim3 block(16, 16);

    CHECK(cudaMallocMipmappedArray(&mm, &desc, make_cudaExtent(W, H, 0), LEVELS, cudaArraySurfaceLoadStore));
    for (int l = 0; l < LEVELS; l++) {
        cudaArray_t level = nullptr;
        CHECK(cudaGetMipmappedArrayLevel(&level, mm, l));
        CHECK(surface_of(level, &surf[l]));
    }
    fill_level0<<<dim3((W + 15) / 16, (H + 15) / 16), block>>>(surf[0], W, H);
    CHECK(cudaGetLastError());
    for (int l = 1, w = W, h = H; l < LEVELS; l++) {
        int dw = w > 1 ? w / 2 : 1, dh = h > 1 ? h / 2 : 1;
        reduce<<<dim3((dw + 15) / 16, (dh + 15) / 16), block>>>(surf[l - 1], w, h, surf[l], dw, dh);
        CHECK(cudaGetLastError());
        w = dw;
        h = dh;
    }
    CHECK(cudaDeviceSynchronize());
    for (int l = 0, w = W, h = H; l < LEVELS; l++) {
        cudaArray_t level = nullptr;
        cudaExtent e;
        CHECK(cudaGetMipmappedArrayLevel(&level, mm, l));
        CHECK(cudaArrayGetInfo(nullptr, &e, nullptr, level));
        CHECK(cudaMemcpy2DFromArray(back, w * sizeof(float), level, 0, 0, w * sizeof(float), h,
                                    cudaMemcpyDeviceToHost));
        std::printf("level %d: %zu x %zu, %08x\n", l, e.width, e.height, sum_bits(back, (size_t)w * h));
        w = w > 1 ? w / 2 : 1;
        h = h > 1 ? h / 2 : 1;
    }

    CHECK(cudaMalloc(&d_out, 64 * sizeof(float)));
    if (sample(mm, cudaFilterModePoint, "point", d_out) || sample(mm, cudaFilterModeLinear, "linear", d_out))
        return 1;

    {   // level 2 (32 x 24) into a plain 40 x 30 array from (8 bytes, 1), across rows of unequal width
        cudaArray_t level = nullptr, plain = nullptr;
        static float zero[40 * 30];
        CHECK(cudaGetMipmappedArrayLevel(&level, mm, 2));
        CHECK(cudaMallocArray(&plain, &desc, 40, 30));
        CHECK(cudaMemcpy2DToArray(plain, 0, 0, zero, 40 * sizeof(float), 40 * sizeof(float), 30,
                                  cudaMemcpyHostToDevice));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        CHECK(cudaMemcpyArrayToArray(plain, 8, 1, level, 0, 0, 32 * 24 * sizeof(float), cudaMemcpyDeviceToDevice));
#pragma GCC diagnostic pop
        CHECK(cudaMemcpy2DFromArray(back, 40 * sizeof(float), plain, 0, 0, 40 * sizeof(float), 30,
                                    cudaMemcpyDeviceToHost));
        std::printf("level 2 through cudaMemcpyArrayToArray: %08x\n", sum_bits(back, 40 * 30));
        CHECK(cudaFreeArray(plain));
    }

    for (int l = 0; l < LEVELS; l++)
        CHECK(cudaDestroySurfaceObject(surf[l]));
    CHECK(cudaFree(d_out));
    CHECK(cudaFreeMipmappedArray(mm));
    std::printf("mipmap_arrays done\n");
    return 0;
}
