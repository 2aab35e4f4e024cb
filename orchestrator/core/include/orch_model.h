/* The orchestrator's model of the cluster (docs/orchestrator.md): nodes with their host, GPUs
 * with their SMs and memory, the servers on each GPU (active or standby), the VMs' budgets from
 * vms.conf, and placements (a tenant's session reserved on a GPU's server with an SM share,
 * memory and a window of latency samples).  Every array has a fixed bound: a node agent or a
 * guest cannot make the orchestrator hold more than these. */
#ifndef TANDEM_ORCH_MODEL_H
#define TANDEM_ORCH_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define ORCH_NAME_MAX 64          /* node, tenant, server, placement names */
#define ORCH_ADDR_MAX 256         /* "http://H:P", "H:P", a socket path */
#define ORCH_MAX_NODES 32
#define ORCH_MAX_GPUS 16          /* per node */
#define ORCH_MAX_SERVERS 8        /* per GPU */
#define ORCH_MAX_PLACEMENTS 512
#define ORCH_MAX_VMS 128
#define ORCH_MAX_AFFINITY 8
#define ORCH_WINDOW_MAX 64        /* METRIC_SAMPLE_COUNT's bound */
#define ORCH_WHY_MAX 256

typedef enum { ORCH_NODE_UP, ORCH_NODE_DRAINED, ORCH_NODE_LOST } orch_node_state;
typedef enum { ORCH_MODE_VM_DEDICATED, ORCH_MODE_APP_SCOPED } orch_mode;
typedef enum { ORCH_TRANSPORT_ANY, ORCH_TRANSPORT_SHM, ORCH_TRANSPORT_TCP } orch_transport;
/* A placement's lifecycle (orch_lifecycle.h); reserved is 0, what a new or loaded one starts as. */
typedef enum { ORCH_LIFE_RESERVED, ORCH_LIFE_LIVE, ORCH_LIFE_RELEASED } orch_life;
typedef enum { ORCH_RULE_VM_DEDICATED, ORCH_RULE_NODE_AFFINITY, ORCH_RULE_APP_SCOPED, ORCH_RULE_DEFAULT } orch_rule;

typedef struct orch_server {
    char id[ORCH_NAME_MAX];
    bool standby_role;                /* a standby takes over; nothing is placed on it */
    bool alive;
    char tcp[ORCH_ADDR_MAX];          /* "H:P" */
    char shm[ORCH_ADDR_MAX];          /* socket path; empty: no shm listener */
    char standby[ORCH_NAME_MAX];      /* the id of the server that takes over from this one */
    uint64_t takeovers;
} orch_server;

typedef struct orch_gpu {
    int index;
    char name[ORCH_NAME_MAX];
    int sms;
    int memory_mib;
    int memory_used_mib;              /* telemetry */
    int sm_reserved;                  /* telemetry: what the node's servers hold */
    int sm_budget_per_vm;             /* node.conf: SMs one VM's placements on it may hold together; 0: no bound */
    orch_server servers[ORCH_MAX_SERVERS];
    int nservers;
} orch_gpu;

typedef struct orch_node {
    char name[ORCH_NAME_MAX];
    char agent[ORCH_ADDR_MAX];        /* "http://H:P" */
    char host[ORCH_NAME_MAX];         /* co-location id: shm only within one host */
    orch_node_state state;
    double last_seen_ms;              /* monotonic; register or telemetry */
    uint64_t reports;                 /* telemetry reports taken since this orchestrator started (not
                                       * stored: 0 after its restart, so a report counted is a new one) */
    double last_report_ms;            /* monotonic; the last of them (0: none) */
    orch_gpu gpus[ORCH_MAX_GPUS];
    int ngpus;
} orch_node;

/* Flyt's Table 2, as one application asked for it (absent keys: its VM's defaults). */
typedef struct orch_params {
    int sm_cores;                     /* APP_SM_CORES */
    int memory_mib;                   /* APP_GPU_MEMORY */
    int scale_up;                     /* SCALE_UP_FACTOR: SMs added per step */
    int scale_down;                   /* SCALE_DOWN_FACTOR: SMs removed per step */
    double latency_upper_ms;          /* APP_LATENCY_UPPER */
    double latency_lower_ms;          /* APP_LATENCY_LOWER */
    int sample_count;                 /* METRIC_SAMPLE_COUNT */
    orch_mode mode;                   /* APP_MODE */
    char affinity[ORCH_MAX_AFFINITY][ORCH_NAME_MAX];   /* GPU_AFFINITY_NODES */
    int naffinity;
    orch_transport affinity_transport;
    double metric_interval_s;         /* GPU_METRIC_INTERVAL: seconds between the latency samples the
                                       * elasticity window counts (orch_elastic.h) */
} orch_params;

