/* CUDA IPC between sessions of one server (docs/ipc.md): examples/ipc (the
 * simpleIPC pattern: fork+exec'd children, handles through shm_open) over
 * TCP and shm, and guests speaking the protocol directly with forged, stale
 * and foreign handles, memory freed while opened elsewhere, owners that
 * leave, and the bounds. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "raw_calls.h"
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

/* ---- examples/ipc ---- */

static void expect_ipc_example(const char *endpoint, int children)
{
    char n[8], want[4096], *w = want;
    const char *argv[] = { th_example("ipc"), n, NULL };
    th_result *r = calloc(1, sizeof(*r));

    snprintf(n, sizeof(n), "%d", children);
    w += sprintf(w, "handle of the same allocation twice: same\n"
                    "opening its own handle: cudaErrorDeviceUninitialized\n"
                    "interprocess event with timing: cudaErrorInvalidValue\n"
                    "handle of an event without cudaEventInterprocess: cudaErrorInvalidResourceHandle\n");
    for (int i = 0; i < children; i++)
        w += sprintf(w, "child %d: buffer verified, reopened: same pointer, cudaFree of opened memory: "
                        "cudaErrorInvalidValue, closed twice: cudaErrorInvalidValue\n", i);
    for (int i = 0; i < children; i++)
        w += sprintf(w, "buffer %d in the parent: as ordered\n", i);
    sprintf(w, "forked child without exec: cudaErrorInitializationError\nPASSED\n");
    th_run_guest(endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "ipc (%s) exited %d:\n%s%s", endpoint, r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want, "ipc (%s) printed\n%s", endpoint, r->out);
    cr_expect(strstr(r->err, "forked from one with a Tandem session") != NULL, "stderr:\n%s", r->err);
    free(r);
}

Test(ipc, example_over_tcp, .init = up, .fini = down)
{
    expect_ipc_example(srv.endpoint, 2);
}

Test(ipc, example_over_shm, .init = up, .fini = down)
{
    expect_ipc_example(srv.shm_endpoint, 3);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the sessions did not go over shm; see %s", srv.log);
}

/* No standby has the export table: exporting ends the exporter's
 * protection, opening the opener's, and the active's log names the calls;
 * the program itself runs as without a standby. */
Test(ipc, exporting_and_opening_end_protection)
{
    const char *argv[] = { th_example("ipc"), NULL };
    th_result *r = calloc(1, sizeof(*r));
    th_pair p;

    th_require_sim();
    cr_assert(r);
    th_pair_start(&p, NULL, NULL);
    th_run_guest(p.active.endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "ipc exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect(strstr(r->out, "PASSED") != NULL, "ipc printed\n%s", r->out);
    cr_expect(th_server_log_has(&p.active, "TDM_IPC_GET_MEM_HANDLE made state no standby can have"),
              "the exporter's protection; see %s", p.active.log);
    cr_expect(th_server_log_has(&p.active, "TDM_IPC_OPEN_MEM_HANDLE made state no standby can have"),
              "the openers' protection; see %s", p.active.log);
    th_pair_stop(&p);
    free(r);
}

/* ---- guests speaking the protocol ---- */

static tdm_transport *guest(void)
{
    return th_guest_open(srv.endpoint, "ipc-test");
}

static int th_call_int(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a)
{
    int res = -1;
    cr_assert_eq(t->ops->call(t, proc, xa, a, (xdrproc_t)xdr_int, &res), 0, "transport failed");
    return res;
}

static int g_free(tdm_transport *t, uint64_t addr)
{
    return th_call_int(t, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &addr);
}

static void g_write(tdm_transport *t, uint64_t dst, const void *src, uint32_t n)
{
    tdm_memcpy_htod_args a = { .dst = dst, .stream = 0 };
    a.data.data_val = (char *)src;
    a.data.data_len = n;
    cr_assert_eq(t->ops->post(t, TDM_MEMCPY_HTOD, (xdrproc_t)xdr_tdm_memcpy_htod_args, &a), 0);
}

static int g_read(tdm_transport *t, uint64_t src, void *dst, uint32_t n)
{
    tdm_memcpy_dtoh_args a = { .src = src, .size = n, .stream = 0 };
    tdm_memcpy_dtoh_res r;
    int err;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEMCPY_DTOH, (xdrproc_t)xdr_tdm_memcpy_dtoh_args, &a,
                              (xdrproc_t)xdr_tdm_memcpy_dtoh_res, &r), 0);
    err = r.err;
    if (!err)
        memcpy(dst, r.data.data_val, n);
    xdr_free((xdrproc_t)xdr_tdm_memcpy_dtoh_res, (char *)&r);
    return err;
}

