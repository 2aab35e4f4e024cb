/* Tenants and credentials (issue 16, finding 6): a server started with --tenants serves only
 * guests that present a tenant's token, each within its tenant's bounds; a guest refused is
 * told why; a bad tenants file stops the start; without one the server says it is open. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest_calls.h"
#include "harness.h"
#include "tandem_rpc.h"
#include "takeover_pair.h"
#include "transport.h"

#define ALICE "alice-token-0123456789abcdef"
#define BOB "bob-token-fedcba9876543210"
#define CAROL "carol-token-00112233445566"

static th_server srv;
static char dir[64], tenants_path[128], token_path[128];

/* Writes text to path with mode; the test fails if it cannot. */
static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    cr_assert(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, mode), 0);
}

static void make_dir(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tandem-tenants-XXXXXX");
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(tenants_path, sizeof(tenants_path), "%s/tenants.ini", dir);
    snprintf(token_path, sizeof(token_path), "%s/bob.token", dir);
}

/* alice (2 streams), bob (3 streams, token in a file), carol (2 sessions at most). */
static void write_tenants(void)
{
    char text[1024];

    make_dir();
    write_file(token_path, BOB "\n", 0600);
    snprintf(text, sizeof(text),
             "; three tenants with bounds of their own\n"
             "[alice]\ntoken = " ALICE "\nsession_streams = 2\n\n"
             "[bob]\ntoken_file = %s\nsession_streams = 3\n\n"
             "[carol]\ntoken = " CAROL "\nmax_sessions = 2\n",
             token_path);
    write_file(tenants_path, text, 0600);
}

static void up(void)
{
    const char *args[] = { "--tenants", tenants_path, NULL };

    write_tenants();
    th_server_start(&srv, args);
}

static void remove_tenants(void)
{
    unlink(token_path);
    unlink(tenants_path);
    rmdir(dir);
}

static void down(void)
{
    th_server_stop(&srv);
    remove_tenants();
}

static void run_vector_add(const char *endpoint, th_result *r)
{
    const char *argv[] = { th_example("vector_add"), NULL };

    th_run_guest(endpoint, argv, 60, r);
}

static tdm_handle_res make_stream(tdm_transport *t)
{
    tdm_stream_create_args sc = { 0, 0 };
    return th_call_handle(t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc);
}

Test(tenants, a_guest_without_a_token_is_refused_and_told_to_set_one, .init = up, .fini = down)
{
    th_result *r = calloc(1, sizeof(*r));

    unsetenv("TANDEM_TOKEN");
    unsetenv("TANDEM_TOKEN_FILE");
    run_vector_add(srv.endpoint, r);
    cr_expect_neq(r->status, 0, "a guest without a token ran");
    cr_expect(strstr(r->err, "refused the credential (none was given): set TANDEM_TOKEN") != NULL,
              "the guest was not told why: %s", r->err);
    cr_expect(th_server_log_has(&srv, "refused: it presented no token (--tenants)"), "no line; see %s", srv.log);
    free(r);
}

Test(tenants, a_wrong_token_is_refused_and_never_logged, .init = up, .fini = down)
{
    th_result *r = calloc(1, sizeof(*r));
    const char *wrong = "alice-token-0123456789abcdeX";  /* alice's, but for its last byte */

    setenv("TANDEM_TOKEN", wrong, 1);
    run_vector_add(srv.endpoint, r);
    cr_expect_neq(r->status, 0, "a guest with a wrong token ran");
    cr_expect(strstr(r->err, "refused the credential: set TANDEM_TOKEN") != NULL, "the guest was not told why: %s",
              r->err);
    cr_expect(th_server_log_has(&srv, "refused: its token is no tenant's (--tenants)"), "no line; see %s", srv.log);
    cr_expect(!th_server_log_has(&srv, wrong), "the server logged the token");
    cr_expect(strstr(r->err, wrong) == NULL, "the guest logged the token");
    free(r);
}

