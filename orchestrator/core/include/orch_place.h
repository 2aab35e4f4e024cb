/* Placement by Flyt's Table 3, in its order:
 *   vm-dedicated   the VM's mode is vm-dedicated and it has a GPU assigned: that GPU
 *   node-affinity  the application names nodes: the first GPU, in the list's order, with capacity
 *   app-scoped     the GPU with the most free SMs
 *   default        the first GPU (nodes in registration order) with capacity
 * A preferred GPU or node without capacity falls back to the next rule's choice, and the answer
 * says so.  Capacity: the GPU's free SMs and memory cover the request, and the VM's placements
 * together stay within its SM and memory budgets, and the VM's placements on the GPU within the
 * node's sm_budget_per_vm for it (node.conf; 0: no bound).  Drained and lost nodes, and GPUs without an
 * alive active server, get nothing.  Transport: shm only when the rule allows it (vm-dedicated,
 * node-affinity), the VM's host is the node's, the server has an shm listener and the
 * application did not ask for tcp; tcp otherwise. */
#ifndef TANDEM_ORCH_PLACE_H
#define TANDEM_ORCH_PLACE_H

#include "orch_model.h"

typedef struct orch_choice {
    int node;                         /* index in cluster->nodes */
    int gpu;                          /* index in node->gpus */
    int server;                       /* index in gpu->servers */
    orch_rule rule;                   /* the rule that chose */
    orch_transport transport;
    bool fell_back;                   /* the preferred rule's GPU had no capacity */
    char why[ORCH_WHY_MAX];           /* on success: how it was chosen; on refusal: why not */
} orch_choice;

/* Chooses where vm's application with params p goes; host: where the guest says it runs (used
 * only when the VM has no host in vms.conf).  0, or -ENOSPC when no GPU has capacity or the VM's
 * budget is spent (why says which). */
int orch_place(const orch_cluster *c, const orch_vm *vm, const orch_params *p, const char *host,
               orch_choice *out);

/* Whether GPU g of node n could take sm SMs and memory_mib more for tenant (NULL: leaves out the
 * GPU's sm_budget_per_vm), leaving out skip. */
bool orch_gpu_has_room(const orch_cluster *c, const orch_node *n, const orch_gpu *g, const char *tenant, int sm,
                       int memory_mib, const orch_placement *skip);

#endif
