/* Takeover over the shm transport (docs/takeover.md, "Over shm") on the sim
 * backend.  The guest runs on shm:NAME of an active server mirrored to a
 * standby that also serves shm; the active dies by SIGKILL
 * (--crash-after-calls) at many points of each example, of copy-check
 * (multi-chunk pageable copies that reuse the data area's chunks, pinned
 * copies) and of reuse-check (host memory reused while its copies are still
 * journaled), and the guest resumes on the standby's shm endpoint with the
 * same region: the output must equal a run without the fault.  Policies
 * replay and none, and the bad cases, as over TCP. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "background.h"
#include "harness.h"
#include "shm_region.h"
#include "shm_socket.h"
#include "takeover_pair.h"
#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"

/* Runs argv on the active's shm endpoint once per crash point; each output
 * must be `ref`.  The session must have resumed at min_resumed points at
 * least, or the test proves nothing. */
static void crash_at(const char *what, const char *const *program, const char *ref, const char *const *points,
                     int min_resumed)
{
    th_result *r = calloc(1, sizeof(*r));
    char path[1024];
    const char *argv[] = { path, NULL };
    int resumed = 0;

    /* Paths from th_bin and th_example are overwritten by later calls. */
    snprintf(path, sizeof(path), "%s", program[0]);
    cr_assert(r);
    for (size_t i = 0; points[i]; i++) {
        const char *aextra[] = { "--crash-after-calls", points[i], NULL };
        th_pair p;

        th_pair_start(&p, NULL, aextra);
        th_run_guest(p.active.shm_endpoint, argv, 120, r);
        resumed += strstr(r->err, "resumed on shm:") != NULL;
        cr_expect_eq(r->status, 0, "%s, crash at call %s: status %d\n%s\n(logs %s, %s)", what, points[i], r->status,
                     r->err, p.active.log, p.standby.log);
        cr_expect_str_eq(r->out, ref, "%s, crash at call %s: output differs from the fault-free run", what,
                         points[i]);
        cr_expect(!th_server_log_has(&p.active, "no longer protected"),
                  "%s, crash at call %s: the session lost its protection (see %s)", what, points[i], p.active.log);
        /* The resumed session, its region and its pinned blocks are released. */
        cr_expect_eq(th_pair_stop(&p), 0, "%s, crash at call %s: the standby did not stop cleanly; see %s", what,
                     points[i], p.standby.log);
    }
    cr_expect_geq(resumed, min_resumed, "%s: the session resumed at only %d of the points", what, resumed);
    free(r);
}

static void example_everywhere(const char *example, const char *const *points, int min_resumed)
{
    const char *argv[] = { th_example(example), NULL };
    char ref[16384];

    th_require_sim();
    th_reference_of(example, ref, sizeof(ref));
    crash_at(example, argv, ref, points, min_resumed);
}

/* Calls each example makes over shm (sim): vector_add 19, increment_loop
 * about 1000, streams_events 44, matmul 23; the points cover each. */
Test(takeover_shm, vector_add_resumes_exactly)
{
    const char *points[] = { "2", "3", "4", "5", "6", "8", "10", "12", "14", "17", NULL };
    example_everywhere("vector_add", points, 8);
}

Test(takeover_shm, increment_loop_resumes_exactly)
{
    const char *points[] = { "2", "4", "7", "12", "60", "400", "900", "1003", NULL };
    example_everywhere("increment_loop", points, 6);
}

/* Pinned memory (cudaMallocHost in the region), three streams, events. */
Test(takeover_shm, streams_events_resumes_exactly)
{
    /* 3: the check of protection right after cudaMallocHost's pinning. */
    const char *points[] = { "2", "3", "4", "5", "8", "11", "14", "18", "22", "26", "30", "35", "40", NULL };
    example_everywhere("streams_events", points, 10);
}

Test(takeover_shm, matmul_resumes_exactly)
{
    const char *points[] = { "2", "4", "6", "8", "10", "12", "14", "16", "18", "21", NULL };
    example_everywhere("matmul", points, 8);
}

/* ---- pinned memory by its host pointer stays protected (issue 15) ---- */

