/* orchestrator.conf and vms.conf (orch_config.h). */
#include "orch_config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conf_load.h"
#include "orch_lifecycle.h"
#include "orch_params.h"

#define FAIL(s, ...) return tdm_conf_fail(err, errlen, (s), __VA_ARGS__)

/* Every key of group must be one of allowed (NULL-terminated): a misspelt key is an error, not a
 * silently kept default. */
static int only_keys(const config_setting_t *group, const char *const *allowed, char *err, size_t errlen)
{
    for (int i = 0; i < config_setting_length(group); i++) {
        const config_setting_t *s = config_setting_get_elem(group, (unsigned)i);
        const char *name = config_setting_name(s);
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(*a, name) == 0;
        if (!ok)
            FAIL(s, "unknown key '%s'", name);
    }
    return 0;
}

static int get_string(const config_setting_t *group, const char *key, bool required, char *out, size_t outlen,
                      char *err, size_t errlen)
{
    const config_setting_t *s = config_setting_get_member(group, key);

    if (!s) {
        if (required)
            FAIL(group, "'%s' is missing", key);
        return 0;
    }
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        FAIL(s, "'%s' must be a string", key);
    const char *v = config_setting_get_string(s);
    if (!v[0])
        FAIL(s, "'%s' is empty", key);
    if (strlen(v) >= outlen)
        FAIL(s, "'%s' is longer than %zu characters", key, outlen - 1);
    snprintf(out, outlen, "%s", v);
    return 0;
}

static int get_int(const config_setting_t *group, const char *key, long lo, long hi, int *out, char *err,
                   size_t errlen)
{
    const config_setting_t *s = config_setting_get_member(group, key);

    if (!s)
        return 0;   /* the default stays */
    if (config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64)
        FAIL(s, "'%s' must be an integer", key);
    long long v = config_setting_get_int64(s);
    if (v < lo || v > hi)
        FAIL(s, "'%s' is %lld: it must be %ld to %ld", key, v, lo, hi);
    *out = (int)v;
    return 0;
}

static int get_double(const config_setting_t *group, const char *key, double lo, double hi, double *out,
                      char *err, size_t errlen)
{
    const config_setting_t *s = config_setting_get_member(group, key);

    if (!s)
        return 0;
    if (!config_setting_is_number(s))
        FAIL(s, "'%s' must be a number", key);
    double v = config_setting_type(s) == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                                                           : (double)config_setting_get_int64(s);
    if (!(v >= lo && v <= hi))
        FAIL(s, "'%s' is %g: it must be %g to %g", key, v, lo, hi);
    *out = v;
    return 0;
}

static int get_mode(const config_setting_t *group, orch_mode *out, char *err, size_t errlen)
{
    char mode[32] = "";
    int rc = get_string(group, "mode", false, mode, sizeof(mode), err, errlen);

    if (rc || !mode[0])
        return rc;
    if (orch_mode_parse(mode, out) != 0)
        FAIL(config_setting_get_member(group, "mode"), "mode '%s' is not vm-dedicated or app-scoped", mode);
    return 0;
}

/* A relative path in the file at conf_path names a file beside it. */
static void beside(const char *conf_path, const char *rel, char *out, size_t outlen)
{
    const char *slash = strrchr(conf_path, '/');

    if (rel[0] == '/' || !slash)
        snprintf(out, outlen, "%s", rel);
    else
        snprintf(out, outlen, "%.*s/%s", (int)(slash - conf_path), conf_path, rel);
}

static int load_affinity(const config_setting_t *vm, orch_vm *out, char *err, size_t errlen)
{
    const config_setting_t *a = config_setting_get_member(vm, "affinity");

    if (!a)
        return 0;
    if (!config_setting_is_array(a) && !config_setting_is_list(a))
        FAIL(a, "'affinity' must be a list of node names");
    if (config_setting_length(a) > ORCH_MAX_AFFINITY)
        FAIL(a, "'affinity' names %d nodes: at most %d", config_setting_length(a), ORCH_MAX_AFFINITY);
    for (int i = 0; i < config_setting_length(a); i++) {
        const config_setting_t *e = config_setting_get_elem(a, (unsigned)i);
        const char *v = config_setting_get_string(e);
        if (!v || !v[0] || strlen(v) >= ORCH_NAME_MAX)
            FAIL(e, "'affinity' entry %d is not a node name of 1 to %d characters", i + 1, ORCH_NAME_MAX - 1);
        snprintf(out->affinity[i], sizeof(out->affinity[i]), "%s", v);
    }
    out->naffinity = config_setting_length(a);
    return 0;
}

