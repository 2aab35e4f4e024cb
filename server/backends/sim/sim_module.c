/* Modules: the sim cannot run GPU code, so a module is a validated fat
 * binary header plus storage for the kernel table's globals; its kernels are the
 * C twins in server/sim_kernels/, found by mangled name.  The storage is one
 * block of the globals window beside the arena (sim_arena.c), at a device
 * address as on a GPU: a guest learns nothing of the server's heap from it
 * (issue 16). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "code_image.h"
#include "sim_internal.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_HEADER_SIZE 16u  /* magic u32, version u16, header_size u16, fat_size u64 */
#define GLOBAL_ALIGN 256        /* as the GPU aligns module variables */
#define BLOCK_ALIGN 4096        /* a module's block is mapped on its own pages */

static int check_image(const void *image, size_t len)
{
    uint32_t magic;
    uint16_t header_size;
    uint64_t fat_size;
    const uint8_t *p = image;

    /* ---- libraries (issue 14): a cubin or PTX loads as a fat binary does ---- */
    tdm_image_kind kind = tdm_code_image_kind(image, len);
    if (kind == TDM_IMAGE_CUBIN || kind == TDM_IMAGE_PTX)
        return 0;
    if (!image || len < FATBIN_HEADER_SIZE)
        return cudaErrorInvalidKernelImage;
    memcpy(&magic, p, 4);
    memcpy(&header_size, p + 6, 2);
    memcpy(&fat_size, p + 8, 8);
    if (magic != FATBIN_MAGIC || header_size < FATBIN_HEADER_SIZE || fat_size > len ||
        header_size != len - fat_size)
        return cudaErrorInvalidKernelImage;
    return 0;
}

/* Frees a module no one references: funcs (its block is gone already). */
static void module_free(tdm_bmodule *m)
{
    while (m->funcs) {
        tdm_bfunc *f = m->funcs;
        m->funcs = f->next;
        free(f->globals);
        free(f);
    }
    free(m->storage);
    free(m);
}

static uint64_t aligned(uint64_t n)
{
    return (n + GLOBAL_ALIGN - 1) / GLOBAL_ALIGN * GLOBAL_ALIGN;
}

/* Takes the module's block out of the memory table (once no running launch
 * uses it) and gives its pages back: a launch still queued that touches a
 * global faults instead of using freed memory. */
