/*
 * pool: see pool.h.
 */
#include "core/pool.h"

#include <stdlib.h>
#include <string.h>

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

void *pool_get(struct pool *p, size_t n)
{
	if (n > p->size || p->free == NULL)
		return calloc(1, n > p->size || POOL_OFF ? n : p->size);
	void *x = p->free;
	memcpy(&p->free, x, sizeof(void *));
	p->n--;
	memset(x, 0, n);
	return x;
}

void *pool_take(struct pool *p, size_t n)
{
	if (n > p->size || p->free == NULL)
		return malloc(n > p->size || POOL_OFF ? n : p->size);
	void *x = p->free;
	memcpy(&p->free, x, sizeof(void *));
	p->n--;
	return x;
}

void pool_put(struct pool *p, void *x, size_t n)
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

void pool_drain(struct pool *p)
{
	while (p->free != NULL) {
		void *x = p->free;
		memcpy(&p->free, x, sizeof(void *));
		free(x);
	}
	p->n = 0;
}
