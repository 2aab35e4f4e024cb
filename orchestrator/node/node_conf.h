/* tandem-node's configuration (configs/node.conf, docs/node-agent.md), read with libconfig
 * through tandem_conf: every error is "FILE:LINE: what". */
#ifndef TANDEM_NODE_CONF_H
#define TANDEM_NODE_CONF_H

#include <stdbool.h>
#include <stddef.h>

#define TDM_NODE_MAX_GPUS 16
#define TDM_NODE_MAX_SERVERS_PER_GPU 8
#define TDM_NODE_NAME_MAX 64
#define TDM_NODE_PATH_MAX 200     /* leaves room under a unix socket's 108 for state_dir/<id>.ctl */

typedef struct tdm_node_gpu {
    int index;                   /* the device ordinal (--device) */
    int servers;                 /* active servers on it */
    bool standby;                /* each active gets a standby */
    int base_port;               /* active j listens on base_port + 2j, its standby on + 2j + 1 */
    int sm_budget_per_vm;        /* 0: the whole GPU (told to the orchestrator) */
    char name[TDM_NODE_NAME_MAX];
    int memory_mib;              /* told to the orchestrator; 0: unknown */
} tdm_node_gpu;

#define TDM_NODE_SERVER_OPTIONS_MAX 16

typedef struct tdm_node_conf {
    char node[TDM_NODE_NAME_MAX];        /* node name */
    char host[TDM_NODE_NAME_MAX];        /* co-location id: guests on this host use shm */
    char listen[TDM_NODE_NAME_MAX];      /* HOST:PORT of its HTTP API */
    char orchestrator[TDM_NODE_NAME_MAX];/* HOST:PORT */
    char state_dir[TDM_NODE_PATH_MAX];
    char server_bin[4096];               /* "" until resolved: tandem-server beside tandem-node */
    char server_host[TDM_NODE_NAME_MAX]; /* where the servers listen for TCP guests */
    char backend[8];                     /* sim | cuda */
    bool mps;
    char tenants[4096];                  /* "" = none */
    int telemetry_ms;                    /* until the orchestrator says otherwise */
    int restarts_per_minute;             /* per server, then it waits for the minute to pass */
    bool leave_servers_running;          /* at SIGTERM */
    /* Options added to every server's command line (e.g. the sim's --sim-wave-us, which models
     * SM shares, or --session-quota): the server checks them, and refuses to start on a bad one. */
    int nserver_options;
    char server_options[TDM_NODE_SERVER_OPTIONS_MAX][256];
    int ngpus;
    tdm_node_gpu gpus[TDM_NODE_MAX_GPUS];
} tdm_node_conf;

/* Reads and checks path into c.  0, or -errno with err "FILE:LINE: what". */
int tdm_node_conf_load(const char *path, tdm_node_conf *c, char *err, size_t errlen);

#endif