/* A kernel given a pinned block by its host pointer (a latch it spins on,
 * an array it updates in place), cudaHostGetDevicePointer answering the
 * host pointer: over shm the server maps each such block again at the
 * program's own address (SHM_MANAGED_MAP).  The H100 run of stock PyTorch
 * found that this ended the session's protection ("TDM_SHM_MANAGED_MAP
 * made state no standby can have"), so an MPS fault killed the loop over
 * shm while it resumed over TCP.  Now the guest sends the map again to the
 * standby after its registrations, before the replay (MIRROR_REREGISTER):
 * the session stays protected to the end, and a crash at any of these
 * points resumes with the fault-free output.  Guards SHM_MANAGED_MAP's row
 * in proto/calls.def and tdm_host_reregister: with the row back at
 * MIRROR_UNPROTECT the active logs that protection ended and the crashes
 * after the first map fail the program; without the re-send the replayed
 * kernels fault on the standby.  The points end at 30 (of about 41
 * calls): from about 32 on, under load, the standby can resume at an
 * epoch before an in-place round that already ran (acknowledged points
 * closer than TANDEM_EPOCH_MS are let go, so where the epoch falls depends
 * on timing) and replays that kernel on the pinned array once more, a limit
 * of exactness (docs/takeover.md, "Limits"): points 32 and 34 failed so in
 * clean-clone CI runs on 2026-12-01, with this session's code and with the
 * code before it. */
Test(takeover_shm, pinned_memory_by_its_host_pointer_resumes_exactly)
{
    const char *points[] = { "2", "4", "6", "8", "10", "12", "14", "16", "18", "20", "22", "24", "26", "28",
                             "29", "30", NULL };
    const char *argv[] = { th_example("pinned_latch"), NULL };
    char ref[16384];

    th_require_sim();
    /* The points count the server's calls, and the guest's protection check (a call, at most
     * every 100 ms before a synchronous one) adds calls by time: on a loaded machine the
     * program is slower, makes more checks, and call 32 fell inside the in-place rounds (a
     * clean-clone CI run, 2026-12-01: round 0's kernel applied twice, arr[0]=4).  Checks only
     * at the first synchronous call make the numbering the program's own; the session is
     * protected from its HELLO on, which is what this test needs. */
    setenv("TANDEM_PROTECT_CHECK_MS", "1000000", 1);
    th_fault_free_output(argv, true, ref, sizeof(ref));
    cr_assert(strstr(ref, "device pointer is the host pointer: yes") != NULL, "%s", ref);
    crash_at("pinned_latch", argv, ref, points, 8);
    unsetenv("TANDEM_PROTECT_CHECK_MS");
}

/* copy-check's sizes up to 40 MiB go through the data area in up to ten
 * 4 MiB chunks, so a crash lands inside a copy whose chunks were refilled
 * (host to device) or are being waited for (device to host); pinned copies
 * are synchronous and asynchronous, their sources rewritten at once.  It
 * makes about 200 calls; the points from 100 on fall in the 19 and 40 MiB
 * copies. */
static void copy_check_at(const char *const *points, int min_resumed)
{
    const char *argv[] = { th_bin("copy-check"), NULL };
    char ref[16384];

    th_require_sim();
    th_fault_free_output(argv, true, ref, sizeof(ref));
    cr_assert(strstr(ref, "size=41943040") != NULL, "%s", ref);
    crash_at("copy-check", argv, ref, points, min_resumed);
}

Test(takeover_shm, copy_check_small_sizes)
{
    const char *points[] = { "2", "8", "16", "25", "35", "45", "55", "65", "75", "85", "95", NULL };
    copy_check_at(points, 9);
}

Test(takeover_shm, copy_check_multi_chunk_copies)
{
    const char *points[] = { "103", "109", "115", "121", "127", "133", "139", "145",
                             "151", "155", "159", "163", "169", "175", "181", "187", NULL };
    copy_check_at(points, 12);
}

/* Guards the takeover that starts in the protection check (the TDM_PROTECT a
 * session sends after an answer, at most every 100 ms): a crash there once
 * left the resumed session unable to pin memory (CI, copy-check crash at
 * call 95, cudaMallocHost failed).  With the check after every call, every
 * other call is a check, so these points fall on checks and on calls. */
Test(takeover_shm, takeover_from_the_protection_check)
{
    const char *points[] = { "40", "41", "60", "61", "62", "63", "64", "65", "66", "67",
                             "120", "121", "122", "123", "124", "125", NULL };

    setenv("TANDEM_PROTECT_CHECK_MS", "0", 1);
    copy_check_at(points, 14);
}

/* reuse-check (about 60 calls): every point, in two halves that run side
 * by side. */
