/* example-reference NAME: prints exactly the line examples/NAME.cu prints,
 * computed on the host with plain sequential integer arithmetic.  It shares
 * no code with the sim backend's kernel twins (server/sim_kernels/), so a
 * match through Tandem checks them and the whole path independently.
 *
 * The examples use float data only where every value is a small integer, so
 * integer arithmetic here gives the exact same numbers. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 14695981039346656037ull
#define FNV_PRIME 1099511628211ull

/* FNV-1a over a 32-bit value, least significant byte first, as the
 * examples checksum their results. */
static uint64_t fnv1a_u32(uint64_t h, uint32_t u)
{
    for (int k = 0; k < 4; k++) {
        h ^= (u >> (8 * k)) & 0xffu;
        h *= FNV_PRIME;
    }
    return h;
}

static int vector_add(void)
{
    const int n = 1 << 20, scale = 2;
    int64_t sum = 0;
    uint64_t h = FNV_OFFSET;
    int32_t first = 0, last = 0;

    for (int i = 0; i < n; i++) {
        int32_t a = i % 1000, b = (i * 7) % 1001 - 500;
        int32_t c = scale * a + b;
        if (i == 0)
            first = c;
        if (i == n - 1)
            last = c;
        sum += c;
        h = fnv1a_u32(h, (uint32_t)c);
    }
    printf("vector_add n=%d scale=%d c[0]=%d c[%d]=%d sum=%" PRId64 " checksum=%016" PRIx64 "\n", n, scale,
           first, n - 1, last, sum, h);
    return 0;
}

static int increment_loop(void)
{
    const int n = 1 << 16, launches = 1000;
    uint64_t sum = 0, h = FNV_OFFSET;
    uint32_t first = 0, last = 0;

    for (int i = 0; i < n; i++) {
        uint32_t x = (uint32_t)i * 3u + (uint32_t)launches * (1u + (uint32_t)(i % 7));
        if (i == 0)
            first = x;
        if (i == n - 1)
            last = x;
        sum += x;
        h = fnv1a_u32(h, x);
    }
    printf("increment_loop n=%d launches=%d x[0]=%" PRIu32 " x[%d]=%" PRIu32 " sum=%" PRIu64
           " checksum=%016" PRIx64 "\n",
           n, launches, first, n - 1, last, sum, h);
    return 0;
}

static int streams_events(void)
{
    const int n = 1 << 18, half = n / 2;
    uint64_t sum = 0, h = FNV_OFFSET;
    uint32_t first = 0, last = 0;

    for (int i = 0; i < half; i++) {
        uint32_t in_a = (uint32_t)i * 2654435761u, in_b = (uint32_t)(i + half) * 2654435761u;
        uint32_t a = in_a * 3u + (uint32_t)i;                      /* first half, stream 0 */
        uint32_t b = in_b * 5u + ((uint32_t)i + (uint32_t)half);   /* second half, stream 1 */
        uint32_t out = (a ^ (b >> 3)) + 7u * (uint32_t)i;
        if (i == 0)
            first = out;
        if (i == half - 1)
            last = out;
        sum += out;
        h = fnv1a_u32(h, out);
    }
    printf("streams_events n=%d out[0]=%" PRIu32 " out[%d]=%" PRIu32 " sum=%" PRIu64 " checksum=%016" PRIx64 "\n",
           n, first, half - 1, last, sum, h);
    return 0;
}

static int matmul(void)
{
    enum { N = 256, TILE = 16 };
    static int32_t A[N][N], B[N][N], C[N][N];
    int64_t trace = 0, sum = 0;
    uint64_t h = FNV_OFFSET;
    uint32_t positive = 0;

    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            A[i][j] = (i * 3 + j) % 7 - 3;
            B[i][j] = (i + j * 5) % 9 - 4;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int32_t acc = 0;
            for (int k = 0; k < N; k++)
                acc += A[i][k] * B[k][j];
            C[i][j] = acc;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            sum += C[i][j];
            positive += C[i][j] > 0;
            h = fnv1a_u32(h, (uint32_t)C[i][j]);
        }
    for (int i = 0; i < N; i++)
        trace += C[i][i];
    printf("matmul n=%d tile=%d positive=%" PRIu32 " trace=%" PRId64 " sum=%" PRId64 " checksum=%016" PRIx64 "\n",
           N, TILE, positive, trace, sum, h);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(void);
    } examples[] = {
        { "vector_add", vector_add },
        { "increment_loop", increment_loop },
        { "streams_events", streams_events },
        { "matmul", matmul },
    };

    if (argc == 2)
        for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++)
            if (strcmp(argv[1], examples[i].name) == 0)
                return examples[i].run();
    fprintf(stderr, "usage: example-reference vector_add|increment_loop|streams_events|matmul\n");
    return 2;
}
