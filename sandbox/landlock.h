/*
 * landlock.h - Landlock, the second layer of file rules.
 *
 * Landlock lets an unprivileged process restrict itself and its future
 * children to chosen file hierarchies (and, from ABI 4, TCP ports; from
 * ABI 6, abstract Unix sockets and signals within its own domain).
 * Every call here uses only system calls, so it is safe in a child
 * after clone().  Where the kernel has no Landlock, landlock_restrict()
 * does nothing and says so.
 */
#ifndef SHIRO_LANDLOCK_H
#define SHIRO_LANDLOCK_H

/* landlock_abi - the kernel's Landlock ABI version, 0 when absent. */
int landlock_abi(void);

/* Flags of landlock_restrict(). */
#define LANDLOCK_NO_TCP 0x1 /* refuse every TCP bind and connect */
#define LANDLOCK_SCOPE \
	0x2 /* no abstract Unix socket or signal to a
				 process outside this domain */
#define LANDLOCK_RO_EXEC 0x4 /* read-only paths may also be executed */
#define LANDLOCK_NO_FS \
	0x8 /* govern no file access (ro and rw unused): a
				 domain for TCP and scoping alone, which leaves
				 mount(2) allowed */

/*
 * landlock_restrict - restrict the calling thread (and its future
 * children) to reading under each of ro[] and reading and writing under
 * each of rw[] (both NULL-terminated; entries that do not exist are
 * skipped; rw entries that are files get the rights files can have).
 * Returns 1 when restricted, 0 when the kernel has no Landlock (or,
 * with LANDLOCK_NO_FS, none of the asked restrictions), or a negative
 * SHIRO_ERR_*.
 */
int landlock_restrict(const char *const *ro, const char *const *rw, int flags);

#endif