static int load_vm(const config_setting_t *vm, orch_config *cfg, char *err, size_t errlen)
{
    static const char *const keys[] = { "name", "sm_budget", "memory_mib", "mode", "affinity", "gpu", "host", NULL };
    static const char *const gpu_keys[] = { "node", "index", NULL };
    orch_vm *v = &cfg->vms[cfg->nvms];
    int rc;

    memset(v, 0, sizeof(*v));
    v->sm_budget = -1;
    v->memory_mib = -1;
    v->mode = ORCH_MODE_VM_DEDICATED;
    v->gpu_index = -1;
    if (!config_setting_is_group(vm))
        FAIL(vm, "a VM is a group { name = ...; sm_budget = ...; ... }");
    if ((rc = only_keys(vm, keys, err, errlen)) || (rc = get_string(vm, "name", true, v->name, sizeof(v->name), err, errlen)) ||
        (rc = get_int(vm, "sm_budget", 1, 100000, &v->sm_budget, err, errlen)) ||
        (rc = get_int(vm, "memory_mib", 1, 16 * 1024 * 1024, &v->memory_mib, err, errlen)) ||
        (rc = get_mode(vm, &v->mode, err, errlen)) || (rc = load_affinity(vm, v, err, errlen)) ||
        (rc = get_string(vm, "host", false, v->host, sizeof(v->host), err, errlen)))
        return rc;
    if (v->sm_budget < 0)
        FAIL(vm, "VM %s has no 'sm_budget'", v->name);
    if (v->memory_mib < 0)
        FAIL(vm, "VM %s has no 'memory_mib'", v->name);
    for (int i = 0; i < cfg->nvms; i++)
        if (strcmp(cfg->vms[i].name, v->name) == 0)
            FAIL(vm, "VM %s appears twice", v->name);
    const config_setting_t *g = config_setting_get_member(vm, "gpu");
    if (g) {
        if (!config_setting_is_group(g))
            FAIL(g, "'gpu' is a group { node = \"NODE\"; index = N; }");
        if ((rc = only_keys(g, gpu_keys, err, errlen)) ||
            (rc = get_string(g, "node", true, v->gpu_node, sizeof(v->gpu_node), err, errlen)) ||
            (rc = get_int(g, "index", 0, ORCH_MAX_GPUS - 1, &v->gpu_index, err, errlen)))
            return rc;
        if (v->gpu_index < 0)
            FAIL(g, "'gpu' of VM %s has no 'index'", v->name);
    }
    cfg->nvms++;
    return 0;
}

int orch_config_load_vms(const char *path, orch_config *cfg, char *err, size_t errlen)
{
    config_t c;
    int rc = tdm_conf_load(&c, path, err, errlen);

    cfg->nvms = 0;
    if (rc)
        goto out;
    const config_setting_t *root = config_root_setting(&c);
    static const char *const keys[] = { "vms", NULL };
    if ((rc = only_keys(root, keys, err, errlen)))
        goto out;
    const config_setting_t *vms = config_setting_get_member(root, "vms");
    if (!vms || !config_setting_is_list(vms)) {
        rc = tdm_conf_fail(err, errlen, vms ? vms : root, "'vms' must be a list ( { name = ...; }, ... )");
        goto out;
    }
    if (config_setting_length(vms) > ORCH_MAX_VMS) {
        rc = tdm_conf_fail(err, errlen, vms, "%d VMs: at most %d", config_setting_length(vms), ORCH_MAX_VMS);
        goto out;
    }
    for (int i = 0; i < config_setting_length(vms) && !rc; i++)
        rc = load_vm(config_setting_get_elem(vms, (unsigned)i), cfg, err, errlen);
out:
    config_destroy(&c);
    return rc;
}

static int load_policies(const config_setting_t *root, orch_config *cfg, char *err, size_t errlen)
{
    static const char *const keys[] = { "telemetry_interval_ms", "node_lost_timeout_ms", "elasticity_cooldown_ms",
                                        "decisions_kept", "agent_timeout_ms", "reserved_timeout_ms", NULL };
    const config_setting_t *p = config_setting_get_member(root, "policies");
    int rc;

    if (!p)
        return 0;
    if (!config_setting_is_group(p))
        FAIL(p, "'policies' is a group { ... }");
    if ((rc = only_keys(p, keys, err, errlen)) ||
        (rc = get_int(p, "telemetry_interval_ms", 50, 600000, &cfg->telemetry_ms, err, errlen)) ||
        (rc = get_int(p, "node_lost_timeout_ms", 100, 3600000, &cfg->node_lost_ms, err, errlen)) ||
        (rc = get_int(p, "elasticity_cooldown_ms", 0, 3600000, &cfg->cooldown_ms, err, errlen)) ||
        (rc = get_int(p, "decisions_kept", 10, 1000000, &cfg->decisions_kept, err, errlen)) ||
        (rc = get_int(p, "agent_timeout_ms", 50, 60000, &cfg->agent_timeout_ms, err, errlen)) ||
        (rc = get_int(p, "reserved_timeout_ms", 100, 3600000, &cfg->reserved_timeout_ms, err, errlen)))
        return rc;
    if (cfg->node_lost_ms <= cfg->telemetry_ms)
        FAIL(config_setting_get_member(p, "node_lost_timeout_ms") ? config_setting_get_member(p, "node_lost_timeout_ms") : p,
             "node_lost_timeout_ms (%d) must be longer than telemetry_interval_ms (%d)", cfg->node_lost_ms,
             cfg->telemetry_ms);
    return 0;
}

