/* Host memory handed out by cudaMallocHost/cudaHostAlloc.  Over TCP it is
 * ordinary page-aligned memory; the table remembers it so cudaFreeHost and
 * cudaPointerGetAttributes behave as in CUDA. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

typedef struct host_block {
    void *base;
    size_t size;
    unsigned flags;
} host_block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static host_block *blocks;
static size_t nblocks, cap;

void *tdm_host_alloc(size_t size, unsigned flags)
{
    void *p = NULL;

    if (posix_memalign(&p, 4096, size ? size : 1) != 0)
        return NULL;
    pthread_mutex_lock(&lock);
    if (nblocks == cap) {
        size_t ncap = cap ? cap * 2 : 64;
        host_block *v = realloc(blocks, ncap * sizeof(*v));
        if (!v) {
            pthread_mutex_unlock(&lock);
            free(p);
            return NULL;
        }
        blocks = v;
        cap = ncap;
    }
    blocks[nblocks++] = (host_block){ p, size, flags };
    pthread_mutex_unlock(&lock);
    return p;
}

int tdm_host_free(void *p)
{
    int rc = -1;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks; i++) {
        if (blocks[i].base == p) {
            blocks[i] = blocks[--nblocks];
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    if (rc == 0)
        free(p);
    return rc;
}

int tdm_host_lookup(const void *p, void **base)
{
    int flags = -1;
    uintptr_t a = (uintptr_t)p;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks; i++) {
        uintptr_t b = (uintptr_t)blocks[i].base;
        if (a >= b && a - b < (blocks[i].size ? blocks[i].size : 1)) {
            flags = (int)blocks[i].flags;
            if (base)
                *base = blocks[i].base;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return flags;
}
