/* Mipmapped arrays end to end (docs/memory-layouts.md "Mipmapped arrays"):
 * mipmap-check through a real tandem-server on the sim backend, over TCP and
 * shared memory, must print what a native run prints; and the server's own
 * checks, speaking the protocol directly (formats, flags, shapes, handles
 * of another session, levels past the last, freeing a level, the quota,
 * what is left when the session ends). */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"

static th_server srv;

static void up(void)
{
    th_server_start(&srv, NULL);
}

static void up_quota(void)
{
    const char *args[] = { "--session-quota", "4M", NULL };
    th_server_start(&srv, args);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

static const char want[] =
    "level 0: 64 x 40 x 0, 32-bit kind 2\n"
    "level 1: 32 x 20 x 0, 32-bit kind 2\n"
    "level 2: 16 x 10 x 0, 32-bit kind 2\n"
    "level 3: 8 x 5 x 0, 32-bit kind 2\n"
    "level 4: 4 x 2 x 0, 32-bit kind 2\n"
    "level 5: 2 x 1 x 0, 32-bit kind 2\n"
    "level 6: 1 x 1 x 0, 32-bit kind 2\n"
    "level past the last (clamped count): cudaErrorInvalidValue\n"
    "levels of a 64 x 40 mipmapped array asked for 12: 7\n"
    "level 0 read back: ok\n"
    "level 1 read back: ok\n"
    "level 2 read back: ok\n"
    "level 3 read back: ok\n"
    "level 4 read back: ok\n"
    "level 5 read back: ok\n"
    "level 6 read back: ok\n"
    "mip chain checksum: 170269.4058\n"
    "texture over a mipmapped array: type 1, the same mipmapped array: yes\n"
    "sparse properties of a mipmapped array made without cudaArraySparse: cudaErrorInvalidValue\n"
    "memory requirements of a mipmapped array made without cudaArrayDeferredMapping: cudaErrorInvalidValue\n"
    "a level of no mipmapped array: cudaErrorInvalidResourceHandle\n"
    "3D level 0 (16 x 8 x 4) round trip: ok\n"
    "3D level 1 (8 x 4 x 2) round trip: ok\n"
    "3D level 2 (4 x 2 x 1) round trip: ok\n"
    "cudaMemcpyArrayToArray across rows of unequal width: ok\n"
    "cudaMemcpyArrayToArray of whole rows: ok\n"
    "sparse properties of an array made without cudaArraySparse: cudaErrorInvalidValue\n"
    "memory requirements of an array made without cudaArrayDeferredMapping: cudaErrorInvalidValue\n"
    "plane 0 of a single-planar array: cudaErrorInvalidValue\n"
    "cudaMemcpy3DPeer through an array: ok\n"
    "cudaMemcpy3DPeer at positions: ok\n"
    "cudaMemcpy3DPeer to device 1: cudaErrorInvalidDevice\n"
    "cudaMemcpy3DPeerAsync from device -1: cudaErrorInvalidDevice\n"
    "all mipmap checks passed\n";

static void expect_mipmap_check(const char *endpoint)
{
    const char *argv[] = { th_bin("mipmap-check"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(endpoint, argv, 120, r);
    cr_expect_eq(r->status, 0, "mipmap-check (%s) exited %d:\n%s%s", endpoint, r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want, "mipmap-check (%s) printed\n%s\nstderr:\n%s", endpoint, r->out, r->err);
    cr_expect(strstr(r->err, "not supported by Tandem") == NULL, "an entry point was refused:\n%s", r->err);
    free(r);
}

Test(mipmap, levels_copies_and_refusals_match_native_over_tcp, .init = up, .fini = down)
{
    expect_mipmap_check(srv.endpoint);
}

Test(mipmap, levels_copies_and_refusals_match_native_over_shm, .init = up, .fini = down)
{
    expect_mipmap_check(srv.shm_endpoint);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the session did not go over shm; see %s", srv.log);
}

/* ---- the server's checks, speaking the protocol ---- */

static int g_mipmap(tdm_transport *t, tdm_mipmap_create_args a, uint64_t *handle, unsigned *levels)
{
    tdm_mipmap_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MIPMAP_CREATE, (xdrproc_t)xdr_tdm_mipmap_create_args, &a,
                              (xdrproc_t)xdr_tdm_mipmap_res, &r), 0);
    *handle = r.handle;
    if (levels)
        *levels = r.levels;
    return r.err;
}

static int g_level(tdm_transport *t, uint64_t mipmap, unsigned level, uint64_t *array, tdm_extent3 *ext)
{
    tdm_mipmap_level_args a = { .mipmap = mipmap, .level = level };
    tdm_mipmap_level_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MIPMAP_LEVEL, (xdrproc_t)xdr_tdm_mipmap_level_args, &a,
                              (xdrproc_t)xdr_tdm_mipmap_level_res, &r), 0);
    *array = r.handle;
    if (ext)
        *ext = r.ext;
    return r.err;
}

