/* cuGetExportTable: the private tables NVIDIA's runtime (the wheel's libcudart, and the copies
 * linked into cuBLAS, cuDNN and the other libraries) asks the driver for, answered by Tandem's
 * libcuda for real.  Which tables and slots a stock PyTorch uses, with their arguments, was
 * measured on the H100 with scripts/driver-trace (docs/results/2026-11-24-h100-pytorch-export-
 * tables.txt); the runtime refuses to start without any one of them.  A slot nobody was seen
 * calling answers CUDA_ERROR_NOT_SUPPORTED with a line naming the table and slot, so a new use
 * shows up as that line, not as a crash.  docs/driver-api.md describes each table.
 *
 * The tables are the driver's, once per process, at fixed addresses: the integrity check
 * hashes two of their addresses and the address of its own function. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "log.h"
#include "md2.h"

/* ---- slots nobody was seen calling ---- */

static uintptr_t refuse_slot(const char *table, int slot)
{
    tdm_log("slot %d of the driver's private export table %s is not carried by Tandem (returning "
            "CUDA_ERROR_NOT_SUPPORTED)", slot, table);
    return CUDA_ERROR_NOT_SUPPORTED;
}

#define REFUSED(table, n) \
    static uintptr_t refused_##table##_##n(void) { return refuse_slot(#table, n); }

/* ---- CUDART_INTERFACE {6bd5fb6c-5bf4-e74a-8987-d93912fd9df9} ---- */

/* The fat binary wrapper nvcc emits for a module (__cudaRegisterFatBinary's argument). */
typedef struct fatbin_wrapper {
    int magic;
    int version;
    const void *data;
    void *unused;
} fatbin_wrapper;
#define FATBIN_WRAPPER_MAGIC 0x466243b1

static CUresult load_image(CUmodule *module, const void *image)
{
    cudaLibrary_t lib = NULL;
    CUresult r;

    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    if (!r)
        *module = (CUmodule)lib;
    return r;
}

static CUresult module_from_wrapper(CUmodule *module, const fatbin_wrapper *w)
{
    if (!w || w->magic != FATBIN_WRAPPER_MAGIC)
        return CUDA_ERROR_INVALID_IMAGE;
    return load_image(module, w->data);
}

static CUresult get_module_from_cubin(CUmodule *module, const fatbin_wrapper *w)
{
    return module_from_wrapper(module, w);
}

/* The device's primary context, without retaining it (the runtime retains it itself). */
static CUresult get_primary_context(CUcontext *pctx, CUdevice dev)
{
    CUresult r = tdm_cu_device(dev);

    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (r)
        return r;
    *pctx = (CUcontext)tdm_cu_primary(dev);
    return CUDA_SUCCESS;
}

/* Linking options and JIT buffers are not carried: a module with them is refused. */
static CUresult get_module_from_cubin_ext1(CUmodule *module, const fatbin_wrapper *w, void *a3, void *a4,
                                           unsigned a5)
{
    if (a3 || a4 || a5)
        return tdm_cu_refuse("cudart interface slot 6", "module loading with JIT options");
    return module_from_wrapper(module, w);
}

static void cudart_slot7(uintptr_t unused)
{
    (void)unused;
}

static CUresult get_module_from_cubin_ext2(const void *fatbin, CUmodule *module, void *a3, void *a4, unsigned a5)
{
    if (a3 || a4 || a5)
        return tdm_cu_refuse("cudart interface slot 8", "module loading with JIT options");
    return load_image(module, fatbin);
}

/* The driver loads its PTX compiler here; Tandem's server compiles, so there is nothing to load. */
static CUresult load_compilers(void)
{
    return CUDA_SUCCESS;
}

REFUSED(cudart_interface, 3)
REFUSED(cudart_interface, 4)
REFUSED(cudart_interface, 5)
REFUSED(cudart_interface, 9)
REFUSED(cudart_interface, 11)

static const void *const cudart_interface[13] = {
    (void *)(13 * sizeof(void *)),
    (void *)get_module_from_cubin,
    (void *)get_primary_context,
    (void *)refused_cudart_interface_3,
    (void *)refused_cudart_interface_4,
    (void *)refused_cudart_interface_5,
    (void *)get_module_from_cubin_ext1,
    (void *)cudart_slot7,
    (void *)get_module_from_cubin_ext2,
    (void *)refused_cudart_interface_9,
    NULL,   /* data in NVIDIA's table, not a function */
    (void *)refused_cudart_interface_11,
    (void *)load_compilers,
};

/* ---- TOOLS_TLS {42d85a81-23f6-cb47-8298-f6e78a3aecdc} ---- */

