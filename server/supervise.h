/* tandem-server --supervise: the server runs in a child process, and a
 * child that exits because its device context was lost is started again.
 *
 * Why a new process: after a sticky error (an illegal address, a device
 * assert) CUDA gives the process no usable context again; on the H100 the
 * primary context's reset was accepted and the next retain still failed with
 * cudaErrorIllegalAddress (docs/health.md).  The server then drains the lost
 * context's sessions and exits with TDM_EXIT_CONTEXT_LOST, and a new process
 * gets a new context. */
#ifndef TANDEM_SERVER_SUPERVISE_H
#define TANDEM_SERVER_SUPERVISE_H

#include <stdbool.h>

/* What the supervisor does when its child has ended. */
typedef enum tdm_supervise_action {
    TDM_SUPERVISE_RESTART,   /* start a new child */
    TDM_SUPERVISE_EXIT,      /* exit with the child's status */
    TDM_SUPERVISE_GIVE_UP,   /* restarting too often: exit with the child's status */
} tdm_supervise_action;

#define TDM_SUPERVISE_MAX_RESTARTS 5     /* within ... */
#define TDM_SUPERVISE_WINDOW_S 60        /* ... this many seconds */

/* exited: the child exited (status is its exit status), else a signal ended
 * it; stopping: the supervisor was asked to stop; recent: restarts within
 * the last TDM_SUPERVISE_WINDOW_S seconds. */
tdm_supervise_action tdm_supervise_decide(bool exited, int status, bool stopping, int recent);

/* Called once the options are read and before anything touches the device:
 * returns 0 in the child, which goes on to be the server; the supervising
 * parent never returns (it exits with the last child's status).  -errno when
 * no child can be started. */
int tdm_supervise(void);

#endif
