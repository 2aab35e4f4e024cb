/* The hostile-tenant suite (test_hostile.c, docs/security.md "Hostile-tenant
 * suite"): a victim session that checks every result against a host
 * reference and times each iteration, the sim kernels it and the attackers
 * launch over a raw transport, and the latency bound the suite asserts.
 *
 * The victim runs in the test's own thread and asserts; the helpers an
 * attacker thread uses (hv_load, hv_launch) only return errors, since a
 * criterion assertion must not fire off the test's thread. */
#ifndef TANDEM_TEST_HOSTILE_H
#define TANDEM_TEST_HOSTILE_H

#include <stddef.h>
#include <stdint.h>

#include "tandem_rpc.h"
#include "transport.h"

/* Kernels of the sim's registry (server/sim_kernels/), by their mangled names. */
#define HV_VECTOR_ADD "_Z10vector_addPKfS0_Pfi" /* (const float *a, const float *b, float *c, int n) */
#define HV_MATMUL "_Z12matmul_tiledPKfS0_Pfi"   /* (A, B, C, n): n^3 multiply-adds in one launch */
#define HV_INCREMENT "_Z9incrementPji"          /* (unsigned *x, int n): x[i] += 1 + i % 7 */

/* Where the server puts the first allocation (server.h TDM_DEFAULT_ARENA_BASE): what an attacker guesses. */
#define HV_ARENA_BASE 0x200000000000ull

typedef struct hv_kernel {
    tdm_handle func;
    unsigned nparams;
    unsigned offset[8], size[8];
} hv_kernel;

/* Loads a module of the named kernels and the module variable var (NULL:
 * none; its device address in *var_addr); the sim takes any fat binary and
 * finds kernels by name.  0, or the load's, a kernel's or the variable's
 * cudaError_t. */
int hv_load(tdm_transport *t, const char *const *names, size_t n, hv_kernel *out, const char *var,
            uint64_t *var_addr);
/* Posts a launch of k with values[i] (each k->size[i] bytes are read from
 * the 8-byte slot: pointers and ints alike, little-endian): 0 or -1 when the
 * transport failed. */
int hv_launch(tdm_transport *t, const hv_kernel *k, tdm_xdim3 grid, tdm_xdim3 block, tdm_handle stream,
              const uint64_t *values);
/* A synchronous call answered with an int: the answer, or -1 when the
 * transport failed (no assertion). */
int hv_call_int(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a);

/* ---- the victim ---- */

typedef struct hv_victim {
    tdm_transport *t;
    hv_kernel add;
    uint64_t a, b;               /* its inputs on the device */
    float *host;                 /* a, b and c on the host */
    unsigned iter;
    int wrong;                   /* iterations whose result was not the reference */
} hv_victim;

/* Opens the victim's session on endpoint, presenting token (NULL: none; asserts). */
void hv_victim_open(hv_victim *v, const char *endpoint, const char *token);
void hv_victim_close(hv_victim *v);
/* One iteration: cudaMalloc, two uploads and vector_add (c = 2a + b, its
 * scale a module variable set at open; one-way), the
 * result read back (synchronous), cudaFree; the result checked element by
 * element.  Its wall time in ms. */
double hv_victim_step(hv_victim *v);

typedef struct hv_latency {
    double p50, p99, max;
    int n;
} hv_latency;

/* At least iters steps, for at least min_ms; their latencies. */
hv_latency hv_victim_run(hv_victim *v, int iters, double min_ms);

/* The bound on the victim's p99 under attack: 10 times its p99 alone, and
 * never below HV_FLOOR_MS (docs/security.md says why). */
#define HV_FLOOR_MS 250.0
double hv_bound_ms(hv_latency alone);

#endif
