#include "proto/xmalloc.h"
#include "tools/vec.h"

/* vec_cap - the capacity vec_room gives an array of n elements. */
static size_t
vec_cap(size_t n)
{
	size_t cap = 8;

	while (cap < n + 2)
		cap *= 2;
	return cap;
}

/* vec_room - p with room for element n (and one more, for a NULL). */
void *
vec_room(void *p, size_t n, size_t size)
{
	if (p != NULL && n > 0 && vec_cap(n) == vec_cap(n - 1))
		return p;
	return xreallocarray(p, vec_cap(n), size);
}
