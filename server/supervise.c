#include "supervise.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "health.h"
#include "log.h"

tdm_supervise_action tdm_supervise_decide(bool exited, int status, bool stopping, int recent)
{
    if (stopping || !exited || status != TDM_EXIT_CONTEXT_LOST)
        return TDM_SUPERVISE_EXIT;
    return recent >= TDM_SUPERVISE_MAX_RESTARTS ? TDM_SUPERVISE_GIVE_UP : TDM_SUPERVISE_RESTART;
}

/* The child the signals go to; a process has one supervisor. */
static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t stopping;

static void forward(int sig)
{
    stopping = 1;
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

int tdm_supervise(void)
{
    struct sigaction sa;
    time_t starts[TDM_SUPERVISE_MAX_RESTARTS + 1] = { 0 };
    int nstarts = 0;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    for (;;) {
        int status = 0, recent = 0;
        time_t now = time(NULL);
        pid_t pid = fork();

        if (pid < 0) {
            int err = errno;
            tdm_log("--supervise: cannot start the server: %s", strerror(err));
            return -err;
        }
        if (pid == 0) {
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            return 0;
        }
        child_pid = pid;
        starts[nstarts++ % (TDM_SUPERVISE_MAX_RESTARTS + 1)] = now;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        child_pid = 0;
        now = time(NULL);
        for (int i = 0; i < TDM_SUPERVISE_MAX_RESTARTS + 1 && i < nstarts; i++)
            recent += starts[i] && now - starts[i] < TDM_SUPERVISE_WINDOW_S;
        recent -= 1; /* the start of the child that just ended is no restart */
        bool exited = WIFEXITED(status);
        int code = exited ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        switch (tdm_supervise_decide(exited, code, stopping, recent)) {
        case TDM_SUPERVISE_RESTART:
            tdm_log("--supervise: the server (pid %d) lost its device context: starting a new one", (int)pid);
            continue;
        case TDM_SUPERVISE_GIVE_UP:
            tdm_log("--supervise: the server lost its device context %d times in %d s: giving up", recent + 1,
                    TDM_SUPERVISE_WINDOW_S);
            exit(code);
        case TDM_SUPERVISE_EXIT:
            exit(code);
        }
    }
}
