/* Placement by Flyt's Table 3 (orchestrator/core/place.c): a table of cluster states x requests,
 * each row with the GPU, transport and rule it must get, or the refusal. */
#include <criterion/criterion.h>
#include <errno.h>

#include "orch_fixture.h"
#include "orch_place.h"

/* The clusters the rows run against. */
typedef enum {
    TWO_NODES,        /* n1 (host h1): gpu0 132 SMs, gpu1 132 SMs; n2 (host h2): gpu0 132 SMs; all free */
    N1_GPU0_FULL,     /* as TWO_NODES, n1/gpu0 holds 130 SMs of another tenant */
    N1_BUSY_N2_FREER, /* n1/gpu0 holds 100, n1/gpu1 holds 60, n2/gpu0 holds 10 */
    N1_DRAINED,       /* as TWO_NODES, n1 drained */
    N1_LOST,          /* as TWO_NODES, n1 lost */
    ALL_FULL,         /* every GPU holds 130 SMs */
    MEMORY_FULL,      /* n1/gpu0 has 1000 MiB held of 1024; the others free */
    N1_NO_ACTIVE,     /* n1's active servers are dead */
    PER_VM_VM_ON_N1G0,    /* every GPU's sm_budget_per_vm is 16; n1/gpu0 holds 12 of the VM's */
    PER_VM_VM_EVERYWHERE, /* every GPU's sm_budget_per_vm is 16; each holds 12 of the VM's */
    PER_VM_OTHER_ON_N1G0, /* every GPU's sm_budget_per_vm is 16; n1/gpu0 holds 12 of another VM's */
} cluster_kind;

static orch_cluster *build(cluster_kind k)
{
    orch_cluster *c = fx_cluster();
    orch_node *n1 = fx_node(c, "n1", "h1", k == N1_DRAINED ? ORCH_NODE_DRAINED : k == N1_LOST ? ORCH_NODE_LOST : ORCH_NODE_UP);
    orch_node *n2 = fx_node(c, "n2", "h2", ORCH_NODE_UP);
    fx_gpu(n1, 132, 81920);
    fx_gpu(n1, 132, 81920);
    fx_gpu(n2, 132, 81920);
    switch (k) {
    case N1_GPU0_FULL: fx_hold(c, "other", "n1", 0, 130, 10); break;
    case N1_BUSY_N2_FREER:
        fx_hold(c, "other", "n1", 0, 100, 10);
        fx_hold(c, "other", "n1", 1, 60, 10);
        fx_hold(c, "other", "n2", 0, 10, 10);
        break;
    case ALL_FULL:
        fx_hold(c, "other", "n1", 0, 130, 10);
        fx_hold(c, "other", "n1", 1, 130, 10);
        fx_hold(c, "other", "n2", 0, 130, 10);
        break;
    case MEMORY_FULL: n1->gpus[0].memory_mib = 1024; fx_hold(c, "other", "n1", 0, 1, 1000); break;
    case N1_NO_ACTIVE: n1->gpus[0].servers[0].alive = false; n1->gpus[1].servers[0].alive = false; break;
    case PER_VM_VM_ON_N1G0: fx_hold(c, "vm", "n1", 0, 12, 10); break;
    case PER_VM_VM_EVERYWHERE:   /* n1/gpu0, n1/gpu1, n2/gpu0 */
        for (int i = 0; i < 3; i++)
            fx_hold(c, "vm", i < 2 ? "n1" : "n2", i < 2 ? i : 0, 12, 10);
        break;
    case PER_VM_OTHER_ON_N1G0: fx_hold(c, "other", "n1", 0, 12, 10); break;
    default: break;
    }
    if (k == PER_VM_VM_ON_N1G0 || k == PER_VM_VM_EVERYWHERE || k == PER_VM_OTHER_ON_N1G0)
        n1->gpus[0].sm_budget_per_vm = n1->gpus[1].sm_budget_per_vm = n2->gpus[0].sm_budget_per_vm = 16;
    return c;
}

typedef struct row {
    const char *name;
    cluster_kind cluster;
    orch_mode mode;
    bool vm_has_gpu;              /* the VM is assigned n1/gpu1 */
    const char *vm_host;
    const char *affinity;         /* one node name, or NULL */
    orch_transport want_transport;
    int sm;
    int memory_mib;
    int vm_budget;
    /* expected */
    int rc;
    const char *node;
    int gpu;
    orch_rule rule;
    orch_transport transport;
    bool fell_back;
    const char *why;              /* NULL, or what the reason must say */
} row;

