/* Memory pools shared between sessions of one server (docs/ipc.md,
 * "Sharing memory pools"): examples/pool_share (a pool's file descriptor
 * over a unix socket to a forked process, a pointer exported and imported,
 * written in one process and read in the other) over TCP and shm, Tandem's
 * own answers (forged and foreign handles, a session importing its own
 * pool, an owner freeing first), an import through another server, the
 * end of protection, and guests speaking the protocol: pools that cannot
 * be shared, bad handle types, the import bound. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "takeover_pair.h"
#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"

static th_server srv;

static void up(void)
{
    th_server_start(&srv, NULL);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

static const char *want_common = "child read the parent's values: sum=8796160 (expected 8796160)\n"
                                 "child allocating from the imported pool: cudaErrorInvalidValue\n"
                                 "parent reads the child's values: sum=10434560\n"
                                 "export of a pool made without handle types: cudaErrorInvalidValue\n"
                                 "export with flags: cudaErrorInvalidValue\n"
                                 "export of a pointer of the default pool: cudaErrorInvalidValue\n";

static void expect_example(const char *endpoint, bool checks)
{
    const char *argv[] = { th_example("pool_share"), checks ? "--tandem-checks" : NULL, NULL };
    th_result *r = calloc(1, sizeof(*r));
    char want[2048];

    snprintf(want, sizeof(want), "%s%s", want_common,
             checks ? "a pointer of another pool: cudaErrorInvalidValue\n"
                      "a forged pointer export: cudaErrorInvalidValue\n"
                      "importing its own pool: cudaErrorDeviceUninitialized\n"
                      "importing a file that holds no handle: cudaErrorInvalidValue\n"
                      "child reads memory its owner freed: sum=8415232 (expected 8415232)\n"
                      "child exit: 0\ndone\n"
                    : "child exit: 0\ndone\n");
    cr_assert(r);
    th_run_guest(endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "pool_share (%s) exited %d:\n%s%s", endpoint, r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want, "pool_share (%s) printed\n%s", endpoint, r->out);
    free(r);
}

Test(pool_share, example_over_tcp, .init = up, .fini = down)
{
    expect_example(srv.endpoint, false);
}

Test(pool_share, example_over_shm, .init = up, .fini = down)
{
    expect_example(srv.shm_endpoint, false);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the sessions did not go over shm; see %s", srv.log);
}

Test(pool_share, tandem_answers_over_tcp, .init = up, .fini = down)
{
    expect_example(srv.endpoint, true);
    cr_expect(th_server_log_has(&srv, "names no live pool export of this server"), "see %s", srv.log);
}

Test(pool_share, tandem_answers_over_shm, .init = up, .fini = down)
{
    expect_example(srv.shm_endpoint, true);
}

/* A pool exported through one server and imported through another: the
 * handle names nothing there, the import fails and that server says why. */
Test(pool_share, import_through_another_server_fails_clearly, .init = up, .fini = down)
{
    th_server other;
    th_result *r = calloc(1, sizeof(*r));

    cr_assert(r);
    th_server_start(&other, NULL);
    const char *argv[] = { th_example("pool_share"), "--tandem-cross-server", other.endpoint, NULL };
    th_run_guest(srv.endpoint, argv, 120, r);
    cr_expect_eq(r->status, 0, "pool_share exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect_str_eq(r->out, "import through another server: cudaErrorInvalidValue\n");
    cr_expect(th_server_log_has(&other, "names no live pool export of this server (another server's"),
              "see %s", other.log);
    cr_expect_eq(th_server_stop(&other), 0);
    free(r);
}

/* No standby has the export table: importing a pool ends the importer's
 * protection and the active's log names the call (the exporter's ended
 * already with cudaMemPoolCreate, which the log names: only the first
 * such call of a session is logged). */
Test(pool_share, exporting_and_importing_end_protection)
{
    const char *argv[] = { th_example("pool_share"), NULL };
    th_result *r = calloc(1, sizeof(*r));
    th_pair p;

    th_require_sim();
    cr_assert(r);
    th_pair_start(&p, NULL, NULL);
    th_run_guest(p.active.endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "pool_share exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect(th_server_log_has(&p.active, "TDM_MEM_POOL_CREATE made state no standby can have"),
              "see %s", p.active.log);
    cr_expect(th_server_log_has(&p.active, "TDM_MEM_POOL_IMPORT made state no standby can have"),
              "see %s", p.active.log);
    th_pair_stop(&p);
    free(r);
}

/* ---- guests speaking the protocol ---- */

static tdm_transport *guest(void)
{
    return th_guest_open(srv.endpoint, "pool-share-test");
}

static uint64_t g_pool_create(tdm_transport *t)
{
    tdm_handle_res r;
    tdm_u64 max_size = 0;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEM_POOL_CREATE, (xdrproc_t)xdr_tdm_u64, &max_size,
                              (xdrproc_t)xdr_tdm_handle_res, &r), 0);
    cr_assert_eq(r.err, 0);
    return r.handle;
}

static int g_shareable(tdm_transport *t, uint64_t pool, unsigned types)
{
    tdm_pool_share_args a = { .pool = pool, .types = types };
    int res = -1;

    cr_assert_eq(t->ops->call(t, TDM_MEM_POOL_SHAREABLE, (xdrproc_t)xdr_tdm_pool_share_args, &a,
                              (xdrproc_t)xdr_int, &res), 0);
    return res;
}

