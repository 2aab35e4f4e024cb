/* The guest's device properties and attributes are the server device's,
 * field by field (docs/device-properties.md): device-props-check's output
 * through a sim server against the sim backend's own table, with Tandem's
 * deliberate differences applied as the server applies them. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "device_props.h"
#include "harness.h"

#define ARENA_BASE 0x300000000000ull
#define ARENA_SIZE (1ull << 30)

static th_server srv;
static tdm_device_info di;   /* what the guest must see */

static void up(void)
{
    const tdm_backend_ops *ops = &tdm_backend_sim_ops;
    tdm_backend_config cfg = { .device = 0, .arena_base = ARENA_BASE, .arena_size = ARENA_SIZE };
    tdm_backend *be = NULL;

    cr_assert_eq(ops->init(&be, &cfg), 0);
    cr_assert_eq(ops->device_info(be, &di), 0);
    ops->shutdown(be);
    tdm_device_props_apply(&di);
    th_server_start(&srv, NULL);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

static th_result *run_check(const char *endpoint, const char *what)
{
    const char *argv[] = { th_bin("device-props-check"), what, NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(endpoint, argv, 60, r);
    cr_assert_eq(r->status, 0, "device-props-check %s (%s) exited %d:\n%s%s", what, endpoint, r->status, r->out,
                 r->err);
    return r;
}

/* The value part of the line "<kind> <key> = <value>" (for attributes the key
 * is "N name"), or NULL. */
static const char *value_of(const char *out, const char *kind, const char *key, char *buf, size_t len)
{
    char head[128];
    const char *p;

    snprintf(head, sizeof(head), "%s %s ", kind, key);
    for (p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        const char *eq, *nl;

        if (strncmp(p, head, strlen(head)) != 0)
            continue;
        eq = strstr(p, " = ");
        nl = strchr(p, '\n');
        if (!eq || (nl && eq > nl))
            return NULL;
        eq += 3;
        snprintf(buf, len, "%.*s", nl ? (int)(nl - eq) : (int)strlen(eq), eq);
        return buf;
    }
    return NULL;
}

static int count_lines(const char *out, const char *prefix)
{
    int n = 0;

    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

static int at(int a)
{
    return di.attrs[a] == TDM_DEVICE_ATTR_UNSUPPORTED ? 0 : di.attrs[a];
}

/* The value a guest sees over a transport: mapped and managed memory work
 * over both as the device says (docs/device-properties.md); no managed
 * access is ever concurrent. */
static int seen(int a, bool shm)
{
    (void)shm;
    switch (a) {
    case cudaDevAttrConcurrentManagedAccess:
    case cudaDevAttrPageableMemoryAccess:
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables:
    case cudaDevAttrDirectManagedMemAccessFromHost:
        return 0;
    default:
        return at(a);
    }
}

/* Every attribute: the table's value, or refused as the driver refuses one it
 * does not know. */
Test(device_props, every_attribute_is_the_devices, .init = up, .fini = down)
{
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };

    for (int e = 0; e < 2; e++) {
        th_result *r = run_check(endpoints[e], "attrs");

        cr_expect_eq(count_lines(r->out, "attr "), TDM_DEVICE_ATTR_COUNT, "%s", r->out);
        for (int a = 0; a < TDM_DEVICE_ATTR_COUNT; a++) {
            char key[16], want[64], got[64];
            const char *line = NULL;

            for (const char *p = r->out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                snprintf(key, sizeof(key), "attr %d ", a);
                if (strncmp(p, key, strlen(key)) == 0) {
                    line = p;
                    break;
                }
            }
            cr_assert(line, "no line for attribute %d in\n%s", a, r->out);
            snprintf(got, sizeof(got), "%.*s", (int)strcspn(strstr(line, " = ") + 3, "\n"), strstr(line, " = ") + 3);
            if (di.attrs[a] == TDM_DEVICE_ATTR_UNSUPPORTED)
                snprintf(want, sizeof(want), "error cudaErrorInvalidValue");
            else
                snprintf(want, sizeof(want), "%d", seen(a, e == 1));
            cr_expect_str_eq(got, want, "attribute %d over %s", a, endpoints[e]);
        }
        free(r);
    }
}

/* A property field and the attributes it is read from (up to three). */
static const struct {
    const char *field;
    int n;
    int attr[3];
    char type;   /* 'i' int, 'u' unsigned, 'z' size_t */
} fields[] = {
    { "sharedMemPerBlock", 1, { cudaDevAttrMaxSharedMemoryPerBlock }, 'z' },
    { "regsPerBlock", 1, { cudaDevAttrMaxRegistersPerBlock }, 'i' },
    { "warpSize", 1, { cudaDevAttrWarpSize }, 'i' },
    { "memPitch", 1, { cudaDevAttrMaxPitch }, 'z' },
    { "maxThreadsPerBlock", 1, { cudaDevAttrMaxThreadsPerBlock }, 'i' },
    { "maxThreadsDim", 3, { cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY, cudaDevAttrMaxBlockDimZ }, 'i' },
    { "maxGridSize", 3, { cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY, cudaDevAttrMaxGridDimZ }, 'i' },
    { "totalConstMem", 1, { cudaDevAttrTotalConstantMemory }, 'z' },
    { "major", 1, { cudaDevAttrComputeCapabilityMajor }, 'i' },
    { "minor", 1, { cudaDevAttrComputeCapabilityMinor }, 'i' },
    { "textureAlignment", 1, { cudaDevAttrTextureAlignment }, 'z' },
    { "texturePitchAlignment", 1, { cudaDevAttrTexturePitchAlignment }, 'z' },
    { "multiProcessorCount", 1, { cudaDevAttrMultiProcessorCount }, 'i' },
    { "integrated", 1, { cudaDevAttrIntegrated }, 'i' },
    { "canMapHostMemory", 1, { cudaDevAttrCanMapHostMemory }, 'i' },
    { "maxTexture1D", 1, { cudaDevAttrMaxTexture1DWidth }, 'i' },
    { "maxTexture1DMipmap", 1, { cudaDevAttrMaxTexture1DMipmappedWidth }, 'i' },
    { "maxTexture2D", 2, { cudaDevAttrMaxTexture2DWidth, cudaDevAttrMaxTexture2DHeight }, 'i' },
    { "maxTexture2DMipmap", 2, { cudaDevAttrMaxTexture2DMipmappedWidth, cudaDevAttrMaxTexture2DMipmappedHeight }, 'i' },
    { "maxTexture2DLinear", 3,
      { cudaDevAttrMaxTexture2DLinearWidth, cudaDevAttrMaxTexture2DLinearHeight, cudaDevAttrMaxTexture2DLinearPitch },
      'i' },
    { "maxTexture2DGather", 2, { cudaDevAttrMaxTexture2DGatherWidth, cudaDevAttrMaxTexture2DGatherHeight }, 'i' },
    { "maxTexture3D", 3, { cudaDevAttrMaxTexture3DWidth, cudaDevAttrMaxTexture3DHeight, cudaDevAttrMaxTexture3DDepth },
      'i' },
    { "maxTexture3DAlt", 3,
      { cudaDevAttrMaxTexture3DWidthAlt, cudaDevAttrMaxTexture3DHeightAlt, cudaDevAttrMaxTexture3DDepthAlt }, 'i' },
    { "maxTextureCubemap", 1, { cudaDevAttrMaxTextureCubemapWidth }, 'i' },
    { "maxTexture1DLayered", 2, { cudaDevAttrMaxTexture1DLayeredWidth, cudaDevAttrMaxTexture1DLayeredLayers }, 'i' },
    { "maxTexture2DLayered", 3,
      { cudaDevAttrMaxTexture2DLayeredWidth, cudaDevAttrMaxTexture2DLayeredHeight,
        cudaDevAttrMaxTexture2DLayeredLayers },
      'i' },
    { "maxTextureCubemapLayered", 2,
      { cudaDevAttrMaxTextureCubemapLayeredWidth, cudaDevAttrMaxTextureCubemapLayeredLayers }, 'i' },
    { "maxSurface1D", 1, { cudaDevAttrMaxSurface1DWidth }, 'i' },
    { "maxSurface2D", 2, { cudaDevAttrMaxSurface2DWidth, cudaDevAttrMaxSurface2DHeight }, 'i' },
    { "maxSurface3D", 3, { cudaDevAttrMaxSurface3DWidth, cudaDevAttrMaxSurface3DHeight, cudaDevAttrMaxSurface3DDepth },
      'i' },
    { "maxSurface1DLayered", 2, { cudaDevAttrMaxSurface1DLayeredWidth, cudaDevAttrMaxSurface1DLayeredLayers }, 'i' },
    { "maxSurface2DLayered", 3,
      { cudaDevAttrMaxSurface2DLayeredWidth, cudaDevAttrMaxSurface2DLayeredHeight,
        cudaDevAttrMaxSurface2DLayeredLayers },
      'i' },
    { "maxSurfaceCubemap", 1, { cudaDevAttrMaxSurfaceCubemapWidth }, 'i' },
    { "maxSurfaceCubemapLayered", 2,
      { cudaDevAttrMaxSurfaceCubemapLayeredWidth, cudaDevAttrMaxSurfaceCubemapLayeredLayers }, 'i' },
    { "surfaceAlignment", 1, { cudaDevAttrSurfaceAlignment }, 'z' },
    { "concurrentKernels", 1, { cudaDevAttrConcurrentKernels }, 'i' },
    { "ECCEnabled", 1, { cudaDevAttrEccEnabled }, 'i' },
    { "pciBusID", 1, { cudaDevAttrPciBusId }, 'i' },
    { "pciDeviceID", 1, { cudaDevAttrPciDeviceId }, 'i' },
    { "pciDomainID", 1, { cudaDevAttrPciDomainId }, 'i' },
    { "tccDriver", 1, { cudaDevAttrTccDriver }, 'i' },
    { "asyncEngineCount", 1, { cudaDevAttrAsyncEngineCount }, 'i' },
    { "unifiedAddressing", 1, { cudaDevAttrUnifiedAddressing }, 'i' },
    { "memoryBusWidth", 1, { cudaDevAttrGlobalMemoryBusWidth }, 'i' },
    { "l2CacheSize", 1, { cudaDevAttrL2CacheSize }, 'i' },
    { "persistingL2CacheMaxSize", 1, { cudaDevAttrMaxPersistingL2CacheSize }, 'i' },
    { "maxThreadsPerMultiProcessor", 1, { cudaDevAttrMaxThreadsPerMultiProcessor }, 'i' },
    { "streamPrioritiesSupported", 1, { cudaDevAttrStreamPrioritiesSupported }, 'i' },
    { "globalL1CacheSupported", 1, { cudaDevAttrGlobalL1CacheSupported }, 'i' },
    { "localL1CacheSupported", 1, { cudaDevAttrLocalL1CacheSupported }, 'i' },
    { "sharedMemPerMultiprocessor", 1, { cudaDevAttrMaxSharedMemoryPerMultiprocessor }, 'z' },
    { "regsPerMultiprocessor", 1, { cudaDevAttrMaxRegistersPerMultiprocessor }, 'i' },
    { "managedMemory", 1, { cudaDevAttrManagedMemory }, 'i' },
    { "isMultiGpuBoard", 1, { cudaDevAttrIsMultiGpuBoard }, 'i' },
    { "multiGpuBoardGroupID", 1, { cudaDevAttrMultiGpuBoardGroupID }, 'i' },
    { "hostNativeAtomicSupported", 1, { cudaDevAttrHostNativeAtomicSupported }, 'i' },
    { "pageableMemoryAccess", 1, { cudaDevAttrPageableMemoryAccess }, 'i' },
    { "concurrentManagedAccess", 1, { cudaDevAttrConcurrentManagedAccess }, 'i' },
    { "computePreemptionSupported", 1, { cudaDevAttrComputePreemptionSupported }, 'i' },
    { "canUseHostPointerForRegisteredMem", 1, { cudaDevAttrCanUseHostPointerForRegisteredMem }, 'i' },
    { "cooperativeLaunch", 1, { cudaDevAttrCooperativeLaunch }, 'i' },
    { "sharedMemPerBlockOptin", 1, { cudaDevAttrMaxSharedMemoryPerBlockOptin }, 'z' },
    { "pageableMemoryAccessUsesHostPageTables", 1, { cudaDevAttrPageableMemoryAccessUsesHostPageTables }, 'i' },
    { "directManagedMemAccessFromHost", 1, { cudaDevAttrDirectManagedMemAccessFromHost }, 'i' },
    { "maxBlocksPerMultiProcessor", 1, { cudaDevAttrMaxBlocksPerMultiprocessor }, 'i' },
    { "accessPolicyMaxWindowSize", 1, { cudaDevAttrMaxAccessPolicyWindowSize }, 'i' },
    { "reservedSharedMemPerBlock", 1, { cudaDevAttrReservedSharedMemoryPerBlock }, 'z' },
    { "hostRegisterSupported", 1, { cudaDevAttrHostRegisterSupported }, 'i' },
    { "sparseCudaArraySupported", 1, { cudaDevAttrSparseCudaArraySupported }, 'i' },
    { "hostRegisterReadOnlySupported", 1, { cudaDevAttrHostRegisterReadOnlySupported }, 'i' },
    { "timelineSemaphoreInteropSupported", 1, { cudaDevAttrTimelineSemaphoreInteropSupported }, 'i' },
    { "memoryPoolsSupported", 1, { cudaDevAttrMemoryPoolsSupported }, 'i' },
    { "gpuDirectRDMASupported", 1, { cudaDevAttrGPUDirectRDMASupported }, 'i' },
    { "gpuDirectRDMAFlushWritesOptions", 1, { cudaDevAttrGPUDirectRDMAFlushWritesOptions }, 'u' },
    { "gpuDirectRDMAWritesOrdering", 1, { cudaDevAttrGPUDirectRDMAWritesOrdering }, 'i' },
    { "memoryPoolSupportedHandleTypes", 1, { cudaDevAttrMemoryPoolSupportedHandleTypes }, 'u' },
    { "deferredMappingCudaArraySupported", 1, { cudaDevAttrDeferredMappingCudaArraySupported }, 'i' },
    { "ipcEventSupported", 1, { cudaDevAttrIpcEventSupport }, 'i' },
    { "clusterLaunch", 1, { cudaDevAttrClusterLaunch }, 'i' },
    { "unifiedFunctionPointers", 1, { 129 /* CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS */ }, 'i' },
    { "deviceNumaConfig", 1, { cudaDevAttrNumaConfig }, 'i' },
    { "deviceNumaId", 1, { cudaDevAttrNumaId }, 'i' },
    { "mpsEnabled", 1, { cudaDevAttrMpsEnabled }, 'i' },
    { "hostNumaId", 1, { cudaDevAttrHostNumaId }, 'i' },
    { "gpuPciDeviceID", 1, { cudaDevAttrGpuPciDeviceId }, 'u' },
    { "gpuPciSubsystemID", 1, { cudaDevAttrGpuPciSubsystemId }, 'u' },
    { "hostNumaMultinodeIpcSupported", 1, { cudaDevAttrHostNumaMultinodeIpcSupported }, 'i' },
};

/* The fields no attribute holds. */
#define OWN_FIELDS 6 /* name uuid luid luidDeviceNodeMask totalGlobalMem reserved */

static void expect_field(const char *out, const char *field, const char *want, const char *endpoint)
{
    char got[1024];

    cr_expect(value_of(out, "prop", field, got, sizeof(got)) != NULL, "no %s over %s in\n%s", field, endpoint, out);
    cr_expect_str_eq(got, want, "%s over %s", field, endpoint);
}

Test(device_props, every_property_field_is_the_devices, .init = up, .fini = down)
{
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };
    size_t nfields = sizeof(fields) / sizeof(fields[0]);

    for (int e = 0; e < 2; e++) {
        th_result *r = run_check(endpoints[e], "props");
        char want[1024];
        size_t k = 0;

        /* A field of cudaDeviceProp this test does not check fails it. */
        cr_expect_eq(count_lines(r->out, "prop "), (int)nfields + OWN_FIELDS, "%s", r->out);
        expect_field(r->out, "name", di.name, endpoints[e]);
        for (int i = 0; i < 16; i++)
            k += (size_t)snprintf(want + k, sizeof(want) - k, "%02x", di.uuid[i]);
        expect_field(r->out, "uuid", want, endpoints[e]);
        expect_field(r->out, "luid", "0000000000000000", endpoints[e]);
        expect_field(r->out, "luidDeviceNodeMask", "0", endpoints[e]);
        snprintf(want, sizeof(want), "%llu", (unsigned long long)di.total_mem);
        expect_field(r->out, "totalGlobalMem", want, endpoints[e]);
        k = 0;
        /* Left as the program had it (device_props_check fills the struct
         * with 0xa5 bytes), as the native runtime leaves it. */
        for (int i = 0; i < 56; i++)
            k += (size_t)snprintf(want + k, sizeof(want) - k, " %d", (int)0xa5a5a5a5u);
        expect_field(r->out, "reserved", want + 1, endpoints[e]);
        for (size_t f = 0; f < nfields; f++) {
            k = 0;
            for (int i = 0; i < fields[f].n; i++) {
                int v = seen(fields[f].attr[i], e == 1);

                if (fields[f].type == 'z')
                    k += (size_t)snprintf(want + k, sizeof(want) - k, "%s%zu", i ? " " : "", (size_t)(unsigned)v);
                else if (fields[f].type == 'u')
                    k += (size_t)snprintf(want + k, sizeof(want) - k, "%s%u", i ? " " : "", (unsigned)v);
                else
                    k += (size_t)snprintf(want + k, sizeof(want) - k, "%s%d", i ? " " : "", v);
            }
            expect_field(r->out, fields[f].field, want, endpoints[e]);
        }
        free(r);
    }
}

/* Over tcp host memory is mapped and managed memory served (the guest
 * keeps host copies coherent) as the device says (the sim's table says 1),
 * and no managed access is concurrent: applied where both paths read it. */
Test(device_props, deliberate_differences_reach_both_paths, .init = up, .fini = down)
{
    th_result *props = run_check(srv.endpoint, "props"), *attrs = run_check(srv.endpoint, "attrs");
    char got[64];

    cr_expect_str_eq(value_of(props->out, "prop", "canMapHostMemory", got, sizeof(got)), "1");
    cr_expect_str_eq(value_of(attrs->out, "attr", "19 cudaDevAttrCanMapHostMemory", got, sizeof(got)), "1");
    cr_expect_str_eq(value_of(props->out, "prop", "managedMemory", got, sizeof(got)), "1");
    cr_expect_str_eq(value_of(attrs->out, "attr", "83 cudaDevAttrManagedMemory", got, sizeof(got)), "1");
    cr_expect_str_eq(value_of(props->out, "prop", "concurrentManagedAccess", got, sizeof(got)), "0");
    free(props);
    free(attrs);
}
