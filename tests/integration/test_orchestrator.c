/* tandem-orchestrator end to end, without a GPU server: the real daemon on a loopback port with
 * the example configs (configs/orchestrator.conf, configs/vms.conf), a fake node agent inside the
 * test that records /v1/reserve and /v1/share, guests placed by each rule of Flyt's Table 3,
 * telemetry that makes the elasticity loop scale up then down, a restart that loses no
 * placement, bad parameters and tokens refused, metrics checked by promtool and scraped by a real
 * Prometheus, and the status page read by headless Chromium. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "orch/fake_agent.h"
#include "orch/http_client.h"

/* Milliseconds since the epoch: what the orchestrator's decision stamps are compared with. */
static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define TRAINING_TOKEN "training-token-0123456789abcdef"
#define INFERENCE_TOKEN "inference-token-0123456789abcdef"
#define BATCH_TOKEN "batch-token-0123456789abcdef"

typedef struct world {
    fake_agent agent;
    char dir[64];
    int port;
    pid_t pid;
    char base[64];
    char conf[128];   /* the orchestrator.conf it runs with: the example one unless a test wrote its own */
} world;

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static int free_port(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    bind(fd, (struct sockaddr *)&sa, sizeof(sa));
    getsockname(fd, (struct sockaddr *)&sa, &len);
    close(fd);
    return ntohs(sa.sin_port);
}

static long call(world *w, const char *path, const char *body, json_object **out)
{
    char url[256], *text = NULL;
    snprintf(url, sizeof(url), "%s%s", w->base, path);
    long status = http_call(url, body, &text);
    if (out)
        *out = json_tokener_parse(text ? text : "");
    free(text);
    return status;
}

