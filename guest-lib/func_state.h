/* What the guest knows of its functions' server state (issue 15): the attributes the program
 * set (cudaFuncSetAttribute, cudaFuncSetCacheConfig), re-sent to a standby after a takeover
 * (MIRROR_REREGISTER in proto/calls.def) and answered in the guest when set again to the same
 * value; and the occupancies the server computed, answered from here when asked again.
 * Libraries such as cuDNN set the same attribute before every launch and ask the occupancy of
 * the same kernel thousands of times (docs/driver-api.md, "Answered in the guest"). */
#ifndef TANDEM_FUNC_STATE_H
#define TANDEM_FUNC_STATE_H

#include <stdbool.h>
#include <stdint.h>

struct tdm_transport;

/* Whether setting `what` (of call `proc`) of function `func` to `value` already succeeded. */
bool tdm_func_setting_known(uint32_t proc, uint64_t func, int what, int value);
/* A setting the server took; occupancies cached for func are dropped (they may depend on it). */
void tdm_func_setting_note(uint32_t proc, uint64_t func, int what, int value);
/* Sends every setting to the server behind t (a standby just resumed the session): TDM_T_OK,
 * or the transport's failure; a setting refused logs a line and makes it TDM_T_REJECTED.
 * Settings of functions the session no longer has (their library unloaded) are forgotten. */
int tdm_func_settings_reregister(struct tdm_transport *t);

/* An occupancy the server answered for these arguments: true with *value.  Compared
 * bytewise: no padding, and a field a question does not have is zero (the cluster
 * calculators' dims and policy; flags holds their `what`). */
typedef struct tdm_occupancy_key {
    uint64_t func, dyn_smem;
    uint32_t proc, flags;
    int block_size, num_blocks;
    uint32_t grid[3], block[3], cluster[3];
    int policy;
} tdm_occupancy_key;
bool tdm_occupancy_cached(const tdm_occupancy_key *k, uint64_t *value);
void tdm_occupancy_note(const tdm_occupancy_key *k, uint64_t value);

#endif
