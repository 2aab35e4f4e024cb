/* tandem-server --supervise: which ended child is started again.  Guards
 * that only a lost device context (exit status 76) restarts the server,
 * never a stop the operator asked for, a crash or a clean exit, and that a
 * context lost over and over ends the supervision. */
#include <criterion/criterion.h>

#include "health.h"
#include "supervise.h"

typedef struct decide_case {
    const char *name;
    bool exited;
    int status;
    bool stopping;
    int recent;
    tdm_supervise_action want;
} decide_case;

static const decide_case cases[] = {
    { "a lost context restarts", true, TDM_EXIT_CONTEXT_LOST, false, 0, TDM_SUPERVISE_RESTART },
    { "a lost context again, within bounds", true, TDM_EXIT_CONTEXT_LOST, false, TDM_SUPERVISE_MAX_RESTARTS - 1,
      TDM_SUPERVISE_RESTART },
    { "lost too often: give up", true, TDM_EXIT_CONTEXT_LOST, false, TDM_SUPERVISE_MAX_RESTARTS, TDM_SUPERVISE_GIVE_UP },
    { "a lost context while stopping: exit", true, TDM_EXIT_CONTEXT_LOST, true, 0, TDM_SUPERVISE_EXIT },
    { "a clean exit: exit", true, 0, false, 0, TDM_SUPERVISE_EXIT },
    { "an error exit: exit", true, 1, false, 0, TDM_SUPERVISE_EXIT },
    { "handed to the standby: exit (the standby serves)", true, TDM_EXIT_HANDED_OFF, false, 0, TDM_SUPERVISE_EXIT },
    { "killed by a signal: exit", false, 128 + 9, false, 0, TDM_SUPERVISE_EXIT },
};

Test(supervise, decides_per_ending)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const decide_case *c = &cases[i];
        cr_expect_eq(tdm_supervise_decide(c->exited, c->status, c->stopping, c->recent), c->want, "%s", c->name);
    }
}
