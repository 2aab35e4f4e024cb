/* The servers tandem-node runs (docs/node-agent.md): what each is (derived from node.conf, so a
 * restarted agent plans the same ones), whether it runs, how to start it and ask it. */
#ifndef TANDEM_NODE_SERVERS_H
#define TANDEM_NODE_SERVERS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "node_conf.h"
#include "node_restart.h"

#define TDM_NODE_MAX_SERVERS (TDM_NODE_MAX_GPUS * TDM_NODE_MAX_SERVERS_PER_GPU * 2)
#define TDM_NODE_ID_MAX 96
#define TDM_NODE_SOCK_MAX 108        /* a unix socket path, with its NUL */

typedef struct tdm_node_server {
    char id[TDM_NODE_ID_MAX];        /* NODE-gpuI-sJ, its standby NODE-gpuI-sJ-sb */
    int gpu;                         /* index into conf->gpus */
    bool is_standby;
    int port;
    char shm[TDM_NODE_ID_MAX];       /* its --shm NAME */
    char control[TDM_NODE_SOCK_MAX]; /* its --control socket */
    char mirror[TDM_NODE_SOCK_MAX];  /* active: --standby SOCK; standby: --standby-listen SOCK; "" none */
    char standby_id[TDM_NODE_ID_MAX];/* an active's standby, "" without */
    pid_t pid;                       /* 0 while not running */
    bool child;                      /* started by this agent process (reaped by waitpid) */
    uint64_t start_at_ms;            /* when a dead one may start again */
    tdm_node_restart restart;
} tdm_node_server;

typedef struct tdm_node_servers {
    tdm_node_server list[TDM_NODE_MAX_SERVERS];
    int n;
} tdm_node_servers;

/* The servers node.conf asks for, none running.  -ENAMETOOLONG when a socket path would not
 * fit (state_dir too long). */
int tdm_node_servers_plan(const tdm_node_conf *c, tdm_node_servers *s);
/* The server's command line (NULL-ended, in argv with room for 40, strings in buf).  mps_pipe: the
 * pipe directory of its GPU's MPS daemon, which an active attaches to (cuda with mps on). */
void tdm_node_server_argv(const tdm_node_conf *c, const tdm_node_server *s, const char *mps_pipe, char *buf,
                          size_t buflen, const char **argv);
/* Starts it: 0 with s->pid, or -errno. */
int tdm_node_server_spawn(const tdm_node_conf *c, tdm_node_server *s, const char *mps_pipe, const char *log_path);
/* Asks its control socket one line; the parsed answer (the caller puts it), or NULL when it does
 * not answer within timeout_ms. */
json_object *tdm_node_control_ask(const char *sock, const char *line, int timeout_ms);
/* Whether pid lives and its control socket answers stats: a server to adopt. */
bool tdm_node_server_answers(pid_t pid, const char *sock);

#endif
