/* Placement by Flyt's Table 3 (orch_place.h). */
#include "orch_place.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool orch_gpu_has_room(const orch_cluster *c, const orch_node *n, const orch_gpu *g, const char *tenant, int sm,
                       int memory_mib, const orch_placement *skip)
{
    if (n->state != ORCH_NODE_UP || !orch_gpu_active_server(g))
        return false;
    return orch_gpu_sm_used(c, n->name, g->index, skip) + sm <= g->sms &&
           orch_gpu_memory_held(c, n->name, g->index, skip) + memory_mib <= g->memory_mib &&
           (!tenant || orch_gpu_vm_sm_left(c, n->name, g, tenant, skip) >= sm);
}

static int server_index(const orch_gpu *g)
{
    const orch_server *s = orch_gpu_active_server(g);
    return s ? (int)(s - g->servers) : -1;
}

static bool pick(const orch_cluster *c, int ni, int gi, const char *tenant, const orch_params *p, orch_choice *out)
{
    const orch_node *n = &c->nodes[ni];
    const orch_gpu *g = &n->gpus[gi];

    if (!orch_gpu_has_room(c, n, g, tenant, p->sm_cores, p->memory_mib, NULL))
        return false;
    out->node = ni;
    out->gpu = gi;
    out->server = server_index(g);
    return true;
}

static bool first_with_room(const orch_cluster *c, const char *tenant, const orch_params *p, orch_choice *out)
{
    for (int ni = 0; ni < c->nnodes; ni++)
        for (int gi = 0; gi < c->nodes[ni].ngpus; gi++)
            if (pick(c, ni, gi, tenant, p, out))
                return true;
    return false;
}

/* The GPU with the most free SMs; ties go to the first in registration order. */
static bool most_free(const orch_cluster *c, const char *tenant, const orch_params *p, orch_choice *out)
{
    int best_free = -1;
    orch_choice cand;

    for (int ni = 0; ni < c->nnodes; ni++) {
        for (int gi = 0; gi < c->nodes[ni].ngpus; gi++) {
            const orch_gpu *g = &c->nodes[ni].gpus[gi];
            int free_sms = g->sms - orch_gpu_sm_used(c, c->nodes[ni].name, g->index, NULL);
            if (free_sms > best_free && pick(c, ni, gi, tenant, p, &cand)) {
                best_free = free_sms;
                out->node = cand.node;
                out->gpu = cand.gpu;
                out->server = cand.server;
            }
        }
    }
    return best_free >= 0;
}

static bool affinity_first(const orch_cluster *c, const char *tenant, const orch_params *p, orch_choice *out)
{
    for (int a = 0; a < p->naffinity; a++)
        for (int ni = 0; ni < c->nnodes; ni++)
            if (strcmp(c->nodes[ni].name, p->affinity[a]) == 0)
                for (int gi = 0; gi < c->nodes[ni].ngpus; gi++)
                    if (pick(c, ni, gi, tenant, p, out))
                        return true;
    return false;
}

static bool dedicated(const orch_cluster *c, const orch_vm *vm, const orch_params *p, orch_choice *out)
{
    for (int ni = 0; ni < c->nnodes; ni++)
        if (strcmp(c->nodes[ni].name, vm->gpu_node) == 0)
            for (int gi = 0; gi < c->nodes[ni].ngpus; gi++)
                if (c->nodes[ni].gpus[gi].index == vm->gpu_index)
                    return pick(c, ni, gi, vm->name, p, out);
    return false;
}

/* The rule without a preference: app-scoped spreads, everything else packs. */
static bool unpreferred(const orch_cluster *c, const char *tenant, const orch_params *p, orch_choice *out)
{
    out->rule = p->mode == ORCH_MODE_APP_SCOPED ? ORCH_RULE_APP_SCOPED : ORCH_RULE_DEFAULT;
    return out->rule == ORCH_RULE_APP_SCOPED ? most_free(c, tenant, p, out) : first_with_room(c, tenant, p, out);
}

static void choose_transport(const orch_cluster *c, const orch_vm *vm, const orch_params *p, const char *host,
                             orch_choice *out)
{
    const orch_node *n = &c->nodes[out->node];
    const orch_server *s = &n->gpus[out->gpu].servers[out->server];
    const char *guest_host = vm->host[0] ? vm->host : host ? host : "";
    bool rule_allows = out->rule == ORCH_RULE_VM_DEDICATED || out->rule == ORCH_RULE_NODE_AFFINITY;
    bool colocated = guest_host[0] && strcmp(guest_host, n->host) == 0;

    out->transport = rule_allows && colocated && s->shm[0] && p->affinity_transport != ORCH_TRANSPORT_TCP
                         ? ORCH_TRANSPORT_SHM
                         : ORCH_TRANSPORT_TCP;
}

