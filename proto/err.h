/*
 * err.h - the error codes every shiro function returns.
 *
 * A function returns 0 on success or one of these negated, and hands
 * results back through out-parameters.  err_str() names a code for a
 * log line or a message to a person.
 */
#ifndef SHIRO_ERR_H
#define SHIRO_ERR_H

/* X(name, value, text): the one list of codes. */
#define SHIRO_ERR_LIST(X) \
	X(SHIRO_ERR_OK, 0, "success") \
	X(SHIRO_ERR_INVAL, 1, "invalid argument") \
	X(SHIRO_ERR_NOMEM, 2, "out of memory") \
	X(SHIRO_ERR_IO, 3, "input/output error") \
	X(SHIRO_ERR_NOENT, 4, "not found") \
	X(SHIRO_ERR_EXIST, 5, "already exists") \
	X(SHIRO_ERR_CORRUPT, 6, "corrupt data") \
	X(SHIRO_ERR_LOCKED, 7, "held by another process") \
	X(SHIRO_ERR_PROTO, 8, "protocol error") \
	X(SHIRO_ERR_TOOBIG, 9, "too large") \
	X(SHIRO_ERR_AGAIN, 10, "try again") \
	X(SHIRO_ERR_TIMEOUT, 11, "timed out") \
	X(SHIRO_ERR_PERM, 12, "not permitted") \
	X(SHIRO_ERR_NOSPC, 13, "no space left") \
	X(SHIRO_ERR_STATE, 14, "wrong state for this operation") \
	X(SHIRO_ERR_UNSUPP, 15, "not supported here") \
	X(SHIRO_ERR_CANCELED, 16, "canceled") \
	X(SHIRO_ERR_FAILED, 17, "failed")

enum shiro_err {
#define SHIRO_ERR_ENUM(name, value, text) name = (value),
	SHIRO_ERR_LIST(SHIRO_ERR_ENUM)
#undef SHIRO_ERR_ENUM
};

/* err_str - a short English text for code (positive or negative). */
const char *err_str(int code);

/* err_from_errno - the SHIRO_ERR_* (negative) closest to errno value e. */
int err_from_errno(int e);

#endif
