#include "handle_table.h"

#include <stdlib.h>
#include <string.h>

#define GEN_MASK 0xffffffu

static uint64_t make_id(const tdm_handle_table *t, uint32_t index, uint32_t gen)
{
    return ((uint64_t)t->tag << 56) | ((uint64_t)(gen & GEN_MASK) << 32) | (uint64_t)(index + 1);
}

static tdm_handle_slot *slot_of(const tdm_handle_table *t, uint64_t id, uint32_t *index)
{
    uint32_t low = (uint32_t)id;

    if ((uint8_t)(id >> 56) != t->tag || low == 0 || low > t->n)
        return NULL;
    tdm_handle_slot *s = &t->slots[low - 1];
    if (!s->obj || (s->gen & GEN_MASK) != ((id >> 32) & GEN_MASK))
        return NULL;
    if (index)
        *index = low - 1;
    return s;
}

void tdm_handles_init(tdm_handle_table *t, uint8_t tag)
{
    memset(t, 0, sizeof(*t));
    t->tag = tag;
}

void tdm_handles_release(tdm_handle_table *t)
{
    free(t->slots);
    tdm_handles_init(t, t->tag);
}

uint64_t tdm_handles_add(tdm_handle_table *t, void *obj)
{
    uint32_t index;

    if (!obj)
        return 0;
    if (t->free_head) {
        index = t->free_head - 1;
        t->free_head = t->slots[index].next_free;
    } else {
        if (t->n == t->cap) {
            uint32_t cap = t->cap ? t->cap * 2 : 16;
            tdm_handle_slot *v;
            if (cap > 0x7fffffffu)
                return 0;
            v = realloc(t->slots, cap * sizeof(*v));
            if (!v)
                return 0;
            t->slots = v;
            t->cap = cap;
        }
        index = t->n++;
        t->slots[index].gen = 0;
    }
    t->slots[index].obj = obj;
    t->slots[index].gen++;
    t->slots[index].next_free = 0;
    t->live++;
    return make_id(t, index, t->slots[index].gen);
}

int tdm_handles_add_at(tdm_handle_table *t, uint64_t id, void *obj)
{
    uint32_t low = (uint32_t)id, index;

    if (!obj || (uint8_t)(id >> 56) != t->tag || low == 0 || low > 0x7fffffffu)
        return -1;
    index = low - 1;
    if (index >= t->cap) {
        uint32_t cap = t->cap ? t->cap : 16;
        tdm_handle_slot *v;
        while (cap <= index)
            cap *= 2;
        v = realloc(t->slots, cap * sizeof(*v));
        if (!v)
            return -1;
        t->slots = v;
        t->cap = cap;
    }
    /* Slots skipped over become free ones, as if they had been used. */
    while (t->n <= index) {
        t->slots[t->n].obj = NULL;
        t->slots[t->n].gen = 0;
        t->slots[t->n].next_free = t->free_head;
        t->free_head = ++t->n;
    }
    if (t->slots[index].obj)
        return -1;
    for (uint32_t *p = &t->free_head; *p; p = &t->slots[*p - 1].next_free)
        if (*p == index + 1) {
            *p = t->slots[index].next_free;
            break;
        }
    t->slots[index].obj = obj;
    t->slots[index].gen = (uint32_t)(id >> 32) & GEN_MASK;
    t->slots[index].next_free = 0;
    t->live++;
    return 0;
}

void *tdm_handles_get(const tdm_handle_table *t, uint64_t id)
{
    tdm_handle_slot *s = slot_of(t, id, NULL);

    return s ? s->obj : NULL;
}

void *tdm_handles_remove(tdm_handle_table *t, uint64_t id)
{
    uint32_t index;
    tdm_handle_slot *s = slot_of(t, id, &index);
    void *obj;

    if (!s)
        return NULL;
    obj = s->obj;
    s->obj = NULL;
    s->next_free = t->free_head;
    t->free_head = index + 1;
    t->live--;
    return obj;
}

void tdm_handles_each(const tdm_handle_table *t, void (*fn)(void *obj, uint64_t id, void *arg), void *arg)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->slots[i].obj)
            fn(t->slots[i].obj, make_id(t, i, t->slots[i].gen), arg);
}

void *tdm_handles_pop(tdm_handle_table *t, uint64_t *id)
{
    for (uint32_t i = 0; i < t->n; i++) {
        if (t->slots[i].obj) {
            uint64_t h = make_id(t, i, t->slots[i].gen);
            if (id)
                *id = h;
            return tdm_handles_remove(t, h);
        }
    }
    return NULL;
}
