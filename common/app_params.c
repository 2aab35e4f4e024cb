/* Flyt's Table 2 variables (issue 17): one row per variable says its type and its meaningful
 * range; reading and checking both go by the rows, so a range is written once. */
#include "app_params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef enum kind { K_COUNT, K_MIB, K_REAL, K_MODE, K_AFFINITY } kind;

typedef struct var {
    const char *name;
    kind k;
    size_t has, val;         /* offsets in tdm_app_params of its has_* flag and its value */
    double min, max;         /* the meaningful range; the ends as open_min / open_max say */
    bool open_min, open_max;
    const char *range;       /* the range in words, for the error */
} var;

#define AT(f) offsetof(tdm_app_params, f)
#define MIB_MAX (16.0 * 1024 * 1024)    /* 16 TiB: past any GPU, and far from overflowing bytes */

static const var vars[] = {
    { "APP_SM_CORES", K_COUNT, AT(has_sm_cores), AT(sm_cores), 1, 4096, false, false,
      "a whole number of SMs from 1 to 4096" },
    { "APP_GPU_MEMORY", K_MIB, AT(has_gpu_memory), AT(gpu_memory_mib), 1, MIB_MAX, false, false,
      "a size from 1MB to 16384GB (MB, GB, or a plain number of MiB)" },
    /* Flyt's Table 2: SMs added (removed) per scale-up (scale-down) action, not multipliers. */
    { "SCALE_UP_FACTOR", K_COUNT, AT(has_scale_up), AT(scale_up), 1, 4096, false, false,
      "a whole number of SMs from 1 to 4096" },
    { "SCALE_DOWN_FACTOR", K_COUNT, AT(has_scale_down), AT(scale_down), 1, 4096, false, false,
      "a whole number of SMs from 1 to 4096" },
    { "APP_LATENCY_UPPER", K_REAL, AT(has_latency_upper), AT(latency_upper_ms), 0, 3600000, true, false,
      "milliseconds above 0 and at most 3600000" },
    { "APP_LATENCY_LOWER", K_REAL, AT(has_latency_lower), AT(latency_lower_ms), 0, 3600000, true, false,
      "milliseconds above 0 and at most 3600000" },
    /* The orchestrator keeps at most this many samples per application and refuses more. */
    { "METRIC_SAMPLE_COUNT", K_COUNT, AT(has_sample_count), AT(sample_count), 1, TDM_APP_SAMPLE_COUNT_MAX, false,
      false, "a whole number of samples from 1 to 64" },
    { "APP_MODE", K_MODE, AT(has_mode), AT(mode), 0, 0, false, false, "vm-dedicated or app-scoped" },
    { "GPU_AFFINITY_NODES", K_AFFINITY, AT(has_affinity), AT(affinity), 0, 0, false, false,
      "NODE[,NODE...][;shm|;tcp]" },
    /* The orchestrator's bounds (ORCH_PARAM_{MIN,MAX}_INTERVAL_S); sent as a JSON number. */
    { "GPU_METRIC_INTERVAL", K_REAL, AT(has_metric_interval), AT(metric_interval_s), 0.001, 3600, false, false,
      "seconds from 0.001 to 3600" },
};

#define NVARS (sizeof(vars) / sizeof(vars[0]))

static bool *has_of(tdm_app_params *p, const var *v)
{
    return (bool *)((char *)p + v->has);
}

static bool has(const tdm_app_params *p, const var *v)
{
    return *(const bool *)((const char *)p + v->has);
}

static void *val_of(tdm_app_params *p, const var *v)
{
    return (char *)p + v->val;
}

static double number_of(const tdm_app_params *p, const var *v)
{
    const void *at = (const char *)p + v->val;

    switch (v->k) {
    case K_COUNT:
        return *(const uint32_t *)at;
    case K_MIB:
        return (double)*(const uint64_t *)at;
    default:
        return *(const double *)at;
    }
}

static bool in_range(const var *v, double x)
{
    if (isnan(x) || (v->open_min ? x <= v->min : x < v->min))
        return false;
    return v->open_max ? x < v->max : x <= v->max;
}

