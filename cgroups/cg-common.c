// SPDX-License-Identifier: Apache-2.0
/*
 * One absolute cgroup path that lies beneath our own cgroup in every hierarchy. A delegate
 * runtime that reads a relative cgroupsPath against the hierarchy root (crun, runsc) must be
 * given such a path, or it would create cgroups outside our subtree on a v1 host whose
 * hierarchies place us differently.
 */
#include "cg-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <string.h>
#include <unistd.h>

#define CG_V2_MOUNT "/sys/fs/cgroup"

static bool is_prefix(const char *p, const char *of)
{
	size_t n = strlen(p);
	return !strcmp(p, "/") || (!strncmp(p, of, n) && (of[n] == '/' || of[n] == '\0'));
}

int cg_own_common(char **out, struct hutch_err *err)
{
	struct cg_hier *h = NULL;
	size_t n = 0;
	int r = cg_read_hierarchies(cg_is_v2(), &h, &n, err);
	if (r < 0)
		return r;
	const char *longest = "/";
	for (size_t i = 0; i < n; i++)
		if (strlen(h[i].own) > strlen(longest))
			longest = h[i].own;
	for (size_t i = 0; i < n && r == 0; i++)
		if (!is_prefix(h[i].own, longest))
			r = hutch_fail(err, ENOTSUP,
				       "cgroups: our cgroups %s and %s are in different places; no "
				       "path is beneath both",
				       h[i].own, longest);
	if (r == 0)
		*out = hutch_xstrdup(longest);
	cg_hier_free(h, n);
	return r;
}