static int get_mem_handle(tdm_transport *t, uint64_t addr, tdm_ipc_handle *h)
{
    tdm_ipc_handle_res r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_IPC_GET_MEM_HANDLE, (xdrproc_t)xdr_tdm_addr, &addr,
                              (xdrproc_t)xdr_tdm_ipc_handle_res, &r), 0);
    *h = r.handle;
    return r.err;
}

static int open_mem(tdm_transport *t, const tdm_ipc_handle *h, unsigned flags, uint64_t *addr)
{
    tdm_ipc_open_mem_args a = { .handle = *h, .flags = flags };
    tdm_ipc_open_mem_res r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_IPC_OPEN_MEM_HANDLE, (xdrproc_t)xdr_tdm_ipc_open_mem_args, &a,
                              (xdrproc_t)xdr_tdm_ipc_open_mem_res, &r), 0);
    *addr = r.addr;
    return r.err;
}

static int close_mem(tdm_transport *t, uint64_t addr)
{
    return th_call_int(t, TDM_IPC_CLOSE_MEM_HANDLE, (xdrproc_t)xdr_tdm_addr, &addr);
}

static uint64_t event_create(tdm_transport *t, unsigned flags)
{
    tdm_handle_res r;
    u_int f = flags;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_EVENT_CREATE, (xdrproc_t)xdr_u_int, &f, (xdrproc_t)xdr_tdm_handle_res, &r), 0);
    cr_assert_eq(r.err, 0);
    return r.handle;
}

static int get_event_handle(tdm_transport *t, uint64_t event, tdm_ipc_handle *h)
{
    tdm_ipc_handle_res r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_IPC_GET_EVENT_HANDLE, (xdrproc_t)xdr_tdm_handle, &event,
                              (xdrproc_t)xdr_tdm_ipc_handle_res, &r), 0);
    *h = r.handle;
    return r.err;
}

static int open_event(tdm_transport *t, const tdm_ipc_handle *h, uint64_t *event)
{
    tdm_handle_res r;
    tdm_ipc_handle a = *h;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_IPC_OPEN_EVENT_HANDLE, (xdrproc_t)xdr_tdm_ipc_handle, &a,
                              (xdrproc_t)xdr_tdm_handle_res, &r), 0);
    *event = r.handle;
    return r.err;
}

static int event_call(tdm_transport *t, uint32_t proc, uint64_t event)
{
    return th_call_int(t, proc, (xdrproc_t)xdr_tdm_handle, &event);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 13 + seed);
}

/* A handle another session opens sees the exporter's bytes at the
 * exporter's address, and writes the exporter reads back. */
