/*
 * vec.h - growing arrays by doubling, for arrays that know only their
 * length: vec_room(p, n, size) before storing element n.
 */
#ifndef SHIRO_TOOLS_VEC_H
#define SHIRO_TOOLS_VEC_H

#include <stddef.h>

/*
 * vec_room - p (an array of n elements of size bytes, grown only by
 * vec_room) with room for at least n + 2 elements; may move it.  The
 * capacity is the power of two above n, so n appends cost O(n).
 */
void *vec_room(void *p, size_t n, size_t size);

#endif
