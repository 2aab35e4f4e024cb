/* The per-GPU MPS control daemons (docs/node-agent.md, "MPS"): with mps on and the cuda
 * backend, one `nvidia-cuda-mps-control -f` per GPU, with only that GPU visible and its pipe and
 * log directories under STATE/mps-gpuI; that GPU's actives attach to it (--mps attach PIPE).
 * The agent is each daemon's parent: a dead one is started again (with the servers' backoff)
 * without touching the other GPUs, and its GPU's actives are restarted on the new one.  On the
 * sim backend the servers model the domain themselves (--sim-mps-domain): nothing is started. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "node_agent.h"

#define MPS_CONTROL "nvidia-cuda-mps-control"
#define READY_WAIT_MS 10000   /* a daemon's control socket appears within this */
#define QUIT_WAIT_MS 5000     /* a daemon asked to quit is gone within this */

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

static int gpu_index(const tdm_node_agent *a, const tdm_node_mps *m)
{
    return a->conf.gpus[m - a->mps].index;
}

/* In a child: the daemon's environment, this GPU only. */
static void daemon_env(const tdm_node_agent *a, const tdm_node_mps *m)
{
    char log_dir[sizeof(m->dir) + 8], dev[16];

    snprintf(log_dir, sizeof(log_dir), "%s/log", m->dir);
    snprintf(dev, sizeof(dev), "%d", gpu_index(a, m));
    setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe, 1);
    setenv("CUDA_MPS_LOG_DIRECTORY", log_dir, 1);
    setenv("CUDA_VISIBLE_DEVICES", dev, 1);
}

static void pid_path(const tdm_node_mps *m, char *out, size_t len)
{
    snprintf(out, len, "%s/daemon.pid", m->dir);
}

static void control_path(const tdm_node_mps *m, char *out, size_t len)
{
    snprintf(out, len, "%s/control", m->pipe);
}

/* The daemon a previous agent left (daemon.pid names a live nvidia-cuda-mps-control), or 0. */
static pid_t left_running(const tdm_node_mps *m)
{
    char path[sizeof(m->dir) + 16], comm[64] = "";
    FILE *f;
    int pid = 0;

    pid_path(m, path, sizeof(path));
    if (!(f = fopen(path, "r")))
        return 0;
    if (fscanf(f, "%d", &pid) != 1)
        pid = 0;
    fclose(f);
    if (pid <= 0 || kill(pid, 0) != 0)
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/comm", pid);
    if ((f = fopen(path, "r"))) {
        if (!fgets(comm, sizeof(comm), f))
            comm[0] = '\0';
        fclose(f);
    }
    /* comm is the program's name cut to 15 characters: a reused pid is someone else. */
    return strncmp(comm, MPS_CONTROL, 15) == 0 ? pid : 0;
}

/* Starts GPU g's daemon in the foreground, in its own process group (it outlives a killed
 * agent, like the servers, and a ^C is the agent's to handle).  0 or -errno. */
static int spawn_daemon(tdm_node_agent *a, tdm_node_mps *m, uint64_t now)
{
    char path[sizeof(m->dir) + 32];
    pid_t pid;

    /* A killed daemon leaves its socket: actives wait for the new daemon's. */
    control_path(m, path, sizeof(path));
    unlink(path);
    pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        snprintf(path, sizeof(path), "%s/log/agent-daemon.out", m->dir);
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        setpgid(0, 0);
        daemon_env(a, m);
        execl(a->mps_bin, a->mps_bin, "-f", (char *)NULL);
        fprintf(stderr, "tandem-node: cannot run %s: %s\n", a->mps_bin, strerror(errno));
        _exit(127);
    }
    m->pid = pid;
    m->child = true;
    tdm_node_restart_started(&m->restart, now);
    pid_path(m, path, sizeof(path));
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%d\n", (int)pid) < 0)
        tdm_log("cannot write %s (a restarted agent would start a second MPS daemon on GPU %d)", path,
                gpu_index(a, m));
    if (f)
        fclose(f);
    tdm_log("started the MPS control daemon of GPU %d (pid %d, pipe %s)%s", gpu_index(a, m), (int)pid, m->pipe,
            m->restart.restarts ? " (a restart)" : "");
    return 0;
}