static const char *str(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static void orch_start(world *w)
{
    char listen[64], state[128], tenants[128];
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", w->port);
    snprintf(state, sizeof(state), "%s/state", w->dir);
    snprintf(tenants, sizeof(tenants), "%s/tenants.ini", w->dir);
    w->pid = fork();
    cr_assert(w->pid >= 0);
    if (w->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);   /* a test that fails or times out leaves no daemon behind */
        execl(TANDEM_BUILD_DIR "/bin/tandem-orchestrator", "tandem-orchestrator", "--config", w->conf, "--listen", listen, "--state-dir", state,
              "--tenants", tenants, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100; i++) {
        char *text = NULL;
        char url[128];
        snprintf(url, sizeof(url), "%s/v1/state", w->base);
        long st = http_call(url, NULL, &text);
        free(text);
        if (st == 200)
            return;
        sleep_ms(50);
    }
    cr_assert_fail("tandem-orchestrator did not answer on %s within 5 s", w->base);
}

static void orch_stop(world *w)
{
    int status = 0;
    kill(w->pid, SIGTERM);
    waitpid(w->pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tandem-orchestrator did not stop cleanly (%d)", status);
}

static void register_node(world *w, const char *node, const char *host, int sms)
{
    char body[1024];
    json_object *o = NULL;
    snprintf(body, sizeof(body),
             "{\"node\":\"%s\",\"agent\":\"http://127.0.0.1:%d\",\"host\":\"%s\",\"gpus\":[{\"index\":0,"
             "\"name\":\"sim\",\"sms\":%d,\"memory_mib\":81920,\"servers\":["
             "{\"id\":\"%s-g0-a\",\"role\":\"active\",\"tcp\":\"127.0.0.1:7710\",\"shm\":\"%s-g0\",\"standby\":\"%s-g0-s\"},"
             "{\"id\":\"%s-g0-s\",\"role\":\"standby\",\"tcp\":\"127.0.0.1:7711\",\"shm\":\"%s-g0s\"}]}]}",
             node, w->agent.port, host, sms, node, node, node, node, node);
    cr_assert_eq(call(w, "/v1/nodes/register", body, &o), 200, "register %s", node);
    cr_assert(json_object_object_get_ex(o, "telemetry_ms", NULL));
    json_object_put(o);
}

/* Starts the world with the example configs, or with policies (libconfig text, NULL: the example
 * orchestrator.conf) in an orchestrator.conf of its own, for timeouts a test can wait out. */
static void world_start_with(world *w, const char *policies)
{
    memset(w, 0, sizeof(*w));
    cr_assert_eq(fake_agent_start(&w->agent), 0);
    snprintf(w->dir, sizeof(w->dir), "/tmp/orch-it-XXXXXX");
    cr_assert(mkdtemp(w->dir));
    snprintf(w->conf, sizeof(w->conf), "%s", TANDEM_SOURCE_DIR "/configs/orchestrator.conf");
    if (policies) {
        snprintf(w->conf, sizeof(w->conf), "%s/orchestrator.conf", w->dir);
        FILE *c = fopen(w->conf, "w");
        cr_assert(c);
        fprintf(c, "listen = \"127.0.0.1:1\";\nstate_dir = \"%s/state\";\ntenants_file = \"%s/tenants.ini\";\n"
                   "vms = \"%s\";\npolicies = { %s };\n", w->dir, w->dir, TANDEM_SOURCE_DIR "/configs/vms.conf",
                policies);
        fclose(c);
    }
    char path[128];
    snprintf(path, sizeof(path), "%s/tenants.ini", w->dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "[training]\ntoken = %s\n[inference]\ntoken = %s\n[batch]\ntoken = %s\n", TRAINING_TOKEN,
            INFERENCE_TOKEN, BATCH_TOKEN);
    fclose(f);
    chmod(path, 0600);
    w->port = free_port();
    snprintf(w->base, sizeof(w->base), "http://127.0.0.1:%d", w->port);
    orch_start(w);
    register_node(w, "node1", "host1", 132);
    register_node(w, "node2", "host2", 132);
}

static void world_start(world *w) { world_start_with(w, NULL); }

static void world_stop(world *w)
{
    orch_stop(w);
    fake_agent_stop(&w->agent);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", w->dir);
    cr_assert_eq(system(cmd), 0);
}

/* POST /v1/place for tenant with app (JSON text or NULL); the answer in *o. */
static long place(world *w, const char *tenant, const char *token, const char *app, json_object **o)
{
    char body[1024];
    snprintf(body, sizeof(body), "{\"tenant\":\"%s\",\"token\":\"%s\",\"host\":\"host1\"%s%s}", tenant, token,
             app ? ",\"app\":" : "", app ? app : "");
    return call(w, "/v1/place", body, o);
}

Test(orchestrator, places_by_each_rule_and_refuses_bad_input, .timeout = 30)
{
    world w;
    json_object *o;
    world_start(&w);

    /* vm-dedicated: training's GPU node1/0, over shm (its host is node1's). */
    cr_assert_eq(place(&w, "training", TRAINING_TOKEN, "{\"sm_cores\":16}", &o), 200, "%s", str(o, "error"));
    cr_assert_str_eq(str(o, "rule"), "vm-dedicated");
    cr_assert_str_eq(str(o, "node"), "node1");
    cr_assert_str_eq(str(o, "transport"), "shm");
    cr_assert_str_eq(str(o, "endpoint"), "shm:node1-g0");
    cr_assert_str_eq(str(o, "standby"), "shm:node1-g0s");
    char needle[128];
    snprintf(needle, sizeof(needle), "\"placement\":\"%s\"", str(o, "placement"));
    cr_assert_eq(fake_agent_count(&w.agent, "/v1/reserve", needle), 1, "the agent reserved before the answer");
    cr_assert_eq(fake_agent_count(&w.agent, "/v1/reserve", "\"sm\":16"), 1);
    json_object_put(o);

    /* node-affinity: inference's default affinity is node2, on another host: tcp. */
    cr_assert_eq(place(&w, "inference", INFERENCE_TOKEN, NULL, &o), 200, "%s", str(o, "error"));
    cr_assert_str_eq(str(o, "rule"), "node-affinity");
    cr_assert_str_eq(str(o, "node"), "node2");
    cr_assert_str_eq(str(o, "transport"), "tcp");
    cr_assert_str_eq(str(o, "endpoint"), "tcp://127.0.0.1:7710");
    json_object_put(o);

    /* app-scoped without affinity: the GPU with the most free SMs (node1 holds 16, node2 8). */
    cr_assert_eq(place(&w, "inference", INFERENCE_TOKEN, "{\"affinity\":[],\"sm_cores\":4}", &o), 200, "%s",
                 str(o, "error"));
    cr_assert_str_eq(str(o, "rule"), "app-scoped");
    cr_assert_str_eq(str(o, "node"), "node2");
    cr_assert_str_eq(str(o, "transport"), "tcp");
    json_object_put(o);

    /* default: batch has no GPU and no affinity: the first GPU with capacity. */
    cr_assert_eq(place(&w, "batch", BATCH_TOKEN, NULL, &o), 200, "%s", str(o, "error"));
    cr_assert_str_eq(str(o, "rule"), "default");
    cr_assert_str_eq(str(o, "node"), "node1");
    json_object_put(o);

    /* A drained node gets nothing: batch now goes to node2. */
    cr_assert_eq(call(&w, "/v1/nodes/node1/drain", "{}", NULL), 200);
    cr_assert_eq(place(&w, "batch", BATCH_TOKEN, "{\"sm_cores\":2}", &o), 200, "%s", str(o, "error"));
    cr_assert_str_eq(str(o, "node"), "node2");
    json_object_put(o);

    /* Bad input: each refused with a message naming what is wrong. */
    static const struct { const char *tenant, *token, *app; long status; const char *says; } bad[] = {
        { "training", "wrong-token-0123456789abcdef", NULL, 403, "tenant or token not accepted" },
        { "nobody", TRAINING_TOKEN, NULL, 403, "tenant or token not accepted" },
        { "training", TRAINING_TOKEN, "{\"sm_cores\":0}", 400, "sm_cores" },
        { "training", TRAINING_TOKEN, "{\"sm_cores\":\"8\"}", 400, "'sm_cores' must be an integer" },
        { "training", TRAINING_TOKEN, "{\"sm_cores\":500}", 400, "budget" },
        { "training", TRAINING_TOKEN, "{\"latency_upper_ms\":1,\"latency_lower_ms\":5}", 400, "latency_upper_ms" },
        { "training", TRAINING_TOKEN, "{\"sample_count\":1000}", 400, "sample_count" },
        { "training", TRAINING_TOKEN, "{\"mode\":\"shared\"}", 400, "APP_MODE" },
        { "training", TRAINING_TOKEN, "{\"affinity\":\"node1\"}", 400, "GPU_AFFINITY_NODES" },
        { "training", TRAINING_TOKEN, "{\"sm_cores\":8,\"gpu\":3}", 400, "unknown key 'gpu'" },
        { "batch", BATCH_TOKEN, "{\"sm_cores\":15}", 409, "budget" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        long st = place(&w, bad[i].tenant, bad[i].token, bad[i].app, &o);
        cr_assert_eq(st, bad[i].status, "row %zu: status %ld (%s)", i, st, str(o, "error"));
        cr_assert(strstr(str(o, "error"), bad[i].says), "row %zu: '%s' does not say '%s'", i, str(o, "error"),
                  bad[i].says);
        json_object_put(o);
    }
    cr_assert_eq(call(&w, "/v1/place", "{not json", &o), 400);
    json_object_put(o);
    cr_assert_eq(call(&w, "/v1/share", "{\"placement\":\"pl-none\",\"sm\":4}", &o), 404);
    cr_assert(strstr(str(o, "error"), "no placement pl-none"));
    json_object_put(o);
    char *big = malloc(100 * 1024);
    memset(big, ' ', 100 * 1024 - 1);
    big[100 * 1024 - 1] = 0;
    cr_assert_eq(call(&w, "/v1/place", big, NULL), 413, "a body over the bound");
    free(big);
    world_stop(&w);
}

/* Telemetry for placement key with p99 us_p99 microseconds. */
static void report(world *w, const char *key, int us_p99)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"node\":\"node1\",\"gpus\":[{\"index\":0,\"memory_used_mib\":100,\"sm_reserved\":16}],"
             "\"servers\":[{\"id\":\"node1-g0-a\",\"alive\":true,\"takeovers\":0,\"sessions\":[{\"session\":1,"
             "\"placement\":\"%s\",\"tenant\":\"training\",\"sm\":8,\"memory_mib\":100,\"calls\":1000,"
             "\"latency_us\":{\"p50\":%d,\"p99\":%d}}]}]}", key, us_p99 / 2, us_p99);
    cr_assert_eq(call(w, "/v1/nodes/telemetry", body, NULL), 200);
    sleep_ms(2);   /* reports at least a GPU_METRIC_INTERVAL of 1 ms apart: each one counts */
}

/* A number of placement key in /v1/state (-1: none). */
static double placement_number(world *w, const char *key, const char *field)
{
    json_object *st = NULL, *pl = NULL;
    double n = -1;
    cr_assert_eq(call(w, "/v1/state", NULL, &st), 200);
    json_object_object_get_ex(st, "placements", &pl);
    for (size_t i = 0; i < json_object_array_length(pl); i++) {
        json_object *p = json_object_array_get_idx(pl, i), *v = NULL;
        if (strcmp(str(p, "placement"), key) == 0 && json_object_object_get_ex(p, field, &v))
            n = json_object_get_double(v);
    }
    json_object_put(st);
    return n;
}

static int share_of(world *w, const char *key)
{
    return (int)placement_number(w, key, "sm");
}

Test(orchestrator, elasticity_scales_up_then_down_through_the_node_agent, .timeout = 30)
{
    world w;
    json_object *o;
    char key[64], needle[128];
    world_start(&w);

    cr_assert_eq(place(&w, "training", TRAINING_TOKEN,
                       "{\"sm_cores\":8,\"scale_up\":8,\"scale_down\":4,\"latency_upper_ms\":10,"
                       "\"latency_lower_ms\":2,\"sample_count\":3,\"metric_interval_s\":0.001}", &o), 200, "%s",
                 str(o, "error"));
    snprintf(key, sizeof(key), "%s", str(o, "placement"));
    json_object_put(o);

    for (int i = 0; i < 3; i++)
        report(&w, key, 30000);   /* 30 ms, over 10; reports 2 ms apart, so the interval is 1 ms */
    cr_assert_eq(share_of(&w, key), 16, "scaled up by scale_up");
    snprintf(needle, sizeof(needle), "\"placement\":\"%s\",\"sm\":16", key);
    cr_assert_eq(fake_agent_count(&w.agent, "/v1/share", needle), 1, "the node agent was told");
    for (int i = 0; i < 3; i++)
        report(&w, key, 1000);    /* inside the cool-down: dropped */
    cr_assert_eq(share_of(&w, key), 16, "no change within the cool-down");
    sleep_ms(2100);               /* configs/orchestrator.conf: elasticity_cooldown_ms = 2000 */
    for (int i = 0; i < 3; i++)
        report(&w, key, 1000);    /* 1 ms, under 2 */
    cr_assert_eq(share_of(&w, key), 12, "scaled down by scale_down");
    snprintf(needle, sizeof(needle), "\"placement\":\"%s\",\"sm\":12", key);
    cr_assert_eq(fake_agent_count(&w.agent, "/v1/share", needle), 1);

    cr_assert_eq(call(&w, "/v1/decisions", NULL, &o), 200);
    int ups = 0, downs = 0;
    for (size_t i = 0; i < json_object_array_length(o); i++) {
        json_object *d = json_object_array_get_idx(o, i);
        ups += strcmp(str(d, "action"), "scale-up") == 0;
        downs += strcmp(str(d, "action"), "scale-down") == 0;
        if (strcmp(str(d, "action"), "scale-up") == 0)
            cr_assert(strstr(str(d, "why"), "median p99"), "%s", str(d, "why"));
    }
    cr_assert_eq(ups, 1);
    cr_assert_eq(downs, 1);
    json_object_put(o);

    /* An operator's share goes to the node agent too, and its applied_us comes back. */
    char body[128];
    snprintf(body, sizeof(body), "{\"placement\":\"%s\",\"sm\":20}", key);
    double before_ms = wall_ms();
    cr_assert_eq(call(&w, "/v1/share", body, &o), 200, "%s", str(o, "error"));
    double after_ms = wall_ms();
    cr_assert_str_eq(str(o, "applied_us"), "42");
    json_object_put(o);
    /* Its decision is stamped when taken, before the node agent was asked, and says how long the
     * agent took: the first hops of a share change (tests/gpu/run-control-plane-gpu.sh). */
    cr_assert_eq(call(&w, "/v1/decisions", NULL, &o), 200);
    json_object *last = json_object_array_get_idx(o, json_object_array_length(o) - 1), *v = NULL;
    cr_assert_str_eq(str(last, "action"), "set-share");
    cr_assert(json_object_object_get_ex(last, "time", &v));
    double decided_ms = json_object_get_double(v) * 1000;
    cr_assert(json_object_object_get_ex(last, "agent_ms", &v), "a decision that asked an agent says how long it took");
    double agent_ms = json_object_get_double(v);
    cr_assert(decided_ms >= before_ms - 1 && decided_ms + agent_ms <= after_ms + 1,
              "decided at %.3f, the agent answered %.3f ms later; the request ran from %.3f to %.3f", decided_ms,
              agent_ms, before_ms, after_ms);
    cr_assert(agent_ms > 0, "the agent's time is measured: %.6f ms", agent_ms);
    json_object_put(o);
    snprintf(body, sizeof(body), "{\"placement\":\"%s\",\"sm\":97}", key);
    cr_assert_eq(call(&w, "/v1/share", body, &o), 409, "over training's 96-SM budget");
    json_object_put(o);
    world_stop(&w);
}

static double interval_of(world *w, const char *key)
{
    return placement_number(w, key, "metric_interval_s");
}

/* GPU_METRIC_INTERVAL: the guest library sends it as json-c writes a double ("1.0", "0.3"); it
 * is placed, shown in /v1/state, kept over a restart, and paces the elasticity window: reports
 * that come sooner than the interval after the last counted one are not counted. */
Test(orchestrator, gpu_metric_interval_sent_as_a_double_is_placed_and_paces_the_window, .timeout = 30)
{
    world w;
    json_object *o;
    char key[64];
    world_start(&w);

    cr_assert_eq(place(&w, "training", TRAINING_TOKEN, "{\"sm_cores\":4,\"metric_interval_s\":1.0}", &o), 200,
                 "GPU_METRIC_INTERVAL=1 as the guest sends it: %s", str(o, "error"));
    snprintf(key, sizeof(key), "%s", str(o, "placement"));
    json_object_put(o);
    cr_assert_float_eq(interval_of(&w, key), 1.0, 1e-9);

    cr_assert_eq(place(&w, "training", TRAINING_TOKEN,
                       "{\"sm_cores\":8,\"scale_up\":8,\"scale_down\":4,\"latency_upper_ms\":10,"
                       "\"latency_lower_ms\":2,\"sample_count\":3,\"metric_interval_s\":0.3}", &o), 200,
                 "GPU_METRIC_INTERVAL=0.3: %s", str(o, "error"));
    snprintf(key, sizeof(key), "%s", str(o, "placement"));
    json_object_put(o);
    cr_assert_float_eq(interval_of(&w, key), 0.3, 1e-9);
    for (int i = 0; i < 3; i++)
        report(&w, key, 30000);   /* within 10 ms: one counted */
    cr_assert_eq(share_of(&w, key), 8, "three reports within one interval filled a window of three");
    for (int i = 0; i < 2; i++) {
        sleep_ms(320);
        report(&w, key, 30000);
    }
    cr_assert_eq(share_of(&w, key), 16, "three reports an interval apart scale up");
    orch_stop(&w);
    orch_start(&w);
    cr_assert_float_eq(interval_of(&w, key), 0.3, 1e-9, "the interval survives a restart");

    static const char *const bad[] = { "{\"metric_interval_s\":0}", "{\"metric_interval_s\":3600.5}",
                                       "{\"metric_interval_s\":\"1\"}" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(place(&w, "training", TRAINING_TOKEN, bad[i], &o), 400, "%s", bad[i]);
        cr_assert(strstr(str(o, "error"), "metric_interval_s"), "%s: %s", bad[i], str(o, "error"));
        json_object_put(o);
    }
    world_stop(&w);
}

Test(orchestrator, restart_keeps_placements_and_decisions, .timeout = 30)
{
    world w;
    json_object *o, *before, *after;
    world_start(&w);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(place(&w, "inference", INFERENCE_TOKEN, "{\"sm_cores\":4}", &o), 200, "%s", str(o, "error"));
        json_object_put(o);
    }
    cr_assert_eq(call(&w, "/v1/state", NULL, &before), 200);
    orch_stop(&w);
    orch_start(&w);
    cr_assert_eq(call(&w, "/v1/state", NULL, &after), 200);
    json_object *pb = NULL, *pa = NULL;
    json_object_object_get_ex(before, "placements", &pb);
    json_object_object_get_ex(after, "placements", &pa);
    cr_assert_eq(json_object_array_length(pa), 3);
    cr_assert_str_eq(json_object_to_json_string(pa), json_object_to_json_string(pb), "placements differ after restart");
    json_object_put(before);
    json_object_put(after);
    cr_assert_eq(call(&w, "/v1/decisions", NULL, &o), 200);
    cr_assert_eq(json_object_array_length(o), 3, "the three place decisions survive");
    json_object_put(o);
    world_stop(&w);
}

