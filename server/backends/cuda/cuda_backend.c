/* The cuda backend: the real GPU through the CUDA Driver API.
 *
 * One instance drives one device for every session of the process, through
 * the device's primary context (the context cudart would use, so guest
 * kernels see the same environment as natively).  This file holds the
 * lifecycle and device queries and the ops table; memory, copies, modules,
 * launches and streams live in the other cuda_*.c files. */
#include <stdlib.h>
#include <string.h>

#include "cuda_backend_internal.h"

/* cuFuncGetParamInfo, which module_get_function needs, arrived in 12.4. */
#define TDM_CUDA_MIN_DRIVER 12040

/* cuInit's failure, as the runtime would report it: a guest asking
 * "is there a GPU?" must get a no-device answer, not a stub-library one. */
static int init_failure(CUresult r)
{
    tdm_cuda_err(r, "cuInit");
    if (r == CUDA_ERROR_NO_DEVICE)
        return cudaErrorNoDevice;
    if (r == CUDA_ERROR_DEVICE_UNAVAILABLE)
        return cudaErrorDevicesUnavailable;
    return cudaErrorInsufficientDriver;
}

static int query_limits(tdm_backend *b)
{
    static const CUdevice_attribute block[3] = { CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z };
    static const CUdevice_attribute grid[3] = { CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z };
    CUresult r = tdm_cu.cuDeviceGetAttribute(&b->max_threads_per_block,
                                      CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, b->dev);

    for (int i = 0; r == CUDA_SUCCESS && i < 3; i++) {
        r = tdm_cu.cuDeviceGetAttribute(&b->max_block[i], block[i], b->dev);
        if (r == CUDA_SUCCESS)
            r = tdm_cu.cuDeviceGetAttribute(&b->max_grid[i], grid[i], b->dev);
    }
    return tdm_cuda_err(r, "cuDeviceGetAttribute(launch limits)");
}

/* What mem_map creates: pinned device memory, exportable as a POSIX fd when
 * the device can, so a standby server can import it later. */
static int setup_allocation(tdm_backend *b)
{
    int vmm = 0, fd_ok = 0;
    size_t gran = 0;
    CUresult r;

    r = tdm_cu.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, b->dev);
    if (r != CUDA_SUCCESS)
        return tdm_cuda_err(r, "cuDeviceGetAttribute(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)");
    if (!vmm) {
        tdm_cuda_log("device %d lacks virtual memory management; the arena needs it", b->cfg.device);
        return cudaErrorNotSupported;
    }
    r = tdm_cu.cuDeviceGetAttribute(&fd_ok, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                             b->dev);
    if (r != CUDA_SUCCESS || !fd_ok) {
        tdm_cuda_log("device %d cannot export memory as a file descriptor; "
                     "standby import will not work", b->cfg.device);
        fd_ok = 0;
    }
    memset(&b->prop, 0, sizeof(b->prop));
    b->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    b->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    b->prop.location.id = b->dev;
    b->prop.requestedHandleTypes = fd_ok ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
                                         : CU_MEM_HANDLE_TYPE_NONE;
    r = tdm_cu.cuMemGetAllocationGranularity(&gran, &b->prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (r != CUDA_SUCCESS)
        return tdm_cuda_err(r, "cuMemGetAllocationGranularity");
    b->gran = gran;
    return cudaSuccess;
}

