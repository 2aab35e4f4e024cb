/* A process per tenant (issue 16): `tandem-server --tenants FILE --isolate tenant`.
 *
 * Sessions of one server share its CUDA context, so a kernel of one could reach another's
 * memory by its address.  Under MPS (and without it) each process has a GPU address space of
 * its own: so the server's front, which never touches the device, accepts every connection,
 * reads whose it is from its first call (first_call.h) without consuming it, and hands the
 * connection to its tenant's process (handoff.h), started on the tenant's first connection as
 * `tandem-server --worker-of TENANT ...` with the front's options.  A tenant's process serves
 * only that tenant's sessions, as any server does (it checks the token again); one that dies
 * is started again at the tenant's next connection.  Lanes (a session's extra TCP connections)
 * go to the process whose session they name: each process numbers its sessions from a base of
 * its own (TDM_ISOLATE_ID_SHIFT). */
#ifndef TANDEM_SERVER_ISOLATE_H
#define TANDEM_SERVER_ISOLATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "server.h"
#include "tenants.h"

/* Tenant process k numbers its sessions from (k + 1) << TDM_ISOLATE_ID_SHIFT. */
#define TDM_ISOLATE_ID_SHIFT 40

typedef struct tdm_isolate_worker {
    const tdm_tenant *tenant;
    int index;
    pid_t pid;              /* 0: not running */
    int sock;               /* the handoff pair's front end; -1 when not running */
    time_t window_start;    /* starts within TDM_SUPERVISE_WINDOW_S of this ... */
    int starts;             /* ... are counted here */
} tdm_isolate_worker;

typedef struct tdm_isolate {
    tdm_tenants *tenants;
    tdm_isolate_worker *w;  /* one per tenant, in the file's order */
    pthread_mutex_t lock;
    pthread_cond_t reaped;  /* signalled as each reaper ends */
    int reapers;            /* reaper threads not ended yet: each waits for one process */
    char exe[4096];         /* this program (/proc/self/exe) */
    char **fwd;             /* the front's options a tenant's process takes too */
    int nfwd;
    const char *standby;    /* --standby of the front: the tenants' standbys' prefix, or NULL */
    int device;             /* the GPU the processes use (after --mps start chose it) */
    int handshake_timeout_s;
    tdm_server *front;      /* the front's listener's endpoints, which guests connect to */
    bool stopping;
} tdm_isolate;

/* fwd (nfwd words, borrowed) are passed on to every tenant's process; front is the front's
 * tdm_server, which has no device, only its configuration and (once listening) endpoints.
 * standby (or NULL): each tenant's process mirrors to the standby listening at STANDBY.TENANT, a
 * standby of its own: one standby for every tenant would resume them all in one context, where a
 * replayed kernel of one reaches another's memory (measured on the H100). */
int tdm_isolate_init(tdm_isolate *iso, tdm_server *front, char **fwd, int nfwd, int device, const char *standby);
/* The listener's route hook (listener.h): hands guest connection fd (TCP, or an shm guest's
 * unix socket) to its tenant's process, or refuses it; fd stays the caller's to close. */
void tdm_isolate_route(void *iso, int fd, bool shm, long uid, const char *peer);
/* Asks every tenant's process to stop and waits for them (at most about 15 s, then kills). */
void tdm_isolate_stop(tdm_isolate *iso);
void tdm_isolate_free(tdm_isolate *iso);

/* A start of a tenant's process, counted in its window (*window_start, *starts): at most
 * TDM_SUPERVISE_MAX_RESTARTS + 1 starts in TDM_SUPERVISE_WINDOW_S seconds, so a process that
 * dies at once is not started for every connection (a tenant whose kernels keep faulting it is
 * refused for the rest of the window).  A window that has passed opens a new one at now.  True
 * (and the start counted) when it may start. */
bool tdm_isolate_count_start(time_t now, time_t *window_start, int *starts);

#endif
