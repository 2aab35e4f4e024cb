/* What the simulated device reports about itself: an H100-like set of
 * attributes (compute capability 9.0), a 16 GiB memory and a name that says
 * it is simulated. */
#include <string.h>

#include "sim_internal.h"

/* CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED, CUDA 13's last. */
#define SIM_LAST_ATTR 147

static const struct {
    int attr;
    int32_t value;
} attrs[] = {
    { cudaDevAttrMaxThreadsPerBlock, 1024 },
    { cudaDevAttrMaxBlockDimX, 1024 },
    { cudaDevAttrMaxBlockDimY, 1024 },
    { cudaDevAttrMaxBlockDimZ, 64 },
    { cudaDevAttrMaxGridDimX, 0x7fffffff },
    { cudaDevAttrMaxGridDimY, 65535 },
    { cudaDevAttrMaxGridDimZ, 65535 },
    { cudaDevAttrMaxSharedMemoryPerBlock, (int32_t)SIM_MAX_DYN_SHARED },
    { cudaDevAttrTotalConstantMemory, 65536 },
    { cudaDevAttrWarpSize, 32 },
    { cudaDevAttrMaxPitch, 0x7fffffff },
    { cudaDevAttrMaxRegistersPerBlock, 65536 },
    { cudaDevAttrClockRate, 1980000 },
    { cudaDevAttrTextureAlignment, 512 },
    { cudaDevAttrGpuOverlap, 1 },
    { cudaDevAttrMultiProcessorCount, 132 },
    { cudaDevAttrKernelExecTimeout, 0 },
    { cudaDevAttrIntegrated, 0 },
    { cudaDevAttrCanMapHostMemory, 1 },
    { cudaDevAttrComputeMode, 0 },
    { cudaDevAttrSurfaceAlignment, 512 },
    { cudaDevAttrConcurrentKernels, 1 },
    { cudaDevAttrEccEnabled, 0 },
    { cudaDevAttrPciBusId, 0 },
    { cudaDevAttrPciDeviceId, 0 },
    { cudaDevAttrTccDriver, 0 },
    { cudaDevAttrMemoryClockRate, 2619000 },
    { cudaDevAttrGlobalMemoryBusWidth, 5120 },
    { cudaDevAttrL2CacheSize, 50331648 },
    { cudaDevAttrMaxThreadsPerMultiProcessor, 2048 },
    { cudaDevAttrAsyncEngineCount, 2 },
    { cudaDevAttrUnifiedAddressing, 1 },
    { cudaDevAttrPciDomainId, 0 },
    { cudaDevAttrTexturePitchAlignment, 32 },
    { cudaDevAttrComputeCapabilityMajor, 9 },
    { cudaDevAttrComputeCapabilityMinor, 0 },
    { cudaDevAttrStreamPrioritiesSupported, 1 },
    { cudaDevAttrGlobalL1CacheSupported, 1 },
    { cudaDevAttrLocalL1CacheSupported, 1 },
    { cudaDevAttrMaxSharedMemoryPerMultiprocessor, 233472 },
    { cudaDevAttrMaxRegistersPerMultiprocessor, 65536 },
    { cudaDevAttrManagedMemory, 1 },
    { cudaDevAttrIsMultiGpuBoard, 0 },
    { cudaDevAttrHostNativeAtomicSupported, 0 },
    { cudaDevAttrSingleToDoublePrecisionPerfRatio, 2 },
    { cudaDevAttrPageableMemoryAccess, 0 },
    { cudaDevAttrConcurrentManagedAccess, 0 },
    { cudaDevAttrComputePreemptionSupported, 1 },
    { cudaDevAttrCanUseHostPointerForRegisteredMem, 1 },   /* as the H100; served over shm (docs/memory-models.md) */
    { cudaDevAttrCooperativeLaunch, 1 },    /* issue 14: sim_launch_cooperative */
    { cudaDevAttrMaxSharedMemoryPerBlockOptin, (int32_t)SIM_MAX_DYN_SHARED },
    { cudaDevAttrHostRegisterSupported, 1 },   /* cudaHostRegister is served (api_mapped.c) */
    { cudaDevAttrMaxBlocksPerMultiprocessor, 32 },
    { cudaDevAttrMaxPersistingL2CacheSize, 0 },
    { cudaDevAttrMaxAccessPolicyWindowSize, 0 },
    { cudaDevAttrReservedSharedMemoryPerBlock, 1024 },
    { cudaDevAttrMemoryPoolsSupported, 1 },   /* stream-ordered allocation is served (session_memory.c) */
    { cudaDevAttrClusterLaunch, 1 },   /* issue 14: sim_cluster.c */
};

int sim_device_info(tdm_backend *b, tdm_device_info *out)
{
    /* Fixed, and spelled so no one mistakes it for a device id. */
    static const uint8_t uuid[16] = { 'T', 'A', 'N', 'D', 'E', 'M', '-', 'S', 'I', 'M', '-', 'G', 'P', 'U', 0, 1 };

    memset(out, 0, sizeof(*out));
    strcpy(out->name, "Tandem simulated GPU (sim backend, not a real GPU)");
    memcpy(out->uuid, uuid, sizeof(uuid));
    out->total_mem = SIM_TOTAL_MEM;
    out->simulated = true;
    /* Like a CUDA 13 driver: no attribute 0, none past the last one it knows;
     * every other one not in the table reads 0. */
    out->attrs[0] = TDM_DEVICE_ATTR_UNSUPPORTED;
    for (int i = SIM_LAST_ATTR + 1; i < TDM_DEVICE_ATTR_COUNT; i++)
        out->attrs[i] = TDM_DEVICE_ATTR_UNSUPPORTED;
    for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
        if (attrs[i].attr >= 0 && attrs[i].attr < TDM_DEVICE_ATTR_COUNT)
            out->attrs[attrs[i].attr] = attrs[i].value;
    out->attrs[cudaDevAttrMultiProcessorCount] = (int32_t)sim_device_sms(b);   /* issue 17: --sim-sms */
    return 0;
}