Test(tenants, the_right_token_runs_a_program_as_natively, .init = up, .fini = down)
{
    const char *ref_argv[] = { th_bin("example-reference"), "vector_add", NULL };
    th_result *ref = calloc(1, sizeof(*ref)), *r = calloc(1, sizeof(*r));

    th_run(ref_argv, 60, ref);
    cr_assert_eq(ref->status, 0, "example-reference failed: %s", ref->err);
    setenv("TANDEM_TOKEN", ALICE, 1);
    run_vector_add(srv.endpoint, r);
    cr_expect_eq(r->status, 0, "alice's guest failed: %s", r->err);
    cr_expect_str_eq(r->out, ref->out);
    cr_expect(th_server_log_has(&srv, "is tenant alice"), "the session was not alice's; see %s", srv.log);
    cr_expect(!th_server_log_has(&srv, ALICE), "the server logged the token");
    /* Over shm, with the token in a file: the other transport and the other way to give it. */
    unsetenv("TANDEM_TOKEN");
    setenv("TANDEM_TOKEN_FILE", token_path, 1);
    run_vector_add(srv.shm_endpoint, r);
    cr_expect_eq(r->status, 0, "bob's shm guest failed: %s", r->err);
    cr_expect_str_eq(r->out, ref->out);
    cr_expect(th_server_log_has(&srv, "is tenant bob"), "the session was not bob's; see %s", srv.log);
    free(ref);
    free(r);
}

Test(tenants, each_tenant_is_bounded_by_its_own_stream_limit, .init = up, .fini = down)
{
    tdm_transport *a = NULL, *b = NULL;

    cr_assert_eq(th_guest_hello(srv.endpoint, "alice", ALICE, &a), 0);
    cr_assert_eq(th_guest_hello(srv.shm_endpoint, "bob", BOB, &b), 0);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(make_stream(a).err, 0, "alice's stream %d refused", i);
    cr_expect_eq(make_stream(a).err, cudaErrorMemoryAllocation, "alice made a third stream (her limit is 2)");
    for (int i = 0; i < 3; i++)
        cr_assert_eq(make_stream(b).err, 0, "bob's stream %d refused (his limit is 3)", i);
    cr_expect_eq(make_stream(b).err, cudaErrorMemoryAllocation, "bob made a fourth stream");
    cr_expect(th_server_log_has(&srv, "the session of tenant alice holds 2 streams (session_streams of tenant alice)"),
              "no line naming alice's limit; see %s", srv.log);
    cr_expect(th_server_log_has(&srv, "the session of tenant bob holds 3 streams (session_streams of tenant bob)"),
              "no line naming bob's limit; see %s", srv.log);
    a->ops->close(a);
    b->ops->close(b);
}

Test(tenants, max_sessions_bounds_the_sessions_of_one_tenant, .init = up, .fini = down)
{
    tdm_transport *c1 = NULL, *c2 = NULL, *c3 = NULL, *a = NULL;
    th_result *r = calloc(1, sizeof(*r));

    cr_assert_eq(th_guest_hello(srv.endpoint, "carol-1", CAROL, &c1), 0);
    cr_assert_eq(th_guest_hello(srv.shm_endpoint, "carol-2", CAROL, &c2), 0);
    cr_expect_eq(th_guest_hello(srv.endpoint, "carol-3", CAROL, &c3), cudaErrorDevicesUnavailable,
                 "carol's third session was admitted (max_sessions 2)");
    cr_expect(th_server_log_has(&srv, "tenant carol holds 2 sessions (max_sessions of tenant carol)"),
              "no line naming carol's limit; see %s", srv.log);
    /* Her limit is hers: another tenant still gets in. */
    cr_expect_eq(th_guest_hello(srv.endpoint, "alice", ALICE, &a), 0, "alice was refused for carol's limit");
    setenv("TANDEM_TOKEN", CAROL, 1);
    run_vector_add(srv.endpoint, r);
    cr_expect_neq(r->status, 0);
    cr_expect(strstr(r->err, "the tenant has as many sessions open as it may") != NULL,
              "the guest was not told of the limit: %s", r->err);
    /* A session that ends makes room; the server notices the close shortly after. */
    c1->ops->close(c1);
    int rc = -1;
    for (int i = 0; i < 100 && rc != 0; i++) {
        usleep(20000);
        rc = th_guest_hello(srv.endpoint, "carol-3", CAROL, &c3);
    }
    cr_expect_eq(rc, 0, "carol's session was still counted after it closed");
    if (c3)
        c3->ops->close(c3);
    c2->ops->close(c2);
    if (a)
        a->ops->close(a);
    free(r);
}