/* Runs a shell command line; its exit status. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(orchestrator, metrics_pass_promtool_and_a_real_prometheus_scrapes_them, .timeout = 45)
{
    world w;
    json_object *o;
    world_start(&w);
    cr_assert(access("/usr/bin/promtool", X_OK) == 0, "promtool is not installed (Debian: prometheus)");
    cr_assert(access("/usr/bin/prometheus", X_OK) == 0, "/usr/bin/prometheus is not installed (Debian: prometheus)");
    cr_assert_eq(place(&w, "training", TRAINING_TOKEN, NULL, &o), 200);
    /* its server reports sampled kernels of 2.5 ms (p50) and 4 ms (p99): in /v1/state and /metrics */
    char key[64], body[1024];
    snprintf(key, sizeof(key), "%s", str(o, "placement"));
    json_object_put(o);
    snprintf(body, sizeof(body),
             "{\"node\":\"node1\",\"gpus\":[{\"index\":0,\"memory_used_mib\":100,\"sm_reserved\":8}],"
             "\"servers\":[{\"id\":\"node1-g0-a\",\"alive\":true,\"takeovers\":0,\"sessions\":[{\"session\":1,"
             "\"placement\":\"%s\",\"tenant\":\"training\",\"sm\":8,\"memory_mib\":100,\"calls\":1000,"
             "\"latency_us\":{\"p50\":100,\"p99\":200},\"kernel_us\":{\"p50\":2500,\"p99\":4000,\"samples\":3}}]}]}",
             key);
    cr_assert_eq(call(&w, "/v1/nodes/telemetry", body, NULL), 200);
    json_object *st = NULL, *pl = NULL;
    cr_assert_eq(call(&w, "/v1/state", NULL, &st), 200);
    json_object_object_get_ex(st, "placements", &pl);
    cr_assert_eq(json_object_array_length(pl), 1);
    json_object *klat = json_object_object_get(json_object_array_get_idx(pl, 0), "kernel_latency");
    cr_expect_float_eq(json_object_get_double(json_object_object_get(klat, "p50_ms")), 2.5, 1e-9, "%s",
                       json_object_to_json_string(st));
    cr_expect_float_eq(json_object_get_double(json_object_object_get(klat, "p99_ms")), 4.0, 1e-9);
    json_object_put(st);

    cr_assert_eq(run("curl -sf %s/metrics > %s/metrics.txt", w.base, w.dir), 0);
    cr_assert_eq(run("grep -q '^tandem_orch_session_kernel_latency_p99_seconds{.*tenant=\"training\".*} 0.004' "
                     "%s/metrics.txt", w.dir), 0, "no kernel latency series for the training session");
    cr_assert_eq(run("grep -q '^tandem_orch_session_sm_share{.*tenant=\"training\".*} 8$' %s/metrics.txt", w.dir), 0,
                 "no SM share series for the training session");
    cr_assert_eq(run("grep -q '^tandem_orch_decisions_total{action=\"place\"} 1$' %s/metrics.txt", w.dir), 0);
    cr_assert_eq(run("promtool check metrics < %s/metrics.txt > %s/promtool.txt 2>&1", w.dir, w.dir), 0,
                 "promtool check metrics failed (see %s/promtool.txt)", w.dir);

    int prom_port = free_port();
    char conf[256];
    snprintf(conf, sizeof(conf), "%s/prometheus.yml", w.dir);
    FILE *f = fopen(conf, "w");
    fprintf(f, "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: tandem\n    static_configs:\n"
               "      - targets: ['127.0.0.1:%d']\n", w.port);
    fclose(f);
    pid_t prom = fork();
    if (prom == 0) {
        char listen[64], storage[128], cf[320];
        snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", prom_port);
        snprintf(storage, sizeof(storage), "--storage.tsdb.path=%s/prom", w.dir);
        snprintf(cf, sizeof(cf), "--config.file=%s", conf);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (!freopen("/dev/null", "w", stderr))
            _exit(127);
        execl("/usr/bin/prometheus", "prometheus", cf, storage, listen, (char *)NULL);
        _exit(127);
    }
    bool found = false;
    for (int i = 0; i < 100 && !found; i++) {
        char url[256], *text = NULL;
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/query?query=tandem_orch_session_sm_share", prom_port);
        if (http_call(url, NULL, &text) == 200 && strstr(text, "\"tenant\":\"training\"") && strstr(text, "\"8\"]"))
            found = true;
        free(text);
        if (!found)
            sleep_ms(250);
    }
    kill(prom, SIGTERM);
    waitpid(prom, NULL, 0);
    cr_assert(found, "Prometheus did not return tandem_orch_session_sm_share for training within 25 s");
    world_stop(&w);
}

