/* An application's parameters for the orchestrator (issue 17): Flyt's Table 2, as a guest reads
 * them from its environment (docs/onboarding.md) and as the `app` object of POST /v1/place
 * carries them (docs/adr/0002-control-plane.md).
 *
 * Here, and not in guest-lib/, because the orchestrator checks the same values again (a guest
 * is untrusted): tdm_app_params_check is the one place that says which values are meaningful.
 * It depends on nothing but libc, so a target that links it pulls in nothing else. */
#ifndef TANDEM_COMMON_APP_PARAMS_H
#define TANDEM_COMMON_APP_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TDM_APP_MAX_AFFINITY 16     /* nodes in GPU_AFFINITY_NODES */
#define TDM_APP_NODE_NAME_MAX 64    /* bytes of one node's name, its NUL included */
#define TDM_APP_SAMPLE_COUNT_MAX 64 /* METRIC_SAMPLE_COUNT: the orchestrator's window (ORCH_WINDOW_MAX) */

typedef enum tdm_app_mode {
    TDM_APP_MODE_VM_DEDICATED,      /* "vm-dedicated": the VM's own GPU (Flyt Table 3) */
    TDM_APP_MODE_APP_SCOPED,        /* "app-scoped": a GPU shared between applications */
} tdm_app_mode;

typedef enum tdm_app_transport {
    TDM_APP_TRANSPORT_ANY,          /* the rule's choice: shm when co-located, TCP otherwise */
    TDM_APP_TRANSPORT_SHM,
    TDM_APP_TRANSPORT_TCP,
} tdm_app_transport;

/* Each has_* false: the variable was not set, and the orchestrator applies the tenant's
 * default.  Nothing is defaulted here. */
typedef struct tdm_app_params {
    bool has_sm_cores, has_gpu_memory, has_scale_up, has_scale_down;
    bool has_latency_upper, has_latency_lower, has_sample_count, has_mode;
    bool has_affinity, has_metric_interval;
    uint32_t sm_cores;              /* APP_SM_CORES: SMs wanted */
    uint64_t gpu_memory_mib;        /* APP_GPU_MEMORY, in MiB */
    uint32_t scale_up;              /* SCALE_UP_FACTOR: SMs added per scale-up */
    uint32_t scale_down;            /* SCALE_DOWN_FACTOR: SMs removed per scale-down */
    double latency_upper_ms;        /* APP_LATENCY_UPPER */
    double latency_lower_ms;        /* APP_LATENCY_LOWER: below the upper one */
    uint32_t sample_count;          /* METRIC_SAMPLE_COUNT */
    tdm_app_mode mode;              /* APP_MODE */
    size_t naffinity;               /* GPU_AFFINITY_NODES */
    char affinity[TDM_APP_MAX_AFFINITY][TDM_APP_NODE_NAME_MAX];
    tdm_app_transport affinity_transport;
    double metric_interval_s;       /* GPU_METRIC_INTERVAL */
} tdm_app_params;

/* Where the variables come from: getenv in a guest, a table in a test.  NULL or "": not set. */
typedef const char *(*tdm_app_lookup)(void *ctx, const char *name);

/* Reads every Table 2 variable through lookup into *out, then checks them together
 * (tdm_app_params_check).  0, or -1 with why naming the variable and the value as given
 * ("APP_SM_CORES=0: ..."): a value that is no number, negative, zero where that means nothing,
 * too large, an unknown mode, an empty or overlong node name, a contradiction. */
int tdm_app_params_read(tdm_app_params *out, tdm_app_lookup lookup, void *ctx, char *why, size_t whylen);

/* The checks of tdm_app_params_read on values already parsed (the orchestrator's, after
 * decoding `app` and filling the tenant's defaults): ranges and contradictions, each named by
 * its variable.  0, or -1 with why. */
int tdm_app_params_check(const tdm_app_params *p, char *why, size_t whylen);

/* "vm-dedicated" / "app-scoped"; "shm" / "tcp" / NULL for ANY: the names the variables and the
 * JSON use. */
const char *tdm_app_mode_name(tdm_app_mode m);
const char *tdm_app_transport_name(tdm_app_transport t);

#endif
