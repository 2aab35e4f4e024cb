/* The runtime's everyday calls on the simulated device
 * (docs/runtime-api.md).  The occupancy calculator works as the driver's
 * does, from the kernel's attributes (sim_func_get_attributes) and the
 * device's limits (sim_device_info): a block's warps, registers and shared
 * memory are rounded up to the hardware's allocation units, and the SM holds
 * as many blocks as the scarcest of the four resources allows. */
#include <stdio.h>

#include <driver_types.h>

#include "sim_internal.h"

#define REG_ALLOC_UNIT 256u    /* registers are allocated per warp in units of 256 */
#define SMEM_ALLOC_UNIT 128u   /* shared memory per block, rounded up to 128 bytes */

typedef struct sim_occupancy_limits {
    int warp_size, max_threads_per_block, max_warps_per_sm, max_blocks_per_sm;
    int regs_per_sm, regs_per_thread;
    uint64_t smem_per_sm, smem_reserved_per_block, static_smem, max_dyn_smem;
} sim_occupancy_limits;

static int limits_of(tdm_backend *b, tdm_bfunc *f, sim_occupancy_limits *l)
{
    tdm_device_info dev;
    tdm_func_attrs fa;
    int err = sim_device_info(b, &dev);

    if (!err)
        err = sim_func_get_attributes(b, f, &fa);
    if (err)
        return err;
    l->warp_size = dev.attrs[cudaDevAttrWarpSize];
    l->max_threads_per_block = fa.max_threads_per_block;
    l->max_warps_per_sm = dev.attrs[cudaDevAttrMaxThreadsPerMultiProcessor] / l->warp_size;
    l->max_blocks_per_sm = dev.attrs[cudaDevAttrMaxBlocksPerMultiprocessor];
    l->regs_per_sm = dev.attrs[cudaDevAttrMaxRegistersPerMultiprocessor];
    l->regs_per_thread = fa.num_regs;
    l->smem_per_sm = (uint64_t)dev.attrs[cudaDevAttrMaxSharedMemoryPerMultiprocessor];
    l->smem_reserved_per_block = (uint64_t)dev.attrs[cudaDevAttrReservedSharedMemoryPerBlock];
    l->static_smem = (uint64_t)fa.shared_size_bytes;
    l->max_dyn_smem = (uint64_t)fa.max_dynamic_shared_size_bytes;
    return 0;
}

static uint64_t round_up(uint64_t v, uint64_t unit)
{
    return (v + unit - 1) / unit * unit;
}

/* Blocks of block_size threads per SM as warps, registers and the block
 * limit allow (shared memory aside). */
static int blocks_by_threads_and_regs(const sim_occupancy_limits *l, int block_size)
{
    int warps = (block_size + l->warp_size - 1) / l->warp_size;
    int regs_per_warp = (int)round_up((uint64_t)l->regs_per_thread * (uint64_t)l->warp_size, REG_ALLOC_UNIT);
    int by_warps = l->max_warps_per_sm / warps;
    int by_regs = regs_per_warp ? l->regs_per_sm / (regs_per_warp * warps) : l->max_blocks_per_sm;
    int n = l->max_blocks_per_sm;

    if (by_warps < n)
        n = by_warps;
    if (by_regs < n)
        n = by_regs;
    return n;
}

int sim_occupancy_max_blocks(tdm_backend *b, tdm_bfunc *f, int block_size, size_t dyn_smem, unsigned flags,
                             int *blocks)
{
    sim_occupancy_limits l;
    uint64_t per_block;
    int n, err;

    (void)flags; /* the caching override changes no limit the sim models */
    err = limits_of(b, f, &l);
    if (err)
        return err;
    *blocks = 0;
    if (block_size > l.max_threads_per_block || dyn_smem > l.max_dyn_smem)
        return 0;
    n = blocks_by_threads_and_regs(&l, block_size);
    per_block = round_up(l.static_smem + dyn_smem + l.smem_reserved_per_block, SMEM_ALLOC_UNIT);
    if ((uint64_t)n > l.smem_per_sm / per_block)
        n = (int)(l.smem_per_sm / per_block);
    *blocks = n;
    return 0;
}

int sim_occupancy_dyn_smem(tdm_backend *b, tdm_bfunc *f, int num_blocks, int block_size, size_t *bytes)
{
    sim_occupancy_limits l;
    uint64_t per_block, fixed;
    int err = limits_of(b, f, &l);

    if (err)
        return err;
    *bytes = 0;
    if (block_size > l.max_threads_per_block || num_blocks > blocks_by_threads_and_regs(&l, block_size))
        return 0;
    per_block = l.smem_per_sm / (uint64_t)num_blocks / SMEM_ALLOC_UNIT * SMEM_ALLOC_UNIT;
    fixed = l.static_smem + l.smem_reserved_per_block;
    if (per_block <= fixed)
        return 0;
    *bytes = per_block - fixed < l.max_dyn_smem ? per_block - fixed : l.max_dyn_smem;
    return 0;
}

