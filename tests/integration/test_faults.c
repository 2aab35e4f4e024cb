/* The fault triggers of tests/faults/ through the guest library against sim
 * servers, and the sim MPS domain (docs/faults.md, docs/sim-backend.md).
 * Sim backend only: on a GPU, tests/faults/run-faults-gpu.sh is the check. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "background.h"
#include "harness.h"

static void require_sim(void)
{
    if (!th_simulated())
        cr_skip_test("sim backend only (the GPU check is tests/faults/run-faults-gpu.sh)");
}

/* ---- one trigger alone ---- */

typedef struct expect {
    const char *trigger;
    int status;          /* its documented exit status (fault_common.h) */
    const char *error;   /* the error name it must print */
} expect;

static void run_trigger(const expect *e)
{
    th_server srv;
    th_result r;
    const char *argv[] = { th_fault_bin(e->trigger), NULL };
    const char *victim[] = { th_fault_bin("victim"), "20", "1024", NULL };

    require_sim();
    th_server_start(&srv, NULL);
    th_run_guest(srv.endpoint, argv, 30, &r);
    cr_expect_eq(r.status, e->status, "%s: exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s", e->trigger,
                 r.status, e->status, r.out, r.err);
    cr_expect(strstr(r.out, e->error) != NULL, "%s: expected %s in:\n%s", e->trigger, e->error, r.out);
    /* The server keeps serving new sessions after a fault. */
    th_run_guest(srv.endpoint, victim, 30, &r);
    cr_expect_eq(r.status, 0, "a new session after %s failed:\n%s\n%s", e->trigger, r.out, r.err);
    cr_expect_eq(th_server_stop(&srv), 0, "server did not stop cleanly; see %s", srv.log);
}