static int call_err(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a)
{
    int res = -1;

    cr_assert_eq(t->ops->call(t, proc, xa, a, (xdrproc_t)xdr_int, &res), 0, "transport failed");
    return res;
}

static int destroy(tdm_transport *t, uint32_t proc, uint64_t handle)
{
    tdm_handle h = handle;

    return call_err(t, proc, (xdrproc_t)xdr_tdm_handle, &h);
}

static int g_read_3d(tdm_transport *t, tdm_pitched src, tdm_extent3 ext)
{
    tdm_memcpy3d_dtoh_args a = { .src = src, .ext = ext, .stream = 0 };
    tdm_memcpy_dtoh_res r;
    int err;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEMCPY_3D_DTOH, (xdrproc_t)xdr_tdm_memcpy3d_dtoh_args, &a,
                              (xdrproc_t)xdr_tdm_memcpy_dtoh_res, &r), 0);
    err = r.err;
    xdr_free((xdrproc_t)xdr_tdm_memcpy_dtoh_res, (char *)&r);
    return err;
}

Test(mipmap, handles_levels_shapes_and_the_quota_are_checked, .init = up_quota, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "mipmap-bad"), *other = th_guest_open(srv.endpoint, "other");
    tdm_mipmap_create_args f32 = { .x = 32, .kind = cudaChannelFormatKindFloat, .width = 64, .height = 16,
                                   .levels = 3 };
    tdm_mipmap_create_args bad;
    uint64_t mm, theirs, lv, lv2, h, kept = 0;
    unsigned levels = 0;
    tdm_extent3 e;

    cr_assert_eq(g_mipmap(other, f32, &theirs, NULL), 0);
    cr_assert_eq(g_mipmap(other, f32, &theirs, NULL), 0);
    cr_assert_eq(g_mipmap(t, f32, &mm, &levels), 0);
    cr_expect_eq(levels, 3);

    bad = f32;
    bad.y = 16;
    cr_expect_eq(g_mipmap(t, bad, &h, NULL), cudaErrorInvalidChannelDescriptor, "channels of unequal width");
    bad = f32;
    bad.width = 0;
    cr_expect_eq(g_mipmap(t, bad, &h, NULL), cudaErrorInvalidValue, "no width");
    bad = f32;
    bad.flags = cudaArraySparse;
    cr_expect_eq(g_mipmap(t, bad, &h, NULL), cudaErrorNotSupported, "a sparse mipmapped array");
    bad = f32;
    bad.flags = cudaArrayCubemap;
    bad.depth = 6;
    cr_expect_eq(g_mipmap(t, bad, &h, NULL), cudaErrorInvalidValue, "a cubemap that is not square");
    bad = f32;
    bad.width = bad.height = 1024;
    cr_expect_eq(g_mipmap(t, bad, &h, NULL), cudaErrorMemoryAllocation, "4 MiB and its levels over a 4 MiB quota");
    bad = f32;
    bad.levels = 1000;
    cr_expect_eq(g_mipmap(t, bad, &h, &levels), 0);
    cr_expect_eq(levels, 7, "levels clamped to 1 + log2(64)");
    cr_expect_eq(destroy(t, TDM_MIPMAP_DESTROY, h), 0);

    cr_expect_eq(g_level(t, mm, 3, &lv, NULL), cudaErrorInvalidValue, "a level past the last");
    cr_expect_eq(g_level(t, theirs, 0, &lv, NULL), cudaErrorInvalidResourceHandle, "another session's");
    cr_expect_eq(g_level(t, 0x12345, 0, &lv, NULL), cudaErrorInvalidResourceHandle, "a forged handle");
    cr_assert_eq(g_level(t, mm, 2, &lv, &e), 0);
    cr_expect(e.width == 16 && e.height == 4 && e.depth == 0, "level 2 of 64 x 16 is %llu x %llu x %llu",
              (unsigned long long)e.width, (unsigned long long)e.height, (unsigned long long)e.depth);
    cr_assert_eq(g_level(t, mm, 2, &lv2, NULL), 0);
    cr_expect_eq(lv, lv2, "a level is the same array each time");

    tdm_pitched in = { .array = lv };
    cr_expect_eq(g_read_3d(t, in, (tdm_extent3){ 64, 4, 1 }), 0, "the whole level");
    cr_expect_eq(g_read_3d(t, in, (tdm_extent3){ 65, 4, 1 }), cudaErrorInvalidValue, "a row past the level's");
    cr_expect_eq(destroy(t, TDM_ARRAY_DESTROY, lv), cudaErrorInvalidValue, "cudaFreeArray of a level");
    cr_expect_eq(destroy(t, TDM_MIPMAP_DESTROY, theirs), cudaErrorInvalidValue, "freeing another session's");
    cr_expect_eq(destroy(t, TDM_MIPMAP_DESTROY, mm), 0);
    cr_expect_eq(destroy(t, TDM_MIPMAP_DESTROY, mm), cudaErrorInvalidValue, "freeing it twice");
    cr_expect_eq(g_read_3d(t, in, (tdm_extent3){ 4, 1, 1 }), cudaErrorInvalidResourceHandle,
                 "a level of a freed mipmapped array");

    /* The quota came back: what the freed ones held fits again. */
    bad = f32;
    bad.width = bad.height = 512;   /* 1 MiB and its levels */
    cr_expect_eq(g_mipmap(t, bad, &h, NULL), 0);
    cr_expect_eq(g_mipmap(t, bad, &h, NULL), 0);
    cr_expect_eq(g_mipmap(t, bad, &kept, NULL), 0);
    cr_expect_eq(g_mipmap(t, bad, &h, NULL), cudaErrorMemoryAllocation, "a fourth 1.31 MiB over 4 MiB");

    /* Left to the session's end, with a level given out: released with it. */
    cr_expect_eq(g_level(t, kept, 1, &lv, NULL), 0);
    t->ops->close(t);
    other->ops->close(other);
}

/* A session that made only mipmapped arrays (no array, no level, no
 * texture) gets their memory back at cudaDeviceReset, as every other. */
Test(mipmap, device_reset_releases_mipmapped_arrays, .init = up_quota, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "mipmap-reset");
    tdm_mipmap_create_args big = { .x = 32, .kind = cudaChannelFormatKindFloat, .width = 512, .height = 512,
                                   .levels = 3 };
    uint64_t h;

    for (int i = 0; i < 3; i++)
        cr_assert_eq(g_mipmap(t, big, &h, NULL), 0);
    cr_expect_eq(g_mipmap(t, big, &h, NULL), cudaErrorMemoryAllocation, "over the quota");
    cr_expect_eq(call_err(t, TDM_DEVICE_RESET, (xdrproc_t)tdm_xdr_void, NULL), 0);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(g_mipmap(t, big, &h, NULL), 0, "the reset gave the quota back");
    t->ops->close(t);
}
