/* The grid walk every element-wise sim kernel shares. */
#include "sim_kernel.h"

void sim_for_each_index_x(const sim_launch *l, int32_t n, sim_index_body body, void *ctx)
{
    uint32_t threads = l->block.x * l->block.y * l->block.z;

    for (uint32_t bz = 0; bz < l->grid.z; bz++)
        for (uint32_t by = 0; by < l->grid.y; by++)
            for (uint32_t bx = 0; bx < l->grid.x; bx++) {
                if (sim_launch_stopped(l))
                    return;
                for (uint32_t t = 0; t < threads; t++) {
                    int32_t i = sim_global_index_x(bx, l->block.x, t % l->block.x);
                    if (i < n && !body(l, i, ctx))
                        return;
                }
            }
}