static const row rows[] = {
    { "vm_dedicated_gets_its_gpu_over_shm_when_colocated", TWO_NODES, ORCH_MODE_VM_DEDICATED, true, "h1", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n1", 1, ORCH_RULE_VM_DEDICATED, ORCH_TRANSPORT_SHM, false, NULL },
    { "vm_dedicated_on_another_host_gets_tcp", TWO_NODES, ORCH_MODE_VM_DEDICATED, true, "h9", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n1", 1, ORCH_RULE_VM_DEDICATED, ORCH_TRANSPORT_TCP, false, NULL },
    { "vm_dedicated_asking_tcp_gets_tcp_even_colocated", TWO_NODES, ORCH_MODE_VM_DEDICATED, true, "h1", "n1",
      ORCH_TRANSPORT_TCP, 8, 100, 64, 0, "n1", 1, ORCH_RULE_VM_DEDICATED, ORCH_TRANSPORT_TCP, false, NULL },
    { "vm_dedicated_without_gpu_takes_default_first_gpu", TWO_NODES, ORCH_MODE_VM_DEDICATED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n1", 0, ORCH_RULE_DEFAULT, ORCH_TRANSPORT_TCP, false, NULL },
    { "vm_dedicated_gpu_on_drained_node_falls_back_to_default", N1_DRAINED, ORCH_MODE_VM_DEDICATED, true, "h1",
      NULL, ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n2", 0, ORCH_RULE_DEFAULT, ORCH_TRANSPORT_TCP, true, NULL },
    { "affinity_takes_first_listed_node", TWO_NODES, ORCH_MODE_VM_DEDICATED, false, "h2", "n2",
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n2", 0, ORCH_RULE_NODE_AFFINITY, ORCH_TRANSPORT_SHM, false, NULL },
    { "affinity_skips_full_gpu_of_the_node", N1_GPU0_FULL, ORCH_MODE_VM_DEDICATED, false, "h1", "n1",
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n1", 1, ORCH_RULE_NODE_AFFINITY, ORCH_TRANSPORT_SHM, false, NULL },
    { "affinity_fits_the_last_free_sms_of_its_node", ALL_FULL, ORCH_MODE_APP_SCOPED, false, "h1", "n1",
      ORCH_TRANSPORT_ANY, 2, 100, 64, 0, "n1", 0, ORCH_RULE_NODE_AFFINITY, ORCH_TRANSPORT_SHM, false, NULL },
    { "affinity_node_lost_falls_back_to_app_scoped", N1_LOST, ORCH_MODE_APP_SCOPED, false, "h1", "n1",
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n2", 0, ORCH_RULE_APP_SCOPED, ORCH_TRANSPORT_TCP, true, NULL },
    { "affinity_unknown_node_falls_back_to_default", TWO_NODES, ORCH_MODE_VM_DEDICATED, false, "h1", "nX",
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n1", 0, ORCH_RULE_DEFAULT, ORCH_TRANSPORT_TCP, true, NULL },
    { "vm_gpu_full_falls_back_to_affinity", N1_BUSY_N2_FREER, ORCH_MODE_VM_DEDICATED, true, "h2", "n2",
      ORCH_TRANSPORT_ANY, 80, 100, 132, 0, "n2", 0, ORCH_RULE_NODE_AFFINITY, ORCH_TRANSPORT_SHM, true, NULL },
    { "app_scoped_takes_most_free_sms", N1_BUSY_N2_FREER, ORCH_MODE_APP_SCOPED, false, "h2", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n2", 0, ORCH_RULE_APP_SCOPED, ORCH_TRANSPORT_TCP, false, NULL },
    { "app_scoped_is_tcp_even_colocated", TWO_NODES, ORCH_MODE_APP_SCOPED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n1", 0, ORCH_RULE_APP_SCOPED, ORCH_TRANSPORT_TCP, false, NULL },
    { "default_skips_full_gpu", N1_GPU0_FULL, ORCH_MODE_VM_DEDICATED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n1", 1, ORCH_RULE_DEFAULT, ORCH_TRANSPORT_TCP, false, NULL },
    { "default_counts_memory_too", MEMORY_FULL, ORCH_MODE_VM_DEDICATED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n1", 1, ORCH_RULE_DEFAULT, ORCH_TRANSPORT_TCP, false, NULL },
    { "drained_node_gets_nothing", N1_DRAINED, ORCH_MODE_VM_DEDICATED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n2", 0, ORCH_RULE_DEFAULT, ORCH_TRANSPORT_TCP, false, NULL },
    { "gpu_without_alive_active_server_gets_nothing", N1_NO_ACTIVE, ORCH_MODE_VM_DEDICATED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n2", 0, ORCH_RULE_DEFAULT, ORCH_TRANSPORT_TCP, false, NULL },
    { "no_gpu_with_room_is_refused", ALL_FULL, ORCH_MODE_APP_SCOPED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, -ENOSPC, NULL, 0, 0, 0, false, NULL },
    { "request_over_vm_sm_budget_is_refused", TWO_NODES, ORCH_MODE_APP_SCOPED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 65, 100, 64, -ENOSPC, NULL, 0, 0, 0, false, NULL },
    { "request_over_vm_memory_budget_is_refused", TWO_NODES, ORCH_MODE_APP_SCOPED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 8, 5000, 64, -ENOSPC, NULL, 0, 0, 0, false, NULL },
    /* node.conf's sm_budget_per_vm: the VM's placements on one GPU together stay within it. */
    { "per_vm_bound_spent_on_a_gpu_takes_the_next", PER_VM_VM_ON_N1G0, ORCH_MODE_VM_DEDICATED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n1", 1, ORCH_RULE_DEFAULT, ORCH_TRANSPORT_TCP, false, NULL },
    { "per_vm_bound_leaves_room_for_what_fits", PER_VM_VM_ON_N1G0, ORCH_MODE_VM_DEDICATED, false, "h1", NULL,
      ORCH_TRANSPORT_ANY, 4, 100, 64, 0, "n1", 0, ORCH_RULE_DEFAULT, ORCH_TRANSPORT_TCP, false, NULL },
    { "per_vm_bound_counts_only_the_vms_own_placements", PER_VM_OTHER_ON_N1G0, ORCH_MODE_VM_DEDICATED, false, "h1",
      NULL, ORCH_TRANSPORT_ANY, 8, 100, 64, 0, "n1", 0, ORCH_RULE_DEFAULT, ORCH_TRANSPORT_TCP, false, NULL },
    { "per_vm_bound_spent_everywhere_is_refused_saying_so", PER_VM_VM_EVERYWHERE, ORCH_MODE_APP_SCOPED, false, "h1",
      NULL, ORCH_TRANSPORT_ANY, 8, 100, 64, -ENOSPC, NULL, 0, 0, 0, false,
      "n1/gpu0 has room, but its sm_budget_per_vm of 16 SMs leaves VM vm 4" },
    { "request_over_the_per_vm_bound_is_refused", PER_VM_OTHER_ON_N1G0,
      ORCH_MODE_APP_SCOPED, false, "h1", NULL, ORCH_TRANSPORT_ANY, 20, 100, 64, -ENOSPC, NULL, 0, 0, 0, false,
      "sm_budget_per_vm of 16 SMs leaves VM vm 16" },
};

static void run_row(const row *r)
{
    orch_cluster *c = build(r->cluster);
    orch_vm vm = { .name = "vm", .sm_budget = r->vm_budget, .memory_mib = 4096, .mode = r->mode, .gpu_index = 1 };
    orch_params p = { .sm_cores = r->sm, .memory_mib = r->memory_mib, .mode = r->mode,
                      .affinity_transport = r->want_transport };
    orch_choice ch;
    int rc;

    if (r->vm_has_gpu)
        snprintf(vm.gpu_node, sizeof(vm.gpu_node), "n1");
    snprintf(vm.host, sizeof(vm.host), "%s", r->vm_host);
    if (r->affinity) {
        snprintf(p.affinity[0], sizeof(p.affinity[0]), "%s", r->affinity);
        p.naffinity = 1;
    }
    rc = orch_place(c, &vm, &p, NULL, &ch);
    cr_assert_eq(rc, r->rc, "%s: rc %d, want %d (%s)", r->name, rc, r->rc, ch.why);
    cr_assert(ch.why[0], "%s: no reason given", r->name);
    if (r->why)
        cr_assert(strstr(ch.why, r->why), "%s: '%s' does not say '%s'", r->name, ch.why, r->why);
    if (rc == 0) {
        const orch_node *n = &c->nodes[ch.node];
        cr_assert_str_eq(n->name, r->node, "%s: node %s (%s)", r->name, n->name, ch.why);
        cr_assert_eq(n->gpus[ch.gpu].index, r->gpu, "%s: gpu %d (%s)", r->name, n->gpus[ch.gpu].index, ch.why);
        cr_assert_eq(ch.rule, r->rule, "%s: rule %s (%s)", r->name, orch_rule_name(ch.rule), ch.why);
        cr_assert_eq(ch.transport, r->transport, "%s: transport %s", r->name, orch_transport_name(ch.transport));
        cr_assert_eq(ch.fell_back, r->fell_back, "%s: fell_back %d (%s)", r->name, ch.fell_back, ch.why);
        if (r->fell_back)
            cr_assert(strstr(ch.why, "fell back"), "%s: the answer must say it fell back: %s", r->name, ch.why);
        cr_assert_str_eq(n->gpus[ch.gpu].servers[ch.server].id, n->gpus[ch.gpu].servers[0].id);
        cr_assert(!n->gpus[ch.gpu].servers[ch.server].standby_role, "%s: placed on a standby", r->name);
    }
    free(c);
}

Test(orch_place, table_of_cluster_states_and_requests)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(&rows[i]);
}

/* The VM's budget counts what its other placements already hold. */
Test(orch_place, vm_budget_counts_existing_placements)
{
    orch_cluster *c = build(TWO_NODES);
    orch_vm vm = { .name = "vm", .sm_budget = 16, .memory_mib = 4096, .mode = ORCH_MODE_APP_SCOPED, .gpu_index = -1 };
    orch_params p = { .sm_cores = 8, .memory_mib = 10, .mode = ORCH_MODE_APP_SCOPED };
    orch_choice ch;

    fx_hold(c, "vm", "n2", 0, 12, 10);
    cr_assert_eq(orch_place(c, &vm, &p, NULL, &ch), -ENOSPC);
    cr_assert(strstr(ch.why, "budget"), "%s", ch.why);
    p.sm_cores = 4;
    cr_assert_eq(orch_place(c, &vm, &p, NULL, &ch), 0, "%s", ch.why);
    free(c);
}
