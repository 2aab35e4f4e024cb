/* Internal interface of Tandem's guest libcuda.so.1, the CUDA Driver API as guests see it
 * (issue 15; docs/driver-api.md).  It is built from the same objects as Tandem's
 * libcudart.so.13 plus this directory: a driver entry point does its work through the
 * runtime layer's functions (bound inside the library: libcuda.map exports cu[A-Z]* only), so a
 * session, its logical addresses, journal and takeover are the runtime's, unchanged.
 *
 * Handles: CUdevice is the ordinal; CUcontext points at the device's one primary context
 * (drv_context.c); CUstream, CUevent, CUgraph* and CUlibrary are the runtime layer's
 * handles; CUmodule is a library (a module loads as a library does); CUkernel and CUfunction
 * both point at the runtime layer's tdm_function record of the kernel. */
#ifndef TANDEM_DRIVER_H
#define TANDEM_DRIVER_H

/* Every exported name as itself: the legacy entry points (cuMemAlloc beside cuMemAlloc_v2)
 * and the per-thread-stream ones (cuMemcpy_ptds) are separate functions here, as in
 * NVIDIA's libcuda, instead of cuda.h's renaming macros. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <stdbool.h>

#include "guest.h"

/* ---- errors (drv_errors.c) ---- */
/* The driver's code for a runtime layer error: the same number where the driver has one,
 * CUDA_ERROR_INVALID_VALUE for the runtime's argument errors it lacks, CUDA_ERROR_UNKNOWN
 * otherwise. */
CUresult tdm_cu_from(cudaError_t err, const char *entry_point);
/* The same, naming the calling entry point for TANDEM_LOG_ERRORS (drv_errors.c). */
#define tdm_cu(err) tdm_cu_from((err), __func__)
/* Whether TANDEM_LOG_ERRORS=1 asks for a line per error (docs/driver-api.md). */
bool tdm_cu_log_errors(void);
/* r, an error an entry point finds in its own arguments, with a TANDEM_LOG_ERRORS line saying
 * what was wrong. */
CUresult tdm_cu_bad_argument(CUresult r, const char *entry_point, const char *what);
/* The driver's name of a CUresult ("CUDA_ERROR_INVALID_VALUE"), or NULL for a number the
 * driver does not define (generated from cuda.h: gen/driver_errors.c). */
const char *tdm_cu_error_name(CUresult r);

/* ---- initialization and the device (drv_device.c) ---- */
/* CUDA_ERROR_NOT_INITIALIZED before cuInit, CUDA_ERROR_NO_DEVICE when no server answers
 * (the reason printed once), else CUDA_SUCCESS. */
CUresult tdm_cu_ready(void);
/* tdm_cu_ready(), then CUDA_ERROR_INVALID_DEVICE unless dev is a device of the session. */
CUresult tdm_cu_device(CUdevice dev);

/* ---- contexts (drv_context.c) ---- */
#define TDM_CTX_MAGIC 0x74637478u
/* Context-local storage the runtime keeps through its private export table (drv_export.c):
 * one value per key, and the destructor to call when the context goes. */
#define TDM_CLS_MAX 64
typedef struct tdm_cls_entry {
    void *key, *value;
    void (*dtor)(CUcontext, void *, void *);
} tdm_cls_entry;
typedef struct tdm_cu_ctx {
    uint32_t magic;               /* TDM_CTX_MAGIC: checks a CUcontext */
    CUdevice device;
    int retained;                 /* cuDevicePrimaryCtxRetain minus Release */
    unsigned flags;               /* cuDevicePrimaryCtxSetFlags */
    unsigned long long id;        /* cuCtxGetId */
    tdm_cls_entry cls[TDM_CLS_MAX];   /* under drv_export.c's lock */
} tdm_cu_ctx;
/* The context `c` names (NULL: the thread's current one), or NULL with *err set:
 * CUDA_ERROR_INVALID_CONTEXT when there is none or c is not a context of this library. */
tdm_cu_ctx *tdm_cu_ctx_of(CUcontext c, CUresult *err);
/* The device's primary context (created, not retained, on first use). */
tdm_cu_ctx *tdm_cu_primary(CUdevice dev);
/* The thread's current context, NULL when none is current. */
tdm_cu_ctx *tdm_cu_current(void);

/* ---- kernels and functions (drv_module.c) ---- */
/* The record a CUfunction or CUkernel names, or NULL (CUDA_ERROR_INVALID_HANDLE in *err). */
tdm_function *tdm_cu_function(const void *f, CUresult *err);

/* ---- private export tables (drv_export.c) ---- */
/* Called by each context's destruction (cuDevicePrimaryCtxReset, last release): the
 * destructors the runtime registered for its context-local storage run. */
void tdm_cu_cls_context_gone(tdm_cu_ctx *ctx);

/* ---- refusals ---- */
/* An entry point Tandem's libcuda does not carry: one line naming it, CUDA_ERROR_NOT_SUPPORTED. */
CUresult tdm_cu_refuse(const char *name, const char *why);

#endif
