/* The shm server's receive path: the guest->server ring as a hostile guest
 * may leave it (any published index, any frame headers, any bytes), read by
 * tdm_shm_serve, which checks the ring (shm_ring.c), reassembles each
 * message and serves it (rpc_server.c), replying through a server->guest
 * ring.  The guest's end of the socket is closed, so the server sees it gone
 * once the ring runs dry instead of waiting for more.
 *
 * Input: [u8 capacity][u64 start][u64 head][ring bytes...]
 *   capacity  the ring holds 4096 << (capacity % 5) bytes
 *   start     where the server's tail stands (as after earlier traffic:
 *             frames may wrap around the end of the ring)
 *   head      the producer's published index, as the guest wrote it
 *   the ring's bytes from its offset 0, the rest zero. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_program.h"
#include "shm_server.h"

#define TX_CAP TDM_SHM_MIN_RING

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    /* No spinning before the server notices its guest is gone. */
    setenv("TANDEM_SHM_SPIN_US", "0", 1);
    return 0;
}

static uint64_t u64_at(const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, 8);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const size_t hdr = 1 + 8 + 8;
    tdm_shm_conn c;
    uint64_t cap, start;
    uint8_t *rx, *tx;
    char why[256];
    int sv[2];

    if (size < hdr)
        return 0;
    cap = (uint64_t)TDM_SHM_MIN_RING << (data[0] % 5);
    start = u64_at(data + 1) & ~(uint64_t)7;   /* the server's own tail is always aligned */
    rx = calloc(1, TDM_SHM_RING_CTL_SIZE + cap);
    tx = calloc(1, TDM_SHM_RING_CTL_SIZE + TX_CAP);
    if (!rx || !tx || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        abort();
    memcpy(rx + TDM_SHM_RING_CTL_SIZE, data + hdr, size - hdr < cap ? size - hdr : cap);
    close(sv[0]);

    memset(&c, 0, sizeof(c));
    c.sock = sv[1];
    c.region.fd = -1;
    tdm_shm_ring_attach(&c.rx, rx, cap);
    tdm_shm_ring_attach(&c.tx, tx, TX_CAP);
    c.rx.pos = c.rx.seen = start;
    atomic_store(&c.rx.ctl->tail, start);
    atomic_store(&c.rx.ctl->head, u64_at(data + 9));
    (void)tdm_shm_serve(fuzz_program(), NULL, &c, why, sizeof(why));

    tdm_shm_msg_free(&c.in);   /* not tdm_shm_conn_release: no region is mapped */
    free(c.out);
    close(sv[1]);
    free(rx);
    free(tx);
    return 0;
}
