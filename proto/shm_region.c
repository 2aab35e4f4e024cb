#include "shm_region.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

static bool pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

typedef struct section {
    const char *name;
    uint64_t off, len, align;
} section;

static int check_sections(const section *s, int n, uint64_t size, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        if (s[i].off < TDM_SHM_HEADER_SIZE || s[i].off % s[i].align || s[i].len > size ||
            s[i].off > size - s[i].len) {
            snprintf(err, errlen, "%s [%llu, +%llu) lies outside the %llu-byte region or is misaligned",
                     s[i].name, (unsigned long long)s[i].off, (unsigned long long)s[i].len,
                     (unsigned long long)size);
            return -1;
        }
        for (int j = 0; j < i; j++) {
            if (s[i].off < s[j].off + s[j].len && s[j].off < s[i].off + s[i].len) {
                snprintf(err, errlen, "%s overlaps %s", s[i].name, s[j].name);
                return -1;
            }
        }
    }
    return 0;
}

int tdm_shm_geom_check(const tdm_shm_header *h, uint64_t actual_size, tdm_shm_geom *g, char *err, size_t errlen)
{
    if (h->magic != TDM_SHM_MAGIC) {
        snprintf(err, errlen, "bad magic %#llx (not a Tandem shm region)", (unsigned long long)h->magic);
        return -1;
    }
    if (h->version != TDM_SHM_VERSION || h->header_size != TDM_SHM_HEADER_SIZE) {
        snprintf(err, errlen, "region layout version %u (header %u bytes), server speaks %u", h->version,
                 h->header_size, TDM_SHM_VERSION);
        return -1;
    }
    if (h->region_size != actual_size) {
        snprintf(err, errlen, "region size %llu in the header, but the region has %llu bytes",
                 (unsigned long long)h->region_size, (unsigned long long)actual_size);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        if (!pow2(h->ring_cap[i]) || h->ring_cap[i] < TDM_SHM_MIN_RING || h->ring_cap[i] > TDM_SHM_MAX_RING) {
            snprintf(err, errlen, "ring %d capacity %llu (want a power of two in [%u, %u])", i,
                     (unsigned long long)h->ring_cap[i], TDM_SHM_MIN_RING, TDM_SHM_MAX_RING);
            return -1;
        }
    }
    if (h->nslots == 0 || h->nslots > TDM_SHM_MAX_SLOTS || h->data_size % h->nslots ||
        (h->data_size / h->nslots) % PAGE || h->data_size == 0) {
        snprintf(err, errlen, "data area of %llu bytes in %u slots (want 1..%u slots of whole pages)",
                 (unsigned long long)h->data_size, h->nslots, TDM_SHM_MAX_SLOTS);
        return -1;
    }
    section s[] = {
        { "guest->server ring", h->ring_off[0], TDM_SHM_RING_CTL_SIZE + h->ring_cap[0], 64 },
        { "server->guest ring", h->ring_off[1], TDM_SHM_RING_CTL_SIZE + h->ring_cap[1], 64 },
        { "completion slots", h->slots_off, (uint64_t)h->nslots * sizeof(tdm_shm_slot), 64 },
        { "data area", h->data_off, h->data_size, PAGE },
        { "host memory area", h->host_off, h->host_size, PAGE },
    };
    if (check_sections(s, 5, actual_size, err, errlen))
        return -1;
    memset(g, 0, sizeof(*g));
    g->size = actual_size;
    for (int i = 0; i < 2; i++) {
        g->ring_off[i] = h->ring_off[i];
        g->ring_cap[i] = h->ring_cap[i];
    }
    g->slots_off = h->slots_off;
    g->nslots = h->nslots;
    g->data_off = h->data_off;
    g->data_size = h->data_size;
    g->chunk = h->data_size / h->nslots;
    g->host_off = h->host_off;
    g->host_size = h->host_size;
    return 0;
}