Test(orchestrator, status_page_in_headless_chromium_lists_sessions, .timeout = 100)
{
    world w;
    json_object *o;
    char keys[2][64];
    world_start(&w);
    cr_assert(access("/usr/bin/chromium", X_OK) == 0, "/usr/bin/chromium is not installed (Debian: chromium)");
    cr_assert_eq(place(&w, "training", TRAINING_TOKEN, NULL, &o), 200);
    snprintf(keys[0], sizeof(keys[0]), "%s", str(o, "placement"));
    json_object_put(o);
    cr_assert_eq(place(&w, "inference", INFERENCE_TOKEN, NULL, &o), 200);
    snprintf(keys[1], sizeof(keys[1]), "%s", str(o, "placement"));
    json_object_put(o);

    /* Chromium itself, not the page, sometimes never exits on a loaded 2-core machine (a
     * clean-clone CI run of 2026-12-02, under ASan: 30 s without an exit, the plain pass of the
     * same run took 17 s for the whole suite): a second try, then the verdict. */
    int rc = -1;
    for (int attempt = 0; attempt < 2 && rc != 0; attempt++)
        rc = run("HOME=%s timeout 40 chromium --headless --no-sandbox --disable-gpu --dump-dom %s/ "
                 "> %s/page.html 2>/dev/null", w.dir, w.base, w.dir);
    cr_assert_eq(rc, 0, "chromium failed twice");
    char path[128];
    snprintf(path, sizeof(path), "%s/page.html", w.dir);
    FILE *f = fopen(path, "r");
    static char page[65536];
    size_t n = fread(page, 1, sizeof(page) - 1, f);
    page[n] = 0;
    fclose(f);
    for (int i = 0; i < 2; i++)
        cr_assert(strstr(page, keys[i]), "the page does not show session %s", keys[i]);
    cr_assert(strstr(page, "<td>inference</td>") && strstr(page, "<td>training</td>"), "tenants missing");
    cr_assert(strstr(page, "<td>node2</td>"), "nodes missing");
    world_stop(&w);
}