static bool has_controller(const struct cg_hier *h, const char *controller)
{
	size_t n = strlen(controller);
	if (!n) /* "": a hybrid host's cgroup2 hierarchy */
		return !*h->name;
	for (const char *p = h->name; (p = strstr(p, controller)); p += n)
		if ((p == h->name || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* v1's tasks file moves the writing thread alone (see cg.h); v2 has no such move between
 * domains, and keeps cgroup.procs. */
static int open_join(const struct cg *cg, const struct cg_hier *h, struct hutch_err *err)
{
	const char *file = cg->v2 || !*h->name ? "cgroup.procs" : "tasks";
	int fd = openat(h->fd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open %s/%s", h->dir, file);
	return fd;
}

int cg_open_self(struct cg *cg, const char *controller, struct hutch_err *err)
{
	for (size_t i = 0; i < cg->n; i++)
		if (cg->h[i].fd >= 0 && (cg->v2 || has_controller(&cg->h[i], controller)))
			return open_join(cg, &cg->h[i], err);
	return -ENOENT;
}

int cg_join_open(struct cg *cg, const char *except, struct cg_join *j, struct hutch_err *err)
{
	j->n = 0;
	for (size_t i = 0; !cg->v2 && i < cg->n; i++) {
		const struct cg_hier *h = &cg->h[i];
		if (h->fd < 0 || !*h->name || (except && has_controller(h, except)))
			continue;
		if (j->n == CG_JOIN_MAX) {
			cg_join_close(j);
			return hutch_fail(err, E2BIG, "more than %d cgroup hierarchies",
					  CG_JOIN_MAX);
		}
		int fd = open_join(cg, h, err);
		if (fd < 0) {
			cg_join_close(j);
			return fd;
		}
		j->fd[j->n] = fd;
		j->dir[j->n++] = h->dir;
	}
	return 0;
}

int cg_join_self(struct cg_join *j, struct hutch_err *err)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < j->n; i++)
		if (write(j->fd[i], "0", 1) < 0)
			r = hutch_fail_errno(err, errno, "join cgroup %s", j->dir[i]);
	cg_join_close(j);
	return r;
}

void cg_join_close(struct cg_join *j)
{
	for (size_t i = 0; i < j->n; i++)
		close(j->fd[i]);
	j->n = 0;
}

int cg_clone_fd(const struct cg *cg)
{
	for (size_t i = 0; cg && i < cg->n; i++)
		if (cg->v2 || !*cg->h[i].name)
			return cg->h[i].fd;
	return -1;
}

int cg_open_procs(struct cg *cg, const char *controller, struct hutch_err *err)
{
	for (size_t i = 0; i < cg->n; i++) {
		if (cg->h[i].fd < 0 || (!cg->v2 && !has_controller(&cg->h[i], controller)))
			continue;
		int fd = openat(cg->h[i].fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return hutch_fail_errno(err, errno, "open %s/cgroup.procs", cg->h[i].dir);
		return fd;
	}
	return -ENOENT;
}

const char *cg_unified_dir(const struct cg *cg)
{
	for (size_t i = 0; !cg->v2 && i < cg->n; i++)
		if (!*cg->h[i].name && cg->h[i].dir)
			return cg->h[i].dir;
	return NULL;
}

size_t cg_hierarchy_dirs(const struct cg *cg, const char **names, const char **dirs, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; !cg->v2 && i < cg->n && n < max; i++) {
		if (!cg->h[i].dir || !*cg->h[i].name)
			continue;
		names[n] = cg->h[i].name;
		dirs[n++] = cg->h[i].dir;
	}
	return n;
}

/* v1: an eventfd the kernel signals when the memory cgroup runs out of memory (its oom
 * notifier, cgroup.event_control), for OOMs whose kill count lands in a child cgroup that
 * is gone by the time anyone reads it. -ENOTSUP on v2, where memory.events counts
 * hierarchically. */
int cg_oom_watch(struct cg *cg, struct hutch_err *err)
{
	struct cg_hier *h = cg->v2 ? NULL : cg_find_hier(cg, "memory");
	if (!h || h->fd < 0)
		return -ENOTSUP;
	_cleanup_close_ int oc = openat(h->fd, "memory.oom_control", O_RDONLY | O_CLOEXEC);
	if (oc < 0)
		return hutch_fail_errno(err, errno, "open %s/memory.oom_control", h->dir);
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0)
		return hutch_fail_errno(err, errno, "eventfd");
	char buf[64];
	snprintf(buf, sizeof(buf), "%d %d", efd, oc);
	int r = hutch_write_str_at(h->fd, "cgroup.event_control", buf, err);
	if (r < 0) {
		close(efd);
		return r;
	}
	return efd;
}

bool cg_oom_fired(int efd)
{
	uint64_t n = 0;
	return efd >= 0 && read(efd, &n, sizeof(n)) == (ssize_t)sizeof(n) && n > 0;
}

/* Delegated: we may make cgroups there (the directory) and move our processes in and out
 * (cgroup.procs: the kernel checks the common ancestor's), and enable controllers. */
static bool delegated_to_us(const char *dir)
{
	static const char *const files[] = { ".", "cgroup.procs", "cgroup.subtree_control" };
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; fd >= 0 && i < ARRAY_SIZE(files); i++)
		if (faccessat(fd, files[i], W_OK, AT_EACCESS) < 0)
			return false;
	return fd >= 0;
}

int cg_delegated_base(char **out, struct hutch_err *err)
{
	if (!cg_is_v2())
		return hutch_fail(err, ENOTSUP,
				  "this host's controllers are cgroup v1 (a v1 or hybrid host), "
				  "which cannot be delegated to a user");
	_cleanup_free_ char *text = NULL;
	if (hutch_read_file_at(AT_FDCWD, "/proc/self/cgroup", 1 << 16, &text, NULL, err) < 0)
		return hutch_err_prefix(err, "cgroups: ");
	char *own = strstr(text, "0::");
	if (!own)
		return hutch_fail(err, ENOENT, "cgroups: /proc/self/cgroup has no v2 line");
	own += 3;
	own[strcspn(own, "\n")] = '\0';
	/* Our own cgroup holds us, so it can enable no controller: the first ancestor. */
	_cleanup_free_ char *dir = hutch_xasprintf(CG_V2_MOUNT "%s", own);
	for (char *slash; (slash = strrchr(dir + strlen(CG_V2_MOUNT), '/'));) {
		*slash = '\0';
		if (delegated_to_us(dir[strlen(CG_V2_MOUNT)] ? dir : CG_V2_MOUNT)) {
			*out = hutch_xstrdup(dir[strlen(CG_V2_MOUNT)] ? dir + strlen(CG_V2_MOUNT)
								      : "/");
			return 0;
		}
	}
	return hutch_fail(err, EACCES, "no cgroup above %s is delegated to uid %u", own,
			  (unsigned)geteuid());
}
