/* Prints every field of cudaDeviceProp (CUDA 13) and every device
 * attribute by number and name, one per line, for device 0.  Deterministic
 * for a given device and driver: run natively and through Tandem and diff
 * (docs/device-properties.md); the CI test compares it with the sim
 * device's table (tests/integration/test_device_props.c).
 *
 * Usage: device_props_check [props|attrs] (default: both).
 * Plain C against the runtime API: cc device_props_check.c -lcudart. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

/* Runtime names; the driver's name where the runtime calls the number
 * reserved or has none; "-" for numbers no driver of CUDA 13 names. */
static const char *const attr_names[] = {
    [0] = "-",
    [1] = "cudaDevAttrMaxThreadsPerBlock",
    [2] = "cudaDevAttrMaxBlockDimX",
    [3] = "cudaDevAttrMaxBlockDimY",
    [4] = "cudaDevAttrMaxBlockDimZ",
    [5] = "cudaDevAttrMaxGridDimX",
    [6] = "cudaDevAttrMaxGridDimY",
    [7] = "cudaDevAttrMaxGridDimZ",
    [8] = "cudaDevAttrMaxSharedMemoryPerBlock",
    [9] = "cudaDevAttrTotalConstantMemory",
    [10] = "cudaDevAttrWarpSize",
    [11] = "cudaDevAttrMaxPitch",
    [12] = "cudaDevAttrMaxRegistersPerBlock",
    [13] = "cudaDevAttrClockRate",
    [14] = "cudaDevAttrTextureAlignment",
    [15] = "cudaDevAttrGpuOverlap",
    [16] = "cudaDevAttrMultiProcessorCount",
    [17] = "cudaDevAttrKernelExecTimeout",
    [18] = "cudaDevAttrIntegrated",
    [19] = "cudaDevAttrCanMapHostMemory",
    [20] = "cudaDevAttrComputeMode",
    [21] = "cudaDevAttrMaxTexture1DWidth",
    [22] = "cudaDevAttrMaxTexture2DWidth",
    [23] = "cudaDevAttrMaxTexture2DHeight",
    [24] = "cudaDevAttrMaxTexture3DWidth",
    [25] = "cudaDevAttrMaxTexture3DHeight",
    [26] = "cudaDevAttrMaxTexture3DDepth",
    [27] = "cudaDevAttrMaxTexture2DLayeredWidth",
    [28] = "cudaDevAttrMaxTexture2DLayeredHeight",
    [29] = "cudaDevAttrMaxTexture2DLayeredLayers",
    [30] = "cudaDevAttrSurfaceAlignment",
    [31] = "cudaDevAttrConcurrentKernels",
    [32] = "cudaDevAttrEccEnabled",
    [33] = "cudaDevAttrPciBusId",
    [34] = "cudaDevAttrPciDeviceId",
    [35] = "cudaDevAttrTccDriver",
    [36] = "cudaDevAttrMemoryClockRate",
    [37] = "cudaDevAttrGlobalMemoryBusWidth",
    [38] = "cudaDevAttrL2CacheSize",
    [39] = "cudaDevAttrMaxThreadsPerMultiProcessor",
    [40] = "cudaDevAttrAsyncEngineCount",
    [41] = "cudaDevAttrUnifiedAddressing",
    [42] = "cudaDevAttrMaxTexture1DLayeredWidth",
    [43] = "cudaDevAttrMaxTexture1DLayeredLayers",
    [44] = "CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER",
    [45] = "cudaDevAttrMaxTexture2DGatherWidth",
    [46] = "cudaDevAttrMaxTexture2DGatherHeight",
    [47] = "cudaDevAttrMaxTexture3DWidthAlt",
    [48] = "cudaDevAttrMaxTexture3DHeightAlt",
    [49] = "cudaDevAttrMaxTexture3DDepthAlt",
    [50] = "cudaDevAttrPciDomainId",
    [51] = "cudaDevAttrTexturePitchAlignment",
    [52] = "cudaDevAttrMaxTextureCubemapWidth",
    [53] = "cudaDevAttrMaxTextureCubemapLayeredWidth",
    [54] = "cudaDevAttrMaxTextureCubemapLayeredLayers",
    [55] = "cudaDevAttrMaxSurface1DWidth",
    [56] = "cudaDevAttrMaxSurface2DWidth",
    [57] = "cudaDevAttrMaxSurface2DHeight",
    [58] = "cudaDevAttrMaxSurface3DWidth",
    [59] = "cudaDevAttrMaxSurface3DHeight",
    [60] = "cudaDevAttrMaxSurface3DDepth",
    [61] = "cudaDevAttrMaxSurface1DLayeredWidth",
    [62] = "cudaDevAttrMaxSurface1DLayeredLayers",
    [63] = "cudaDevAttrMaxSurface2DLayeredWidth",
    [64] = "cudaDevAttrMaxSurface2DLayeredHeight",
    [65] = "cudaDevAttrMaxSurface2DLayeredLayers",
    [66] = "cudaDevAttrMaxSurfaceCubemapWidth",
    [67] = "cudaDevAttrMaxSurfaceCubemapLayeredWidth",
    [68] = "cudaDevAttrMaxSurfaceCubemapLayeredLayers",
    [69] = "cudaDevAttrMaxTexture1DLinearWidth",
    [70] = "cudaDevAttrMaxTexture2DLinearWidth",
    [71] = "cudaDevAttrMaxTexture2DLinearHeight",
    [72] = "cudaDevAttrMaxTexture2DLinearPitch",
    [73] = "cudaDevAttrMaxTexture2DMipmappedWidth",
    [74] = "cudaDevAttrMaxTexture2DMipmappedHeight",
    [75] = "cudaDevAttrComputeCapabilityMajor",
    [76] = "cudaDevAttrComputeCapabilityMinor",
    [77] = "cudaDevAttrMaxTexture1DMipmappedWidth",
    [78] = "cudaDevAttrStreamPrioritiesSupported",
    [79] = "cudaDevAttrGlobalL1CacheSupported",
    [80] = "cudaDevAttrLocalL1CacheSupported",
    [81] = "cudaDevAttrMaxSharedMemoryPerMultiprocessor",
    [82] = "cudaDevAttrMaxRegistersPerMultiprocessor",
    [83] = "cudaDevAttrManagedMemory",
    [84] = "cudaDevAttrIsMultiGpuBoard",
    [85] = "cudaDevAttrMultiGpuBoardGroupID",
    [86] = "cudaDevAttrHostNativeAtomicSupported",
    [87] = "cudaDevAttrSingleToDoublePrecisionPerfRatio",
    [88] = "cudaDevAttrPageableMemoryAccess",
    [89] = "cudaDevAttrConcurrentManagedAccess",
    [90] = "cudaDevAttrComputePreemptionSupported",
    [91] = "cudaDevAttrCanUseHostPointerForRegisteredMem",
    [92] = "CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1",
    [93] = "CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1",
    [94] = "CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1",
    [95] = "cudaDevAttrCooperativeLaunch",
    [96] = "CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH",
    [97] = "cudaDevAttrMaxSharedMemoryPerBlockOptin",
    [98] = "cudaDevAttrCanFlushRemoteWrites",
    [99] = "cudaDevAttrHostRegisterSupported",
    [100] = "cudaDevAttrPageableMemoryAccessUsesHostPageTables",
    [101] = "cudaDevAttrDirectManagedMemAccessFromHost",
    [102] = "CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED",
    [103] = "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED",
    [104] = "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED",
    [105] = "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED",
    [106] = "cudaDevAttrMaxBlocksPerMultiprocessor",
    [107] = "CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED",
    [108] = "cudaDevAttrMaxPersistingL2CacheSize",
    [109] = "cudaDevAttrMaxAccessPolicyWindowSize",
    [110] = "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED",
    [111] = "CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK",
    [112] = "cudaDevAttrSparseCudaArraySupported",
    [113] = "cudaDevAttrHostRegisterReadOnlySupported",
    [114] = "cudaDevAttrTimelineSemaphoreInteropSupported",
    [115] = "cudaDevAttrMemoryPoolsSupported",
    [116] = "cudaDevAttrGPUDirectRDMASupported",
    [117] = "cudaDevAttrGPUDirectRDMAFlushWritesOptions",
    [118] = "cudaDevAttrGPUDirectRDMAWritesOrdering",
    [119] = "cudaDevAttrMemoryPoolSupportedHandleTypes",
    [120] = "cudaDevAttrClusterLaunch",
    [121] = "cudaDevAttrDeferredMappingCudaArraySupported",
    [122] = "CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS",
    [123] = "CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR",
    [124] = "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED",
    [125] = "cudaDevAttrIpcEventSupport",
    [126] = "cudaDevAttrMemSyncDomainCount",
    [127] = "CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED",
    [128] = "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED",
    [129] = "CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS",
    [130] = "cudaDevAttrNumaConfig",
    [131] = "cudaDevAttrNumaId",
    [132] = "CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED",
    [133] = "cudaDevAttrMpsEnabled",
    [134] = "cudaDevAttrHostNumaId",
    [135] = "cudaDevAttrD3D12CigSupported",
    [136] = "CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK",
    [137] = "CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH",
    [138] = "cudaDevAttrVulkanCigSupported",
    [139] = "cudaDevAttrGpuPciDeviceId",
    [140] = "cudaDevAttrGpuPciSubsystemId",
    [141] = "CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
    [142] = "cudaDevAttrHostNumaMemoryPoolsSupported",
    [143] = "cudaDevAttrHostNumaMultinodeIpcSupported",
    [144] = "cudaDevAttrHostMemoryPoolsSupported",
    [145] = "CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
    [146] = "CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED",
    [147] = "cudaDevAttrOnlyPartialHostNativeAtomicSupported",
    [148] = "-",
    [149] = "-",
    [150] = "-",
    [151] = "-",
    [152] = "-",
    [153] = "-",
    [154] = "-",
    [155] = "-",
    [156] = "-",
    [157] = "-",
    [158] = "-",
    [159] = "-",
};