static int load_defaults(const config_setting_t *root, orch_config *cfg, char *err, size_t errlen)
{
    static const char *const keys[] = { "sm_cores", "gpu_memory_mib", "scale_up", "scale_down", "latency_upper_ms",
                                        "latency_lower_ms", "sample_count", "metric_interval_s", NULL };
    const config_setting_t *d = config_setting_get_member(root, "defaults");
    orch_params *p = &cfg->defaults;
    int rc;

    if (!d)
        return 0;
    if (!config_setting_is_group(d))
        FAIL(d, "'defaults' is a group { ... }");
    if ((rc = only_keys(d, keys, err, errlen)) || (rc = get_int(d, "sm_cores", 1, 100000, &p->sm_cores, err, errlen)) ||
        (rc = get_int(d, "gpu_memory_mib", 1, 16 * 1024 * 1024, &p->memory_mib, err, errlen)) ||
        (rc = get_int(d, "scale_up", 1, 100000, &p->scale_up, err, errlen)) ||
        (rc = get_int(d, "scale_down", 1, 100000, &p->scale_down, err, errlen)) ||
        (rc = get_double(d, "latency_upper_ms", 0.001, 3600000, &p->latency_upper_ms, err, errlen)) ||
        (rc = get_double(d, "latency_lower_ms", 0, 3600000, &p->latency_lower_ms, err, errlen)) ||
        (rc = get_int(d, "sample_count", 1, ORCH_WINDOW_MAX, &p->sample_count, err, errlen)) ||
        (rc = get_double(d, "metric_interval_s", ORCH_PARAM_MIN_INTERVAL_S, ORCH_PARAM_MAX_INTERVAL_S,
                         &p->metric_interval_s, err, errlen)))
        return rc;
    if (!(p->latency_upper_ms > p->latency_lower_ms))
        FAIL(d, "latency_upper_ms (%g) must be above latency_lower_ms (%g)", p->latency_upper_ms, p->latency_lower_ms);
    return 0;
}

static void set_defaults(orch_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    snprintf(cfg->listen, sizeof(cfg->listen), "127.0.0.1:7070");
    cfg->telemetry_ms = 1000;
    cfg->node_lost_ms = 10000;
    cfg->cooldown_ms = 2000;
    cfg->decisions_kept = 1000;
    cfg->agent_timeout_ms = 2000;
    cfg->reserved_timeout_ms = ORCH_RESERVED_TIMEOUT_MS_DEFAULT;
    cfg->defaults = (orch_params){ .sm_cores = 8, .memory_mib = 1024, .scale_up = 4, .scale_down = 2,
                                   .latency_upper_ms = 50, .latency_lower_ms = 10, .sample_count = 5,
                                   .metric_interval_s = 1 };
}

int orch_config_load(const char *path, orch_config *out, char *err, size_t errlen)
{
    static const char *const keys[] = { "listen", "state_dir", "tenants_file", "vms", "policies", "defaults", NULL };
    char rel[PATH_MAX];
    config_t c;
    int rc;

    set_defaults(out);
    rc = tdm_conf_load(&c, path, err, errlen);
    if (rc)
        goto out;
    const config_setting_t *root = config_root_setting(&c);
    if ((rc = only_keys(root, keys, err, errlen)) ||
        (rc = get_string(root, "listen", false, out->listen, sizeof(out->listen), err, errlen)) ||
        (rc = get_string(root, "state_dir", true, rel, sizeof(rel), err, errlen)))
        goto out;
    beside(path, rel, out->state_dir, sizeof(out->state_dir));
    if ((rc = get_string(root, "tenants_file", true, rel, sizeof(rel), err, errlen)))
        goto out;
    beside(path, rel, out->tenants_file, sizeof(out->tenants_file));
    if ((rc = get_string(root, "vms", true, rel, sizeof(rel), err, errlen)))
        goto out;
    beside(path, rel, out->vms_file, sizeof(out->vms_file));
    if (!strchr(out->listen, ':')) {
        rc = tdm_conf_fail(err, errlen, config_setting_get_member(root, "listen"), "listen '%s' is not HOST:PORT",
                           out->listen);
        goto out;
    }
    if ((rc = load_policies(root, out, err, errlen)) || (rc = load_defaults(root, out, err, errlen)))
        goto out;
    rc = orch_config_load_vms(out->vms_file, out, err, errlen);
out:
    config_destroy(&c);
    return rc;
}

const orch_vm *orch_config_vm(const orch_config *cfg, const char *name)
{
    for (int i = 0; i < cfg->nvms; i++)
        if (strcmp(cfg->vms[i].name, name) == 0)
            return &cfg->vms[i];
    return NULL;
}
