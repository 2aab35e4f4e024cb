/* Graph launches in flight and the footprint beside them
 * (server/graph_mem_flight.h), as tables. */
#include <criterion/criterion.h>
#include <string.h>

#include "graph_mem_flight.h"

enum { MAXN = 4, MIB = 1 << 20 };

#define RUN(stream, exec, mib) { stream, exec, (uint64_t)(mib) * MIB, true }
#define DONE(stream, exec, mib) { stream, exec, (uint64_t)(mib) * MIB, false }

/* What a launch of exec in stream finds beside it. */
static const struct {
    const char *what;
    size_t n;
    tdm_gmem_flight v[MAXN];
    uint64_t stream, exec;
    uint64_t want_mib;
} beside[] = {
    { "nothing in flight", 0, { { 0 } }, 1, 10, 0 },
    { "the same stream's launch is reused", 1, { RUN(1, 11, 64) }, 1, 10, 0 },
    { "another stream's launch in flight adds", 1, { RUN(2, 11, 64) }, 1, 10, 64 },
    { "another stream's finished launch is reused", 1, { DONE(2, 11, 64) }, 1, 10, 0 },
    { "a launch of the same exec is ordered before it", 1, { RUN(2, 10, 64) }, 1, 10, 0 },
    { "a slot of several execs counts for any", 1, { RUN(2, 0, 64) }, 1, 10, 64 },
    { "one stream's launches count once, the most", 3, { RUN(2, 11, 32), RUN(2, 12, 64), RUN(2, 13, 16) }, 1, 10, 64 },
    { "equal launches of one stream count once", 2, { RUN(2, 11, 64), RUN(2, 12, 64) }, 1, 10, 64 },
    { "the most of the stream is the most still running", 2, { DONE(2, 11, 128), RUN(2, 12, 64) }, 1, 10, 64 },
    { "streams add up", 4, { RUN(2, 11, 64), RUN(3, 12, 32), RUN(1, 13, 8), DONE(4, 14, 16) }, 1, 10, 96 },
    { "the same exec in one stream, another exec in another", 2, { RUN(2, 10, 64), RUN(3, 11, 32) }, 1, 10, 32 },
    { "no stream: everything running (a trim)", 3, { RUN(1, 11, 64), RUN(2, 12, 32), RUN(2, 13, 8) },
      TDM_GMEM_NO_STREAM, 0, 96 },
};

Test(graph_mem_flight, beside)
{
    for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
        uint64_t got = tdm_gmem_flight_beside(beside[i].v, beside[i].n, beside[i].stream, beside[i].exec);

        cr_expect_eq(got, beside[i].want_mib * MIB, "row %zu (%s): %llu MiB, want %llu", i, beside[i].what,
                     (unsigned long long)(got / MIB), (unsigned long long)beside[i].want_mib);
    }
}

/* A launch of exec in stream holding mib entered into a table of n slots. */
static const struct {
    const char *what;
    size_t n;
    tdm_gmem_flight v[MAXN];
    uint64_t stream, exec, mib;
    int want_slot;
    tdm_gmem_flight want[MAXN];
} enter[] = {
    { "an empty table: the first slot", 3, { { 0 } }, 1, 10, 64, 0, { RUN(1, 10, 64) } },
    { "a finished slot is taken again", 2, { DONE(2, 11, 64), RUN(3, 12, 64) }, 1, 10, 64, 0,
      { RUN(1, 10, 64), RUN(3, 12, 64) } },
    { "another stream's launch stays", 2, { RUN(2, 11, 64) }, 1, 10, 64, 1, { RUN(2, 11, 64), RUN(1, 10, 64) } },
    { "the stream's earlier launch holding no more is dropped", 2, { RUN(1, 11, 32), RUN(2, 12, 64) }, 1, 10, 64, 0,
      { RUN(1, 10, 64), RUN(2, 12, 64) } },
    { "the stream's earlier launch holding as much is dropped", 2, { RUN(2, 12, 64), RUN(1, 11, 64) }, 1, 10, 64, 1,
      { RUN(2, 12, 64), RUN(1, 10, 64) } },
    { "the stream's earlier launch holding more stays", 3, { RUN(1, 11, 128) }, 1, 10, 64, 1,
      { RUN(1, 11, 128), RUN(1, 10, 64) } },
    { "full: joins its stream's slot, of several execs now", 2, { RUN(2, 12, 64), RUN(1, 11, 128) }, 1, 10, 64, 1,
      { RUN(2, 12, 64), RUN(1, 0, 128) } },
    { "full: joins its stream's slot of the same exec", 2, { RUN(1, 10, 128), RUN(2, 12, 64) }, 1, 10, 64, 0,
      { RUN(1, 10, 128), RUN(2, 12, 64) } },
    { "full of other streams: not tracked", 2, { RUN(2, 11, 64), RUN(3, 12, 64) }, 1, 10, 64, -1,
      { RUN(2, 11, 64), RUN(3, 12, 64) } },
};

Test(graph_mem_flight, enter)
{
    for (size_t i = 0; i < sizeof(enter) / sizeof(enter[0]); i++) {
        tdm_gmem_flight v[MAXN];
        int slot;

        memcpy(v, enter[i].v, sizeof(v));
        slot = tdm_gmem_flight_enter(v, enter[i].n, enter[i].stream, enter[i].exec, enter[i].mib * MIB);
        cr_expect_eq(slot, enter[i].want_slot, "row %zu (%s): slot %d, want %d", i, enter[i].what, slot,
                     enter[i].want_slot);
        for (size_t j = 0; j < enter[i].n; j++) {
            const tdm_gmem_flight *g = &v[j], *w = &enter[i].want[j];

            cr_expect(g->running == w->running && (!w->running || (g->stream == w->stream && g->exec == w->exec &&
                                                                     g->bytes == w->bytes)),
                      "row %zu (%s), slot %zu: stream %llu exec %llu %llu MiB running %d, want stream %llu exec "
                      "%llu %llu MiB running %d", i, enter[i].what, j, (unsigned long long)g->stream,
                      (unsigned long long)g->exec, (unsigned long long)(g->bytes / MIB), g->running,
                      (unsigned long long)w->stream, (unsigned long long)w->exec,
                      (unsigned long long)(w->bytes / MIB), w->running);
        }
    }
}

/* graphMemoryFootprint's simultaneous streams: graph i in stream i, none
 * finished, each needs 64 MiB beside the others; once they have finished,
 * a launch in yet another stream reuses their memory. */
Test(graph_mem_flight, launches_in_several_streams_add_up_while_they_run)
{
    tdm_gmem_flight v[TDM_GMEM_FLIGHTS];

    memset(v, 0, sizeof(v));
    for (uint64_t i = 1; i < 8; i++) {
        uint64_t need = 64ull * MIB + tdm_gmem_flight_beside(v, TDM_GMEM_FLIGHTS, i, 100 + i);

        cr_expect_eq(need, i * 64 * MIB, "launch %llu needs %llu MiB", (unsigned long long)i,
                     (unsigned long long)(need / MIB));
        cr_expect_geq(tdm_gmem_flight_enter(v, TDM_GMEM_FLIGHTS, i, 100 + i, 64ull * MIB), 0);
    }
    for (size_t i = 0; i < TDM_GMEM_FLIGHTS; i++)
        v[i].running = false;   /* the streams synchronized: every event completed */
    cr_expect_eq(tdm_gmem_flight_beside(v, TDM_GMEM_FLIGHTS, 9, 109), 0);
}
