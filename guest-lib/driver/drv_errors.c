/* Driver error codes: the runtime layer's codes carried over, the names and strings the
 * driver gives, and the refusals of entry points Tandem does not carry. */
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "log.h"

/* The runtime's codes share the driver's numbers wherever the driver has the error (CUDA
 * aligned them); what is left are the runtime's own argument errors. */
static CUresult driver_code(cudaError_t err)
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

bool tdm_cu_log_errors(void)
{
    const char *env = getenv("TANDEM_LOG_ERRORS");

    return env && strcmp(env, "1") == 0;
}

/* TANDEM_LOG_ERRORS=1: a line for each error a driver entry point returns through tdm_cu,
 * naming the entry point and the runtime layer's code it came from.  Libraries such as cuBLAS
 * turn a driver error into an opaque status of their own; this says which call it was.
 * CUDA_ERROR_NOT_READY is a normal answer of the queries and is not logged. */
static void log_error(const char *entry_point, cudaError_t err, CUresult r)
{
    if (r == CUDA_ERROR_NOT_READY || !tdm_cu_log_errors())
        return;
    tdm_log("%s returns %s (%s from the runtime layer)", entry_point,
            tdm_cu_error_name(r) ? tdm_cu_error_name(r) : "an unnamed error", cudaGetErrorName(err));
}

CUresult tdm_cu_bad_argument(CUresult r, const char *entry_point, const char *what)
{
    if (tdm_cu_log_errors())
        tdm_log("%s returns %s: %s", entry_point, tdm_cu_error_name(r) ? tdm_cu_error_name(r) : "an unnamed error",
                what);
    return r;
}

CUresult tdm_cu_from(cudaError_t err, const char *entry_point)
{
    CUresult r;

    if (err == cudaSuccess)
        return CUDA_SUCCESS;
    r = driver_code(err);
    log_error(entry_point, err, r);
    return r;
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
