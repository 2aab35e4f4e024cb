/* Flyt's Table 2 variables as a guest reads them (common/app_params.c, issue 17): every bad or
 * contradictory value refused with an error naming the variable and the value; absent ones stay
 * absent; good ones read as meant. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app_params.h"

/* An environment of at most four NAME=VALUE pairs. */
typedef struct env {
    const char *kv[4][2];
} env;

static const char *lookup(void *ctx, const char *name)
{
    const env *e = ctx;

    for (int i = 0; i < 4 && e->kv[i][0]; i++)
        if (strcmp(e->kv[i][0], name) == 0)
            return e->kv[i][1];
    return NULL;
}

typedef struct bad_row {
    env e;
    const char *why;      /* must be in the error */
} bad_row;

static const bad_row bad_rows[] = {
    { { { { "APP_SM_CORES", "abc" } } }, "APP_SM_CORES=abc: not a whole number" },
    { { { { "APP_SM_CORES", "-4" } } }, "APP_SM_CORES=-4: negative" },
    { { { { "APP_SM_CORES", "0" } } }, "APP_SM_CORES=0: zero means nothing here" },
    { { { { "APP_SM_CORES", "8.5" } } }, "APP_SM_CORES=8.5: not a whole number" },
    { { { { "APP_SM_CORES", "4097" } } }, "APP_SM_CORES=4097: too large" },
    { { { { "APP_SM_CORES", "99999999999999999999999" } } }, "APP_SM_CORES=99999999999999999999999: too large" },
    { { { { "APP_SM_CORES", " 8" } } }, "APP_SM_CORES= 8: not a whole number" },
    { { { { "APP_SM_CORES", "8 " } } }, "APP_SM_CORES=8 : not a whole number" },
    { { { { "APP_SM_CORES", "0x10" } } }, "APP_SM_CORES=0x10: not a whole number" },
    { { { { "APP_GPU_MEMORY", "4KB" } } }, "APP_GPU_MEMORY=4KB: not a whole number with the unit MB or GB" },
    { { { { "APP_GPU_MEMORY", "GB" } } }, "APP_GPU_MEMORY=GB: not a whole number" },
    { { { { "APP_GPU_MEMORY", "1.5GB" } } }, "APP_GPU_MEMORY=1.5GB: not a whole number with the unit MB or GB" },
    { { { { "APP_GPU_MEMORY", "0GB" } } }, "APP_GPU_MEMORY=0GB: zero means nothing here" },
    { { { { "APP_GPU_MEMORY", "-4GB" } } }, "APP_GPU_MEMORY=-4GB: negative" },
    { { { { "APP_GPU_MEMORY", "16385GB" } } }, "APP_GPU_MEMORY=16385GB: too large" },
    { { { { "APP_GPU_MEMORY", "18446744073709551616" } } }, "APP_GPU_MEMORY=18446744073709551616: too large" },
    /* SMs per step (Flyt's Table 2), not multipliers: a fraction is refused. */
    { { { { "SCALE_UP_FACTOR", "1.25" } } }, "SCALE_UP_FACTOR=1.25: not a whole number" },
    { { { { "SCALE_UP_FACTOR", "0" } } }, "SCALE_UP_FACTOR=0: zero means nothing here" },
    { { { { "SCALE_UP_FACTOR", "5000" } } }, "SCALE_UP_FACTOR=5000: too large" },
    { { { { "SCALE_UP_FACTOR", "2e3" } } }, "SCALE_UP_FACTOR=2e3: not a" },
    { { { { "SCALE_DOWN_FACTOR", "0.5" } } }, "SCALE_DOWN_FACTOR=0.5: not a whole number" },
    { { { { "SCALE_DOWN_FACTOR", "0" } } }, "SCALE_DOWN_FACTOR=0: zero means nothing here" },
    { { { { "SCALE_DOWN_FACTOR", "-4" } } }, "SCALE_DOWN_FACTOR=-4: negative" },
    { { { { "APP_LATENCY_UPPER", "0" } } }, "APP_LATENCY_UPPER=0: zero means nothing here" },
    { { { { "APP_LATENCY_UPPER", "0.000" } } }, "APP_LATENCY_UPPER=0.000: zero means nothing here" },
    { { { { "APP_LATENCY_UPPER", "12ms" } } }, "APP_LATENCY_UPPER=12ms: not a number" },
    { { { { "APP_LATENCY_UPPER", "3600001" } } }, "APP_LATENCY_UPPER=3600001: too large" },
    { { { { "APP_LATENCY_LOWER", "1,5" } } }, "APP_LATENCY_LOWER=1,5: not a number" },
    { { { { "APP_LATENCY_UPPER", "5" }, { "APP_LATENCY_LOWER", "5" } } },
      "APP_LATENCY_LOWER=5 is not below APP_LATENCY_UPPER=5" },
    { { { { "APP_LATENCY_UPPER", "5" }, { "APP_LATENCY_LOWER", "7.5" } } },
      "APP_LATENCY_LOWER=7.5 is not below APP_LATENCY_UPPER=5" },
    { { { { "METRIC_SAMPLE_COUNT", "0" } } }, "METRIC_SAMPLE_COUNT=0: zero means nothing here" },
    { { { { "METRIC_SAMPLE_COUNT", "1000001" } } }, "METRIC_SAMPLE_COUNT=1000001: too large" },
    /* the orchestrator's window holds 64: more is refused here, at the guest's start */
    { { { { "METRIC_SAMPLE_COUNT", "65" } } },
      "METRIC_SAMPLE_COUNT=65: too large; it must be a whole number of samples from 1 to 64" },
    { { { { "APP_MODE", "dedicated" } } }, "APP_MODE=dedicated: an unknown mode; it must be vm-dedicated or app-scoped" },
    { { { { "APP_MODE", "VM-DEDICATED" } } }, "APP_MODE=VM-DEDICATED: an unknown mode" },
    { { { { "GPU_AFFINITY_NODES", "node1,,node2" } } }, "GPU_AFFINITY_NODES=node1,,node2: an empty node name" },
    { { { { "GPU_AFFINITY_NODES", ",node1" } } }, "GPU_AFFINITY_NODES=,node1: an empty node name" },
    { { { { "GPU_AFFINITY_NODES", "node1," } } }, "GPU_AFFINITY_NODES=node1,: an empty node name" },
    { { { { "GPU_AFFINITY_NODES", ";shm" } } }, "GPU_AFFINITY_NODES=;shm: an empty node name" },
    { { { { "GPU_AFFINITY_NODES", "node1;rdma" } } }, "GPU_AFFINITY_NODES=node1;rdma: the transport after ';' is neither" },
    { { { { "GPU_AFFINITY_NODES", "node1;" } } }, "GPU_AFFINITY_NODES=node1;: the transport after ';' is neither" },
    { { { { "GPU_AFFINITY_NODES", "node1;shm;tcp" } } }, "the transport after ';' is neither shm nor tcp" },
    { { { { "GPU_AFFINITY_NODES", "node 1" } } }, "GPU_AFFINITY_NODES=node 1: a node name with a character" },
    { { { { "GPU_AFFINITY_NODES", "a,b,a" } } }, "GPU_AFFINITY_NODES=a,b,a: node a named twice" },
    { { { { "GPU_AFFINITY_NODES", "n0123456789012345678901234567890123456789012345678901234567890123" } } },
      "a node name longer than 63 bytes" },
    { { { { "GPU_AFFINITY_NODES", "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q" } } }, "more than 16 nodes" },
    { { { { "GPU_METRIC_INTERVAL", "0" } } }, "GPU_METRIC_INTERVAL=0: zero means nothing here" },
    { { { { "GPU_METRIC_INTERVAL", "-1" } } }, "GPU_METRIC_INTERVAL=-1: negative" },
    { { { { "GPU_METRIC_INTERVAL", "86401" } } }, "GPU_METRIC_INTERVAL=86401: too large" },
    { { { { "GPU_METRIC_INTERVAL", "3601" } } }, "GPU_METRIC_INTERVAL=3601: too large; it must be seconds from 0.001 to 3600" },
    { { { { "GPU_METRIC_INTERVAL", "0.0005" } } }, "GPU_METRIC_INTERVAL=0.0005: out of range" },
    /* The first bad one is named, whatever good ones come with it. */
    { { { { "APP_SM_CORES", "8" }, { "APP_MODE", "shared" } } }, "APP_MODE=shared" },
};

