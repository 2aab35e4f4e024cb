/* lud host reference: unblocked right-looking elimination, one pivot at a
 * time over the whole matrix.  Modular arithmetic is exact, so any correct
 * order of the same updates gives the same matrix as the blocked kernels. */
#include <string.h>

#include "lud.h"

int lud_run_host(void *state)
{
    lud_state *s = state;
    size_t n = (size_t)s->n;
    uint32_t *a = s->out;

    memcpy(a, s->in, n * n * 4);
    for (size_t i = 0; i < n; i++) {
        uint32_t inv = lud_inverse(a[i * n + i]);
        for (size_t r = i + 1; r < n; r++) {
            uint32_t l = lud_mulmod(a[r * n + i], inv);
            a[r * n + i] = l;
            for (size_t c = i + 1; c < n; c++)
                a[r * n + c] = lud_submod(a[r * n + c], lud_mulmod(l, a[i * n + c]));
        }
    }
    return 0;
}
