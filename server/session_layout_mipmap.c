/* Mipmapped arrays of a session (docs/memory-layouts.md "Mipmapped
 * arrays"): a handle table of them, each with the handles its levels got
 * as arrays of the session.  A level is copied to and from like any array
 * but belongs to its mipmapped array: freed with it, never by
 * cudaFreeArray.  Guests are untrusted: formats, flags and extents are
 * checked, mipmapped arrays count against the session's array bound and
 * every level's bytes against its memory quota. */
#include "session.h"

#include <stdlib.h>

#include <driver_types.h>

#include "log.h"

enum { TAG_MIPMAP = 0x4d, MAX_LEVELS = 64 };

typedef struct layout_mipmap {
    tdm_bmipmap *bm;
    tdm_array_desc d;          /* level 0 */
    unsigned levels;
    uint64_t bytes;            /* counted in the session's quota */
    uint64_t level_array[MAX_LEVELS];   /* array handles given out so far; 0: none yet */
} layout_mipmap;

struct tdm_session_mipmap {
    tdm_handle_table mipmaps;   /* of layout_mipmap */
};

static const tdm_backend_ops *ops(tdm_session *s)
{
    return s->srv->ops;
}

static struct tdm_session_mipmap *mipmaps_of(tdm_session *s)
{
    if (!s->mipmap && (s->mipmap = calloc(1, sizeof(*s->mipmap))) != NULL)
        tdm_handles_init(&s->mipmap->mipmaps, TAG_MIPMAP);
    return s->mipmap;
}

static layout_mipmap *mipmap_of(tdm_session *s, uint64_t handle)
{
    return s->mipmap ? tdm_handles_get(&s->mipmap->mipmaps, handle) : NULL;
}

tdm_bmipmap *tdm_session_mipmap_backend(tdm_session *s, uint64_t mipmap)
{
    layout_mipmap *m = mipmap_of(s, mipmap);

    return m ? m->bm : NULL;
}

size_t tdm_session_mipmap_count(tdm_session *s)
{
    return s->mipmap ? s->mipmap->mipmaps.live : 0;
}

/* Bytes of every level, element by element (the driver's padding is its
 * own); false on overflow. */
static bool mipmap_bytes(const tdm_array_desc *d, unsigned levels, uint64_t *total)
{
    *total = 0;
    for (unsigned i = 0; i < levels; i++) {
        tdm_array_desc l = tdm_mipmap_level_desc(d, i);
        uint64_t n;
        if (__builtin_mul_overflow(l.width, (uint64_t)(l.bits / 8 * l.channels), &n) ||
            __builtin_mul_overflow(n, l.height ? l.height : 1, &n) ||
            __builtin_mul_overflow(n, l.depth ? l.depth : 1, &n) || __builtin_add_overflow(*total, n, total))
            return false;
    }
    return true;
}

/* cudaMallocMipmappedArray's shapes: a width always; depth needs a height
 * unless layered (1D layered); a cubemap is square with 6 layers (a
 * multiple of 6 when layered). */
static bool valid_shape(tdm_extent ext, unsigned flags)
{
    if (ext.width == 0 || (ext.height == 0 && ext.depth != 0 && !(flags & cudaArrayLayered)))
        return false;
    if (flags & cudaArrayCubemap)
        return ext.width == ext.height && ext.depth != 0 &&
               ((flags & cudaArrayLayered) ? ext.depth % 6 == 0 : ext.depth == 6);
    return true;
}

