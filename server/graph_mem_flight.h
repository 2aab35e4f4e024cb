/* Graph launches whose memory nodes may still be running on the device, and
 * what a new launch needs beside them (docs/graphs.md, "Graph memory").
 *
 * Natively, graphs that may run at the same time need separate physical
 * memory: a launch in one stream cannot reuse what a launch still running
 * in another stream holds, while launches in one stream run one after the
 * other and reuse each other's memory.  session_graph_mem.c keeps a table
 * of the session's launches in flight (one backend event a slot, recorded
 * after the launch) and marks a slot free once its event has completed;
 * these functions only read and rearrange the table, so they are pure and
 * tested as tables (tests/unit/test_graph_mem_flight.c). */
#ifndef TANDEM_SERVER_GRAPH_MEM_FLIGHT_H
#define TANDEM_SERVER_GRAPH_MEM_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Slots per session: enough for a launch in flight in each of 64 streams. */
enum { TDM_GMEM_FLIGHTS = 64 };

/* A stream no launch is in: tdm_gmem_flight_beside with it counts every
 * stream (what the launches in flight hold altogether). */
#define TDM_GMEM_NO_STREAM UINT64_MAX

typedef struct tdm_gmem_flight {
    uint64_t stream;   /* the launch's stream (one key for every name of the null stream) */
    uint64_t exec;     /* the launched exec; 0 once launches of several execs share the slot */
    uint64_t bytes;    /* graph memory it holds while it runs and gives back by its end */
    bool running;      /* false: a free slot (never used, finished, or dropped) */
} tdm_gmem_flight;

/* What the launches running in streams other than `stream` hold, which a
 * launch of exec (0: none) in `stream` cannot reuse: for each other stream
 * the most one of its launches holds (they run one after another), added
 * up.  Launches of exec itself are left out: the launches of one exec are
 * ordered, and what they hold is the exec's own memory. */
uint64_t tdm_gmem_flight_beside(const tdm_gmem_flight *v, size_t n, uint64_t stream, uint64_t exec);

/* Enters a launch of exec (not 0) in `stream` holding bytes (> 0).  Returns
 * the slot whose event the caller records on the stream now, or -1 when the
 * launch is not tracked.  Earlier launches of the stream that hold no more
 * are dropped: this one ends after them and holds as much.  With no slot
 * free it joins a slot of its own stream (which holds more and, recorded
 * again, now ends with it: an over-estimate); when no slot is of its
 * stream (as many other streams with launches in flight as slots) it is
 * not tracked, and later launches do not count it (an under-estimate). */
int tdm_gmem_flight_enter(tdm_gmem_flight *v, size_t n, uint64_t stream, uint64_t exec, uint64_t bytes);

#endif
