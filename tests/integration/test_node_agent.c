/* tandem-node (issue 17, docs/node-agent.md) on the sim backend with a fake orchestrator
 * (libmicrohttpd in this process, recording what the agent posts): it starts an active and its
 * standby, registers, sends telemetry with a guest's session, restarts a killed server, re-adopts
 * its servers after its own SIGKILL without starting them twice, registers again after the
 * orchestrator was away (a guest session and a program run on its server meanwhile), and stops its servers at SIGTERM; with mps on the cuda backend (faked),
 * it runs and supervises one MPS daemon per GPU. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "raw_calls.h"
#include "transport.h"

typedef struct fake_orch {
    struct MHD_Daemon *d;
    atomic_int registers, telemetries;
    pthread_mutex_t lock;
    char last_telemetry[1 << 16];
} fake_orch;

typedef struct upload { size_t len; char data[1 << 16]; } upload;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *data, size_t *size, void **state)
{
    fake_orch *o = cls;
    upload *u = *state;

    if (!u) {
        *state = calloc(1, sizeof(upload));
        return MHD_YES;
    }
    if (*size) {
        size_t take = *size < sizeof(u->data) - 1 - u->len ? *size : sizeof(u->data) - 1 - u->len;
        memcpy(u->data + u->len, data, take);
        u->len += take;
        *size = 0;
        return MHD_YES;
    }
    const char *answer = "{}";
    if (strcmp(url, "/v1/nodes/register") == 0) {
        atomic_fetch_add(&o->registers, 1);
        answer = "{\"telemetry_ms\":200}";
    } else if (strcmp(url, "/v1/nodes/telemetry") == 0) {
        pthread_mutex_lock(&o->lock);
        snprintf(o->last_telemetry, sizeof(o->last_telemetry), "%s", u->data);
        pthread_mutex_unlock(&o->lock);
        atomic_fetch_add(&o->telemetries, 1);
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(answer), (void *)answer, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result rc = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return rc;
}

static void on_done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode t)
{
    free(*state);
}

static void orch_start(fake_orch *o, int port)
{
    atomic_store(&o->registers, 0);
    atomic_store(&o->telemetries, 0);
    o->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)port, NULL, NULL, on_request, o,
                            MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_LISTENING_ADDRESS_REUSE,
                            (unsigned)1, MHD_OPTION_END);
    cr_assert_not_null(o->d, "the fake orchestrator cannot listen on %d", port);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define WAIT_FOR(cond, secs, ...)                                   \
    do {                                                            \
        double until_ = now_s() + (secs);                           \
        while (!(cond) && now_s() < until_)                         \
            usleep(50 * 1000);                                      \
        cr_assert(cond, __VA_ARGS__);                               \
    } while (0)

static char dir[128], conf[200], state_file[200], agent_log[200];

static pid_t agent_start(void)
{
    const char *argv[] = { th_bin("tandem-node"), "--config", conf, NULL };
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int fd = open(agent_log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* The pid the state file records for server id (0: none). */
static int state_pid(const char *id)
{
    json_object *root = json_object_from_file(state_file), *list, *v;
    int pid = 0;

    if (root && json_object_object_get_ex(root, "servers", &list))
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            json_object *s = json_object_array_get_idx(list, i);
            if (json_object_object_get_ex(s, "id", &v) && strcmp(json_object_get_string(v), id) == 0 &&
                json_object_object_get_ex(s, "pid", &v))
                pid = json_object_get_int(v);
        }
    json_object_put(root);
    return pid;
}

static int log_count(const char *text)
{
    char buf[1 << 16];
    int fd = open(agent_log, O_RDONLY), n = 0;
    ssize_t got = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : 0;

    if (fd >= 0)
        close(fd);
    buf[got > 0 ? got : 0] = '\0';
    for (const char *p = buf; (p = strstr(p, text)) != NULL; p++)
        n++;
    return n;
}

/* tandem-server processes whose command line names this test's state dir. */
static int servers_running(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "pgrep -f -- 'tandem-serve[r] .*--control %s/' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    cr_assert(fscanf(p, "%d", &n) == 1);
    pclose(p);
    return n;
}

/* Whether a server accepts TCP connections on 127.0.0.1:port: a started process is not yet a
 * listening one (an ASan-built server takes a while to get there). */
