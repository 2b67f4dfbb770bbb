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
#include <stdlib.h>
#include <string.h>

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

/* Under AddressSanitizer nothing is kept (pool_put frees every block). */
#if defined(__SANITIZE_ADDRESS__)
#define POOL_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_OFF 1
#endif
#endif
#ifndef POOL_OFF
#define POOL_OFF 0
#endif

/* A block the list cannot give: from malloc (pool.c). */
void *pool_alloc(struct pool *p, size_t n, int zero) __attribute__((warn_unused_result));

/* The first block of the list (the caller checked there is one). */
static inline void *pool_pop(struct pool *p)
{
	void *x = p->free;
	memcpy(&p->free, x, sizeof(void *));
	p->n--;
	return x;
}

/* Inline, these three: a lock cycle gets and gives back about seven
 * blocks. */

/* Returns n zeroed bytes (n >= sizeof(void *)), or NULL on out-of-memory. */
__attribute__((warn_unused_result)) static inline void *pool_get(struct pool *p, size_t n)
{
	if (n > p->size || p->free == NULL)
		return pool_alloc(p, n, 1);
	return memset(pool_pop(p), 0, n);
}

/* As pool_get, but the bytes are not zeroed: for an object whose every
 * field the caller sets. */
__attribute__((warn_unused_result)) static inline void *pool_take(struct pool *p, size_t n)
{
	if (n > p->size || p->free == NULL)
		return pool_alloc(p, n, 0);
	return pool_pop(p);
}

/* Gives back x, got from pool_get(p, n) with this same n. NULL is allowed. */
static inline void pool_put(struct pool *p, void *x, size_t n)
{
	if (x == NULL)
		return;
	if (POOL_OFF || n > p->size || p->n >= p->max) {
		free(x);
		return;
	}
	memcpy(x, &p->free, sizeof(void *));
	p->free = x;
	p->n++;
}

/* The bytes malloc gives for a request of n (glibc, 64-bit: its blocks
 * are 8 bytes of header and n, in steps of 16): a pool's size rounded so
 * leaves no bytes of its blocks unused. */
#define POOL_BLOCK(n) ((((n) + 8 + 15) & ~(size_t)15) - 8)

/* Of n pools of rising block sizes (size classes, for objects that end in
 * a name), the first whose blocks hold size bytes, else the last (whose
 * pool_get gives a larger block from malloc, of size bytes). n >= 1. */
static inline struct pool *pool_class(struct pool *classes, unsigned n, size_t size)
{
	unsigned i = 0;
	while (i + 1 < n && classes[i].size < size)
		i++;
	return &classes[i];
}

/* The bytes an object of size bytes takes from classes: its pool's block,
 * or size itself past the last class. */
static inline size_t pool_class_bytes(struct pool *classes, unsigned n, size_t size)
{
	struct pool *p = pool_class(classes, n, size);
	return size > p->size ? size : p->size;
}

/* The size classes of an object that ends in a name of up to 64 bytes, one
 * a class of 16 name bytes, each block the whole of a malloc block:
 * SIZE(len) is the object's bytes with a name of len bytes, keep as
 * POOL_INIT's. An array initializer of POOL_NAME_CLASSES_N pools: an
 * object kept as long as a lease costs no more than its name needs. */
#define POOL_NAME_CLASSES_N 4
#define POOL_NAME_CLASSES(SIZE, keep)                                                              \
	{                                                                                          \
		POOL_INIT(POOL_BLOCK(SIZE(16)), keep), POOL_INIT(POOL_BLOCK(SIZE(32)), keep),      \
			POOL_INIT(POOL_BLOCK(SIZE(48)), keep),                                     \
			POOL_INIT(POOL_BLOCK(SIZE(64)), keep),                                     \
	}

/* Frees the blocks kept (for leak checkers at exit). */
void pool_drain(struct pool *p);

#endif
