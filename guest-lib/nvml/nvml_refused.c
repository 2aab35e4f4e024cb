/* The NVML entry points Tandem's library carries without answering: each prints one line
 * naming it and returns NVML_ERROR_NOT_SUPPORTED.  No list of NVML's exports ships with the
 * toolkit to generate these from (as gen_unsupported.sh does for libcuda), so this is a list
 * written from NVIDIA's public NVML reference: the queries and settings programs commonly
 * make.  A name on neither list is absent from the library: dlsym finds nothing, and a
 * program that loads NVML that way (PyTorch, pynvml) treats the function as missing
 * (docs/nvml.md). */
#include "log.h"
#include "nvml_lib.h"

nvmlReturn_t tdm_nvml_refuse(const char *name, const char *why)
{
    if (why)
        tdm_log("%s is not available through Tandem: %s (returning NVML_ERROR_NOT_SUPPORTED)", name, why);
    else
        tdm_log("%s is not supported by Tandem's NVML yet (returning NVML_ERROR_NOT_SUPPORTED)", name);
    return NVML_ERROR_NOT_SUPPORTED;
}

#define SENSORS "the GPU is the server's, and its sensors, clocks and counters are the host's"
#define BOARD "Tandem's protocol does not carry the board's identity beyond name, UUID and PCI address"
#define TOPOLOGY "the host's topology (CPUs, NUMA, NVLink, PCIe) is not the guest's"
#define MIG "MIG partitions are made on the host, not seen by the guest"
#define EVENTS "the device's events are delivered to the host's driver"
#define SETTINGS "the device's settings belong to the host, not to a session"
#define VIRT "vGPU, confidential computing and units are the host's"

/* Every refused name with its reason.  The stubs take no parameters: a caller's arguments
 * are in registers or on its own stack, which the stub does not touch. */
