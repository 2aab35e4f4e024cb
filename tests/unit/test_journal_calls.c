/* The guest's classifiers against the procedure table (proto/calls.def),
 * one case per row: what a reply proves (IDLE), how one-way work is noted
 * (STREAM), and which calls empty the journal first (EFFECT_RELEASES).  A
 * classifier that disagrees with its row fails here; so does a row that
 * changes what the guest did before the table (the lists at the end). */
#include "resume/resume.h"
#include "test_journal_fakes.h"

#define NO_ROW SIZE_MAX

ParameterizedTestParameters(journal_calls, row)
{
    static size_t rows[512];

    cr_assert_leq(tdm_ncalls, sizeof(rows) / sizeof(rows[0]));
    for (size_t i = 0; i < tdm_ncalls; i++)
        rows[i] = i;
    return cr_make_param_array(size_t, rows, tdm_ncalls);
}

/* Arguments of `call` naming `stream` where its STREAM column says. */
static void *args_on(const tdm_call_info *call, uint64_t stream)
{
    static uint64_t buf[1024];

    memset(buf, 0, sizeof(buf));
    cr_assert_leq(call->args_size, sizeof(buf));
    if (call->stream_offset != TDM_STREAM_NONE)
        memcpy((char *)buf + (call->stream_offset == TDM_STREAM_SELF ? 0 : call->stream_offset), &stream,
               sizeof(stream));
    return buf;
}

#define NONBLOCKING 0x4000000000000077ull
#define BLOCKING 0x4000000000000055ull

/* A journal holding one memset on `stream`. */
static void journal_on(tdm_journal *j, uint64_t stream)
{
    tdm_journal_init(j, NULL);
    tdm_journal_restart(j, 0);
    tdm_journal_stream_created(j, NONBLOCKING, cudaStreamNonBlocking);
    tdm_journal_stream_created(j, BLOCKING, cudaStreamDefault);
    record_memset(j, 1, stream);
}

static bool proves(const tdm_call_info *call, uint64_t used, uint64_t on, int err)
{
    tdm_journal j;
    bool idle;

    journal_on(&j, used);
    idle = tdm_journal_proves_idle(&j, call->proc, args_on(call, on), err);
    tdm_journal_stop(&j);
    return idle;
}

ParameterizedTest(size_t *i, journal_calls, row)
{
    const tdm_call_info *call = &tdm_calls[*i];
    bool always = call->idle == TDM_IDLE_ALWAYS;
    bool legacy = call->idle == TDM_IDLE_LEGACY_STREAM;
    bool only = call->idle == TDM_IDLE_ONLY_STREAM;

    /* IDLE: what a successful reply proves, in each state of the session. */
    cr_expect_eq(proves(call, 0, 0, 0), always || legacy || only, "%s: legacy stream used, call on it", call->name);
    cr_expect_eq(proves(call, BLOCKING, 0, 0), always || legacy, "%s: a blocking stream used, call on legacy",
                 call->name);
    cr_expect_eq(proves(call, NONBLOCKING, 0, 0), always, "%s: a non-blocking stream used, call on legacy",
                 call->name);
    cr_expect_eq(proves(call, BLOCKING, BLOCKING, 0), always || only, "%s: the one stream used, call on it",
                 call->name);
    cr_expect_not(proves(call, 0, 0, cudaErrorInvalidValue), "%s: a failed reply proves nothing", call->name);
    {
        tdm_journal j;

        tdm_journal_init(&j, NULL);
        tdm_journal_restart(&j, 0);
        cr_expect_not(tdm_journal_proves_idle(&j, call->proc, args_on(call, 0), 0), "%s: nothing journaled",
                      call->name);
        tdm_journal_stop(&j);
    }

    /* STREAM: one-way work on a stream keeps a one-stream session one
     * stream; work with none makes it count as several. */
    if (call->mode == TDM_CALL_ONEWAY) {
        const tdm_call_info *sync = tdm_call_find(TDM_STREAM_SYNCHRONIZE);
        tdm_journal j;
        uint64_t s = BLOCKING;

        journal_on(&j, BLOCKING);
        cr_assert_eq(tdm_journal_record(&j, call, args_on(call, BLOCKING)), 0, "%s", call->name);
        cr_expect_eq(tdm_journal_proves_idle(&j, sync->proc, &s, 0), call->stream_offset != TDM_STREAM_NONE,
                     "%s: a stream synchronize after it", call->name);
        tdm_journal_stop(&j);
    }

    /* EFFECT_RELEASES: the journal is emptied before the call. */
    if (call->mode == TDM_CALL_SYNC) {
        static const tdm_resume_program program;
        tdm_hello_res h = { .standby = "tcp://standby:1", .resume_token = 9, .resume_policy = TDM_RESUME_EXACT };
        tdm_memset_args a = { .dst = 0x1000, .value = 1, .size = 64 };
        fake_transport f;
        tdm_resume r;
        tdm_conn c = { 0 };

        fake_init(&f);
        c.t = &f.t;
        tdm_resume_init(&r, &program);
        tdm_resume_on(&r, &c, &(tdm_resume_event){ .kind = TDM_RESUME_HELLO, .hello = &h, .policy = 2 });
        r.last_check = 1e18;   /* protection checks are test_journal_resume's subject */
        tdm_resume_on(&r, &c,
                      &(tdm_resume_event){ .kind = TDM_RESUME_POSTING, .call = tdm_call_find(TDM_MEMSET), .args = &a });
        tdm_resume_on(&r, &c, &(tdm_resume_event){ .kind = TDM_RESUME_SENDING, .call = call });
        cr_expect_eq(f.ncalls == 1 && f.calls[0] == TDM_QUIESCE, call->effect == TDM_EFFECT_RELEASES,
                     "%s: quiesced before it", call->name);
        tdm_journal_stop(&r.journal);
        fake_reset(&f);
    }
}