/* The H100's range.  The sim's streams are all served alike: a priority
 * changes what the stream reports, not its scheduling. */
int sim_stream_priority_range(tdm_backend *b, int *least, int *greatest)
{
    (void)b;
    *least = 0;
    *greatest = -5;
    return 0;
}

/* The H100's defaults, as cuCtxGetLimit reports them on a fresh context
 * (cudaLimitPersistingL2CacheSize stays 0: the sim has no set-aside). */
static const uint64_t limit_default[SIM_LIMIT_COUNT] = {
    [cudaLimitStackSize] = 1024,
    [cudaLimitPrintfFifoSize] = 1 << 20,
    [cudaLimitMallocHeapSize] = 8 << 20,
    [cudaLimitDevRuntimeSyncDepth] = 2,
    [cudaLimitDevRuntimePendingLaunchCount] = 2048,
    [cudaLimitMaxL2FetchGranularity] = 64,
    [cudaLimitPersistingL2CacheSize] = 0,
};

int sim_limit_get(tdm_backend *b, int limit, uint64_t *value)
{
    if (limit < 0 || limit >= SIM_LIMIT_COUNT)
        return cudaErrorUnsupportedLimit;
    (void)b;
    *value = limit_default[limit];
    return 0;
}

/* Kept only to honour the contract's "only grows": no simulated kernel
 * depends on a limit. */
int sim_limit_raise(tdm_backend *b, int limit, uint64_t value)
{
    if (limit < 0 || limit >= SIM_LIMIT_COUNT)
        return cudaErrorUnsupportedLimit;
    if (limit == cudaLimitPersistingL2CacheSize)
        return 0; /* the device has no persisting L2 (MaxPersistingL2CacheSize 0): clamped to 0, as the driver clamps */
    pthread_mutex_lock(&b->lock);
    if (value > b->limits[limit])
        b->limits[limit] = value;
    pthread_mutex_unlock(&b->lock);
    return 0;
}

/* The sim runs every kernel the same whatever its settings: it checks them
 * as the driver does and keeps nothing. */
int sim_func_set_attribute(tdm_backend *b, tdm_bfunc *f, int attr, int value)
{
    tdm_func_attrs fa;
    int err = sim_func_get_attributes(b, f, &fa);

    if (err)
        return err;
    switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
        /* Opting in beyond 48 KiB needs MaxSharedMemoryPerBlockOptin, which is 48 KiB here. */
        return value < 0 || value > fa.max_dynamic_shared_size_bytes ? cudaErrorInvalidValue : 0;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
        return value < -1 || value > 100 ? cudaErrorInvalidValue : 0;
    default:
        /* The cluster attributes (sim_cluster.c). */
        return sim_func_set_cluster_attribute(b, f, attr, value);
    }
}

int sim_func_set_cache_config(tdm_backend *b, tdm_bfunc *f, int config)
{
    (void)b;
    (void)f;
    (void)config; /* a preference, checked by the session layer */
    return 0;
}

/* The sim runs a grid's blocks one after another, so a cooperative kernel
 * is an ordinary launch once the driver's check has passed: every block
 * must be resident at once (occupancy times SMs). */
int sim_launch_cooperative(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem,
                           tdm_bstream *s, const void *params, size_t params_len)
{
    tdm_device_info dev;
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    int per_sm = 0, err = sim_device_info(b, &dev);

    if (!err && threads && threads <= INT32_MAX)
        err = sim_occupancy_max_blocks(b, f, (int)threads, shared_mem, 0, &per_sm);
    if (err)
        return err;
    if (per_sm > 0 && (uint64_t)grid.x * grid.y * grid.z > (uint64_t)per_sm * (uint64_t)dev.attrs[cudaDevAttrMultiProcessorCount])
        return cudaErrorCooperativeLaunchTooLarge;
    return sim_launch_kernel(b, f, grid, block, shared_mem, s, params, params_len);
}

/* Spelled from the simulated device's PCI attributes as the driver spells
 * a real one's. */
int sim_pci_bus_id(tdm_backend *b, char *buf, size_t len)
{
    tdm_device_info dev;
    int err = sim_device_info(b, &dev);

    if (err)
        return err;
    snprintf(buf, len, "%04x:%02x:%02x.0", (unsigned)dev.attrs[cudaDevAttrPciDomainId],
             (unsigned)dev.attrs[cudaDevAttrPciBusId], (unsigned)dev.attrs[cudaDevAttrPciDeviceId]);
    return 0;
}