Test(ipc_protocol, opened_memory_is_the_exporters, .init = up, .fini = down)
{
    tdm_transport *a = guest(), *b = guest();
    unsigned char in[4096], out[4096];
    uint64_t addr = th_raw_malloc(a, sizeof(in)), opened = 0;
    tdm_ipc_handle h;

    fill(in, sizeof(in), 1);
    g_write(a, addr, in, sizeof(in));
    /* Sessions' streams are not ordered with each other: the write is
     * done before another process reads (natively, by a synchronize or
     * an IPC event). */
    cr_assert_eq(th_call_int(a, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL), 0);
    cr_assert_eq(get_mem_handle(a, addr, &h), 0);
    cr_assert_eq(open_mem(b, &h, cudaIpcMemLazyEnablePeerAccess, &opened), 0);
    cr_expect_eq(opened, addr);
    cr_assert_eq(g_read(b, opened, out, sizeof(out)), 0);
    cr_expect_eq(memcmp(in, out, sizeof(in)), 0);
    fill(in, sizeof(in), 2);
    g_write(b, opened + 0, in, sizeof(in));
    cr_assert_eq(th_call_int(b, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL), 0);
    cr_assert_eq(g_read(a, addr, out, sizeof(out)), 0);
    cr_expect_eq(memcmp(in, out, sizeof(in)), 0);
    /* Past its end is still refused: the import is checked like any range. */
    cr_expect_eq(g_read(b, opened + 1, out, sizeof(out)), cudaErrorInvalidValue);
    cr_expect_eq(close_mem(b, opened), 0);
    cr_expect_eq(g_read(b, opened, out, 16), cudaErrorInvalidValue, "closed memory is no longer the opener's");
    a->ops->close(a);
    b->ops->close(b);
}

/* Forged, cut, foreign-kind, another server's and stale handles name
 * nothing; the owner cannot open its own; flags are checked. */
Test(ipc_protocol, bad_handles_are_refused, .init = up, .fini = down)
{
    tdm_transport *a = guest(), *b = guest();
    uint64_t addr = th_raw_malloc(a, 4096), other = th_raw_malloc(a, 4096), got = 0;
    tdm_ipc_handle h, bad;

    cr_assert_eq(get_mem_handle(a, addr, &h), 0);
    memset(&bad, 0, sizeof(bad));
    cr_expect_eq(open_mem(b, &bad, 1, &got), cudaErrorInvalidResourceHandle, "all zero");
    for (int i = 0; i < 64; i++) {
        bad = h;
        bad.bytes[i] ^= 0x01;  /* every byte matters: magic, kind, nonce, id, secret, padding */
        cr_expect_eq(open_mem(b, &bad, 1, &got), cudaErrorInvalidResourceHandle, "byte %d flipped", i);
    }
    bad = h;
    memset(bad.bytes + 32, 0, 32);     /* its secret cut off */
    cr_expect_eq(open_mem(b, &bad, 1, &got), cudaErrorInvalidResourceHandle);
    uint64_t ev = event_create(a, cudaEventInterprocess | cudaEventDisableTiming);
    cr_assert_eq(get_event_handle(a, ev, &bad), 0);
    cr_expect_eq(open_mem(b, &bad, 1, &got), cudaErrorInvalidResourceHandle, "an event's handle is no memory's");
    cr_expect_eq(open_event(b, &h, &got), cudaErrorInvalidResourceHandle, "a memory handle is no event's");
    cr_expect_eq(open_mem(a, &h, 1, &got), cudaErrorDeviceUninitialized, "its own export");
    cr_expect_eq(open_mem(b, &h, 2, &got), cudaErrorInvalidValue, "unknown flags");
    /* Not the base of an allocation, not an allocation, an import. */
    cr_expect_eq(get_mem_handle(a, addr + 256, &bad), cudaErrorInvalidValue);
    cr_expect_eq(get_mem_handle(b, other, &bad), cudaErrorInvalidValue, "another session's memory");
    cr_assert_eq(open_mem(b, &h, 1, &got), 0);
    cr_expect_eq(get_mem_handle(b, got, &bad), cudaErrorInvalidValue, "an import is not the opener's to export");
    cr_expect_eq(close_mem(b, got), 0);
    /* Stale: freed with nobody holding it, its handle names nothing. */
    cr_assert_eq(g_free(a, addr), 0);
    cr_expect_eq(open_mem(b, &h, 1, &got), cudaErrorInvalidResourceHandle, "stale");
    a->ops->close(a);
    b->ops->close(b);
}

