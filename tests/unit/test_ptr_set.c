/* common/ptr_set.c: the lock-free set of the guest's kernel records.  Every pointer added is
 * found, through every growth of the table; nothing else is; adding again adds nothing; a
 * reader beside the adds finds every pointer added before it looked. */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdint.h>

#include "ptr_set.h"

#define N 20000

static char items[N];

Test(ptr_set, finds_what_was_added_through_growth)
{
    tdm_ptr_set s = { 0 };

    cr_assert(!tdm_ptr_set_has(&s, &items[0]), "an empty set has nothing");
    cr_assert(!tdm_ptr_set_has(&s, NULL));
    for (int i = 0; i < N; i++) {
        cr_assert_eq(tdm_ptr_set_add(&s, &items[i]), 0);
        cr_assert(tdm_ptr_set_has(&s, &items[i]), "item %d just added", i);
        cr_assert(!tdm_ptr_set_has(&s, i + 1 < N ? &items[i + 1] : &items[0] - 1), "item %d not yet", i + 1);
    }
    for (int i = 0; i < N; i++)
        cr_assert(tdm_ptr_set_has(&s, &items[i]), "item %d after every growth", i);
    cr_assert_eq(s.n, N);
    cr_assert_eq(tdm_ptr_set_add(&s, &items[7]), 0);
    cr_assert_eq(s.n, N, "a pointer added again is not counted again");
    tdm_ptr_set_free(&s);
    cr_assert(!tdm_ptr_set_has(&s, &items[0]));
}

/* A keyed set (the runtime's kernel records by host stub): found by key, through growth; a
 * second record of the same key is not added (the first registered wins, as a scan found). */
typedef struct keyed {
    const void *key;
} keyed;

static const void *key_of(const void *record)
{
    return ((const keyed *)record)->key;
}

static keyed records[N + 1];

Test(ptr_set, a_keyed_set_finds_records_by_key)
{
    tdm_ptr_set s = { .key = key_of };

    for (int i = 0; i < N; i++) {
        records[i].key = &items[i];
        cr_assert_eq(tdm_ptr_set_add(&s, &records[i]), 0);
    }
    records[N].key = &items[3];
    cr_assert_eq(tdm_ptr_set_add(&s, &records[N]), 0);
    cr_assert_eq(s.n, N, "a second record of a key is not added");
    for (int i = 0; i < N; i++)
        cr_assert_eq(tdm_ptr_set_find(&s, &items[i]), &records[i], "record %d by its key", i);
    cr_assert_null(tdm_ptr_set_find(&s, &records[0]), "a record is not its own key");
    cr_assert_null(tdm_ptr_set_find(&s, NULL));
    tdm_ptr_set_free(&s);
}

typedef struct reader_arg {
    tdm_ptr_set *s;
    int added;   /* atomic: items [0, added) were added */
    int missed;
} reader_arg;

static void *reader(void *p)
{
    reader_arg *a = p;
    int upto;

    while ((upto = __atomic_load_n(&a->added, __ATOMIC_ACQUIRE)) < N)
        for (int i = 0; i < upto; i += 97)
            a->missed += !tdm_ptr_set_has(a->s, &items[i]);
    return NULL;
}

Test(ptr_set, reader_beside_adds_finds_every_earlier_add)
{
    tdm_ptr_set s = { 0 };
    reader_arg a = { .s = &s };
    pthread_t t;

    cr_assert_eq(pthread_create(&t, NULL, reader, &a), 0);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(tdm_ptr_set_add(&s, &items[i]), 0);
        __atomic_store_n(&a.added, i + 1, __ATOMIC_RELEASE);
    }
    pthread_join(t, NULL);
    cr_assert_eq(a.missed, 0);
    tdm_ptr_set_free(&s);
}
