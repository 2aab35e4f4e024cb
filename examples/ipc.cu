// ipc: CUDA IPC between processes, as cuda-samples' simpleIPC uses it
// (docs/ipc.md).  The parent allocates one buffer and one interprocess event
// per child, exports their handles through POSIX shared memory of its own
// (shm_open) and fork+execs the children; each child opens every handle
// (cudaIpcOpenMemHandle with cudaIpcMemLazyEnablePeerAccess,
// cudaIpcOpenEventHandle), and in each step updates one buffer after
// waiting on its event and records the event again, so the steps of the
// processes on one buffer are ordered through the device across processes.
// Every update is p = p * 31 + (id + 1), so the final contents show the
// order.  Children report to shared memory; only the parent prints, so the
// output is the same on every run, natively and through Tandem.
//
//   ipc [children]      (2 by default, at most 8)
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>

#define MAX_CHILDREN 8
#define N (1 << 18)

struct shared {
    int nchildren;
    volatile int barrier, sense;
    cudaIpcMemHandle_t mem[MAX_CHILDREN];
    cudaIpcEventHandle_t ev[MAX_CHILDREN];
    // Written by the children, printed by the parent.
    int verified[MAX_CHILDREN];       // 1: its buffer held what the order gives
    int reopen_same[MAX_CHILDREN];    // 1: opening a handle twice gave the same pointer
    int free_import_err[MAX_CHILDREN];
    int close_twice_err[MAX_CHILDREN];
    int failed_err[MAX_CHILDREN];     // first CUDA error of the child, 0 if none
};

__global__ void ipc_step(unsigned int *p, int n, unsigned int v)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = p[i] * 31u + v;
}

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_));     \
            return e_;                                                                               \
        }                                                                                            \
    } while (0)

static void shm_name(char *buf, size_t len, int parent_pid)
{
    snprintf(buf, len, "/tandem-ipc-check-%d", parent_pid);
}

static void barrier_wait(struct shared *sh, int n)
{
    if (__sync_add_and_fetch(&sh->barrier, 1) == n)
        sh->sense = 1;
    while (!sh->sense)
        ;
    if (__sync_add_and_fetch(&sh->barrier, -1) == 0)
        sh->sense = 0;
    while (sh->sense)
        ;
}

// What buffer b holds after every step, computed on the host.
static unsigned int expected(int b, int n)
{
    unsigned int x = 0;

    for (int step = 0; step < n; step++) {
        int writer = ((b - step) % n + n) % n;   // the child that updates b in this step
        x = x * 31u + (unsigned int)(writer + 1);
    }
    return x;
}

static cudaError_t child(struct shared *sh, int id)
{
    int n = sh->nchildren;
    void *ptr[MAX_CHILDREN], *again = NULL;
    cudaEvent_t ev[MAX_CHILDREN];
    cudaStream_t stream;
    unsigned int *host;

    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int i = 0; i < n; i++) {
        CHECK(cudaIpcOpenMemHandle(&ptr[i], sh->mem[i], cudaIpcMemLazyEnablePeerAccess));
        CHECK(cudaIpcOpenEventHandle(&ev[i], sh->ev[i]));
    }
    // The same handle again: the same pointer, one more reference.
    CHECK(cudaIpcOpenMemHandle(&again, sh->mem[id], cudaIpcMemLazyEnablePeerAccess));
    sh->reopen_same[id] = again == ptr[id];
    CHECK(cudaIpcCloseMemHandle(again));
    // Opened memory is not the opener's to free.
    sh->free_import_err[id] = (int)cudaFree(ptr[id]);
    cudaGetLastError();

    for (int step = 0; step < n; step++) {
        int b = (step + id) % n;
        CHECK(cudaStreamWaitEvent(stream, ev[b], 0));
        ipc_step<<<64, 128, 0, stream>>>((unsigned int *)ptr[b], N, (unsigned int)(id + 1));
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(ev[b], stream));
        // Every child has queued this step before any queues the next, so
        // each wait finds the record of the step before.
        barrier_wait(sh, n);
    }
    CHECK(cudaStreamWaitEvent(stream, ev[id], 0));
    host = (unsigned int *)malloc(N * sizeof(*host));
    CHECK(cudaMemcpyAsync(host, ptr[id], N * sizeof(*host), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    sh->verified[id] = 1;
    for (int j = 0; j < N; j++)
        if (host[j] != expected(id, n)) {
            sh->verified[id] = 0;
            break;
        }
    free(host);
    for (int i = 0; i < n; i++) {
        CHECK(cudaIpcCloseMemHandle(ptr[i]));
        CHECK(cudaEventDestroy(ev[i]));
    }
    sh->close_twice_err[id] = (int)cudaIpcCloseMemHandle(ptr[id]);
    cudaGetLastError();
    CHECK(cudaStreamDestroy(stream));
    return cudaSuccess;
}

static int child_main(int id)
{
    char name[64];
    struct shared *sh;
    int fd;

    shm_name(name, sizeof(name), (int)getppid());
    fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        perror("ipc child: shm_open");
        return 1;
    }
    sh = (struct shared *)mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (sh == MAP_FAILED)
        return 1;
    sh->failed_err[id] = (int)child(sh, id);
    return sh->failed_err[id] ? 1 : 0;
}

