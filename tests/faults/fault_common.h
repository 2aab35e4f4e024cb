// Shared by the fault triggers of tests/faults/ (docs/faults.md): how a
// trigger reports what it did, what it observed and how it exits.
//
// Exit status of every trigger (documented in docs/faults.md):
//   10..24  the fault this trigger is for was observed (each trigger has its own
//           number: FAULT_STATUS_* below), i.e. the GPU (or the sim model)
//           raised a sticky device error
//   3       not reachable here: the setup needs an interface this driver or
//           runtime does not offer (a stock driver's missing UVM test ioctls,
//           or Tandem not remoting managed memory / the Driver API); the
//           program ran the trigger kernel without the setup and no fault came
//   4       the setup was in place but no fault came (the driver serviced it)
//   5       refused before reaching the device: a non-sticky API error such as
//           cudaErrorInvalidValue from Tandem's pointer validation
//   1       the trigger itself failed (setup error, unexpected result)
#ifndef TANDEM_FAULT_COMMON_H
#define TANDEM_FAULT_COMMON_H

#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>

enum {
    FAULT_STATUS_SM_OOB = 10,
    FAULT_STATUS_AM_CPU = 11,
    FAULT_STATUS_AM_GPU = 12,
    FAULT_STATUS_AM_VMM = 13,
    FAULT_STATUS_ZOMBIE = 14,
    FAULT_STATUS_NON_MIGRATABLE = 15,
    FAULT_STATUS_CE_OOB = 16,
    FAULT_STATUS_CE_AM = 17,
    FAULT_STATUS_PBDMA_OOB = 18,
    FAULT_STATUS_STACK_OVERFLOW = 20,
    FAULT_STATUS_ILLEGAL_INSTRUCTION = 21,
    FAULT_STATUS_SHARED_LOCAL_OOB = 22,
    FAULT_STATUS_MISALIGNED = 23,
    FAULT_STATUS_INVALID_ADDRESS_SPACE = 24,
    FAULT_EXIT_UNREACHABLE = 3,
    FAULT_EXIT_NO_FAULT = 4,
    FAULT_EXIT_REFUSED = 5,
    FAULT_EXIT_FAILED = 1,
};

// Errors after which the context is unusable: what a device fault looks like
// to a CUDA program.
static inline bool fault_is_sticky(cudaError_t e)
{
    return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorHardwareStackError ||
           e == cudaErrorIllegalInstruction || e == cudaErrorMisalignedAddress ||
           e == cudaErrorInvalidAddressSpace || e == cudaErrorInvalidPc || e == cudaErrorAssert;
}

static inline void fault_setup_check(const char *name, const char *what, cudaError_t e)
{
    if (e != cudaSuccess) {
        printf("%s: setup failed: %s: %s (%d): %s\n", name, what, cudaGetErrorName(e), (int)e,
               cudaGetErrorString(e));
        exit(FAULT_EXIT_FAILED);
    }
}

// Prints the observation line and exits with the trigger's status.  `setup`
// says whether the fault's precondition was really in place.
static inline void fault_finish(const char *name, int status, bool setup, cudaError_t e)
{
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaGetLastError();
    printf("%s: observed %s (%d): %s\n", name, cudaGetErrorName(e), (int)e, cudaGetErrorString(e));
    fflush(stdout);
    if (fault_is_sticky(e))
        exit(status);
    if (e != cudaSuccess) {
        printf("%s: refused before reaching the device (not a device fault)\n", name);
        exit(FAULT_EXIT_REFUSED);
    }
    printf("%s: no fault: %s\n", name,
           setup ? "the driver serviced the access" : "the fault's setup is not available here");
    exit(setup ? FAULT_EXIT_NO_FAULT : FAULT_EXIT_UNREACHABLE);
}

// A Driver API entry point through the runtime (no link against libcuda, so
// the program runs unchanged over Tandem's runtime, which answers
// cudaErrorNotSupported: the Driver API is not remoted).  NULL if absent.
static inline void *fault_driver_fn(const char *sym)
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;

    if (cudaGetDriverEntryPointByVersion(sym, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError(); // not sticky: clear it so it is not reported as the fault
        return nullptr;
    }
    return fn;
}

static inline void fault_begin(const char *name, const char *what)
{
    printf("%s: triggers %s\n", name, what);
    fflush(stdout);
}

#endif