Test(orchestrator, tandemctl_lists_sets_drains_and_says_what_failed, .timeout = 30)
{
    world w;
    json_object *o;
    char key[64];
    world_start(&w);
    cr_assert_eq(place(&w, "training", TRAINING_TOKEN, NULL, &o), 200);
    snprintf(key, sizeof(key), "%s", str(o, "placement"));
    json_object_put(o);
    const char *ctl = TANDEM_BUILD_DIR "/bin/tandemctl";
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d sessions | grep -q '%s.*training.*node1/gpu0.*shm'", ctl, w.port,
                     key), 0, "sessions does not list the placement");
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d nodes | grep -q 'node2.*host2.*up'", ctl, w.port), 0);
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d share %s 12 | grep -q '12 SMs, applied in 42 us'", ctl, w.port,
                     key), 0);
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d drain node2 >/dev/null", ctl, w.port), 0);
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d decisions | grep -q 'set-share.*8.*12'", ctl, w.port), 0);
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d decisions | grep -q 'node2.*drain'", ctl, w.port), 0);
    /* json: the API's objects one a line, for scripts (bench/control-plane/timeline.sh) */
    cr_assert_eq(run("test \"$(%s --orchestrator 127.0.0.1:%d json decisions | grep -c '^{\"time\":.*\"agent_ms\":.*}$')\" "
                     "= 3", ctl, w.port), 0, "json decisions: place, set-share and drain, one a line");
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d json placements | grep -q '^{\"placement\":\"%s\".*\"sm\":12,'",
                     ctl, w.port, key), 0, "json placements lists the placement with its share");
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d json gpus | grep '\"node\":\"node1\"' | grep -q '\"sm_placed\":12,'",
                     ctl, w.port), 0, "json gpus names each GPU's node and its SMs placed");
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d json nodes >/dev/null 2>&1", ctl, w.port), 2,
                 "json takes decisions, placements or gpus");
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d share pl-nope 4 2>&1 | grep -q 'no placement pl-nope'", ctl,
                     w.port), 0, "an unknown placement is named");
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d share pl-nope 4 >/dev/null 2>&1", ctl, w.port), 1);
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d nodes 2>&1 | grep -q 'unreachable'", ctl, free_port()), 0,
                 "an unreachable orchestrator is said so");
    world_stop(&w);
}