/* Called at each runtime API call for tools (profilers) with a record of the call and its
 * callback id; the driver fills in the record's context.  With no tool attached there is
 * nothing else to do. */
static CUresult tools_api_record(void **record, unsigned cbid, unsigned flag)
{
    (void)cbid;
    (void)flag;
    if (record)
        *record = (void *)tdm_cu_current();
    return CUDA_SUCCESS;
}

REFUSED(tools_tls, 1)

static const void *const tools_tls[3] = {
    (void *)(3 * sizeof(void *)),
    (void *)refused_tools_tls_1,
    (void *)tools_api_record,
};

/* ---- TOOLS_RUNTIME_CALLBACK_HOOKS {a094798c-2e74-2e74-93f2-0800200c0a66} ---- */

/* Two buffers the runtime reads its tools callbacks' switches from: all clear, as with no
 * tool attached.  Sizes as the driver gives them (1024 and 14 entries). */
static uint64_t hooks_buffer1[1024], hooks_buffer2[14];

static void hooks_get_buffer1(void **ptr, size_t *size)
{
    if (ptr)
        *ptr = hooks_buffer1;
    if (size)
        *size = sizeof(hooks_buffer1) / sizeof(hooks_buffer1[0]);
}

static void hooks_get_buffer2(void **ptr, size_t *size)
{
    if (ptr)
        *ptr = hooks_buffer2;
    if (size)
        *size = sizeof(hooks_buffer2) / sizeof(hooks_buffer2[0]);
}

REFUSED(hooks, 1)
REFUSED(hooks, 3)
REFUSED(hooks, 4)
REFUSED(hooks, 5)

static const void *const hooks[7] = {
    (void *)(7 * sizeof(void *)),
    (void *)refused_hooks_1,
    (void *)hooks_get_buffer1,
    (void *)refused_hooks_3,
    (void *)refused_hooks_4,
    (void *)refused_hooks_5,
    (void *)hooks_get_buffer2,
};

/* ---- CONTEXT_LOCAL_STORAGE {c693336e-1121-df11-a8c3-68f355d89593} ---- */

/* The runtime keeps its per-context state here, one value per key. */
static pthread_mutex_t cls_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult cls_put(CUcontext ctx, void *key, void *value, void (*dtor)(CUcontext, void *, void *))
{
    CUresult r;
    tdm_cu_ctx *c = tdm_cu_ctx_of(ctx, &r);
    tdm_cls_entry *free_slot = NULL;

    if (!c)
        return r;
    r = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&cls_lock);
    for (int i = 0; i < TDM_CLS_MAX; i++) {
        if (c->cls[i].key == key) {
            free_slot = &c->cls[i];
            break;
        }
        if (!c->cls[i].key && !free_slot)
            free_slot = &c->cls[i];
    }
    if (free_slot) {
        *free_slot = (tdm_cls_entry){ key, value, dtor };
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&cls_lock);
    if (r)
        tdm_log("context-local storage full (%d keys): the CUDA runtime cannot keep its state", TDM_CLS_MAX);
    return r;
}

static CUresult cls_delete(CUcontext ctx, void *key)
{
    CUresult r;
    tdm_cu_ctx *c = tdm_cu_ctx_of(ctx, &r);

    if (!c)
        return r;
    pthread_mutex_lock(&cls_lock);
    for (int i = 0; i < TDM_CLS_MAX; i++)
        if (c->cls[i].key == key)
            c->cls[i] = (tdm_cls_entry){ 0 };
    pthread_mutex_unlock(&cls_lock);
    return CUDA_SUCCESS;
}

static CUresult cls_get(void **value, CUcontext ctx, void *key)
{
    CUresult r;
    tdm_cu_ctx *c = tdm_cu_ctx_of(ctx, &r);

    if (!c)
        return r;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    r = CUDA_ERROR_INVALID_HANDLE;   /* as the driver answers a key it does not hold */
    pthread_mutex_lock(&cls_lock);
    for (int i = 0; i < TDM_CLS_MAX; i++)
        if (c->cls[i].key == key && key) {
            *value = c->cls[i].value;
            r = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&cls_lock);
    return r;
}

void tdm_cu_cls_context_gone(tdm_cu_ctx *ctx)
{
    tdm_cls_entry held[TDM_CLS_MAX];

    pthread_mutex_lock(&cls_lock);
    memcpy(held, ctx->cls, sizeof(held));
    memset(ctx->cls, 0, sizeof(ctx->cls));
    pthread_mutex_unlock(&cls_lock);
    /* Outside the lock: a destructor may call back into the table. */
    for (int i = 0; i < TDM_CLS_MAX; i++)
        if (held[i].key && held[i].dtor)
            held[i].dtor((CUcontext)ctx, held[i].key, held[i].value);
}

