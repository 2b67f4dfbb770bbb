/*
 * pool: a free list of memory blocks of one size, for the objects a lock
 * operation creates and frees by the thousand (waits, leases, store calls,
 * session records). glibc's thread cache holds only 7 blocks per size, so
 * bursts of such objects otherwise go through its bins.
 *
 * A pool gives blocks of at most pool.size bytes from its list and larger
 * ones from malloc; the caller passes the same size back to pool_put, which
 * keeps up to pool.max blocks and frees the rest. One thread, no locking.
 * Under AddressSanitizer nothing is kept, so use after free stays visible.
 */
#ifndef LG_POOL_H
#define LG_POOL_H

#include <stddef.h>

struct pool {
	size_t size;  /* bytes per pooled block */
	unsigned max; /* blocks kept at most */
	unsigned n;   /* blocks kept now */
	void *free;   /* the list, linked through each block's first bytes */
};

/* clang-format off: clang-format 14 spreads a braced macro over four lines */
#define POOL_INIT(block_size, max_blocks)                                                          \
	{                                                                                          \
		(block_size), (max_blocks), 0, NULL                                                \
	}
/* clang-format on */

/* Returns n zeroed bytes (n >= sizeof(void *)), or NULL on out-of-memory. */
void *pool_get(struct pool *p, size_t n) __attribute__((warn_unused_result));

/* As pool_get, but the bytes are not zeroed: for an object whose every
 * field the caller sets. */
void *pool_take(struct pool *p, size_t n) __attribute__((warn_unused_result));

/* Gives back x, got from pool_get(p, n) with this same n. NULL is allowed. */
void pool_put(struct pool *p, void *x, size_t n);

/* Frees the blocks kept (for leak checkers at exit). */
void pool_drain(struct pool *p);

#endif
