// SPDX-License-Identifier: Apache-2.0
/*
 * Who hutch runs as: host root, or rootless (an ordinary user, or root only inside a user
 * namespace such as `unshare -r`'s). Rootless decides where state lives, whether hutch
 * makes its own user namespace, and which cgroups it may write.
 */
#include "hutch-base.h"
#include "hutch-ids.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

bool hutch_init_userns_map(const char *map)
{
	unsigned long in, out, n;
	/* The initial user namespace maps every id onto itself in one line. */
	return map && sscanf(map, "%lu %lu %lu", &in, &out, &n) == 3 && in == 0 && out == 0 &&
	       n == 4294967295UL;
}

bool hutch_rootless(void)
{
	static int cached = -1;
	if (cached >= 0)
		return cached;
	char buf[256] = "";
	int fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	/* No /proc: root is assumed to be what it says, as before /proc existed. */
	cached = geteuid() != 0 || (fd >= 0 && !hutch_init_userns_map(buf));
	return cached;
}

bool hutch_has_cap(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	if (cap < 0 || cap > 63 || syscall(SYS_capget, &h, d) < 0)
		return false;
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

bool hutch_may_mount(void)
{
	if (!hutch_rootless())
		return true;
	struct stat own, owner;
	int mnt = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	int fd = mnt >= 0 ? ioctl(mnt, NS_GET_USERNS) : -1;
	bool ours = fd >= 0 && fstat(fd, &owner) == 0 && stat("/proc/self/ns/user", &own) == 0 &&
		    own.st_ino == owner.st_ino && own.st_dev == owner.st_dev;
	if (fd >= 0)
		close(fd);
	if (mnt >= 0)
		close(mnt);
	return ours && hutch_has_cap(CAP_SYS_ADMIN);
}

const char *hutch_rootless_dir(const char *xdg_var, const char *home_sub, const char *leaf)
{
	const char *xdg = getenv(xdg_var), *home = getenv("HOME");
	if (xdg && xdg[0] == '/')
		return hutch_xasprintf("%s/%s", xdg, leaf);
	if (home && home[0] == '/')
		return hutch_xasprintf("%s/%s/%s", home, home_sub, leaf);
	return NULL;
}

char *hutch_user_name(uid_t uid)
{
	_cleanup_free_ char *text = NULL;
	struct hutch_err e = { 0 };
	if (hutch_read_file_at(AT_FDCWD, "/etc/passwd", 4 << 20, &text, NULL, &e) < 0)
		return NULL;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2 && strtoul(c2 + 1, NULL, 10) == uid && c2[1] >= '0' && c2[1] <= '9') {
			*c1 = '\0';
			return hutch_xstrdup(l);
		}
	}
	return NULL;
}
