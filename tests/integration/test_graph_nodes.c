/* Graphs whose copies read and write host memory (docs/graphs.md, "Host
 * memory in graphs"): examples/graph_nodes.cu over TCP (every host side
 * staged on the server) and shm (pinned memory reached in place, pageable
 * staged) — explicit memcpy nodes from and to pinned and pageable memory,
 * the bytes of launch time, a clone, node/root/edge counts, exec update to
 * another destination, a captured graph with device-to-host copies into
 * pinned and pageable memory — checked against the program's host
 * reference; and what the server refuses: nodes of another graph, unknown
 * node handles, memory the session does not own, uploads for no node. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"

static th_server srv;

static void up(void)
{
    th_server_start(&srv, NULL);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

/* What graph_nodes prints besides its checked results. */
static const char *const lines[] = {
    "pinned: explicit graph: 6 nodes, 2 roots, 5 edges\n",
    "pinned: device-to-host node: type 1\n",
    "pinned: clone: 6 nodes\n",
    "pinned: exec update: result 0\n",
    "pageable: explicit graph: 6 nodes, 2 roots, 5 edges\n",
    "pageable: clone: 6 nodes\n",
    "pageable: exec update: result 0\n",
    "captured graph: 5 nodes\n",
    "captured graph 2: 5 nodes, exec update result 0\n",
    "graph_nodes: done\n",
};

static void expect_graph_nodes(const char *endpoint)
{
    const char *argv[] = { th_example("graph_nodes"), NULL };
    th_result *r = calloc(1, sizeof(*r));
    int checked = 0;

    cr_assert(r);
    th_run_guest(endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "graph_nodes (%s) exited %d:\n%s%s", endpoint, r->status, r->out, r->err);
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        cr_expect(strstr(r->out, lines[i]), "graph_nodes (%s) did not print %s:\n%s", endpoint, lines[i], r->out);
    cr_expect(!strstr(r->out, "MISMATCH"), "graph_nodes (%s):\n%s", endpoint, r->out);
    for (const char *p = r->out; (p = strstr(p, " ok\n")); p++)
        checked++;
    /* 5 results of the explicit graph and 3 of the captured, each variant. */
    cr_expect_eq(checked, 16, "graph_nodes (%s) checked %d results:\n%s", endpoint, checked, r->out);
    free(r);
}

Test(graph_nodes, host_memory_in_graphs_over_tcp, .init = up, .fini = down)
{
    expect_graph_nodes(srv.endpoint);
}

Test(graph_nodes_shm, host_memory_in_graphs_over_shm, .init = up, .fini = down)
{
    expect_graph_nodes(srv.shm_endpoint);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the session did not go over shm; see %s", srv.log);
}