int tdm_shm_region_create(tdm_shm_region *r, uint64_t host_size, char *err, size_t errlen)
{
    tdm_shm_header h = { 0 };
    uint64_t off = TDM_SHM_HEADER_SIZE;

    memset(r, 0, sizeof(*r));
    r->fd = -1;
    h.magic = TDM_SHM_MAGIC;
    h.version = TDM_SHM_VERSION;
    h.header_size = TDM_SHM_HEADER_SIZE;
    for (int i = 0; i < 2; i++) {
        h.ring_off[i] = off;
        h.ring_cap[i] = TDM_SHM_DEFAULT_RING;
        off = align_up(off + TDM_SHM_RING_CTL_SIZE + h.ring_cap[i], 64);
    }
    h.slots_off = off;
    h.nslots = TDM_SHM_DEFAULT_SLOTS;
    off = align_up(off + h.nslots * sizeof(tdm_shm_slot), PAGE);
    h.data_off = off;
    h.data_size = (uint64_t)TDM_SHM_DEFAULT_SLOTS * TDM_SHM_DEFAULT_CHUNK;
    off += h.data_size;
    h.host_off = off;
    h.host_size = align_up(host_size, PAGE);
    h.region_size = off + h.host_size;
    if (h.region_size > TDM_SHM_MAX_REGION) {
        snprintf(err, errlen, "a region of %llu MiB is more than the server takes",
                 (unsigned long long)(h.region_size >> 20));
        return -1;
    }

    r->fd = memfd_create("tandem-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (r->fd < 0) {
        snprintf(err, errlen, "memfd_create: %s", strerror(errno));
        goto fail;
    }
    if (ftruncate(r->fd, (off_t)h.region_size) != 0 ||
        fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        snprintf(err, errlen, "cannot size and seal the region: %s", strerror(errno));
        goto fail;
    }
    r->base = mmap(NULL, h.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    if (r->base == MAP_FAILED) {
        r->base = NULL;
        snprintf(err, errlen, "cannot map the region: %s", strerror(errno));
        goto fail;
    }
    r->g.size = h.region_size;
    /* A fresh memfd reads as zeros: indices, slots and waitpoints start at 0. */
    memcpy(r->base, &h, sizeof(h));
    if (tdm_shm_geom_check(&h, h.region_size, &r->g, err, errlen))
        goto fail;
    return 0;
fail:
    tdm_shm_region_release(r);
    return -1;
}

int tdm_shm_region_attach(tdm_shm_region *r, int fd, uint64_t max_size, char *err, size_t errlen)
{
    tdm_shm_header h;
    struct stat st;
    int seals;

    memset(r, 0, sizeof(*r));
    r->fd = -1;
    /* Without the shrink seal the guest could truncate the file under us
     * and the server would die of SIGBUS touching a vanished page. */
    seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
        snprintf(err, errlen, "the region is not a memfd sealed against shrinking");
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "cannot stat the region");
        return -1;
    }
    if ((uint64_t)st.st_size < TDM_SHM_HEADER_SIZE || (uint64_t)st.st_size > max_size) {
        snprintf(err, errlen, "region of %llu bytes (want %u to %llu)", (unsigned long long)st.st_size,
                 TDM_SHM_HEADER_SIZE, (unsigned long long)max_size);
        return -1;
    }
    r->base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r->base == MAP_FAILED) {
        r->base = NULL;
        snprintf(err, errlen, "cannot map the region: %s", strerror(errno));
        return -1;
    }
    r->g.size = (uint64_t)st.st_size;
    memcpy(&h, r->base, sizeof(h));          /* read once; the guest may change it later */
    if (tdm_shm_geom_check(&h, (uint64_t)st.st_size, &r->g, err, errlen)) {
        tdm_shm_region_release(r);
        return -1;
    }
    return 0;
}

void tdm_shm_region_release(tdm_shm_region *r)
{
    if (r->base)
        munmap(r->base, r->g.size);
    if (r->fd >= 0)
        close(r->fd);
    r->base = NULL;
    r->fd = -1;
}
