/* The IPC export table's state machine (server/ipc_exports.h), table-driven:
 * each row is a sequence of steps on one exported allocation (owner
 * session 1) and what each step must answer. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <string.h>

#include "ipc_exports.h"

typedef enum {
    OPEN,        /* session `who` opens the handle: want is its error */
    CLOSE,       /* the importer lets go of one hold: want is 1 if the export died */
    OWNER_DROPS, /* the owner frees: want is 1 if the export died */
    OWNER_ENDS,  /* the owner's session ends */
    KEPT,        /* tdm_ipc_kept_bytes(owner) == want */
    REEXPORT,    /* the owner exports it again: want 1 if the same handle comes back */
    END,
} op;

typedef struct step {
    op op;
    uint64_t who;
    long want;
} step;

typedef struct row {
    const char *name;
    step steps[10];
} row;

enum { OWNER = 1, OTHER = 2, THIRD = 3, MAPPED = 4096 };

static const row rows[] = {
    { "owner frees with nobody holding it: dies at once",
      { { OWNER_DROPS, OWNER, 1 }, { END, 0, 0 } } },
    { "an open holds it past the owner's free; the close kills it",
      { { OPEN, OTHER, 0 }, { OWNER_DROPS, OWNER, 0 }, { KEPT, OWNER, MAPPED }, { CLOSE, OTHER, 1 }, { END, 0, 0 } } },
    { "closing before the owner frees leaves it to the owner",
      { { OPEN, OTHER, 0 }, { CLOSE, OTHER, 0 }, { KEPT, OWNER, 0 }, { OWNER_DROPS, OWNER, 1 }, { END, 0, 0 } } },
    { "the owner cannot open its own export",
      { { OPEN, OWNER, cudaErrorDeviceUninitialized }, { OWNER_DROPS, OWNER, 1 }, { END, 0, 0 } } },
    { "two openers: the last close kills it",
      { { OPEN, OTHER, 0 }, { OPEN, THIRD, 0 }, { OPEN, OTHER, 0 }, { OWNER_DROPS, OWNER, 0 }, { CLOSE, OTHER, 0 },
        { CLOSE, THIRD, 0 }, { CLOSE, OTHER, 1 }, { END, 0, 0 } } },
    { "after the owner's free the handle opens nothing",
      { { OPEN, OTHER, 0 }, { OWNER_DROPS, OWNER, 0 }, { OPEN, THIRD, cudaErrorInvalidResourceHandle },
        { CLOSE, OTHER, 1 }, { END, 0, 0 } } },
    { "kept bytes are nobody's once the owner's session ends",
      { { OPEN, OTHER, 0 }, { OWNER_DROPS, OWNER, 0 }, { KEPT, OWNER, MAPPED }, { OWNER_ENDS, OWNER, 0 },
        { KEPT, OWNER, 0 }, { CLOSE, OTHER, 1 }, { END, 0, 0 } } },
    { "exporting again gives the same handle while the owner holds it",
      { { REEXPORT, OWNER, 1 }, { OPEN, OTHER, 0 }, { REEXPORT, OWNER, 1 }, { OWNER_DROPS, OWNER, 0 },
        { CLOSE, OTHER, 1 }, { END, 0, 0 } } },
};

static void run_row(const row *r)
{
    tdm_ipc_table t;
    tdm_range range = { .addr = 0x200000000000ull, .size = 100, .mapped = MAPPED, .kind = TDM_RANGE_ALLOC };
    uint8_t h[TDM_IPC_HANDLE_LEN], h2[TDM_IPC_HANDLE_LEN];
    tdm_ipc_export *e = NULL, *got;
    bool dead = false;

    cr_assert_eq(tdm_ipc_table_init(&t), 0);
    cr_assert_eq(tdm_ipc_export_mem(&t, OWNER, &range, h, &e), 0, "%s", r->name);
    for (const step *s = r->steps; s->op != END; s++) {
        int i = (int)(s - r->steps);
        switch (s->op) {
        case OPEN:
            cr_expect_eq(tdm_ipc_open(&t, s->who, h, TDM_IPC_MEM, &got), s->want, "%s: step %d", r->name, i);
            break;
        case CLOSE:
            dead = tdm_ipc_close(&t, e);
            cr_expect_eq(dead, s->want, "%s: step %d", r->name, i);
            break;
        case OWNER_DROPS:
            dead = tdm_ipc_owner_drops(&t, e);
            cr_expect_eq(dead, s->want, "%s: step %d", r->name, i);
            break;
        case OWNER_ENDS:
            tdm_ipc_owner_ended(&t, s->who);
            break;
        case KEPT:
            cr_expect_eq(tdm_ipc_kept_bytes(&t, s->who), (uint64_t)s->want, "%s: step %d", r->name, i);
            break;
        case REEXPORT:
            cr_assert_eq(tdm_ipc_export_mem(&t, OWNER, &range, h2, &got), 0);
            cr_expect_eq(memcmp(h, h2, sizeof(h)) == 0 && got == e, s->want, "%s: step %d", r->name, i);
            break;
        case END:
            break;
        }
    }
    cr_expect(dead, "%s: the export must have died", r->name);
    cr_expect_eq(t.n, 0, "%s: a dead export left in the table", r->name);
    if (dead)
        tdm_ipc_export_free(e);
    tdm_ipc_table_destroy(&t);
}

