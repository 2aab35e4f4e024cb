// A device function the examples whose kernels must run for a while share
// (callbacks_check.cu, graph_memory.cu; their sim twins sleep as long).
#ifndef TANDEM_EXAMPLES_SPIN_MS_CUH
#define TANDEM_EXAMPLES_SPIN_MS_CUH

// Spins for ms milliseconds of the GPU's global timer.
static __device__ void spin_ms(unsigned int ms)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < (unsigned long long)ms * 1000000ull);
}

#endif
