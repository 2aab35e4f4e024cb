/* Initialization, error strings and the system queries of Tandem's NVML.  nvmlInit reaches the
 * Tandem server the way the runtime layer does (TANDEM_SERVER); without one there is no
 * driver, which NVML reports as NVML_ERROR_DRIVER_NOT_LOADED. */
#include <pthread.h>
#include <stdio.h>

#include "nvml_lib.h"

/* NVML counts its initializations: each nvmlInit needs its nvmlShutdown, and the library is
 * usable while more of the first have run (once per process, as NVML's own count is). */
typedef struct init_state {
    pthread_mutex_t lock;
    unsigned count;
} init_state;

static init_state init = { .lock = PTHREAD_MUTEX_INITIALIZER };

nvmlReturn_t tdm_nvml_ready(void)
{
    unsigned n;

    pthread_mutex_lock(&init.lock);
    n = init.count;
    pthread_mutex_unlock(&init.lock);
    return n ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

/* The session's server is this library's driver: unreachable, there is none (the runtime
 * layer prints why, once).  A server without a device is a driver without GPUs, which
 * NVML_INIT_FLAG_NO_GPUS accepts; NVML documents no code for refusing it otherwise, and
 * NVML_ERROR_NOT_FOUND is the nearest (a query found nothing). */
static nvmlReturn_t reach_driver(unsigned int flags)
{
    int n = 0;

    if (tdm_connect() != cudaSuccess)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    if (n == 0 && !(flags & NVML_INIT_FLAG_NO_GPUS))
        return NVML_ERROR_NOT_FOUND;
    return NVML_SUCCESS;
}

/* Flags NVML does not know are ignored, as NVIDIA's library does (H100, driver 580.159.04:
 * nvmlInitWithFlags(4) succeeds). */
nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    nvmlReturn_t r = reach_driver(flags);

    if (r)
        return r;
    pthread_mutex_lock(&init.lock);
    init.count++;
    pthread_mutex_unlock(&init.lock);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void)
{
    return nvmlInitWithFlags(0);
}

/* The entry point of NVML before the _v2 suffix; PyTorch calls it by this name. */
nvmlReturn_t nvmlInit(void)
{
    return nvmlInitWithFlags(0);
}

/* The last shutdown leaves the session open: it is the process's, as the runtime layer's is,
 * and closes when the process exits. */
nvmlReturn_t nvmlShutdown(void)
{
    nvmlReturn_t r = NVML_SUCCESS;

    pthread_mutex_lock(&init.lock);
    if (init.count == 0)
        r = NVML_ERROR_UNINITIALIZED;
    else
        init.count--;
    pthread_mutex_unlock(&init.lock);
    return r;
}

/* Tandem's own wording of each documented meaning (the reference's description of the
 * nvmlReturn_t value); any other number is an unknown error, as NVML answers. */
const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires reset";
    case NVML_ERROR_OPERATING_SYSTEM: return "GPU access blocked by the operating system";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "Driver/library version mismatch";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_MEMORY: return "Insufficient Memory";
    case NVML_ERROR_NO_DATA: return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "vGPU operation not available while ECC is enabled";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient resources";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "Frequency not supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    case NVML_ERROR_DEPRECATED: return "Deprecated";
    case NVML_ERROR_NOT_READY: return "Not ready";
    case NVML_ERROR_GPU_NOT_FOUND: return "GPU not found";
    case NVML_ERROR_INVALID_STATE: return "Invalid state";
    default: return "Unknown Error";
    }
}

/* ---- system queries ---- */

/* The CUDA driver version of the session's server (cuDriverGetVersion's number). */
static nvmlReturn_t cuda_driver_version(int *v)
{
    nvmlReturn_t r = tdm_nvml_ready();

    if (r)
        return r;
    if (!v)
        return NVML_ERROR_INVALID_ARGUMENT;
    *v = 0;
    if (cudaDriverGetVersion(v) != cudaSuccess || *v == 0)
        return NVML_ERROR_UNKNOWN;   /* initialized, so a server answered: it cannot be 0 */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
    return cuda_driver_version(cudaDriverVersion);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
    return cuda_driver_version(cudaDriverVersion);
}

/* The server reports its CUDA driver's version and not the kernel module's ("580.65.06"),
 * which Tandem's protocol does not carry: both strings are that version as MAJOR.MINOR
 * ("13.0"), the one version of the driver the guest can know (docs/nvml.md). */
static nvmlReturn_t version_string(char *version, unsigned int length)
{
    char s[32];
    int v = 0;
    nvmlReturn_t r = cuda_driver_version(&v);

    if (r)
        return r;
    snprintf(s, sizeof(s), "%d.%d", v / 1000, v % 1000 / 10);
    return tdm_nvml_string(version, length, s);
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    return version_string(version, length);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    return version_string(version, length);
}
