#include "takeover_pair.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"

void th_pair_start(th_pair *p, const char *const *standby_extra, const char *const *active_extra)
{
    const char *sargs[16] = { "--standby-listen", p->sock }, *aargs[16] = { "--standby", p->sock };
    int n = 2;

    snprintf(p->sock, sizeof(p->sock), "/tmp/tandem-standby-%d-%ld.sock", (int)getpid(), (long)random());
    for (int i = 0; standby_extra && standby_extra[i] && n < 15; i++)
        sargs[n++] = standby_extra[i];
    sargs[n] = NULL;
    th_server_start(&p->standby, sargs);
    n = 2;
    for (int i = 0; active_extra && active_extra[i] && n < 15; i++)
        aargs[n++] = active_extra[i];
    aargs[n] = NULL;
    th_server_start(&p->active, aargs);
}

int th_pair_stop(th_pair *p)
{
    int st;

    th_server_stop(&p->active);
    st = th_server_stop(&p->standby);
    unlink(p->sock);
    return st;
}

void th_require_sim(void)
{
    if (!th_simulated())
        cr_skip_test("sim backend only (on a GPU: tests/gpu/run-takeover-gpu.sh)");
}

void th_reference_of(const char *example, char *out, size_t cap)
{
    th_result *r = calloc(1, sizeof(*r));
    const char *argv[] = { th_bin("example-reference"), example, NULL };

    cr_assert(r);
    th_run(argv, 60, r);
    cr_assert_eq(r->status, 0, "no host reference for %s: %s", example, r->err);
    snprintf(out, cap, "%s", r->out);
    free(r);
}

void th_fault_free_output(const char *const *argv, bool shm, char *out, size_t cap)
{
    th_result *r = calloc(1, sizeof(*r));
    th_server s;

    cr_assert(r);
    th_server_start(&s, NULL);
    th_run_guest(shm ? s.shm_endpoint : s.endpoint, argv, 120, r);
    th_server_stop(&s);
    cr_assert_eq(r->status, 0, "fault-free run of %s failed:\n%s", argv[0], r->err);
    snprintf(out, cap, "%s", r->out);
    free(r);
}

void th_pair_run_with_policy(th_pair *p, bool shm, const char *policy, const char *example,
                             const char *crash_at_call, th_result *r)
{
    const char *aextra[] = { "--crash-after-calls", crash_at_call, NULL };
    const char *argv[] = { "/usr/bin/env", NULL, th_example(example), NULL };
    char env[64];

    snprintf(env, sizeof(env), "TANDEM_RESUME=%s", policy);
    argv[1] = env;
    th_pair_start(p, NULL, aextra);
    th_run_guest(shm ? p->active.shm_endpoint : p->active.endpoint, argv, 120, r);
}

bool th_guessed_resume_refused(const char *endpoint)
{
    tdm_resume_args a = { TDM_PROTO_VERSION, (int)getpid(), 1, 0x1234, 0, 0, { 0, NULL }, { 0, NULL } };
    tdm_hello_res res;
    tdm_transport *t = NULL;
    char why[300];

    cr_assert_eq(tdm_transport_open(endpoint, &t, why, sizeof(why)), 0, "%s", why);
    memset(&res, 0, sizeof(res));
    int rc = t->ops->call(t, TDM_RESUME, (xdrproc_t)xdr_tdm_resume_args, &a, (xdrproc_t)xdr_tdm_hello_res, &res);
    bool refused = rc != 0 || res.err != 0;
    if (rc == 0)
        xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&res);
    t->ops->close(t);
    return refused;
}