#define TRIGGER_TEST(name, st, err)                                                                     \
    Test(fault_triggers, name, .timeout = 120)                                                          \
    {                                                                                                   \
        const expect e = { #name, st, err };                                                            \
        run_trigger(&e);                                                                                \
    }

/* MMU faults.  The sim models the outcome of managed/VMM setups the guest
 * library cannot make (docs/faults.md); CE OOB is refused by Tandem's
 * pointer checks before any copy runs; PBDMA OOB needs the Driver API,
 * which Tandem does not remote.  CE AM's copy into read-only managed
 * memory is served without a fault (status 4), as natively on the H100:
 * until issue 14's second pass TCP had no managed memory and this
 * expected 3 (unreachable). */
TRIGGER_TEST(sm_oob, 10, "cudaErrorIllegalAddress")
TRIGGER_TEST(am_cpu, 11, "cudaErrorIllegalAddress")
TRIGGER_TEST(am_gpu, 12, "cudaErrorIllegalAddress")
TRIGGER_TEST(am_vmm, 13, "cudaErrorIllegalAddress")
TRIGGER_TEST(zombie, 14, "cudaErrorIllegalAddress")
TRIGGER_TEST(non_migratable, 15, "cudaErrorIllegalAddress")
TRIGGER_TEST(ce_oob, 5, "cudaErrorInvalidValue")
TRIGGER_TEST(ce_am, 4, "observed cudaSuccess")
TRIGGER_TEST(pbdma_oob, 3, "observed cudaSuccess")
/* SM exceptions, with the errors the H100 reports (docs/faults.md). */
TRIGGER_TEST(stack_overflow, 20, "cudaErrorIllegalAddress")
TRIGGER_TEST(illegal_instruction, 21, "cudaErrorIllegalInstruction")
TRIGGER_TEST(shared_local_oob, 22, "cudaErrorIllegalInstruction")
TRIGGER_TEST(misaligned, 23, "cudaErrorMisalignedAddress")
TRIGGER_TEST(invalid_address_space, 24, "cudaErrorInvalidAddressSpace")

/* ---- a victim next to a trigger ---- */

/* The victim, started through the guest library; returns once it ran its
 * first iteration. */
static void victim_start(th_bg *v, const char *endpoint, const char *iters)
{
    const char *argv[] = { th_fault_bin("victim"), iters, "1024", NULL };

    th_bg_start(v, endpoint, argv, NULL, "victim: running");
}

static void domain_name(char *buf, size_t cap)
{
    snprintf(buf, cap, "test-%d-%ld", (int)getpid(), (long)random());
}

/* Two servers in one domain: a fatal fault through one kills the victim's
 * session on the other with the faulting error, as MPS does; new sessions
 * are served afterwards. */
static void domain_kills_victim(const char *trigger, int trigger_status, const char *error)
{
    char domain[64], out[4096];
    th_server a, b;
    th_result r;
    th_bg v;

    require_sim();
    domain_name(domain, sizeof(domain));
    const char *args[] = { "--sim-mps-domain", domain, NULL };
    th_server_start(&a, args);
    th_server_start(&b, args);
    victim_start(&v, b.endpoint, "100000000"); /* runs until it dies */
    const char *argv[] = { th_fault_bin(trigger), NULL };
    th_run_guest(a.endpoint, argv, 30, &r);
    cr_expect_eq(r.status, trigger_status, "%s: status %d\n%s\n%s", trigger, r.status, r.out, r.err);
    int st = th_bg_wait(&v, 20, out, sizeof(out), NULL, 0);
    cr_expect_eq(st, 1, "the victim in the domain did not die (status %d):\n%s", st, out);
    cr_expect(strstr(out, "victim: died") && strstr(out, error), "expected the victim to die with %s:\n%s", error, out);
    cr_expect(th_server_log_has(&b, "a client of the MPS domain faulted"), "see %s", b.log);
    /* A new session on the victim's server starts on a fresh context. */
    const char *va[] = { th_example("vector_add"), NULL };
    th_run_guest(b.endpoint, va, 60, &r);
    cr_expect_eq(r.status, 0, "a new session after the domain fault failed:\n%s\n%s", r.out, r.err);
    cr_expect_eq(th_server_stop(&a), 0);
    cr_expect_eq(th_server_stop(&b), 0);
    cr_expect_neq(access("/dev/shm/tandem-sim-mps-test", F_OK), 0);
}

Test(sim_mps_domain, sm_oob_kills_victim_on_other_server, .timeout = 120)
{
    domain_kills_victim("sm_oob", 10, "cudaErrorIllegalAddress");
}

Test(sim_mps_domain, stack_overflow_kills_victim_on_other_server, .timeout = 120)
{
    domain_kills_victim("stack_overflow", 20, "cudaErrorIllegalAddress");
}

/* The victim's server outside the trigger's domain (first_args: the
 * trigger's server; NULL: no domain at all): the victim completes with the
 * checksum of a fault-free run. */
static void victim_survives(bool trigger_in_domain)
{
    char domain[64], out[4096], ref[16384];
    th_server a, b;
    th_result r;
    th_bg v;

    require_sim();
    domain_name(domain, sizeof(domain));
    const char *args[] = { "--sim-mps-domain", domain, NULL };
    th_server_start(&a, trigger_in_domain ? args : NULL);
    th_server_start(&b, NULL);
    const char *ref_argv[] = { th_fault_bin("victim"), "20000", "1024", NULL };
    th_run_guest(b.endpoint, ref_argv, 120, &r);
    cr_assert_eq(r.status, 0, "fault-free victim run failed:\n%s\n%s", r.out, r.err);
    const char *ref_line = strstr(r.out, "victim iterations=");
    cr_assert(ref_line, "%s", r.out);
    snprintf(ref, sizeof(ref), "%s", ref_line);

    victim_start(&v, b.endpoint, "20000");
    const char *argv[] = { th_fault_bin("sm_oob"), NULL };
    th_run_guest(a.endpoint, argv, 30, &r);
    cr_expect_eq(r.status, 10, "sm_oob: status %d\n%s\n%s", r.status, r.out, r.err);
    /* Otherwise the test proves nothing: the fault must land while the
     * victim runs. */
    cr_expect(th_bg_alive(&v), "the victim finished before the fault; give it more iterations");
    int st = th_bg_wait(&v, 120, out, sizeof(out), NULL, 0);
    cr_expect_eq(st, 0, "the victim outside the domain died (status %d):\n%s", st, out);
    const char *line = strstr(out, "victim iterations=");
    cr_expect(line && strcmp(line, ref) == 0, "checksum differs from the fault-free run:\n%s\nvs\n%s", out, ref);
    cr_expect_eq(th_server_stop(&a), 0);
    cr_expect_eq(th_server_stop(&b), 0);
}

Test(sim_mps_domain, victim_outside_domain_survives, .timeout = 240)
{
    victim_survives(true);
}

Test(sim_mps_domain, victim_without_domain_survives, .timeout = 240)
{
    victim_survives(false);
}
