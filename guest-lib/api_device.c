/* Device management entry points.  A server drives one GPU, so the guest
 * sees one device; its properties are fetched once and cached. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "guest.h"
#include "xdr_extra.h"

static pthread_mutex_t info_lock = PTHREAD_MUTEX_INITIALIZER;
static bool have_info;
static struct {
    char name[256];
    unsigned char uuid[16];
    uint64_t total_mem;
    int attrs[TDM_ATTR_COUNT];
} info;
static _Thread_local int current_device;
static unsigned device_flags;

static cudaError_t fetch_info(void)
{
    tdm_device_info_res r;
    cudaError_t err = cudaSuccess;

    /* Fetched once for the process's life: no lock once it is here. */
    if (__atomic_load_n(&have_info, __ATOMIC_ACQUIRE))
        return cudaSuccess;
    pthread_mutex_lock(&info_lock);
    if (have_info)
        goto out;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_DEVICE_INFO, NULL, &r);
    if (err)
        goto out;
    err = (cudaError_t)r.err;
    if (!err) {
        snprintf(info.name, sizeof(info.name), "%s", r.name ? r.name : "");
        memcpy(info.uuid, r.uuid, sizeof(info.uuid));
        info.total_mem = r.total_mem;
        for (u_int i = 0; i < r.attrs.attrs_len && i < TDM_ATTR_COUNT; i++)
            info.attrs[i] = r.attrs.attrs_val[i];
        __atomic_store_n(&have_info, true, __ATOMIC_RELEASE);
    }
    xdr_free((xdrproc_t)xdr_tdm_device_info_res, (char *)&r);
out:
    pthread_mutex_unlock(&info_lock);
    return err;
}

/* An attribute's value for a property field: one the driver rejects
 * (TDM_ATTR_UNSUPPORTED) reads as 0 there, as the native runtime leaves it. */
static int attr(enum cudaDeviceAttr a)
{
    int v = (unsigned)a < TDM_ATTR_COUNT ? info.attrs[a] : 0;

    /* Mapped and managed memory work over every transport as the device
     * reports them (shm: shared pages; TCP and managed memory: host copies
     * kept coherent, coherent.c), never concurrent with kernels.  The
     * device can never reach the program's pageable memory
     * (docs/memory-models.md). */
    if (a == cudaDevAttrConcurrentManagedAccess ||
        a == cudaDevAttrPageableMemoryAccess || a == cudaDevAttrPageableMemoryAccessUsesHostPageTables ||
        a == cudaDevAttrDirectManagedMemAccessFromHost)
        return 0;
    return v == TDM_ATTR_UNSUPPORTED ? 0 : v;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    int live = tdm_session_devices();

    if (!count)
        return tdm_ret(cudaErrorInvalidValue);
    if (live > 0) {   /* connected: no lock */
        *count = live;
        return cudaSuccess;
    }
    if (tdm_connect() != cudaSuccess) {
        *count = 0;
        return tdm_ret(cudaErrorNoDevice);
    }
    *count = tdm_hello()->device_count;
    return cudaSuccess;
}

cudaError_t tdm_check_device(int device)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);

    if (err)
        return err;
    return device >= 0 && device < n ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaSetDevice(int device)
{
    cudaError_t err = tdm_check_device(device);

    if (!err)
        current_device = device;
    return tdm_ret(err);
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return tdm_ret(cudaErrorInvalidValue);
    *device = current_device;
    return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    device_flags = flags;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
    if (!flags)
        return tdm_ret(cudaErrorInvalidValue);
    *flags = device_flags;
    return cudaSuccess;
}

/* The server sends every attribute the way the device (after Tandem's
 * deliberate differences, docs/device-properties.md) answers it; one the
 * driver rejects is refused as the driver refuses it. */
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr a, int device)
{
    cudaError_t err = tdm_check_device(device);

    if (!value || (unsigned)a >= TDM_ATTR_COUNT)
        return tdm_ret(cudaErrorInvalidValue);
    if (!err)
        err = fetch_info();
    if (err)
        return tdm_ret(err);
    if (info.attrs[a] == TDM_ATTR_UNSUPPORTED)
        return tdm_ret(cudaErrorInvalidValue);
    *value = attr(a);   /* with the transport's differences, as the properties */
    return cudaSuccess;
}

static void fill_dims(int *dst, const enum cudaDeviceAttr *src, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = attr(src[i]);
}