static int cuda_init(tdm_backend **out, const tdm_backend_config *cfg)
{
    tdm_backend *b = NULL;
    int count = 0, version = 0, err;
    char why[256];
    CUresult r;

    *out = NULL;
    err = tdm_cuda_driver_load(why, sizeof(why));
    if (err) {
        tdm_cuda_log("%s", why);
        return err;
    }
    r = tdm_cu.cuInit(0);
    if (r != CUDA_SUCCESS)
        return init_failure(r);
    r = tdm_cu.cuDriverGetVersion(&version);
    if (r != CUDA_SUCCESS)
        return tdm_cuda_err(r, "cuDriverGetVersion");
    if (version < TDM_CUDA_MIN_DRIVER) {
        tdm_cuda_log("driver supports CUDA %d.%d; %d.%d or newer is needed", version / 1000,
                     version % 1000 / 10, TDM_CUDA_MIN_DRIVER / 1000, TDM_CUDA_MIN_DRIVER % 1000 / 10);
        return cudaErrorInsufficientDriver;
    }
    r = tdm_cu.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS)
        return tdm_cuda_err(r, "cuDeviceGetCount");
    if (count == 0) {
        tdm_cuda_log("no CUDA device");
        return cudaErrorNoDevice;
    }
    if (cfg->device < 0 || cfg->device >= count) {
        tdm_cuda_log("device %d requested, %d present", cfg->device, count);
        return cudaErrorInvalidDevice;
    }

    b = calloc(1, sizeof(*b));
    if (!b)
        return cudaErrorMemoryAllocation;
    b->cfg = *cfg;
    err = tdm_cuda_shares_init(b);   /* ---- SM shares (issue 17) ---- */
    if (err)
        goto fail;
    err = tdm_cuda_err(tdm_cu.cuDeviceGet(&b->dev, cfg->device), "cuDeviceGet");
    if (err)
        goto fail;
    err = tdm_cuda_err(tdm_cu.cuDevicePrimaryCtxRetain(&b->ctx, b->dev), "cuDevicePrimaryCtxRetain");
    if (err)
        goto fail;
    err = tdm_cuda_enter(b);
    if (err)
        goto fail_ctx;
    err = query_limits(b);
    if (err)
        goto fail_ctx;
    err = setup_allocation(b);
    if (err)
        goto fail_ctx;
    err = tdm_cuda_err(tdm_cu.cuStreamCreate(&b->zero_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (err)
        goto fail_ctx;
    /* ---- host callbacks (issue 14) ---- */
    err = tdm_cuda_holds_init(b);
    /* ---- graph host nodes (issue 14) ---- */
    if (!err && (err = tdm_cuda_hostnodes_init(b)) != 0)
        tdm_cuda_holds_free(b, false);
    if (err) {
        tdm_cu.cuStreamDestroy(b->zero_stream);
        goto fail_ctx;
    }
    *out = b;
    return cudaSuccess;

fail_ctx:
    tdm_cu.cuDevicePrimaryCtxRelease(b->dev);
fail:
    tdm_cuda_shares_free(b);
    free(b);
    return err;
}

static void cuda_shutdown(tdm_backend *b)
{
    if (!b)
        return;
    bool lost = true;

    if (tdm_cuda_enter(b) == cudaSuccess) {
        /* Let queued work finish before its memory goes away; a context
         * that cannot is lost. */
        lost = tdm_cuda_err(tdm_cu.cuCtxSynchronize(), "cuCtxSynchronize(shutdown)") != cudaSuccess;
        tdm_cuda_arena_free(b);
        tdm_cuda_err(tdm_cu.cuStreamDestroy(b->zero_stream), "cuStreamDestroy(zero stream)");
    }
    tdm_cuda_holds_free(b, lost);   /* ---- host callbacks (issue 14) ---- */
    tdm_cuda_hostnodes_free(b, lost);     /* ---- graph host nodes (issue 14) ---- */
    tdm_cuda_shares_free(b);              /* ---- SM shares (issue 17) ---- */
    tdm_cuda_release_context(b, lost);
    free(b);
}

static int cuda_driver_version(tdm_backend *b, int *version)
{
    (void)b;
    return tdm_cuda_err(tdm_cu.cuDriverGetVersion(version), "cuDriverGetVersion");
}

static int cuda_device_info(tdm_backend *b, tdm_device_info *out)
{
    CUuuid uuid;
    size_t total = 0;
    int err;

    memset(out, 0, sizeof(*out));
    err = tdm_cuda_err(tdm_cu.cuDeviceGetName(out->name, sizeof(out->name), b->dev), "cuDeviceGetName");
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuDeviceGetUuid(&uuid, b->dev), "cuDeviceGetUuid");
    if (err)
        return err;
    memcpy(out->uuid, uuid.bytes, sizeof(out->uuid));
    err = tdm_cuda_err(tdm_cu.cuDeviceTotalMem(&total, b->dev), "cuDeviceTotalMem");
    if (err)
        return err;
    out->total_mem = total;
    /* The numbering has holes (retired attributes) and grows with drivers:
     * an attribute this driver rejects is marked so, and the guest refuses
     * it as the driver does (a property field reads it as 0). */
    for (int i = 0; i < TDM_DEVICE_ATTR_COUNT; i++) {
        int v = 0;

        if (tdm_cu.cuDeviceGetAttribute(&v, (CUdevice_attribute)i, b->dev) == CUDA_SUCCESS)
            out->attrs[i] = v;
        else
            out->attrs[i] = TDM_DEVICE_ATTR_UNSUPPORTED;
    }
    out->simulated = false;
    return cudaSuccess;
}

