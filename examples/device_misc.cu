// device-misc: the device odds and ends (docs/runtime-api.md, "Device odds
// and ends"): cudaInitDevice, cudaSetValidDevices, the 1D linear texture
// width, host and peer atomic capabilities, async notification callbacks,
// the error log calls and cudaStreamCopyAttributes, with their refusals.
// Prints only what is the same natively and through Tandem on one GPU;
// with --values it also prints the device's own answers (texture widths,
// atomic capabilities), equal natively and through Tandem's cuda backend;
// with --tandem-logs, what Tandem's own error log holds after an error (the
// driver's messages differ: for the CI test only).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "device-misc: %s failed at %s:%d: %s\n", #call, __FILE__,  \
                    __LINE__, cudaGetErrorName(err_));                                 \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static void say(const char *what, cudaError_t e)
{
    printf("%s: %s\n", what, cudaGetErrorName(e));
    cudaGetLastError();
}

static void CUDART_CB on_notification(cudaAsyncNotificationInfo_t *, void *, cudaAsyncCallbackHandle_t)
{
}

static int log_messages;
static void CUDART_CB on_log(void *data, cudaLogLevel, char *, size_t)
{
    ++*(int *)data;
}

int main(int argc, char **argv)
{
    bool values = false, tandem_logs = false;
    for (int i = 1; i < argc; i++) {
        values |= strcmp(argv[i], "--values") == 0;
        tandem_logs |= strcmp(argv[i], "--tandem-logs") == 0;
    }
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    const int bad = count; // the first ordinal that is no device

    // cudaInitDevice
    say("init device 0", cudaInitDevice(0, 0, 0));
    say("init no device", cudaInitDevice(bad, 0, 0));
    say("init device 0 with blocking sync", cudaInitDevice(0, cudaDeviceScheduleBlockingSync,
                                                           cudaInitDeviceFlagsAreValid));
    unsigned flags = 0;
    CHECK(cudaGetDeviceFlags(&flags));
    printf("device flags include blocking sync: %s\n",
           (flags & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync ? "yes" : "no");

    // cudaSetValidDevices
    int list[2] = { 0, bad };
    say("valid devices: none", cudaSetValidDevices(NULL, 0));
    say("valid devices: {0}", cudaSetValidDevices(list, 1));
    say("valid devices: {no device}", cudaSetValidDevices(list + 1, 1));
    say("valid devices: NULL list of 1", cudaSetValidDevices(NULL, 1));

    // 1D linear texture width
    size_t width = 0;
    cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
    cudaChannelFormatDesc u4 = cudaCreateChannelDesc<uchar4>();
    cudaError_t e = cudaDeviceGetTexture1DLinearMaxWidth(&width, &f1, 0);
    say("texture 1D linear width, float", e);
    if (values)
        printf("  float: %zu elements\n", width);
    e = cudaDeviceGetTexture1DLinearMaxWidth(&width, &u4, 0);
    say("texture 1D linear width, uchar4", e);
    if (values)
        printf("  uchar4: %zu elements\n", width);
    say("texture 1D linear width, NULL format", cudaDeviceGetTexture1DLinearMaxWidth(&width, NULL, 0));
    say("texture 1D linear width, no device", cudaDeviceGetTexture1DLinearMaxWidth(&width, &f1, bad));

    // Atomic capabilities
    const cudaAtomicOperation ops[3] = { cudaAtomicOperationIntegerAdd, cudaAtomicOperationCAS,
                                         cudaAtomicOperationFloatAdd };
    unsigned caps[3] = { 0, 0, 0 };
    e = cudaDeviceGetHostAtomicCapabilities(caps, ops, 3, 0);
    say("host atomic capabilities", e);
    if (values)
        printf("  add %#x, cas %#x, float add %#x\n", caps[0], caps[1], caps[2]);
    say("host atomic capabilities, count 0", cudaDeviceGetHostAtomicCapabilities(caps, ops, 0, 0));
    say("host atomic capabilities, no device", cudaDeviceGetHostAtomicCapabilities(caps, ops, 3, bad));
    if (count == 1)
        say("peer atomic capabilities 0 -> 0", cudaDeviceGetP2PAtomicCapabilities(caps, ops, 3, 0, 0));

    // Async notifications: registered and unregistered; a device with a
    // memory budget would call the callback when the process exceeds it.
    cudaAsyncCallbackHandle_t h = NULL;
    say("register notification", cudaDeviceRegisterAsyncNotification(0, on_notification, NULL, &h));
    say("register notification, NULL callback", cudaDeviceRegisterAsyncNotification(0, NULL, NULL, &h));
    say("register notification, no device", cudaDeviceRegisterAsyncNotification(bad, on_notification, NULL, &h));
    say("unregister notification", cudaDeviceUnregisterAsyncNotification(0, h));

    // Error logs
    cudaLogsCallbackHandle lh = NULL;
    cudaLogIterator it = 0;
    say("register log callback", cudaLogsRegisterCallback(on_log, &log_messages, &lh));
    say("register log callback, NULL", cudaLogsRegisterCallback(NULL, NULL, NULL));
    say("logs current", cudaLogsCurrent(&it, 0));
    say("logs current, NULL", cudaLogsCurrent(NULL, 0));
    say("logs current, flags 1", cudaLogsCurrent(&it, 1));
    char buf[4096];
    size_t size = sizeof(buf);
    cudaLogsCurrent(&it, 0);
    e = cudaLogsDumpToMemory(&it, buf, &size, 0);
    printf("logs dump with nothing new: %s, %zu bytes\n", cudaGetErrorName(e), size);
    size = sizeof(buf);
    say("logs dump, flags 1", cudaLogsDumpToMemory(&it, buf, &size, 1));
    say("logs dump, NULL size", cudaLogsDumpToMemory(&it, buf, NULL, 0));
    say("logs dump to file, NULL path", cudaLogsDumpToFile(&it, NULL, 0));
    if (tandem_logs) {
        int before = log_messages;
        cudaLogsCurrent(&it, 0);
        cudaSetDevice(bad);
        cudaGetLastError();
        size = sizeof(buf);
        e = cudaLogsDumpToMemory(&it, buf, &size, 0);
        const char *tail = strstr(buf, "[CUDA][E] ");
        printf("log after an error: %s, callback called %d time(s), %s", cudaGetErrorName(e),
               log_messages - before, e == cudaSuccess && tail ? tail : "(no message)\n");
        size = 8;
        e = cudaLogsDumpToMemory(NULL, buf, &size, 0);
        printf("log into 8 bytes: %s, %zu bytes\n", cudaGetErrorName(e), size);
    }
    say("unregister log callback", cudaLogsUnregisterCallback(lh));

    // cudaStreamCopyAttributes
    cudaStream_t a, b;
    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cudaStreamAttrValue v;
    memset(&v, 0, sizeof(v));
    v.syncPolicy = cudaSyncPolicyYield;
    CHECK(cudaStreamSetAttribute(a, cudaStreamAttributeSynchronizationPolicy, &v));
    memset(&v, 0, sizeof(v));
    v.memSyncDomain = cudaLaunchMemSyncDomainRemote;
    CHECK(cudaStreamSetAttribute(a, cudaStreamAttributeMemSyncDomain, &v));
    say("copy stream attributes", cudaStreamCopyAttributes(b, a));
    memset(&v, 0, sizeof(v));
    CHECK(cudaStreamGetAttribute(b, cudaStreamAttributeSynchronizationPolicy, &v));
    printf("copied sync policy: %d\n", (int)v.syncPolicy);
    memset(&v, 0, sizeof(v));
    CHECK(cudaStreamGetAttribute(b, cudaStreamAttributeMemSyncDomain, &v));
    printf("copied mem sync domain: %d\n", (int)v.memSyncDomain);
    CHECK(cudaStreamDestroy(a));
    CHECK(cudaStreamDestroy(b));
    say("still usable", cudaDeviceSynchronize());
    return 0;
}
