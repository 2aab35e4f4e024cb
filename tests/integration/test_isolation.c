/* A process per tenant (issue 16, `--isolate tenant`, server/front/isolate.h): the front routes
 * each connection to its tenant's process, so that a kernel of one tenant given another's address
 * reaches nothing of it, and one tenant's fault does not end another's sessions. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "background.h"
#include "harness.h"

#define ALICE "alice-token-0123456789abcdef"
#define BOB "bob-token-fedcba9876543210"

static th_server srv;
static char dir[64], tenants_path[128], addr_path[128], go_path[140];

static void write_tenants(void)
{
    FILE *f;

    snprintf(dir, sizeof(dir), "/tmp/tandem-isolate-XXXXXX");
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(tenants_path, sizeof(tenants_path), "%s/tenants.ini", dir);
    snprintf(addr_path, sizeof(addr_path), "%s/owner.addr", dir);
    snprintf(go_path, sizeof(go_path), "%s.go", addr_path);
    f = fopen(tenants_path, "w");
    cr_assert(f != NULL);
    fputs("[alice]\ntoken = " ALICE "\n\n[bob]\ntoken = " BOB "\n", f);
    fclose(f);
    cr_assert_eq(chmod(tenants_path, 0600), 0);
}

static void up(void)
{
    const char *args[] = { "--tenants", tenants_path, "--isolate", "tenant", NULL };

    write_tenants();
    th_server_start(&srv, args);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "the front did not stop cleanly; see %s", srv.log);
    cr_expect(!th_server_log_has(&srv, "did not stop within 15 s"), "a tenant's process had to be killed; see %s",
              srv.log);
    unlink(go_path);
    unlink(addr_path);
    unlink(tenants_path);
    rmdir(dir);
}

static void run_as(const char *token, const char *endpoint, const char *const *argv, th_result *r)
{
    setenv("TANDEM_TOKEN", token, 1);
    th_run_guest(endpoint, argv, 120, r);
    unsetenv("TANDEM_TOKEN");
}

/* The pid in the front's line "tenant NAME: process PID started", or 0. */
static pid_t process_of(const char *tenant)
{
    char pattern[96], line[512];
    const char *at;

    snprintf(pattern, sizeof(pattern), "tenant %s: process ", tenant);
    th_server_log_line(&srv, pattern, line, sizeof(line));
    at = strstr(line, pattern);
    return at ? (pid_t)atoi(at + strlen(pattern)) : 0;
}

Test(isolation, each_tenant_is_served_by_a_process_of_its_own_over_tcp_and_shm, .init = up, .fini = down)
{
    const char *argv[] = { th_example("vector_add"), NULL };
    th_result *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

    run_as(ALICE, srv.endpoint, argv, a);
    run_as(BOB, srv.shm_endpoint, argv, b);
    cr_expect_eq(a->status, 0, "alice over TCP: %s%s", a->out, a->err);
    cr_expect_eq(b->status, 0, "bob over shm: %s%s", b->out, b->err);
    cr_expect(strstr(a->out, "checksum=") && strcmp(a->out, b->out) == 0, "the two runs differ:\n%s\n%s", a->out,
              b->out);
    pid_t pa = process_of("alice"), pb = process_of("bob");
    cr_expect(pa > 0 && pb > 0 && pa != pb && pa != srv.pid && pb != srv.pid,
              "each tenant must have a process of its own (alice %d, bob %d, front %d); see %s", (int)pa, (int)pb,
              (int)srv.pid, srv.log);
    cr_expect(th_server_log_has(&srv, "tandem-server[alice]: session") &&
                  th_server_log_has(&srv, "tandem-server[bob]: session"),
              "each session must be served by its tenant's process; see %s", srv.log);
    free(a);
    free(b);
}

/* The owner (alice) keeps a buffer whose every word its own kernels made; bob, told its address,
 * reads it, launches a kernel that writes it, and (alloc) first allocates memory of its own,
 * which lands at that same logical address in its own process.  Alice's words must all be hers,
 * and her session must go on working whatever bob's kernel did to bob's process. */
static void intrude_on_owner(bool alloc)
{
    const char *owner[] = { th_fault_bin("tenant_probe"), "own", addr_path, "4096", NULL };
    const char *env[] = { "TANDEM_TOKEN=" ALICE, NULL };
    char addr[64] = "", out[4096], err[4096];
    th_result *r = calloc(1, sizeof(*r));
    th_bg b;
    FILE *f;

    th_bg_start(&b, srv.endpoint, owner, env, "own: ready");
    f = fopen(addr_path, "r");
    cr_assert(f != NULL && fgets(addr, sizeof(addr), f) != NULL, "the owner wrote no address");
    fclose(f);
    addr[strcspn(addr, "\n")] = '\0';
    const char *intruder[] = { th_fault_bin("tenant_probe"), "intrude", addr, "4096", alloc ? "alloc" : "none", NULL };
    run_as(BOB, srv.endpoint, intruder, r);
    cr_expect(strstr(r->out, "intrude: cudaMemcpy from") && !strstr(r->out, "cudaMemcpy from 0x0"),
              "the intruder did not run: %s%s", r->out, r->err);
    cr_expect(!strstr(r->out, "intrude: cudaMemcpy from") || !alloc || strstr(r->out, "own memory now") ||
                  strstr(r->out, "cudaMalloc of its own: cudaSuccess"),
              "the intruder could not allocate: %s", r->out);
    f = fopen(go_path, "w");
    cr_assert(f != NULL);
    fclose(f);
    int status = th_bg_wait(&b, 60, out, sizeof(out), err, sizeof(err));
    cr_expect_eq(status, 0, "the owner's memory or session was harmed by the other tenant's kernel:\n%s%s\n"
                            "intruder:\n%s%s\nsee %s", out, err, r->out, r->err, srv.log);
    cr_expect(strstr(out, "own: intact") != NULL, "the owner did not say intact: %s", out);
    free(r);
}

