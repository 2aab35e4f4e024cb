/* Checking an application's Table 2 parameters (orch_params.h). */
#include "orch_params.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); return -EINVAL; } while (0)

int orch_params_check(const orch_params *p, const orch_vm *vm, char *why, size_t whylen)
{
    if (p->sm_cores < 1 || p->sm_cores > ORCH_PARAM_MAX_SM)
        FAIL("sm_cores (APP_SM_CORES) is %d: it must be 1 to %d", p->sm_cores, ORCH_PARAM_MAX_SM);
    if (p->sm_cores > vm->sm_budget)
        FAIL("sm_cores (APP_SM_CORES) is %d: VM %s's SM budget is %d", p->sm_cores, vm->name, vm->sm_budget);
    if (p->memory_mib < 1 || p->memory_mib > ORCH_PARAM_MAX_MEMORY_MIB)
        FAIL("gpu_memory_mib (APP_GPU_MEMORY) is %d: it must be 1 to %d MiB", p->memory_mib, ORCH_PARAM_MAX_MEMORY_MIB);
    if (p->memory_mib > vm->memory_mib)
        FAIL("gpu_memory_mib (APP_GPU_MEMORY) is %d: VM %s's memory budget is %d MiB", p->memory_mib, vm->name,
             vm->memory_mib);
    if (p->scale_up < 1 || p->scale_up > vm->sm_budget)
        FAIL("scale_up (SCALE_UP_FACTOR) is %d: it must be 1 to the VM's SM budget, %d", p->scale_up, vm->sm_budget);
    if (p->scale_down < 1 || p->scale_down > vm->sm_budget)
        FAIL("scale_down (SCALE_DOWN_FACTOR) is %d: it must be 1 to the VM's SM budget, %d", p->scale_down,
             vm->sm_budget);
    if (!(p->latency_upper_ms > 0 && p->latency_upper_ms <= ORCH_PARAM_MAX_LATENCY_MS))
        FAIL("latency_upper_ms (APP_LATENCY_UPPER) is %g: it must be above 0 and at most %g", p->latency_upper_ms,
             ORCH_PARAM_MAX_LATENCY_MS);
    if (!(p->latency_lower_ms >= 0 && p->latency_lower_ms <= ORCH_PARAM_MAX_LATENCY_MS))
        FAIL("latency_lower_ms (APP_LATENCY_LOWER) is %g: it must be 0 to %g", p->latency_lower_ms,
             ORCH_PARAM_MAX_LATENCY_MS);
    if (!(p->latency_upper_ms > p->latency_lower_ms))
        FAIL("latency_upper_ms (APP_LATENCY_UPPER) %g must be above latency_lower_ms (APP_LATENCY_LOWER) %g",
             p->latency_upper_ms, p->latency_lower_ms);
    if (p->sample_count < 1 || p->sample_count > ORCH_WINDOW_MAX)
        FAIL("sample_count (METRIC_SAMPLE_COUNT) is %d: it must be 1 to %d", p->sample_count, ORCH_WINDOW_MAX);
    if (!(p->metric_interval_s >= ORCH_PARAM_MIN_INTERVAL_S && p->metric_interval_s <= ORCH_PARAM_MAX_INTERVAL_S))
        FAIL("metric_interval_s (GPU_METRIC_INTERVAL) is %g: it must be %g to %g seconds", p->metric_interval_s,
             ORCH_PARAM_MIN_INTERVAL_S, ORCH_PARAM_MAX_INTERVAL_S);
    if (p->naffinity < 0 || p->naffinity > ORCH_MAX_AFFINITY)
        FAIL("affinity (GPU_AFFINITY_NODES) names %d nodes: at most %d", p->naffinity, ORCH_MAX_AFFINITY);
    for (int i = 0; i < p->naffinity; i++)
        if (!p->affinity[i][0])
            FAIL("affinity (GPU_AFFINITY_NODES) has an empty node name");
    if (p->affinity_transport == ORCH_TRANSPORT_SHM && p->naffinity == 0)
        FAIL("affinity_transport (GPU_AFFINITY_NODES) is shm but no node is named");
    return 0;
}
