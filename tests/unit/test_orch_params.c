/* Checking an application's Table 2 parameters (orchestrator/core/params.c): each bad value is
 * refused with a message naming the parameter. */
#include <criterion/criterion.h>
#include <string.h>

#include "orch_params.h"

static orch_params good(void)
{
    return (orch_params){ .sm_cores = 8, .memory_mib = 1024, .scale_up = 4, .scale_down = 2,
                          .latency_upper_ms = 20, .latency_lower_ms = 5, .sample_count = 5,
                          .metric_interval_s = 1 };
}

typedef struct row {
    const char *name;
    void (*spoil)(orch_params *p);
    const char *names;   /* NULL: accepted */
} row;

static void sm_zero(orch_params *p) { p->sm_cores = 0; }
static void sm_over_budget(orch_params *p) { p->sm_cores = 33; }
static void memory_over_budget(orch_params *p) { p->memory_mib = 9000; }
static void memory_negative(orch_params *p) { p->memory_mib = -1; }
static void scale_up_zero(orch_params *p) { p->scale_up = 0; }
static void scale_down_huge(orch_params *p) { p->scale_down = 1000; }
static void upper_not_above_lower(orch_params *p) { p->latency_upper_ms = 5; }
static void upper_nan(orch_params *p) { p->latency_upper_ms = __builtin_nan(""); }
static void lower_negative(orch_params *p) { p->latency_lower_ms = -1; }
static void window_zero(orch_params *p) { p->sample_count = 0; }
static void window_huge(orch_params *p) { p->sample_count = 65; }
static void interval_zero(orch_params *p) { p->metric_interval_s = 0; }
static void shm_without_nodes(orch_params *p) { p->affinity_transport = ORCH_TRANSPORT_SHM; }
static void nothing(orch_params *p) { (void)p; }

static const row rows[] = {
    { "good_parameters_pass", nothing, NULL },
    { "zero_sms_refused", sm_zero, "sm_cores (APP_SM_CORES)" },
    { "sms_over_vm_budget_refused", sm_over_budget, "sm_cores (APP_SM_CORES)" },
    { "memory_over_vm_budget_refused", memory_over_budget, "gpu_memory_mib (APP_GPU_MEMORY)" },
    { "negative_memory_refused", memory_negative, "gpu_memory_mib (APP_GPU_MEMORY)" },
    { "zero_scale_up_refused", scale_up_zero, "scale_up (SCALE_UP_FACTOR)" },
    { "scale_down_over_budget_refused", scale_down_huge, "scale_down (SCALE_DOWN_FACTOR)" },
    { "upper_not_above_lower_refused", upper_not_above_lower, "latency_upper_ms (APP_LATENCY_UPPER)" },
    { "nan_upper_refused", upper_nan, "latency_upper_ms (APP_LATENCY_UPPER)" },
    { "negative_lower_refused", lower_negative, "latency_lower_ms (APP_LATENCY_LOWER)" },
    { "empty_window_refused", window_zero, "sample_count (METRIC_SAMPLE_COUNT)" },
    { "window_over_bound_refused", window_huge, "sample_count (METRIC_SAMPLE_COUNT)" },
    { "zero_interval_refused", interval_zero, "metric_interval_s (GPU_METRIC_INTERVAL)" },
    { "shm_without_affinity_nodes_refused", shm_without_nodes, "affinity_transport" },
};

Test(orch_params, table_of_bad_parameters)
{
    orch_vm vm = { .name = "vm", .sm_budget = 32, .memory_mib = 8192 };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        orch_params p = good();
        char why[256] = "";
        rows[i].spoil(&p);
        int rc = orch_params_check(&p, &vm, why, sizeof(why));
        if (!rows[i].names) {
            cr_assert_eq(rc, 0, "%s: %s", rows[i].name, why);
            continue;
        }
        cr_assert_neq(rc, 0, "%s: accepted", rows[i].name);
        cr_assert(strstr(why, rows[i].names), "%s: '%s' does not name %s", rows[i].name, why, rows[i].names);
    }
}
