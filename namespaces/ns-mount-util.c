// SPDX-License-Identifier: Apache-2.0
/*
 * Helpers the mount files share (ns-mount*.c, ns-dev.c, ns-mask.c, ns-misc.c), kept apart so
 * that none of those files calls back into another: path splitting and comparing, the bind
 * remount that keeps locked flags, and the procfs check.
 */
#include "ns-internal.h"
#include "hutch-sys.h"

#include <linux/magic.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#define ATIME_FLAGS (MS_NOATIME | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME)
#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000 /* glibc < 2.34 lacks it; the kernel reports it since 5.10 */
#endif

int ns_split_path(const char *path, char dir[PATH_MAX], char base[NAME_MAX + 1],
		  struct hutch_err *err)
{
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len >= PATH_MAX)
		return hutch_fail(err, ENAMETOOLONG, "path too long: %s", path);
	const char *slash = memrchr(path, '/', len);
	const char *b = slash ? slash + 1 : path;
	size_t blen = len - (size_t)(b - path);
	if (blen == 0 || blen > NAME_MAX || (blen == 2 && memcmp(b, "..", 2) == 0) ||
	    (blen == 1 && *b == '.'))
		return hutch_fail(err, EINVAL, "invalid path %s", path);
	memcpy(base, b, blen);
	base[blen] = '\0';
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	memcpy(dir, path, dlen);
	dir[dlen] = '\0';
	if (dlen == 0)
		strcpy(dir, "/");
	return 0;
}

bool ns_path_under(const char *dest, const char *name)
{
	while (*dest == '/')
		dest++;
	size_t n = strlen(name);
	return strncmp(dest, name, n) == 0 && (dest[n] == '/' || dest[n] == '\0');
}

bool ns_path_is(const char *dest, const char *name)
{
	if (!ns_path_under(dest, name))
		return false;
	while (*dest == '/')
		dest++;
	dest += strlen(name);
	return strspn(dest, "/") == strlen(dest);
}

static unsigned long statvfs_to_ms(unsigned long f)
{
	static const struct {
		unsigned long st, ms;
	} map[] = {
		{ ST_RDONLY, MS_RDONLY },     { ST_NOSUID, MS_NOSUID },
		{ ST_NODEV, MS_NODEV },	      { ST_NOEXEC, MS_NOEXEC },
		{ ST_NOATIME, MS_NOATIME },   { ST_NODIRATIME, MS_NODIRATIME },
		{ ST_RELATIME, MS_RELATIME }, { ST_NOSYMFOLLOW, MS_NOSYMFOLLOW },
	};
	unsigned long ms = 0;
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (f & map[i].st)
			ms |= map[i].ms;
	return ms;
}

int ns_remount_bind(const char *target, unsigned long flags, unsigned long clear,
		    struct hutch_err *err)
{
	struct statvfs sv;
	if (statvfs(target, &sv) < 0)
		return hutch_fail_errno(err, errno, "statvfs");
	/* MS_BIND|MS_REMOUNT replaces all per-mount flags: carry over what is already set. */
	unsigned long keep = statvfs_to_ms(sv.f_flag) & ~clear;
	if (flags & ATIME_FLAGS)
		keep &= ~ATIME_FLAGS;
	flags &= ~(MS_BIND | MS_REC | MS_REMOUNT);
	if (hutch_sys->mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | flags | keep, NULL) < 0)
		return hutch_fail_errno(err, errno, "remount");
	return 0;
}

int ns_check_procfs(int fd, const char *path, struct hutch_err *err)
{
	struct statfs sf;
	int r = fd >= 0 ? fstatfs(fd, &sf) : statfs(path, &sf);
	if (r < 0)
		return hutch_fail_errno(err, errno, "statfs %s", path);
	if (sf.f_type != PROC_SUPER_MAGIC)
		return hutch_fail(err, EINVAL, "%s is not a procfs", path);
	return 0;
}
