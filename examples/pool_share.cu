// Sharing a memory pool between two processes (docs/ipc.md, "Sharing memory
// pools"): the parent creates a pool with POSIX file descriptor handles,
// allocates from it and fills the memory, then passes the pool's file
// descriptor over a unix socket (SCM_RIGHTS) with the pointer's export data
// to a forked child.  The child imports the pool and the pointer, reads what
// the parent wrote and writes its own values, which the parent reads back.
// Only the parent prints, so the output is deterministic; it is the same
// natively and through Tandem.
//
// `pool_share --tandem-cross-server ENDPOINT` makes the child a guest of
// another Tandem server, whose import must fail.
// `pool_share --tandem-checks` adds lines only Tandem's answers are known
// for (a forged handle, a pointer of another pool, a session importing its
// own pool, an owner freeing while the child still holds the memory).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pool_kernels.cuh"

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "pool_share(%d): %s failed at %s:%d: %s (%s)\n", (int)getpid(), #call, \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static const int N = 1 << 12, THREADS = 256, BLOCKS = (N + THREADS - 1) / THREADS;
static const size_t BYTES = (size_t)N * sizeof(unsigned int);

// A message: a tag, up to two file descriptors, and a payload.
struct msg {
    int tag;
    int nfds;
    cudaMemPoolPtrExportData data[2];
    long long value[4];
};

