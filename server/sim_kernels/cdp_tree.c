/* Twin of examples/cdp_tree.cu (dynamic parallelism):
 *   tree(int depth, int max_depth, unsigned *threads, unsigned *deepest)
 *     each of its 2 threads: atomicAdd(threads, 1), atomicMax(deepest, depth);
 *     thread 0, while depth < max_depth, launches two trees of depth + 1
 *     from the device (and at depth 0 prints one line first).
 * The sim has no device-side launches: the twin computes what the whole
 * tree of launches leaves behind, which the host reads only after it
 * synchronized with the parent (as CDP guarantees: a parent completes only
 * once its children have). */
#include "kernels.h"

static void run(const sim_launch *l)
{
    int32_t depth = sim_param_i32(l, 0), max_depth = sim_param_i32(l, 1);
    uint32_t *threads = sim_u32(l, sim_param_ptr(l, 2));
    uint32_t *deepest = threads ? sim_u32(l, sim_param_ptr(l, 3)) : NULL;
    uint32_t levels, launches;

    if (!deepest)
        return;
    if (depth == 0 && depth < max_depth)
        sim_printf(l, "device: depth 0 launches two trees of depth 1 (max %d)\n", max_depth);
    /* Levels depth..max_depth, each twice as wide as the one above. */
    levels = depth < max_depth ? (uint32_t)(max_depth - depth) + 1 : 1;
    launches = levels >= 32 ? UINT32_MAX : (1u << levels) - 1u;
    *threads += 2u * launches;
    int32_t bottom = depth < max_depth ? max_depth : depth;
    if ((uint32_t)bottom > *deepest)
        *deepest = (uint32_t)bottom;
}

static const sim_param_desc params[] = { SIM_PARAM_I32, SIM_PARAM_I32, SIM_PARAM_PTR, SIM_PARAM_PTR };

const sim_kernel sim_kernel_cdp_tree = {
    .name = "_Z4treeiiPjS_",
    .nparams = 4,
    .params = params,
    .run = run,
};
