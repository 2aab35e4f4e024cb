/* Device odds and ends (docs/runtime-api.md, "Device odds and ends"):
 * initialisation and device lists, the 1D linear texture limit, atomic
 * capabilities, async notification callbacks.  The process has one device,
 * 0; every other ordinal is cudaErrorInvalidDevice, as the driver answers
 * for a device that does not exist. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
    cudaError_t err = tdm_check_device(device);

    if (err)
        return tdm_ret(err);
    if (flags & ~(unsigned)cudaInitDeviceFlagsAreValid)
        return tdm_ret(cudaErrorInvalidValue);
    /* The primary context is the server's, made when the session began;
     * what is left to do here is the flags, as cudaSetDeviceFlags does. */
    if (flags & cudaInitDeviceFlagsAreValid)
        return cudaSetDeviceFlags(deviceFlags);
    return cudaSuccess;
}

/* With one device the list can only be {0}: the order of preference it
 * gives changes nothing, but every ordinal in it must exist. */
cudaError_t cudaSetValidDevices(int *device_arr, int len)
{
    int n = 0;
    cudaError_t err;

    if (len == 0)
        return cudaSuccess;
    err = cudaGetDeviceCount(&n);
    if (err)
        return err;
    if (len < 0 || !device_arr || len > n)
        return tdm_ret(cudaErrorInvalidValue);
    for (int i = 0; i < len; i++)
        if ((err = tdm_check_device(device_arr[i])) != cudaSuccess)
            return tdm_ret(err);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetTexture1DLinearMaxWidth(size_t *maxWidthInElements, const struct cudaChannelFormatDesc *fmtDesc,
                                                 int device)
{
    tdm_tex1d_width_args a;
    tdm_u64_res r;
    cudaError_t err;

    if (!maxWidthInElements || !fmtDesc)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = tdm_check_device(device)) != cudaSuccess)
        return tdm_ret(err);
    a.kind = (int)fmtDesc->f;
    a.bits[0] = fmtDesc->x;
    a.bits[1] = fmtDesc->y;
    a.bits[2] = fmtDesc->z;
    a.bits[3] = fmtDesc->w;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_DEVICE_TEX1D_LINEAR_MAX_WIDTH, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *maxWidthInElements = (size_t)r.value;
    return tdm_ret(err);
}

static bool valid_atomic_ops(const enum cudaAtomicOperation *ops, unsigned int count)
{
    for (unsigned int i = 0; i < count; i++)
        if ((unsigned)ops[i] >= TDM_ATOMIC_OPERATIONS)
            return false;
    return true;
}

cudaError_t cudaDeviceGetHostAtomicCapabilities(unsigned int *capabilities, const enum cudaAtomicOperation *operations,
                                                unsigned int count, int device)
{
    tdm_atomic_caps_res r;
    cudaError_t err;

    if ((err = tdm_check_device(device)) != cudaSuccess)
        return tdm_ret(err);
    if (!capabilities || !operations || !count || !valid_atomic_ops(operations, count))
        return tdm_ret(cudaErrorInvalidValue);
    /* One call answers every operation; the program's list picks from it. */
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_DEVICE_HOST_ATOMIC_CAPS, NULL, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return tdm_ret(err);
    for (unsigned int i = 0; i < count; i++)
        capabilities[i] = r.caps[operations[i]];
    return cudaSuccess;
}

/* A link joins two different devices: on a one-device machine there is
 * none, whatever the ordinals. */
cudaError_t cudaDeviceGetP2PAtomicCapabilities(unsigned int *capabilities, const enum cudaAtomicOperation *operations,
                                               unsigned int count, int srcDevice, int dstDevice)
{
    cudaError_t err;

    if ((err = tdm_check_device(srcDevice)) != cudaSuccess || (err = tdm_check_device(dstDevice)) != cudaSuccess)
        return tdm_ret(err);
    (void)capabilities;
    (void)operations;
    (void)count;
    return tdm_ret(cudaErrorInvalidDevice); /* srcDevice == dstDevice: the only pair there is */
}

/* ---- async notifications ---- */
/* The program's registered callbacks.  The driver calls them when it has
 * news for the process (today only cudaAsyncNotificationTypeOverBudget);
 * the server forwards none, so they are kept only to be unregistered
 * (docs/runtime-api.md says why). */
struct cudaAsyncCallbackEntry {
    struct cudaAsyncCallbackEntry *next;
    cudaAsyncCallback func;
    void *user_data;
};

static pthread_mutex_t async_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cudaAsyncCallbackEntry *async_callbacks;

cudaError_t cudaDeviceRegisterAsyncNotification(int device, cudaAsyncCallback callbackFunc, void *userData,
                                                cudaAsyncCallbackHandle_t *callback)
{
    struct cudaAsyncCallbackEntry *e;
    cudaError_t err = tdm_check_device(device);

    if (err)
        return tdm_ret(err);
    if (!callbackFunc || !callback)
        return tdm_ret(cudaErrorInvalidValue);
    if (!(e = calloc(1, sizeof(*e))))
        return tdm_ret(cudaErrorMemoryAllocation);
    e->func = callbackFunc;
    e->user_data = userData;
    pthread_mutex_lock(&async_lock);
    e->next = async_callbacks;
    async_callbacks = e;
    pthread_mutex_unlock(&async_lock);
    *callback = e;
    return cudaSuccess;
}

cudaError_t cudaDeviceUnregisterAsyncNotification(int device, cudaAsyncCallbackHandle_t callback)
{
    struct cudaAsyncCallbackEntry **p, *found = NULL;
    cudaError_t err = tdm_check_device(device);

    if (err)
        return tdm_ret(err);
    pthread_mutex_lock(&async_lock);
    for (p = &async_callbacks; *p; p = &(*p)->next)
        if (*p == callback) {
            found = *p;
            *p = found->next;
            break;
        }
    pthread_mutex_unlock(&async_lock);
    if (!found)
        return tdm_ret(cudaErrorInvalidValue);
    free(found);
    return cudaSuccess;
}

/* cudaStreamCopyAttributes: what cuStreamCopyAttributes copies, the
 * attributes a stream can be given after it is made, each read from src
 * and set on dst through the calls that check them. */
cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src)
{
    static const cudaStreamAttrID copied[] = {
        cudaStreamAttributeAccessPolicyWindow,
        cudaStreamAttributeSynchronizationPolicy,
        cudaStreamAttributeMemSyncDomainMap,
        cudaStreamAttributeMemSyncDomain,
    };
    cudaStreamAttrValue v[sizeof(copied) / sizeof(copied[0])];
    cudaError_t err;

    /* Every read before any write: a bad src leaves dst as it was. */
    for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++)
        if ((err = cudaStreamGetAttribute(src, copied[i], &v[i])) != cudaSuccess)
            return err;
    for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++)
        if ((err = cudaStreamSetAttribute(dst, copied[i], &v[i])) != cudaSuccess)
            return err;
    return cudaSuccess;
}

cudaError_t cudaStreamCopyAttributes_ptsz(cudaStream_t dst, cudaStream_t src)
{
    return cudaStreamCopyAttributes(dst ? dst : cudaStreamPerThread, src ? src : cudaStreamPerThread);
}
