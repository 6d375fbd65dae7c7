#include <string.h>

#include "tools/match.h"

#define MATCH_DEPTH 64
#define MATCH_BUDGET 200000 /* steps per match: a hostile pattern ends */

/* match_class - match s's character c against the class at *pp ("["
 * already consumed); returns 1/0, or -1 for a malformed class. */
static int
match_class(const char **pp, char c)
{
	const char *p = *pp;
	int neg = 0, hit = 0, first = 1;
	char lo, hi;

	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	while (*p != '\0' && (*p != ']' || first)) {
		first = 0;
		lo = *p;
		if (lo == '\\' && p[1] != '\0')
			lo = *++p;
		p++;
		hi = lo;
		if (*p == '-' && p[1] != ']' && p[1] != '\0') {
			hi = p[1];
			if (hi == '\\' && p[2] != '\0')
				hi = *++p;
			p += 2;
		}
		if (c >= lo && c <= hi)
			hit = 1;
	}
	if (*p != ']')
		return -1;
	*pp = p + 1;
	return hit != neg;
}

/* match_at - the matcher proper, with bounds on recursion and steps. */
static int
match_at(const char *p, const char *s, int path, int depth, long *budget)
{
	const char *star_p = NULL, *star_s = NULL;
	int r;

	if (depth > MATCH_DEPTH)
		return 0;
	for (;;) {
		if (--*budget < 0)
			return 0;
		if (path && p[0] == '*' && p[1] == '*') {
			while (*p == '*')
				p++;
			if (*p == '\0')
				return 1;
			if (*p == '/') {
				/* "**" then "/": zero or more whole directories. */
				p++;
				for (;;) {
					if (match_at(
						p, s, path, depth + 1, budget))
						return 1;
					s = strchr(s, '/');
					if (s == NULL)
						return 0;
					s++;
				}
			}
			/* "**x" outside a directory position acts as "*". */
			star_p = p;
			star_s = s;
			continue;
		}
		if (*p == '*') {
			while (*p == '*')
				p++;
			star_p = p;
			star_s = s;
			continue;
		}
		if (*s == '\0') {
			if (*p == '\0')
				return 1;
			goto backtrack;
		}
		if (*p == '?' && !(path && *s == '/')) {
			p++;
			s++;
			continue;
		}
		if (*p == '[' && !(path && *s == '/')) {
			const char *q = p + 1;
			r = match_class(&q, *s);
			if (r == 1) {
				p = q;
				s++;
				continue;
			}
			if (r < 0)
				return 0;
			goto backtrack;
		}
		if (*p == '\\' && p[1] != '\0' && p[1] == *s) {
			p += 2;
			s++;
			continue;
		}
		if (*p != '\0' && *p != '\\' && *p != '?' && *p != '[' &&
		    *p == *s) {
			p++;
			s++;
			continue;
		}
	backtrack:
		if (star_p == NULL || *star_s == '\0' ||
		    (path && *star_s == '/'))
			return 0;
		star_s++;
		p = star_p;
		s = star_s;
	}
}

/* match_glob - nonzero when s matches pattern p. */
int
match_glob(const char *p, const char *s, int path)
{
	long budget = MATCH_BUDGET;

	return match_at(p, s, path, 0, &budget);
}

/* match_valid - nonzero when p is a well-formed pattern. */
int
match_valid(const char *p)
{
	const char *q;

	for (; *p != '\0'; p++) {
		if (*p == '\\') {
			if (p[1] == '\0')
				return 0;
			p++;
		} else if (*p == '[') {
			q = p + 1;
			if (match_class(&q, 'a') < 0)
				return 0;
			p = q - 1;
		}
	}
	return 1;
}