bool tdm_node_mps_ready(const tdm_node_agent *a, int g)
{
    char path[sizeof(a->mps[0].pipe) + 16];

    if (!a->mps_daemons)
        return true;
    control_path(&a->mps[g], path, sizeof(path));
    return a->mps[g].pid > 0 && access(path, F_OK) == 0;
}

const char *tdm_node_mps_pipe(const tdm_node_agent *a, int g)
{
    return a->mps_daemons ? a->mps[g].pipe : "";
}

/* GPU g's daemon is gone: when it starts again, and its actives stop (they were clients of the
 * dead daemon; they start again on the new one, their sessions resuming on their standbys). */
static void daemon_died(tdm_node_agent *a, tdm_node_mps *m, const char *how, uint64_t now)
{
    int g = (int)(m - a->mps), stopped = 0;
    uint64_t at = now;

    tdm_log("the MPS control daemon of GPU %d (pid %d) %s", gpu_index(a, m), (int)m->pid, how);
    m->pid = 0;
    m->child = false;
    tdm_restart_verdict v = tdm_node_restart_died(&m->restart, now, a->conf.restarts_per_minute, &at);
    m->start_at_ms = at;
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < a->servers.n; i++) {
        tdm_node_server *s = &a->servers.list[i];
        if (s->gpu == g && !s->is_standby && s->pid > 0 && kill(s->pid, SIGTERM) == 0)
            stopped++;
    }
    pthread_mutex_unlock(&a->lock);
    tdm_log("MPS of GPU %d: %s in %llu ms; %d active(s) of GPU %d stopped, to start again on it%s",
            gpu_index(a, m), v == TDM_RESTART_NOW ? "restarting it" : "starting it again",
            (unsigned long long)(at - now), stopped, gpu_index(a, m),
            v == TDM_RESTART_WINDOW_FULL ? " (restarts_per_minute reached)" : "");
}

bool tdm_node_mps_reaped(tdm_node_agent *a, pid_t pid, int status, uint64_t now)
{
    char how[64];

    for (int g = 0; a->mps_daemons && g < a->conf.ngpus; g++) {
        tdm_node_mps *m = &a->mps[g];
        if (m->pid != pid || !m->child)
            continue;
        tdm_node_exit_how(status, how, sizeof(how));
        daemon_died(a, m, how, now);
        return true;
    }
    return false;
}

void tdm_node_mps_tick(tdm_node_agent *a, uint64_t now)
{
    for (int g = 0; a->mps_daemons && g < a->conf.ngpus; g++) {
        tdm_node_mps *m = &a->mps[g];
        if (m->pid > 0 && !m->child && kill(m->pid, 0) != 0)
            daemon_died(a, m, "is gone (adopted: its exit status is not ours to see)", now);
        if (m->pid == 0 && now >= m->start_at_ms) {
            int rc = spawn_daemon(a, m, now);
            if (rc) {
                tdm_log("cannot start the MPS control daemon of GPU %d: %s", gpu_index(a, m), strerror(-rc));
                m->start_at_ms = now + TDM_NODE_BACKOFF_FIRST_MS;
            }
        }
    }
}

/* Whether m's daemon is gone (a child is reaped here). */
static bool gone(tdm_node_mps *m, int *status)
{
    return m->child ? waitpid(m->pid, status, WNOHANG) == m->pid : kill(m->pid, 0) != 0;
}

/* Waits for every started daemon to listen: 0, or -EIO with why. */
static int wait_ready(tdm_node_agent *a, char *why, size_t whylen)
{
    char how[64];
    int st = 0;

    for (int waited = 0;; waited += 100) {
        bool all = true;
        for (int g = 0; g < a->conf.ngpus; g++) {
            tdm_node_mps *m = &a->mps[g];
            if (tdm_node_mps_ready(a, g))
                continue;
            if (gone(m, &st)) {
                tdm_node_exit_how(st, how, sizeof(how));
                snprintf(why, whylen, "the MPS control daemon of GPU %d %s (see %s/log)", gpu_index(a, m), how,
                         m->dir);
                m->pid = 0;
                return -EIO;
            }
            if (waited >= READY_WAIT_MS) {
                snprintf(why, whylen, "the MPS control daemon of GPU %d made no %s/control within %d s (see %s/log)",
                         gpu_index(a, m), m->pipe, READY_WAIT_MS / 1000, m->dir);
                return -ETIMEDOUT;
            }
            all = false;
        }
        if (all)
            return 0;
        usleep(100 * 1000);
    }
}

