/* Which of the device's SM groups a new share takes (issue 17,
 * docs/sm-shares.md): pure functions, so that their table-driven test
 * (tests/unit/test_share_pick.c) runs without a GPU. */
#ifndef TANDEM_CUDA_SHARE_PICK_H
#define TANDEM_CUDA_SHARE_PICK_H

#include <stdint.h>

#define TDM_SHARE_MAX_GROUPS 64   /* a share is a mask of groups */

/* Groups of group_sms SMs a share of `sms` SMs needs: rounded up (a green
 * context gets whole groups), between 1 and the n there are. */
static inline unsigned tdm_share_groups_for(unsigned sms, unsigned group_sms, unsigned n)
{
    unsigned k;

    if (!group_sms || !n)
        return 0;
    k = sms / group_sms + (sms % group_sms != 0);
    return k < 1 ? 1 : k > n ? n : k;
}

/* The groups of n (groups of group_sms SMs each) that a window of SMs
 * first..first+sms-1 touches (--sm-window: rounded out to whole groups,
 * since a green context gets whole groups); sms 0 is every group.  A window
 * past the device keeps only the groups the device has. */
static inline uint64_t tdm_share_window(unsigned first, unsigned sms, unsigned group_sms, unsigned n)
{
    uint64_t mask = 0;

    if (n > TDM_SHARE_MAX_GROUPS)
        n = TDM_SHARE_MAX_GROUPS;
    if (!group_sms)
        return 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t lo = (uint64_t)i * group_sms, hi = lo + group_sms;   /* group i's SMs: [lo, hi) */
        if (!sms || (lo < (uint64_t)first + sms && hi > first))
            mask |= 1ull << i;
    }
    return mask;
}

/* k of the `allowed` groups among n (n <= 64): the least used first
 * (use[i]: shares now holding group i), the lowest index among equals.
 * Shares stay disjoint while the window has room for them all, and overlap
 * evenly past that. */
static inline uint64_t tdm_share_pick(const unsigned *use, unsigned n, unsigned k, uint64_t allowed)
{
    uint64_t mask = 0;

    if (n > TDM_SHARE_MAX_GROUPS)
        n = TDM_SHARE_MAX_GROUPS;
    for (unsigned taken = 0; taken < k && taken < n; taken++) {
        unsigned best = n;

        for (unsigned i = 0; i < n; i++)
            if ((allowed >> i & 1u) && !(mask >> i & 1u) && (best == n || use[i] < use[best]))
                best = i;
        if (best == n)
            break;                    /* the window is all taken */
        mask |= 1ull << best;
    }
    return mask;
}

#endif