// A child forked without exec from a process using CUDA: CUDA refuses it.
static void fork_without_exec(void)
{
    pid_t pid = fork();
    int st = 0;

    if (pid == 0) {
        void *p = NULL;
        _exit((int)cudaMalloc(&p, 256) & 0xff);
    }
    waitpid(pid, &st, 0);
    printf("forked child without exec: %s\n",
           WIFEXITED(st) ? cudaGetErrorName((cudaError_t)WEXITSTATUS(st)) : "killed");
}

static cudaError_t parent(const char *self, int n)
{
    char name[64], arg[16];
    struct shared *sh;
    void *ptr[MAX_CHILDREN];
    cudaEvent_t ev[MAX_CHILDREN], plain, bad;
    cudaIpcMemHandle_t h2;
    cudaIpcEventHandle_t eh;
    pid_t kids[MAX_CHILDREN];
    void *own = NULL;
    int fd, count = 0, failed = 0;

    CHECK(cudaGetDeviceCount(&count));
    shm_name(name, sizeof(name), (int)getpid());
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(*sh)) != 0) {
        perror("ipc: shm_open");
        return cudaErrorUnknown;
    }
    sh = (struct shared *)mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (sh == MAP_FAILED)
        return cudaErrorUnknown;
    memset(sh, 0, sizeof(*sh));
    sh->nchildren = n;

    for (int i = 0; i < n; i++) {
        CHECK(cudaMalloc(&ptr[i], N * sizeof(unsigned int)));
        CHECK(cudaMemset(ptr[i], 0, N * sizeof(unsigned int)));
        CHECK(cudaIpcGetMemHandle(&sh->mem[i], ptr[i]));
        CHECK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming | cudaEventInterprocess));
        CHECK(cudaIpcGetEventHandle(&sh->ev[i], ev[i]));
    }
    CHECK(cudaDeviceSynchronize());

    // The rules of exporting, in the exporting process.
    CHECK(cudaIpcGetMemHandle(&h2, ptr[0]));
    printf("handle of the same allocation twice: %s\n", memcmp(&h2, &sh->mem[0], sizeof(h2)) ? "differs" : "same");
    printf("opening its own handle: %s\n", cudaGetErrorName(cudaIpcOpenMemHandle(&own, sh->mem[0],
                                                                                 cudaIpcMemLazyEnablePeerAccess)));
    cudaGetLastError();
    printf("interprocess event with timing: %s\n",
           cudaGetErrorName(cudaEventCreateWithFlags(&bad, cudaEventInterprocess)));
    cudaGetLastError();
    CHECK(cudaEventCreate(&plain));
    printf("handle of an event without cudaEventInterprocess: %s\n",
           cudaGetErrorName(cudaIpcGetEventHandle(&eh, plain)));
    cudaGetLastError();
    CHECK(cudaEventDestroy(plain));

    fflush(stdout);
    for (int i = 0; i < n; i++) {
        snprintf(arg, sizeof(arg), "%d", i);
        kids[i] = fork();
        if (kids[i] == 0) {
            execl("/proc/self/exe", self, "--child", arg, (char *)NULL);
            _exit(127);
        }
    }
    for (int i = 0; i < n; i++) {
        int st = 0;
        waitpid(kids[i], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            failed++;
    }
    for (int i = 0; i < n; i++) {
        printf("child %d: %s, reopened: %s, cudaFree of opened memory: %s, closed twice: %s\n", i,
               sh->failed_err[i] ? cudaGetErrorName((cudaError_t)sh->failed_err[i])
                                 : (sh->verified[i] ? "buffer verified" : "BUFFER WRONG"),
               sh->reopen_same[i] ? "same pointer" : "other pointer",
               cudaGetErrorName((cudaError_t)sh->free_import_err[i]),
               cudaGetErrorName((cudaError_t)sh->close_twice_err[i]));
        if (!sh->verified[i])
            failed++;
    }
    // The parent sees what the children did, through its own pointers.
    for (int i = 0; i < n; i++) {
        unsigned int first = 0, last = 0;
        CHECK(cudaMemcpy(&first, ptr[i], sizeof(first), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&last, (unsigned int *)ptr[i] + N - 1, sizeof(last), cudaMemcpyDeviceToHost));
        printf("buffer %d in the parent: %s\n", i,
               first == expected(i, n) && last == expected(i, n) ? "as ordered" : "WRONG");
        if (first != expected(i, n) || last != expected(i, n))
            failed++;
    }
    fork_without_exec();
    for (int i = 0; i < n; i++) {
        CHECK(cudaFree(ptr[i]));
        CHECK(cudaEventDestroy(ev[i]));
    }
    shm_unlink(name);
    printf("%s\n", failed ? "FAILED" : "PASSED");
    return failed ? cudaErrorUnknown : cudaSuccess;
}

int main(int argc, char **argv)
{
    int n = 2;

    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child_main(atoi(argv[2]));
    if (argc == 2)
        n = atoi(argv[1]);
    if (n < 1 || n > MAX_CHILDREN) {
        fprintf(stderr, "usage: ipc [children (1..%d)]\n", MAX_CHILDREN);
        return 2;
    }
    return parent(argv[0], n) == cudaSuccess ? 0 : 1;
}
