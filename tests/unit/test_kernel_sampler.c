/* The per-session kernel sampler (server/kernel_sampler.h), row by row against a fake device:
 * which launches are sampled, that a slot still running is never waited for, that a full set of
 * slots skips a sample, that failed launches and probe errors drop theirs, and the percentiles
 * reported since the last report. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_sampler.h"

/* A fake device: events are small records; a kernel's duration is given per launch, and an
 * end event completes only once `done_upto` launches have completed. */
typedef struct fake_ev {
    int launch;        /* the launch it was recorded around (-1: not yet) */
    bool is_end;
} fake_ev;

typedef struct fake {
    fake_ev ev[64];
    int nev, created, destroyed, records, queries;
    int launch;               /* the launch under way */
    int done_upto;            /* launches [0, done_upto) have completed */
    uint64_t dur_ns[1024];    /* each launch's duration */
    int fail_create, fail_record_at;   /* probe errors: at the nth create / record (0: none) */
} fake;

static int f_create(void *ctx, void **out)
{
    fake *f = ctx;
    if (f->fail_create && ++f->created == f->fail_create)
        return 2;
    if (!f->fail_create)
        f->created++;
    f->ev[f->nev] = (fake_ev){ .launch = -1 };
    *out = &f->ev[f->nev++];
    return 0;
}

static int f_record(void *ctx, void *e, void *stream)
{
    fake *f = ctx;
    if (f->fail_record_at && ++f->records == f->fail_record_at)
        return 700;
    if (!f->fail_record_at)
        f->records++;
    ((fake_ev *)e)->launch = f->launch;
    return 0;
}

static int f_query(void *ctx, void *e)
{
    fake *f = ctx;
    f->queries++;
    return ((fake_ev *)e)->launch < f->done_upto ? 0 : 1;
}

static int f_elapsed(void *ctx, void *b, void *e, uint64_t *ns)
{
    fake *f = ctx;
    *ns = f->dur_ns[((fake_ev *)e)->launch];
    return 0;
}

static void f_destroy(void *ctx, void *e)
{
    ((fake *)ctx)->destroyed++;
}

static tdm_kprobe probe(fake *f)
{
    return (tdm_kprobe){ f, f_create, f_record, f_query, f_elapsed, f_destroy };
}

/* Runs n launches (launch i fails when fails[i]); completes them all when done_each, else none. */
static void run(tdm_ksampler *k, fake *f, int n, bool done_each, const bool *fails)
{
    tdm_kprobe p = probe(f);
    for (int i = 0; i < n; i++) {
        f->launch = i;
        int slot = tdm_ksampler_before(k, &p, NULL);
        tdm_ksampler_after(k, &p, slot, NULL, !(fails && fails[i]));
        if (done_each)
            f->done_upto = i + 1;
    }
}

typedef struct row {
    const char *what;
    int launches;
    bool complete;             /* each kernel completes before the next launch */
    int fail_create, fail_record_at;
    int failed_launch;         /* 1 + the index of a launch that fails (0: none) */
    uint64_t samples;          /* read by a poll after the run, everything complete */
    int events_made;
} row;

static const row rows[] = {
    { "one launch is sampled (the first)", 1, true, 0, 0, 0, 1, 2 },
    { "63 more are not", 64, true, 0, 0, 0, 1, 2 },
    { "the 65th is", 65, true, 0, 0, 0, 2, 2 },
    { "every 64th of 640, one slot reused", 640, true, 0, 0, 0, 10, 2 },
    { "none complete: 4 slots fill, later due launches are skipped", 640, false, 0, 0, 0, 4, 8 },
    { "a failed sampled launch arms nothing", 1, true, 0, 0, 1, 0, 2 },
    { "an event that cannot be made skips that sample only", 65, true, 1, 0, 0, 1, 2 },
    { "a begin that cannot be recorded skips that sample", 65, true, 0, 1, 0, 1, 2 },
    { "an end that cannot be recorded skips that sample", 65, true, 0, 2, 0, 1, 2 },
};

