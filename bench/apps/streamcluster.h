/* streamcluster: online facility location in the style of Rodinia's
 * streamcluster.  n points with SC_DIMS integer coordinates; for each
 * candidate point (--iters of them) the device computes every point's
 * saving if the candidate were opened as a centre (squared distances, exact
 * integers),
 * and the host reads back the per-block savings and the per-point switch
 * flags to decide whether opening it pays for the facility cost; if so the
 * device reassigns the points that gain.  Each iteration moves the
 * candidate to the device and n bytes of flags back: the host <-> device
 * traffic of the original. */
#ifndef TANDEM_BENCH_STREAMCLUSTER_H
#define TANDEM_BENCH_STREAMCLUSTER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SC_DIMS 16
#define SC_ITERS 100              /* default --iters: candidates */
#define SC_THREADS 256
#define SC_COORD_MAX 1023
#define SC_MAX_N (1 << 26)

typedef struct sc_state {
    int n, iters;
    int32_t *pts;          /* SC_DIMS x n: coordinate d of point i at d * n + i */
    int32_t *cand;         /* iters candidate point indices */
    uint64_t facility;     /* what opening a centre costs */
    /* results */
    uint32_t *cost;        /* squared distance of each point to its centre */
    int32_t *assign;       /* index of the point that is its centre */
    int opened;            /* centres opened, the first one included */
    uint64_t switched;     /* points reassigned, summed over the openings */
} sc_state;

int sc_setup(long size, int iters, void **state, char *err, size_t errlen);
int sc_run_host(void *state);
void sc_summarize(void *state, uint64_t *checksum, char *summary, size_t len);
void sc_teardown(void *state);
/* The candidate's coordinates, as the device path sends them. */
void sc_coords(const sc_state *s, int idx, int32_t out[SC_DIMS]);

#ifdef __cplusplus
}
#endif

#endif
