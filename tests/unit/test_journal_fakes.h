/* What the journal unit tests share: a fake transport that records what a
 * replay or the takeover module sends, and a journal's entries by the
 * value each memset carries. */
#ifndef TANDEM_TEST_JOURNAL_FAKES_H
#define TANDEM_TEST_JOURNAL_FAKES_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resume/journal.h"
#include "tandem_rpc.h"

#define FAKE_MAX 256

typedef struct fake_msg {
    uint32_t proc;
    uint8_t *bytes;   /* XDR-encoded arguments (posts only) */
    size_t len;
} fake_msg;

typedef struct fake_transport {
    tdm_transport t;
    fake_msg posts[FAKE_MAX];
    size_t nposts;
    uint32_t calls[FAKE_MAX];
    size_t ncalls;
    int rc;           /* what every call and post returns */
    int reply_err;    /* the error of every int reply */
} fake_transport;

static inline int fake_call(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res)
{
    fake_transport *f = (fake_transport *)t;

    cr_assert_lt(f->ncalls, FAKE_MAX);
    f->calls[f->ncalls++] = proc;
    if (f->rc == TDM_T_OK && xres == (xdrproc_t)xdr_int)
        *(int *)res = f->reply_err;
    return f->rc;
}

static inline int fake_post(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args)
{
    fake_transport *f = (fake_transport *)t;
    fake_msg *m;
    XDR x;

    if (f->rc != TDM_T_OK)
        return f->rc;
    cr_assert_lt(f->nposts, FAKE_MAX);
    m = &f->posts[f->nposts++];
    m->proc = proc;
    m->len = xdr_sizeof(xargs, args);
    m->bytes = malloc(m->len ? m->len : 1);
    xdrmem_create(&x, (char *)m->bytes, (u_int)m->len, XDR_ENCODE);
    cr_assert(xargs(&x, args), "the posted arguments encode");
    xdr_destroy(&x);
    return TDM_T_OK;
}

static inline void fake_close(tdm_transport *t)
{
    (void)t;
}

static const tdm_transport_ops fake_ops = { fake_call, fake_post, fake_close, NULL };

static inline void fake_init(fake_transport *f)
{
    memset(f, 0, sizeof(*f));
    f->t.ops = &fake_ops;
    snprintf(f->t.desc, sizeof(f->t.desc), "fake");
}

static inline void fake_reset(fake_transport *f)
{
    for (size_t i = 0; i < f->nposts; i++)
        free(f->posts[i].bytes);
    f->nposts = f->ncalls = 0;
}

/* Decodes the arguments of post i as `xargs` into args. */
static inline void fake_decode(const fake_transport *f, size_t i, xdrproc_t xargs, void *args)
{
    XDR x;

    xdrmem_create(&x, (char *)f->posts[i].bytes, (u_int)f->posts[i].len, XDR_DECODE);
    cr_assert(xargs(&x, args), "post %zu decodes", i);
    xdr_destroy(&x);
}

/* The posts as a list "proc:value,...": a memset's value, an upload's
 * first byte, else the procedure alone. */
static inline const char *fake_posts(const fake_transport *f)
{
    static char s[4096];
    size_t n = 0;

    s[0] = 0;
    for (size_t i = 0; i < f->nposts && n < sizeof(s) - 32; i++) {
        const char *sep = i ? "," : "";
        if (f->posts[i].proc == TDM_MEMSET) {
            tdm_memset_args a;
            fake_decode(f, i, (xdrproc_t)xdr_tdm_memset_args, &a);
            n += (size_t)snprintf(s + n, sizeof(s) - n, "%s%u", sep, a.value);
        } else if (f->posts[i].proc == TDM_MEMCPY_HTOD) {
            tdm_memcpy_htod_args a;
            memset(&a, 0, sizeof(a));
            fake_decode(f, i, (xdrproc_t)xdr_tdm_memcpy_htod_args, &a);
            n += (size_t)snprintf(s + n, sizeof(s) - n, "%shtod:%c", sep, a.data.data_len ? a.data.data_val[0] : '-');
            xdr_free((xdrproc_t)xdr_tdm_memcpy_htod_args, (char *)&a);
        } else {
            n += (size_t)snprintf(s + n, sizeof(s) - n, "%sproc%u", sep, f->posts[i].proc);
        }
    }
    return s;
}

/* Journals a memset carrying `value` (its identity in the tests); its
 * position. */
static inline uint64_t record_memset(tdm_journal *j, unsigned value, uint64_t stream)
{
    tdm_memset_args a = { .dst = 0x1000, .value = value, .size = 64, .stream = stream };
    uint64_t pos = tdm_journal_base(j) + j->len;

    cr_assert_eq(tdm_journal_record(j, tdm_call_find(TDM_MEMSET), &a), 0);
    return pos;
}

/* What a replay at `epoch` sends, as fake_posts() lists it, or "rejected". */
static inline const char *replayed_at(tdm_journal *j, uint64_t epoch)
{
    static char s[4096];
    fake_transport f;
    size_t n = 0;
    int rc;

    fake_init(&f);
    rc = tdm_journal_replay(j, &f.t, epoch, &n);
    snprintf(s, sizeof(s), "%s", rc == TDM_T_REJECTED ? "rejected" : rc != TDM_T_OK ? "failed" : fake_posts(&f));
    fake_reset(&f);
    return s;
}

#endif
