/* On-boarding through the orchestrator (issue 17; docs/onboarding.md): a guest given
 * TANDEM_ORCHESTRATOR asks POST /v1/place at its first CUDA call and runs on the server the
 * answer names, presenting the placement key in HELLO (and in RESUME on a standby); every way
 * on-boarding fails gives one clear line and a CUDA error, without hanging.  The orchestrator
 * here is a fake (libmicrohttpd inside the test) that answers what each test sets. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control_client.h"
#include "harness.h"
#include "raw_calls.h"
#include "takeover_pair.h"
#include "tandem_rpc.h"
#include "transport.h"

/* The fake orchestrator: answers every POST /v1/place with status and body, and keeps the last
 * request's body and the count of requests. */
typedef struct fake {
    struct MHD_Daemon *d;
    int port;
    char hostport[32];
    pthread_mutex_t lock;
    int status;
    char body[1024];
    char request[4096];
    int requests;
} fake;

typedef struct upload {
    char buf[4096];
    size_t len;
} upload;

static fake orch;
static th_server srv;

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *data, size_t *size, void **state)
{
    fake *f = cls;
    upload *u = *state;
    struct MHD_Response *resp;
    enum MHD_Result rc;

    if (!u) {
        *state = u = calloc(1, sizeof(*u));
        return u ? MHD_YES : MHD_NO;
    }
    if (*size) {
        size_t n = *size < sizeof(u->buf) - 1 - u->len ? *size : sizeof(u->buf) - 1 - u->len;
        memcpy(u->buf + u->len, data, n);
        u->len += n;
        *size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&f->lock);
    if (strcmp(method, "POST") == 0 && strcmp(url, "/v1/place") == 0) {
        f->requests++;
        snprintf(f->request, sizeof(f->request), "%s", u->buf);
    }
    resp = MHD_create_response_from_buffer(strlen(f->body), f->body, MHD_RESPMEM_MUST_COPY);
    pthread_mutex_unlock(&f->lock);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    rc = MHD_queue_response(conn, (unsigned)f->status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static void done(void *cls, struct MHD_Connection *conn, void **state, enum MHD_RequestTerminationCode why)
{
    free(*state);
    *state = NULL;
}

static void fake_start(fake *f)
{
    const union MHD_DaemonInfo *info;

    pthread_mutex_init(&f->lock, NULL);
    f->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer, f, MHD_OPTION_NOTIFY_COMPLETED,
                            done, f, MHD_OPTION_END);
    cr_assert_not_null(f->d, "the fake orchestrator did not start");
    info = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
    f->port = info->port;
    snprintf(f->hostport, sizeof(f->hostport), "127.0.0.1:%d", f->port);
}

/* What the fake answers from now on. */
static void fake_says(fake *f, int status, const char *body)
{
    pthread_mutex_lock(&f->lock);
    f->status = status;
    snprintf(f->body, sizeof(f->body), "%s", body);
    pthread_mutex_unlock(&f->lock);
}

/* A placement on endpoint with key. */
static void fake_places(fake *f, const char *key, const char *endpoint, const char *transport)
{
    char body[512];

    snprintf(body, sizeof(body), "{\"placement\":\"%s\",\"node\":\"node1\",\"gpu\":0,\"server\":\"node1-gpu0-a\","
             "\"endpoint\":\"%s\",\"standby\":\"\",\"transport\":\"%s\",\"sm\":16,\"memory_mib\":4096,"
             "\"rule\":\"default\"}", key, endpoint, transport);
    fake_says(f, 200, body);
}

static void up(void)
{
    fake_start(&orch);
    th_server_start(&srv, NULL);
}

static void down(void)
{
    th_server_stop(&srv);
    MHD_stop_daemon(orch.d);
}

/* Runs prog (a NULL-ended argv; NULL: vector_add) on-boarded through orchestrator (HOST:PORT)
 * with the extra NAME=VALUE variables (NULL-ended, may be NULL); TANDEM_SERVER is removed, as
 * th_run_guest sets it. */
static void run_program_onboarded(const char *orchestrator, const char *const *vars, const char *const *prog,
                                  th_result *r)
{
    const char *argv[32] = { "/usr/bin/env", "-u", "TANDEM_SERVER", "TANDEM_TENANT=alice" };
    char o[64];
    int n = 4;

    snprintf(o, sizeof(o), "TANDEM_ORCHESTRATOR=%s", orchestrator);
    argv[n++] = o;
    for (int i = 0; vars && vars[i] && n < 22; i++)
        argv[n++] = vars[i];
    if (!prog)
        argv[n++] = th_example("vector_add");
    for (int i = 0; prog && prog[i] && n < 30; i++)
        argv[n++] = prog[i];
    argv[n] = NULL;
    th_run_guest(srv.endpoint[0] ? srv.endpoint : "tcp://127.0.0.1:1", argv, 60, r);
}

static void run_onboarded(const char *orchestrator, const char *const *vars, th_result *r)
{
    run_program_onboarded(orchestrator, vars, NULL, r);
}

/* Whether s's log has text within 5 s: a session's end is logged shortly after its guest exits. */
static bool log_soon(const th_server *s, const char *text)
{
    for (int i = 0; i < 250; i++) {
        if (th_server_log_has(s, text))
            return true;
        usleep(20000);
    }
    return false;
}

static void reference(th_result *ref)
{
    const char *argv[] = { th_bin("example-reference"), "vector_add", NULL };

    th_run(argv, 60, ref);
    cr_assert_eq(ref->status, 0, "example-reference failed: %s", ref->err);
}

Test(onboard, a_placed_guest_runs_on_the_endpoint_it_was_given_and_hello_names_the_key, .init = up, .fini = down)
{
    const char *vars[] = { "APP_SM_CORES=16", "APP_GPU_MEMORY=4GB", "GPU_AFFINITY_NODES=node1;tcp", NULL };
    th_result *ref = calloc(1, sizeof(*ref)), *r = calloc(1, sizeof(*r));
    json_object *req, *app, *v;

    reference(ref);
    fake_places(&orch, "p-onboard-1", srv.endpoint, "tcp");
    run_onboarded(orch.hostport, vars, r);
    cr_expect_eq(r->status, 0, "the placed guest failed: %s", r->err);
    cr_expect_str_eq(r->out, ref->out);
    cr_expect(strstr(r->err, "placed by the orchestrator: placement p-onboard-1 on ") != NULL, "%s", r->err);
    cr_expect(th_server_log_has(&srv, "has placement p-onboard-1"), "the server did not log the key; see %s", srv.log);
    cr_expect(log_soon(&srv, ", placement p-onboard-1) closed"), "the session's end does not name its key; "
              "see %s", srv.log);
    /* What the orchestrator was asked. */
    cr_assert_eq(orch.requests, 1);
    req = json_tokener_parse(orch.request);
    cr_assert_not_null(req, "the request is not JSON: %s", orch.request);
    cr_expect(json_object_object_get_ex(req, "tenant", &v) && strcmp(json_object_get_string(v), "alice") == 0);
    cr_expect(json_object_object_get_ex(req, "host", &v) && json_object_get_string_len(v) > 0);
    cr_assert(json_object_object_get_ex(req, "app", &app), "%s", orch.request);
    cr_expect(json_object_object_get_ex(app, "sm_cores", &v) && json_object_get_int(v) == 16, "%s", orch.request);
    cr_expect(json_object_object_get_ex(app, "gpu_memory_mib", &v) && json_object_get_int(v) == 4096, "%s",
              orch.request);
    cr_expect(json_object_object_get_ex(app, "affinity_transport", &v) && strcmp(json_object_get_string(v), "tcp") == 0);
    cr_expect(!json_object_object_get_ex(app, "mode", NULL), "an unset variable was sent: %s", orch.request);
    json_object_put(req);
    /* Over shm: the transport the answer names. */
    fake_places(&orch, "p-onboard-2", srv.shm_endpoint, "shm");
    run_onboarded(orch.hostport, NULL, r);
    cr_expect_eq(r->status, 0, "the shm guest failed: %s", r->err);
    cr_expect_str_eq(r->out, ref->out);
    cr_expect(th_server_log_has(&srv, "has placement p-onboard-2"), "see %s", srv.log);
    free(ref);
    free(r);
}

Test(onboard, a_guest_without_an_orchestrator_presents_no_key, .init = up, .fini = down)
{
    const char *argv[] = { th_example("vector_add"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(srv.endpoint, argv, 60, r);
    cr_expect_eq(r->status, 0, "%s", r->err);
    cr_expect(!th_server_log_has(&srv, "has placement"), "a key without an orchestrator; see %s", srv.log);
    cr_expect_eq(orch.requests, 0);
    free(r);
}

typedef struct failure_row {
    const char *name;
    int status;              /* the fake's answer; 0: the orchestrator is unreachable */
    const char *body;
    const char *vars[4];
    const char *message;     /* in the guest's stderr, after "the orchestrator at HOST:PORT" when it starts so */
    int requests;            /* the fake is asked this many times */
} failure_row;

static const failure_row failures[] = {
    { "refused", 403, "{\"error\":\"tenant alice has no GPU with 16 SMs free\"}", { NULL },
      " refused the placement (HTTP 403): tenant alice has no GPU with 16 SMs free", 1 },
    { "unreachable", 0, "", { NULL }, " is unreachable: ", 0 },
    { "malformed", 200, "{\"placement\":\"k\",\"transport\":\"tcp\"}", { NULL },
      " gave a malformed answer: it has no \"endpoint\"", 1 },
    { "not json", 200, "<html>", { NULL }, " gave a malformed answer: no JSON", 1 },
    { "bad key", 200, "{\"placement\":\"k;rm -rf\",\"endpoint\":\"tcp://127.0.0.1:1\",\"transport\":\"tcp\"}",
      { NULL }, " gave a malformed answer: \"placement\" holds a space", 1 },
    { "bad parameter", 200, "{}", { "APP_SM_CORES=0", NULL },
      "bad parameter APP_SM_CORES=0: zero means nothing here", 0 },
    { "contradiction", 200, "{}", { "APP_LATENCY_UPPER=3", "APP_LATENCY_LOWER=5", NULL },
      "bad parameter APP_LATENCY_LOWER=5 is not below APP_LATENCY_UPPER=3", 0 },
    { "unknown mode", 200, "{}", { "APP_MODE=shared", NULL }, "bad parameter APP_MODE=shared: an unknown mode", 0 },
    { "no tenant", 200, "{}", { "TANDEM_TENANT=", NULL }, ": TANDEM_TENANT is not set", 0 },
    { "both set", 200, "{}", { "TANDEM_SERVER=tcp://127.0.0.1:7710", NULL },
      "and TANDEM_SERVER=tcp://127.0.0.1:7710 are both set", 0 },
};

Test(onboard, each_failure_gives_its_own_line_and_no_device_without_hanging, .init = up, .fini = down)
{
    th_result *r = calloc(1, sizeof(*r));

    for (size_t i = 0; i < sizeof(failures) / sizeof(failures[0]); i++) {
        const failure_row *f = &failures[i];
        char unreachable[32], want[512];
        const char *where = orch.hostport;
        int before = orch.requests;

        if (!f->status) {   /* a port with nothing listening: the fake's, stopped, would be reused */
            snprintf(unreachable, sizeof(unreachable), "127.0.0.1:1");
            where = unreachable;
        }
        fake_says(&orch, f->status ? f->status : 200, f->body);
        run_onboarded(where, f->vars, r);
        snprintf(want, sizeof(want), "%s%s", f->message[0] == ' ' ? "the orchestrator at " : "",
                 f->message[0] == ' ' ? where : "");
        strncat(want, f->message, sizeof(want) - strlen(want) - 1);
        cr_expect_neq(r->status, 0, "%s: the guest ran", f->name);
        cr_expect(r->status < 128, "%s: the guest was killed (a hang?): %s", f->name, r->err);
        cr_expect(strstr(r->err, want) != NULL, "%s: stderr does not say '%s':\n%s", f->name, want, r->err);
        cr_expect(strstr(r->err, "(cudaErrorNoDevice)") != NULL, "%s: the first call's error:\n%s", f->name, r->err);
        cr_expect_eq(orch.requests - before, f->requests, "%s: the orchestrator was asked %d times", f->name,
                     orch.requests - before);
    }
    cr_expect(!th_server_log_has(&srv, "has placement"), "a failed on-boarding reached the server; see %s", srv.log);
    free(r);
}

/* A placed session killed with its server resumes on the standby, which learns the key from RESUME
 * (the mirror does not carry it, as it does not carry the tenant). */
Test(onboard, a_resumed_session_keeps_its_placement_key_on_the_standby)
{
    const char *aextra[] = { "--crash-after-calls", "12", NULL };
    const char *vars[] = { "TANDEM_RESUME=exact", NULL };
    th_result *ref = calloc(1, sizeof(*ref)), *r = calloc(1, sizeof(*r));
    th_pair p;

    th_require_sim();
    reference(ref);
    fake_start(&orch);
    th_pair_start(&p, NULL, aextra);
    fake_places(&orch, "p-takeover-7", p.active.endpoint, "tcp");
    run_onboarded(orch.hostport, vars, r);
    cr_expect(th_server_log_has(&p.active, "crashing at call"), "the active did not die; see %s", p.active.log);
    cr_expect_eq(r->status, 0, "the session did not resume: %s", r->err);
    cr_expect_str_eq(r->out, ref->out);
    cr_expect(th_server_log_has(&p.active, "has placement p-takeover-7"), "see %s", p.active.log);
    cr_expect(th_server_log_has(&p.standby, "has placement p-takeover-7"), "the standby was not told the key; see %s",
              p.standby.log);
    /* Still the session's once the standby took over the mirrored state (tdm_session_take_over). */
    cr_expect(log_soon(&p.standby, ", placement p-takeover-7) closed"), "the resumed session lost its key; see %s",
              p.standby.log);
    th_pair_stop(&p);
    MHD_stop_daemon(orch.d);
    free(ref);
    free(r);
}

/* An untrusted guest's key: the server refuses one that could carry anything into its log. */
Test(onboard, the_server_refuses_a_malformed_key_and_logs_none_of_it, .init = up, .fini = down)
{
    static char bad[] = "key\nforged log line";
    tdm_hello_args a = { .proto_version = TDM_PROTO_VERSION, .client = "bad-key",
                         .placement = { sizeof(bad) - 1, bad } };
    tdm_hello_res res;
    tdm_transport *t = NULL;
    char err[256];

    cr_assert_eq(tdm_transport_open(srv.endpoint, &t, err, sizeof(err)), 0, "%s", err);
    memset(&res, 0, sizeof(res));
    cr_assert_eq(t->ops->call(t, TDM_HELLO, (xdrproc_t)xdr_tdm_hello_args, &a, (xdrproc_t)xdr_tdm_hello_res, &res),
                 TDM_T_OK);
    cr_expect_eq(res.err, cudaErrorInvalidValue, "a malformed key was accepted");
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&res);
    t->ops->close(t);
    cr_expect(th_server_log_has(&srv, "refused: its placement key (19 bytes) is not"), "see %s", srv.log);
    cr_expect(!th_server_log_has(&srv, "forged log line"), "the key reached the log");
}


/* The memory of a placement (APP_GPU_MEMORY, reserved by the orchestrator through the node
 * agent) is the session's quota: an allocation past it is cudaErrorMemoryAllocation, the server
 * says whose budget it was, the session goes on, and a neighbour session is not touched. */
Test(onboard, a_placements_memory_is_its_quota_and_a_neighbour_is_unaffected)
{
    char ctl[108], answer[256];
    const char *extra[] = { "--control", ctl, NULL };
    const char *small[] = { th_bin("mem-budget-check"), "6", "2", NULL };
    const char *vars[] = { "APP_GPU_MEMORY=8MB", NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_require_sim();   /* the sim's arena: 2 MiB blocks, whole */
    snprintf(ctl, sizeof(ctl), "/tmp/tandem-onboard-ctl-%d.sock", (int)getpid());
    fake_start(&orch);
    th_server_start(&srv, extra);
    int fd = th_control_connect(ctl);
    th_control_ask(fd, "{\"op\":\"reserve\",\"placement\":\"p-mem-small\",\"tenant\":\"alice\",\"sm\":8,"
                   "\"memory_mib\":8}", answer, sizeof(answer));
    cr_assert_str_eq(answer, "{\"ok\":true}");
    th_control_ask(fd, "{\"op\":\"reserve\",\"placement\":\"p-mem-big\",\"tenant\":\"alice\",\"sm\":8,"
                   "\"memory_mib\":64}", answer, sizeof(answer));
    cr_assert_str_eq(answer, "{\"ok\":true}");
    close(fd);

    /* A neighbour with a session of its own, holding memory, before and after. */
    tdm_transport *nb = th_guest_open(srv.endpoint, "neighbour");
    cr_assert_neq(th_raw_malloc(nb, 4 << 20), 0);

    fake_places(&orch, "p-mem-small", srv.endpoint, "tcp");
    run_program_onboarded(orch.hostport, vars, small, r);
    cr_expect_eq(r->status, 0, "%s", r->err);
    cr_expect(strstr(r->out, "malloc 3: cudaSuccess\nmalloc 4: cudaErrorMemoryAllocation\n"), "8 MiB hold four 2 MiB "
              "blocks, not five:\n%s", r->out);
    cr_expect(strstr(r->out, "after a free: cudaSuccess\n"), "the session did not go on:\n%s", r->out);
    cr_expect(strstr(r->out, "total 8 MiB\n"), "the session does not see its quota as its device:\n%s", r->out);
    cr_expect(strstr(r->err, "cudaMalloc 4 of 2 MiB: out of memory"), "%s", r->err);
    cr_expect(th_server_log_has(&srv, "cudaMalloc(2097152) exceeds its quota of 8388608 bytes (the memory of "
                                      "placement p-mem-small: APP_GPU_MEMORY)"), "see %s", srv.log);

    cr_assert_neq(th_raw_malloc(nb, 16 << 20), 0, "the neighbour was refused after the placed guest's refusal");
    nb->ops->close(nb);

    /* Another placement with more memory takes all six blocks. */
    fake_places(&orch, "p-mem-big", srv.endpoint, "tcp");
    run_program_onboarded(orch.hostport, NULL, small, r);
    cr_expect_eq(r->status, 0, "%s", r->err);
    cr_expect(strstr(r->out, "malloc 5: cudaSuccess\n") && !strstr(r->out, "cudaErrorMemoryAllocation"), "%s",
              r->out);
    cr_expect(strstr(r->out, "total 64 MiB\n"), "%s", r->out);
    th_server_stop(&srv);
    MHD_stop_daemon(orch.d);
    free(r);
}
