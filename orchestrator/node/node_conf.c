/* See node_conf.h. */
#include "node_conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_load.h"

/* A string setting into out (bounded); absent: def (NULL: required). */
static int get_str(const config_setting_t *root, const char *key, const char *def, char *out, size_t len,
                   char *err, size_t errlen)
{
    const config_setting_t *s = config_setting_get_member(root, key);

    if (!s) {
        if (!def)
            return tdm_conf_fail(err, errlen, root, "'%s' is missing", key);
        snprintf(out, len, "%s", def);
        return 0;
    }
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return tdm_conf_fail(err, errlen, s, "'%s' must be a string", key);
    const char *v = config_setting_get_string(s);
    if (strlen(v) >= len)
        return tdm_conf_fail(err, errlen, s, "'%s' is longer than %zu characters", key, len - 1);
    snprintf(out, len, "%s", v);
    return 0;
}

static int get_int(const config_setting_t *root, const char *key, int def, int lo, int hi, int *out, char *err,
                   size_t errlen)
{
    const config_setting_t *s = config_setting_get_member(root, key);

    if (!s) {
        *out = def;
        return 0;
    }
    if (config_setting_type(s) != CONFIG_TYPE_INT)
        return tdm_conf_fail(err, errlen, s, "'%s' must be an integer", key);
    int v = config_setting_get_int(s);
    if (v < lo || v > hi)
        return tdm_conf_fail(err, errlen, s, "'%s' must be from %d to %d", key, lo, hi);
    *out = v;
    return 0;
}

static int get_bool(const config_setting_t *root, const char *key, bool def, bool *out, char *err, size_t errlen)
{
    const config_setting_t *s = config_setting_get_member(root, key);

    if (!s) {
        *out = def;
        return 0;
    }
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
        return tdm_conf_fail(err, errlen, s, "'%s' must be true or false", key);
    *out = config_setting_get_bool(s);
    return 0;
}

/* HOST:PORT with a port from 1 to 65535. */
static int check_host_port(const config_setting_t *root, const char *key, const char *v, char *err, size_t errlen)
{
    const char *colon = strrchr(v, ':');
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;

    if (!colon || colon == v || *end || port < 1 || port > 65535)
        return tdm_conf_fail(err, errlen, config_setting_get_member(root, key), "'%s' must be HOST:PORT, got '%s'",
                             key, v);
    return 0;
}

/* Names that become file names and server ids: letters, digits, - and _. */
static int check_name(const config_setting_t *root, const char *key, const char *v, char *err, size_t errlen)
{
    if (!*v || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(v))
        return tdm_conf_fail(err, errlen, config_setting_get_member(root, key),
                             "'%s' may hold only letters, digits, - and _ (it names files and servers)", key);
    return 0;
}

static int load_gpu(const config_setting_t *g, int at, tdm_node_conf *c, char *err, size_t errlen)
{
    tdm_node_gpu *gpu = &c->gpus[at];
    char def_name[32];
    int rc;

    if (config_setting_type(g) != CONFIG_TYPE_GROUP)
        return tdm_conf_fail(err, errlen, g, "each of 'gpus' must be a group { index = N; ... }");
    if (!config_setting_get_member(g, "index"))
        return tdm_conf_fail(err, errlen, g, "a GPU needs its 'index'");
    if (!config_setting_get_member(g, "base_port"))
        return tdm_conf_fail(err, errlen, g, "a GPU needs its 'base_port' (its servers listen from there on)");
    if ((rc = get_int(g, "index", 0, 0, 63, &gpu->index, err, errlen)) ||
        (rc = get_int(g, "servers", 1, 1, TDM_NODE_MAX_SERVERS_PER_GPU, &gpu->servers, err, errlen)) ||
        (rc = get_bool(g, "standby", true, &gpu->standby, err, errlen)) ||
        (rc = get_int(g, "base_port", 0, 1, 65535 - 2 * TDM_NODE_MAX_SERVERS_PER_GPU, &gpu->base_port, err,
                      errlen)) ||
        (rc = get_int(g, "sm_budget_per_vm", 0, 0, 1024, &gpu->sm_budget_per_vm, err, errlen)) ||
        (rc = get_int(g, "memory_mib", 0, 0, 1 << 30, &gpu->memory_mib, err, errlen)))
        return rc;
    snprintf(def_name, sizeof(def_name), "GPU %d", gpu->index);
    if ((rc = get_str(g, "name", def_name, gpu->name, sizeof(gpu->name), err, errlen)))
        return rc;
    for (int i = 0; i < at; i++) {
        if (c->gpus[i].index == gpu->index)
            return tdm_conf_fail(err, errlen, config_setting_get_member(g, "index"), "GPU %d is listed twice",
                                 gpu->index);
        int lo = c->gpus[i].base_port, hi = lo + 2 * c->gpus[i].servers;
        if (gpu->base_port < hi && lo < gpu->base_port + 2 * gpu->servers)
            return tdm_conf_fail(err, errlen, config_setting_get_member(g, "base_port"),
                                 "the ports of GPU %d overlap those of GPU %d", gpu->index, c->gpus[i].index);
    }
    return 0;
}