Test(isolation, a_kernel_given_another_tenants_address_reaches_nothing_of_it, .init = up, .fini = down)
{
    intrude_on_owner(false);
    /* The sim faults bob's kernel (nothing is mapped at that address in bob's process): only
     * bob's process loses its context. */
    cr_expect(th_server_log_has(&srv, "tandem-server[bob]"), "bob was not served by its own process; see %s", srv.log);
}

Test(isolation, a_tenant_allocating_the_same_logical_address_gets_memory_of_its_own, .init = up, .fini = down)
{
    intrude_on_owner(true);
}

Test(isolation, lanes_reach_the_process_of_their_session, .init = up, .fini = down)
{
    const char *argv[] = { th_example("vector_add"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    setenv("TANDEM_TCP_LANES", "3", 1);
    setenv("TANDEM_TCP_LANE_MIN", "65536", 1);
    run_as(ALICE, srv.endpoint, argv, r);
    unsetenv("TANDEM_TCP_LANES");
    unsetenv("TANDEM_TCP_LANE_MIN");
    cr_expect_eq(r->status, 0, "%s%s", r->out, r->err);
    cr_expect(th_server_log_has(&srv, "tandem-server[alice]: session") && th_server_log_has(&srv, ": lane 0 opened by"),
              "no lane joined alice's session in alice's process; see %s", srv.log);
    cr_expect(!th_server_log_has(&srv, "no tenant's process has that session"), "a lane was lost; see %s", srv.log);
    free(r);
}

Test(isolation, a_tenants_process_that_dies_is_started_again_and_the_others_go_on, .init = up, .fini = down)
{
    const char *argv[] = { th_example("vector_add"), NULL };
    const char *victim[] = { th_fault_bin("victim"), "3000", "1024", NULL };
    const char *env[] = { "TANDEM_TOKEN=" BOB, NULL };
    th_result *r = calloc(1, sizeof(*r));
    char out[4096], err[4096];
    th_bg b;

    run_as(ALICE, srv.endpoint, argv, r);
    cr_assert_eq(r->status, 0, "%s%s", r->out, r->err);
    th_bg_start(&b, srv.endpoint, victim, env, "victim: running");
    pid_t pa = process_of("alice");
    cr_assert(pa > 0, "no process for alice; see %s", srv.log);
    cr_assert_eq(kill(pa, SIGKILL), 0);
    for (int i = 0; i < 100 && !th_server_log_has(&srv, "was killed by signal 9"); i++)
        usleep(50 * 1000);
    cr_expect(th_server_log_has(&srv, "tenant alice: process") && th_server_log_has(&srv, "was killed by signal 9"),
              "the front did not notice alice's process end; see %s", srv.log);
    run_as(ALICE, srv.endpoint, argv, r);
    cr_expect_eq(r->status, 0, "alice's next session after its process died: %s%s", r->out, r->err);
    cr_expect_eq(th_server_log_count(&srv, "tenant alice: process"), 3, "started, killed, started again; see %s",
                 srv.log);
    cr_expect_eq(th_bg_wait(&b, 120, out, sizeof(out), err, sizeof(err)), 0,
                 "bob's session ended with alice's process: %s%s", out, err);
    free(r);
}

Test(isolation, the_front_refuses_a_token_that_is_no_tenants_without_starting_a_process, .init = up, .fini = down)
{
    const char *argv[] = { th_example("vector_add"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    run_as("mallory-token-000000000000", srv.endpoint, argv, r);
    cr_expect_neq(r->status, 0);
    cr_expect(strstr(r->err, "refused the credential: set TANDEM_TOKEN") != NULL, "not told why: %s", r->err);
    run_as("mallory-token-000000000000", srv.shm_endpoint, argv, r);
    cr_expect(strstr(r->err, "refused the credential: set TANDEM_TOKEN") != NULL, "not told why over shm: %s", r->err);
    cr_expect(th_server_log_has(&srv, "refused: its token is no tenant's (--tenants)"), "see %s", srv.log);
    cr_expect(!th_server_log_has(&srv, ": process "), "a process was started for no tenant; see %s", srv.log);
    cr_expect(!th_server_log_has(&srv, "mallory-token"), "the token was logged; see %s", srv.log);
    free(r);
}

/* The pid of the last "tenant NAME: process PID started" line of the front's log, or 0. */
static pid_t last_process_of(const char *tenant)
{
    char pattern[96], line[512];
    pid_t pid = 0;
    FILE *f = fopen(srv.log, "r");

    snprintf(pattern, sizeof(pattern), "tenant %s: process ", tenant);
    while (f && fgets(line, sizeof(line), f)) {
        const char *at = strstr(line, pattern);
        if (at && strstr(at, " started for its sessions"))
            pid = (pid_t)atoi(at + strlen(pattern));
    }
    if (f)
        fclose(f);
    return pid;
}

/* Guards issue 16's unclear message: a guest whose tenant's process could not be started was
 * told "did not answer the Tandem handshake".  Now the front answers its first call itself, and
 * the guest names the cause; another tenant is unaffected. */
Test(isolation, a_guest_whose_tenants_process_cannot_start_is_told_so, .init = up, .fini = down, .timeout = 240)
{
    const char *argv[] = { th_example("vector_add"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    /* Six starts a minute are allowed; each one dies here. */
    for (int i = 0; i < 6; i++) {
        run_as(ALICE, srv.endpoint, argv, r);
        cr_assert_eq(r->status, 0, "alice's run %d: %s%s", i, r->out, r->err);
        pid_t pa = last_process_of("alice");
        cr_assert(pa > 0, "no process for alice; see %s", srv.log);
        cr_assert_eq(kill(pa, SIGKILL), 0);
        for (int k = 0; k < 200 && th_server_log_count(&srv, "was killed by signal 9") < i + 1; k++)
            usleep(25 * 1000);
        cr_assert_eq(th_server_log_count(&srv, "was killed by signal 9"), i + 1, "see %s", srv.log);
    }
    run_as(ALICE, srv.endpoint, argv, r);
    cr_expect_neq(r->status, 0, "a seventh start within the minute was allowed: %s", r->out);
    cr_expect(strstr(r->err, "could not start the tenant's server process") != NULL, "not told why over tcp: %s",
              r->err);
    run_as(ALICE, srv.shm_endpoint, argv, r);
    cr_expect(strstr(r->err, "could not start the tenant's server process") != NULL, "not told why over shm: %s",
              r->err);
    cr_expect(th_server_log_has(&srv, "was started 6 times in"), "see %s", srv.log);
    run_as(BOB, srv.endpoint, argv, r);
    cr_expect_eq(r->status, 0, "bob was refused with alice: %s%s", r->out, r->err);
    free(r);
}

Test(isolation, isolate_without_tenants_or_with_a_standby_role_is_refused_at_start)
{
    const char *no_tenants[] = { th_bin("tandem-server"), "--backend", "sim", "--port", "0", "--isolate", "tenant", NULL };
    const char *bad_mode[] = { th_bin("tandem-server"), "--backend", "sim", "--port", "0", "--isolate", "planet", NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run(no_tenants, 20, r);
    cr_expect_eq(r->status, 2, "%s%s", r->out, r->err);
    cr_expect(strstr(r->err, "--isolate tenant needs --tenants FILE") != NULL, "%s", r->err);
    th_run(bad_mode, 20, r);
    cr_expect_eq(r->status, 2, "%s%s", r->out, r->err);
    cr_expect(strstr(r->err, "--isolate takes 'tenant'") != NULL, "%s", r->err);
    free(r);
}

/* As under MPS on the H100: a fatal fault of one client ends every client of the daemon (the
 * sim's MPS domain models it), so bob's fault ends alice's process too, and alice resumes on her
 * standby.  Each tenant has a standby of its own (--standby PATH means PATH.TENANT): one standby
 * for both resumed them in one context on the H100, where bob's replayed kernel reached alice's
 * memory again. */
Test(isolation, under_a_shared_mps_domain_each_tenant_resumes_on_a_standby_of_its_own)
{
    char sock[160], sock_a[180], sock_b[180], domain[64];
    th_server sb_a, sb_b;

    write_tenants();
    snprintf(sock, sizeof(sock), "%s/sb", dir);
    snprintf(sock_a, sizeof(sock_a), "%s.alice", sock);
    snprintf(sock_b, sizeof(sock_b), "%s.bob", sock);
    snprintf(domain, sizeof(domain), "iso-%d", (int)getpid());
    const char *args_a[] = { "--tenants", tenants_path, "--standby-listen", sock_a, NULL };
    const char *args_b[] = { "--tenants", tenants_path, "--standby-listen", sock_b, NULL };
    const char *args[] = { "--tenants", tenants_path, "--isolate", "tenant", "--sim-mps-domain", domain,
                           "--standby", sock, NULL };
    th_server_start(&sb_a, args_a);
    th_server_start(&sb_b, args_b);
    th_server_start(&srv, args);
    intrude_on_owner(false);
    cr_expect(th_server_log_has(&sb_a, "resumed session"), "alice did not resume on her standby; see %s", sb_a.log);
    cr_expect(!th_server_log_has(&sb_a, "resumed session 2199023255552"), "bob's session reached alice's standby; see %s",
              sb_a.log);
    down();
    th_server_stop(&sb_a);
    th_server_stop(&sb_b);
}
