/* Driver error codes: the runtime layer's codes carried over, the names and strings the
 * driver gives, and the refusals of entry points Tandem does not carry. */
#include <string.h>

#include "driver.h"
#include "log.h"

/* The runtime's codes share the driver's numbers wherever the driver has the error (CUDA
 * aligned them); what is left are the runtime's own argument errors. */
CUresult tdm_cu(cudaError_t err)
{
    if (tdm_cu_error_name((CUresult)err))
        return (CUresult)err;
    switch (err) {
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidSymbol:
    case cudaErrorInvalidHostPointer:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidTexture:
    case cudaErrorInvalidTextureBinding:
    case cudaErrorInvalidChannelDescriptor:
    case cudaErrorInvalidMemcpyDirection:
    case cudaErrorInvalidFilterSetting:
    case cudaErrorInvalidNormSetting:
    case cudaErrorMissingConfiguration:
    case cudaErrorInvalidDeviceFunction:
        return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorInitializationError:
        return CUDA_ERROR_NOT_INITIALIZED;
    default:
        return CUDA_ERROR_UNKNOWN;
    }
}

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    const char *name = tdm_cu_error_name(error);

    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    *pStr = name;
    return name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The runtime's description of the same number where it has one: the toolkit's own text
 * (gen_error_table.c); the driver's name otherwise. */
CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    const char *name = tdm_cu_error_name(error);

    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    if (!name) {
        *pStr = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    *pStr = cudaGetErrorString((cudaError_t)error);
    if (!*pStr || strncmp(*pStr, "unrecognized", 12) == 0)
        *pStr = name;
    return CUDA_SUCCESS;
}

CUresult tdm_cu_refuse(const char *name, const char *why)
{
    if (why)
        tdm_log("%s is not available through Tandem: %s (returning CUDA_ERROR_NOT_SUPPORTED)", name, why);
    else
        tdm_log("%s is not supported by Tandem's libcuda yet (returning CUDA_ERROR_NOT_SUPPORTED)", name);
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* The generated stubs of gen_unsupported.sh (gen/driver_unsupported.c). */
int tdm_cu_unsupported(const char *name);
int tdm_cu_not_carried(const char *name, const char *why);
int tdm_cu_unsupported(const char *name)
{
    return (int)tdm_cu_refuse(name, NULL);
}

int tdm_cu_not_carried(const char *name, const char *why)
{
    return (int)tdm_cu_refuse(name, why);
}