#define ATTR_SLOTS ((int)(sizeof(attr_names) / sizeof(attr_names[0])))

static void print_ints(const char *name, const int *v, int n)
{
    printf("prop %s =", name);
    for (int i = 0; i < n; i++)
        printf(" %d", v[i]);
    printf("\n");
}

static void print_bytes(const char *name, const unsigned char *v, int n)
{
    printf("prop %s = ", name);
    for (int i = 0; i < n; i++)
        printf("%02x", v[i]);
    printf("\n");
}

#define INT(f) printf("prop %s = %d\n", #f, p.f)
#define UINT(f) printf("prop %s = %u\n", #f, p.f)
#define SIZE(f) printf("prop %s = %zu\n", #f, p.f)
#define INTS(f, n) print_ints(#f, p.f, n)

static int print_attrs(void)
{
    for (int a = 0; a < ATTR_SLOTS; a++) {
        int v = 0;
        cudaError_t err = cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)a, 0);

        if (err)
            printf("attr %d %s = error %s\n", a, attr_names[a], cudaGetErrorName(err));
        else
            printf("attr %d %s = %d\n", a, attr_names[a], v);
        (void)cudaGetLastError();
    }
    return 0;
}

static int print_props(void)
{
    struct cudaDeviceProp p;
    cudaError_t err;

    memset(&p, 0xa5, sizeof(p));   /* a field left unwritten shows */
    err = cudaGetDeviceProperties(&p, 0);
    if (err) {
        printf("cudaGetDeviceProperties: %s (%d)\n", cudaGetErrorName(err), (int)err);
        return 1;
    }
    printf("prop name = %s\n", p.name);
    print_bytes("uuid", (const unsigned char *)&p.uuid, (int)sizeof(p.uuid));
    print_bytes("luid", (const unsigned char *)p.luid, (int)sizeof(p.luid));
    UINT(luidDeviceNodeMask);
    SIZE(totalGlobalMem);
    SIZE(sharedMemPerBlock);
    INT(regsPerBlock);
    INT(warpSize);
    SIZE(memPitch);
    INT(maxThreadsPerBlock);
    INTS(maxThreadsDim, 3);
    INTS(maxGridSize, 3);
    SIZE(totalConstMem);
    INT(major);
    INT(minor);
    SIZE(textureAlignment);
    SIZE(texturePitchAlignment);
    INT(multiProcessorCount);
    INT(integrated);
    INT(canMapHostMemory);
    INT(maxTexture1D);
    INT(maxTexture1DMipmap);
    INTS(maxTexture2D, 2);
    INTS(maxTexture2DMipmap, 2);
    INTS(maxTexture2DLinear, 3);
    INTS(maxTexture2DGather, 2);
    INTS(maxTexture3D, 3);
    INTS(maxTexture3DAlt, 3);
    INT(maxTextureCubemap);
    INTS(maxTexture1DLayered, 2);
    INTS(maxTexture2DLayered, 3);
    INTS(maxTextureCubemapLayered, 2);
    INT(maxSurface1D);
    INTS(maxSurface2D, 2);
    INTS(maxSurface3D, 3);
    INTS(maxSurface1DLayered, 2);
    INTS(maxSurface2DLayered, 3);
    INT(maxSurfaceCubemap);
    INTS(maxSurfaceCubemapLayered, 2);
    SIZE(surfaceAlignment);
    INT(concurrentKernels);
    INT(ECCEnabled);
    INT(pciBusID);
    INT(pciDeviceID);
    INT(pciDomainID);
    INT(tccDriver);
    INT(asyncEngineCount);
    INT(unifiedAddressing);
    INT(memoryBusWidth);
    INT(l2CacheSize);
    INT(persistingL2CacheMaxSize);
    INT(maxThreadsPerMultiProcessor);
    INT(streamPrioritiesSupported);
    INT(globalL1CacheSupported);
    INT(localL1CacheSupported);
    SIZE(sharedMemPerMultiprocessor);
    INT(regsPerMultiprocessor);
    INT(managedMemory);
    INT(isMultiGpuBoard);
    INT(multiGpuBoardGroupID);
    INT(hostNativeAtomicSupported);
    INT(pageableMemoryAccess);
    INT(concurrentManagedAccess);
    INT(computePreemptionSupported);
    INT(canUseHostPointerForRegisteredMem);
    INT(cooperativeLaunch);
    SIZE(sharedMemPerBlockOptin);
    INT(pageableMemoryAccessUsesHostPageTables);
    INT(directManagedMemAccessFromHost);
    INT(maxBlocksPerMultiProcessor);
    INT(accessPolicyMaxWindowSize);
    SIZE(reservedSharedMemPerBlock);
    INT(hostRegisterSupported);
    INT(sparseCudaArraySupported);
    INT(hostRegisterReadOnlySupported);
    INT(timelineSemaphoreInteropSupported);
    INT(memoryPoolsSupported);
    INT(gpuDirectRDMASupported);
    UINT(gpuDirectRDMAFlushWritesOptions);
    INT(gpuDirectRDMAWritesOrdering);
    UINT(memoryPoolSupportedHandleTypes);
    INT(deferredMappingCudaArraySupported);
    INT(ipcEventSupported);
    INT(clusterLaunch);
    INT(unifiedFunctionPointers);
    INT(deviceNumaConfig);
    INT(deviceNumaId);
    INT(mpsEnabled);
    INT(hostNumaId);
    UINT(gpuPciDeviceID);
    UINT(gpuPciSubsystemID);
    INT(hostNumaMultinodeIpcSupported);
    INTS(reserved, 56);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "both";
    int rc = 0;

    if (strcmp(what, "attrs") != 0)
        rc = print_props();
    if (!rc && strcmp(what, "props") != 0)
        rc = print_attrs();
    return rc;
}