Test(tenants, a_call_before_the_credential_ends_the_connection, .init = up, .fini = down)
{
    tdm_transport *t = NULL;
    uint64_t size = 1 << 20;
    tdm_malloc_res m;
    char err[256];

    cr_assert_eq(tdm_transport_open(srv.endpoint, &t, err, sizeof(err)), 0, "%s", err);
    memset(&m, 0, sizeof(m));
    cr_expect_neq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_tdm_u64, &size, (xdrproc_t)xdr_tdm_malloc_res, &m),
                  TDM_T_OK, "a session without a credential was served");
    t->ops->close(t);
    cr_expect(th_server_log_has(&srv, "refused: the session has not presented its credential"),
              "no line; see %s", srv.log);
}

/* A session resumed on a standby presents its tenant's token again: the standby, given the same
 * file, admits it as that tenant (the mirror does not say whose the session is). */
Test(tenants, a_resumed_session_is_its_tenants_on_the_standby, .init = write_tenants, .fini = remove_tenants)
{
    const char *ref_argv[] = { th_bin("example-reference"), "vector_add", NULL };
    const char *sextra[] = { "--tenants", tenants_path, NULL };
    const char *aextra[] = { "--tenants", tenants_path, "--crash-after-calls", "12", NULL };
    const char *argv[] = { "/usr/bin/env", "TANDEM_RESUME=exact", th_example("vector_add"), NULL };
    th_result *ref = calloc(1, sizeof(*ref)), *r = calloc(1, sizeof(*r));
    th_pair p;

    th_require_sim();
    th_run(ref_argv, 60, ref);
    cr_assert_eq(ref->status, 0, "example-reference failed: %s", ref->err);
    th_pair_start(&p, sextra, aextra);
    setenv("TANDEM_TOKEN", ALICE, 1);
    th_run_guest(p.active.endpoint, argv, 120, r);
    cr_expect(th_server_log_has(&p.active, "crashing at call"), "the active did not die");
    cr_expect_eq(r->status, 0, "the session did not resume: %s", r->err);
    cr_expect_str_eq(r->out, ref->out);
    cr_expect(th_server_log_has(&p.standby, "is tenant alice"), "the standby did not admit alice; see %s",
              p.standby.log);
    th_pair_stop(&p);
    free(ref);
    free(r);
}

/* Runs the server with --tenants holding text (mode 0600 unless told), expecting it to refuse
 * to start with a line containing `says`. */
static void expect_start_refused(const char *text, mode_t mode, const char *says)
{
    th_result *r = calloc(1, sizeof(*r));
    const char *argv[] = { th_bin("tandem-server"), "--backend", "sim", "--port", "0", "--tenants", tenants_path,
                           NULL };

    write_file(tenants_path, text, mode);
    th_run(argv, 20, r);
    cr_expect_eq(r->status, 2, "the server started with a bad tenants file (%s)", says);
    cr_expect(strstr(r->err, says) != NULL, "the refusal did not say '%s': %s", says, r->err);
    free(r);
}

Test(tenants, a_bad_tenants_file_stops_the_start_and_names_the_line, .init = make_dir)
{
    expect_start_refused("[alice]\ntoken = " ALICE "\nsession_streams = many\n", 0600,
                         "line 3: tenant [alice]: session_streams 'many' is not a count");
    expect_start_refused("[alice]\ntoken = " ALICE "\ncolour = blue\n", 0600, "line 3: unknown key 'colour'");
    expect_start_refused("[alice]\ntoken = " ALICE "\nthis is not ini\n", 0600, "line 3:");
    expect_start_refused("[alice]\ntoken = short\n", 0600, "line 2: the token of tenant alice has 5 characters");
    expect_start_refused("[alice]\ntoken = " ALICE "\n", 0644, "group and others must have no access");
    expect_start_refused("[alice]\ntoken = " ALICE "\n[bob]\ntoken = " ALICE "\n", 0600,
                         "tenants [alice] and [bob] have the same token");
    unlink(tenants_path);
    rmdir(dir);
}

Test(tenants, without_a_tenants_file_the_server_says_it_is_open)
{
    th_server_start(&srv, NULL);
    cr_expect(th_server_log_has(&srv, "no --tenants: any guest that can reach tcp://"), "no line; see %s", srv.log);
    th_server_stop(&srv);
}
