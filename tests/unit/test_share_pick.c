/* Which SM groups a share takes on the GPU (cuda_share_pick.h): rows of
 * (groups in use, share asked) -> groups taken.  The cuda backend itself
 * needs a GPU (tests/gpu/run-shares-gpu.sh); its choice does not. */
#include <criterion/criterion.h>

#include "cuda_share_pick.h"

typedef struct groups_row {
    unsigned sms, group_sms, n, want;
} groups_row;

/* A share is rounded up to whole groups, at least one, at most all. */
Test(share_pick, groups_round_up_and_stay_within_the_device)
{
    static const groups_row rows[] = {
        { 1, 4, 33, 1 },   { 4, 4, 33, 1 },   { 5, 4, 33, 2 },  { 8, 4, 33, 2 },
        { 33, 4, 33, 9 },  { 66, 4, 33, 17 }, { 132, 4, 33, 33 }, { 200, 4, 33, 33 },
        { 0, 4, 33, 1 },   { 16, 8, 16, 2 },  { 8, 0, 16, 0 },  { 8, 4, 0, 0 },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        cr_expect_eq(tdm_share_groups_for(rows[i].sms, rows[i].group_sms, rows[i].n), rows[i].want,
                     "row %zu: %u SMs in groups of %u (%u groups)", i, rows[i].sms, rows[i].group_sms, rows[i].n);
}

typedef struct pick_row {
    const char *what;
    unsigned use[8];
    unsigned n, k;
    uint64_t want;
} pick_row;

Test(share_pick, least_used_groups_first_so_shares_stay_disjoint)
{
    static const pick_row rows[] = {
        { "an idle device: the first groups", { 0 }, 8, 2, 0x03 },
        { "beside a share of groups 0-1: the next two", { 1, 1, 0, 0, 0, 0, 0, 0 }, 8, 2, 0x0c },
        { "beside shares in 0-1 and 2-3: 4-7", { 1, 1, 1, 1, 0, 0, 0, 0 }, 8, 4, 0xf0 },
        { "a full device overlaps evenly: the least loaded", { 2, 1, 2, 1, 2, 1, 2, 1 }, 8, 2, 0x0a },
        { "a hole in the middle is reused", { 1, 0, 1, 1, 1, 1, 1, 1 }, 8, 1, 0x02 },
        { "asking more than there is takes all", { 0 }, 8, 9, 0xff },
        { "nothing asked takes nothing", { 0 }, 8, 0, 0x00 },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        cr_expect_eq(tdm_share_pick(rows[i].use, rows[i].n, rows[i].k, ~0ull), rows[i].want, "%s: got %#llx",
                     rows[i].what, (unsigned long long)tdm_share_pick(rows[i].use, rows[i].n, rows[i].k, ~0ull));
}

/* A device split in 64 groups: the mask's last bit is usable. */
Test(share_pick, all_64_groups_fit_in_the_mask)
{
    unsigned use[64] = { 0 };

    for (unsigned i = 0; i < 63; i++)
        use[i] = 1;
    cr_expect_eq(tdm_share_pick(use, 64, 1, ~0ull), 1ull << 63);
    cr_expect_eq(tdm_share_pick(use, 64, 64, ~0ull), ~0ull);
}

/* --sm-window (a VM's SM budget): which groups a window of SMs holds. */
typedef struct window_row {
    const char *what;
    unsigned first, sms, group_sms, n;
    uint64_t want;
} window_row;

Test(share_pick, a_window_holds_the_groups_its_sms_touch)
{
    static const window_row rows[] = {
        { "no window: every group", 0, 0, 4, 33, (1ull << 33) - 1 },
        { "SMs 0-7: groups 0-1", 0, 8, 4, 33, 0x3 },
        { "SMs 8-15: groups 2-3", 8, 8, 4, 33, 0xc },
        { "SMs 6-9 touch groups 1-2 (rounded out)", 6, 4, 4, 33, 0x6 },
        { "one SM: its group", 13, 1, 4, 33, 0x8 },
        { "past the device: only the groups there are", 128, 16, 4, 33, 1ull << 32 },
        { "wholly past the device: none", 200, 8, 4, 33, 0 },
        { "no group size: none", 0, 8, 0, 33, 0 },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        uint64_t got = tdm_share_window(rows[i].first, rows[i].sms, rows[i].group_sms, rows[i].n);
        cr_expect_eq(got, rows[i].want, "%s: got %#llx", rows[i].what, (unsigned long long)got);
    }
}

/* Inside a window, shares are disjoint while they fit and then overlap
 * evenly: Flyt's Table 6, where best-effort apps share what the
 * latency-critical one leaves of a VM's budget. */
Test(share_pick, shares_stay_inside_their_window_and_share_it_when_full)
{
    static const struct {
        const char *what;
        unsigned use[8];
        unsigned k;
        uint64_t allowed, want;
    } rows[] = {
        { "an idle window 2-3", { 0 }, 2, 0x0c, 0x0c },
        { "the window 2-3 again: the same two, shared", { 0, 0, 1, 1 }, 2, 0x0c, 0x0c },
        { "more than the window: the window", { 0 }, 4, 0x0c, 0x0c },
        { "groups outside the window are never taken, idle or not", { 5, 5, 0, 0, 0, 0, 0, 0 }, 1, 0x03, 0x01 },
        { "a window of one group", { 3 }, 1, 0x80, 0x80 },
        { "an empty window takes nothing", { 0 }, 2, 0, 0 },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        uint64_t got = tdm_share_pick(rows[i].use, 8, rows[i].k, rows[i].allowed);
        cr_expect_eq(got, rows[i].want, "%s: got %#llx", rows[i].what, (unsigned long long)got);
    }
}