static void reuse_check_from(int first, int last)
{
    const char *argv[] = { th_bin("reuse-check"), NULL };
    static char numbers[64][8];
    const char *points[64];
    char ref[16384];
    int n = 0;

    th_require_sim();
    th_fault_free_output(argv, true, ref, sizeof(ref));
    cr_assert(strstr(ref, "checksum=") != NULL, "%s", ref);
    for (int c = first; c <= last && n < 63; c++, n++) {
        snprintf(numbers[n], sizeof(numbers[n]), "%d", c);
        points[n] = numbers[n];
    }
    points[n] = NULL;
    crash_at("reuse-check", argv, ref, points, n - 2);
}

Test(takeover_shm, reused_host_memory_first_half) { reuse_check_from(2, 30); }
Test(takeover_shm, reused_host_memory_second_half) { reuse_check_from(31, 59); }

/* ---- policies ---- */

Test(takeover_shm, replay_policy_resumes_out_of_place_work)
{
    th_result *r = calloc(1, sizeof(*r));
    char ref[16384];
    th_pair p;

    th_require_sim();
    th_reference_of("vector_add", ref, sizeof(ref));
    th_pair_run_with_policy(&p, true, "replay", "vector_add", "12", r);
    cr_expect(th_server_log_has(&p.active, "crashing at call"));
    cr_expect_eq(r->status, 0, "%s", r->err);
    cr_expect_str_eq(r->out, ref);
    cr_expect(strstr(r->err, "policy replay") != NULL, "%s", r->err);
    th_pair_stop(&p);
    free(r);
}

Test(takeover_shm, none_policy_fails_clearly)
{
    th_result *r = calloc(1, sizeof(*r));
    th_pair p;

    th_require_sim();
    th_pair_run_with_policy(&p, true, "none", "increment_loop", "12", r);
    cr_expect(th_server_log_has(&p.active, "crashing at call"));
    cr_expect_neq(r->status, 0, "a session without a journal cannot survive its server");
    cr_expect(strstr(r->err, "lost the connection to the Tandem server") != NULL, "%s", r->err);
    th_pair_stop(&p);
    free(r);
}

/* ---- bad cases: a clear error, never a hang ---- */

static void expect_clean_failure(const th_result *r, const char *text)
{
    cr_expect_neq(r->status, 0, "the program cannot have succeeded");
    cr_expect_neq(r->status, 128 + 9, "killed by the time-out: a hang");
    cr_expect_neq(r->status, 128 + 11, "a segmentation fault: the region went away under the program");
    cr_expect(strstr(r->err, text) != NULL, "expected '%s' in:\n%s", text, r->err);
}

/* With pinned memory in the region: the program must get an error, not a
 * fault on an unmapped page. */
Test(takeover_shm, standby_already_dead)
{
    const char *aextra[] = { "--crash-after-calls", "20", NULL };
    const char *argv[] = { th_example("streams_events"), NULL };
    th_result *r = calloc(1, sizeof(*r));
    th_pair p;

    th_require_sim();
    th_pair_start(&p, NULL, aextra);
    th_server_stop(&p.standby);
    th_run_guest(p.active.shm_endpoint, argv, 60, r);
    expect_clean_failure(r, "lost");
    th_pair_stop(&p);
    free(r);
}

Test(takeover_shm, fault_during_takeover)
{
    const char *sextra[] = { "--crash-after-calls", "1", NULL };   /* dies on the RESUME itself */
    const char *aextra[] = { "--crash-after-calls", "20", NULL };
    const char *argv[] = { th_example("streams_events"), NULL };
    th_result *r = calloc(1, sizeof(*r));
    th_pair p;

    th_require_sim();
    th_pair_start(&p, sextra, aextra);
    th_run_guest(p.active.shm_endpoint, argv, 60, r);
    expect_clean_failure(r, "takeover failed");
    th_pair_stop(&p);
    free(r);
}

/* The standby takes the region but refuses the resume (here its mirror
 * diverged: a session of its own holds the addresses the active's session
 * got).  The program gets an error; it neither faults on its pinned memory
 * nor goes on in the fresh session of that connection. */
Test(takeover_shm, resume_refused_after_reattaching)
{
    const char *aextra[] = { "--crash-after-calls", "20", NULL };
    const char *holder[] = { th_fault_bin("victim"), "100000000", "1024", NULL };
    const char *argv[] = { th_example("streams_events"), NULL };
    th_result *r = calloc(1, sizeof(*r));
    th_pair p;
    th_bg h;

    th_require_sim();
    th_pair_start(&p, NULL, aextra);
    th_bg_start(&h, p.standby.shm_endpoint, holder, NULL, "victim: running");
    th_run_guest(p.active.shm_endpoint, argv, 60, r);
    expect_clean_failure(r, "takeover failed");
    cr_expect(th_server_log_has(&p.standby, "its mirror diverged"), "see %s", p.standby.log);
    th_bg_wait(&h, 0, NULL, 0, NULL, 0);
    th_pair_stop(&p);
    free(r);
}

