/* SPDX-License-Identifier: MIT */
/*
 * dummy_pool.h - the module-global pool of zeroed dummy pages that M1/M2/M3
 * install instead of real memory.  Every fault of a size class shares the
 * same page(s), so handling a fault allocates nothing.  A page handed out
 * again is checked and re-zeroed first: the killed client may have written to
 * it before it died, and the next client must never see that.
 *
 * Memory comes from caller-supplied ops so the logic runs in user space too.
 * Locking is the caller's job (the module holds its pool mutex).
 */
#ifndef TANDEM_DUMMY_POOL_H
#define TANDEM_DUMMY_POOL_H

#include "tandem_compat.h"

enum tandem_pool_class {
	TANDEM_POOL_4K = 0,
	TANDEM_POOL_2M,
	TANDEM_POOL_NCLASSES
};

#define TANDEM_POOL_MAX_SLOTS 4

struct tandem_pool_ops {
	/* Return zeroed memory of size bytes, or NULL. */
	void *(*alloc)(void *ctx, u64 size);
	void (*free)(void *ctx, void *page, u64 size);
};

struct tandem_pool_slot {
	void *page;
	u32 refs;		/* installed mappings currently using it */
};

struct tandem_pool_stats {
	u64 installs[TANDEM_POOL_NCLASSES];
	u64 releases[TANDEM_POOL_NCLASSES];
	u64 scrubs[TANDEM_POOL_NCLASSES];	/* re-zeroed because dirty */
	u64 exhausted[TANDEM_POOL_NCLASSES];
};

struct tandem_pool {
	const struct tandem_pool_ops *ops;
	void *ctx;
	u32 nslots[TANDEM_POOL_NCLASSES];
	struct tandem_pool_slot slot[TANDEM_POOL_NCLASSES][TANDEM_POOL_MAX_SLOTS];
	struct tandem_pool_stats stats;
};

u64 tandem_pool_class_size(enum tandem_pool_class cls);
/* Class for a dummy size, or -EINVAL. */
int tandem_pool_class_of(u64 size);

/*
 * Allocate n4k 4 KiB pages and n2m 2 MiB chunks up front (1..MAX_SLOTS
 * each).  Returns 0 or -ENOMEM/-EINVAL; on error nothing stays allocated.
 */
int tandem_pool_init(struct tandem_pool *pool, const struct tandem_pool_ops *ops,
		     void *ctx, u32 n4k, u32 n2m);
void tandem_pool_destroy(struct tandem_pool *pool);

/*
 * Take a reference on a zeroed page of the class.  Prefers the least used
 * slot so pages stay shared.  Returns the page or NULL (counted as
 * exhausted) if the pool is empty.
 */
void *tandem_pool_get(struct tandem_pool *pool, enum tandem_pool_class cls);
/* Drop a reference; -ENOENT if page is not a pool page of that class. */
int tandem_pool_put(struct tandem_pool *pool, enum tandem_pool_class cls, void *page);
/* True if page belongs to the pool (any class). */
bool tandem_pool_owns(const struct tandem_pool *pool, const void *page);
/* Number of non-zero bytes in a page: 0 means zeroed. */
u64 tandem_pool_nonzero_bytes(const void *page, u64 size);

#endif /* TANDEM_DUMMY_POOL_H */