int tdm_node_mps_start(tdm_node_agent *a, char *why, size_t whylen)
{
    char sub[sizeof(a->mps[0].dir) + 8];
    uint64_t now = tdm_node_now_ms();
    int rc = 0;

    if (!a->conf.mps || strcmp(a->conf.backend, "cuda") != 0)
        return 0;
    if (!on_path(MPS_CONTROL, a->mps_bin, sizeof(a->mps_bin))) {
        snprintf(why, whylen, "mps = \"on\" needs %s on PATH (NVIDIA's MPS); it is not there", MPS_CONTROL);
        return -ENOENT;
    }
    a->mps_daemons = true;
    for (int g = 0; g < a->conf.ngpus && !rc; g++) {
        tdm_node_mps *m = &a->mps[g];
        snprintf(m->dir, sizeof(m->dir), "%s/mps-gpu%d", a->conf.state_dir, a->conf.gpus[g].index);
        snprintf(m->pipe, sizeof(m->pipe), "%s/pipe", m->dir);
        const char *subs[] = { "", "/pipe", "/log" };
        for (int i = 0; i < 3 && !rc; i++) {
            snprintf(sub, sizeof(sub), "%s%s", m->dir, subs[i]);
            if (mkdir(sub, 0700) != 0 && errno != EEXIST) {
                rc = -errno;
                snprintf(why, whylen, "MPS of GPU %d: cannot create %s: %s", a->conf.gpus[g].index, sub,
                         strerror(errno));
            }
        }
        if (!rc && (m->pid = left_running(m)) > 0) {
            tdm_log("re-adopted the MPS control daemon of GPU %d (pid %d, pipe %s)", a->conf.gpus[g].index,
                    (int)m->pid, m->pipe);
            tdm_node_restart_started(&m->restart, now);
        } else if (!rc && (rc = spawn_daemon(a, m, now)) != 0) {
            snprintf(why, whylen, "cannot start the MPS control daemon of GPU %d: %s", a->conf.gpus[g].index,
                     strerror(-rc));
        }
    }
    if (!rc)
        rc = wait_ready(a, why, whylen);
    if (rc)
        tdm_node_mps_stop(a);
    return rc;
}

/* Runs the control program as a client of m's daemon with `quit` on its stdin.  0 or -errno. */
static int ask_quit(const tdm_node_agent *a, const tdm_node_mps *m)
{
    int fds[2], st = 0;

    if (pipe(fds) != 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return -e;
    }
    if (pid == 0) {
        dup2(fds[0], 0);
        close(fds[0]);
        close(fds[1]);
        daemon_env(a, m);
        execl(a->mps_bin, a->mps_bin, (char *)NULL);
        _exit(127);
    }
    close(fds[0]);
    ssize_t w = write(fds[1], "quit\n", 5);
    close(fds[1]);
    waitpid(pid, &st, 0);
    return w == 5 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

void tdm_node_mps_stop(tdm_node_agent *a)
{
    char path[sizeof(a->mps[0].dir) + 16];

    for (int g = 0; a->mps_daemons && g < a->conf.ngpus; g++) {
        tdm_node_mps *m = &a->mps[g];
        int st = 0;
        bool quit = false;
        if (m->pid <= 0)
            continue;
        tdm_log("stopping the MPS control daemon of GPU %d (pid %d)", gpu_index(a, m), (int)m->pid);
        if (ask_quit(a, m) != 0)
            tdm_log("MPS of GPU %d: %s did not take `quit`", gpu_index(a, m), MPS_CONTROL);
        for (int waited = 0; !(quit = gone(m, &st)) && waited < QUIT_WAIT_MS; waited += 100)
            usleep(100 * 1000);
        if (!quit) {
            tdm_log("the MPS control daemon of GPU %d did not quit within %d s: killed", gpu_index(a, m),
                    QUIT_WAIT_MS / 1000);
            kill(m->pid, SIGKILL);
            if (m->child)
                waitpid(m->pid, NULL, 0);
        }
        m->pid = 0;
        pid_path(m, path, sizeof(path));
        unlink(path);
    }
}