Test(app_params, each_bad_or_contradictory_value_is_refused_naming_the_variable_and_value)
{
    for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
        tdm_app_params p;
        char why[512] = "";

        cr_expect_eq(tdm_app_params_read(&p, lookup, (void *)&bad_rows[i].e, why, sizeof(why)), -1,
                     "row %zu (%s=%s) was accepted", i, bad_rows[i].e.kv[0][0], bad_rows[i].e.kv[0][1]);
        cr_expect(strstr(why, bad_rows[i].why) != NULL, "row %zu: '%s' does not say '%s'", i, why, bad_rows[i].why);
    }
}

Test(app_params, absent_or_empty_variables_stay_absent_for_the_tenants_defaults)
{
    env none = { { { NULL } } }, empty = { { { "APP_SM_CORES", "" }, { "APP_MODE", "" } } };
    tdm_app_params p;
    char why[256] = "";

    cr_assert_eq(tdm_app_params_read(&p, lookup, &none, why, sizeof(why)), 0, "%s", why);
    cr_expect(!p.has_sm_cores && !p.has_gpu_memory && !p.has_scale_up && !p.has_scale_down && !p.has_latency_upper &&
              !p.has_latency_lower && !p.has_sample_count && !p.has_mode && !p.has_affinity && !p.has_metric_interval);
    cr_assert_eq(tdm_app_params_read(&p, lookup, &empty, why, sizeof(why)), 0, "%s", why);
    cr_expect(!p.has_sm_cores && !p.has_mode);
    /* A lower bound alone is no contradiction: the upper one is the tenant's. */
    env lower = { { { "APP_LATENCY_LOWER", "50" } } };
    cr_expect_eq(tdm_app_params_read(&p, lookup, &lower, why, sizeof(why)), 0, "%s", why);
    cr_expect(p.has_latency_lower && !p.has_latency_upper);
}