/* Every field of CUDA 13's cudaDeviceProp from the attribute the native
 * runtime reads it from; name, uuid and total memory come from the server
 * as themselves (no attribute holds them).  luid and luidDeviceNodeMask are
 * Windows-only and left 0, as the runtime leaves them on Linux. */
static void fill_props(struct cudaDeviceProp *p)
{
    static const enum cudaDeviceAttr tex2d_mip[2] = { cudaDevAttrMaxTexture2DMipmappedWidth,
                                                      cudaDevAttrMaxTexture2DMipmappedHeight };
    static const enum cudaDeviceAttr tex2d[2] = { cudaDevAttrMaxTexture2DWidth, cudaDevAttrMaxTexture2DHeight };
    static const enum cudaDeviceAttr tex2d_lin[3] = { cudaDevAttrMaxTexture2DLinearWidth,
                                                      cudaDevAttrMaxTexture2DLinearHeight,
                                                      cudaDevAttrMaxTexture2DLinearPitch };
    static const enum cudaDeviceAttr tex2d_gather[2] = { cudaDevAttrMaxTexture2DGatherWidth,
                                                         cudaDevAttrMaxTexture2DGatherHeight };
    static const enum cudaDeviceAttr tex3d[3] = { cudaDevAttrMaxTexture3DWidth, cudaDevAttrMaxTexture3DHeight,
                                                  cudaDevAttrMaxTexture3DDepth };
    static const enum cudaDeviceAttr tex3d_alt[3] = { cudaDevAttrMaxTexture3DWidthAlt,
                                                      cudaDevAttrMaxTexture3DHeightAlt,
                                                      cudaDevAttrMaxTexture3DDepthAlt };
    static const enum cudaDeviceAttr tex1d_lay[2] = { cudaDevAttrMaxTexture1DLayeredWidth,
                                                      cudaDevAttrMaxTexture1DLayeredLayers };
    static const enum cudaDeviceAttr tex2d_lay[3] = { cudaDevAttrMaxTexture2DLayeredWidth,
                                                      cudaDevAttrMaxTexture2DLayeredHeight,
                                                      cudaDevAttrMaxTexture2DLayeredLayers };
    static const enum cudaDeviceAttr texcube_lay[2] = { cudaDevAttrMaxTextureCubemapLayeredWidth,
                                                        cudaDevAttrMaxTextureCubemapLayeredLayers };
    static const enum cudaDeviceAttr surf2d[2] = { cudaDevAttrMaxSurface2DWidth, cudaDevAttrMaxSurface2DHeight };
    static const enum cudaDeviceAttr surf3d[3] = { cudaDevAttrMaxSurface3DWidth, cudaDevAttrMaxSurface3DHeight,
                                                   cudaDevAttrMaxSurface3DDepth };
    static const enum cudaDeviceAttr surf1d_lay[2] = { cudaDevAttrMaxSurface1DLayeredWidth,
                                                       cudaDevAttrMaxSurface1DLayeredLayers };
    static const enum cudaDeviceAttr surf2d_lay[3] = { cudaDevAttrMaxSurface2DLayeredWidth,
                                                       cudaDevAttrMaxSurface2DLayeredHeight,
                                                       cudaDevAttrMaxSurface2DLayeredLayers };
    static const enum cudaDeviceAttr surfcube_lay[2] = { cudaDevAttrMaxSurfaceCubemapLayeredWidth,
                                                         cudaDevAttrMaxSurfaceCubemapLayeredLayers };
    static const enum cudaDeviceAttr block[3] = { cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY,
                                                  cudaDevAttrMaxBlockDimZ };
    static const enum cudaDeviceAttr grid[3] = { cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY,
                                                 cudaDevAttrMaxGridDimZ };

    int reserved[sizeof(p->reserved) / sizeof(p->reserved[0])];

    /* The native runtime leaves `reserved` as the program had it. */
    memcpy(reserved, p->reserved, sizeof(reserved));
    memset(p, 0, sizeof(*p));
    memcpy(p->reserved, reserved, sizeof(reserved));
    snprintf(p->name, sizeof(p->name), "%s", info.name);
    memcpy(&p->uuid, info.uuid, sizeof(p->uuid));
    p->totalGlobalMem = info.total_mem;
    p->sharedMemPerBlock = (size_t)attr(cudaDevAttrMaxSharedMemoryPerBlock);
    p->regsPerBlock = attr(cudaDevAttrMaxRegistersPerBlock);
    p->warpSize = attr(cudaDevAttrWarpSize);
    p->memPitch = (size_t)(unsigned)attr(cudaDevAttrMaxPitch);
    p->maxThreadsPerBlock = attr(cudaDevAttrMaxThreadsPerBlock);
    fill_dims(p->maxThreadsDim, block, 3);
    fill_dims(p->maxGridSize, grid, 3);
    p->totalConstMem = (size_t)(unsigned)attr(cudaDevAttrTotalConstantMemory);
    p->major = attr(cudaDevAttrComputeCapabilityMajor);
    p->minor = attr(cudaDevAttrComputeCapabilityMinor);
    p->textureAlignment = (size_t)attr(cudaDevAttrTextureAlignment);
    p->texturePitchAlignment = (size_t)attr(cudaDevAttrTexturePitchAlignment);
    p->multiProcessorCount = attr(cudaDevAttrMultiProcessorCount);
    p->integrated = attr(cudaDevAttrIntegrated);
    p->canMapHostMemory = attr(cudaDevAttrCanMapHostMemory);
    p->maxTexture1D = attr(cudaDevAttrMaxTexture1DWidth);
    p->maxTexture1DMipmap = attr(cudaDevAttrMaxTexture1DMipmappedWidth);
    fill_dims(p->maxTexture2D, tex2d, 2);
    fill_dims(p->maxTexture2DMipmap, tex2d_mip, 2);
    fill_dims(p->maxTexture2DLinear, tex2d_lin, 3);
    fill_dims(p->maxTexture2DGather, tex2d_gather, 2);
    fill_dims(p->maxTexture3D, tex3d, 3);
    fill_dims(p->maxTexture3DAlt, tex3d_alt, 3);
    p->maxTextureCubemap = attr(cudaDevAttrMaxTextureCubemapWidth);
    fill_dims(p->maxTexture1DLayered, tex1d_lay, 2);
    fill_dims(p->maxTexture2DLayered, tex2d_lay, 3);
    fill_dims(p->maxTextureCubemapLayered, texcube_lay, 2);
    p->maxSurface1D = attr(cudaDevAttrMaxSurface1DWidth);
    fill_dims(p->maxSurface2D, surf2d, 2);
    fill_dims(p->maxSurface3D, surf3d, 3);
    fill_dims(p->maxSurface1DLayered, surf1d_lay, 2);
    fill_dims(p->maxSurface2DLayered, surf2d_lay, 3);
    p->maxSurfaceCubemap = attr(cudaDevAttrMaxSurfaceCubemapWidth);
    fill_dims(p->maxSurfaceCubemapLayered, surfcube_lay, 2);
    p->surfaceAlignment = (size_t)attr(cudaDevAttrSurfaceAlignment);
    p->concurrentKernels = attr(cudaDevAttrConcurrentKernels);
    p->ECCEnabled = attr(cudaDevAttrEccEnabled);
    p->pciBusID = attr(cudaDevAttrPciBusId);
    p->pciDeviceID = attr(cudaDevAttrPciDeviceId);
    p->pciDomainID = attr(cudaDevAttrPciDomainId);
    p->tccDriver = attr(cudaDevAttrTccDriver);
    p->asyncEngineCount = attr(cudaDevAttrAsyncEngineCount);
    p->unifiedAddressing = attr(cudaDevAttrUnifiedAddressing);
    p->memoryBusWidth = attr(cudaDevAttrGlobalMemoryBusWidth);
    p->l2CacheSize = attr(cudaDevAttrL2CacheSize);
    p->persistingL2CacheMaxSize = attr(cudaDevAttrMaxPersistingL2CacheSize);
    p->maxThreadsPerMultiProcessor = attr(cudaDevAttrMaxThreadsPerMultiProcessor);
    p->streamPrioritiesSupported = attr(cudaDevAttrStreamPrioritiesSupported);
    p->globalL1CacheSupported = attr(cudaDevAttrGlobalL1CacheSupported);
    p->localL1CacheSupported = attr(cudaDevAttrLocalL1CacheSupported);
    p->sharedMemPerMultiprocessor = (size_t)attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
    p->regsPerMultiprocessor = attr(cudaDevAttrMaxRegistersPerMultiprocessor);
    p->managedMemory = attr(cudaDevAttrManagedMemory);
    p->isMultiGpuBoard = attr(cudaDevAttrIsMultiGpuBoard);
    p->multiGpuBoardGroupID = attr(cudaDevAttrMultiGpuBoardGroupID);
    p->hostNativeAtomicSupported = attr(cudaDevAttrHostNativeAtomicSupported);
    p->pageableMemoryAccess = attr(cudaDevAttrPageableMemoryAccess);
    p->concurrentManagedAccess = attr(cudaDevAttrConcurrentManagedAccess);
    p->computePreemptionSupported = attr(cudaDevAttrComputePreemptionSupported);
    p->canUseHostPointerForRegisteredMem = attr(cudaDevAttrCanUseHostPointerForRegisteredMem);
    p->cooperativeLaunch = attr(cudaDevAttrCooperativeLaunch);
    p->sharedMemPerBlockOptin = (size_t)attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    p->pageableMemoryAccessUsesHostPageTables = attr(cudaDevAttrPageableMemoryAccessUsesHostPageTables);
    p->directManagedMemAccessFromHost = attr(cudaDevAttrDirectManagedMemAccessFromHost);
    p->maxBlocksPerMultiProcessor = attr(cudaDevAttrMaxBlocksPerMultiprocessor);
    p->accessPolicyMaxWindowSize = attr(cudaDevAttrMaxAccessPolicyWindowSize);
    p->reservedSharedMemPerBlock = (size_t)attr(cudaDevAttrReservedSharedMemoryPerBlock);
    p->hostRegisterSupported = attr(cudaDevAttrHostRegisterSupported);
    p->sparseCudaArraySupported = attr(cudaDevAttrSparseCudaArraySupported);
    p->hostRegisterReadOnlySupported = attr(cudaDevAttrHostRegisterReadOnlySupported);
    p->timelineSemaphoreInteropSupported = attr(cudaDevAttrTimelineSemaphoreInteropSupported);
    p->memoryPoolsSupported = attr(cudaDevAttrMemoryPoolsSupported);
    p->gpuDirectRDMASupported = attr(cudaDevAttrGPUDirectRDMASupported);
    p->gpuDirectRDMAFlushWritesOptions = (unsigned)attr(cudaDevAttrGPUDirectRDMAFlushWritesOptions);
    p->gpuDirectRDMAWritesOrdering = attr(cudaDevAttrGPUDirectRDMAWritesOrdering);
    p->memoryPoolSupportedHandleTypes = (unsigned)attr(cudaDevAttrMemoryPoolSupportedHandleTypes);
    p->deferredMappingCudaArraySupported = attr(cudaDevAttrDeferredMappingCudaArraySupported);
    p->ipcEventSupported = attr(cudaDevAttrIpcEventSupport);
    p->clusterLaunch = attr(cudaDevAttrClusterLaunch);
    /* The runtime names this attribute Reserved129; the driver's is
     * CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS. */
    p->unifiedFunctionPointers = attr((enum cudaDeviceAttr)129);
    p->deviceNumaConfig = attr(cudaDevAttrNumaConfig);
    p->deviceNumaId = attr(cudaDevAttrNumaId);
    p->mpsEnabled = attr(cudaDevAttrMpsEnabled);
    p->hostNumaId = attr(cudaDevAttrHostNumaId);
    p->gpuPciDeviceID = (unsigned)attr(cudaDevAttrGpuPciDeviceId);
    p->gpuPciSubsystemID = (unsigned)attr(cudaDevAttrGpuPciSubsystemId);
    p->hostNumaMultinodeIpcSupported = attr(cudaDevAttrHostNumaMultinodeIpcSupported);
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
    cudaError_t err = tdm_check_device(device);

    if (!p)
        return tdm_ret(cudaErrorInvalidValue);
    if (!err)
        err = fetch_info();
    if (err)
        return tdm_ret(err);
    fill_props(p);
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return tdm_ret(cudaErrorInvalidValue);
    if (tdm_connect() != cudaSuccess) {
        *driverVersion = 0;
        return cudaSuccess;   /* as CUDA does with no driver */
    }
    *driverVersion = tdm_hello()->driver_version;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (!runtimeVersion)
        return tdm_ret(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    return tdm_ret(tdm_call_err(TDM_DEVICE_SYNCHRONIZE, NULL));
}

cudaError_t cudaDeviceReset(void)
{
    cudaError_t err = tdm_call_err(TDM_DEVICE_RESET, NULL);

    if (!err) {
        tdm_managed_reset();   /* before the table that names their device memory */
        tdm_allocs_clear(false);
        tdm_live_handles_clear();
        tdm_registrations_reset();
        tdm_ipc_reset(); /* ---- ipc (issue 14) ---- */
        tdm_host_reset(); /* ---- pinned memory by its host pointer (issue 14) ---- */
        tdm_host_upload_reset();
    }
    return tdm_ret(err);
}
