/* A server never serves from a lost device context (docs/health.md): a
 * session's kernel loses the context while another session works; the
 * culprit gets the native error, the log names it, the context is rebuilt
 * and later sessions work.  An error that fails only its call touches
 * nobody else. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "background.h"
#include "harness.h"

static th_server srv;

static void up(void)
{
    th_server_start(&srv, NULL);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

static char *read_log(void)
{
    FILE *f = fopen(srv.log, "r");
    char *buf = calloc(1, 1 << 20);
    size_t n;

    cr_assert(f && buf);
    n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* vector_add through Tandem prints what it prints natively. */
static void expect_vector_add_works(const char *endpoint)
{
    const char *ref_argv[] = { th_bin("example-reference"), "vector_add", NULL };
    const char *argv[] = { th_example("vector_add"), NULL };
    th_result *ref = calloc(1, sizeof(*ref)), *got = calloc(1, sizeof(*got));

    th_run(ref_argv, 60, ref);
    cr_assert_eq(ref->status, 0);
    th_run_guest(endpoint, argv, 60, got);
    cr_expect_eq(got->status, 0, "vector_add on %s exited %d:\n%s", endpoint, got->status, got->err);
    cr_expect_str_eq(got->out, ref->out);
    free(ref);
    free(got);
}

/* sm_oob writes 64 GiB past its allocation: an illegal address, which loses
 * the context.  Returns its exit status after checking what it saw. */
static void lose_context(const char *endpoint)
{
    const char *argv[] = { th_fault_bin("sm_oob"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(endpoint, argv, 60, r);
    cr_expect_eq(r->status, 10, "sm_oob exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect(strstr(r->out, "observed cudaErrorIllegalAddress (700)"), "%s", r->out);
    free(r);
}

Test(health, a_lost_context_is_rebuilt_for_the_sessions_after_it, .init = up, .fini = down)
{
    const char *victim[] = { th_fault_bin("victim"), "36000", "1024", NULL };
    char out[8192], err[8192], culprit_line[64];
    char *log;
    th_bg v;
    int st;

    /* Another session is working when the culprit's kernel faults. */
    th_bg_start(&v, srv.endpoint, victim, NULL, "victim: running");
    lose_context(srv.shm_endpoint);
    st = th_bg_wait(&v, 120, out, sizeof(out), err, sizeof(err));
    /* Without a standby its device state went with the shared context:
     * it gets the error rather than wrong results. */
    cr_expect_neq(st, 0, "the victim of a lost context completed:\n%s", out);
    cr_expect(strstr(out, "cudaErrorIllegalAddress") || strstr(err, "cudaErrorIllegalAddress"), "%s\n%s", out,
              err);
    /* Later sessions, on both transports, get a rebuilt context. */
    expect_vector_add_works(srv.endpoint);
    expect_vector_add_works(srv.shm_endpoint);

    log = read_log();
    cr_expect_eq(count(log, "the device context is lost"), 1, "%s", log);
    cr_expect_eq(count(log, "lost the device context: its work got cudaErrorIllegalAddress (cudaError 700)"), 1,
                 "the culprit is named once:\n%s", log);
    snprintf(culprit_line, sizeof(culprit_line), "(pid %d) lost the device context", (int)v.pid);
    cr_expect(!strstr(log, culprit_line), "the victim was named the culprit:\n%s", log);
    cr_expect_eq(count(log, "is rebuilt: serving new sessions"), 1, "%s", log);
    free(log);

    /* The rebuilt context can be lost and rebuilt again. */
    lose_context(srv.endpoint);
    expect_vector_add_works(srv.endpoint);
    log = read_log();
    cr_expect_eq(count(log, "is rebuilt: serving new sessions"), 2, "%s", log);
    free(log);
}

/* A culprit alone: it gets the native error, and the next session works. */
Test(health, the_culprit_gets_the_native_error_and_the_server_goes_on, .init = up, .fini = down)
{
    lose_context(srv.endpoint);
    expect_vector_add_works(srv.endpoint);
}

/* Errors that fail one call (a copy out of bounds refused with
 * cudaErrorInvalidValue) lose nothing: the victim completes with the
 * fault-free result and no context is rebuilt. */
Test(health, an_error_of_one_call_kills_nothing, .init = up, .fini = down)
{
    const char *victim[] = { th_fault_bin("victim"), "36000", "1024", NULL };
    const char *ce_oob[] = { th_fault_bin("ce_oob"), NULL };
    char out[8192], err[8192];
    th_result *ref = calloc(1, sizeof(*ref)), *r = calloc(1, sizeof(*r));
    char *log;
    th_bg v;

    th_run_guest(srv.endpoint, victim, 120, ref);
    cr_assert_eq(ref->status, 0, "%s%s", ref->out, ref->err);
    th_bg_start(&v, srv.endpoint, victim, NULL, "victim: running");
    th_run_guest(srv.shm_endpoint, ce_oob, 60, r);
    cr_expect_eq(r->status, 5, "ce_oob exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect(th_bg_alive(&v), "the victim finished before the error; give it more iterations");
    cr_expect_eq(th_bg_wait(&v, 120, out, sizeof(out), err, sizeof(err)), 0, "%s\n%s", out, err);
    cr_expect(strstr(out, "victim iterations=") && strcmp(strstr(out, "victim iterations="),
                                                          strstr(ref->out, "victim iterations=")) == 0,
              "%s\nvs\n%s", out, ref->out);
    log = read_log();
    cr_expect(!strstr(log, "the device context is lost"), "%s", log);
    free(log);
    free(ref);
    free(r);
}
