/* Names of the model's enums and look-ups over the cluster (orch_model.h). */
#include "orch_decision.h"
#include "orch_model.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

static const char *const rule_names[] = { "vm-dedicated", "node-affinity", "app-scoped", "default" };
static const char *const mode_names[] = { "vm-dedicated", "app-scoped" };
static const char *const transport_names[] = { "any", "shm", "tcp" };
static const char *const node_state_names[] = { "up", "drained", "lost" };
static const char *const action_names[ORCH_ACT_COUNT] = {
    "none", "place", "scale-up", "scale-down", "migrate", "hold", "set-share", "drain", "node-lost",
    "release",
};

const char *orch_rule_name(orch_rule r) { return rule_names[r]; }
const char *orch_mode_name(orch_mode m) { return mode_names[m]; }
const char *orch_transport_name(orch_transport t) { return transport_names[t]; }
const char *orch_node_state_name(orch_node_state s) { return node_state_names[s]; }
const char *orch_action_name(orch_action a) { return action_names[a]; }

static int parse_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -EINVAL;
}

int orch_mode_parse(const char *s, orch_mode *out)
{
    int i = parse_name(s, mode_names, 2);
    if (i < 0)
        return i;
    *out = (orch_mode)i;
    return 0;
}

int orch_node_state_parse(const char *s, orch_node_state *out)
{
    int i = parse_name(s, node_state_names, 3);
    if (i < 0)
        return i;
    *out = (orch_node_state)i;
    return 0;
}

int orch_action_parse(const char *s, orch_action *out)
{
    int i = parse_name(s, action_names, ORCH_ACT_COUNT);
    if (i < 0)
        return i;
    *out = (orch_action)i;
    return 0;
}

orch_node *orch_find_node(orch_cluster *c, const char *name)
{
    for (int i = 0; i < c->nnodes; i++)
        if (strcmp(c->nodes[i].name, name) == 0)
            return &c->nodes[i];
    return NULL;
}

orch_gpu *orch_find_gpu(orch_node *n, int index)
{
    for (int i = 0; i < n->ngpus; i++)
        if (n->gpus[i].index == index)
            return &n->gpus[i];
    return NULL;
}

orch_placement *orch_find_placement(orch_cluster *c, const char *key)
{
    for (int i = 0; i < c->nplacements; i++)
        if (strcmp(c->placements[i].key, key) == 0)
            return &c->placements[i];
    return NULL;
}

const orch_server *orch_gpu_active_server(const orch_gpu *g)
{
    for (int i = 0; i < g->nservers; i++)
        if (!g->servers[i].standby_role && g->servers[i].alive)
            return &g->servers[i];
    return NULL;
}

/* SMs the placements on (node, gpu) hold, of tenant's only unless tenant is NULL, leaving out skip. */
static int gpu_sm_sum(const orch_cluster *c, const char *node, int gpu, const char *tenant,
                      const orch_placement *skip)
{
    int sum = 0;
    for (int i = 0; i < c->nplacements; i++) {
        const orch_placement *p = &c->placements[i];
        if (p != skip && p->gpu == gpu && strcmp(p->node, node) == 0 && (!tenant || strcmp(p->tenant, tenant) == 0))
            sum += p->sm;
    }
    return sum;
}

int orch_gpu_sm_used(const orch_cluster *c, const char *node, int gpu, const orch_placement *skip)
{
    return gpu_sm_sum(c, node, gpu, NULL, skip);
}

int orch_gpu_memory_held(const orch_cluster *c, const char *node, int gpu, const orch_placement *skip)
{
    int sum = 0;
    for (int i = 0; i < c->nplacements; i++) {
        const orch_placement *p = &c->placements[i];
        if (p != skip && p->gpu == gpu && strcmp(p->node, node) == 0)
            sum += p->memory_mib;
    }
    return sum;
}

int orch_tenant_sm_used(const orch_cluster *c, const char *tenant, const orch_placement *skip)
{
    int sum = 0;
    for (int i = 0; i < c->nplacements; i++)
        if (&c->placements[i] != skip && strcmp(c->placements[i].tenant, tenant) == 0)
            sum += c->placements[i].sm;
    return sum;
}

int orch_gpu_vm_sm_left(const orch_cluster *c, const char *node, const orch_gpu *g, const char *tenant,
                        const orch_placement *skip)
{
    if (g->sm_budget_per_vm <= 0)
        return INT_MAX;
    return g->sm_budget_per_vm - gpu_sm_sum(c, node, g->index, tenant, skip);
}

int orch_tenant_memory_held(const orch_cluster *c, const char *tenant, const orch_placement *skip)
{
    int sum = 0;
    for (int i = 0; i < c->nplacements; i++)
        if (&c->placements[i] != skip && strcmp(c->placements[i].tenant, tenant) == 0)
            sum += c->placements[i].memory_mib;
    return sum;
}

void orch_remove_placement(orch_cluster *c, int index)
{
    if (index < 0 || index >= c->nplacements)
        return;
    memmove(&c->placements[index], &c->placements[index + 1],
            (size_t)(c->nplacements - index - 1) * sizeof(c->placements[0]));
    c->nplacements--;
}
