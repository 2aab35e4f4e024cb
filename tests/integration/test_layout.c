/* Pitched, 2D and 3D memory end to end (docs/memory-layouts.md): layout-check
 * through a real tandem-server on the sim backend, over TCP and over shared
 * memory.  Every line it prints must be what a native run prints: each check
 * compares the device's bytes with a host model of the same operations. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static th_server srv;

static void up(void)
{
    th_server_start(&srv, NULL);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

static const char want[] =
    "2D host to device, odd source pitch, offset destination: ok\n"
    "2D device to host, odd destination pitch: ok\n"
    "2D device to device and cudaMemcpyDefault: ok\n"
    "2D memset: ok\n"
    "2D async round trip: ok\n"
    "2D async, first allocation: ok\n"
    "2D async, second allocation: ok\n"
    "2D host to host: ok\n"
    "2D of 9 MB by rows: ok\n"
    "2D of 9 MB back by rows: ok\n"
    "2D of rows wider than a chunk: ok\n"
    "2D of rows wider than a chunk, back: ok\n"
    "3D host to device at positions: ok\n"
    "3D device to device and memset on a stream: ok\n"
    "3D device to host at positions (cudaMemcpyDefault): ok\n"
    "3D memset of the whole extent: ok\n"
    "2D copy with a destination pitch below the width: cudaErrorInvalidPitchValue\n"
    "2D copy with a source pitch below the width: cudaErrorInvalidPitchValue\n"
    "last error is the last refusal: cudaErrorInvalidPitchValue\n"
    "empty 2D copy: cudaSuccess\n"
    "cudaMallocPitch without a pitch pointer: cudaErrorInvalidValue\n"
    "all layout checks passed\n";

/* Runs check program `name` through the server at endpoint and requires
 * exactly `want` on stdout and no refused entry point. */
static void expect_check(const char *endpoint, const char *name, const char *want_out)
{
    const char *argv[] = { th_bin(name), NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(endpoint, argv, 120, r);
    cr_expect_eq(r->status, 0, "%s (%s) exited %d:\n%s%s", name, endpoint, r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want_out, "%s (%s) printed\n%s\nstderr:\n%s", name, endpoint, r->out, r->err);
    cr_expect(strstr(r->err, "not supported by Tandem") == NULL, "an entry point was refused:\n%s", r->err);
    free(r);
}

static void expect_layout_check(const char *endpoint)
{
    expect_check(endpoint, "layout-check", want);
}

Test(layout, copies_and_memsets_match_a_host_model_over_tcp, .init = up, .fini = down)
{
    expect_layout_check(srv.endpoint);
}

Test(layout, copies_and_memsets_match_a_host_model_over_shm, .init = up, .fini = down)
{
    expect_layout_check(srv.shm_endpoint);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the session did not go over shm; see %s", srv.log);
}

static const char want_arrays[] =
    "float2 array of 40: desc 32 32 0 0 kind 2, extent 40 0 0, flags 2\n"
    "cudaGetChannelDesc: 32 32 0 0 kind 2\n"
    "cudaFreeArray(NULL): cudaSuccess\n"
    "channels of unequal width: cudaErrorInvalidChannelDescriptor\n"
    "2D float array filled: ok\n"
    "2D host to array at an offset: ok\n"
    "2D array to host at an offset: ok\n"
    "2D array to device to array: ok\n"
    "2D array to array: ok\n"
    "2D async to and from an array: ok\n"
    "cudaMemcpyToArray across rows: ok\n"
    "cudaMemcpyFromArray across rows: ok\n"
    "2D to array past its width: cudaErrorInvalidValue\n"
    "2D from array past its height: cudaErrorInvalidValue\n"
    "3D uchar4 array filled: ok\n"
    "3D host to array at positions: ok\n"
    "3D array to host at positions: ok\n"
    "all array checks passed\n";

static void expect_array_check(const char *endpoint)
{
    expect_check(endpoint, "array-check", want_arrays);
}

/* CUDA arrays: created, described, copied into, out of and between, freed. */
Test(layout, arrays_match_a_host_model_over_tcp, .init = up, .fini = down)
{
    expect_array_check(srv.endpoint);
}

Test(layout, arrays_match_a_host_model_over_shm, .init = up, .fini = down)
{
    expect_array_check(srv.shm_endpoint);
}

static const char want_objects[] =
    "texture over an array: created\n"
    "its resource: type 0, the same array: yes\n"
    "its texture: address modes 1 3 0, filter 1, read mode 0, normalized 1, border 0.25\n"
    "its view: format 22, 64 x 48 x 0\n"
    "linear texture: type 2, 4096 bytes, 32-bit channel, same pointer: yes\n"
    "pitch2D texture's resource: as created\n"
    "pitch2D texture's sampling: as created\n"
    "surface: type 0, the same array: yes\n"
    "three textures and a surface distinct: yes\n"
    "surface over linear memory: cudaErrorInvalidValue\n"
    "texture without a texture descriptor: cudaErrorInvalidValue\n"
    "all texture object checks passed\n";

/* Texture and surface objects: created over every kind of resource, their
 * descriptors read back, destroyed; CUDA's refusals.  The session ends
 * unprotected (MIRROR_UNPROTECT), which needs no standby to hold. */
Test(layout, texture_and_surface_objects_over_tcp_and_shm, .init = up, .fini = down)
{
    expect_check(srv.endpoint, "texture-object-check", want_objects);
    expect_check(srv.shm_endpoint, "texture-object-check", want_objects);
}