static void check_row(const row *r)
{
    tdm_ksampler *k = calloc(1, sizeof(*k));
    fake *f = calloc(1, sizeof(*f));
    bool *fails = calloc(1024, sizeof(bool));
    uint64_t p50, p99, n;

    f->fail_create = r->fail_create;
    f->fail_record_at = r->fail_record_at;
    for (int i = 0; i < 1024; i++)
        f->dur_ns[i] = 1000000;   /* 1 ms */
    if (r->failed_launch)
        fails[r->failed_launch - 1] = true;
    run(k, f, r->launches, r->complete, fails);
    f->done_upto = r->launches;   /* all done now */
    tdm_kprobe p = probe(f);
    tdm_ksampler_poll(k, &p);
    tdm_ksampler_report(k, &p50, &p99, &n);
    cr_expect_eq(n, r->samples, "%s: %llu samples, want %llu", r->what, (unsigned long long)n,
                 (unsigned long long)r->samples);
    cr_expect_eq(f->nev, r->events_made, "%s: %d events made, want %d", r->what, f->nev, r->events_made);
    cr_expect_eq(k->narmed, 0u, "%s: slots left armed", r->what);
    if (n) {
        cr_expect(p50 >= 875000 && p50 <= 1125000, "%s: p50 %llu ns, want about 1 ms", r->what,
                  (unsigned long long)p50);
        cr_expect(p99 >= 875000 && p99 <= 1125000, "%s: p99 %llu ns", r->what, (unsigned long long)p99);
    }
    tdm_ksampler_release(k, &p);
    cr_expect_eq(f->destroyed, f->nev, "%s: every event made is destroyed", r->what);
    free(k);
    free(f);
    free(fails);
}

Test(kernel_sampler, which_launches_are_sampled_row_by_row)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        check_row(&rows[i]);
}

Test(kernel_sampler, never_waits_for_a_kernel_still_running)
{
    tdm_ksampler k = { 0 };
    fake f = { 0 };
    tdm_kprobe p = probe(&f);

    f.dur_ns[0] = 5000000;
    run(&k, &f, 1, false, NULL);
    tdm_ksampler_poll(&k, &p);   /* the kernel has not completed: asked once, not read */
    uint64_t p50, p99, n;
    tdm_ksampler_report(&k, &p50, &p99, &n);
    cr_expect_eq(n, 0);
    cr_expect_eq(f.queries, 1);
    cr_expect_eq(k.narmed, 1u);
    f.done_upto = 1;
    tdm_ksampler_poll(&k, &p);
    tdm_ksampler_report(&k, &p50, &p99, &n);
    cr_expect_eq(n, 1);
    cr_expect(p50 >= 4375000 && p50 <= 5625000, "p50 %llu", (unsigned long long)p50);
    tdm_ksampler_release(&k, &p);
}

/* The percentiles are those of the samples since the previous report. */
typedef struct pct_row {
    const char *what;
    int n_fast, n_slow;        /* 1 ms and 10 ms samples in the window */
    double p50_ms, p99_ms;     /* want, within 1/8 */
} pct_row;

static const pct_row pct_rows[] = {
    { "empty window", 0, 0, 0, 0 },
    { "all fast", 100, 0, 1, 1 },
    { "one slow in 100: p99 fast", 99, 1, 1, 1 },
    { "two slow in 100: p99 slow", 98, 2, 1, 10 },
    { "most slow", 10, 90, 10, 10 },
};

static void check_pct_row(const pct_row *r)
{
    tdm_ksampler *k = calloc(1, sizeof(*k));
    uint64_t p50, p99, n;

    tdm_ksampler_record(k, 3000000);   /* an earlier window's: reported, then not again */
    tdm_ksampler_report(k, &p50, &p99, &n);
    cr_assert_eq(n, 1);
    for (int i = 0; i < r->n_fast; i++)
        tdm_ksampler_record(k, 1000000);
    for (int i = 0; i < r->n_slow; i++)
        tdm_ksampler_record(k, 10000000);
    tdm_ksampler_report(k, &p50, &p99, &n);
    cr_expect_eq(n, (uint64_t)(r->n_fast + r->n_slow), "%s", r->what);
    cr_expect(p50 >= r->p50_ms * 875000 && p50 <= r->p50_ms * 1125000, "%s: p50 %llu ns", r->what,
              (unsigned long long)p50);
    cr_expect(p99 >= r->p99_ms * 875000 && p99 <= r->p99_ms * 1125000, "%s: p99 %llu ns", r->what,
              (unsigned long long)p99);
    free(k);
}

Test(kernel_sampler, percentiles_of_the_window_row_by_row)
{
    for (size_t i = 0; i < sizeof(pct_rows) / sizeof(pct_rows[0]); i++)
        check_pct_row(&pct_rows[i]);
}