static const void *const context_local_storage[3] = {
    (void *)cls_put,
    (void *)cls_delete,
    (void *)cls_get,
};

/* ---- CONTEXT_CHECKS {263e8860-7cd2-6143-92f6-bbd5006dfa7e} ---- */

/* Asks whether a context is in a state the runtime must treat specially; never, here (the
 * driver answered 0 in every call measured). */
static CUresult context_check(CUcontext ctx, uint32_t *state, void **detail)
{
    (void)ctx;
    (void)detail;
    if (state)
        *state = 0;
    return CUDA_SUCCESS;
}

static uint32_t context_check_flags(void)
{
    return 0;
}

REFUSED(context_checks, 1)
REFUSED(context_checks, 4)
REFUSED(context_checks, 5)
REFUSED(context_checks, 6)
REFUSED(context_checks, 7)
REFUSED(context_checks, 8)
REFUSED(context_checks, 9)
REFUSED(context_checks, 10)
REFUSED(context_checks, 11)
REFUSED(context_checks, 12)
REFUSED(context_checks, 13)
REFUSED(context_checks, 14)

static const void *const context_checks[15] = {
    (void *)(15 * sizeof(void *)),
    (void *)refused_context_checks_1,
    (void *)context_check,
    (void *)context_check_flags,
    (void *)refused_context_checks_4,
    (void *)refused_context_checks_5,
    (void *)refused_context_checks_6,
    (void *)refused_context_checks_7,
    (void *)refused_context_checks_8,
    (void *)refused_context_checks_9,
    (void *)refused_context_checks_10,
    (void *)refused_context_checks_11,
    (void *)refused_context_checks_12,
    (void *)refused_context_checks_13,
    (void *)refused_context_checks_14,
};

/* ---- INTEGRITY_CHECK {d4082055-bde6-704b-8d34-ba123c66e1f2} ---- */

static CUresult integrity_check(uint32_t version, uint64_t unix_seconds, uint64_t result[2]);
REFUSED(integrity, 2)

static const void *const integrity[3] = {
    (void *)(3 * sizeof(void *)),
    (void *)integrity_check,
    (void *)refused_integrity_2,
};

/* The runtime checks that the driver is the one it was given by computing the same HMAC-MD2
 * over the driver's version, its own version, the calling process and thread, the addresses of
 * this table, of the cudart interface table and of this function, the time it passes in, and
 * each device's UUID and PCI location.  Two runtime versions get a fixed answer instead. */
static const uint8_t integrity_key[16] = { 0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
                                           0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f };

struct integrity_input {
    uint32_t driver_version, runtime_version, pid, thread;
    const void *cudart_table, *integrity_table, *function;
    uint64_t unix_seconds;
};

struct integrity_device {
    uint8_t uuid[16];
    int32_t pci_domain, pci_bus, pci_device;
};

#define INTEGRITY_DEVICES_MAX 16

static CUresult integrity_check(uint32_t version, uint64_t unix_seconds, uint64_t result[2])
{
    struct integrity_input in;
    struct integrity_device dev[INTEGRITY_DEVICES_MAX];
    const void *parts[1 + INTEGRITY_DEVICES_MAX];
    size_t lens[1 + INTEGRITY_DEVICES_MAX];
    int count = 0, driver = 0;
    uint8_t mac[16];
    CUresult r;

    if (!result)
        return CUDA_ERROR_INVALID_VALUE;
    if (version % 10 == 0 || version % 10 == 1) {
        result[0] = version % 10 == 0 ? 0x3341181c03cb675cull : 0x1841181c03cb675cull;
        result[1] = 0x8ed383aa1f4cd1e8ull;
        return CUDA_SUCCESS;
    }
    if ((r = cuDriverGetVersion(&driver)) || (r = cuDeviceGetCount(&count)))
        return r;
    if (count > INTEGRITY_DEVICES_MAX)
        count = INTEGRITY_DEVICES_MAX;
    memset(&in, 0, sizeof(in));
    in.driver_version = (uint32_t)driver;
    in.runtime_version = version;
    in.pid = (uint32_t)getpid();
    in.thread = (uint32_t)pthread_self();
    in.cudart_table = cudart_interface;
    in.integrity_table = integrity;
    in.function = (const void *)integrity_check;
    in.unix_seconds = unix_seconds;
    parts[0] = &in;
    lens[0] = sizeof(in);
    for (int d = 0; d < count; d++) {
        CUuuid uuid;
        memset(&dev[d], 0, sizeof(dev[d]));
        if ((r = cuDeviceGetUuid(&uuid, d)) ||
            (r = cuDeviceGetAttribute(&dev[d].pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d)) ||
            (r = cuDeviceGetAttribute(&dev[d].pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d)) ||
            (r = cuDeviceGetAttribute(&dev[d].pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d)))
            return r;
        memcpy(dev[d].uuid, uuid.bytes, sizeof(dev[d].uuid));
        parts[1 + d] = &dev[d];
        lens[1 + d] = sizeof(dev[d]);
    }
    tdm_hmac_md2(integrity_key, parts, lens, 1 + (unsigned)count, mac);
    memcpy(result, mac, sizeof(mac));
    return CUDA_SUCCESS;
}

