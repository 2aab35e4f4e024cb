/* CUDA graphs through Tandem (docs/graphs.md): examples/graph_capture.cu
 * captured across two streams joined by events, replayed several times on
 * the server as one graph, over TCP and shm, against a host reference; the
 * capture errors a program can meet; and a session that makes a graph is
 * no longer protected by its standby while one without graphs stays so. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "takeover_pair.h"

static th_server srv;

static void up(void)
{
    th_server_start(&srv, NULL);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

/* What graph_capture computes, on the host: se_transform on both halves,
 * se_combine, FNV-1a over the bytes of the result. */
static uint64_t reference_checksum(void)
{
    enum { N = 1 << 16, HALF = N / 2 };
    uint64_t h = 1469598103934665603ull;

    for (uint32_t i = 0; i < HALF; i++) {
        uint32_t a = (i * 2654435761u) * 3u + (i + 1u);
        uint32_t b = ((HALF + i) * 2654435761u) * 5u + (i + 2u);
        uint32_t v = (a ^ (b >> 3)) + 7u * i;
        for (int k = 0; k < 4; k++) {
            h ^= (v >> (8 * k)) & 0xffu;
            h *= 1099511628211ull;
        }
    }
    return h;
}

static void expected_output(int launches, char *out, size_t cap)
{
    uint64_t sum = reference_checksum();
    size_t len = (size_t)snprintf(out, cap,
                                  "end capture of a stream not capturing: cudaErrorIllegalState\n"
                                  "begin capture on the legacy stream: cudaErrorStreamCaptureUnsupported\n"
                                  "before capture: none\norigin stream: active\nforked stream: active\n"
                                  "forked stream after the end: none\n");
    for (int r = 0; r < launches; r++)
        len += (size_t)snprintf(out + len, cap - len, "launch %d: checksum %016llx\n", r, (unsigned long long)sum);
    snprintf(out + len, cap - len,
             "synchronize a capturing stream: cudaErrorStreamCaptureUnsupported\n"
             "after the synchronize: invalidated\n"
             "end the invalidated capture: cudaErrorStreamCaptureInvalidated\n"
             "after its end: none\ngraph_capture: done\n");
}

static void expect_capture_replays(const char *endpoint)
{
    const char *argv[] = { th_example("graph_capture"), "4", NULL };
    th_result *r = calloc(1, sizeof(*r));
    char want[2048];

    cr_assert(r);
    expected_output(4, want, sizeof(want));
    th_run_guest(endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "graph_capture (%s) exited %d:\n%s%s", endpoint, r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want, "graph_capture (%s) printed\n%s\nexpected\n%s", endpoint, r->out, want);
    free(r);
}

Test(graphs, capture_across_two_streams_replays_identically, .init = up, .fini = down)
{
    expect_capture_replays(srv.endpoint);
}

Test(graphs_shm, capture_across_two_streams_replays_identically, .init = up, .fini = down)
{
    expect_capture_replays(srv.shm_endpoint);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the session did not go over shm; see %s", srv.log);
}

/* A session without graphs keeps its standby; the first capture ends
 * protection for good, and the active's log names the call that did it. */
Test(graphs, a_capture_ends_protection_and_the_log_says_so)
{
    const char *plain[] = { th_example("streams_events"), NULL };
    const char *graphs[] = { th_example("graph_capture"), "1", NULL };
    th_result *r = calloc(1, sizeof(*r));
    th_pair p;

    th_require_sim();
    cr_assert(r);
    th_pair_start(&p, NULL, NULL);
    th_run_guest(p.active.endpoint, plain, 120, r);
    cr_assert_eq(r->status, 0, "streams_events exited %d:\n%s", r->status, r->err);
    cr_expect(!th_server_log_has(&p.active, "no longer protected"),
              "a session without graphs lost its protection; see %s", p.active.log);
    th_run_guest(p.active.endpoint, graphs, 120, r);
    cr_assert_eq(r->status, 0, "graph_capture exited %d:\n%s", r->status, r->err);
    /* graph_capture's first graph call is a cudaStreamEndCapture (refused). */
    cr_expect(th_server_log_has(&p.active, "TDM_STREAM_END_CAPTURE made state no standby can have: the session "
                                           "is no longer protected"),
              "the log does not say which call ended protection; see %s", p.active.log);
    th_pair_stop(&p);
    free(r);
}
