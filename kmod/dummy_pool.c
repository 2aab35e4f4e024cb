// SPDX-License-Identifier: MIT
/* dummy_pool.c - see dummy_pool.h. */
#include "dummy_pool.h"

u64 tandem_pool_class_size(enum tandem_pool_class cls)
{
	return cls == TANDEM_POOL_2M ? TANDEM_SZ_2M : TANDEM_SZ_4K;
}

int tandem_pool_class_of(u64 size)
{
	if (size == TANDEM_SZ_4K)
		return TANDEM_POOL_4K;
	if (size == TANDEM_SZ_2M)
		return TANDEM_POOL_2M;
	return -EINVAL;
}

void tandem_pool_destroy(struct tandem_pool *pool)
{
	u32 c, i;

	for (c = 0; c < TANDEM_POOL_NCLASSES; c++) {
		for (i = 0; i < pool->nslots[c]; i++) {
			if (pool->slot[c][i].page)
				pool->ops->free(pool->ctx, pool->slot[c][i].page,
						tandem_pool_class_size(c));
			pool->slot[c][i].page = NULL;
			pool->slot[c][i].refs = 0;
		}
		pool->nslots[c] = 0;
	}
}

int tandem_pool_init(struct tandem_pool *pool, const struct tandem_pool_ops *ops,
		     void *ctx, u32 n4k, u32 n2m)
{
	u32 want[TANDEM_POOL_NCLASSES] = { n4k, n2m };
	u32 c, i;
	int err = 0;

	memset(pool, 0, sizeof(*pool));
	if (!ops || !ops->alloc || !ops->free)
		return -EINVAL;
	pool->ops = ops;
	pool->ctx = ctx;

	for (c = 0; c < TANDEM_POOL_NCLASSES; c++) {
		if (want[c] < 1 || want[c] > TANDEM_POOL_MAX_SLOTS) {
			err = -EINVAL;
			goto out;
		}
		for (i = 0; i < want[c]; i++) {
			void *p = ops->alloc(ctx, tandem_pool_class_size(c));

			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			pool->slot[c][i].page = p;
			pool->nslots[c] = i + 1;
		}
	}
out:
	if (err)
		tandem_pool_destroy(pool);
	return err;
}

u64 tandem_pool_nonzero_bytes(const void *page, u64 size)
{
	const unsigned char *b = page;
	u64 i, j, w, n = 0;

	/*
	 * Checked on every hand-out, so the common all-zero case is scanned a
	 * word at a time; bytes are only counted inside non-zero words.
	 */
	for (i = 0; i + sizeof(w) <= size; i += sizeof(w)) {
		memcpy(&w, b + i, sizeof(w));
		if (!w)
			continue;
		for (j = 0; j < sizeof(w); j++)
			n += b[i + j] != 0;
	}
	for (; i < size; i++)
		n += b[i] != 0;
	return n;
}

void *tandem_pool_get(struct tandem_pool *pool, enum tandem_pool_class cls)
{
	struct tandem_pool_slot *best = NULL;
	u64 size;
	u32 i;

	if ((unsigned int)cls >= TANDEM_POOL_NCLASSES || pool->nslots[cls] == 0) {
		if ((unsigned int)cls < TANDEM_POOL_NCLASSES)
			pool->stats.exhausted[cls]++;
		return NULL;
	}
	for (i = 0; i < pool->nslots[cls]; i++) {
		struct tandem_pool_slot *s = &pool->slot[cls][i];

		if (!best || s->refs < best->refs)
			best = s;
	}
	size = tandem_pool_class_size(cls);
	/*
	 * A shared page can be dirtied by any client mapping it; the paper's
	 * guarantee is that the next client sees zeroes, so scrub on hand-out.
	 */
	if (tandem_pool_nonzero_bytes(best->page, size)) {
		memset(best->page, 0, size);
		pool->stats.scrubs[cls]++;
	}
	best->refs++;
	pool->stats.installs[cls]++;
	return best->page;
}

int tandem_pool_put(struct tandem_pool *pool, enum tandem_pool_class cls, void *page)
{
	u32 i;

	if ((unsigned int)cls >= TANDEM_POOL_NCLASSES)
		return -EINVAL;
	for (i = 0; i < pool->nslots[cls]; i++) {
		struct tandem_pool_slot *s = &pool->slot[cls][i];

		if (s->page != page)
			continue;
		if (s->refs == 0)
			return -EINVAL;
		s->refs--;
		pool->stats.releases[cls]++;
		return 0;
	}
	return -ENOENT;
}

bool tandem_pool_owns(const struct tandem_pool *pool, const void *page)
{
	u32 c, i;

	for (c = 0; c < TANDEM_POOL_NCLASSES; c++)
		for (i = 0; i < pool->nslots[c]; i++)
			if (pool->slot[c][i].page == page)
				return true;
	return false;
}
