/* The sim MPS domain (docs/sim-backend.md, "MPS domain").
 *
 * Under MPS every client shares one GPU context, so a fatal fault in one
 * client kills every client (seed 000, section 4.3).  Sim servers started
 * with the same --sim-mps-domain NAME model that: they map one small shared
 * file, /dev/shm/tandem-sim-mps-NAME, holding a fault generation.  A fatal
 * kernel fault in any server of the domain stores its error and bumps the
 * generation; every stream created before that bump, in every server of the
 * domain, is dead from then on with that error (its next operation,
 * synchronize or query reports it), as an MPS client's context is.  Streams
 * created afterwards start on a fresh context: a server keeps serving new
 * sessions, as MPS serves new clients with a new server once the faulted
 * ones are gone.  Copy faults do not count: under MPS each client has its
 * own copy-engine channel group, so they stay contained (seed 000 Table 3).
 *
 * The file holds only lock-free 64-bit and 32-bit atomics, which work across
 * processes on a shared mapping. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_internal.h"

#define SIM_MPS_MAGIC 0x54444d4d50533031ull /* "TDMMPS01" */

struct sim_mps_shared {
    _Atomic uint64_t magic;
    _Atomic uint64_t generation;   /* fatal faults so far */
    _Atomic int32_t err;           /* the error of the latest one */
    _Atomic uint32_t servers;      /* servers joined now */
};

struct sim_mps {
    struct sim_mps_shared *sh;
    char shm_name[96];
    uint64_t seen;                 /* generation this server last logged */
};

static bool name_ok(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(name[i] == '-' || name[i] == '_' || name[i] == '.' || (name[i] >= '0' && name[i] <= '9') ||
              (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z')))
            return false;
    return true;
}

int sim_mps_join(tdm_backend *b, const char *name)
{
    struct sim_mps *m = NULL;
    struct stat st;
    uint64_t zero = 0;
    void *p;
    int fd = -1, err = cudaErrorInitializationError;

    if (!name)
        return 0;
    if (!name_ok(name)) {
        sim_log("MPS domain name '%s' is not 1-64 characters of [A-Za-z0-9._-]", name);
        return cudaErrorInvalidValue;
    }
    m = calloc(1, sizeof(*m));
    if (!m)
        return cudaErrorMemoryAllocation;
    snprintf(m->shm_name, sizeof(m->shm_name), "/tandem-sim-mps-%s", name);
    fd = shm_open(m->shm_name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || fstat(fd, &st) != 0) {
        sim_log("MPS domain '%s': cannot open /dev/shm%s: %s", name, m->shm_name, strerror(errno));
        goto out;
    }
    /* Every joiner may extend it; extending to the same size is a no-op, and
     * new bytes read as zero. */
    if ((size_t)st.st_size < sizeof(struct sim_mps_shared) && ftruncate(fd, sizeof(struct sim_mps_shared)) != 0) {
        sim_log("MPS domain '%s': cannot size the domain file: %s", name, strerror(errno));
        goto out;
    }
    p = mmap(NULL, sizeof(struct sim_mps_shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        sim_log("MPS domain '%s': mmap: %s", name, strerror(errno));
        goto out;
    }
    m->sh = p;
    if (!atomic_compare_exchange_strong(&m->sh->magic, &zero, SIM_MPS_MAGIC) && zero != SIM_MPS_MAGIC) {
        sim_log("MPS domain '%s': /dev/shm%s is not a Tandem MPS domain", name, m->shm_name);
        munmap(p, sizeof(struct sim_mps_shared));
        goto out;
    }
    atomic_fetch_add(&m->sh->servers, 1);
    m->seen = atomic_load(&m->sh->generation);
    b->mps = m;
    m = NULL;
    err = 0;
    sim_log("joined MPS domain '%s' (/dev/shm%s): a fatal kernel fault in any of its servers kills every client", name,
            b->mps->shm_name);
out:
    if (fd >= 0)
        close(fd);
    free(m);
    return err;
}

void sim_mps_leave(tdm_backend *b)
{
    struct sim_mps *m = b->mps;

    if (!m)
        return;
    /* The last server out removes the file; a server joining in between
     * keeps its mapping of the unlinked file, and later joiners start a new
     * domain: acceptable for a test model. */
    if (atomic_fetch_sub(&m->sh->servers, 1) == 1)
        shm_unlink(m->shm_name);
    munmap(m->sh, sizeof(struct sim_mps_shared));
    free(m);
    b->mps = NULL;
}

uint64_t sim_mps_generation(const tdm_backend *b)
{
    return b->mps ? atomic_load(&b->mps->sh->generation) : 0;
}

void sim_mps_kernel_fault(tdm_backend *b, int err)
{
    if (!b->mps || !sim_error_is_fatal(err))
        return;
    /* The error first, then the generation: a reader that sees the new
     * generation (acquire) sees this error or a later one. */
    atomic_store(&b->mps->sh->err, err);
    atomic_fetch_add(&b->mps->sh->generation, 1);
    sim_log("fatal fault (cudaError %d) in a client of the MPS domain: every client of the domain dies", err);
}

void sim_mps_poll_locked(tdm_backend *b, tdm_bstream *s)
{
    uint64_t g;

    if (!b->mps || s->sticky)
        return;
    g = atomic_load(&b->mps->sh->generation);
    if (g <= s->mps_gen)
        return;
    s->sticky = atomic_load(&b->mps->sh->err);
    if (b->mps->seen < g) {
        b->mps->seen = g;
        sim_log("a client of the MPS domain faulted: streams created before it report cudaError %d", s->sticky);
    }
}
