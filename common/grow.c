#include "grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int tdm_grow(void *vp, size_t *cap, size_t need, size_t size, size_t first)
{
    size_t ncap = *cap ? *cap : (first ? first : 1);
    void *v;

    if (need <= *cap)
        return 0;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return -ENOMEM;
        ncap *= 2;
    }
    if (size && ncap > SIZE_MAX / size)
        return -ENOMEM;
    /* vp points at the caller's array pointer, of whatever element type. */
    memcpy(&v, vp, sizeof(v));
    v = realloc(v, ncap * size);
    if (!v)
        return -ENOMEM;
    memcpy(vp, &v, sizeof(v));
    *cap = ncap;
    return 0;
}
