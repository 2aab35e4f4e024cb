/* The guest's journal (guest-lib/resume/journal.c): epochs, edits of
 * entries in place, and what a replay sends at each epoch.  One case per
 * row; a journal is driven by a script of what the client does:
 *
 *   r  a one-way call is journaled (a memset; its value is 1, 2, ... in order)
 *   n  a synchronous call is numbered (it proves nothing)
 *   a  a reply proves the session idle: confirm, then acknowledge (TDM_EPOCH
 *      with the call count), as resume.c does
 *   c  a reply confirms that the server reached the epoch sent
 *   P  a takeover resumed at the pending epoch (the one last sent)
 *   C  a takeover resumed at the confirmed epoch
 *   S  the session is protected anew at epoch 100 (restart)
 *   s  the session is no longer protected (stop)
 */
#include "test_journal_fakes.h"

static tdm_journal j;   /* protected from epoch 0, nothing journaled */

static void setup(void)
{
    tdm_journal_init(&j, NULL);
    tdm_journal_restart(&j, 0);
}

static void teardown(void)
{
    tdm_journal_stop(&j);
}

TestSuite(journal, .init = setup, .fini = teardown);

/* Arrays, not pointers: Criterion hands each case to a test process of its
 * own by copying it. */
typedef struct epoch_case {
    char name[64];
    char script[32];
    uint64_t confirmed, pending;
    bool active;
    char at_confirmed[16];      /* what a replay at the confirmed epoch sends */
    char at_pending[16];        /* ... at the pending one */
    char at_zero[16];           /* ... at epoch 0 */
} epoch_case;

static void run_script(const char *script)
{
    unsigned value = 0;

    for (const char *p = script; *p; p++) {
        switch (*p) {
        case 'r': record_memset(&j, ++value, 0); break;
        case 'n': tdm_journal_next_call(&j); break;
        case 'a':
            tdm_journal_next_call(&j);
            tdm_journal_confirm(&j);
            tdm_journal_acknowledge(&j);
            break;
        case 'c': tdm_journal_confirm(&j); break;
        case 'P': tdm_journal_resumed(&j, tdm_journal_pending(&j)); break;
        case 'C': tdm_journal_resumed(&j, tdm_journal_confirmed(&j)); break;
        case 'S': tdm_journal_restart(&j, 100); break;
        case 's': tdm_journal_stop(&j); break;
        case ' ': break;
        default: cr_assert_fail("bad script letter %c", *p);
        }
    }
}

