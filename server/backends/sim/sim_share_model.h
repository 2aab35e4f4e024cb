/* The sim's model of an SM share (issue 17, docs/sm-shares.md "The sim's
 * model"): a kernel's blocks run in waves of one block per SM of the share,
 * each wave taking the configured wave time.  A pure function, so its
 * table-driven test (tests/unit/test_sim_share.c) needs no device. */
#ifndef TANDEM_SIM_SHARE_MODEL_H
#define TANDEM_SIM_SHARE_MODEL_H

#include <stdint.h>

#define SIM_DEFAULT_SMS 132u                      /* as an H100 SXM */
#define SIM_SHARE_MAX_NS (10ull * 1000000000ull)  /* one kernel is held at most this long */

/* How long a kernel of `blocks` blocks takes on `sms` SMs when one wave
 * takes wave_us microseconds: ceil(blocks / sms) waves, at most
 * SIM_SHARE_MAX_NS (a guest's grid must not hold a stream for hours).
 * 0 when the model is off (wave_us 0) or there is nothing to run. */
static inline uint64_t sim_share_kernel_ns(uint64_t blocks, unsigned sms, uint32_t wave_us)
{
    uint64_t waves, wave_ns = (uint64_t)wave_us * 1000u;

    if (!wave_us || !sms || !blocks)
        return 0;
    waves = blocks / sms + (blocks % sms != 0);
    if (waves > SIM_SHARE_MAX_NS / wave_ns)
        return SIM_SHARE_MAX_NS;
    return waves * wave_ns;
}

#endif
