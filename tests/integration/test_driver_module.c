/* The Driver API's modules, libraries, kernels and launches (issue 15): drv-module-check
 * (tests/driver/drv_module_check.c), a cuda.h program run with Tandem's libcuda.so.1 over
 * TCP and shm.  Each expected line is what NVIDIA's driver answers, by cuda.h's doc comment
 * of the call unless said otherwise. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

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

Test(driver_module, modules_libraries_kernels_launches, .init = up, .fini = down)
{
    char fatbin[4096];
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };
    const char *want =
        /* "Calls before cuInit return CUDA_ERROR_NOT_INITIALIZED"; a module belongs to the
         * current context, and there is none yet. */
        "before cuInit: CUDA_ERROR_NOT_INITIALIZED\n"
        "without a context: CUDA_ERROR_INVALID_CONTEXT\n"
        "module from memory:\n"
        "  2 functions: lib_axpb lib_fill\n"
        /* cuModuleGetFunction: "If no function of that name exists, ... CUDA_ERROR_NOT_FOUND". */
        "  unknown function: CUDA_ERROR_NOT_FOUND\n"
        "  NULL name: CUDA_ERROR_INVALID_VALUE\n"
        /* nvcc's layout of (int *, int, char, double) and (float *, const float *, float, int);
         * cuFuncGetParamInfo: paramIndex must be less than the count, and paramSize may be NULL. */
        "  lib_fill parameters: 8@0 4@8 1@12 8@16 (index 4: CUDA_ERROR_INVALID_VALUE)\n"
        "  lib_axpb parameters: 8@0 8@8 4@16 4@20 (index 4: CUDA_ERROR_INVALID_VALUE)\n"
        "  offset only: CUDA_SUCCESS\n"
        "  global lib_bias: 4 bytes\n"
        /* cuModuleGetGlobal: "If no variable of that name exists, ... CUDA_ERROR_NOT_FOUND". */
        "  unknown global: CUDA_ERROR_NOT_FOUND\n"
        "  lib_axpb by cuLaunchKernel: correct\n"
        /* (int)(999 * 3 * 0.5) = 1498, whichever way the parameters went. */
        "  lib_fill by extra: 1498\n"
        "  lib_fill by cuLaunchKernelEx: 1498\n"
        "  lib_fill by cuLaunchKernelEx with extra: 1498\n"
        "  lib_fill by cuLaunchKernel_ptsz: 1498\n"
        "  lib_fill by cuLaunchCooperativeKernel: 1498\n"
        /* cuLaunchKernel: "CUDA_ERROR_INVALID_VALUE will be returned if kernel parameters are
         * specified with both kernelParams and extra"; an empty grid is no valid launch (as
         * cuLaunchKernelEx answers the runtime's cudaLaunchKernelExC, H100 run of 2026-11-24);
         * a NULL function is no handle, and a NULL configuration no value (both unsure: the
         * GPU run will say). */
        "  kernelParams and extra: CUDA_ERROR_INVALID_VALUE\n"
        "  empty grid: CUDA_ERROR_INVALID_VALUE\n"
        "  NULL function: CUDA_ERROR_INVALID_HANDLE\n"
        "  NULL config: CUDA_ERROR_INVALID_VALUE\n"
        /* The same kernel answers the same through both interfaces, every time (a cache). */
        "  attributes agree: yes\n"
        "  max threads per block > 0: yes\n"
        "  attribute past the last: CUDA_ERROR_INVALID_VALUE\n"
        /* cuFuncSetAttribute: "Attempting to set a value on a read-only attribute will result
         * in an error (CUDA_ERROR_INVALID_VALUE)"; a set value is what is read back. */
        "  set read-only NUM_REGS: CUDA_ERROR_INVALID_VALUE\n"
        "  max dynamic shared after setting 8192: 8192\n"
        "  cache config: CUDA_SUCCESS\n"
        "  module of lib_fill: the module\n"
        /* Loaded eagerly by Tandem; natively the image was loaded by cuModuleLoadData, and
         * cuFuncLoad of a loaded function "has no effect". */
        "  loaded: yes, cuFuncLoad: CUDA_SUCCESS\n"
        "  active blocks of 128 threads > 0: yes\n"
        /* The block size search tries warp multiples and keeps the best; its grid is the
         * active blocks of that size times the SMs (cuOccupancyMaxPotentialBlockSize). */
        "  potential block size: a multiple of 32 yes, min grid = its blocks x SMs yes\n"
        "  with a function for shared memory: the same yes\n"
        "  limited to 64 threads: block 64\n"
        "  dynamic shared memory for one block > 0: yes\n"
        "  potential cluster size > 0: yes\n"
        "  NULL block size: CUDA_ERROR_INVALID_VALUE\n"
        /* A pointer that is no kernel or library: CUDA_ERROR_INVALID_HANDLE (the runtime's
         * cudaErrorInvalidResourceHandle for the same on the H100, examples/library_load.cu). */
        "  not a kernel: CUDA_ERROR_INVALID_HANDLE\n"
        "  not a library: CUDA_ERROR_INVALID_HANDLE\n"
        "  unloaded\n"
        "library from memory:\n"
        "  2 kernels\n"
        /* cuLibraryGetKernel: no kernel of that name, CUDA_ERROR_NOT_FOUND. */
        "  unknown kernel: CUDA_ERROR_NOT_FOUND\n"
        "  with the binary preserved: CUDA_SUCCESS, lib_axpb found yes\n"
        "  the first block of a section: CUDA_SUCCESS, lib_axpb found yes\n"
        "  name: lib_axpb\n"
        "  lib_axpb parameter 2: 4@16\n"
        "  library of lib_fill: the library\n"
        "  global lib_bias: 4 bytes\n"
        "  lib_axpb by its function: correct\n"
        /* cuLaunchKernel: a CUkernel may be passed cast to CUfunction. */
        "  lib_axpb by the kernel handle: correct\n"
        "  lib_fill by the kernel handle and extra: 1498\n"
        "  max dynamic shared after setting 4096: 4096\n"
        "  kernel cache config: CUDA_SUCCESS\n"
        "  attribute on device 99: CUDA_ERROR_INVALID_DEVICE\n"
        /* cuModuleUnload: "Attempting to unload a module which was obtained from the Library
         * Management API such as cuLibraryGetModule will return CUDA_ERROR_NOT_PERMITTED". */
        "  cuModuleUnload of its module: CUDA_ERROR_NOT_PERMITTED\n"
        /* cuLibraryGetManaged: "One of the parameters dptr or bytes (not both) can be NULL". */
        "  managed, no outputs: CUDA_ERROR_INVALID_VALUE\n"
        "  unloaded\n"
        /* An unloaded library's handles (the runtime's answers for the same on the H100,
         * examples/library_load.cu --tandem-stale). */
        "  stale kernel, launch: CUDA_ERROR_INVALID_HANDLE\n"
        "  stale kernel, attribute: CUDA_ERROR_INVALID_HANDLE\n"
        "  stale library, count: CUDA_ERROR_INVALID_HANDLE\n"
        "  stale library, unload: CUDA_ERROR_INVALID_HANDLE\n"
        "from the file:\n"
        "  cuLibraryLoadFromFile: 2 kernels\n"
        "  cuModuleLoad: 2 functions\n"
        /* A fat binary with SASS for the GPU: nothing to log, an empty log. */
        "  cuModuleLoadDataEx with an info log: log \"\"\n"
        "  cuModuleLoadFatBinary: 2 functions\n"
        "  unknown JIT option: CUDA_ERROR_INVALID_VALUE\n"
        "  JIT option count without options: CUDA_ERROR_INVALID_VALUE\n"
        /* cuModuleLoad lists CUDA_ERROR_FILE_NOT_FOUND. */
        "  missing file: CUDA_ERROR_FILE_NOT_FOUND\n"
        "  missing library file: CUDA_ERROR_FILE_NOT_FOUND\n"
        "  NULL image: CUDA_ERROR_INVALID_VALUE\n"
        /* Bytes that are no ELF, fat binary or PTX (unsure: the driver may take them for PTX
         * and answer CUDA_ERROR_INVALID_PTX; the GPU run will say). */
        "  not an image: CUDA_ERROR_INVALID_IMAGE\n"
        "done\n";

    snprintf(fatbin, sizeof(fatbin), "%s/bin/library-load.fatbin", th_build_dir());
    const char *argv[] = { th_bin("drv-module-check"), fatbin, NULL };
    for (int i = 0; i < 2; i++) {
        th_result *r = calloc(1, sizeof(*r));
        th_run_driver_guest(endpoints[i], argv, 60, r);
        cr_assert_eq(r->status, 0, "drv-module-check (%s) exited %d:\n%s%s", endpoints[i], r->status, r->out, r->err);
        cr_expect_str_eq(r->out, want, "drv-module-check (%s) printed\n%s", endpoints[i], r->out);
        free(r);
    }
}