ParameterizedTestParameters(journal, epochs)
{
    static epoch_case cases[] = {
        { "calls_kept_until_an_acknowledged_point", "rrr", 0, 0, true, "1,2,3", "1,2,3", "1,2,3" },
        { "acknowledging_sends_the_call_count_as_the_epoch", "rr a", 0, 3, true, "1,2", "", "1,2" },
        { "the_older_segment_stays_until_a_reply_confirms", "rr a r", 0, 3, true, "1,2,3", "3", "1,2,3" },
        { "a_confirming_reply_drops_the_older_segment", "rr a r c", 3, 3, true, "3", "3", "rejected" },
        { "a_second_acknowledgement_confirms_the_first", "r a r a r", 2, 4, true, "2,3", "3", "rejected" },
        { "resumed_at_the_pending_epoch_drops_the_older_segment", "rr a r P", 3, 3, true, "3", "3", "rejected" },
        { "resumed_at_the_confirmed_epoch_keeps_everything", "rr a r C", 0, 0, true, "1,2,3", "1,2,3", "1,2,3" },
        { "resumed_without_an_epoch_pending_keeps_everything", "rr C", 0, 0, true, "1,2", "1,2", "1,2" },
        { "a_restart_forgets_every_call", "rr a r S", 100, 100, true, "", "", "rejected" },
        { "calls_after_a_restart_are_kept", "rr a r S rr", 100, 100, true, "4,5", "4,5", "rejected" },
        { "a_stop_forgets_every_call", "rr a r s", 0, 0, false, "", "", "" },
        { "a_stopped_journal_keeps_nothing", "s rr", 0, 0, false, "", "", "" },
        { "numbered_synchronous_calls_move_the_epoch", "r nn a r", 0, 4, true, "1,2", "2", "1,2" },
    };

    return cr_make_param_array(epoch_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(epoch_case *c, journal, epochs)
{

    run_script(c->script);
    cr_expect_eq(tdm_journal_confirmed(&j), c->confirmed, "%s: confirmed", c->name);
    cr_expect_eq(tdm_journal_pending(&j), c->pending, "%s: pending", c->name);
    cr_expect_eq(tdm_journal_active(&j), c->active, "%s: active", c->name);
    cr_expect_str_eq(replayed_at(&j, tdm_journal_confirmed(&j)), c->at_confirmed, "%s: replay at confirmed", c->name);
    cr_expect_str_eq(replayed_at(&j, tdm_journal_pending(&j)), c->at_pending, "%s: replay at pending", c->name);
    cr_expect_str_eq(replayed_at(&j, 0), c->at_zero, "%s: replay at 0", c->name);
}

/* ---- edits: entries named by position, SKIP and INLINE ---- */

static uint32_t proc_at(uint64_t pos)
{
    uint32_t p;

    memcpy(&p, tdm_journal_entry(&j, pos), sizeof(p));
    return p;
}

static void set_proc_at(uint64_t pos, uint32_t proc)
{
    memcpy(tdm_journal_entry(&j, pos), &proc, sizeof(proc));
}

Test(journal, positions_survive_dropping_the_older_segment)
{
    uint64_t p1, p2, p3;

    p1 = record_memset(&j, 1, 0);
    p2 = record_memset(&j, 2, 0);
    run_script("a");
    p3 = record_memset(&j, 3, 0);
    cr_assert_eq(p1, 0);
    cr_assert_gt(p2, p1);
    cr_assert_gt(p3, p2);
    tdm_journal_confirm(&j);
    cr_expect_eq(tdm_journal_base(&j), p3, "the first entry kept is the third");
    cr_expect_null(tdm_journal_entry(&j, p1));
    cr_expect_null(tdm_journal_entry(&j, p2));
    cr_expect_eq(proc_at(p3), TDM_MEMSET, "the third is where it was");
}

Test(journal, positions_survive_a_restart)
{
    uint64_t p1, p2;

    p1 = record_memset(&j, 1, 0);
    tdm_journal_restart(&j, 7);
    p2 = record_memset(&j, 2, 0);
    cr_expect_gt(p2, p1, "positions never repeat: journal_shm.c names entries by them");
    cr_expect_null(tdm_journal_entry(&j, p1));
    cr_expect_eq(proc_at(p2), TDM_MEMSET);
}

Test(journal, a_skip_entry_is_left_out_of_the_replay)
{
    fake_transport f;
    uint64_t p2;
    size_t n = 0;

    record_memset(&j, 1, 0);
    p2 = record_memset(&j, 2, 0);
    record_memset(&j, 3, 0);
    set_proc_at(p2, TDM_JOURNAL_SKIP);
    fake_init(&f);
    cr_assert_eq(tdm_journal_replay(&j, &f.t, 0, &n), TDM_T_OK);
    cr_expect_str_eq(fake_posts(&f), "1,3");
    cr_expect_eq(n, 2, "a skipped entry is not counted as replayed");
    fake_reset(&f);
}

Test(journal, an_inline_entry_without_its_bytes_fails_the_replay)
{
    fake_transport f;
    uint64_t p1;
    size_t n = 0;

    p1 = record_memset(&j, 1, 0);
    set_proc_at(p1, TDM_JOURNAL_INLINE);
    fake_init(&f);
    cr_expect_eq(tdm_journal_replay(&j, &f.t, 0, &n), TDM_T_REJECTED);
    cr_expect_eq(f.nposts, 0);
}

/* ---- replay ---- */

Test(journal, a_replay_at_an_unknown_epoch_is_refused)
{

    run_script("rr a r");
    cr_expect_str_eq(replayed_at(&j, 1), "rejected");
    cr_expect_str_eq(replayed_at(&j, 99), "rejected");
}

Test(journal, a_replay_stops_at_the_first_transport_error)
{
    fake_transport f;
    size_t n = 0;

    run_script("rrr");
    fake_init(&f);
    f.rc = TDM_T_BROKEN;
    cr_expect_eq(tdm_journal_replay(&j, &f.t, 0, &n), TDM_T_BROKEN);
}

Test(journal, a_replay_sends_the_journaled_arguments_unchanged)
{
    fake_transport f;
    tdm_memset_args a;
    size_t n = 0;

    record_memset(&j, 42, 0x1234);
    fake_init(&f);
    cr_assert_eq(tdm_journal_replay(&j, &f.t, 0, &n), TDM_T_OK);
    cr_assert_eq(f.nposts, 1);
    cr_expect_eq(f.posts[0].proc, TDM_MEMSET);
    fake_decode(&f, 0, (xdrproc_t)xdr_tdm_memset_args, &a);
    cr_expect_eq(a.dst, 0x1000);
    cr_expect_eq(a.value, 42);
    cr_expect_eq(a.size, 64);
    cr_expect_eq(a.stream, 0x1234);
    fake_reset(&f);
}

/* ---- regressions ---- */

/* 9ea63ae: a takeover that resumed at the pending epoch advances the base
 * past the older segment, as a confirming reply does, so that positions
 * journal_shm.c holds still name the same entries. */
Test(journal, resumed_at_the_pending_epoch_advances_the_base)
{
    uint64_t p3;

    run_script("rr a");
    p3 = record_memset(&j, 3, 0);
    tdm_journal_resumed(&j, tdm_journal_pending(&j));
    cr_expect_eq(tdm_journal_base(&j), p3);
    cr_expect_eq(proc_at(p3), TDM_MEMSET);
    cr_expect_str_eq(replayed_at(&j, tdm_journal_pending(&j)), "3");
}

/* The journal's size counts the calls kept, and a confirm frees the older
 * segment's share of it (TANDEM_JOURNAL_MB bounds it). */
Test(journal, a_confirm_shrinks_the_journal)
{
    size_t before;

    run_script("rrr a r");
    before = tdm_journal_bytes(&j);
    cr_assert_gt(before, 0);
    tdm_journal_confirm(&j);
    cr_expect_lt(tdm_journal_bytes(&j), before);
    cr_expect_not(tdm_journal_empty(&j), "the call after the epoch stays");
}
