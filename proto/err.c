#include <errno.h>
#include <stdlib.h>

#include "err.h"

/* err_str - a short English text for code (positive or negative). */
const char *
err_str(int code)
{
	switch (abs(code)) {
#define SHIRO_ERR_CASE(name, value, text) \
	case (value): \
		return text;
		SHIRO_ERR_LIST(SHIRO_ERR_CASE)
#undef SHIRO_ERR_CASE
	}
	return "unknown error";
}

/* err_from_errno - the SHIRO_ERR_* (negative) closest to errno value e. */
int
err_from_errno(int e)
{
	switch (e) {
	case 0:
		return 0;
	case ENOMEM:
		return -SHIRO_ERR_NOMEM;
	case ENOENT:
		return -SHIRO_ERR_NOENT;
	case EEXIST:
		return -SHIRO_ERR_EXIST;
	case EACCES:
	case EPERM:
		return -SHIRO_ERR_PERM;
	case ENOSPC:
	case EDQUOT:
		return -SHIRO_ERR_NOSPC;
	case EAGAIN:
		return -SHIRO_ERR_AGAIN;
	case EINVAL:
		return -SHIRO_ERR_INVAL;
	case EFBIG:
	case E2BIG:
	case EMSGSIZE:
		return -SHIRO_ERR_TOOBIG;
	case ETIMEDOUT:
		return -SHIRO_ERR_TIMEOUT;
	case ENOSYS:
	case EOPNOTSUPP:
		return -SHIRO_ERR_UNSUPP;
	default:
		return -SHIRO_ERR_IO;
	}
}