/* A VM (tenant) of vms.conf. */
typedef struct orch_vm {
    char name[ORCH_NAME_MAX];
    int sm_budget;                    /* all its placements' shares together */
    int memory_mib;                   /* all its placements' memory together */
    orch_mode mode;
    char affinity[ORCH_MAX_AFFINITY][ORCH_NAME_MAX];
    int naffinity;
    char gpu_node[ORCH_NAME_MAX];     /* the GPU assigned to it (VM-dedicated); empty: none */
    int gpu_index;
    char host[ORCH_NAME_MAX];         /* where the VM runs: shm with a node of the same host */
} orch_vm;

typedef struct orch_placement {
    char key[ORCH_NAME_MAX];          /* the placement key the guest sends in HELLO */
    char tenant[ORCH_NAME_MAX];
    char node[ORCH_NAME_MAX];
    int gpu;                          /* the GPU's index on node */
    char server[ORCH_NAME_MAX];
    char standby[ORCH_NAME_MAX];
    orch_transport transport;
    orch_rule rule;
    int sm;
    int memory_mib;
    orch_params params;
    orch_life life;
    double reserved_ms;               /* monotonic: when made (or loaded); its guest's bound runs from it */
    /* The elasticity loop's state (elastic.c). */
    double window[ORCH_WINDOW_MAX];   /* the last tail-latency samples, ms, oldest first */
    int nwindow;
    double cooldown_until_ms;         /* monotonic; samples before it are not counted */
    double sampled_ms;                /* monotonic; when the last counted sample came (0: none yet) */
    /* The last telemetry of its session. */
    uint64_t calls;
    double call_rate;                 /* calls per second between the last two reports */
    double p50_ms, p99_ms;
    /* Its sampled kernels' p50 and p99 (the server's stats "kernel_us"), from the last report
     * that had samples (every 64th launch is timed: a short report may have none). */
    double kernel_p50_ms, kernel_p99_ms;
    int memory_used_mib;
    double stats_at_ms;
} orch_placement;

typedef struct orch_cluster {
    orch_node nodes[ORCH_MAX_NODES];
    int nnodes;
    orch_placement placements[ORCH_MAX_PLACEMENTS];
    int nplacements;
} orch_cluster;

const char *orch_rule_name(orch_rule r);
const char *orch_mode_name(orch_mode m);
const char *orch_transport_name(orch_transport t);
const char *orch_node_state_name(orch_node_state s);
int orch_mode_parse(const char *s, orch_mode *out);
int orch_node_state_parse(const char *s, orch_node_state *out);

orch_node *orch_find_node(orch_cluster *c, const char *name);
orch_gpu *orch_find_gpu(orch_node *n, int index);
orch_placement *orch_find_placement(orch_cluster *c, const char *key);
/* The active server of a GPU that takes placements: the first alive active one, or NULL. */
const orch_server *orch_gpu_active_server(const orch_gpu *g);

/* SMs and memory the placements on (node, gpu) hold, leaving out skip (NULL: none). */
int orch_gpu_sm_used(const orch_cluster *c, const char *node, int gpu, const orch_placement *skip);
int orch_gpu_memory_held(const orch_cluster *c, const char *node, int gpu, const orch_placement *skip);
/* SMs and memory tenant's placements hold, leaving out skip. */
int orch_tenant_sm_used(const orch_cluster *c, const char *tenant, const orch_placement *skip);
/* SMs more that tenant may hold on GPU g of node under its sm_budget_per_vm (INT_MAX: no bound;
 * 0 or less: none), leaving out skip. */
int orch_gpu_vm_sm_left(const orch_cluster *c, const char *node, const orch_gpu *g, const char *tenant,
                        const orch_placement *skip);
int orch_tenant_memory_held(const orch_cluster *c, const char *tenant, const orch_placement *skip);
/* Removes placements[index], keeping the others' order (pointers past it move down one). */
void orch_remove_placement(orch_cluster *c, int index);

#endif