static void globals_unpublish(tdm_backend *b, tdm_bmodule *m)
{
    if (!m->globals_size)
        return;
    sim_mapped_remove(&b->mapped, m->globals_at, m->globals_size);
    mmap((void *)(uintptr_t)m->globals_at, m->globals_size, PROT_NONE,
         MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    m->globals_size = 0;
}

/* Places the block of `size` bytes in the globals window and maps it
 * (zeroed, as the GPU initializes module variables). */
static int globals_publish(tdm_backend *b, tdm_bmodule *m, uint64_t size)
{
    uint64_t lo = sim_globals_window(b), hi = lo + SIM_GLOBALS_WINDOW, at;
    int err = cudaErrorMemoryAllocation;

    size = (size + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;

    if (!b->globals_window)
        return cudaErrorMemoryAllocation;   /* no arena reserved */
    /* Another load may take the gap between the search and the insert. */
    for (int tries = 0; tries < 16 && err; tries++) {
        at = sim_mapped_find_gap(&b->mapped, lo, hi, size, BLOCK_ALIGN);
        if (!at)
            break;
        err = sim_mapped_insert(&b->mapped, at, size, false);
    }
    if (err) {
        sim_log("the module globals window is full (%llu bytes wanted)", (unsigned long long)size);
        return cudaErrorMemoryAllocation;
    }
    if (mmap((void *)(uintptr_t)at, size, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1,
             0) == MAP_FAILED) {
        sim_log("cannot map module globals at %#llx: %s", (unsigned long long)at, strerror(errno));
        sim_mapped_remove(&b->mapped, at, size);
        return cudaErrorMemoryAllocation;
    }
    m->globals_at = at;
    m->globals_size = size;
    return 0;
}

int sim_module_load(tdm_backend *b, const void *image, size_t len, tdm_bmodule **out)
{
    tdm_bmodule *m;
    uint64_t size = 0;
    int err;

    *out = NULL;
    err = check_image(image, len);
    if (err) {
        sim_log("module image of %zu bytes is not a fat binary, cubin or PTX", len);
        return err;
    }
    m = calloc(1, sizeof(*m));
    if (!m)
        return cudaErrorMemoryAllocation;
    m->b = b;
    m->refs = 1;
    m->nglobals = sim_global_count();
    m->storage = calloc(m->nglobals ? m->nglobals : 1, sizeof(*m->storage));
    if (!m->storage) {
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    /* Every module gets every global of the kernel table: the image cannot be parsed
     * here, and the guest only asks for the variables it registered. */
    for (uint32_t i = 0; i < m->nglobals; i++)
        size += aligned(sim_global_at(i)->size);
    if (size && (err = globals_publish(b, m, size)) != 0)
        goto fail;
    size = 0;
    for (uint32_t i = 0; i < m->nglobals; size += aligned(sim_global_at(i)->size), i++)
        m->storage[i] = (void *)(uintptr_t)(m->globals_at + size);
    pthread_mutex_lock(&b->lock);
    m->next = b->modules;
    if (b->modules)
        b->modules->prev = m;
    b->modules = m;
    pthread_mutex_unlock(&b->lock);
    *out = m;
    return 0;
fail:
    module_free(m);
    return err;
}

void sim_module_unref_locked(tdm_backend *b, tdm_bmodule *m)
{
    if (--m->refs > 0)
        return;
    if (m->prev)
        m->prev->next = m->next;
    else
        b->modules = m->next;
    if (m->next)
        m->next->prev = m->prev;
    module_free(m);
}

int sim_module_unload(tdm_backend *b, tdm_bmodule *m)
{
    if (!m)
        return cudaErrorInvalidResourceHandle;
    /* Unpublished now, freed when the last queued launch is done: a launch
     * still queued that touches a global faults instead of using freed
     * memory. */
    globals_unpublish(b, m);
    pthread_mutex_lock(&b->lock);
    sim_module_unref_locked(b, m);
    pthread_mutex_unlock(&b->lock);
    return 0;
}

void sim_modules_free_all(tdm_backend *b)
{
    while (b->modules) {
        tdm_bmodule *m = b->modules;
        b->modules = m->next;
        module_free(m);
    }
}

/* ---- dynamic parallelism (issue 14) ---- */
/* The device runtime's own kernels and variables (cudadevrt, linked into
 * every -rdc program's image): registered by every such program, never
 * launched or read by its host code, so their absence here is no news. */
static bool from_device_runtime(const char *name)
{
    return name && (strstr(name, "_cuda_device_runtime_cu_") || strncmp(name, "cudartError", 11) == 0 ||
                    strncmp(name, "__CNPRT_", 8) == 0);
}

int sim_module_get_function(tdm_backend *b, tdm_bmodule *m, const char *name, tdm_bfunc **out,
                            tdm_param_info *params)
{
    const sim_kernel *k = sim_kernel_find(name);
    tdm_bfunc *f;

    *out = NULL;
    if (!k) {
        if (!from_device_runtime(name))
            sim_log("no simulated implementation of kernel '%s'", name ? name : "(null)");
        return cudaErrorInvalidDeviceFunction;
    }
    if (k->nparams > TDM_MAX_KERNEL_PARAMS)
        return cudaErrorInvalidDeviceFunction;
    f = calloc(1, sizeof(*f));
    if (!f)
        return cudaErrorMemoryAllocation;
    f->k = k;
    f->m = m;
    f->globals = calloc(k->nglobals ? k->nglobals : 1, sizeof(*f->globals));
    if (!f->globals) {
        free(f);
        return cudaErrorMemoryAllocation;
    }
    for (uint32_t i = 0; i < k->nglobals; i++) {
        int g = sim_global_index(k->globals[i]);
        if (g < 0) {
            /* A kernel-table bug, not a guest error: say which. */
            sim_log("kernel '%s' uses global '%s', which the kernel table does not describe", name, k->globals[i]);
            free(f->globals);
            free(f);
            return cudaErrorInvalidDeviceFunction;
        }
        f->globals[i] = (uint64_t)(uintptr_t)m->storage[g];
    }
    sim_kernel_layout(k, &f->layout, &f->params_len);
    *params = f->layout;
    pthread_mutex_lock(&b->lock);
    f->next = m->funcs;
    m->funcs = f;
    pthread_mutex_unlock(&b->lock);
    *out = f;
    return 0;
}

int sim_module_get_global(tdm_backend *b, tdm_bmodule *m, const char *name, uint64_t *addr, uint64_t *size)
{
    int g = sim_global_index(name);

    if (g < 0) {
        if (!from_device_runtime(name))
            sim_log("no simulated global variable '%s'", name ? name : "(null)");
        return cudaErrorInvalidSymbol;
    }
    *addr = (uint64_t)(uintptr_t)m->storage[g];
    *size = sim_global_at((uint32_t)g)->size;
    return 0;
}

int sim_func_get_attributes(tdm_backend *b, tdm_bfunc *f, tdm_func_attrs *out)
{
    memset(out, 0, sizeof(*out));
    out->shared_size_bytes = f->k->static_shared;
    out->max_threads_per_block = 1024;
    out->num_regs = 32;
    out->ptx_version = 90;
    out->binary_version = 90;
    out->max_dynamic_shared_size_bytes = (int32_t)(SIM_MAX_DYN_SHARED - f->k->static_shared);
    out->preferred_shmem_carveout = -1;
    return 0;
}