/* A plain decimal: digits, and for a real one '.' and more digits.  By hand rather than by
 * strtod, which follows the program's locale (a guest runs inside any program) and accepts
 * "inf", "nan", hex and exponents that no one means here.  *end: the first byte not taken. */
static int decimal(const char *s, bool real, double *out, const char **end)
{
    double x = 0, scale = 1;
    const char *p = s;

    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++)
        x = x * 10 + (*p - '0');
    if (real && *p == '.') {
        if (p[1] < '0' || p[1] > '9')
            return -1;
        for (p++; *p >= '0' && *p <= '9'; p++)
            x += (*p - '0') * (scale /= 10);
    }
    *out = x;
    *end = p;
    return 0;
}

/* APP_GPU_MEMORY's unit: MB and MiB mean 2^20 bytes, as Flyt's "MB" does; GB and GiB 2^30. */
static int unit_mib(const char *u, double *mib)
{
    static const struct { const char *name; double mib; } units[] = {
        { "", 1 }, { "M", 1 }, { "MB", 1 }, { "MiB", 1 }, { "G", 1024 }, { "GB", 1024 }, { "GiB", 1024 },
    };

    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcasecmp(u, units[i].name) == 0) {
            *mib = units[i].mib;
            return 0;
        }
    return -1;
}

static int bad(const var *v, const char *text, char *why, size_t whylen, const char *what)
{
    snprintf(why, whylen, "%s=%s: %s; it must be %s", v->name, text, what, v->range);
    return -1;
}

static int read_number(tdm_app_params *p, const var *v, const char *text, char *why, size_t whylen)
{
    const char *end;
    double x, mib = 1;

    if (text[0] == '-' && text[1] >= '0' && text[1] <= '9')
        return bad(v, text, why, whylen, "negative");
    if (decimal(text, v->k == K_REAL, &x, &end) != 0)
        return bad(v, text, why, whylen, v->k == K_REAL ? "not a number" : "not a whole number");
    if (v->k == K_MIB && unit_mib(end, &mib) != 0)
        return bad(v, text, why, whylen, "not a whole number with the unit MB or GB");
    if (v->k != K_MIB && *end)
        return bad(v, text, why, whylen, v->k == K_REAL ? "not a number" : "not a whole number");
    x *= mib;
    if (x == 0 && !in_range(v, x))
        return bad(v, text, why, whylen, "zero means nothing here");
    if (!in_range(v, x))
        return bad(v, text, why, whylen, x > v->max ? "too large" : "out of range");
    if (v->k == K_COUNT)
        *(uint32_t *)val_of(p, v) = (uint32_t)x;
    else if (v->k == K_MIB)
        *(uint64_t *)val_of(p, v) = (uint64_t)x;
    else
        *(double *)val_of(p, v) = x;
    return 0;
}

static int read_mode(tdm_app_params *p, const var *v, const char *text, char *why, size_t whylen)
{
    if (strcmp(text, "vm-dedicated") == 0)
        p->mode = TDM_APP_MODE_VM_DEDICATED;
    else if (strcmp(text, "app-scoped") == 0)
        p->mode = TDM_APP_MODE_APP_SCOPED;
    else
        return bad(v, text, why, whylen, "an unknown mode");
    return 0;
}

/* A node's name as node agents register it: letters, digits, '.', '_' and '-'. */
static bool node_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

