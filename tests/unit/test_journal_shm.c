/* The journal's part for the shm transport (guest-lib/resume/journal_shm.c):
 * entries edited in place so that a replay sends each upload the bytes it
 * had and writes no download over memory the program may have changed.
 * A fake region in plain memory stands in for the shared one. */
#include "test_journal_fakes.h"

#define DATA_OFF 4096u
#define CHUNK 4096u
#define NCHUNKS 16u
#define HOST_OFF (DATA_OFF + CHUNK * NCHUNKS)
#define HOST_SIZE (4u << 20)

static tdm_shm_region region;
static tdm_journal j;

static void setup(void)
{
    memset(&region, 0, sizeof(region));
    region.g.size = HOST_OFF + HOST_SIZE;
    region.g.nslots = NCHUNKS;
    region.g.data_off = DATA_OFF;
    region.g.data_size = CHUNK * NCHUNKS;
    region.g.chunk = CHUNK;
    region.g.host_off = HOST_OFF;
    region.g.host_size = HOST_SIZE;
    region.base = calloc(1, region.g.size);
    region.fd = -1;
    cr_assert_not_null(region.base);
    tdm_journal_init(&j, &region);
    tdm_journal_restart(&j, 0);
}

static void teardown(void)
{
    tdm_journal_stop(&j);
    free(region.base);
}

TestSuite(journal_shm, .init = setup, .fini = teardown);

/* Journals an shm copy of n bytes at region offset off; the region's bytes
 * there are `fill` first (for an upload). */
static uint64_t copy(uint32_t proc, uint64_t off, uint64_t n, uint32_t slot, uint32_t ticket, char fill)
{
    tdm_shm_copy_args a = { .dev = 0x2000, .stream = 0, .offset = off, .size = n, .slot = slot, .ticket = ticket };
    uint64_t pos = tdm_journal_base(&j) + j.len;

    if (proc == TDM_SHM_HTOD)
        memset(region.base + off, fill, n);
    cr_assert_eq(tdm_journal_record(&j, tdm_call_find(proc), &a), 0);
    return pos;
}

static uint32_t proc_at(uint64_t pos)
{
    uint32_t p;

    cr_assert_not_null(tdm_journal_entry(&j, pos));
    memcpy(&p, tdm_journal_entry(&j, pos), sizeof(p));
    return p;
}

static const char *replayed(void)
{
    return replayed_at(&j, tdm_journal_confirmed(&j));
}

/* What the client does when a reply proves the session idle. */
static void acknowledge(void)
{
    tdm_journal_next_call(&j);
    tdm_journal_confirm(&j);
    tdm_journal_shm_replied(&j, TDM_DEVICE_SYNCHRONIZE, true);
    tdm_journal_shm_acknowledged(&j);
    tdm_journal_acknowledge(&j);
}

Test(journal_shm, a_pageable_upload_keeps_its_bytes_when_its_chunk_is_refilled)
{
    uint64_t p = copy(TDM_SHM_HTOD, DATA_OFF, 16, 0, 1, 'A');

    cr_expect_eq(proc_at(p), TDM_SHM_HTOD, "nothing copied before the chunk comes round");
    cr_expect_eq(tdm_journal_shm_bytes(&j), 0);
    tdm_journal_shm_reuse(&j, 0);
    memset(region.base + DATA_OFF, 'B', 16);
    cr_expect_eq(proc_at(p), TDM_JOURNAL_INLINE);
    cr_expect_eq(tdm_journal_shm_bytes(&j), 16);
    cr_expect_str_eq(replayed(), "htod:A", "replayed as an upload carrying the bytes it had");
}

Test(journal_shm, a_pageable_upload_acknowledged_before_its_chunk_comes_round_copies_nothing)
{
    copy(TDM_SHM_HTOD, DATA_OFF, 16, 0, 1, 'A');
    acknowledge();
    tdm_journal_confirm(&j);
    tdm_journal_shm_reuse(&j, 0);
    cr_expect_eq(tdm_journal_shm_bytes(&j), 0);
    cr_expect_str_eq(replayed(), "");
}