/* Another server's handle: the same bytes mean nothing here. */
Test(ipc_protocol, another_servers_handle_is_refused, .init = up, .fini = down)
{
    th_server other;
    tdm_transport *a, *b = guest();
    tdm_ipc_handle h;
    uint64_t got;

    th_server_start(&other, NULL);
    a = th_guest_open(other.endpoint, "ipc-test-other");
    cr_assert_eq(get_mem_handle(a, th_raw_malloc(a, 4096), &h), 0);
    cr_expect_eq(open_mem(b, &h, 1, &got), cudaErrorInvalidResourceHandle);
    a->ops->close(a);
    b->ops->close(b);
    cr_expect_eq(th_server_stop(&other), 0);
}

/* cudaFree of opened memory, closing what is not open: refused, nothing
 * freed.  A third session cannot free or close another's import. */
Test(ipc_protocol, imports_are_not_freed_by_the_wrong_call_or_session, .init = up, .fini = down)
{
    tdm_transport *a = guest(), *b = guest(), *c = guest();
    unsigned char in[1024], out[1024];
    uint64_t addr = th_raw_malloc(a, sizeof(in)), got = 0, mine = th_raw_malloc(b, 64);
    tdm_ipc_handle h;

    fill(in, sizeof(in), 3);
    g_write(a, addr, in, sizeof(in));
    cr_assert_eq(th_call_int(a, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL), 0);
    cr_assert_eq(get_mem_handle(a, addr, &h), 0);
    cr_assert_eq(open_mem(b, &h, 1, &got), 0);
    cr_expect_eq(g_free(b, got), cudaErrorInvalidValue);
    cr_expect_eq(g_free(c, got), cudaErrorInvalidValue);
    cr_expect_eq(close_mem(c, got), cudaErrorInvalidValue);
    cr_expect_eq(close_mem(b, mine), cudaErrorInvalidValue, "its own allocation is not an import");
    cr_expect_eq(close_mem(b, got + 64), cudaErrorInvalidValue, "not the start of an import");
    cr_assert_eq(g_read(b, got, out, sizeof(out)), 0);
    cr_expect_eq(memcmp(in, out, sizeof(in)), 0);
    /* Opened twice: the same address, closed twice. */
    uint64_t again = 0;
    cr_assert_eq(open_mem(b, &h, 1, &again), 0);
    cr_expect_eq(again, got);
    cr_expect_eq(close_mem(b, got), 0);
    cr_expect_eq(g_read(b, got, out, 16), 0, "one reference left");
    cr_expect_eq(close_mem(b, got), 0);
    cr_expect_eq(close_mem(b, got), cudaErrorInvalidValue, "closed more than opened");
    a->ops->close(a);
    b->ops->close(b);
    c->ops->close(c);
}

/* The owner let go of the export (its session may still be ending on the
 * server): the handle soon names nothing. */
static void expect_stale_soon(tdm_transport *t, const tdm_ipc_handle *h)
{
    uint64_t got = 0;
    int err = 0;

    for (int i = 0; i < 100 && (err = open_mem(t, h, 1, &got)) == 0; i++) {
        close_mem(t, got);
        usleep(50 * 1000);
    }
    cr_expect_eq(err, cudaErrorInvalidResourceHandle, "let go: it cannot be opened again");
}

/* The owner frees (or leaves) while another session has it open: the
 * importer's memory stays valid and is never handed to anyone else until
 * the importer closes it. */