/* A full telemetry report of node (both its servers answered) whose active server lists a session
 * with key (NULL: no session); full false: the standby did not answer. */
static void report_node(world *w, const char *node, const char *key, bool full)
{
    char body[1024], session[256] = "";
    if (key)
        snprintf(session, sizeof(session), "{\"session\":1,\"placement\":\"%s\",\"tenant\":\"training\",\"sm\":8,"
                 "\"memory_mib\":100,\"calls\":10}", key);
    snprintf(body, sizeof(body),
             "{\"node\":\"%s\",\"gpus\":[{\"index\":0,\"memory_used_mib\":100,\"sm_reserved\":8}],\"servers\":["
             "{\"id\":\"%s-g0-a\",\"alive\":true,\"takeovers\":0,\"sessions\":[%s]},"
             "{\"id\":\"%s-g0-s\",\"alive\":%s,\"takeovers\":0,\"sessions\":[]}]}",
             node, node, session, node, full ? "true" : "false");
    cr_assert_eq(call(w, "/v1/nodes/telemetry", body, NULL), 200);
}

static bool has_placement(world *w, const char *key)
{
    return share_of(w, key) >= 0;
}

static const char *node_state(world *w, const char *node, char *out, size_t outlen)
{
    json_object *st = NULL, *nodes = NULL;
    snprintf(out, outlen, "?");
    cr_assert_eq(call(w, "/v1/state", NULL, &st), 200);
    json_object_object_get_ex(st, "nodes", &nodes);
    for (size_t i = 0; i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i);
        if (strcmp(str(n, "node"), node) == 0)
            snprintf(out, outlen, "%s", str(n, "state"));
    }
    json_object_put(st);
    return out;
}

