/* Per-GPU MPS control daemon: start, attach, stop (mps.h). */
#include "mps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define MPS_CONTROL "nvidia-cuda-mps-control"

/* PATH first, then where the GPU hosts' container runtime puts the
 * driver's tools. */
static int find_control(char *out, size_t cap)
{
    const char *path = getenv("PATH");
    char *copy = strdup(path ? path : ""), *save = NULL;
    int rc = -1;

    if (!copy)
        return -1;
    for (char *d = strtok_r(copy, ":", &save); d && rc; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, cap, "%s/%s", *d ? d : ".", MPS_CONTROL);
        rc = access(out, X_OK);
    }
    free(copy);
    if (rc) {
        snprintf(out, cap, "/usr/local/nvidia/bin/%s", MPS_CONTROL);
        rc = access(out, X_OK);
    }
    if (rc)
        tdm_log("--mps: %s not found on PATH or in /usr/local/nvidia/bin "
                "(MPS needs the NVIDIA driver's tools on a GPU host)", MPS_CONTROL);
    return rc ? -1 : 0;
}

static int mkdir_p(const char *dir)
{
    char buf[512];

    snprintf(buf, sizeof(buf), "%s", dir);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* Runs the control binary with this daemon's directories; `input` (may be
 * NULL) goes to its stdin.  Returns its exit status, or -1. */
static int run_control(const tdm_mps *m, const char *arg, const char *input)
{
    int in[2] = { -1, -1 }, st = 0;
    pid_t pid;

    if (input && pipe(in) != 0)
        return -1;
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir, 1);
        setenv("CUDA_MPS_LOG_DIRECTORY", m->log_dir, 1);
        if (input) {
            dup2(in[0], 0);
            close(in[0]);
            close(in[1]);
        }
        execl(m->control, m->control, arg, (char *)NULL);
        _exit(127);
    }
    if (input) {
        close(in[0]);
        if (write(in[1], input, strlen(input)) < 0)
            tdm_log("--mps: writing to the control daemon: %s", strerror(errno));
        close(in[1]);
    }
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int wait_for(const char *path, bool present, double seconds)
{
    struct timespec ts = { 0, 20 * 1000 * 1000 };

    for (int i = 0; i < (int)(seconds * 50); i++) {
        if ((access(path, F_OK) == 0) == present)
            return 0;
        nanosleep(&ts, NULL);
    }
    return -1;
}

static void set_client_env(const tdm_mps *m)
{
    /* libcuda reads these at cuInit: the backend is this daemon's client. */
    setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir, 1);
    setenv("CUDA_MPS_LOG_DIRECTORY", m->log_dir, 1);
}

int tdm_mps_start(tdm_mps *m, const char *run_dir, int *device)
{
    char base[400], control_sock[600], dev[16];
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int rc;

    memset(m, 0, sizeof(*m));
    if (find_control(m->control, sizeof(m->control)))
        return -1;
    if (run_dir)
        snprintf(base, sizeof(base), "%s", run_dir);
    else if (xdg && *xdg)
        snprintf(base, sizeof(base), "%s/tandem", xdg);
    else
        snprintf(base, sizeof(base), "/tmp/tandem-%u", (unsigned)getuid());
    snprintf(m->pipe_dir, sizeof(m->pipe_dir), "%s/mps-gpu%d-%d/pipe", base, *device, (int)getpid());
    snprintf(m->log_dir, sizeof(m->log_dir), "%s/mps-gpu%d-%d/log", base, *device, (int)getpid());
    if (mkdir_p(m->pipe_dir) || mkdir_p(m->log_dir)) {
        tdm_log("--mps: cannot create %s: %s", m->pipe_dir, strerror(errno));
        return -1;
    }
    if (*device != 0 && !getenv("CUDA_VISIBLE_DEVICES")) {
        /* The daemon serves this GPU only; to its clients it is device 0. */
        snprintf(dev, sizeof(dev), "%d", *device);
        setenv("CUDA_VISIBLE_DEVICES", dev, 1);
        *device = 0;
    }
    rc = run_control(m, "-d", NULL);
    snprintf(control_sock, sizeof(control_sock), "%s/control", m->pipe_dir);
    if (rc != 0 || wait_for(control_sock, true, 10)) {
        tdm_log("--mps: %s -d failed (status %d); see %s", m->control, rc, m->log_dir);
        return -1;
    }
    m->started = true;
    set_client_env(m);
    tdm_log("started an MPS control daemon (pipe %s, log %s); this server is its client",
            m->pipe_dir, m->log_dir);
    return 0;
}

int tdm_mps_attach(tdm_mps *m, const char *pipe_dir)
{
    char control_sock[600];

    memset(m, 0, sizeof(*m));
    snprintf(m->pipe_dir, sizeof(m->pipe_dir), "%s", pipe_dir);
    snprintf(m->log_dir, sizeof(m->log_dir), "%s", getenv("CUDA_MPS_LOG_DIRECTORY") ? getenv("CUDA_MPS_LOG_DIRECTORY") : pipe_dir);
    snprintf(control_sock, sizeof(control_sock), "%s/control", pipe_dir);
    if (access(control_sock, F_OK) != 0) {
        tdm_log("--mps attach: no MPS control daemon at %s (no %s)", pipe_dir, control_sock);
        return -1;
    }
    setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir, 1);
    tdm_log("attached to the MPS control daemon at %s", pipe_dir);
    return 0;
}

void tdm_mps_stop(tdm_mps *m)
{
    char control_sock[600];
    int rc;

    if (!m->started)
        return;
    m->started = false;
    rc = run_control(m, NULL, "quit\n");
    snprintf(control_sock, sizeof(control_sock), "%s/control", m->pipe_dir);
    if (rc != 0 || wait_for(control_sock, false, 3))
        tdm_log("--mps: sent quit to the MPS control daemon (status %d); its control pipe "
                "is still there after 3 s; see %s", rc, m->log_dir);
    else
        tdm_log("stopped the MPS control daemon");
}