static void owner_lets_go_while_opened(bool owner_leaves)
{
    tdm_transport *a = guest(), *b = guest();
    unsigned char in[4096], out[4096];
    uint64_t addr = th_raw_malloc(a, sizeof(in)), got = 0;
    tdm_ipc_handle h;

    fill(in, sizeof(in), 4);
    g_write(a, addr, in, sizeof(in));
    cr_assert_eq(th_call_int(a, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL), 0);
    cr_assert_eq(get_mem_handle(a, addr, &h), 0);
    cr_assert_eq(open_mem(b, &h, 1, &got), 0);
    if (owner_leaves) {
        a->ops->close(a);
        a = guest();
    } else {
        cr_assert_eq(g_free(a, addr), 0);
        cr_expect_eq(g_read(a, addr, out, 16), cudaErrorInvalidValue, "freed: no longer the owner's");
    }
    /* New allocations, of the old owner or anyone, do not get its address. */
    for (int i = 0; i < 8; i++) {
        uint64_t n = th_raw_malloc(a, sizeof(in));
        cr_expect(n + sizeof(in) <= got || n >= got + sizeof(in), "allocation %#llx reuses opened memory",
                  (unsigned long long)n);
        g_write(a, n, out, sizeof(out));
    }
    cr_assert_eq(g_read(b, got, out, sizeof(out)), 0);
    cr_expect_eq(memcmp(in, out, sizeof(in)), 0, "the opened memory changed");
    expect_stale_soon(a, &h);
    cr_expect_eq(close_mem(b, got), 0);
    cr_expect_eq(g_read(b, got, out, 16), cudaErrorInvalidValue);
    a->ops->close(a);
    b->ops->close(b);
}

Test(ipc_protocol, owner_frees_while_opened, .init = up, .fini = down)
{
    owner_lets_go_while_opened(false);
}

Test(ipc_protocol, owner_leaves_while_opened, .init = up, .fini = down)
{
    owner_lets_go_while_opened(true);
}

/* An importer that leaves without closing lets go of everything; the owner
 * frees as usual afterwards. */
Test(ipc_protocol, importer_leaving_closes_its_imports, .init = up, .fini = down)
{
    tdm_transport *a = guest(), *b = guest();
    uint64_t addr = th_raw_malloc(a, 4096), got = 0, ev, bev = 0;
    tdm_ipc_handle h, eh;

    cr_assert_eq(get_mem_handle(a, addr, &h), 0);
    ev = event_create(a, cudaEventInterprocess | cudaEventDisableTiming);
    cr_assert_eq(get_event_handle(a, ev, &eh), 0);
    cr_assert_eq(open_mem(b, &h, 1, &got), 0);
    cr_assert_eq(open_mem(b, &h, 1, &got), 0);
    cr_assert_eq(open_event(b, &eh, &bev), 0);
    b->ops->close(b);
    b = guest();
    cr_expect_eq(event_call(a, TDM_EVENT_DESTROY, ev), 0);
    cr_expect_eq(g_free(a, addr), 0);
    cr_expect_eq(open_mem(b, &h, 1, &got), cudaErrorInvalidResourceHandle);
    a->ops->close(a);
    b->ops->close(b);
}

/* Events: only interprocess ones; the opener's handle names the same
 * event, which outlives the owner's destroy until the opener's. */