/* The number of decisions with action about key (NULL: any) whose why says says (NULL: any). */
static int decisions_of(world *w, const char *action, const char *key, const char *says)
{
    json_object *o = NULL;
    int n = 0;
    cr_assert_eq(call(w, "/v1/decisions", NULL, &o), 200);
    for (size_t i = 0; i < json_object_array_length(o); i++) {
        json_object *d = json_object_array_get_idx(o, i);
        n += strcmp(str(d, "action"), action) == 0 && (!key || strcmp(str(d, "placement"), key) == 0) &&
             (!says || strstr(str(d, "why"), says));
    }
    json_object_put(o);
    return n;
}

/* Places for tenant with app; the key in key, the node in node (either may be NULL). */
static long place_key(world *w, const char *tenant, const char *token, const char *app, char *key, char *node)
{
    json_object *o = NULL;
    long st = place(w, tenant, token, app, &o);
    if (key)
        snprintf(key, 64, "%s", st == 200 ? str(o, "placement") : "");
    if (node)
        snprintf(node, 64, "%s", st == 200 ? str(o, "node") : "");
    json_object_put(o);
    return st;
}

Test(orchestrator, a_placement_whose_session_ended_is_released_and_its_sms_fit_again, .timeout = 30)
{
    world w;
    char key[64], again[64];
    world_start(&w);
    const char *ctl = TANDEM_BUILD_DIR "/bin/tandemctl";

    cr_assert_eq(place_key(&w, "training", TRAINING_TOKEN, "{\"sm_cores\":96}", key, NULL), 200);
    cr_assert_eq(place_key(&w, "training", TRAINING_TOKEN, "{\"sm_cores\":8}", NULL, NULL), 409,
                 "training's 96-SM budget is full");
    report_node(&w, "node1", key, true);          /* its guest connected: live */
    cr_assert(has_placement(&w, key));
    report_node(&w, "node1", NULL, false);        /* the standby did not answer: the session may be there */
    cr_assert(has_placement(&w, key), "a partial report released a live placement");
    report_node(&w, "node1", NULL, true);         /* every server answered, none lists it: ended */
    cr_assert_not(has_placement(&w, key), "a placement whose session ended is still held");
    cr_assert_eq(decisions_of(&w, "release", key, "its session ended"), 1);
    cr_assert_eq(place_key(&w, "training", TRAINING_TOKEN, "{\"sm_cores\":96}", again, NULL), 200,
                 "the released SMs are not free again");

    cr_assert_eq(run("curl -sf %s/metrics | grep -q '^tandem_orch_decisions_total{action=\"release\"} 1$'", w.base), 0,
                 "/metrics does not count the release");
    cr_assert_eq(run("%s --orchestrator 127.0.0.1:%d decisions | grep -q '%s.*release'", ctl, w.port, key), 0,
                 "tandemctl decisions does not show the release");
    orch_stop(&w);
    orch_start(&w);
    cr_assert_not(has_placement(&w, key), "a released placement came back after a restart");
    cr_assert(has_placement(&w, again));
    world_stop(&w);
}

