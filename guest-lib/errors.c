
#include "error_names.h"
#include "guest.h"
#include "log.h"

static _Thread_local cudaError_t last_error = cudaSuccess;

cudaError_t tdm_ret(cudaError_t err)
{
    if (err != cudaSuccess)
        last_error = err;
    return err;
}

cudaError_t tdm_unsupported(const char *name)
{
    tdm_log("%s is not supported by Tandem yet (returning cudaErrorNotSupported)", name);
    return tdm_ret(cudaErrorNotSupported);
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;

    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    return last_error;
}

const char *cudaGetErrorName(cudaError_t error)
{
    /* The generated table holds the cudaError* names only. */
    if (error == cudaSuccess)
        return "cudaSuccess";
    for (unsigned i = 0; i < tdm_error_name_count; i++)
        if (tdm_error_names[i].code == (int)error)
            return tdm_error_names[i].name;
    return "cudaErrorUnknown";
}

/* The descriptions programs print most; others fall back to the name. */
const char *cudaGetErrorString(cudaError_t error)
{
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorDevicesUnavailable: return "CUDA-capable device(s) is/are busy or unavailable";
    case cudaErrorInvalidKernelImage: return "device kernel image is invalid";
    case cudaErrorNoKernelImageForDevice: return "no kernel image is available for execution on the device";
    case cudaErrorSymbolNotFound: return "named symbol not found";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorUnknown: return "unknown error";
    default: break;
    }
    for (unsigned i = 0; i < tdm_error_name_count; i++)
        if (tdm_error_names[i].code == (int)error)
            return tdm_error_names[i].name;
    return "unrecognized error code";
}