Test(ipc_exports, state_machine)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(&rows[i]);
}

/* Handles: unguessable and bound to their server, kind and export. */
Test(ipc_exports, handles_name_one_export_of_one_server)
{
    tdm_ipc_table t, u;
    tdm_range a = { .addr = 0x1000, .size = 64, .mapped = 4096, .kind = TDM_RANGE_ALLOC };
    tdm_range b = { .addr = 0x2000, .size = 64, .mapped = 4096, .kind = TDM_RANGE_ALLOC };
    uint8_t ha[TDM_IPC_HANDLE_LEN], hb[TDM_IPC_HANDLE_LEN], hu[TDM_IPC_HANDLE_LEN], forged[TDM_IPC_HANDLE_LEN];
    tdm_ipc_export *ea, *eb, *eu, *got;
    int x = 0;

    cr_assert_eq(tdm_ipc_table_init(&t), 0);
    cr_assert_eq(tdm_ipc_table_init(&u), 0);
    cr_assert_eq(tdm_ipc_export_mem(&t, OWNER, &a, ha, &ea), 0);
    cr_assert_eq(tdm_ipc_export_mem(&t, OWNER, &b, hb, &eb), 0);
    cr_assert_eq(tdm_ipc_export_event(&u, OWNER, (tdm_bevent *)&x, cudaEventInterprocess, hu, &eu), 0);
    cr_expect_neq(memcmp(ha + 32, hb + 32, 16), 0, "secrets differ");
    cr_expect_eq(tdm_ipc_open(&t, OTHER, hu, TDM_IPC_EVENT, &got), cudaErrorInvalidResourceHandle, "another server");
    cr_expect_eq(tdm_ipc_open(&u, OTHER, ha, TDM_IPC_MEM, &got), cudaErrorInvalidResourceHandle, "another server");
    cr_expect_eq(tdm_ipc_open(&u, OTHER, hu, TDM_IPC_MEM, &got), cudaErrorInvalidResourceHandle, "wrong kind");
    /* b's id with a's secret. */
    memcpy(forged, hb, sizeof(forged));
    memcpy(forged + 32, ha + 32, 16);
    cr_expect_eq(tdm_ipc_open(&t, OTHER, forged, TDM_IPC_MEM, &got), cudaErrorInvalidResourceHandle, "forged");
    cr_expect_eq(tdm_ipc_open(&t, OTHER, hb, TDM_IPC_MEM, &got), 0);
    cr_expect_eq(got, eb);
    cr_expect_eq(tdm_ipc_open(&u, OTHER, hu, TDM_IPC_EVENT, &got), 0);
    cr_expect_eq(got->ev, (tdm_bevent *)&x);
    cr_expect_eq(tdm_ipc_owned_mem(&t, OWNER, 0x1000), ea);
    cr_expect_null(tdm_ipc_owned_mem(&t, OTHER, 0x1000));
    tdm_ipc_table_destroy(&t);
    tdm_ipc_table_destroy(&u);
}