Test(orchestrator, a_placement_whose_guest_never_connected_is_released_after_the_timeout, .timeout = 30)
{
    world w;
    char key[64];
    world_start_with(&w, "telemetry_interval_ms = 100; node_lost_timeout_ms = 60000; reserved_timeout_ms = 1000;");
    cr_assert_eq(place_key(&w, "batch", BATCH_TOKEN, "{\"sm_cores\":16}", key, NULL), 200);
    report_node(&w, "node1", NULL, true);         /* a full report without it does not release a reserved one */
    cr_assert(has_placement(&w, key), "released before its guest had the time to connect");
    sleep_ms(1600);                               /* the bound, plus the daemon's 100 ms check and slack */
    cr_assert_not(has_placement(&w, key), "a placement never connected to is held past reserved_timeout_ms");
    cr_assert_eq(decisions_of(&w, "release", key, "its guest never connected within 1 s"), 1);
    cr_assert_eq(place_key(&w, "batch", BATCH_TOKEN, "{\"sm_cores\":16}", NULL, NULL), 200, "batch's budget is free");
    world_stop(&w);
}

Test(orchestrator, placements_on_a_lost_node_are_kept_until_it_reports_again, .timeout = 30)
{
    world w;
    char live[64], reserved[64], node[64], state[16];
    world_start_with(&w, "telemetry_interval_ms = 100; node_lost_timeout_ms = 500; reserved_timeout_ms = 1500;");
    cr_assert_eq(place_key(&w, "training", TRAINING_TOKEN, NULL, live, NULL), 200);
    cr_assert_eq(place_key(&w, "batch", BATCH_TOKEN, NULL, reserved, node), 200);
    cr_assert_str_eq(node, "node1");
    report_node(&w, "node1", live, true);
    sleep_ms(2500);                               /* lost at 500 ms; the reserved bound passes at 1500 */
    cr_assert_str_eq(node_state(&w, "node1", state, sizeof(state)), "lost");
    cr_assert(has_placement(&w, live), "a live placement on a lost node was released");
    cr_assert(has_placement(&w, reserved), "a reserved placement on a lost node was released");
    report_node(&w, "node1", live, true);         /* back: now its report can say the guest never came */
    sleep_ms(400);
    cr_assert_str_eq(node_state(&w, "node1", state, sizeof(state)), "up");
    cr_assert(has_placement(&w, live));
    cr_assert_not(has_placement(&w, reserved), "the reserved placement outlived its bound once its node reported");
    world_stop(&w);
}

Test(orchestrator, a_node_without_telemetry_is_lost_gets_no_placement_and_comes_back_at_its_report, .timeout = 30)
{
    world w;
    char node[64], state[16];
    world_start_with(&w, "telemetry_interval_ms = 100; node_lost_timeout_ms = 500;");
    cr_assert_str_eq(node_state(&w, "node1", state, sizeof(state)), "up");
    sleep_ms(900);
    cr_assert_str_eq(node_state(&w, "node1", state, sizeof(state)), "lost", "no telemetry past node_lost_timeout_ms");
    cr_assert_eq(decisions_of(&w, "node-lost", "node1", "no telemetry"), 1);
    report_node(&w, "node2", NULL, true);
    cr_assert_str_eq(node_state(&w, "node2", state, sizeof(state)), "up", "a report brings a lost node back");
    /* batch's default rule takes the first GPU with capacity: node1's, were it not lost. */
    cr_assert_eq(place_key(&w, "batch", BATCH_TOKEN, "{\"sm_cores\":2}", NULL, node), 200);
    cr_assert_str_eq(node, "node2", "a lost node got a new placement");
    /* training's own GPU is node1's: with node1 lost it goes elsewhere or nowhere, never there. */
    long st = place_key(&w, "training", TRAINING_TOKEN, "{\"sm_cores\":2}", NULL, node);
    cr_assert(st != 200 || strcmp(node, "node1") != 0, "a lost node got training's new placement");
    report_node(&w, "node1", NULL, true);
    cr_assert_str_eq(node_state(&w, "node1", state, sizeof(state)), "up");
    cr_assert_eq(place_key(&w, "training", TRAINING_TOKEN, NULL, NULL, node), 200);
    cr_assert_str_eq(node, "node1");
    world_stop(&w);
}
