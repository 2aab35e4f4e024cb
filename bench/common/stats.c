/* Summary statistics and size parsing for the benchmark programs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Nearest-rank percentile: the smallest sample with at least p% of the
 * samples at or below it.  No interpolation, so p99 of few samples is
 * simply the largest one. */
static double percentile(const double *sorted, size_t n, double p)
{
    size_t rank = (size_t)((p / 100.0) * (double)n + 0.999999);

    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

bench_stats bench_summarize(double *s, size_t n)
{
    bench_stats st = { 0 };
    double sum = 0;

    if (n == 0)
        return st;
    qsort(s, n, sizeof(*s), cmp_double);
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    st.n = n;
    st.min = s[0];
    st.max = s[n - 1];
    st.mean = sum / (double)n;
    st.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    st.p99 = percentile(s, n, 99.0);
    return st;
}

int bench_parse_bytes(const char *s, size_t *out)
{
    char *end = NULL;
    unsigned long long v;

    if (!s || !*s)
        return -1;
    v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    switch (*end) {
    case 'K': case 'k': v <<= 10; end++; break;
    case 'M': case 'm': v <<= 20; end++; break;
    case 'G': case 'g': v <<= 30; end++; break;
    default: break;
    }
    if (*end || v == 0)
        return -1;
    *out = (size_t)v;
    return 0;
}

void bench_size_label(size_t bytes, char *buf, size_t len)
{
    static const char units[] = { 'G', 'M', 'K' };
    static const unsigned shifts[] = { 30, 20, 10 };

    for (int i = 0; i < 3; i++)
        if (bytes >= ((size_t)1 << shifts[i]) && bytes % ((size_t)1 << shifts[i]) == 0) {
            snprintf(buf, len, "%zu%c", bytes >> shifts[i], units[i]);
            return;
        }
    snprintf(buf, len, "%zu", bytes);
}

int bench_selected(const char *only, const char *name)
{
    size_t len = strlen(name);

    if (!only)
        return 1;
    for (const char *p = only; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == len && strncmp(p, name, n) == 0)
            return 1;
        p += n + (comma != NULL);
    }
    return 0;
}

int bench_known_names(const char *only, const char *const *names, size_t count)
{
    for (const char *p = only; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        int known = 0;
        for (size_t s = 0; s < count; s++)
            known |= strlen(names[s]) == n && strncmp(p, names[s], n) == 0;
        if (!known) {
            fprintf(stderr, "%s: unknown name '%.*s' in --only\n", bench_prog, (int)n, p);
            return 0;
        }
        p += n + (comma != NULL);
    }
    return 1;
}
