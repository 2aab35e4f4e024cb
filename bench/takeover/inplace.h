/* inplace: the takeover suite's program (docs/benchmarks.md, "The takeover
 * suite").  A loop of one in-place kernel and one cudaDeviceSynchronize per
 * iteration over one buffer, optionally killing a Tandem server part-way.
 *
 * The step rewrites every word from its old value and the iteration number,
 * so a step applied twice, half-applied or skipped changes the result: a
 * resume that is not exact shows in the checksum.  It is the step of
 * tests/faults/victim.cu, under the same name and signature, so the sim
 * backend runs it with that program's twin
 * (server/sim_kernels/fault_victim.c). */
#ifndef TANDEM_BENCH_INPLACE_H
#define TANDEM_BENCH_INPLACE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define INPLACE_BLOCK 256
#define INPLACE_MAX_MIB 4096   /* the kernel indexes words with an int */

/* The buffer's starting content. */
void inplace_init(uint32_t *x, size_t n);
/* One step on the host, for the reference. */
void inplace_host_step(uint32_t *x, size_t n, uint32_t iter);
/* FNV-1a-64 over the words (bench.h). */
uint64_t inplace_checksum(const uint32_t *x, size_t n);
/* Launches one step on the legacy default stream; the launch's error. */
cudaError_t inplace_launch(uint32_t *dx, int n, uint32_t iter);

#ifdef __cplusplus
}
#endif

#endif
