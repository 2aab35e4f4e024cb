/* Initialization and the device: cuInit, versions, and every device query.  The device is
 * the session's (one server drives one GPU); its name, UUID, memory and attributes are the
 * runtime layer's, fetched once and cached there, so the queries PyTorch makes thousands
 * of times never cross the wire. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static int initialized;   /* cuInit succeeded (atomic) */

/* What cuDriverGetVersion answers and the integrity check hashes: the server's driver where
 * a server answers, else the version these headers describe. */
static int driver_version(void)
{
    int v = 0;

    if (cudaDriverGetVersion(&v) != cudaSuccess || v == 0)
        v = CUDA_VERSION;
    return v;
}

CUresult cuInit(unsigned int flags)
{
    int n = 0;

    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
        return CUDA_ERROR_NO_DEVICE;
    __atomic_store_n(&initialized, 1, __ATOMIC_RELEASE);
    return CUDA_SUCCESS;
}

CUresult tdm_cu_ready(void)
{
    return __atomic_load_n(&initialized, __ATOMIC_ACQUIRE) ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult tdm_cu_device(CUdevice dev)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    /* A number outside the session's devices, or the runtime layer's own error (no server, or
     * the session closed at exit). */
    return tdm_cu(tdm_check_device(dev));
}

CUresult cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = driver_version();
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    CUresult r = tdm_cu_ready();

    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    if (r)
        return r;
    return tdm_cu(cudaGetDeviceCount(count));
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    CUresult r = tdm_cu_device(ordinal);

    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (r)
        return r;
    *device = ordinal;
    return CUDA_SUCCESS;
}

/* The properties of dev through the runtime layer (cached there). */
static CUresult props(CUdevice dev, struct cudaDeviceProp *p)
{
    CUresult r = tdm_cu_device(dev);

    return r ? r : tdm_cu(cudaGetDeviceProperties(p, dev));
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    struct cudaDeviceProp p;
    CUresult r;

    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = props(dev, &p)))
        return r;
    snprintf(name, (size_t)len, "%s", p.name);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    struct cudaDeviceProp p;
    CUresult r;

    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = props(dev, &p)))
        return r;
    memcpy(uuid->bytes, p.uuid.bytes, sizeof(uuid->bytes));
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid(uuid, dev);
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    struct cudaDeviceProp p;
    CUresult r;

    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = props(dev, &p)))
        return r;
    *bytes = p.totalGlobalMem;
    return CUDA_SUCCESS;
}

/* The pre-3.2 entry point, whose size is 32 bits wide. */
CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    size_t b = 0;
    CUresult r = cuDeviceTotalMem_v2(&b, dev);

    if (!r)
        *bytes = b > 0xffffffffu ? 0xffffffffu : (unsigned)b;
    return r;
}

/* CUdevice_attribute and cudaDeviceAttr share their numbers. */
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    CUresult r = tdm_cu_device(dev);

    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    if (r)
        return r;
    return tdm_cu(cudaDeviceGetAttribute(pi, (enum cudaDeviceAttr)attrib, dev));
}

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    CUresult r;

    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)))
        return r;
    return cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
}

CUresult cuDeviceGetProperties(CUdevprop *prop, CUdevice dev)
{
    struct cudaDeviceProp p;
    CUresult r;

    if (!prop)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = props(dev, &p)))
        return r;
    memset(prop, 0, sizeof(*prop));
    prop->maxThreadsPerBlock = p.maxThreadsPerBlock;
    memcpy(prop->maxThreadsDim, p.maxThreadsDim, sizeof(prop->maxThreadsDim));
    memcpy(prop->maxGridSize, p.maxGridSize, sizeof(prop->maxGridSize));
    prop->sharedMemPerBlock = (int)p.sharedMemPerBlock;
    prop->totalConstantMemory = (int)p.totalConstMem;
    prop->SIMDWidth = p.warpSize;
    prop->memPitch = (int)(p.memPitch > 0x7fffffff ? 0x7fffffff : p.memPitch);
    prop->regsPerBlock = p.regsPerBlock;
    cuDeviceGetAttribute(&prop->clockRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
    prop->textureAlign = (int)p.textureAlignment;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    CUresult r = tdm_cu_device(dev);

    return r ? r : tdm_cu(cudaDeviceGetPCIBusId(pciBusId, len, dev));
}

CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    CUresult r = tdm_cu_ready();

    return r ? r : tdm_cu(cudaDeviceGetByPCIBusId(dev, pciBusId));
}

CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    CUresult r = tdm_cu_ready();

    return r ? r : tdm_cu(cudaDeviceCanAccessPeer(canAccessPeer, dev, peerDev));
}

/* CUdevice_P2PAttribute and cudaDeviceP2PAttr share their numbers. */
CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice, CUdevice dstDevice)
{
    CUresult r = tdm_cu_ready();

    return r ? r : tdm_cu(cudaDeviceGetP2PAttribute(value, (enum cudaDeviceP2PAttr)attrib, srcDevice, dstDevice));
}

/* As the runtime layer's: the profiler belongs to the server's process; starting and
 * stopping it is accepted and does nothing (docs/runtime-api.md). */
CUresult cuProfilerStart(void)
{
    return tdm_cu(cudaProfilerStart());
}

CUresult cuProfilerStop(void)
{
    return tdm_cu(cudaProfilerStop());
}

/* Whether modules load lazily: as the driver answers, lazily unless CUDA_MODULE_LOADING says
 * EAGER.  NVIDIA's runtime asks, and loads every module of the program at start-up when told
 * eager: for PyTorch that is thousands of fat binaries shipped to the server before the first
 * kernel. */
CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    const char *env = getenv("CUDA_MODULE_LOADING");

    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = env && strcmp(env, "EAGER") == 0 ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
}
