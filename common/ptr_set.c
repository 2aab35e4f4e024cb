/* Open addressing with linear probing, at most half full; a table is replaced by one twice its
 * size, filled before it is published, so a lookup sees either table whole. */
#include "ptr_set.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

struct tdm_ptr_table {
    size_t mask;                    /* slots - 1 (a power of two) */
    struct tdm_ptr_table *older;    /* the table this one replaced */
    const void *slot[];             /* NULL: free; set once (release), never changed */
};

#define FIRST_SLOTS 64

static size_t slot_of(const tdm_ptr_table *t, const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;

    return (size_t)(h >> 32) & t->mask;
}

static const void *key_of(tdm_ptr_key_fn key, const void *q)
{
    return key ? key(q) : q;
}

/* Where the entry of key k is in t, or the free slot where it goes. */
static size_t probe(const tdm_ptr_table *t, tdm_ptr_key_fn key, const void *k)
{
    size_t i = slot_of(t, k);
    const void *q;

    while ((q = __atomic_load_n(&t->slot[i], __ATOMIC_ACQUIRE)) && key_of(key, q) != k)
        i = (i + 1) & t->mask;
    return i;
}

static tdm_ptr_table *table_new(size_t slots, tdm_ptr_table *older, tdm_ptr_key_fn key)
{
    tdm_ptr_table *t;

    if (slots > (SIZE_MAX - sizeof(*t)) / sizeof(t->slot[0]) || !(t = calloc(1, sizeof(*t) + slots * sizeof(t->slot[0]))))
        return NULL;
    t->mask = slots - 1;
    t->older = older;
    if (older)
        for (size_t i = 0; i <= older->mask; i++)
            if (older->slot[i])
                t->slot[probe(t, key, key_of(key, older->slot[i]))] = older->slot[i];
    return t;
}

int tdm_ptr_set_add(tdm_ptr_set *s, const void *p)
{
    tdm_ptr_table *t = s->table;
    const void *k = key_of(s->key, p);
    size_t i;

    if (t && t->slot[probe(t, s->key, k)])
        return 0;
    if (!t || (s->n + 1) * 2 > t->mask + 1) {
        tdm_ptr_table *bigger = table_new(t ? (t->mask + 1) * 2 : FIRST_SLOTS, t, s->key);

        if (!bigger)
            return -ENOMEM;
        __atomic_store_n(&s->table, bigger, __ATOMIC_RELEASE);
        t = bigger;
    }
    i = probe(t, s->key, k);
    __atomic_store_n(&t->slot[i], p, __ATOMIC_RELEASE);
    s->n++;
    return 0;
}

const void *tdm_ptr_set_find(const tdm_ptr_set *s, const void *k)
{
    const tdm_ptr_table *t = __atomic_load_n(&s->table, __ATOMIC_ACQUIRE);

    return k && t ? __atomic_load_n(&t->slot[probe(t, s->key, k)], __ATOMIC_ACQUIRE) : NULL;
}

bool tdm_ptr_set_has(const tdm_ptr_set *s, const void *p)
{
    return tdm_ptr_set_find(s, p) != NULL;
}

void tdm_ptr_set_free(tdm_ptr_set *s)
{
    tdm_ptr_table *t = s->table, *older;

    for (; t; t = older) {
        older = t->older;
        free(t);
    }
    s->table = NULL;
    s->n = 0;
}
