/* Graph memory on the sim (docs/graphs.md, "Graph memory"): the sim does
 * not check capture modes, so there is no mode to exchange. */
#include "sim_internal.h"

int sim_capture_mode_exchange(tdm_backend *b, int *mode)
{
    (void)b;
    (void)mode;
    return 0;
}