/* A base port for n consecutive ports that were all free just now, below the kernel's ephemeral
 * range (32768 up): a CI run of 2026-12-02 picked 43431 for the agent's API in that range and an
 * outgoing connection of another test had it ("cannot serve the HTTP API ... in use?"). */
static int free_block(int n)
{
    for (int attempt = 0; attempt < 200; attempt++) {
        /* By the process id: criterion's test processes share one random() sequence. */
        int base = 10000 + (int)(((long)getpid() * 7919 + (long)attempt * 104729) % (32000 - 10000 - n)), ok = 1;
        for (int p = base; p < base + n && ok; p++) {
            struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p),
                                      .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
            if (fd >= 0)
                close(fd);
        }
        if (ok)
            return base;
    }
    cr_assert_fail("no block of %d free ports below 32000", n);
    return -1;
}

static bool listens(int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    bool ok;

    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

static bool alive(int pid)
{
    return pid > 0 && kill(pid, 0) == 0;
}

static bool telemetry_has(fake_orch *o, const char *text)
{
    pthread_mutex_lock(&o->lock);
    bool yes = strstr(o->last_telemetry, text) != NULL;
    pthread_mutex_unlock(&o->lock);
    return yes;
}

Test(node_agent, starts_supervises_readopts_and_reregisters, .timeout = 90)
{
    static fake_orch orch = { .lock = PTHREAD_MUTEX_INITIALIZER };
    int base = free_block(8), orch_port = base + 6, agent_port = base + 7;
    char endpoint[64];
    FILE *f;

    snprintf(dir, sizeof(dir), "/tmp/tandem-node-test-%d", (int)getpid());
    snprintf(conf, sizeof(conf), "%s.conf", dir);
    snprintf(state_file, sizeof(state_file), "%s/node.state", dir);
    snprintf(agent_log, sizeof(agent_log), "%s.log", dir);
    unlink(agent_log);
    f = fopen(conf, "w");
    fprintf(f, "node = \"t%d\";\nlisten = \"127.0.0.1:%d\";\norchestrator = \"127.0.0.1:%d\";\nstate_dir = \"%s\";\n"
               "backend = \"sim\";\ntelemetry_ms = 200;\ngpus = ( { index = 0; base_port = %d; } );\n",
            (int)getpid(), agent_port, orch_port, dir, base);
    fclose(f);
    char active[64], standby[64];
    snprintf(active, sizeof(active), "t%d-gpu0-s0", (int)getpid());
    snprintf(standby, sizeof(standby), "t%d-gpu0-s0-sb", (int)getpid());

    orch_start(&orch, orch_port);
    pid_t agent = agent_start();
    WAIT_FOR(atomic_load(&orch.registers) >= 1, 15, "no register; see %s", agent_log);
    WAIT_FOR(alive(state_pid(active)) && alive(state_pid(standby)), 10, "servers not running; see %s", agent_log);

    /* a guest's session shows in telemetry */
    WAIT_FOR(listens(base), 10, "the active does not listen on %d; see %s", base, agent_log);
    snprintf(endpoint, sizeof(endpoint), "tcp://127.0.0.1:%d", base);
    tdm_transport *t = th_guest_open(endpoint, "node-agent-test");
    for (int i = 0; i < 5; i++)
        th_raw_malloc(t, 2 << 20);
    WAIT_FOR(telemetry_has(&orch, "\"calls\":"), 10, "no session in telemetry: %s", orch.last_telemetry);
    cr_expect(telemetry_has(&orch, "\"memory_used_mib\":10"), "%s", orch.last_telemetry);
    t->ops->close(t);

    /* a killed active is started again */
    int old = state_pid(active);
    kill(old, SIGKILL);
    WAIT_FOR(state_pid(active) != old && alive(state_pid(active)), 15, "no new active; see %s", agent_log);
    cr_expect_geq(log_count("was killed by signal 9"), 1);

    /* the agent's own SIGKILL: a new agent adopts the same servers, starting none */
    int pa = state_pid(active), ps = state_pid(standby);
    kill(agent, SIGKILL);
    waitpid(agent, NULL, 0);
    agent = agent_start();
    WAIT_FOR(log_count("re-adopted server") >= 2, 15, "no re-adoption; see %s", agent_log);
    sleep(1);
    cr_expect_eq(state_pid(active), pa);
    cr_expect_eq(state_pid(standby), ps);
    cr_expect_eq(servers_running(), 2, "servers were started twice");

    /* the orchestrator goes away: a guest session opened before keeps working, and a program
     * runs to completion on the node's server with the right output, while the agent knows the
     * orchestrator is away; then it comes back and the agent registers again, its servers and the
     * session untouched (docs/node-agent.md, "The orchestrator") */
    t = th_guest_open(endpoint, "node-agent-away");
    int away_before = log_count("unreachable");
    MHD_stop_daemon(orch.d);
    WAIT_FOR(log_count("unreachable") > away_before, 10, "the agent did not notice the orchestrator left; see %s",
             agent_log);
    const char *ref_argv[] = { th_bin("example-reference"), "vector_add", NULL };
    const char *ex_argv[] = { th_example("vector_add"), NULL };
    th_result *ref = calloc(1, sizeof(*ref)), *got = calloc(1, sizeof(*got));
    th_run(ref_argv, 60, ref);
    cr_assert_eq(ref->status, 0, "example-reference vector_add failed: %s", ref->err);
    th_run_guest(endpoint, ex_argv, 60, got);
    cr_expect_eq(got->status, 0, "vector_add with the orchestrator away exited %d; stderr:\n%s", got->status, got->err);
    cr_expect_str_eq(got->out, ref->out, "vector_add with the orchestrator away printed\n%s\nexpected\n%s", got->out,
                     ref->out);
    free(ref);
    free(got);
    for (int i = 0; i < 3; i++)
        th_raw_malloc(t, 2 << 20);   /* fails the test if the session opened before stopped working */
    cr_expect(alive(pa) && alive(ps), "servers died with the orchestrator away; see %s", agent_log);
    orch_start(&orch, orch_port);
    WAIT_FOR(atomic_load(&orch.registers) >= 1, 15, "no new register; see %s", agent_log);
    WAIT_FOR(atomic_load(&orch.telemetries) >= 1 && telemetry_has(&orch, "\"memory_used_mib\":6"), 10,
             "the session opened before the orchestrator left is not in the new telemetry: %s", orch.last_telemetry);
    cr_expect(alive(pa) && alive(ps));
    t->ops->close(t);

    /* SIGTERM: it stops its servers */
    kill(agent, SIGTERM);
    int st;
    waitpid(agent, &st, 0);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "agent exit status %d", st);
    WAIT_FOR(!alive(pa) && !alive(ps), 10, "servers left running after SIGTERM");
    MHD_stop_daemon(orch.d);
}