/* ---- {69a28e9f-2449-8b47-b030-c5da330ea4e9}: asked for by CUDA 13's runtime ---- */

/* Slot 19 makes an object and hands it back through its first argument, slot 21 is then
 * given it; slots 24 and 25 are told about the runtime's state (the driver changed nothing the
 * trace could see and answered 0).  Tandem keeps the object as a zeroed block the session
 * frees at exit. */
#define RUNTIME_OBJECT_BYTES 4096
static CUresult runtime_object_create(void **out)
{
    void *p;

    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    p = calloc(1, RUNTIME_OBJECT_BYTES);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = p;
    return CUDA_SUCCESS;
}

static CUresult runtime_notice(void)
{
    return CUDA_SUCCESS;
}

#define R69(n) REFUSED(t69a28e9f, n)
R69(1) R69(2) R69(3) R69(4) R69(5) R69(6) R69(7) R69(8) R69(9) R69(10) R69(11) R69(12) R69(13) R69(14)
R69(15) R69(16) R69(17) R69(18) R69(20) R69(22) R69(23) R69(26) R69(27) R69(28) R69(29) R69(30) R69(31)
R69(32) R69(33)
#define S69(n) (void *)refused_t69a28e9f_##n
static const void *const t69a28e9f[34] = {
    (void *)(34 * sizeof(void *)),
    S69(1), S69(2), S69(3), S69(4), S69(5), S69(6), S69(7), S69(8), S69(9), S69(10), S69(11), S69(12),
    S69(13), S69(14), S69(15), S69(16), S69(17), S69(18),
    (void *)runtime_object_create,
    S69(20),
    (void *)runtime_notice,
    S69(22), S69(23),
    (void *)runtime_notice,
    (void *)runtime_notice,
    S69(26), S69(27), S69(28), S69(29), S69(30), S69(31), S69(32), S69(33),
};

/* ---- {f8cff951-2146-8b4e-b9e2-fb469e7c0dd9}: a library registers its message strings ---- */

static CUresult register_messages(void)
{
    return CUDA_SUCCESS;
}

REFUSED(tf8cff951, 2)

static const void *const tf8cff951[3] = {
    (void *)(3 * sizeof(void *)),
    (void *)register_messages,
    (void *)refused_tf8cff951_2,
};

/* ---- {21318c60-9714-3248-8ca6-41ff7324c8f2}: asked for by cuBLAS and cuBLASLt ---- */

/* 93 slots.  cuBLAS calls slot 4 with a context and a word to fill in, and the driver wrote 1
 * there in every call measured (2026-11-24, H100): cuBLAS refuses to run (CUBLAS_STATUS_NOT_
 * SUPPORTED) without the table. */
static CUresult blas_context_query(CUcontext ctx, uint64_t *out)
{
    (void)ctx;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    *out = 1;
    return CUDA_SUCCESS;
}

