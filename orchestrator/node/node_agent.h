/* tandem-node's state (docs/node-agent.md): its configuration, its servers, and what it knows
 * of the orchestrator.  The main thread supervises and reports; the HTTP API's thread reads the
 * servers under the lock. */
#ifndef TANDEM_NODE_AGENT_H
#define TANDEM_NODE_AGENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "node_conf.h"
#include "node_servers.h"

/* One GPU's MPS control daemon (node_mps.c), run in the foreground (-f) so that the agent is its
 * parent and sees it die. */
typedef struct tdm_node_mps {
    char dir[TDM_NODE_PATH_MAX + 20];    /* STATE/mps-gpuI: pipe/, log/, daemon.pid */
    char pipe[TDM_NODE_PATH_MAX + 32];   /* STATE/mps-gpuI/pipe, its actives' --mps attach */
    pid_t pid;                           /* 0 while none runs */
    bool child;                          /* started by this agent (else adopted from daemon.pid) */
    uint64_t start_at_ms;                /* when a dead one may start again */
    tdm_node_restart restart;
} tdm_node_mps;

typedef struct tdm_node_agent {
    tdm_node_conf conf;
    tdm_node_servers servers;        /* under lock */
    pthread_mutex_t lock;
    char state_path[TDM_NODE_PATH_MAX + 16];
    bool mps_daemons;                /* cuda with mps on: one MPS daemon per GPU, in mps[] */
    char mps_bin[4096];              /* nvidia-cuda-mps-control, found on PATH */
    tdm_node_mps mps[TDM_NODE_MAX_GPUS];  /* by index into conf.gpus */
    bool registered;                 /* the orchestrator answered our register since we lost it */
    bool warned;                     /* the orchestrator's absence was logged */
    int telemetry_ms;
    uint64_t next_report_ms;
    struct MHD_Daemon *http;
} tdm_node_agent;

uint64_t tdm_node_now_ms(void);

/* node_report.c: registers, or sends telemetry when registered; on failure it registers again
 * at the next interval.  Never stops a server. */
void tdm_node_report(tdm_node_agent *a);
/* The register body (for tests and the log); the caller puts it. */
struct json_object *tdm_node_register_body(tdm_node_agent *a);

/* node_http.c: its HTTP API on conf.listen.  0 or -errno. */
int tdm_node_http_start(tdm_node_agent *a);
void tdm_node_http_stop(tdm_node_agent *a);

/* "was killed by signal N" or "exited with status N", for the log. */
void tdm_node_exit_how(int status, char *how, size_t len);

/* node_mps.c: the MPS control daemon of each GPU when mps is on with the cuda backend (the sim
 * backend models a domain per GPU with --sim-mps-domain instead; then these do nothing).
 * start: adopts the daemon a previous agent left, or starts one per GPU with only that GPU
 * visible, and waits for each to listen; 0, or -errno with why (then none is left running). */
int tdm_node_mps_start(tdm_node_agent *a, char *why, size_t whylen);
/* A reaped child: true when it was a GPU's daemon (its death is handled: that GPU's actives are
 * stopped, to be started again on the new daemon). */
bool tdm_node_mps_reaped(tdm_node_agent *a, pid_t pid, int status, uint64_t now);
/* Each tick: an adopted daemon that is gone dies; a dead one starts again when due. */
void tdm_node_mps_tick(tdm_node_agent *a, uint64_t now);
/* Whether the actives of GPU g (into conf.gpus) may start: its daemon runs and listens. */
bool tdm_node_mps_ready(const tdm_node_agent *a, int g);
/* The pipe directory GPU g's actives attach to ("" without daemons). */
const char *tdm_node_mps_pipe(const tdm_node_agent *a, int g);
/* Asks each daemon to quit (`quit` on the control program's stdin) and waits for it. */
void tdm_node_mps_stop(tdm_node_agent *a);

#endif