static void send_msg(int sock, const msg *m, const int *fds)
{
    struct iovec iov = { (void *)m, sizeof(*m) };
    char ctl[CMSG_SPACE(2 * sizeof(int))];
    struct msghdr h;
    memset(&h, 0, sizeof(h));
    memset(ctl, 0, sizeof(ctl));
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    if (m->nfds) {
        h.msg_control = ctl;
        h.msg_controllen = CMSG_SPACE(m->nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(m->nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, m->nfds * sizeof(int));
    }
    if (sendmsg(sock, &h, 0) != (ssize_t)sizeof(*m)) {
        perror("pool_share: sendmsg");
        exit(1);
    }
}

static void recv_msg(int sock, msg *m, int *fds)
{
    struct iovec iov = { m, sizeof(*m) };
    char ctl[CMSG_SPACE(2 * sizeof(int))];
    struct msghdr h;
    memset(&h, 0, sizeof(h));
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    h.msg_control = ctl;
    h.msg_controllen = sizeof(ctl);
    if (recvmsg(sock, &h, MSG_WAITALL) != (ssize_t)sizeof(*m)) {
        perror("pool_share: recvmsg");
        exit(1);
    }
    struct cmsghdr *c = CMSG_FIRSTHDR(&h);
    if (m->nfds && c && c->cmsg_type == SCM_RIGHTS)
        memcpy(fds, CMSG_DATA(c), m->nfds * sizeof(int));
}

static uint64_t device_sum(const unsigned int *d)
{
    unsigned int *h = (unsigned int *)malloc(BYTES);
    uint64_t s = 0;
    CHECK(cudaMemcpy(h, d, BYTES, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        s += h[i];
    free(h);
    return s;
}

static cudaMemPool_t make_pool(cudaMemAllocationHandleType types)
{
    cudaMemPoolProps props;
    cudaMemPool_t pool;
    memset(&props, 0, sizeof(props));
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = types;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    CHECK(cudaMemPoolCreate(&pool, &props));
    return pool;
}

// The importer: answers in value[], never prints.
static int child(int sock, bool checks, const char *cross)
{
    msg m, out;
    int fds[2] = { -1, -1 };
    cudaMemPool_t pool, other = NULL;
    unsigned int *p;

    if (cross)
        setenv("TANDEM_SERVER", cross, 1);
    recv_msg(sock, &m, fds);
    memset(&out, 0, sizeof(out));
    if (cross) {
        out.value[0] = cudaMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fds[0],
                                                            cudaMemHandleTypePosixFileDescriptor, 0);
        send_msg(sock, &out, NULL);
        return 0;
    }
    CHECK(cudaMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fds[0], cudaMemHandleTypePosixFileDescriptor, 0));
    close(fds[0]);
    CHECK(cudaMemPoolImportPointer((void **)&p, pool, &m.data[0]));
    out.value[0] = (long long)device_sum(p);
    pool_fill<<<BLOCKS, THREADS>>>(p, N, 500u);
    CHECK(cudaDeviceSynchronize());
    void *q = NULL;
    out.value[1] = cudaMallocFromPoolAsync(&q, 256, pool, 0);   // an imported pool allocates nothing
    cudaGetLastError();
    if (checks) {
        CHECK(cudaMemPoolImportFromShareableHandle(&other, (void *)(intptr_t)fds[1],
                                                  cudaMemHandleTypePosixFileDescriptor, 0));
        close(fds[1]);
        void *wrong = NULL;
        out.value[2] = cudaMemPoolImportPointer(&wrong, other, &m.data[0]);   // a pointer of another pool
        cudaGetLastError();
        cudaMemPoolPtrExportData forged = m.data[0];
        forged.reserved[40] ^= 1;
        out.value[3] = cudaMemPoolImportPointer(&wrong, pool, &forged);
        cudaGetLastError();
    } else {
        close(fds[1]);
    }
    CHECK(cudaFree(p));
    send_msg(sock, &out, NULL);

    if (checks) {
        // The owner frees while this process holds the memory again.
        recv_msg(sock, &m, fds);
        CHECK(cudaMemPoolImportPointer((void **)&p, pool, &m.data[0]));
        send_msg(sock, &out, NULL);
        recv_msg(sock, &m, fds);        // the owner has freed it
        memset(&out, 0, sizeof(out));
        out.value[0] = (long long)device_sum(p);
        CHECK(cudaFree(p));
        CHECK(cudaMemPoolDestroy(other));
        send_msg(sock, &out, NULL);
    }
    CHECK(cudaMemPoolDestroy(pool));
    return 0;
}

int main(int argc, char **argv)
{
    bool checks = argc > 1 && strcmp(argv[1], "--tandem-checks") == 0;
    const char *cross = argc > 2 && strcmp(argv[1], "--tandem-cross-server") == 0 ? argv[2] : NULL;
    int sv[2];

    // Fork before any CUDA call: each process is its own CUDA process.
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("pool_share: socketpair");
        return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        return child(sv[1], checks, cross);
    }
    close(sv[1]);
    int sock = sv[0];

    cudaStream_t s;
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaMemPool_t pool = make_pool(cudaMemHandleTypePosixFileDescriptor);
    cudaMemPool_t other = make_pool(cudaMemHandleTypePosixFileDescriptor);
    cudaMemPool_t plain = make_pool(cudaMemHandleTypeNone);
    unsigned int *p, *q;
    CHECK(cudaMallocFromPoolAsync((void **)&p, BYTES, pool, s));
    pool_fill<<<BLOCKS, THREADS, 0, s>>>(p, N, 100u);
    CHECK(cudaStreamSynchronize(s));

    msg m;
    memset(&m, 0, sizeof(m));
    int fds[2];
    CHECK(cudaMemPoolExportToShareableHandle(&fds[0], pool, cudaMemHandleTypePosixFileDescriptor, 0));
    CHECK(cudaMemPoolExportToShareableHandle(&fds[1], other, cudaMemHandleTypePosixFileDescriptor, 0));
    CHECK(cudaMemPoolExportPointer(&m.data[0], p));
    m.nfds = 2;
    send_msg(sock, &m, fds);
    close(fds[0]);
    close(fds[1]);

    msg back;
    recv_msg(sock, &back, NULL);
    if (cross) {
        printf("import through another server: %s\n", cudaGetErrorName((cudaError_t)back.value[0]));
        CHECK(cudaFreeAsync(p, s));
        waitpid(pid, NULL, 0);
        return 0;
    }
    printf("child read the parent's values: sum=%lld (expected %llu)\n", back.value[0],
           (unsigned long long)N * 100u + (unsigned long long)N * (N - 1) / 2);
    printf("child allocating from the imported pool: %s\n", cudaGetErrorName((cudaError_t)back.value[1]));
    printf("parent reads the child's values: sum=%llu\n", (unsigned long long)device_sum(p));

    int fd;
    printf("export of a pool made without handle types: %s\n",
           cudaGetErrorName(cudaMemPoolExportToShareableHandle(&fd, plain, cudaMemHandleTypePosixFileDescriptor, 0)));
    cudaGetLastError();
    printf("export with flags: %s\n",
           cudaGetErrorName(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 1)));
    cudaGetLastError();
    CHECK(cudaMallocAsync((void **)&q, BYTES, s));
    cudaMemPoolPtrExportData d;
    printf("export of a pointer of the default pool: %s\n", cudaGetErrorName(cudaMemPoolExportPointer(&d, q)));
    cudaGetLastError();
    CHECK(cudaFreeAsync(q, s));

    if (checks) {
        printf("a pointer of another pool: %s\n", cudaGetErrorName((cudaError_t)back.value[2]));
        printf("a forged pointer export: %s\n", cudaGetErrorName((cudaError_t)back.value[3]));
        cudaMemPool_t self;
        CHECK(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
        printf("importing its own pool: %s\n", cudaGetErrorName(cudaMemPoolImportFromShareableHandle(
                                                    &self, (void *)(intptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0)));
        cudaGetLastError();
        close(fd);
        int junk[2];
        if (pipe(junk) == 0) {
            char zero[64] = { 0 };
            if (write(junk[1], zero, sizeof(zero)) != (ssize_t)sizeof(zero))
                return 1;
            printf("importing a file that holds no handle: %s\n",
                   cudaGetErrorName(cudaMemPoolImportFromShareableHandle(&self, (void *)(intptr_t)junk[0],
                                                                         cudaMemHandleTypePosixFileDescriptor, 0)));
            cudaGetLastError();
            close(junk[0]);
            close(junk[1]);
        }
        // The owner frees the memory while the child holds it: the child
        // still reads the child's values (natively undefined).
        pool_fill<<<BLOCKS, THREADS, 0, s>>>(p, N, 7u);
        CHECK(cudaStreamSynchronize(s));
        memset(&m, 0, sizeof(m));
        CHECK(cudaMemPoolExportPointer(&m.data[0], p));
        send_msg(sock, &m, NULL);
        recv_msg(sock, &back, NULL);
        CHECK(cudaFreeAsync(p, s));
        CHECK(cudaStreamSynchronize(s));
        unsigned int *fresh;
        CHECK(cudaMallocFromPoolAsync((void **)&fresh, BYTES, pool, s));
        pool_fill<<<BLOCKS, THREADS, 0, s>>>(fresh, N, 9000u);
        CHECK(cudaStreamSynchronize(s));
        send_msg(sock, &m, NULL);
        recv_msg(sock, &back, NULL);
        printf("child reads memory its owner freed: sum=%lld (expected %llu)\n", back.value[0],
               (unsigned long long)N * 7u + (unsigned long long)N * (N - 1) / 2);
        CHECK(cudaFreeAsync(fresh, s));
    } else {
        CHECK(cudaFreeAsync(p, s));
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child exit: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolDestroy(pool));
    CHECK(cudaMemPoolDestroy(other));
    CHECK(cudaMemPoolDestroy(plain));
    CHECK(cudaStreamDestroy(s));
    printf("done\n");
    return 0;
}