Test(journal_shm, a_download_into_a_chunk_keeps_the_uploads_bytes_first)
{
    uint64_t up = copy(TDM_SHM_HTOD, DATA_OFF, 16, TDM_SHM_NO_SLOT, 0, 'A');
    uint64_t down = copy(TDM_SHM_DTOH, DATA_OFF, 16, TDM_SHM_NO_SLOT, 0, 0);

    cr_expect_eq(proc_at(up), TDM_JOURNAL_INLINE);
    cr_expect_eq(proc_at(down), TDM_SHM_DTOH);
    cr_expect_str_eq(replayed(), "htod:A,proc264");
}

Test(journal_shm, a_download_not_known_done_is_replayed)
{
    uint64_t down = copy(TDM_SHM_DTOH, HOST_OFF, 64, TDM_SHM_NO_SLOT, 0, 0);

    cr_expect_eq(proc_at(down), TDM_SHM_DTOH);
    cr_expect_str_eq(replayed(), "proc264");
}

Test(journal_shm, a_download_a_later_reply_proves_done_is_not_replayed)
{
    uint64_t down = copy(TDM_SHM_DTOH, HOST_OFF, 64, TDM_SHM_NO_SLOT, 0, 0);

    tdm_journal_shm_replied(&j, TDM_MALLOC, false);
    cr_expect_eq(proc_at(down), TDM_JOURNAL_SKIP, "its bytes are where the program reads them");
    cr_expect_str_eq(replayed(), "");
}

/* One case per kind of reply: does it tell the program its work
 * progressed, so it may rewrite a pinned source? */
typedef struct reply_case {
    char name[48];
    uint32_t proc;
    bool keeps;
} reply_case;