#define NVML_REFUSED(X) \
    X(nvmlDeviceGetTemperatureV, SENSORS) \
    X(nvmlDeviceGetTemperatureThreshold, SENSORS) \
    X(nvmlDeviceGetThermalSettings, SENSORS) \
    X(nvmlDeviceGetFanSpeed_v2, SENSORS) \
    X(nvmlDeviceGetNumFans, SENSORS) \
    X(nvmlDeviceGetTargetFanSpeed, SENSORS) \
    X(nvmlDeviceGetMinMaxFanSpeed, SENSORS) \
    X(nvmlDeviceGetPowerState, SENSORS) \
    X(nvmlDeviceGetPerformanceState, SENSORS) \
    X(nvmlDeviceGetSupportedPerformanceStates, SENSORS) \
    X(nvmlDeviceGetDynamicPstatesInfo, SENSORS) \
    X(nvmlDeviceGetPowerManagementMode, SENSORS) \
    X(nvmlDeviceGetPowerManagementLimitConstraints, SENSORS) \
    X(nvmlDeviceGetPowerManagementDefaultLimit, SENSORS) \
    X(nvmlDeviceGetPowerSource, SENSORS) \
    X(nvmlDeviceGetClockInfo, SENSORS) \
    X(nvmlDeviceGetMaxClockInfo, SENSORS) \
    X(nvmlDeviceGetClock, SENSORS) \
    X(nvmlDeviceGetMaxCustomerBoostClock, SENSORS) \
    X(nvmlDeviceGetApplicationsClock, SENSORS) \
    X(nvmlDeviceGetDefaultApplicationsClock, SENSORS) \
    X(nvmlDeviceGetSupportedMemoryClocks, SENSORS) \
    X(nvmlDeviceGetSupportedGraphicsClocks, SENSORS) \
    X(nvmlDeviceGetMinMaxClockOfPState, SENSORS) \
    X(nvmlDeviceGetCurrentClockFreqs, SENSORS) \
    X(nvmlDeviceGetClockOffsets, SENSORS) \
    X(nvmlDeviceGetGpcClkVfOffset, SENSORS) \
    X(nvmlDeviceGetMemClkVfOffset, SENSORS) \
    X(nvmlDeviceGetPerformanceModes, SENSORS) \
    X(nvmlDeviceGetCurrentClocksThrottleReasons, SENSORS) \
    X(nvmlDeviceGetCurrentClocksEventReasons, SENSORS) \
    X(nvmlDeviceGetSupportedClocksThrottleReasons, SENSORS) \
    X(nvmlDeviceGetSupportedClocksEventReasons, SENSORS) \
    X(nvmlDeviceGetAutoBoostedClocksEnabled, SENSORS) \
    X(nvmlDeviceGetEncoderUtilization, SENSORS) \
    X(nvmlDeviceGetDecoderUtilization, SENSORS) \
    X(nvmlDeviceGetJpgUtilization, SENSORS) \
    X(nvmlDeviceGetOfaUtilization, SENSORS) \
    X(nvmlDeviceGetEncoderCapacity, SENSORS) \
    X(nvmlDeviceGetEncoderStats, SENSORS) \
    X(nvmlDeviceGetEncoderSessions, SENSORS) \
    X(nvmlDeviceGetFBCStats, SENSORS) \
    X(nvmlDeviceGetFBCSessions, SENSORS) \
    X(nvmlDeviceGetSamples, SENSORS) \
    X(nvmlDeviceGetProcessUtilization, SENSORS) \
    X(nvmlDeviceGetProcessesUtilizationInfo, SENSORS) \
    X(nvmlDeviceGetViolationStatus, SENSORS) \
    X(nvmlDeviceGetPcieThroughput, SENSORS) \
    X(nvmlDeviceGetPcieReplayCounter, SENSORS) \
    X(nvmlDeviceGetCurrPcieLinkGeneration, SENSORS) \
    X(nvmlDeviceGetCurrPcieLinkWidth, SENSORS) \
    X(nvmlDeviceGetMaxPcieLinkGeneration, SENSORS) \
    X(nvmlDeviceGetMaxPcieLinkWidth, SENSORS) \
    X(nvmlDeviceGetGpuMaxPcieLinkGeneration, SENSORS) \
    X(nvmlDeviceGetPcieSpeed, SENSORS) \
    X(nvmlDeviceGetPcieLinkMaxSpeed, SENSORS) \
    X(nvmlDeviceGetBAR1MemoryInfo, SENSORS) \
    X(nvmlDeviceGetEccMode, SENSORS) \
    X(nvmlDeviceGetDefaultEccMode, SENSORS) \
    X(nvmlDeviceGetTotalEccErrors, SENSORS) \
    X(nvmlDeviceGetDetailedEccErrors, SENSORS) \
    X(nvmlDeviceGetMemoryErrorCounter, SENSORS) \
    X(nvmlDeviceGetRetiredPages, SENSORS) \
    X(nvmlDeviceGetRetiredPages_v2, SENSORS) \
    X(nvmlDeviceGetRetiredPagesPendingStatus, SENSORS) \
    X(nvmlDeviceGetRemappedRows, SENSORS) \
    X(nvmlDeviceGetRowRemapperHistogram, SENSORS) \
    X(nvmlDeviceGetFieldValues, SENSORS) \
    X(nvmlDeviceGetAccountingMode, SENSORS) \
    X(nvmlDeviceGetAccountingStats, SENSORS) \
    X(nvmlDeviceGetAccountingPids, SENSORS) \
    X(nvmlDeviceGetAccountingBufferSize, SENSORS) \
    X(nvmlDeviceGetLastBBXFlushTime, SENSORS) \
    X(nvmlDeviceGetSerial, BOARD) \
    X(nvmlDeviceGetBoardPartNumber, BOARD) \
    X(nvmlDeviceGetBoardId, BOARD) \
    X(nvmlDeviceGetMultiGpuBoard, BOARD) \
    X(nvmlDeviceGetBrand, BOARD) \
    X(nvmlDeviceGetArchitecture, BOARD) \
    X(nvmlDeviceGetVbiosVersion, BOARD) \
    X(nvmlDeviceGetInforomVersion, BOARD) \
    X(nvmlDeviceGetInforomImageVersion, BOARD) \
    X(nvmlDeviceGetInforomConfigurationChecksum, BOARD) \
    X(nvmlDeviceGetDisplayMode, BOARD) \
    X(nvmlDeviceGetDisplayActive, BOARD) \
    X(nvmlDeviceGetDriverModel, BOARD) \
    X(nvmlDeviceGetDriverModel_v2, BOARD) \
    X(nvmlDeviceGetGpuOperationMode, BOARD) \
    X(nvmlDeviceGetVirtualizationMode, BOARD) \
    X(nvmlDeviceGetHostVgpuMode, BOARD) \
    X(nvmlDeviceGetGspFirmwareMode, BOARD) \
    X(nvmlDeviceGetGspFirmwareVersion, BOARD) \
    X(nvmlDeviceGetMemoryBusWidth, BOARD) \
    X(nvmlDeviceGetNumGpuCores, BOARD) \
    X(nvmlDeviceGetAttributes_v2, BOARD) \
    X(nvmlDeviceGetPciInfo, "the pre-v3 layouts; nvmlDeviceGetPciInfo_v3 answers") \
    X(nvmlDeviceGetPciInfo_v2, "the pre-v3 layouts; nvmlDeviceGetPciInfo_v3 answers") \
    X(nvmlDeviceGetPciInfoExt, BOARD) \
    X(nvmlDeviceGetModuleId, BOARD) \
    X(nvmlDeviceGetIrqNum, BOARD) \
    X(nvmlDeviceGetBusType, BOARD) \
    X(nvmlDeviceGetBridgeChipInfo, BOARD) \
    X(nvmlDeviceGetHandleBySerial, BOARD) \
    X(nvmlDeviceGetHandleByUUIDV, BOARD) \
    X(nvmlDeviceGetAPIRestriction, BOARD) \
    X(nvmlDeviceGetTopologyCommonAncestor, TOPOLOGY) \
    X(nvmlDeviceGetTopologyNearestGpus, TOPOLOGY) \
    X(nvmlSystemGetTopologyGpuSet, TOPOLOGY) \
    X(nvmlDeviceGetCpuAffinity, TOPOLOGY) \
    X(nvmlDeviceGetCpuAffinityWithinScope, TOPOLOGY) \
    X(nvmlDeviceGetMemoryAffinity, TOPOLOGY) \
    X(nvmlDeviceGetNumaNodeId, TOPOLOGY) \
    X(nvmlDeviceOnSameBoard, TOPOLOGY) \
    X(nvmlDeviceGetNvLinkCapability, TOPOLOGY) \
    X(nvmlDeviceGetNvLinkRemotePciInfo, TOPOLOGY) \
    X(nvmlDeviceGetNvLinkRemotePciInfo_v2, TOPOLOGY) \
    X(nvmlDeviceGetNvLinkRemoteDeviceType, TOPOLOGY) \
    X(nvmlDeviceGetNvLinkVersion, TOPOLOGY) \
    X(nvmlDeviceGetNvLinkErrorCounter, TOPOLOGY) \
    X(nvmlDeviceGetNvLinkUtilizationCounter, TOPOLOGY) \
    X(nvmlDeviceGetGpuFabricInfo, TOPOLOGY) \
    X(nvmlDeviceGetGpuFabricInfoV, TOPOLOGY) \
    X(nvmlDeviceGetC2cModeInfoV, TOPOLOGY) \
    X(nvmlDeviceGetMigMode, MIG) \
    X(nvmlDeviceGetMaxMigDeviceCount, MIG) \
    X(nvmlDeviceGetMigDeviceHandleByIndex, MIG) \
    X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, MIG) \
    X(nvmlDeviceIsMigDeviceHandle, MIG) \
    X(nvmlDeviceGetGpuInstanceId, MIG) \
    X(nvmlDeviceGetComputeInstanceId, MIG) \
    X(nvmlDeviceGetGpuInstances, MIG) \
    X(nvmlDeviceGetGpuInstanceById, MIG) \
    X(nvmlDeviceGetGpuInstanceProfileInfo, MIG) \
    X(nvmlDeviceGetGpuInstanceProfileInfoV, MIG) \
    X(nvmlDeviceGetGpuInstanceRemainingCapacity, MIG) \
    X(nvmlDeviceCreateGpuInstance, MIG) \
    X(nvmlEventSetCreate, EVENTS) \
    X(nvmlDeviceRegisterEvents, EVENTS) \
    X(nvmlDeviceGetSupportedEventTypes, EVENTS) \
    X(nvmlEventSetWait, EVENTS) \
    X(nvmlEventSetWait_v2, EVENTS) \
    X(nvmlEventSetFree, EVENTS) \
    X(nvmlDeviceSetPersistenceMode, SETTINGS) \
    X(nvmlDeviceSetComputeMode, SETTINGS) \
    X(nvmlDeviceSetEccMode, SETTINGS) \
    X(nvmlDeviceClearEccErrorCounts, SETTINGS) \
    X(nvmlDeviceSetApplicationsClocks, SETTINGS) \
    X(nvmlDeviceResetApplicationsClocks, SETTINGS) \
    X(nvmlDeviceSetGpuLockedClocks, SETTINGS) \
    X(nvmlDeviceResetGpuLockedClocks, SETTINGS) \
    X(nvmlDeviceSetMemoryLockedClocks, SETTINGS) \
    X(nvmlDeviceResetMemoryLockedClocks, SETTINGS) \
    X(nvmlDeviceSetPowerManagementLimit, SETTINGS) \
    X(nvmlDeviceSetPowerManagementLimit_v2, SETTINGS) \
    X(nvmlDeviceSetGpuOperationMode, SETTINGS) \
    X(nvmlDeviceSetAccountingMode, SETTINGS) \
    X(nvmlDeviceClearAccountingPids, SETTINGS) \
    X(nvmlDeviceSetAutoBoostedClocksEnabled, SETTINGS) \
    X(nvmlDeviceSetDefaultAutoBoostedClocksEnabled, SETTINGS) \
    X(nvmlDeviceSetMigMode, SETTINGS) \
    X(nvmlDeviceSetAPIRestriction, SETTINGS) \
    X(nvmlDeviceSetNvLinkUtilizationControl, SETTINGS) \
    X(nvmlDeviceResetNvLinkErrorCounters, SETTINGS) \
    X(nvmlDeviceSetDriverModel, SETTINGS) \
    X(nvmlDeviceSetFanSpeed_v2, SETTINGS) \
    X(nvmlDeviceSetDefaultFanSpeed_v2, SETTINGS) \
    X(nvmlDeviceModifyDrainState, SETTINGS) \
    X(nvmlDeviceQueryDrainState, SETTINGS) \
    X(nvmlDeviceRemoveGpu, SETTINGS) \
    X(nvmlDeviceRemoveGpu_v2, SETTINGS) \
    X(nvmlDeviceDiscoverGpus, SETTINGS) \
    X(nvmlSystemGetProcessName, VIRT) \
    X(nvmlSystemGetHicVersion, VIRT) \
    X(nvmlSystemGetConfComputeState, VIRT) \
    X(nvmlSystemGetConfComputeCapabilities, VIRT) \
    X(nvmlDeviceGetConfComputeMemSizeInfo, VIRT) \
    X(nvmlDeviceGetConfComputeProtectedMemoryUsage, VIRT) \
    X(nvmlDeviceGetConfComputeGpuCertificate, VIRT) \
    X(nvmlDeviceGetConfComputeGpuAttestationReport, VIRT) \
    X(nvmlUnitGetCount, VIRT) \
    X(nvmlUnitGetHandleByIndex, VIRT) \
    X(nvmlUnitGetUnitInfo, VIRT) \
    X(nvmlUnitGetDevices, VIRT) \
    X(nvmlGetExcludedDeviceCount, VIRT) \
    X(nvmlGetExcludedDeviceInfoByIndex, VIRT) \
    X(nvmlGetVgpuCompatibility, VIRT) \
    X(nvmlGetVgpuVersion, VIRT) \
    X(nvmlSetVgpuVersion, VIRT) \
    X(nvmlDeviceGetSupportedVgpus, VIRT) \
    X(nvmlDeviceGetCreatableVgpus, VIRT) \
    X(nvmlDeviceGetActiveVgpus, VIRT) \
    X(nvmlDeviceGetPgpuMetadataString, VIRT)

#define REFUSE(name, why) \
    nvmlReturn_t name(void); \
    nvmlReturn_t name(void) \
    { \
        return tdm_nvml_refuse(#name, why); \
    }
NVML_REFUSED(REFUSE)
