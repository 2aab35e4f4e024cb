/* tandem-node: the node agent (issue 17, docs/node-agent.md).  Starts and supervises the
 * servers node.conf asks for, re-adopts those a previous run left, registers with the
 * orchestrator and streams telemetry, and serves its HTTP API. */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "node_agent.h"
#include "node_state.h"

#define TICK_MS 100
#define STOP_GRACE_S 10

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    stop_requested = 1;
}

uint64_t tdm_node_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* tandem-server beside this program, where none is configured. */
static int find_server_bin(tdm_node_conf *c)
{
    char self[4096];
    ssize_t n;

    if (!c->server_bin[0]) {
        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0)
            return -errno;
        self[n] = '\0';
        snprintf(c->server_bin, sizeof(c->server_bin), "%s/tandem-server", dirname(self));
    }
    if (access(c->server_bin, X_OK) != 0) {
        tdm_log("server %s: %s (set 'server' in node.conf)", c->server_bin, strerror(errno));
        return -ENOENT;
    }
    return 0;
}

static int make_dirs(const char *path)
{
    char p[TDM_NODE_PATH_MAX];

    snprintf(p, sizeof(p), "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            return -errno;
        *s = '/';
    }
    return mkdir(p, 0700) != 0 && errno != EEXIST ? -errno : 0;
}

static void save_state(tdm_node_agent *a)
{
    int rc = tdm_node_state_save(a->state_path, &a->servers, a->conf.server_host);
    if (rc)
        tdm_log("cannot write %s: %s (a restarted agent would not find its servers)", a->state_path, strerror(-rc));
}

static void start_server(tdm_node_agent *a, tdm_node_server *s, uint64_t now)
{
    char log_path[TDM_NODE_PATH_MAX + TDM_NODE_ID_MAX + 8];
    int rc;

    snprintf(log_path, sizeof(log_path), "%s/%s.log", a->conf.state_dir, s->id);
    pthread_mutex_lock(&a->lock);
    rc = tdm_node_server_spawn(&a->conf, s, tdm_node_mps_pipe(a, s->gpu), log_path);
    tdm_node_restart_started(&s->restart, now);
    pthread_mutex_unlock(&a->lock);
    if (rc) {
        tdm_log("cannot start server %s: %s", s->id, strerror(-rc));
        s->start_at_ms = now + TDM_NODE_BACKOFF_FIRST_MS;
        return;
    }
    tdm_log("started %s server %s (pid %d) on port %d, shm:%s, control %s%s", s->is_standby ? "standby" : "active",
            s->id, (int)s->pid, s->port, s->shm, s->control, s->restart.restarts ? " (a restart)" : "");
}

/* A dead server: when it starts again, said in the log. */
static void server_died(tdm_node_agent *a, tdm_node_server *s, const char *how, uint64_t now)
{
    uint64_t at = now;
    tdm_restart_verdict v;

    pthread_mutex_lock(&a->lock);
    tdm_log("server %s (pid %d) %s", s->id, (int)s->pid, how);
    s->pid = 0;
    s->child = false;
    v = tdm_node_restart_died(&s->restart, now, a->conf.restarts_per_minute, &at);
    s->start_at_ms = at;
    pthread_mutex_unlock(&a->lock);
    if (!s->is_standby && s->standby_id[0])
        tdm_log("its sessions resume on its standby %s; a new %s restores redundancy", s->standby_id, s->id);
    if (v == TDM_RESTART_NOW)
        tdm_log("restarting %s now", s->id);
    else if (v == TDM_RESTART_BACKOFF)
        tdm_log("restarting %s in %llu ms (it died soon after its last start)", s->id,
                (unsigned long long)(at - now));
    else
        tdm_log("%s started %d times this minute (restarts_per_minute): next start in %llu ms", s->id,
                a->conf.restarts_per_minute, (unsigned long long)(at - now));
    save_state(a);
}

void tdm_node_exit_how(int status, char *how, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(how, len, "was killed by signal %d", WTERMSIG(status));
    else
        snprintf(how, len, "exited with status %d", WEXITSTATUS(status));
}

static void reap(tdm_node_agent *a, uint64_t now)
{
    int st;
    pid_t pid;
    char how[64];

    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        if (tdm_node_mps_reaped(a, pid, st, now))
            continue;
        for (int i = 0; i < a->servers.n; i++) {
            tdm_node_server *s = &a->servers.list[i];
            if (s->pid != pid || !s->child)
                continue;
            tdm_node_exit_how(st, how, sizeof(how));
            server_died(a, s, how, now);
        }
    }
    /* Adopted servers are not our children: their death shows as a pid that is gone. */
    for (int i = 0; i < a->servers.n; i++) {
        tdm_node_server *s = &a->servers.list[i];
        if (s->pid > 0 && !s->child && kill(s->pid, 0) != 0)
            server_died(a, s, "is gone (adopted: its exit status is not ours to see)", now);
    }
}

/* An active with a standby starts once its standby answers: a server started with --standby
 * exits when nobody listens on the mirror socket (only a standby's own --standby waits). */
static bool standby_ready(tdm_node_agent *a, const tdm_node_server *s)
{
    for (int i = 0; s->standby_id[0] && i < a->servers.n; i++)
        if (strcmp(a->servers.list[i].id, s->standby_id) == 0)
            return tdm_node_server_answers(a->servers.list[i].pid, a->servers.list[i].control);
    return true;
}

/* Standbys first: an active finds its standby listening when it starts, and its GPU's MPS
 * daemon (with mps on the cuda backend) listening. */
