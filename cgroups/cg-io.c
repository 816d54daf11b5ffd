// SPDX-License-Identifier: Apache-2.0
/*
 * What every part of cgroups/ reads from the kernel: whether the host is pure v2, a cgroup
 * file (whole, as a number, or one key's value), and our own place in each hierarchy. A leaf:
 * it calls nothing else of cgroups/ but the pure path parser.
 */
#include "cg-internal.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

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

/*
 * /proc/self/mountinfo, read again only when it changed: run's create, start and delete each
 * locate the hierarchies, and the kernel formats every mount of the namespace for each read.
 * Kept per process (a forked child reads its own) and per mount namespace (one that unshares
 * reads the new one); an fd of the file, polled, says when the table changed (POLLPRI), so
 * a long-lived process (the pool) sees a hierarchy mounted or unmounted meanwhile. Returns
 * a copy.
 */
static int read_mountinfo(char **out, struct hutch_err *err)
{
	static char *text;
	static int watch = -1;
	static pid_t pid;
	static dev_t dev;
	static ino_t ino;
	struct stat ns;
	bool have_ns = stat("/proc/self/ns/mnt", &ns) == 0;
	struct pollfd p = { .fd = watch, .events = POLLPRI };
	if (text && pid == getpid() && have_ns && ns.st_dev == dev && ns.st_ino == ino &&
	    poll(&p, 1, 0) == 0) {
		*out = hutch_xstrdup(text);
		return 0;
	}
	if (watch >= 0 && pid == getpid()) /* a child's is its parent's: exec or close_fds's */
		close(watch);
	watch = -1;
	free(steal_ptr(text));
	/* Opened before the read: a change in between shows at the next poll. */
	int w = have_ns ? open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC) : -1;
	int r = hutch_read_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 24, out, NULL, err);
	if (r < 0 || w < 0) {
		if (w >= 0)
			close(w);
		return r;
	}
	watch = w;
	text = hutch_xstrdup(*out);
	pid = getpid();
	dev = ns.st_dev;
	ino = ns.st_ino;
	return 0;
}

/* Reads both /proc files and locates our own cgroup in every hierarchy. */
int cg_read_hierarchies(bool v2, struct cg_hier **out, size_t *n, struct hutch_err *err)
{
	_cleanup_free_ char *pc = NULL, *mi = NULL;
	int r = hutch_read_file_at(AT_FDCWD, "/proc/self/cgroup", 1 << 20, &pc, NULL, err);
	if (r == 0)
		r = read_mountinfo(&mi, err);
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