Test(node_agent, a_bad_config_stops_it_with_file_and_line)
{
    char path[] = "/tmp/tandem-node-bad-XXXXXX";
    int fd = mkstemp(path);
    const char *text = "node = \"x\";\nstate_dir = \"/tmp/x\";\nbackend = \"gpu\";\ngpus = ();\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    const char *argv[] = { th_bin("tandem-node"), "--config", path, NULL };
    th_result r;
    th_run(argv, 10, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, ":3: 'backend' must be \"sim\" or \"cuda\"") != NULL, "%s", r.err);
    unlink(path);
}

Test(node_agent, mps_on_cuda_without_the_mps_binary_is_a_clear_error)
{
    char path[] = "/tmp/tandem-node-mps-XXXXXX";
    int fd = mkstemp(path);
    const char *text = "node = \"x\";\nstate_dir = \"/tmp/tandem-node-mps-state\";\nbackend = \"cuda\";\nmps = \"on\";\n"
                       "gpus = ( { index = 0; base_port = 39000; } );\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    const char *argv[] = { "/usr/bin/env", "PATH=/nonexistent", th_bin("tandem-node"), "--config", path, NULL };
    th_result r;
    th_run(argv, 10, &r);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "needs nvidia-cuda-mps-control on PATH") != NULL, "%s", r.err);
    unlink(path);
}

/* What the fake MPS control program recorded (dir/mps.rec): lines with text. */
static int rec_count(const char *rec, const char *text)
{
    char line[1024];
    FILE *f = fopen(rec, "r");
    int n = 0;

    while (f && fgets(line, sizeof(line), f))
        n += strstr(line, text) != NULL;
    if (f)
        fclose(f);
    return n;
}

static int file_int(const char *path)
{
    FILE *f = fopen(path, "r");
    int v = 0;

    if (f && fscanf(f, "%d", &v) != 1)
        v = 0;
    if (f)
        fclose(f);
    return v;
}