int tdm_session_mipmap_create(tdm_session *s, const int bits[4], int kind, tdm_extent ext, unsigned flags,
                              unsigned asked, uint64_t *out, unsigned *levels)
{
    const unsigned known = cudaArrayLayered | cudaArraySurfaceLoadStore | cudaArrayCubemap | cudaArrayTextureGather;
    uint64_t quota = s->bounds.mem_quota;
    tdm_array_desc d = { .kind = kind, .width = ext.width, .height = ext.height, .depth = ext.depth,
                         .flags = flags };
    struct tdm_session_mipmap *mm = mipmaps_of(s);
    layout_mipmap *m;
    int err;

    *out = 0;
    *levels = 0;
    if (!mm)
        return cudaErrorMemoryAllocation;
    if ((err = tdm_session_channel_format(bits, kind, &d.channels)) != 0)
        return err;
    d.bits = bits[0];
    if (flags & ~known) {
        tdm_log_session(s->id, "mipmapped array flags %#x: sparse and deferred-mapping arrays are not remoted",
                        flags);
        return cudaErrorNotSupported;
    }
    if (!valid_shape(ext, flags))
        return cudaErrorInvalidValue;
    if (tdm_session_array_count(s) + tdm_session_mipmap_count(s) >= TDM_SESSION_MAX_ARRAYS) {
        tdm_log_session(s->id, "a session may hold %d CUDA arrays and mipmapped arrays", TDM_SESSION_MAX_ARRAYS);
        return cudaErrorMemoryAllocation;
    }
    if (!(m = calloc(1, sizeof(*m))))
        return cudaErrorMemoryAllocation;
    m->d = d;
    m->levels = tdm_mipmap_levels(&d, asked);
    if (!mipmap_bytes(&d, m->levels, &m->bytes) ||
        (quota && (m->bytes > quota || s->mem_used > quota - m->bytes))) {
        tdm_log_session(s->id, "a mipmapped array of %llu x %llu x %llu elements, %u levels, exceeds the "
                        "session's memory", (unsigned long long)ext.width, (unsigned long long)ext.height,
                        (unsigned long long)ext.depth, m->levels);
        free(m);
        return cudaErrorMemoryAllocation;
    }
    if ((err = ops(s)->mipmap_create(s->srv->be, &d, m->levels, &m->bm)) != 0) {
        free(m);
        return err;
    }
    if (!(*out = tdm_handles_add(&mm->mipmaps, m))) {
        ops(s)->mipmap_destroy(s->srv->be, m->bm);
        free(m);
        return cudaErrorMemoryAllocation;
    }
    /* ---- tenants (issue 16): within its tenant's memory ---- */
    if ((err = tdm_session_mem_take(s, m->bytes, "cudaMallocMipmappedArray")) != 0) {
        tdm_handles_remove(&mm->mipmaps, *out);
        *out = 0;
        ops(s)->mipmap_destroy(s->srv->be, m->bm);
        free(m);
        return err;
    }
    *levels = m->levels;
    return 0;
}

int tdm_session_mipmap_level(tdm_session *s, uint64_t mipmap, unsigned level, uint64_t *array, tdm_extent *ext)
{
    layout_mipmap *m = mipmap_of(s, mipmap);
    tdm_array_desc l;
    tdm_barray *ba = NULL;
    int err;

    *array = 0;
    if (!m) {
        tdm_log_session(s->id, "a level of an unknown mipmapped array %#llx", (unsigned long long)mipmap);
        return cudaErrorInvalidResourceHandle;
    }
    if (level >= m->levels)
        return cudaErrorInvalidValue;
    l = tdm_mipmap_level_desc(&m->d, level);
    *ext = (tdm_extent){ .width = l.width, .height = l.height, .depth = l.depth };
    if (m->level_array[level]) {
        *array = m->level_array[level];
        return 0;
    }
    if ((err = ops(s)->mipmap_level(s->srv->be, m->bm, level, &ba)) != 0 ||
        (err = tdm_session_array_adopt(s, ba, &l, &m->level_array[level])) != 0)
        return err;
    *array = m->level_array[level];
    return 0;
}

/* Its levels stop being arrays of the session, then it is destroyed. */
static void mipmap_free(tdm_session *s, layout_mipmap *m)
{
    for (unsigned i = 0; i < m->levels; i++)
        if (m->level_array[i])
            tdm_session_array_disown(s, m->level_array[i]);
    ops(s)->mipmap_destroy(s->srv->be, m->bm);
    tdm_session_mem_give(s, m->bytes);
    free(m);
}

int tdm_session_mipmap_destroy(tdm_session *s, uint64_t mipmap)
{
    if (!mipmap_of(s, mipmap))
        return cudaErrorInvalidValue;   /* as cudaFreeArray answers for an array it does not know */
    /* cudaFreeMipmappedArray waits for the work that may use it, as
     * cudaFreeArray does; that work's error stays deferred. */
    (void)tdm_session_quiesce(s);
    mipmap_free(s, tdm_handles_remove(&s->mipmap->mipmaps, mipmap));
    return 0;
}

void tdm_session_mipmap_release(tdm_session *s)
{
    layout_mipmap *m;

    if (!s->mipmap)
        return;
    while ((m = tdm_handles_pop(&s->mipmap->mipmaps, NULL)))
        mipmap_free(s, m);
    tdm_handles_release(&s->mipmap->mipmaps);
    free(s->mipmap);
    s->mipmap = NULL;
}