/* NODE[,NODE...][;shm|;tcp] */
static int read_affinity(tdm_app_params *p, const var *v, const char *text, char *why, size_t whylen)
{
    const char *s = text, *semi = strchr(text, ';');
    const char *stop = semi ? semi : text + strlen(text);
    char what[160];

    p->naffinity = 0;
    p->affinity_transport = TDM_APP_TRANSPORT_ANY;
    if (semi) {
        if (strcmp(semi + 1, "shm") == 0)
            p->affinity_transport = TDM_APP_TRANSPORT_SHM;
        else if (strcmp(semi + 1, "tcp") == 0)
            p->affinity_transport = TDM_APP_TRANSPORT_TCP;
        else
            return bad(v, text, why, whylen, "the transport after ';' is neither shm nor tcp");
    }
    for (;;) {
        const char *comma = memchr(s, ',', (size_t)(stop - s));
        const char *e = comma ? comma : stop;
        size_t n = (size_t)(e - s);

        if (n == 0)
            return bad(v, text, why, whylen, "an empty node name");
        if (n >= TDM_APP_NODE_NAME_MAX) {
            snprintf(what, sizeof(what), "a node name longer than %d bytes", TDM_APP_NODE_NAME_MAX - 1);
            return bad(v, text, why, whylen, what);
        }
        for (size_t i = 0; i < n; i++)
            if (!node_char(s[i]))
                return bad(v, text, why, whylen, "a node name with a character other than letters, digits, '.', '_', '-'");
        if (p->naffinity == TDM_APP_MAX_AFFINITY) {
            snprintf(what, sizeof(what), "more than %d nodes", TDM_APP_MAX_AFFINITY);
            return bad(v, text, why, whylen, what);
        }
        for (size_t i = 0; i < p->naffinity; i++)
            if (strlen(p->affinity[i]) == n && memcmp(p->affinity[i], s, n) == 0) {
                snprintf(what, sizeof(what), "node %.*s named twice", (int)n, s);
                return bad(v, text, why, whylen, what);
            }
        memcpy(p->affinity[p->naffinity], s, n);
        p->affinity[p->naffinity++][n] = 0;
        if (!comma)
            return 0;
        s = comma + 1;
    }
}

int tdm_app_params_read(tdm_app_params *out, tdm_app_lookup lookup, void *ctx, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < NVARS; i++) {
        const var *v = &vars[i];
        const char *text = lookup(ctx, v->name);
        int rc;

        if (!text || !*text)
            continue;   /* the tenant's default, chosen by the orchestrator */
        if (v->k == K_MODE)
            rc = read_mode(out, v, text, why, whylen);
        else if (v->k == K_AFFINITY)
            rc = read_affinity(out, v, text, why, whylen);
        else
            rc = read_number(out, v, text, why, whylen);
        if (rc != 0)
            return -1;
        *has_of(out, v) = true;
    }
    return tdm_app_params_check(out, why, whylen);
}

int tdm_app_params_check(const tdm_app_params *p, char *why, size_t whylen)
{
    for (size_t i = 0; i < NVARS; i++) {
        const var *v = &vars[i];

        if (!has(p, v) || v->k == K_MODE || v->k == K_AFFINITY)
            continue;
        if (!in_range(v, number_of(p, v))) {
            snprintf(why, whylen, "%s=%g: out of range; it must be %s", v->name, number_of(p, v), v->range);
            return -1;
        }
    }
    if (p->has_mode && p->mode != TDM_APP_MODE_VM_DEDICATED && p->mode != TDM_APP_MODE_APP_SCOPED) {
        snprintf(why, whylen, "APP_MODE=%d: an unknown mode; it must be vm-dedicated or app-scoped", (int)p->mode);
        return -1;
    }
    if (p->has_affinity && (p->naffinity == 0 || p->naffinity > TDM_APP_MAX_AFFINITY)) {
        snprintf(why, whylen, "GPU_AFFINITY_NODES: %zu nodes; it must name 1 to %d", p->naffinity,
                 TDM_APP_MAX_AFFINITY);
        return -1;
    }
    /* The latency band: scaling up above the upper bound and down below the lower one would
     * oscillate if the band were empty or inverted. */
    if (p->has_latency_lower && p->has_latency_upper && p->latency_lower_ms >= p->latency_upper_ms) {
        snprintf(why, whylen, "APP_LATENCY_LOWER=%g is not below APP_LATENCY_UPPER=%g: the lower latency bound must "
                 "be below the upper one", p->latency_lower_ms, p->latency_upper_ms);
        return -1;
    }
    return 0;
}

const char *tdm_app_mode_name(tdm_app_mode m)
{
    return m == TDM_APP_MODE_APP_SCOPED ? "app-scoped" : "vm-dedicated";
}

const char *tdm_app_transport_name(tdm_app_transport t)
{
    return t == TDM_APP_TRANSPORT_SHM ? "shm" : t == TDM_APP_TRANSPORT_TCP ? "tcp" : NULL;
}