#define BLAS_SLOTS 93
#define RB(n) REFUSED(t21318c60, n)
RB(1) RB(2) RB(3) RB(5) RB(6) RB(7) RB(8) RB(9) RB(10) RB(11) RB(12) RB(13) RB(14) RB(15) RB(16) RB(17) RB(18)
RB(19) RB(20) RB(21) RB(22) RB(23) RB(24) RB(25) RB(26) RB(27) RB(28) RB(29) RB(30) RB(31) RB(32) RB(33) RB(34)
RB(35) RB(36) RB(37) RB(38) RB(39) RB(40) RB(41) RB(42) RB(43) RB(44) RB(45) RB(46) RB(47) RB(48) RB(49) RB(50)
RB(51) RB(52) RB(53) RB(54) RB(55) RB(56) RB(57) RB(58) RB(59) RB(60) RB(61) RB(62) RB(63) RB(64) RB(65) RB(66)
RB(67) RB(68) RB(69) RB(70) RB(71) RB(72) RB(73) RB(74) RB(75) RB(76) RB(77) RB(78) RB(79) RB(80) RB(81) RB(82)
RB(83) RB(84) RB(85) RB(86) RB(87) RB(88) RB(89) RB(90) RB(92)
#define SB(n) (void *)refused_t21318c60_##n
static const void *const t21318c60[BLAS_SLOTS] = {
    (void *)(BLAS_SLOTS * sizeof(void *)),
    SB(1), SB(2), SB(3), (void *)blas_context_query, SB(5), SB(6), SB(7), SB(8), SB(9), SB(10), SB(11), SB(12),
    SB(13), SB(14), SB(15), SB(16), SB(17), SB(18), SB(19), SB(20), SB(21), SB(22), SB(23), SB(24), SB(25), SB(26),
    SB(27), SB(28), SB(29), SB(30), SB(31), SB(32), SB(33), SB(34), SB(35), SB(36), SB(37), SB(38), SB(39), SB(40),
    SB(41), SB(42), SB(43), SB(44), SB(45), SB(46), SB(47), SB(48), SB(49), SB(50), SB(51), SB(52), SB(53), SB(54),
    SB(55), SB(56), SB(57), SB(58), SB(59), SB(60), SB(61), SB(62), SB(63), SB(64), SB(65), SB(66), SB(67), SB(68),
    SB(69), SB(70), SB(71), SB(72), SB(73), SB(74), SB(75), SB(76), SB(77), SB(78), SB(79), SB(80), SB(81), SB(82),
    SB(83), SB(84), SB(85), SB(86), SB(87), SB(88), SB(89), SB(90),
    NULL,   /* data in NVIDIA's table, not a function */
    SB(92),
};

/* ---- {1734dc26-800d-4745-8726-c0f1e7dd8bca}: asked for by cuBLASLt, NVRTC and nvJitLink ---- */

/* 17 slots.  Slot 4 makes two objects and slot 13 fills each with a pointer and a per-process
 * 64-bit tag (H100 trace); what they guard is not known.  Answering the table's request with
 * CUDA_ERROR_NOT_FOUND crashed the library that asked (a NULL table, used anyway), so the
 * table is given and every slot refuses with a line: the caller gets an error it checks. */
#define R17(n) REFUSED(t1734dc26, n)
R17(1) R17(2) R17(3) R17(4) R17(5) R17(6) R17(7) R17(8) R17(9) R17(10) R17(11) R17(12) R17(13) R17(14) R17(15)
R17(16)
#define S17(n) (void *)refused_t1734dc26_##n
static const void *const t1734dc26[17] = {
    (void *)(17 * sizeof(void *)),
    S17(1), S17(2), S17(3), S17(4), S17(5), S17(6), S17(7), S17(8), S17(9), S17(10), S17(11), S17(12), S17(13),
    S17(14), S17(15), S17(16),
};

/* ---- the lookup ---- */

typedef struct export_table {
    const char *name;
    uint8_t uuid[16];
    const void *const *table;
} export_table;

static const export_table tables[] = {
    { "cudart interface",
      { 0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9 },
      cudart_interface },
    { "tools TLS",
      { 0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc },
      tools_tls },
    { "tools runtime callback hooks",
      { 0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66 },
      hooks },
    { "context-local storage",
      { 0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93 },
      context_local_storage },
    { "context checks",
      { 0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e },
      context_checks },
    { "integrity check",
      { 0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2 },
      integrity },
    { "runtime state (69a28e9f)",
      { 0x69, 0xa2, 0x8e, 0x9f, 0x24, 0x49, 0x8b, 0x47, 0xb0, 0x30, 0xc5, 0xda, 0x33, 0x0e, 0xa4, 0xe9 },
      t69a28e9f },
    { "cuBLAS (21318c60)",
      { 0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2 },
      t21318c60 },
    { "cuBLASLt, NVRTC (1734dc26)",
      { 0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45, 0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca },
      t1734dc26 },
    { "messages (f8cff951)",
      { 0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9 },
      tf8cff951 },
};

CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    char hex[33];

    if (!ppExportTable || !pExportTableId)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
        if (memcmp(tables[i].uuid, pExportTableId->bytes, 16) == 0) {
            *ppExportTable = tables[i].table;
            return CUDA_SUCCESS;
        }
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)pExportTableId->bytes[i]);
    tdm_log("the driver's private export table %s is not carried by Tandem (returning CUDA_ERROR_NOT_FOUND)", hex);
    *ppExportTable = NULL;
    return CUDA_ERROR_NOT_FOUND;
}
