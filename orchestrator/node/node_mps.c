/* The per-GPU MPS control daemon (docs/node-agent.md, "MPS"): with mps on and the cuda
 * backend, `nvidia-cuda-mps-control -d` per GPU with its pipe and log directories under
 * state_dir; the actives attach to it (--mps attach DIR).  On the sim backend the servers
 * model the domain themselves (--sim-mps-domain), so nothing is started. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "node_agent.h"

#define MPS_CONTROL "nvidia-cuda-mps-control"

/* The program on PATH, or false. */
static bool on_path(const char *prog, char *out, size_t len)
{
    const char *path = getenv("PATH");
    char dirs[4096];

    snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, len, "%s/%s", d, prog);
        if (access(out, X_OK) == 0)
            return true;
    }
    return false;
}

/* Runs the control program with the daemon's directories; `quit` on its stdin when quit. */
static int run_control(const char *bin, const char *dir, int gpu, bool quit)
{
    char pipe_dir[512], log_dir[512], dev[16];
    int fds[2] = { -1, -1 }, st = 0;

    snprintf(pipe_dir, sizeof(pipe_dir), "%s/pipe", dir);
    snprintf(log_dir, sizeof(log_dir), "%s/log", dir);
    snprintf(dev, sizeof(dev), "%d", gpu);
    mkdir(dir, 0700);
    mkdir(pipe_dir, 0700);
    mkdir(log_dir, 0700);
    if (quit && pipe(fds) != 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        setenv("CUDA_MPS_PIPE_DIRECTORY", pipe_dir, 1);
        setenv("CUDA_MPS_LOG_DIRECTORY", log_dir, 1);
        setenv("CUDA_VISIBLE_DEVICES", dev, 1);
        if (quit) {
            dup2(fds[0], 0);
            close(fds[1]);
            execl(bin, bin, (char *)NULL);
        } else {
            execl(bin, bin, "-d", (char *)NULL);
        }
        _exit(127);
    }
    if (quit) {
        close(fds[0]);
        if (write(fds[1], "quit\n", 5) != 5)
            tdm_log("MPS of GPU %d: cannot ask the daemon to quit", gpu);
        close(fds[1]);
    }
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

int tdm_node_mps_start(tdm_node_agent *a, char *why, size_t whylen)
{
    char bin[4096], dir[TDM_NODE_PATH_MAX + 20];

    if (!a->conf.mps || strcmp(a->conf.backend, "cuda") != 0)
        return 0;
    if (!on_path(MPS_CONTROL, bin, sizeof(bin))) {
        snprintf(why, whylen, "mps = \"on\" needs %s on PATH (NVIDIA's MPS); it is not there", MPS_CONTROL);
        return -ENOENT;
    }
    if (a->conf.ngpus != 1) {
        /* The servers take one pipe directory; one per GPU needs a --mps attach per server. */
        snprintf(why, whylen, "mps = \"on\" is supported for one GPU per node.conf for now");
        return -ENOTSUP;
    }
    snprintf(dir, sizeof(dir), "%s/mps-gpu%d", a->conf.state_dir, a->conf.gpus[0].index);
    snprintf(a->mps_pipe, sizeof(a->mps_pipe), "%s/pipe", dir);
    tdm_log("starting the MPS control daemon of GPU %d (pipe %s)", a->conf.gpus[0].index, a->mps_pipe);
    if (run_control(bin, dir, a->conf.gpus[0].index, false) != 0) {
        snprintf(why, whylen, "%s -d failed for GPU %d (see %s/log)", MPS_CONTROL, a->conf.gpus[0].index, dir);
        return -EIO;
    }
    return 0;
}

void tdm_node_mps_stop(tdm_node_agent *a)
{
    char bin[4096], dir[TDM_NODE_PATH_MAX + 20];

    if (!a->mps_pipe[0] || !on_path(MPS_CONTROL, bin, sizeof(bin)))
        return;
    snprintf(dir, sizeof(dir), "%s/mps-gpu%d", a->conf.state_dir, a->conf.gpus[0].index);
    tdm_log("stopping the MPS control daemon of GPU %d", a->conf.gpus[0].index);
    run_control(bin, dir, a->conf.gpus[0].index, true);
}
