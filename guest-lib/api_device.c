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
        have_info = true;
    }
    xdr_free((xdrproc_t)xdr_tdm_device_info_res, (char *)&r);
out:
    pthread_mutex_unlock(&info_lock);
    return err;
}

static int attr(enum cudaDeviceAttr a)
{
    /* Mapped host memory needs memory both sides share (api_mapped.c). */
    if (a == cudaDevAttrCanMapHostMemory && !tdm_mapped_available())
        return 0;
    /* Managed memory over shm only, where both sides share its pages
     * (api_managed.c); never concurrent with kernels.  The device can never
     * reach the program's pageable memory (docs/memory-models.md). */
    if (a == cudaDevAttrManagedMemory)
        return tdm_mapped_available();
    if (a == cudaDevAttrConcurrentManagedAccess ||
        a == cudaDevAttrPageableMemoryAccess || a == cudaDevAttrPageableMemoryAccessUsesHostPageTables ||
        a == cudaDevAttrDirectManagedMemAccessFromHost)
        return 0;
    return (unsigned)a < TDM_ATTR_COUNT ? info.attrs[a] : 0;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return tdm_ret(cudaErrorInvalidValue);
    if (tdm_connect() != cudaSuccess) {
        *count = 0;
        return tdm_ret(cudaErrorNoDevice);
    }
    *count = tdm_hello()->device_count;
    return cudaSuccess;
}

static cudaError_t check_device(int device)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);

    if (err)
        return err;
    return device >= 0 && device < n ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaSetDevice(int device)
{
    cudaError_t err = check_device(device);

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

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr a, int device)
{
    cudaError_t err = check_device(device);

    if (!value || (unsigned)a >= TDM_ATTR_COUNT)
        return tdm_ret(cudaErrorInvalidValue);
    if (!err)
        err = fetch_info();
    if (err)
        return tdm_ret(err);
    *value = attr(a);
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
    cudaError_t err = check_device(device);

    if (!p)
        return tdm_ret(cudaErrorInvalidValue);
    if (!err)
        err = fetch_info();
    if (err)
        return tdm_ret(err);
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s", info.name);
    memcpy(&p->uuid, info.uuid, sizeof(p->uuid));
    p->totalGlobalMem = info.total_mem;
    p->sharedMemPerBlock = (size_t)attr(cudaDevAttrMaxSharedMemoryPerBlock);
    p->regsPerBlock = attr(cudaDevAttrMaxRegistersPerBlock);
    p->warpSize = attr(cudaDevAttrWarpSize);
    p->memPitch = (size_t)attr(cudaDevAttrMaxPitch);
    p->maxThreadsPerBlock = attr(cudaDevAttrMaxThreadsPerBlock);
    p->maxThreadsDim[0] = attr(cudaDevAttrMaxBlockDimX);
    p->maxThreadsDim[1] = attr(cudaDevAttrMaxBlockDimY);
    p->maxThreadsDim[2] = attr(cudaDevAttrMaxBlockDimZ);
    p->maxGridSize[0] = attr(cudaDevAttrMaxGridDimX);
    p->maxGridSize[1] = attr(cudaDevAttrMaxGridDimY);
    p->maxGridSize[2] = attr(cudaDevAttrMaxGridDimZ);
    p->totalConstMem = (size_t)(unsigned)attr(cudaDevAttrTotalConstantMemory);
    p->major = attr(cudaDevAttrComputeCapabilityMajor);
    p->minor = attr(cudaDevAttrComputeCapabilityMinor);
    p->textureAlignment = (size_t)attr(cudaDevAttrTextureAlignment);
    p->texturePitchAlignment = (size_t)attr(cudaDevAttrTexturePitchAlignment);
    p->multiProcessorCount = attr(cudaDevAttrMultiProcessorCount);
    p->integrated = attr(cudaDevAttrIntegrated);
    p->canMapHostMemory = attr(cudaDevAttrCanMapHostMemory);
    p->concurrentKernels = attr(cudaDevAttrConcurrentKernels);
    p->ECCEnabled = attr(cudaDevAttrEccEnabled);
    p->pciBusID = attr(cudaDevAttrPciBusId);
    p->pciDeviceID = attr(cudaDevAttrPciDeviceId);
    p->pciDomainID = attr(cudaDevAttrPciDomainId);
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
    p->computePreemptionSupported = attr(cudaDevAttrComputePreemptionSupported);
    p->cooperativeLaunch = attr(cudaDevAttrCooperativeLaunch);
    p->sharedMemPerBlockOptin = (size_t)attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    p->maxBlocksPerMultiProcessor = attr(cudaDevAttrMaxBlocksPerMultiprocessor);
    p->accessPolicyMaxWindowSize = attr(cudaDevAttrMaxAccessPolicyWindowSize);
    p->reservedSharedMemPerBlock = (size_t)attr(cudaDevAttrReservedSharedMemoryPerBlock);
    p->clusterLaunch = attr(cudaDevAttrClusterLaunch);
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
        tdm_allocs_clear(false);
        tdm_live_handles_clear();
        tdm_registrations_reset();
    }
    return tdm_ret(err);
}
