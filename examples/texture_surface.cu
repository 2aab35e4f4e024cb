// texture_surface: a 2D float CUDA array read through a texture object
// (tex2D, point and linear filtering, border and clamp addressing), a
// surface object written by a kernel (surf2Dwrite) and read back, and a
// texture over pitched memory.  Prints checksums of the bit patterns, so a
// native run and a run through Tandem on the same GPU print the same lines
// (docs/memory-layouts.md).  GPU only: the sim backend has no twin that
// samples textures.
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

static const int W = 64, H = 48;

__global__ void sample(cudaTextureObject_t point, cudaTextureObject_t linear, float *out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H)
        return;
    // point: the element itself (+0.5 is its centre); linear: between four,
    // and past the edge for the last column (border colour there).
    out[y * W + x] = tex2D<float>(point, x + 0.5f, y + 0.5f) * 2.0f + tex2D<float>(linear, x + 0.75f, y + 0.25f);
}

__global__ void write_surface(cudaSurfaceObject_t s, cudaTextureObject_t src)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H)
        return;
    float v = tex2D<float>(src, x + 0.5f, H - 1 - y + 0.5f) + 0.125f * x;   // flipped, shifted
    surf2Dwrite(v, s, x * (int)sizeof(float), y);
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

static cudaTextureObject_t texture_of(const cudaResourceDesc &res, cudaTextureFilterMode filter,
                                      cudaTextureAddressMode mode)
{
    cudaTextureDesc t;
    std::memset(&t, 0, sizeof(t));
    t.addressMode[0] = t.addressMode[1] = mode;
    t.filterMode = filter;
    t.readMode = cudaReadModeElementType;
    t.borderColor[0] = -1.0f;
    cudaTextureObject_t obj = 0;
    if (cudaCreateTextureObject(&obj, &res, &t, nullptr) != cudaSuccess)
        return 0;
    return obj;
}

int main()
{
    static float host[H * W], out[H * W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            host[y * W + x] = (float)((x * 7 + y * 13) % 29) * 0.5f - 3.0f;

    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    cudaArray_t in, surf;
    CHECK(cudaMallocArray(&in, &f, W, H));
    CHECK(cudaMallocArray(&surf, &f, W, H, cudaArraySurfaceLoadStore));
    CHECK(cudaMemcpy2DToArray(in, 0, 0, host, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));

    cudaResourceDesc res;
    std::memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = in;
    cudaTextureObject_t point = texture_of(res, cudaFilterModePoint, cudaAddressModeClamp);
    cudaTextureObject_t linear = texture_of(res, cudaFilterModeLinear, cudaAddressModeBorder);
    if (!point || !linear) {
        std::printf("cannot create the textures\n");
        return 1;
    }
    float *d_out;
    CHECK(cudaMalloc(&d_out, sizeof(out)));
    dim3 block(16, 8), grid((W + 15) / 16, (H + 7) / 8);
    sample<<<grid, block>>>(point, linear, d_out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
    std::printf("tex2D point + linear over an array: %08x (corner %.4f, edge %.4f)\n", sum_bits(out, W * H), out[0],
                out[W - 1]);

    cudaSurfaceObject_t s;
    res.res.array.array = surf;
    CHECK(cudaCreateSurfaceObject(&s, &res));
    write_surface<<<grid, block>>>(s, point);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy2DFromArray(out, W * sizeof(float), surf, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost));
    std::printf("surf2Dwrite, read back: %08x (first %.4f, last %.4f)\n", sum_bits(out, W * H), out[0],
                out[W * H - 1]);

    // A texture over pitched memory holding the surface's result.
    float *pitched;
    size_t pitch;
    CHECK(cudaMallocPitch(&pitched, &pitch, W * sizeof(float), H));
    CHECK(cudaMemcpy2DFromArray(pitched, pitch, surf, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToDevice));
    std::memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = pitched;
    res.res.pitch2D.desc = f;
    res.res.pitch2D.width = W;
    res.res.pitch2D.height = H;
    res.res.pitch2D.pitchInBytes = pitch;
    cudaTextureObject_t over_pitched = texture_of(res, cudaFilterModeLinear, cudaAddressModeClamp);
    if (!over_pitched) {
        std::printf("cannot create the pitch2D texture\n");
        return 1;
    }
    sample<<<grid, block>>>(over_pitched, over_pitched, d_out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
    std::printf("tex2D over pitched memory: %08x\n", sum_bits(out, W * H));

    CHECK(cudaDestroyTextureObject(point));
    CHECK(cudaDestroyTextureObject(linear));
    CHECK(cudaDestroyTextureObject(over_pitched));
    CHECK(cudaDestroySurfaceObject(s));
    CHECK(cudaFreeArray(in));
    CHECK(cudaFreeArray(surf));
    CHECK(cudaFree(pitched));
    CHECK(cudaFree(d_out));
    std::printf("texture_surface done\n");
    return 0;
}
