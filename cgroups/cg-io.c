// SPDX-License-Identifier: Apache-2.0
/*
 * What every part of cgroups/ reads from the kernel: whether the host is pure v2, a cgroup
 * file (whole, as a number, or one key's value), and our own place in each hierarchy. A leaf:
 * it calls nothing else of cgroups/ but the pure path parser.
 */
#include "cg-internal.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/vfs.h>

bool cg_is_v2(void)
{
	struct statfs fs;
	return statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

int cg_read_at(int dirfd, const char *file, char **out, struct hutch_err *err)
{
	return hutch_read_file_at(dirfd, file, 1 << 22, out, NULL, err);
}

int cg_read_u64_at(int dirfd, const char *file, uint64_t *out)
{
	struct hutch_err e = { 0 };
	_cleanup_free_ char *s = NULL;
	int r = cg_read_at(dirfd, file, &s, &e);
	if (r < 0)
		return r;
	s[strcspn(s, "\n")] = '\0';
	if (strcmp(s, "max") == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	return hutch_parse_u64(s, out);
}

int cg_read_key_at(int dirfd, const char *file, const char *key, uint64_t *out)
{
	struct hutch_err e = { 0 };
	_cleanup_free_ char *s = NULL;
	int r = cg_read_at(dirfd, file, &s, &e);
	if (r < 0)
		return r;
	size_t kl = strlen(key);
	for (char *l = s; *l;) {
		size_t n = strcspn(l, "\n");
		if (strncmp(l, key, kl) == 0 && l[kl] == ' ') {
			l[n] = '\0';
			return hutch_parse_u64(l + kl + 1, out);
		}
		l += n + (l[n] == '\n');
	}
	return -ENOENT;
}

/* Reads both /proc files and locates our own cgroup in every hierarchy. */
int cg_read_hierarchies(bool v2, struct cg_hier **out, size_t *n, struct hutch_err *err)
{
	_cleanup_free_ char *pc = NULL, *mi = NULL;
	int r = hutch_read_file_at(AT_FDCWD, "/proc/self/cgroup", 1 << 20, &pc, NULL, err);
	if (r == 0)
		r = hutch_read_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 24, &mi, NULL, err);
	if (r < 0)
		return r;
	r = cg_parse_hierarchies(pc, mi, v2, out, n, err);
	if (r < 0 || v2)
		return r;
	/* A hybrid host's cgroup2 mount beside: a container joins it too, as under runc and
	 * crun (its "0::" line is the container's own). None mounted is no error. */
	struct cg_hier *u = NULL;
	size_t nu = 0;
	struct hutch_err e = { 0 };
	if (cg_parse_hierarchies(pc, mi, true, &u, &nu, &e) < 0)
		return 0;
	*out = hutch_xrealloc(*out, (*n + nu) * sizeof(**out));
	memcpy(*out + *n, u, nu * sizeof(*u));
	*n += nu;
	free(u);
	return 0;
}