typedef struct mem_row {
    const char *text;
    uint64_t mib;
} mem_row;

Test(app_params, gpu_memory_takes_mb_gb_or_plain_mib)
{
    static const mem_row rows[] = {
        { "4096", 4096 }, { "4096MB", 4096 }, { "4096mb", 4096 }, { "4096MiB", 4096 }, { "4096M", 4096 },
        { "4GB", 4096 },  { "4gb", 4096 },    { "4GiB", 4096 },   { "4G", 4096 },      { "16384GB", 16777216 },
        { "1", 1 },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        env e = { { { "APP_GPU_MEMORY", rows[i].text } } };
        tdm_app_params p;
        char why[256] = "";

        cr_expect_eq(tdm_app_params_read(&p, lookup, &e, why, sizeof(why)), 0, "%s: %s", rows[i].text, why);
        cr_expect(p.has_gpu_memory);
        cr_expect_eq(p.gpu_memory_mib, rows[i].mib, "%s read as %llu MiB", rows[i].text,
                     (unsigned long long)p.gpu_memory_mib);
    }
}

Test(app_params, good_values_read_as_meant_whatever_the_locale)
{
    env e = { { { "APP_SM_CORES", "16" }, { "SCALE_UP_FACTOR", "8" }, { "APP_LATENCY_UPPER", "12.5" },
                { "APP_LATENCY_LOWER", "2.25" } } };
    env f = { { { "SCALE_DOWN_FACTOR", "4" }, { "METRIC_SAMPLE_COUNT", "64" }, { "APP_MODE", "app-scoped" },
                { "GPU_METRIC_INTERVAL", "0.5" } } };
    tdm_app_params p;
    char why[256] = "";

    cr_assert_eq(tdm_app_params_read(&p, lookup, &e, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(p.sm_cores, 16);
    cr_expect_eq(p.scale_up, 8u);
    cr_expect(fabs(p.latency_upper_ms - 12.5) < 1e-12);
    cr_expect(fabs(p.latency_lower_ms - 2.25) < 1e-12);
    cr_assert_eq(tdm_app_params_read(&p, lookup, &f, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(p.scale_down, 4u);
    cr_expect_eq(p.sample_count, 64);
    cr_expect(p.has_mode && p.mode == TDM_APP_MODE_APP_SCOPED);
    cr_expect_str_eq(tdm_app_mode_name(p.mode), "app-scoped");
    cr_expect(fabs(p.metric_interval_s - 0.5) < 1e-12);
}

typedef struct affinity_row {
    const char *text;
    size_t n;
    const char *first, *last;
    tdm_app_transport transport;
} affinity_row;

Test(app_params, affinity_lists_nodes_then_an_optional_transport)
{
    static const affinity_row rows[] = {
        { "node1", 1, "node1", "node1", TDM_APP_TRANSPORT_ANY },
        { "node1,node2;shm", 2, "node1", "node2", TDM_APP_TRANSPORT_SHM },
        { "gpu-a.rack_3;tcp", 1, "gpu-a.rack_3", "gpu-a.rack_3", TDM_APP_TRANSPORT_TCP },
        { "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p", 16, "a", "p", TDM_APP_TRANSPORT_ANY },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        env e = { { { "GPU_AFFINITY_NODES", rows[i].text } } };
        tdm_app_params p;
        char why[256] = "";

        cr_assert_eq(tdm_app_params_read(&p, lookup, &e, why, sizeof(why)), 0, "%s: %s", rows[i].text, why);
        cr_expect(p.has_affinity);
        cr_expect_eq(p.naffinity, rows[i].n, "%s", rows[i].text);
        cr_expect_str_eq(p.affinity[0], rows[i].first);
        cr_expect_str_eq(p.affinity[p.naffinity - 1], rows[i].last);
        cr_expect_eq(p.affinity_transport, rows[i].transport, "%s", rows[i].text);
    }
    cr_expect_null(tdm_app_transport_name(TDM_APP_TRANSPORT_ANY));
    cr_expect_str_eq(tdm_app_transport_name(TDM_APP_TRANSPORT_SHM), "shm");
}

/* The orchestrator's use: values decoded from `app` (not text), checked by the same rows. */
Test(app_params, the_check_alone_refuses_what_the_orchestrator_decoded)
{
    tdm_app_params p;
    char why[256] = "";

    memset(&p, 0, sizeof(p));
    cr_expect_eq(tdm_app_params_check(&p, why, sizeof(why)), 0, "nothing set is refused: %s", why);
    p.has_sm_cores = true;
    p.sm_cores = 0;
    cr_expect_eq(tdm_app_params_check(&p, why, sizeof(why)), -1);
    cr_expect(strstr(why, "APP_SM_CORES=0: out of range") != NULL, "%s", why);
    p.sm_cores = 8;
    p.has_scale_down = true;
    p.scale_down = 0;
    cr_expect_eq(tdm_app_params_check(&p, why, sizeof(why)), -1, "a scale-down of 0 SMs passed");
    cr_expect(strstr(why, "SCALE_DOWN_FACTOR") != NULL, "%s", why);
    p.scale_down = 4;
    p.has_mode = true;
    p.mode = (tdm_app_mode)7;
    cr_expect_eq(tdm_app_params_check(&p, why, sizeof(why)), -1);
    cr_expect(strstr(why, "APP_MODE=7: an unknown mode") != NULL, "%s", why);
    p.mode = TDM_APP_MODE_VM_DEDICATED;
    p.has_latency_upper = p.has_latency_lower = true;
    p.latency_upper_ms = 3;
    p.latency_lower_ms = 4;
    cr_expect_eq(tdm_app_params_check(&p, why, sizeof(why)), -1);
    cr_expect(strstr(why, "APP_LATENCY_LOWER=4 is not below APP_LATENCY_UPPER=3") != NULL, "%s", why);
    p.has_latency_upper = false;
    cr_expect_eq(tdm_app_params_check(&p, why, sizeof(why)), 0, "%s", why);
}