/* What the guest decided per call before the table: the table must keep it
 * for the calls that existed then (procedures 0-26 and 32-41).  Calls added
 * since are classified by their own rows. */
static bool existed_before_the_table(uint32_t proc)
{
    return proc <= TDM_REPLAY_BEGIN || (proc >= TDM_FIRST_ONEWAY_PROC && proc <= TDM_EPOCH);
}

Test(journal_calls, the_calls_that_prove_the_session_idle_are_those_of_before_the_table)
{
    static const struct { uint32_t proc; tdm_call_idle idle; } before[] = {
        { TDM_DEVICE_SYNCHRONIZE, TDM_IDLE_ALWAYS }, { TDM_QUIESCE, TDM_IDLE_ALWAYS },
        { TDM_FREE, TDM_IDLE_ALWAYS },               { TDM_SHM_HOST_UNREGISTER, TDM_IDLE_ALWAYS },
        { TDM_MEMCPY_DTOH, TDM_IDLE_LEGACY_STREAM }, { TDM_STREAM_SYNCHRONIZE, TDM_IDLE_ONLY_STREAM },
    };
    size_t proving = 0;

    for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++)
        cr_expect_eq(tdm_call_find(before[i].proc)->idle, before[i].idle, "%s", tdm_call_find(before[i].proc)->name);
    for (size_t i = 0; i < tdm_ncalls; i++)
        proving += existed_before_the_table(tdm_calls[i].proc) && tdm_calls[i].idle != TDM_IDLE_NEVER;
    cr_expect_eq(proving, sizeof(before) / sizeof(before[0]), "no other call proves idleness");
}

Test(journal_calls, the_releases_that_empty_the_journal_are_those_of_before_the_table)
{
    static const uint32_t before[] = { TDM_FREE,          TDM_SHM_HOST_UNREGISTER, TDM_STREAM_DESTROY,
                                       TDM_EVENT_DESTROY, TDM_MODULE_UNLOAD,       TDM_DEVICE_RESET };
    size_t releases = 0;

    for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++)
        cr_expect_eq(tdm_call_find(before[i])->effect, TDM_EFFECT_RELEASES, "%s", tdm_call_find(before[i])->name);
    for (size_t i = 0; i < tdm_ncalls; i++)
        releases += existed_before_the_table(tdm_calls[i].proc) && tdm_calls[i].effect == TDM_EFFECT_RELEASES;
    cr_expect_eq(releases, sizeof(before) / sizeof(before[0]), "no other call releases");
}

Test(journal_calls, the_replies_that_show_no_progress_are_those_of_before_the_table)
{
    static const uint32_t before[] = { TDM_NULL,          TDM_HELLO,           TDM_DEVICE_INFO,   TDM_MEM_GET_INFO,
                                       TDM_MALLOC,        TDM_MODULE_LOAD,     TDM_FUNC_GET_ATTRIBUTES,
                                       TDM_STREAM_CREATE, TDM_EVENT_CREATE,    TDM_SHM_HOST_REGISTER };
    size_t hidden = 0;

    for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++)
        cr_expect_eq(tdm_call_find(before[i])->progress, TDM_PROGRESS_HIDDEN, "%s", tdm_call_find(before[i])->name);
    for (size_t i = 0; i < tdm_ncalls; i++)
        hidden += existed_before_the_table(tdm_calls[i].proc) && tdm_calls[i].mode == TDM_CALL_SYNC &&
                  tdm_calls[i].progress == TDM_PROGRESS_HIDDEN;
    cr_expect_eq(hidden, sizeof(before) / sizeof(before[0]), "every other reply may show progress");
}