static int load_server_options(const config_setting_t *root, tdm_node_conf *c, char *err, size_t errlen)
{
    const config_setting_t *opts = config_setting_get_member(root, "server_options");

    c->nserver_options = 0;
    if (!opts)
        return 0;
    if (!config_setting_is_array(opts) && !config_setting_is_list(opts))
        return tdm_conf_fail(err, errlen, opts, "'server_options' must be a list of strings [\"--opt\", \"value\"]");
    int n = config_setting_length(opts);
    if (n > TDM_NODE_SERVER_OPTIONS_MAX)
        return tdm_conf_fail(err, errlen, opts, "'server_options' may hold at most %d strings",
                             TDM_NODE_SERVER_OPTIONS_MAX);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(opts, (unsigned)i);
        const char *v = config_setting_get_string(e);
        if (!v)
            return tdm_conf_fail(err, errlen, e, "'server_options' element %d must be a string", i + 1);
        if (strlen(v) >= sizeof(c->server_options[0]))
            return tdm_conf_fail(err, errlen, e, "'server_options' element %d is longer than %zu characters", i + 1,
                                 sizeof(c->server_options[0]) - 1);
        snprintf(c->server_options[i], sizeof(c->server_options[i]), "%s", v);
    }
    c->nserver_options = n;
    return 0;
}

static int load(const config_t *cfg, tdm_node_conf *c, char *err, size_t errlen)
{
    const config_setting_t *root = config_root_setting(cfg), *gpus;
    char mps[8];
    int rc;

    if ((rc = get_str(root, "node", NULL, c->node, sizeof(c->node), err, errlen)) ||
        (rc = check_name(root, "node", c->node, err, errlen)) ||
        (rc = get_str(root, "host", c->node, c->host, sizeof(c->host), err, errlen)) ||
        (rc = get_str(root, "listen", "127.0.0.1:7080", c->listen, sizeof(c->listen), err, errlen)) ||
        (rc = check_host_port(root, "listen", c->listen, err, errlen)) ||
        (rc = get_str(root, "orchestrator", "127.0.0.1:7070", c->orchestrator, sizeof(c->orchestrator), err,
                      errlen)) ||
        (rc = check_host_port(root, "orchestrator", c->orchestrator, err, errlen)) ||
        (rc = get_str(root, "state_dir", NULL, c->state_dir, sizeof(c->state_dir), err, errlen)) ||
        (rc = get_str(root, "server", "", c->server_bin, sizeof(c->server_bin), err, errlen)) ||
        (rc = get_str(root, "server_host", "127.0.0.1", c->server_host, sizeof(c->server_host), err, errlen)) ||
        (rc = get_str(root, "backend", NULL, c->backend, sizeof(c->backend), err, errlen)) ||
        (rc = get_str(root, "mps", "off", mps, sizeof(mps), err, errlen)) ||
        (rc = get_str(root, "tenants", "", c->tenants, sizeof(c->tenants), err, errlen)) ||
        (rc = get_int(root, "telemetry_ms", 1000, 100, 600000, &c->telemetry_ms, err, errlen)) ||
        (rc = get_int(root, "restarts_per_minute", 5, 1, 600, &c->restarts_per_minute, err, errlen)) ||
        (rc = get_bool(root, "leave_servers_running", false, &c->leave_servers_running, err, errlen)))
        return rc;
    if (strcmp(c->backend, "sim") != 0 && strcmp(c->backend, "cuda") != 0)
        return tdm_conf_fail(err, errlen, config_setting_get_member(root, "backend"),
                             "'backend' must be \"sim\" or \"cuda\", got \"%s\"", c->backend);
    if (strcmp(mps, "on") != 0 && strcmp(mps, "off") != 0)
        return tdm_conf_fail(err, errlen, config_setting_get_member(root, "mps"),
                             "'mps' must be \"on\" or \"off\", got \"%s\"", mps);
    c->mps = strcmp(mps, "on") == 0;
    if (c->state_dir[0] != '/')
        return tdm_conf_fail(err, errlen, config_setting_get_member(root, "state_dir"),
                             "'state_dir' must be an absolute path");
    if ((rc = load_server_options(root, c, err, errlen)))
        return rc;
    gpus = config_setting_get_member(root, "gpus");
    if (!gpus)
        return tdm_conf_fail(err, errlen, root, "'gpus' is missing: a list ( { index = 0; base_port = N; } )");
    if (!config_setting_is_list(gpus) && !config_setting_is_array(gpus))
        return tdm_conf_fail(err, errlen, gpus, "'gpus' must be a list ( { ... }, { ... } )");
    c->ngpus = config_setting_length(gpus);
    if (c->ngpus < 1 || c->ngpus > TDM_NODE_MAX_GPUS)
        return tdm_conf_fail(err, errlen, gpus, "'gpus' must list 1 to %d GPUs", TDM_NODE_MAX_GPUS);
    for (int i = 0; i < c->ngpus; i++)
        if ((rc = load_gpu(config_setting_get_elem(gpus, (unsigned)i), i, c, err, errlen)))
            return rc;
    return 0;
}

int tdm_node_conf_load(const char *path, tdm_node_conf *c, char *err, size_t errlen)
{
    config_t cfg;
    int rc;

    memset(c, 0, sizeof(*c));
    rc = tdm_conf_load(&cfg, path, err, errlen);
    if (rc == 0)
        rc = load(&cfg, c, err, errlen);
    config_destroy(&cfg);
    return rc;
}
