/* examples/graph_nodes.cu's device variable, which its graph's symbol
 * copy nodes read and write (it launches only streams_events' kernels). */
#include "kernels.h"

const sim_global_desc sim_global_gn_table = { "gn_table", 4 * sizeof(unsigned int) };
