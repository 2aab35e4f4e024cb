/* The sim backend: a simulated GPU in host memory, for tests and the no-GPU
 * demo.  It says so wherever it shows (ops.simulated, the device name). */
#include <stdlib.h>

#include "sim_internal.h"

static int sim_init(tdm_backend **out, const tdm_backend_config *cfg)
{
    tdm_backend *b = calloc(1, sizeof(*b));
    int err;

    *out = NULL;
    if (!b)
        return cudaErrorMemoryAllocation;
    b->cfg = *cfg;
    atomic_init(&b->stopping, false);
    err = sim_mapped_init(&b->mapped);
    if (err)
        goto fail_free;
    if (pthread_mutex_init(&b->lock, NULL) != 0) {
        err = cudaErrorInitializationError;
        goto fail_mem;
    }
    if (pthread_cond_init(&b->progress, NULL) != 0) {
        err = cudaErrorInitializationError;
        goto fail_lock;
    }
    err = sim_mps_join(b, cfg->sim_mps_domain);
    if (err)
        goto fail_cond;
    err = sim_stream_create(b, 0, 0, NULL, &b->legacy);
    if (err)
        goto fail_mps;
    *out = b;
    return 0;
fail_mps:
    sim_mps_leave(b);
fail_cond:
    pthread_cond_destroy(&b->progress);
fail_lock:
    pthread_mutex_destroy(&b->lock);
fail_mem:
    sim_mapped_release(&b->mapped);
fail_free:
    free(b);
    return err;
}

/* Work still queued is dropped, running kernels stop at their next block
 * (sim_launch_stopped), waits are cut short. */
static void sim_end_work(tdm_backend *b)
{
    pthread_mutex_lock(&b->lock);
    atomic_store(&b->stopping, true);
    pthread_cond_broadcast(&b->progress);
    pthread_mutex_unlock(&b->lock);
}

/* The work ended (sim_end_work); then every thread is joined and everything freed. */
static void sim_shutdown(tdm_backend *b)
{
    if (!b)
        return;
    sim_end_work(b);
    sim_streams_free_all(b);
    sim_events_free_all(b);
    sim_modules_free_all(b);
    sim_mems_free_all(b);
    sim_arena_release(b);
    sim_mps_leave(b);
    pthread_cond_destroy(&b->progress);
    pthread_mutex_destroy(&b->lock);
    sim_mapped_release(&b->mapped);
    free(b);
}

static int sim_driver_version(tdm_backend *b, int *version)
{
    *version = SIM_DRIVER_VERSION;
    return 0;
}