/* Bounds: exports per owner. */
Test(ipc_exports, exports_per_session_are_bounded)
{
    tdm_ipc_table t;
    uint8_t h[TDM_IPC_HANDLE_LEN];
    tdm_ipc_export *e;
    int i;

    cr_assert_eq(tdm_ipc_table_init(&t), 0);
    for (i = 0; i < TDM_IPC_MAX_EXPORTS_PER_SESSION; i++) {
        tdm_range r = { .addr = 0x10000ull * (uint64_t)(i + 1), .size = 1, .mapped = 4096, .kind = TDM_RANGE_ALLOC };
        cr_assert_eq(tdm_ipc_export_mem(&t, OWNER, &r, h, &e), 0, "export %d", i);
    }
    tdm_range more = { .addr = 0x1ull << 40, .size = 1, .mapped = 4096, .kind = TDM_RANGE_ALLOC };
    cr_expect_eq(tdm_ipc_export_mem(&t, OWNER, &more, h, &e), cudaErrorMemoryAllocation);
    cr_expect_eq(tdm_ipc_export_mem(&t, OTHER, &more, h, &e), 0, "another session has its own bound");
    tdm_ipc_table_destroy(&t);
}

/* ---- pool sharing (issue 14) ---- */

/* Pool exports: one per pool (the same handle again), of their own kind
 * (a pool handle opens no memory, a memory handle no pool), never of
 * another server; a pointer export is marked by the first pool that
 * claims it; nothing of a pool export counts as kept memory. */
Test(ipc_exports, pool_exports_are_their_own_kind)
{
    tdm_ipc_table t, u;
    tdm_range a = { .addr = 0x1000, .size = 64, .mapped = 4096, .kind = TDM_RANGE_ALLOC };
    uint8_t hp[TDM_IPC_HANDLE_LEN], hp2[TDM_IPC_HANDLE_LEN], hq[TDM_IPC_HANDLE_LEN], hm[TDM_IPC_HANDLE_LEN];
    tdm_ipc_export *ep, *ep2, *eq, *em, *got;

    cr_assert_eq(tdm_ipc_table_init(&t), 0);
    cr_assert_eq(tdm_ipc_table_init(&u), 0);
    cr_assert_eq(tdm_ipc_export_pool(&t, OWNER, 0x50aa, hp, &ep), 0);
    cr_assert_eq(tdm_ipc_export_pool(&t, OWNER, 0x50aa, hp2, &ep2), 0);
    cr_expect(ep == ep2 && memcmp(hp, hp2, sizeof(hp)) == 0, "the same pool gives the same handle");
    cr_assert_eq(tdm_ipc_export_pool(&t, OWNER, 0x50bb, hq, &eq), 0);
    cr_expect_neq(ep, eq, "another pool, another export");
    cr_assert_eq(tdm_ipc_export_mem(&t, OWNER, &a, hm, &em), 0);
    cr_expect_eq(tdm_ipc_owned_pool(&t, OWNER, 0x50aa), ep);
    cr_expect_null(tdm_ipc_owned_pool(&t, OTHER, 0x50aa));
    cr_expect_eq(tdm_ipc_open(&t, OTHER, hp, TDM_IPC_MEM, &got), cudaErrorInvalidResourceHandle, "pool as memory");
    cr_expect_eq(tdm_ipc_open(&t, OTHER, hm, TDM_IPC_POOL, &got), cudaErrorInvalidResourceHandle, "memory as pool");
    cr_expect_eq(tdm_ipc_open(&u, OTHER, hp, TDM_IPC_POOL, &got), cudaErrorInvalidResourceHandle, "another server");
    cr_expect_eq(tdm_ipc_open(&t, OWNER, hp, TDM_IPC_POOL, &got), cudaErrorDeviceUninitialized, "its own pool");
    cr_expect_eq(tdm_ipc_open(&t, OTHER, hp, TDM_IPC_POOL, &got), 0);
    cr_expect_eq(got, ep);
    cr_expect_eq(tdm_ipc_mark_pool_ptr(&t, em, 0x50aa), 0x50aa);
    cr_expect_eq(tdm_ipc_mark_pool_ptr(&t, em, 0x50bb), 0x50aa, "the first pool keeps it");
    cr_expect_eq(tdm_ipc_mark_pool_ptr(&t, em, 0), 0x50aa, "reading the mark");
    /* The owner lets go of the pool: no new imports, the open one holds it. */
    cr_expect_eq(tdm_ipc_owner_drops(&t, ep), false);
    cr_expect_eq(tdm_ipc_open(&t, THIRD, hp, TDM_IPC_POOL, &got), cudaErrorInvalidResourceHandle, "let go");
    cr_expect_eq(tdm_ipc_kept_bytes(&t, OWNER), 0, "a pool export keeps no memory");
    cr_expect_eq(tdm_ipc_close(&t, ep), true, "the last holder");
    tdm_ipc_export_free(ep);
    tdm_ipc_table_destroy(&t);
    tdm_ipc_table_destroy(&u);
}
