/* An append-only set of pointers whose lookups take no lock (issue: guest CPU per driver call,
 * docs/benchmarks.md "Driver calls").  For records a layer never frees, such as the guest's
 * kernel records: a handle the program passes is checked against the set in a few
 * instructions however many records exist, where a scan under a lock grew with them.
 *
 * Adds are serialized by the caller (its own lock); a lookup may run beside them, without
 * the lock, and finds every pointer whose add completed before the lookup began.  Nothing is
 * removed.  A table the set outgrows stays allocated, on a list, for lookups that may still be
 * reading it, until tdm_ptr_set_free. */
#ifndef TANDEM_COMMON_PTR_SET_H
#define TANDEM_COMMON_PTR_SET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tdm_ptr_table tdm_ptr_table;

/* A keyed set holds records and is searched by a pointer each record names (its key), as
 * the runtime's kernel records by their host stubs: a record's key is set before it is added
 * and never changes. */
typedef const void *(*tdm_ptr_key_fn)(const void *record);

typedef struct tdm_ptr_set {
    tdm_ptr_table *table;   /* the current table (read with acquire), NULL while empty */
    size_t n;               /* pointers added; the caller's lock */
    tdm_ptr_key_fn key;     /* NULL: a pointer is its own key */
} tdm_ptr_set;

/* Adds p (not NULL); a p already there (of a keyed set: a record of the same key) is not
 * added again.  0, or -ENOMEM with the set as it was.  Under the caller's lock. */
int tdm_ptr_set_add(tdm_ptr_set *s, const void *p);
/* Whether p was added (of a keyed set: a record whose key is p).  Takes no lock. */
bool tdm_ptr_set_has(const tdm_ptr_set *s, const void *p);
/* The record added whose key is k (of a set without keys: k itself if added), or NULL.
 * Takes no lock. */
const void *tdm_ptr_set_find(const tdm_ptr_set *s, const void *k);
/* Frees every table; no lookup may run beside it or after it. */
void tdm_ptr_set_free(tdm_ptr_set *s);

#endif