const tdm_backend_ops tdm_backend_sim_ops = {
    .name = "sim",
    .simulated = true,
    .init = sim_init,
    .shutdown = sim_shutdown,
    .end_work = sim_end_work,
    .driver_version = sim_driver_version,
    .device_info = sim_device_info,
    .mem_get_info = sim_mem_get_info,
    .arena_reserve = sim_arena_reserve,
    .granularity = sim_granularity,
    .mem_map = sim_mem_map,
    .mem_unmap = sim_mem_unmap,
    .mem_export = sim_mem_export,
    .mem_import = sim_mem_import,
    .module_load = sim_module_load,
    .module_unload = sim_module_unload,
    .module_get_function = sim_module_get_function,
    .module_get_global = sim_module_get_global,
    .func_get_attributes = sim_func_get_attributes,
    .space_create = sim_space_create,
    .space_destroy = sim_space_destroy,
    .space_grant = sim_space_grant,
    .space_revoke = sim_space_revoke,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_stream_destroy,
    .stream_synchronize = sim_stream_synchronize,
    .stream_query = sim_stream_query,
    .stream_wait_event = sim_stream_wait_event,
    .event_create = sim_event_create,
    .event_destroy = sim_event_destroy,
    .event_record = sim_event_record,
    .event_synchronize = sim_event_synchronize,
    .event_query = sim_event_query,
    .event_elapsed_ms = sim_event_elapsed_ms,
    .memcpy_htod = sim_memcpy_htod,
    .memcpy_dtoh_sync = sim_memcpy_dtoh_sync,
    .memcpy_dtoh_async = sim_memcpy_dtoh_async,
    .memcpy_dtod = sim_memcpy_dtod,
    .memset_d8 = sim_memset_d8,
    .launch = sim_launch_plain, /* ---- cluster launch (issue 14): sim_cluster.c ---- */
    .device_synchronize = sim_device_synchronize,
    /* ---- health (issue 14) ---- */
    .stream_lost_context = sim_stream_lost_context,
    /* ---- layout (issue 14) ---- */
    .pitch_alignment = sim_pitch_alignment,
    .copy_3d = sim_copy_3d,
    .memset_3d = sim_memset_3d,
    .array_create = sim_array_create,
    .array_destroy = sim_array_destroy,
    .tex_object_create = sim_tex_object_create,
    .tex_object_destroy = sim_tex_object_destroy,
    .surf_object_create = sim_surf_object_create,
    .surf_object_destroy = sim_surf_object_destroy,
    /* ---- runtime (issue 14) ---- */
    .occupancy_max_blocks = sim_occupancy_max_blocks,
    .occupancy_dyn_smem = sim_occupancy_dyn_smem,
    .stream_priority_range = sim_stream_priority_range,
    .limit_get = sim_limit_get,
    .limit_raise = sim_limit_raise,
    .func_set_attribute = sim_func_set_attribute,
    .func_set_cache_config = sim_func_set_cache_config,
    .launch_cooperative = sim_launch_cooperative,
    .pci_bus_id = sim_pci_bus_id,
    /* ---- memory models (issue 14) ---- */
    .host_map = sim_host_map,
    .host_unmap = sim_host_unmap,
    /* ---- graphs (issue 14) ---- */
    .stream_begin_capture = sim_stream_begin_capture,
    .stream_end_capture = sim_stream_end_capture,
    .stream_capture_info = sim_stream_capture_info,
    .graph_destroy = sim_graph_destroy,
    .graph_instantiate = sim_graph_instantiate,
    .graph_exec_destroy = sim_graph_exec_destroy,
    .graph_launch = sim_graph_launch,
    .graph_exec_update = sim_graph_exec_update,
    .graph_create = sim_graph_create,
    .graph_add_node = sim_graph_add_node,
    .graph_add_dependencies = sim_graph_add_dependencies,
    .graph_kernel_node_set = sim_graph_kernel_node_set,
    /* ---- launch ex and stream attributes (issue 14) ---- */
    .stream_set_attribute = sim_stream_set_attribute,
    .stream_get_attribute = sim_stream_get_attribute,
    /* ---- host callbacks (issue 14) ---- */
    .host_func_enqueue = sim_host_func_enqueue,
    .host_func_release = sim_host_func_release,
    /* ---- graph memcpy nodes, queries (issue 14) ---- */
    .graph_clone = sim_graph_clone,
    .graph_nodes = sim_graph_nodes,
    .graph_node_type = sim_graph_node_type,
    .graph_node_deps = sim_graph_node_deps,
    .graph_remove_dependencies = sim_graph_remove_dependencies,
    .graph_destroy_node = sim_graph_destroy_node,
    .graph_find_in_clone = sim_graph_find_in_clone,
    /* ---- graph memory nodes (issue 14) ---- */
    .capture_mode_exchange = sim_capture_mode_exchange,
    /* ---- conditional graph nodes (issue 14) ---- */
    .graph_cond_handle_create = sim_graph_cond_handle_create,
    .graph_add_cond_node = sim_graph_add_cond_node,
    .stream_begin_capture_to_graph = sim_stream_begin_capture_to_graph,
    .stream_capture_graph = sim_stream_capture_graph,
    .stream_update_capture_deps = sim_stream_update_capture_deps,
    /* ---- graph host nodes (issue 14) ---- */
    .stream_capture_host = sim_stream_capture_host,
    .graph_launch_hosts = sim_graph_launch_hosts,
    /* ---- graph node parameters (issue 14) ---- */
    .graph_node_enabled = sim_graph_node_enabled,
    .graph_memset_node_set = sim_graph_memset_node_set,
    .graph_memcpy_node_set = sim_graph_memcpy_node_set,
    .graph_kernel_node_attr = sim_graph_kernel_node_attr,
    .graph_exec_host_node_set = sim_graph_exec_host_node_set,
    /* ---- event nodes, child graphs, user objects (issue 14) ---- */
    .graph_event_node_get = sim_graph_event_node_get,
    .graph_event_node_set = sim_graph_event_node_set,
    .stream_event_external = sim_stream_event_external,
    .graph_add_child_node = sim_graph_add_child_node,
    .graph_child_graph = sim_graph_child_graph,
    .graph_exec_child_set = sim_graph_exec_child_set,
    /* ---- libraries (issue 14) ---- */
    .module_kernel_names = sim_module_kernel_names,
    /* ---- mipmapped arrays (issue 14) ---- */
    .mipmap_create = sim_mipmap_create,
    .mipmap_level = sim_mipmap_level,
    .mipmap_destroy = sim_mipmap_destroy,
    /* ---- cluster launch and device odds and ends (issue 14) ---- */
    .launch_cluster = sim_launch_cluster,
    .occupancy_max_active_clusters = sim_occupancy_max_active_clusters,
    .occupancy_max_cluster_size = sim_occupancy_max_cluster_size,
    .func_cluster_attrs = sim_func_cluster_attrs,
    .tex1d_linear_max_width = sim_tex1d_linear_max_width,
    .host_atomic_caps = sim_host_atomic_caps,
    /* ---- SM shares (issue 17) ---- */
    .share_get = sim_share_get,
    .share_put = sim_share_put,
    .share_stream_create = sim_share_stream_create,
};