/* A small file's text (a static buffer). */
static const char *file_text(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

    if (f)
        fclose(f);
    buf[n] = '\0';
    return buf;
}

static void write_script(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, 0755);
}

/* mps = "on" on the cuda backend with two GPUs and no NVIDIA software: a fake
 * nvidia-cuda-mps-control first on PATH (a daemon with -f that records its environment and ends
 * at a client's `quit`) and a fake tandem-server that records its argv.  Each GPU gets its own
 * daemon, seeing that GPU only, with its own pipe directory; each active attaches to its GPU's;
 * a killed daemon is started again alone, with its GPU's active; a stop quits both. */
Test(node_agent, one_mps_daemon_per_gpu_supervised_alone, .timeout = 60)
{
    int base = free_block(8);
    char bin[160], rec[200], fake[200], path[4096], want[600], pipe0[200], pipe1[200], pidf[240];
    FILE *f;

    snprintf(dir, sizeof(dir), "/tmp/tandem-node-mps2-%d", (int)getpid());
    snprintf(conf, sizeof(conf), "%s.conf", dir);
    snprintf(state_file, sizeof(state_file), "%s/node.state", dir);
    snprintf(agent_log, sizeof(agent_log), "%s.log", dir);
    snprintf(bin, sizeof(bin), "%s.bin", dir);
    snprintf(rec, sizeof(rec), "%s.bin/mps.rec", dir);
    unlink(agent_log);
    unlink(rec);
    mkdir(bin, 0755);
    snprintf(fake, sizeof(fake), "%s/nvidia-cuda-mps-control", bin);
    snprintf(path, sizeof(path),
             "#!/bin/sh\n"
             "R=%s\n"
             "if [ \"$1\" = -f ]; then\n"
             "  echo \"daemon pid=$$ argv=$* visible=$CUDA_VISIBLE_DEVICES pipe=$CUDA_MPS_PIPE_DIRECTORY "
             "log=$CUDA_MPS_LOG_DIRECTORY\" >> $R\n"
             "  echo $$ > \"$CUDA_MPS_PIPE_DIRECTORY/fake.pid\"\n"
             "  trap 'rm -f \"$CUDA_MPS_PIPE_DIRECTORY/control\"; echo \"daemon-quit visible=$CUDA_VISIBLE_DEVICES\" >> $R; "
             "exit 0' TERM\n"
             "  : > \"$CUDA_MPS_PIPE_DIRECTORY/control\"\n"
             "  while :; do sleep 0.1; done\n"
             "fi\n"
             "read cmd\n"
             "echo \"client argv=$* cmd=$cmd visible=$CUDA_VISIBLE_DEVICES pipe=$CUDA_MPS_PIPE_DIRECTORY\" >> $R\n"
             "[ \"$cmd\" = quit ] && kill $(cat \"$CUDA_MPS_PIPE_DIRECTORY/fake.pid\")\n"
             "exit 0\n",
             rec);
    write_script(fake, path);
    snprintf(fake, sizeof(fake), "%s/tandem-server", bin);
    snprintf(path, sizeof(path),
             "#!/bin/sh\nprev=; for a in \"$@\"; do [ \"$prev\" = --port ] && port=$a; prev=$a; done\n"
             "echo \"$*\" > %s/server-$port.args\nexec sleep 300\n",
             bin);
    write_script(fake, path);

    f = fopen(conf, "w");
    fprintf(f, "node = \"m%d\";\nlisten = \"127.0.0.1:%d\";\norchestrator = \"127.0.0.1:%d\";\nstate_dir = \"%s\";\n"
               "backend = \"cuda\";\nmps = \"on\";\nserver = \"%s\";\n"
               "gpus = ( { index = 0; base_port = %d; standby = false; },\n"
               "         { index = 1; base_port = %d; standby = false; } );\n",
            (int)getpid(), base + 7, base + 6, dir, fake, base, base + 2);
    fclose(f);
    snprintf(path, sizeof(path), "%s:%s", bin, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", path, 1);
    snprintf(pipe0, sizeof(pipe0), "%s/mps-gpu0/pipe", dir);
    snprintf(pipe1, sizeof(pipe1), "%s/mps-gpu1/pipe", dir);
    char active0[64], active1[64], args0[200], args1[200];
    snprintf(active0, sizeof(active0), "m%d-gpu0-s0", (int)getpid());
    snprintf(active1, sizeof(active1), "m%d-gpu1-s0", (int)getpid());
    snprintf(args0, sizeof(args0), "%s/server-%d.args", bin, base);
    snprintf(args1, sizeof(args1), "%s/server-%d.args", bin, base + 2);
    unlink(args0);
    unlink(args1);

    pid_t agent = agent_start();
    WAIT_FOR(alive(state_pid(active0)) && alive(state_pid(active1)), 15, "actives not running; see %s", agent_log);
    WAIT_FOR(access(args0, F_OK) == 0 && access(args1, F_OK) == 0, 10, "no server argv recorded");

    /* two daemons in the foreground, each seeing its GPU only, with its own directories */
    cr_expect_eq(rec_count(rec, "daemon "), 2, "see %s", rec);
    snprintf(want, sizeof(want), "argv=-f visible=0 pipe=%s log=%s/mps-gpu0/log", pipe0, dir);
    cr_expect_eq(rec_count(rec, want), 1, "no daemon with %s; see %s", want, rec);
    snprintf(want, sizeof(want), "argv=-f visible=1 pipe=%s log=%s/mps-gpu1/log", pipe1, dir);
    cr_expect_eq(rec_count(rec, want), 1, "no daemon with %s; see %s", want, rec);

    /* each active attaches to its GPU's daemon, which shows it as device 0 */
    snprintf(want, sizeof(want), "--mps attach %s", pipe0);
    cr_expect(strstr(file_text(args0), want) != NULL, "%s", file_text(args0));
    snprintf(want, sizeof(want), "--mps attach %s", pipe1);
    cr_expect(strstr(file_text(args1), want) != NULL, "%s", file_text(args1));
    cr_expect(strstr(file_text(args1), "--device 0 ") != NULL, "%s", file_text(args1));

    /* GPU 1's daemon is killed: it alone starts again, and GPU 1's active with it */
    snprintf(pidf, sizeof(pidf), "%s/fake.pid", pipe1);
    int d1 = file_int(pidf), a0 = state_pid(active0), a1 = state_pid(active1);
    snprintf(pidf, sizeof(pidf), "%s/fake.pid", pipe0);
    int d0 = file_int(pidf);
    cr_assert(alive(d0) && alive(d1), "daemons %d %d", d0, d1);
    unlink(args1);
    kill(d1, SIGKILL);
    snprintf(want, sizeof(want), "argv=-f visible=1 pipe=%s", pipe1);
    WAIT_FOR(rec_count(rec, want) == 2, 10, "GPU 1's daemon not started again; see %s", agent_log);
    WAIT_FOR(alive(state_pid(active1)) && state_pid(active1) != a1 && access(args1, F_OK) == 0, 15,
             "GPU 1's active not started again; see %s", agent_log);
    snprintf(want, sizeof(want), "--mps attach %s", pipe1);
    cr_expect(strstr(file_text(args1), want) != NULL, "%s", file_text(args1));
    cr_expect_eq(rec_count(rec, "visible=0 pipe"), 1, "GPU 0's daemon was started again; see %s", rec);
    cr_expect(alive(d0), "GPU 0's daemon was touched");
    cr_expect_eq(state_pid(active0), a0, "GPU 0's active was restarted");
    cr_expect(alive(a0));

    /* a stop asks each daemon to quit, with its own pipe directory */
    snprintf(pidf, sizeof(pidf), "%s/fake.pid", pipe1);
    d1 = file_int(pidf);
    kill(agent, SIGTERM);
    int st;
    waitpid(agent, &st, 0);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "agent exit status %d", st);
    snprintf(want, sizeof(want), "cmd=quit visible=0 pipe=%s", pipe0);
    cr_expect_eq(rec_count(rec, want), 1, "no quit for GPU 0; see %s", rec);
    snprintf(want, sizeof(want), "cmd=quit visible=1 pipe=%s", pipe1);
    cr_expect_eq(rec_count(rec, want), 1, "no quit for GPU 1; see %s", rec);
    WAIT_FOR(!alive(d0) && !alive(d1), 5, "MPS daemons left running after SIGTERM");
    cr_expect_eq(rec_count(rec, "daemon-quit visible="), 2, "see %s", rec);
}