Test(ipc_protocol, shared_events, .init = up, .fini = down)
{
    tdm_transport *a = guest(), *b = guest();
    uint64_t plain = event_create(a, cudaEventDisableTiming), ev = event_create(a, cudaEventInterprocess |
                                                                                       cudaEventDisableTiming);
    uint64_t bev = 0, bev2 = 0;
    tdm_ipc_handle h, h2;
    tdm_event_record_args rec = { 0 };

    cr_expect_eq(get_event_handle(a, plain, &h), cudaErrorInvalidResourceHandle);
    cr_expect_eq(get_event_handle(a, 0x1234, &h), cudaErrorInvalidResourceHandle);
    cr_assert_eq(get_event_handle(a, ev, &h), 0);
    cr_assert_eq(get_event_handle(a, ev, &h2), 0);
    cr_expect_eq(memcmp(&h, &h2, sizeof(h)), 0, "the same event's handle twice");
    cr_expect_eq(open_event(a, &h, &bev), cudaErrorDeviceUninitialized);
    cr_assert_eq(open_event(b, &h, &bev), 0);
    cr_assert_eq(open_event(b, &h, &bev2), 0);
    cr_expect_neq(bev, bev2);
    cr_expect_eq(get_event_handle(b, bev, &h2), cudaErrorInvalidResourceHandle, "an opened event is the owner's");
    rec.event = bev;
    rec.stream = 0;
    cr_assert_eq(b->ops->post(b, TDM_EVENT_RECORD, (xdrproc_t)xdr_tdm_event_record_args, &rec), 0);
    /* Past b's send buffer, so the record is queued before a looks. */
    cr_assert_eq(th_call_int(b, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL), 0);
    cr_expect_eq(event_call(a, TDM_EVENT_SYNCHRONIZE, ev), 0);
    cr_expect_eq(event_call(a, TDM_EVENT_QUERY, ev), 0);
    cr_expect_eq(event_call(a, TDM_EVENT_DESTROY, ev), 0);
    uint64_t none = 0;
    cr_expect_eq(open_event(b, &h, &none), cudaErrorInvalidResourceHandle, "the owner destroyed it");
    cr_expect_eq(event_call(b, TDM_EVENT_SYNCHRONIZE, bev), 0, "still the opener's");
    cr_expect_eq(event_call(b, TDM_EVENT_DESTROY, bev), 0);
    cr_expect_eq(event_call(b, TDM_EVENT_QUERY, bev2), 0);
    cr_expect_eq(event_call(b, TDM_EVENT_DESTROY, bev2), 0);
    cr_expect_eq(event_call(b, TDM_EVENT_DESTROY, bev2), cudaErrorInvalidResourceHandle);
    a->ops->close(a);
    b->ops->close(b);
}

/* Bounds: opens per session, exports per session. */
Test(ipc_protocol, limits, .init = up, .fini = down)
{
    tdm_transport *a = guest(), *b = guest();
    uint64_t addr = th_raw_malloc(a, 4096), got = 0;
    tdm_ipc_handle h;
    int err = 0, i;

    cr_assert_eq(get_mem_handle(a, addr, &h), 0);
    for (i = 0; i < 5000 && !(err = open_mem(b, &h, 1, &got)); i++)
        ;
    cr_expect_eq(i, 4096, "opened %d times", i);
    cr_expect_eq(err, cudaErrorMemoryAllocation);
    int exported = 1;  /* addr */
    while (exported < 2000 && !(err = get_mem_handle(a, th_raw_malloc(a, 512), &h)))
        exported++;
    cr_expect_eq(exported, 1024, "exported %d", exported);
    cr_expect_eq(err, cudaErrorMemoryAllocation);
    cr_expect(th_server_log_has(&srv, "no more exports"), "see %s", srv.log);
    a->ops->close(a);
    b->ops->close(b);
}

static int g_malloc_err(tdm_transport *t, uint64_t size)
{
    tdm_malloc_res r;
    u_quad_t sz = size;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_u_quad_t, &sz, (xdrproc_t)xdr_tdm_malloc_res, &r), 0);
    return r.err;
}

/* Memory the owner freed while another session has it open stays in the
 * owner's quota until the last close. */
Test(ipc_protocol, kept_memory_stays_in_the_owners_quota)
{
    const char *extra[] = { "--session-quota", "8M", NULL };
    tdm_transport *a, *b;
    uint64_t addr, got = 0;
    tdm_ipc_handle h;

    th_server_start(&srv, extra);
    a = guest();
    b = guest();
    addr = th_raw_malloc(a, 4 << 20);
    cr_assert_eq(get_mem_handle(a, addr, &h), 0);
    cr_assert_eq(open_mem(b, &h, 1, &got), 0);
    cr_assert_eq(g_free(a, addr), 0);
    cr_expect_eq(g_malloc_err(a, 4 << 20), 0, "4 MiB kept + 4 MiB new fit in 8 MiB");
    cr_expect_eq(g_malloc_err(a, 4 << 20), cudaErrorMemoryAllocation, "the kept 4 MiB still count");
    cr_expect_eq(close_mem(b, got), 0);
    cr_expect_eq(g_malloc_err(a, 4 << 20), 0, "closed: the kept memory is gone from the quota");
    a->ops->close(a);
    b->ops->close(b);
    down();
}