Test(takeover_shm, wrong_token_refused)
{
    const char *argv[] = { th_example("vector_add"), NULL };
    th_result *r = calloc(1, sizeof(*r));
    th_pair p;

    th_require_sim();
    th_pair_start(&p, NULL, NULL);
    th_run_guest(p.active.shm_endpoint, argv, 60, r);
    cr_expect(th_guessed_resume_refused(p.standby.shm_endpoint), "a resume with a wrong token was accepted");
    cr_expect(th_server_log_has(&p.standby, "refused to resume session 1"), "see %s", p.standby.log);
    th_run_guest(p.standby.shm_endpoint, argv, 60, r);
    cr_expect_eq(r->status, 0, "the standby stopped serving after a bad resume:\n%s", r->err);
    th_pair_stop(&p);
    free(r);
}

/* The standby takes a resuming guest's region through the same checks as
 * any new one: a region with a bad header is refused, and the standby goes
 * on serving. */
Test(takeover_shm, standby_validates_the_region)
{
    const char *argv[] = { th_example("vector_add"), NULL };
    th_result *r = calloc(1, sizeof(*r));
    tdm_shm_region g;
    char err[300];
    th_pair p;
    int sock;

    th_require_sim();
    th_pair_start(&p, NULL, NULL);
    cr_assert_eq(tdm_shm_region_create(&g, 1 << 20, err, sizeof(err)), 0, "%s", err);
    ((tdm_shm_header *)g.base)->nslots = TDM_SHM_MAX_SLOTS + 1;
    sock = tdm_shm_connect(p.standby.shm_name, err, sizeof(err));
    cr_assert_geq(sock, 0, "%s", err);
    cr_expect_neq(tdm_shm_offer_region(sock, g.fd, g.g.size, err, sizeof(err)), 0, "the standby took a bad region");
    cr_expect(strstr(err, "slots") != NULL, "%s", err);
    close(sock);
    tdm_shm_region_release(&g);
    th_run_guest(p.standby.shm_endpoint, argv, 60, r);
    cr_expect_eq(r->status, 0, "%s", r->err);
    th_pair_stop(&p);
    free(r);
}

/* ---- a fault in the MPS domain, the victim on shm ---- */

Test(takeover_shm, victim_survives_an_sm_fault)
{
    const char *victim[] = { th_fault_bin("victim"), "12000", "1024", NULL };
    char domain[64], ref[4096], out[8192], err[8192];
    th_result *r = calloc(1, sizeof(*r));
    th_server trig;
    th_pair p;
    th_bg v;

    th_require_sim();
    snprintf(domain, sizeof(domain), "tkos-%d-%ld", (int)getpid(), (long)random());
    const char *dom[] = { "--sim-mps-domain", domain, NULL };
    th_pair_start(&p, NULL, dom);
    th_server_start(&trig, dom);
    /* Not on the standby: its own session would hold the addresses the
     * active hands out next, until it notices the guest gone. */
    th_run_guest(trig.shm_endpoint, victim, 120, r);
    cr_assert_eq(r->status, 0, "fault-free victim run failed:\n%s", r->err);
    snprintf(ref, sizeof(ref), "%s", strstr(r->out, "victim iterations="));

    th_bg_start(&v, p.active.shm_endpoint, victim, NULL, "victim: running");
    const char *targv[] = { th_fault_bin("sm_oob"), NULL };
    th_run_guest(trig.endpoint, targv, 30, r);
    cr_expect(r->status >= 10 && r->status <= 24, "the fault did not fire (status %d)", r->status);
    int st = th_bg_wait(&v, 120, out, sizeof(out), err, sizeof(err));
    cr_expect_eq(st, 0, "the victim died (status %d):\n%s\n%s", st, out, err);
    const char *line = strstr(out, "victim iterations=");
    cr_expect(line && strcmp(line, ref) == 0, "checksum differs from the fault-free run:\n%s\nvs\n%s", out, ref);
    cr_expect(th_server_log_has(&p.active, "the device context is lost"), "see %s", p.active.log);
    cr_expect(strstr(err, "resumed on shm:") != NULL, "no takeover reported:\n%s", err);
    th_server_stop(&trig);
    th_pair_stop(&p);
    free(r);
}