static int cuda_mem_get_info(tdm_backend *b, uint64_t *free_bytes, uint64_t *total_bytes)
{
    size_t f = 0, t = 0;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuMemGetInfo(&f, &t), "cuMemGetInfo");
    if (err)
        return err;
    *free_bytes = f;
    *total_bytes = t;
    return cudaSuccess;
}

static int cuda_device_synchronize(tdm_backend *b)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuCtxSynchronize(), "cuCtxSynchronize");
}

const tdm_backend_ops tdm_backend_cuda_ops = {
    .name = "cuda",
    .simulated = false,
    .init = cuda_init,
    .shutdown = cuda_shutdown,
    .driver_version = cuda_driver_version,
    .device_info = cuda_device_info,
    .mem_get_info = cuda_mem_get_info,
    .arena_reserve = tdm_cuda_arena_reserve,
    .granularity = tdm_cuda_granularity,
    .mem_map = tdm_cuda_mem_map,
    .mem_unmap = tdm_cuda_mem_unmap,
    .mem_export = tdm_cuda_mem_export,
    .host_register = tdm_cuda_host_register,
    .host_unregister = tdm_cuda_host_unregister,
    .mem_import = tdm_cuda_mem_import,
    .module_load = tdm_cuda_module_load,
    .module_unload = tdm_cuda_module_unload,
    .module_get_function = tdm_cuda_module_get_function,
    .module_get_global = tdm_cuda_module_get_global,
    .func_get_attributes = tdm_cuda_func_get_attributes,
    .stream_create = tdm_cuda_stream_create,
    .stream_destroy = tdm_cuda_stream_destroy,
    .stream_synchronize = tdm_cuda_stream_synchronize,
    .stream_query = tdm_cuda_stream_query,
    .stream_wait_event = tdm_cuda_stream_wait_event,
    .event_create = tdm_cuda_event_create,
    .event_destroy = tdm_cuda_event_destroy,
    .event_record = tdm_cuda_event_record,
    .event_synchronize = tdm_cuda_event_synchronize,
    .event_query = tdm_cuda_event_query,
    .event_elapsed_ms = tdm_cuda_event_elapsed_ms,
    .memcpy_htod = tdm_cuda_memcpy_htod,
    .memcpy_dtoh_sync = tdm_cuda_memcpy_dtoh_sync,
    .memcpy_dtoh_async = tdm_cuda_memcpy_dtoh_async,
    .memcpy_dtod = tdm_cuda_memcpy_dtod,
    .memset_d8 = tdm_cuda_memset_d8,
    .launch = tdm_cuda_launch,
    .device_synchronize = cuda_device_synchronize,
    /* ---- health (issue 14) ---- */
    .stream_lost_context = tdm_cuda_stream_lost_context,
    /* ---- layout (issue 14) ---- */
    .pitch_alignment = tdm_cuda_pitch_alignment,
    .copy_3d = tdm_cuda_copy_3d,
    .memset_3d = tdm_cuda_memset_3d,
    .array_create = tdm_cuda_array_create,
    .array_destroy = tdm_cuda_array_destroy,
    .tex_object_create = tdm_cuda_tex_object_create,
    .tex_object_destroy = tdm_cuda_tex_object_destroy,
    .surf_object_create = tdm_cuda_surf_object_create,
    .surf_object_destroy = tdm_cuda_surf_object_destroy,
    /* ---- runtime (issue 14) ---- */
    .occupancy_max_blocks = tdm_cuda_occupancy_max_blocks,
    .occupancy_dyn_smem = tdm_cuda_occupancy_dyn_smem,
    .stream_priority_range = tdm_cuda_stream_priority_range,
    .limit_get = tdm_cuda_limit_get,
    .limit_raise = tdm_cuda_limit_raise,
    .func_set_attribute = tdm_cuda_func_set_attribute,
    .func_set_cache_config = tdm_cuda_func_set_cache_config,
    .launch_cooperative = tdm_cuda_launch_cooperative,
    .pci_bus_id = tdm_cuda_pci_bus_id,
    /* ---- memory models (issue 14) ---- */
    .host_map = tdm_cuda_host_map,
    .host_unmap = tdm_cuda_host_unmap,
    /* ---- graphs (issue 14) ---- */
    .stream_begin_capture = tdm_cuda_stream_begin_capture,
    .stream_end_capture = tdm_cuda_stream_end_capture,
    .stream_capture_info = tdm_cuda_stream_capture_info,
    .graph_destroy = tdm_cuda_graph_destroy,
    .graph_instantiate = tdm_cuda_graph_instantiate,
    .graph_exec_destroy = tdm_cuda_graph_exec_destroy,
    .graph_launch = tdm_cuda_graph_launch,
    .graph_exec_update = tdm_cuda_graph_exec_update,
    .graph_create = tdm_cuda_graph_create,
    .graph_add_node = tdm_cuda_graph_add_node,
    .graph_add_dependencies = tdm_cuda_graph_add_dependencies,
    .graph_kernel_node_set = tdm_cuda_graph_kernel_node_set,
    /* ---- launch ex and stream attributes (issue 14) ---- */
    .stream_set_attribute = tdm_cuda_stream_set_attribute,
    .stream_get_attribute = tdm_cuda_stream_get_attribute,
    /* ---- host callbacks (issue 14) ---- */
    .host_func_enqueue = tdm_cuda_host_func_enqueue,
    .host_func_release = tdm_cuda_host_func_release,
    /* ---- graph memcpy nodes, queries (issue 14) ---- */
    .graph_clone = tdm_cuda_graph_clone,
    .graph_nodes = tdm_cuda_graph_nodes,
    .graph_node_type = tdm_cuda_graph_node_type,
    .graph_node_deps = tdm_cuda_graph_node_deps,
    .graph_remove_dependencies = tdm_cuda_graph_remove_dependencies,
    .graph_destroy_node = tdm_cuda_graph_destroy_node,
    .graph_find_in_clone = tdm_cuda_graph_find_in_clone,
    /* ---- graph memory nodes (issue 14) ---- */
    .capture_mode_exchange = tdm_cuda_capture_mode_exchange,
    /* ---- conditional graph nodes (issue 14) ---- */
    .graph_cond_handle_create = tdm_cuda_graph_cond_handle_create,
    .graph_add_cond_node = tdm_cuda_graph_add_cond_node,
    .stream_begin_capture_to_graph = tdm_cuda_stream_begin_capture_to_graph,
    .stream_capture_graph = tdm_cuda_stream_capture_graph,
    .stream_update_capture_deps = tdm_cuda_stream_update_capture_deps,
    /* ---- graph host nodes (issue 14) ---- */
    .stream_capture_host = tdm_cuda_stream_capture_host,
    .graph_launch_hosts = tdm_cuda_graph_launch_hosts,
    /* ---- graph node parameters (issue 14) ---- */
    .graph_node_enabled = tdm_cuda_graph_node_enabled,
    .graph_memset_node_set = tdm_cuda_graph_memset_node_set,
    .graph_memcpy_node_set = tdm_cuda_graph_memcpy_node_set,
    .graph_kernel_node_attr = tdm_cuda_graph_kernel_node_attr,
    .graph_exec_host_node_set = tdm_cuda_graph_exec_host_node_set,
    /* ---- event nodes, child graphs, user objects (issue 14) ---- */
    .graph_event_node_get = tdm_cuda_graph_event_node_get,
    .graph_event_node_set = tdm_cuda_graph_event_node_set,
    .stream_event_external = tdm_cuda_stream_event_external,
    .graph_add_child_node = tdm_cuda_graph_add_child_node,
    .graph_child_graph = tdm_cuda_graph_child_graph,
    .graph_exec_child_set = tdm_cuda_graph_exec_child_set,
    /* ---- libraries (issue 14) ---- */
    .module_kernel_names = tdm_cuda_module_kernel_names,
    /* ---- mipmapped arrays (issue 14) ---- */
    .mipmap_create = tdm_cuda_mipmap_create,
    .mipmap_level = tdm_cuda_mipmap_level,
    .mipmap_destroy = tdm_cuda_mipmap_destroy,
    /* ---- cluster launch and device odds and ends (issue 14) ---- */
    .launch_cluster = tdm_cuda_launch_cluster,
    .occupancy_max_active_clusters = tdm_cuda_occupancy_max_active_clusters,
    .occupancy_max_cluster_size = tdm_cuda_occupancy_max_cluster_size,
    .func_cluster_attrs = tdm_cuda_func_cluster_attrs,
    .tex1d_linear_max_width = tdm_cuda_tex1d_linear_max_width,
    .host_atomic_caps = tdm_cuda_host_atomic_caps,
    /* ---- SM shares (issue 17) ---- */
    .share_get = tdm_cuda_share_get,
    .share_put = tdm_cuda_share_put,
    .share_stream_create = tdm_cuda_share_stream_create,
};
