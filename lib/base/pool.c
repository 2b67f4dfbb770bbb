/*
 * pool: see pool.h. The list's paths are inline there; here, the blocks
 * from malloc.
 */
#include "lib/base/pool.h"

#include <stdlib.h>

void *pool_alloc(struct pool *p, size_t n, int zero)
{
	/* a block the list may keep later: of the pool's size */
	size_t size = n > p->size || POOL_OFF ? n : p->size;
	return zero ? calloc(1, size) : malloc(size);
}

void pool_drain(struct pool *p)
{
	while (p->free != NULL)
		free(pool_pop(p));
	p->n = 0;
}