ParameterizedTestParameters(journal_shm, pinned_upload_at_a_reply)
{
    static reply_case cases[] = {
        { "stream_query_observes_progress", TDM_STREAM_QUERY, true },
        { "stream_synchronize_observes_progress", TDM_STREAM_SYNCHRONIZE, true },
        { "event_query_observes_progress", TDM_EVENT_QUERY, true },
        { "event_synchronize_observes_progress", TDM_EVENT_SYNCHRONIZE, true },
        { "memcpy_dtoh_observes_progress", TDM_MEMCPY_DTOH, true },
        { "null_shows_nothing", TDM_NULL, false },
        { "malloc_shows_nothing", TDM_MALLOC, false },
        { "mem_get_info_shows_nothing", TDM_MEM_GET_INFO, false },
        { "device_info_shows_nothing", TDM_DEVICE_INFO, false },
        { "module_load_shows_nothing", TDM_MODULE_LOAD, false },
        { "func_get_attributes_shows_nothing", TDM_FUNC_GET_ATTRIBUTES, false },
        { "stream_create_shows_nothing", TDM_STREAM_CREATE, false },
        { "event_create_shows_nothing", TDM_EVENT_CREATE, false },
        { "shm_host_register_shows_nothing", TDM_SHM_HOST_REGISTER, false },
    };

    return cr_make_param_array(reply_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(reply_case *c, journal_shm, pinned_upload_at_a_reply)
{
    uint64_t up = copy(TDM_SHM_HTOD, HOST_OFF, 64, TDM_SHM_NO_SLOT, 0, 'P');

    tdm_journal_shm_replied(&j, c->proc, false);
    memset(region.base + HOST_OFF, 'Q', 64);
    cr_expect_eq(proc_at(up), c->keeps ? TDM_JOURNAL_INLINE : TDM_SHM_HTOD, "%s", c->name);
    cr_expect_str_eq(replayed(), c->keeps ? "htod:P" : "proc263", "%s", c->name);
}

Test(journal_shm, a_pinned_upload_keeps_its_bytes_before_a_download_into_them)
{
    uint64_t up = copy(TDM_SHM_HTOD, HOST_OFF, 64, TDM_SHM_NO_SLOT, 0, 'P');

    copy(TDM_SHM_DTOH, HOST_OFF + 32, 64, TDM_SHM_NO_SLOT, 0, 0);
    cr_expect_eq(proc_at(up), TDM_JOURNAL_INLINE);
}

Test(journal_shm, a_download_elsewhere_leaves_a_pinned_upload_alone)
{
    uint64_t up = copy(TDM_SHM_HTOD, HOST_OFF, 64, TDM_SHM_NO_SLOT, 0, 'P');

    copy(TDM_SHM_DTOH, HOST_OFF + 4096, 64, TDM_SHM_NO_SLOT, 0, 0);
    cr_expect_eq(proc_at(up), TDM_SHM_HTOD);
}

Test(journal_shm, an_acknowledgement_with_region_bytes_journaled_asks_for_a_confirm)
{
    cr_expect_not(tdm_journal_shm_acknowledged(&j), "nothing journaled");
    copy(TDM_SHM_HTOD, HOST_OFF, 64, TDM_SHM_NO_SLOT, 0, 'P');
    cr_expect(tdm_journal_shm_acknowledged(&j), "a pinned upload");
}

Test(journal_shm, an_acknowledgement_with_a_chunk_journaled_asks_for_a_confirm)
{
    copy(TDM_SHM_HTOD, DATA_OFF, 16, 0, 1, 'A');
    cr_expect(tdm_journal_shm_acknowledged(&j));
}

Test(journal_shm, a_copy_seen_complete_loses_its_slot)
{
    uint64_t up = copy(TDM_SHM_HTOD, DATA_OFF, 16, 3, 7, 'A');
    tdm_shm_copy_args a;
    XDR x;

    cr_expect_not(tdm_journal_shm_copy_done(&j, 3, 7, 0, true), "a chunk of a pageable copy proves nothing");
    xdrmem_create(&x, (char *)tdm_journal_entry(&j, up) + 8, sizeof(a) * 2, XDR_DECODE);
    cr_assert(xdr_tdm_shm_copy_args(&x, &a));
    xdr_destroy(&x);
    cr_expect_eq(a.slot, TDM_SHM_NO_SLOT, "a replay must not write an older ticket into the slot");
}

Test(journal_shm, a_completion_of_another_ticket_is_not_this_copy)
{
    copy(TDM_SHM_HTOD, HOST_OFF, 64, 0, 1, 'P');
    cr_expect_not(tdm_journal_shm_copy_done(&j, 0, 2, 0, true));
    cr_expect_str_eq(replayed(), "proc263", "still journaled as it was");
}

Test(journal_shm, a_big_synchronous_pinned_upload_acknowledges)
{
    copy(TDM_SHM_HTOD, HOST_OFF, 1u << 20, 0, 1, 'P');
    cr_expect(tdm_journal_shm_copy_done(&j, 0, 1, 0, true));
}

Test(journal_shm, a_big_synchronous_pinned_upload_waits_for_an_epoch_that_is_due)
{
    uint64_t up = copy(TDM_SHM_HTOD, HOST_OFF, 1u << 20, 0, 1, 'P');

    cr_expect_not(tdm_journal_shm_copy_done(&j, 0, 1, 0, false));
    cr_expect_eq(proc_at(up), TDM_JOURNAL_INLINE, "the program may rewrite it now: its bytes are kept");
}

Test(journal_shm, a_small_synchronous_pinned_upload_keeps_its_bytes_instead)
{
    uint64_t up = copy(TDM_SHM_HTOD, HOST_OFF, 4096, 0, 1, 'P');

    cr_expect_not(tdm_journal_shm_copy_done(&j, 0, 1, 0, true));
    cr_expect_eq(proc_at(up), TDM_JOURNAL_INLINE);
}

Test(journal_shm, a_stop_forgets_the_kept_bytes_but_not_the_region)
{
    copy(TDM_SHM_HTOD, DATA_OFF, 16, 0, 1, 'A');
    tdm_journal_shm_reuse(&j, 0);
    cr_assert_gt(tdm_journal_shm_bytes(&j), 0);
    tdm_journal_stop(&j);
    cr_expect_eq(tdm_journal_shm_bytes(&j), 0);
    tdm_journal_restart(&j, 0);
    copy(TDM_SHM_HTOD, DATA_OFF, 16, 0, 1, 'C');
    tdm_journal_shm_reuse(&j, 0);
    cr_expect_str_eq(replayed(), "htod:C");
}