static int g_export(tdm_transport *t, uint64_t pool, unsigned type, tdm_ipc_handle *h)
{
    tdm_pool_share_args a = { .pool = pool, .types = type };
    tdm_ipc_handle_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEM_POOL_EXPORT, (xdrproc_t)xdr_tdm_pool_share_args, &a,
                              (xdrproc_t)xdr_tdm_ipc_handle_res, &r), 0);
    if (h)
        *h = r.handle;
    return r.err;
}

static int g_import(tdm_transport *t, tdm_ipc_handle *h, uint64_t *pool)
{
    tdm_handle_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEM_POOL_IMPORT, (xdrproc_t)xdr_tdm_ipc_handle, h,
                              (xdrproc_t)xdr_tdm_handle_res, &r), 0);
    *pool = r.handle;
    return r.err;
}

static int g_release(tdm_transport *t, uint64_t pool)
{
    tdm_handle h = pool;
    int res = -1;

    cr_assert_eq(t->ops->call(t, TDM_MEM_POOL_SHARE_RELEASE, (xdrproc_t)xdr_tdm_handle, &h, (xdrproc_t)xdr_int,
                              &res), 0);
    return res;
}

/* Pools that cannot be shared, types the host does not have, unknown
 * pools, and handles that name nothing. */
Test(pool_share, bad_pools_and_types_are_refused, .init = up, .fini = down)
{
    tdm_transport *a = guest(), *b = guest();
    uint64_t plain = g_pool_create(a), pool = g_pool_create(a), imported;
    tdm_ipc_handle h;

    cr_expect_eq(g_shareable(a, 0x5000000000000077ull, cudaMemHandleTypePosixFileDescriptor), cudaErrorInvalidValue,
                 "an unknown pool");
    cr_expect_eq(g_shareable(a, TDM_DEFAULT_MEM_POOL, cudaMemHandleTypePosixFileDescriptor), cudaErrorInvalidValue,
                 "the default pool");
    cr_expect_eq(g_shareable(a, pool, 0), cudaErrorInvalidValue, "no handle type");
    cr_expect_eq(g_shareable(a, pool, cudaMemHandleTypePosixFileDescriptor), 0);
    cr_expect_eq(g_shareable(a, pool, cudaMemHandleTypeFabric), cudaErrorInvalidValue, "types are fixed");
    cr_expect_eq(g_shareable(b, pool, cudaMemHandleTypePosixFileDescriptor), cudaErrorInvalidValue,
                 "another session's pool");
    cr_expect_eq(g_export(a, plain, cudaMemHandleTypePosixFileDescriptor, NULL), cudaErrorInvalidValue,
                 "a pool made without handle types");
    cr_expect_eq(g_export(a, pool, cudaMemHandleTypeWin32, NULL), cudaErrorInvalidValue, "a type it lacks");
    cr_expect_eq(g_export(b, pool, cudaMemHandleTypePosixFileDescriptor, NULL), cudaErrorInvalidValue,
                 "another session's pool");
    cr_assert_eq(g_export(a, pool, cudaMemHandleTypePosixFileDescriptor, &h), 0);
    for (int i = 0; i < TDM_IPC_HANDLE_BYTES; i++) {
        tdm_ipc_handle bad = h;
        bad.bytes[i] ^= 0x20;
        cr_expect_eq(g_import(b, &bad, &imported), cudaErrorInvalidValue, "byte %d flipped", i);
    }
    cr_expect_eq(g_import(b, &h, &imported), 0);
    cr_expect_eq(g_release(b, imported), 0);
    cr_expect_eq(g_release(b, imported), cudaErrorInvalidValue, "released twice");
    /* The owner lets go of the pool: its handle can no longer be imported. */
    cr_expect_eq(g_release(a, pool), 0);
    cr_expect_eq(g_import(b, &h, &imported), cudaErrorInvalidValue, "a destroyed pool's handle");
    a->ops->close(a);
    b->ops->close(b);
}

/* A session holds at most TDM_SESSION_MAX_POOL_IMPORTS imported pools; a
 * release makes room, and a leaving importer's imports go with it. */
Test(pool_share, imported_pools_are_bounded, .init = up, .fini = down)
{
    tdm_transport *a = guest(), *b = guest();
    uint64_t pool = g_pool_create(a), imported = 0, first = 0;
    tdm_ipc_handle h;

    cr_assert_eq(g_shareable(a, pool, cudaMemHandleTypePosixFileDescriptor), 0);
    cr_assert_eq(g_export(a, pool, cudaMemHandleTypePosixFileDescriptor, &h), 0);
    for (int i = 0; i < 1024; i++) {
        cr_assert_eq(g_import(b, &h, &imported), 0, "import %d", i);
        if (!first)
            first = imported;
    }
    cr_expect_eq(g_import(b, &h, &imported), cudaErrorMemoryAllocation, "past the bound");
    cr_expect(th_server_log_has(&srv, "already holds 1024 imported pools"), "see %s", srv.log);
    cr_expect_eq(g_release(b, first), 0);
    cr_expect_eq(g_import(b, &h, &imported), 0, "a release makes room");
    b->ops->close(b);
    tdm_transport *c = guest();
    cr_expect_eq(g_import(c, &h, &imported), 0, "the owner's export outlives an importer");
    c->ops->close(c);
    a->ops->close(a);
}
