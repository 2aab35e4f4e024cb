/* texture-object-check: texture objects over a CUDA array, linear and
 * pitch2D memory and a surface object over an array: created, their
 * descriptors read back field by field (cudaGetTextureObjectResourceDesc,
 * TextureDesc, ResourceViewDesc, cudaGetSurfaceObjectResourceDesc),
 * destroyed; and what CUDA refuses.  One line per check on stdout, the same
 * natively and through Tandem (docs/memory-layouts.md).  The kernels that
 * read them are examples/texture_surface.cu's (GPU only). */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

static int failures;

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
    printf("%s: %s\n", what, bad ? "differs" : "as created");
    failures += bad;
}

static struct cudaTextureDesc tex_desc(enum cudaTextureFilterMode filter, int normalized)
{
    struct cudaTextureDesc t;

    memset(&t, 0, sizeof(t));
    t.addressMode[0] = cudaAddressModeClamp;
    t.addressMode[1] = cudaAddressModeBorder;
    t.addressMode[2] = cudaAddressModeWrap;
    t.filterMode = filter;
    t.readMode = cudaReadModeElementType;
    t.normalizedCoords = normalized;
    t.borderColor[0] = 0.25f;
    t.maxAnisotropy = 1;
    return t;
}

int main(void)
{
    struct cudaChannelFormatDesc f = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    struct cudaResourceDesc res, got_res;
    struct cudaTextureDesc tex = tex_desc(cudaFilterModeLinear, 1), got_tex;
    struct cudaResourceViewDesc view, got_view;
    cudaTextureObject_t t_array, t_linear, t_pitch;
    cudaSurfaceObject_t s_array;
    cudaArray_t arr;
    void *lin, *pitched;
    size_t pitch;

    check("cudaMallocArray", cudaMallocArray(&arr, &f, 64, 48, cudaArraySurfaceLoadStore));
    check("cudaMalloc", cudaMalloc(&lin, 4096));
    check("cudaMallocPitch", cudaMallocPitch(&pitched, &pitch, 64 * sizeof(float), 48));

    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    memset(&view, 0, sizeof(view));
    view.format = cudaResViewFormatFloat1;
    view.width = 64;
    view.height = 48;
    check("texture over an array", cudaCreateTextureObject(&t_array, &res, &tex, &view));
    printf("texture over an array: %s\n", t_array ? "created" : "zero");
    check("resource desc", cudaGetTextureObjectResourceDesc(&got_res, t_array));
    printf("its resource: type %d, the same array: %s\n", (int)got_res.resType,
           got_res.res.array.array == arr ? "yes" : "no");
    check("texture desc", cudaGetTextureObjectTextureDesc(&got_tex, t_array));
    printf("its texture: address modes %d %d %d, filter %d, read mode %d, normalized %d, border %.2f\n",
           (int)got_tex.addressMode[0], (int)got_tex.addressMode[1], (int)got_tex.addressMode[2],
           (int)got_tex.filterMode, (int)got_tex.readMode, got_tex.normalizedCoords, got_tex.borderColor[0]);
    check("view desc", cudaGetTextureObjectResourceViewDesc(&got_view, t_array));
    printf("its view: format %d, %zu x %zu x %zu\n", (int)got_view.format, got_view.width, got_view.height,
           got_view.depth);

    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = lin;
    res.res.linear.desc = f;
    res.res.linear.sizeInBytes = 4096;
    tex = tex_desc(cudaFilterModePoint, 0);
    check("texture over linear memory", cudaCreateTextureObject(&t_linear, &res, &tex, NULL));
    check("resource desc", cudaGetTextureObjectResourceDesc(&got_res, t_linear));
    printf("linear texture: type %d, %zu bytes, %d-bit channel, same pointer: %s\n", (int)got_res.resType,
           got_res.res.linear.sizeInBytes, got_res.res.linear.desc.x, got_res.res.linear.devPtr == lin ? "yes" : "no");

    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = pitched;
    res.res.pitch2D.desc = f;
    res.res.pitch2D.width = 64;
    res.res.pitch2D.height = 48;
    res.res.pitch2D.pitchInBytes = pitch;
    check("texture over pitched memory", cudaCreateTextureObject(&t_pitch, &res, &tex, NULL));
    check("resource desc", cudaGetTextureObjectResourceDesc(&got_res, t_pitch));
    same("pitch2D texture's resource", &got_res, &res, sizeof(res));
    check("texture desc", cudaGetTextureObjectTextureDesc(&got_tex, t_pitch));
    same("pitch2D texture's sampling", &got_tex, &tex, sizeof(tex));

    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    check("surface over an array", cudaCreateSurfaceObject(&s_array, &res));
    check("surface resource desc", cudaGetSurfaceObjectResourceDesc(&got_res, s_array));
    printf("surface: type %d, the same array: %s\n", (int)got_res.resType,
           got_res.res.array.array == arr ? "yes" : "no");

    printf("three textures and a surface distinct: %s\n",
           t_array != t_linear && t_linear != t_pitch && t_array != t_pitch ? "yes" : "no");
    check("destroy", cudaDestroyTextureObject(t_array));
    check("destroy", cudaDestroyTextureObject(t_linear));
    check("destroy", cudaDestroyTextureObject(t_pitch));
    check("destroy", cudaDestroySurfaceObject(s_array));

    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = lin;
    res.res.linear.desc = f;
    res.res.linear.sizeInBytes = 4096;
    printf("surface over linear memory: %s\n", cudaGetErrorName(cudaCreateSurfaceObject(&s_array, &res)));
    printf("texture without a texture descriptor: %s\n",
           cudaGetErrorName(cudaCreateTextureObject(&t_linear, &res, NULL, NULL)));
    cudaGetLastError();

    cudaFreeArray(arr);
    cudaFree(lin);
    cudaFree(pitched);
    printf("%s\n", failures ? "FAILED" : "all texture object checks passed");
    return failures ? 1 : 0;
}
