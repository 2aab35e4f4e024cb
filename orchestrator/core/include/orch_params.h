/* Checking an application's Flyt Table 2 parameters against its VM: the guest checked them, the
 * orchestrator checks again (a guest is untrusted).  The daemon parses the JSON; this says what
 * a value may be. */
#ifndef TANDEM_ORCH_PARAMS_H
#define TANDEM_ORCH_PARAMS_H

#include <stddef.h>

#include "orch_model.h"

#define ORCH_PARAM_MAX_SM 100000
#define ORCH_PARAM_MAX_MEMORY_MIB (16 * 1024 * 1024)
#define ORCH_PARAM_MAX_LATENCY_MS 3600000.0
#define ORCH_PARAM_MIN_INTERVAL_S 0.001   /* GPU_METRIC_INTERVAL, seconds: the guest's bounds too */
#define ORCH_PARAM_MAX_INTERVAL_S 3600.0

/* 0, or -EINVAL with why naming the parameter (by its JSON key and its Table 2 name). */
int orch_params_check(const orch_params *p, const orch_vm *vm, char *why, size_t whylen);

#endif
