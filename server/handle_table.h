/* Logical handles: what a guest holds instead of a pointer.  An id carries a
 * type tag, a generation and a slot index, so a stale, forged or wrong-typed
 * id is refused instead of reaching freed or foreign memory.  Each session
 * has its own tables, so one guest can never name another guest's objects. */
#ifndef TANDEM_SERVER_HANDLE_TABLE_H
#define TANDEM_SERVER_HANDLE_TABLE_H

#include <stdint.h>

typedef struct tdm_handle_slot {
    void *obj;
    uint32_t gen;
    uint32_t next_free;
} tdm_handle_slot;

typedef struct tdm_handle_table {
    uint8_t tag;
    tdm_handle_slot *slots;
    uint32_t n, cap, free_head;   /* free_head 0 = none; slot i+1 is index i */
    uint32_t live;
} tdm_handle_table;

void tdm_handles_init(tdm_handle_table *t, uint8_t tag);
void tdm_handles_release(tdm_handle_table *t);
/* Returns the new id, never 0; 0 when out of memory. */
uint64_t tdm_handles_add(tdm_handle_table *t, void *obj);
/* Puts obj under exactly this id (a standby reproducing its active's
 * handles).  0, or -1 if the id is not this table's or its slot is taken. */
int tdm_handles_add_at(tdm_handle_table *t, uint64_t id, void *obj);
void *tdm_handles_get(const tdm_handle_table *t, uint64_t id);
void *tdm_handles_remove(tdm_handle_table *t, uint64_t id);
/* Calls fn on every live object (it may not add or remove). */
void tdm_handles_each(const tdm_handle_table *t, void (*fn)(void *obj, uint64_t id, void *arg), void *arg);
/* Removes and returns any live object with its id; NULL when empty. */
void *tdm_handles_pop(tdm_handle_table *t, uint64_t *id);

#endif
