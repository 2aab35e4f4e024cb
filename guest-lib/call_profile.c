/* TANDEM_PROFILE=FILE (call_profile.h).  Counters are atomics indexed by the call's row in
 * tdm_calls: the calls of a program's threads are counted without a lock of their own. */
#include "call_profile.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

typedef struct row_count {
    atomic_uint_fast64_t calls, ns;
} row_count;

struct tdm_call_profile {
    char *path;
    uint64_t started;
    row_count *rows;          /* tdm_ncalls of them */
    row_count copy_waits;
};

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

tdm_call_profile *tdm_call_profile_open(void)
{
    const char *path = getenv("TANDEM_PROFILE");
    tdm_call_profile *p;

    if (!path || !*path)
        return NULL;
    p = calloc(1, sizeof(*p));
    if (!p)
        goto fail;
    p->rows = calloc(tdm_ncalls, sizeof(*p->rows));
    p->path = strdup(path);
    if (!p->rows || !p->path)
        goto fail;
    p->started = now_ns();
    return p;
fail:
    if (p) {
        free(p->rows);
        free(p->path);
        free(p);
    }
    tdm_log("TANDEM_PROFILE: out of memory: no profile");
    return NULL;
}

uint64_t tdm_call_profile_now(const tdm_call_profile *p)
{
    return p ? now_ns() : 0;
}

static void count(row_count *r, uint64_t t0)
{
    atomic_fetch_add_explicit(&r->calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->ns, now_ns() - t0, memory_order_relaxed);
}

void tdm_call_profile_add(tdm_call_profile *p, const tdm_call_info *call, uint64_t t0)
{
    if (p && call >= tdm_calls && call < tdm_calls + tdm_ncalls)
        count(&p->rows[call - tdm_calls], t0);
}

void tdm_call_profile_add_copy_wait(tdm_call_profile *p, uint64_t t0)
{
    if (p)
        count(&p->copy_waits, t0);
}

typedef struct line {
    const char *name, *kind;
    uint64_t calls, ns;
} line;

static int by_time(const void *a, const void *b)
{
    const line *x = a, *y = b;

    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : strcmp(x->name, y->name);
}

void tdm_call_profile_close(tdm_call_profile *p)
{
    line *lines;
    size_t n = 0;
    uint64_t total_ns = 0, total_calls = 0;
    FILE *f;

    if (!p)
        return;
    lines = calloc(tdm_ncalls + 1, sizeof(*lines));
    if (!lines)
        goto out;
    for (size_t i = 0; i < tdm_ncalls; i++) {
        uint64_t calls = atomic_load(&p->rows[i].calls);

        if (calls)
            lines[n++] = (line){ tdm_calls[i].name, tdm_calls[i].mode == TDM_CALL_ONEWAY ? "one-way" : "round trip",
                                 calls, atomic_load(&p->rows[i].ns) };
    }
    if (atomic_load(&p->copy_waits.calls))
        lines[n++] = (line){ "(shm copy completion waits)", "wait", atomic_load(&p->copy_waits.calls),
                             atomic_load(&p->copy_waits.ns) };
    qsort(lines, n, sizeof(*lines), by_time);
    f = fopen(p->path, "w");
    if (!f) {
        tdm_log("TANDEM_PROFILE: cannot write %s: %m", p->path);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        total_ns += lines[i].ns;
        total_calls += lines[i].calls;
    }
    fprintf(f, "# Tandem guest call profile: %.3f s of the session, %llu calls, %.3f s waited in them\n",
            (double)(now_ns() - p->started) / 1e9, (unsigned long long)total_calls, (double)total_ns / 1e9);
    fprintf(f, "%-36s %-10s %10s %12s %10s\n", "call", "kind", "calls", "waited_ms", "mean_us");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%-36s %-10s %10llu %12.3f %10.2f\n", lines[i].name, lines[i].kind,
                (unsigned long long)lines[i].calls, (double)lines[i].ns / 1e6,
                (double)lines[i].ns / 1e3 / (double)lines[i].calls);
    fclose(f);
out:
    free(lines);
    free(p->rows);
    free(p->path);
    free(p);
}