static void start_due(tdm_node_agent *a, uint64_t now)
{
    bool started = false;

    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < a->servers.n; i++) {
            tdm_node_server *s = &a->servers.list[i];
            if (s->pid == 0 && s->is_standby == (pass == 0) && now >= s->start_at_ms &&
                (s->is_standby || (standby_ready(a, s) && tdm_node_mps_ready(a, s->gpu)))) {
                start_server(a, s, now);
                started = true;
            }
        }
    if (started)
        save_state(a);
}

/* The servers of the state file that still run and answer are this agent's again. */
static void adopt(tdm_node_agent *a)
{
    char why[300];
    int rc = tdm_node_state_load(a->state_path, &a->servers, why, sizeof(why));

    if (rc == -EINVAL)
        tdm_log("%s: starting afresh", why);
    for (int i = 0; i < a->servers.n; i++) {
        tdm_node_server *s = &a->servers.list[i];
        if (!s->pid)
            continue;
        if (tdm_node_server_answers(s->pid, s->control)) {
            tdm_log("re-adopted server %s (pid %d): it answers on %s", s->id, (int)s->pid, s->control);
            s->child = false;
            tdm_node_restart_started(&s->restart, tdm_node_now_ms());
            s->restart.restarts = 0;
        } else {
            tdm_log("server %s (pid %d in the state file) is gone or does not answer: starting a new one", s->id,
                    (int)s->pid);
            s->pid = 0;
        }
    }
}

static void stop_servers(tdm_node_agent *a)
{
    int left = 0;

    for (int i = 0; i < a->servers.n; i++)
        if (a->servers.list[i].pid > 0 && kill(a->servers.list[i].pid, SIGTERM) == 0)
            left++;
    tdm_log("stopping %d server(s)", left);
    for (int waited = 0; left > 0 && waited < STOP_GRACE_S * 10; waited++) {
        left = 0;
        for (int i = 0; i < a->servers.n; i++) {
            tdm_node_server *s = &a->servers.list[i];
            if (s->pid <= 0)
                continue;
            if (s->child ? waitpid(s->pid, NULL, WNOHANG) == s->pid : kill(s->pid, 0) != 0)
                s->pid = 0;
            else
                left++;
        }
        if (left)
            usleep(100 * 1000);
    }
    for (int i = 0; i < a->servers.n; i++)
        if (a->servers.list[i].pid > 0) {
            tdm_log("server %s did not stop within %d s: killed", a->servers.list[i].id, STOP_GRACE_S);
            kill(a->servers.list[i].pid, SIGKILL);
        }
}

static int run(tdm_node_agent *a)
{
    char why[600];
    int rc;

    if ((rc = make_dirs(a->conf.state_dir)) != 0) {
        tdm_log("state_dir %s: %s", a->conf.state_dir, strerror(-rc));
        return 1;
    }
    if (tdm_node_servers_plan(&a->conf, &a->servers) != 0) {
        tdm_log("state_dir %s is too long for the servers' unix sockets", a->conf.state_dir);
        return 1;
    }
    snprintf(a->state_path, sizeof(a->state_path), "%s/node.state", a->conf.state_dir);
    if (tdm_node_mps_start(a, why, sizeof(why)) != 0) {
        tdm_log("%s", why);
        return 1;
    }
    adopt(a);
    if (tdm_node_http_start(a) != 0) {
        tdm_node_mps_stop(a);
        return 1;
    }
    tdm_log("node %s: %d server(s) on %d GPU(s), backend %s, MPS %s; HTTP API on %s; orchestrator %s",
            a->conf.node, a->servers.n, a->conf.ngpus, a->conf.backend, a->conf.mps ? "on" : "off", a->conf.listen,
            a->conf.orchestrator);
    start_due(a, tdm_node_now_ms());
    save_state(a);
    while (!stop_requested) {
        uint64_t now = tdm_node_now_ms();
        reap(a, now);
        tdm_node_mps_tick(a, now);
        start_due(a, now);
        if (now >= a->next_report_ms) {
            tdm_node_report(a);
            a->next_report_ms = tdm_node_now_ms() + (uint64_t)a->telemetry_ms;
        }
        usleep(TICK_MS * 1000);
    }
    tdm_node_http_stop(a);
    if (a->conf.leave_servers_running) {
        save_state(a);
        tdm_log("stopped; the servers keep running (leave_servers_running): a new agent re-adopts them");
        return 0;
    }
    stop_servers(a);
    unlink(a->state_path);
    tdm_node_mps_stop(a);
    tdm_log("stopped, and its servers with it");
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = { { "config", required_argument, 0, 'c' }, { "help", no_argument, 0, 'h' },
                                          { 0, 0, 0, 0 } };
    static tdm_node_agent agent;   /* the process's one agent; large (its server table) */
    const char *path = NULL;
    char err[600];
    struct sigaction sa;
    int c, rc;

    tdm_log_set_program("tandem-node");
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'c')
            path = optarg;
        else {
            fprintf(c == 'h' ? stdout : stderr, "usage: tandem-node --config FILE (docs/node-agent.md)\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (!path || optind < argc) {
        fprintf(stderr, "usage: tandem-node --config FILE (docs/node-agent.md)\n");
        return 2;
    }
    if (tdm_node_conf_load(path, &agent.conf, err, sizeof(err)) != 0) {
        tdm_log("%s", err);
        return 2;
    }
    if (find_server_bin(&agent.conf) != 0)
        return 2;
    agent.telemetry_ms = agent.conf.telemetry_ms;
    pthread_mutex_init(&agent.lock, NULL);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    rc = run(&agent);
    curl_global_cleanup();
    return rc;
}