/* Appends to why the first GPU that has room for p but not under its sm_budget_per_vm for vm:
 * a refusal that a node's per-VM bound caused says so, not only "no free SMs". */
static void note_vm_bound(const orch_cluster *c, const orch_vm *vm, const orch_params *p, char *why, size_t whylen)
{
    for (int ni = 0; ni < c->nnodes; ni++)
        for (int gi = 0; gi < c->nodes[ni].ngpus; gi++) {
            const orch_node *n = &c->nodes[ni];
            const orch_gpu *g = &n->gpus[gi];
            if (orch_gpu_has_room(c, n, g, NULL, p->sm_cores, p->memory_mib, NULL) &&
                !orch_gpu_has_room(c, n, g, vm->name, p->sm_cores, p->memory_mib, NULL)) {
                size_t len = strlen(why);
                snprintf(why + len, whylen - len, "; %s/gpu%d has room, but its sm_budget_per_vm of %d SMs leaves "
                         "VM %s %d", n->name, g->index, g->sm_budget_per_vm, vm->name,
                         orch_gpu_vm_sm_left(c, n->name, g, vm->name, NULL));
                return;
            }
        }
}

static const char *preference_name(orch_rule r)
{
    return r == ORCH_RULE_VM_DEDICATED ? "the VM's GPU" : "the affinity nodes";
}

int orch_place(const orch_cluster *c, const orch_vm *vm, const orch_params *p, const char *host, orch_choice *out)
{
    int preferred = -1;   /* the rule asked for first, when one names a GPU or nodes */
    int used;

    memset(out, 0, sizeof(*out));
    used = orch_tenant_sm_used(c, vm->name, NULL);
    if (used + p->sm_cores > vm->sm_budget) {
        snprintf(out->why, sizeof(out->why), "VM %s holds %d of its %d SMs: %d more do not fit its budget",
                 vm->name, used, vm->sm_budget, p->sm_cores);
        return -ENOSPC;
    }
    used = orch_tenant_memory_held(c, vm->name, NULL);
    if (used + p->memory_mib > vm->memory_mib) {
        snprintf(out->why, sizeof(out->why), "VM %s holds %d of its %d MiB: %d more do not fit its budget",
                 vm->name, used, vm->memory_mib, p->memory_mib);
        return -ENOSPC;
    }

    if (p->mode == ORCH_MODE_VM_DEDICATED && vm->gpu_node[0]) {
        preferred = ORCH_RULE_VM_DEDICATED;
        out->rule = ORCH_RULE_VM_DEDICATED;
        if (dedicated(c, vm, p, out)) {
            snprintf(out->why, sizeof(out->why), "vm-dedicated: the GPU assigned to VM %s", vm->name);
            goto chosen;
        }
    }
    if (p->naffinity > 0) {
        if (preferred < 0)
            preferred = ORCH_RULE_NODE_AFFINITY;
        out->rule = ORCH_RULE_NODE_AFFINITY;
        if (affinity_first(c, vm->name, p, out)) {
            snprintf(out->why, sizeof(out->why), "node-affinity: the first GPU with capacity on the nodes asked for");
            goto chosen;
        }
    }
    if (!unpreferred(c, vm->name, p, out)) {
        snprintf(out->why, sizeof(out->why), "no GPU of an up node has %d free SMs and %d MiB free%s%s",
                 p->sm_cores, p->memory_mib, preferred >= 0 ? ", " : "",
                 preferred >= 0 ? preference_name((orch_rule)preferred) : "");
        if (preferred >= 0)
            strncat(out->why, " included", sizeof(out->why) - strlen(out->why) - 1);
        note_vm_bound(c, vm, p, out->why, sizeof(out->why));
        return -ENOSPC;
    }
    snprintf(out->why, sizeof(out->why), "%s", out->rule == ORCH_RULE_APP_SCOPED
             ? "app-scoped: the GPU with the most free SMs" : "default: the first GPU with capacity");
chosen:
    if (preferred >= 0 && out->rule != (orch_rule)preferred) {
        size_t n = strlen(out->why);
        out->fell_back = true;
        snprintf(out->why + n, sizeof(out->why) - n, " (fell back: %s had no capacity)",
                 preference_name((orch_rule)preferred));
    }
    choose_transport(c, vm, p, host, out);
    return 0;
}
