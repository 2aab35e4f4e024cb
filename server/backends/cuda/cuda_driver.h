/* The NVIDIA driver (libcuda.so.1), loaded at run time.
 *
 * The server must build and run on machines with no driver (the sim backend,
 * CI), so it never links libcuda; the cuda backend loads it when a session
 * first needs the GPU.  Entry points are resolved with cuGetProcAddress for
 * the toolkit version we compiled against, so each pointer has exactly the
 * signature cuda.h declares (cuda.h's _v2 renames apply to the member names
 * too, so `tdm_cu.cuMemGetInfo(...)` calls the _v2 entry point). */
#ifndef TANDEM_CUDA_DRIVER_H
#define TANDEM_CUDA_DRIVER_H

#include <stddef.h>
#include <cuda.h>
#include <driver_types.h>

#define TDM_CUDA_DRIVER_FUNCS(X)                                                         \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                 \
    X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetUuid)              \
    X(cuDeviceTotalMem) X(cuDeviceGetAttribute)                                           \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSynchronize) X(cuCtxGetCurrent) X(cuCtxSetCurrent)          \
    X(cuMemGetInfo) X(cuMemGetAllocationGranularity) X(cuMemAddressReserve)               \
    X(cuMemAddressFree) X(cuMemCreate) X(cuMemRelease) X(cuMemMap) X(cuMemUnmap)          \
    X(cuMemExportToShareableHandle) X(cuMemImportFromShareableHandle)          \
    X(cuMemSetAccess) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync)      \
    X(cuMemsetD8Async) X(cuMemHostRegister) X(cuMemHostUnregister)                                                              \
    X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuModuleGetGlobal)     \
    /* ---- libraries (issue 14) ---- */ X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions) X(cuFuncGetName) \
    X(cuFuncGetAttribute) X(cuFuncGetParamInfo) X(cuLaunchKernel)                         \
    X(cuStreamCreate) X(cuStreamCreateWithPriority) X(cuStreamDestroy) X(cuStreamQuery)   \
    X(cuStreamSynchronize) X(cuStreamWaitEvent)                                           \
    X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery)                   \
    X(cuEventSynchronize) X(cuEventElapsedTime)                                           \
    /* ---- health (issue 14) ---- */ X(cuDevicePrimaryCtxReset)                          \
    /* ---- layout (issue 14) ---- */                                                    \
    X(cuMemAllocPitch) X(cuMemFree) X(cuMemcpy3DAsync) X(cuMemsetD2D8Async)  \
    X(cuArray3DCreate) X(cuArrayDestroy)                                                  \
    X(cuTexObjectCreate) X(cuTexObjectDestroy) X(cuSurfObjectCreate) X(cuSurfObjectDestroy) \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags) X(cuOccupancyAvailableDynamicSMemPerBlock) \
    X(cuCtxGetStreamPriorityRange) X(cuCtxGetLimit) X(cuCtxSetLimit) X(cuFuncSetAttribute)  \
    X(cuFuncSetCacheConfig) X(cuLaunchCooperativeKernel) X(cuDeviceGetPCIBusId) \
    /* ---- memory models (issue 14) ---- */                                            \
    X(cuMemHostGetDevicePointer) \
    /* ---- graphs (issue 14) ---- */                                                     \
    X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuStreamGetCaptureInfo)               \
    X(cuGraphDestroy) X(cuGraphInstantiateWithFlags) X(cuGraphExecDestroy) X(cuGraphLaunch) \
    X(cuGraphExecUpdate) X(cuGraphCreate) X(cuGraphAddEmptyNode) X(cuGraphAddKernelNode)          \
    X(cuGraphAddMemcpyNode) X(cuGraphAddMemsetNode) X(cuGraphAddDependencies)                  \
    X(cuGraphKernelNodeSetParams) X(cuGraphExecKernelNodeSetParams)                         \
    /* ---- launch ex and stream attributes (issue 14) ---- */                         \
    X(cuStreamSetAttribute) X(cuStreamGetAttribute)                                       \
    /* ---- host callbacks (issue 14) ---- */                                            \
    X(cuMemHostAlloc) X(cuMemFreeHost) X(cuStreamAddCallback) X(cuStreamWaitValue32) X(cuLaunchHostFunc) \
    /* ---- graph memcpy nodes, queries (issue 14) ---- */                             \
    X(cuGraphClone) X(cuGraphGetNodes) X(cuGraphNodeGetType) X(cuGraphNodeGetDependencies) \
    X(cuGraphRemoveDependencies) X(cuGraphDestroyNode) X(cuGraphNodeFindInClone) \
    /* ---- graph memory nodes (issue 14) ---- */                                         \
    X(cuThreadExchangeStreamCaptureMode)                                                  \
    /* ---- conditional graph nodes (issue 14) ---- */                                    \
    X(cuGraphConditionalHandleCreate) X(cuGraphAddNode) X(cuStreamBeginCaptureToGraph)          \
    X(cuStreamUpdateCaptureDependencies) \
    /* ---- graph host nodes (issue 14) ---- */                                        \
    X(cuGraphAddHostNode) X(cuGraphHostNodeGetParams)                                    \
    /* ---- graph node parameters (issue 14) ---- */                                    \
    X(cuGraphNodeSetEnabled) X(cuGraphNodeGetEnabled) X(cuGraphMemsetNodeSetParams)       \
    X(cuGraphExecMemsetNodeSetParams) X(cuGraphMemcpyNodeSetParams) X(cuGraphExecMemcpyNodeSetParams)  \
    X(cuGraphKernelNodeSetAttribute) X(cuGraphExecHostNodeSetParams) \
    /* ---- event nodes, child graphs, user objects (issue 14) ---- */                    \
    X(cuGraphAddEventRecordNode) X(cuGraphAddEventWaitNode) X(cuGraphEventRecordNodeGetEvent)   \
    X(cuGraphEventWaitNodeGetEvent) X(cuGraphEventRecordNodeSetEvent) X(cuGraphEventWaitNodeSetEvent) \
    X(cuGraphExecEventRecordNodeSetEvent) X(cuGraphExecEventWaitNodeSetEvent) X(cuEventRecordWithFlags) \
    X(cuGraphAddChildGraphNode) X(cuGraphChildGraphNodeGetGraph) X(cuGraphExecChildGraphNodeSetParams) \
    /* ---- mipmapped arrays (issue 14) ---- */                                        \
    X(cuMipmappedArrayCreate) X(cuMipmappedArrayGetLevel) X(cuMipmappedArrayDestroy) \
    /* ---- cluster launch and device odds and ends (issue 14) ---- */                   \
    X(cuLaunchKernelEx) X(cuOccupancyMaxActiveClusters) X(cuOccupancyMaxPotentialClusterSize) \
    X(cuDeviceGetTexture1DLinearMaxWidth) X(cuDeviceGetHostAtomicCapabilities) \
    /* ---- external semaphore nodes (issue 14) ---- */                                  \
    X(cuGraphAddExternalSemaphoresSignalNode) X(cuGraphAddExternalSemaphoresWaitNode) \
    /* ---- SM shares (issue 17): green contexts ---- */                                  \
    X(cuDeviceGetDevResource) X(cuDevSmResourceSplitByCount) X(cuDevResourceGenerateDesc)  \
    X(cuGreenCtxCreate) X(cuGreenCtxDestroy) X(cuGreenCtxStreamCreate)                    \
    X(cuLibraryLoadData) X(cuLibraryUnload) X(cuLibraryGetKernel) X(cuKernelSetAttribute)

#define TDM_CUDA_DRIVER_MEMBER(fn) __typeof__(&fn) fn;
typedef struct tdm_cuda_driver {
    TDM_CUDA_DRIVER_FUNCS(TDM_CUDA_DRIVER_MEMBER)
} tdm_cuda_driver;
#undef TDM_CUDA_DRIVER_MEMBER

/* One driver per process, as the process really has one libcuda mapping.
 * Valid after tdm_cuda_driver_load() has returned 0. */
extern tdm_cuda_driver tdm_cu;

/* Loads libcuda.so.1 once (thread-safe) and resolves every entry point.
 * Returns 0, or cudaErrorInsufficientDriver (no driver, or one too old to
 * have an entry point) with a one-line reason in err. */
int tdm_cuda_driver_load(char *err, size_t errlen);

#endif
