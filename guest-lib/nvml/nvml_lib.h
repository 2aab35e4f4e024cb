/* Internal interface of Tandem's libnvidia-ml.so.1 (issue 15; docs/nvml.md).  Inside a VM
 * there is no NVIDIA driver, so whatever loads NVML (PyTorch does, for device discovery)
 * finds this library, which answers from the session's device through the runtime layer's
 * functions it is built with (bound inside the library: libnvidia-ml.map exports nvml*
 * only).  Like Tandem's libcuda.so.1 beside it, it opens its own session with the server on
 * first use: the device it describes is that server's one device. */
#ifndef TANDEM_NVML_LIB_H
#define TANDEM_NVML_LIB_H

#include "guest.h"
#include "nvml_types.h"

/* A device handle is the address of the device's entry in the process's table of them
 * (nvml_device.c); NVML's headers declare the struct and never its contents. */
struct nvmlDevice_st {
    unsigned index;
};

/* ---- initialization (nvml_init.c) ---- */
/* NVML_ERROR_UNINITIALIZED unless nvmlInit succeeded more often than nvmlShutdown ran. */
nvmlReturn_t tdm_nvml_ready(void);

/* ---- devices (nvml_device.c) ---- */
/* tdm_nvml_ready(), then NVML_ERROR_INVALID_ARGUMENT unless d is a handle this library gave
 * out for a device of the session; its ordinal in *ordinal. */
nvmlReturn_t tdm_nvml_device(nvmlDevice_t d, int *ordinal);
/* Copies s into the caller's buffer of length bytes: NVML_ERROR_INVALID_ARGUMENT for a NULL
 * buffer, NVML_ERROR_INSUFFICIENT_SIZE when s and its terminator do not fit. */
nvmlReturn_t tdm_nvml_string(char *dst, unsigned int length, const char *s);

/* ---- refusals (nvml_refused.c) ---- */
/* An entry point Tandem's NVML does not carry: one line naming it (with why, when given),
 * NVML_ERROR_NOT_SUPPORTED. */
nvmlReturn_t tdm_nvml_refuse(const char *name, const char *why);

#endif
