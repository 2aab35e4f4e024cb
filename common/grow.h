/* Growable arrays: the one way every layer makes room in an array it
 * appends to (doubling, so n appends cost O(n) copies in all). */
#ifndef TANDEM_COMMON_GROW_H
#define TANDEM_COMMON_GROW_H

#include <stddef.h>

/* Makes room for at least `need` elements of `size` bytes in the array
 * *vp whose capacity is *cap: the capacity doubles, from `first` when the
 * array is empty, until it holds `need`.  0, or -ENOMEM (overflow or no
 * memory), with *vp and *cap as they were. */
int tdm_grow(void *vp, size_t *cap, size_t need, size_t size, size_t first);

#endif
