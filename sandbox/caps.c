/*
 * caps.c - dropping every capability (see caps.h).  System calls only.
 */
#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"

/* caps_drop - lose every capability for good. */
int
caps_drop(uint64_t keep, const char **stepp)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	int c, setpcap;

	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) != 0) {
		*stepp = "read the capabilities";
		return -1;
	}
	setpcap = (data[0].effective & (1u << CAP_SETPCAP)) != 0;
	if (setpcap) {
		/* Root gets no capabilities back from execve or setuid. */
		if (prctl(PR_SET_SECUREBITS,
			SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
			    SECBIT_NO_SETUID_FIXUP |
			    SECBIT_NO_SETUID_FIXUP_LOCKED |
			    SECBIT_KEEP_CAPS_LOCKED,
			0, 0, 0) != 0) {
			*stepp = "set securebits";
			return -1;
		}
		for (c = 0; c < 64; c++)
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) {
				if (errno == EINVAL)
					break;
				*stepp = "drop the bounding set";
				return -1;
			}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
	    errno != EINVAL) {
		*stepp = "clear ambient capabilities";
		return -1;
	}
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	data[0].permitted = data[0].effective = (uint32_t)keep;
	data[1].permitted = data[1].effective = (uint32_t)(keep >> 32);
	if (syscall(SYS_capset, &hdr, data) != 0) {
		*stepp = "clear capabilities";
		return -1;
	}
	return 0;
}
