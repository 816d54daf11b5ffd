// SPDX-License-Identifier: Apache-2.0
/*
 * Where a container's cgroup lives, computed without touching the kernel: normalizing
 * linux.cgroupsPath, and finding each hierarchy's mount point and our own cgroup in it from
 * the texts of /proc/self/cgroup and /proc/self/mountinfo (so tests feed literal strings).
 */
#include "cg-internal.h"

#include <stdio.h>
#include <string.h>

static int check_component(const char *c, size_t len, const char *what, struct hutch_err *err)
{
	if (len == 2 && c[0] == '.' && c[1] == '.')
		return hutch_fail(err, EINVAL, "%s: '..' is not allowed", what);
	return 0;
}

int cg_resolve_path(const char *cgroups_path, const char *id, char **out, struct hutch_err *err)
{
	if (!cgroups_path || !*cgroups_path) {
		if (!id || !*id || strchr(id, '/') || strcmp(id, "..") == 0 || strcmp(id, ".") == 0)
			return hutch_fail(err, EINVAL,
					  "container id \"%s\": not usable as a cgroup name",
					  id ? id : "");
		*out = hutch_xasprintf("hutch-%s", id);
		return 0;
	}
	/* Collapse "//" and "/./", keep absolute vs relative, refuse "..": a relative path must
	 * stay beneath our own cgroup. */
	size_t len = strlen(cgroups_path);
	_cleanup_free_ char *buf = hutch_xmalloc(len + 2);
	size_t o = 0;
	const char *p = cgroups_path;
	bool absolute = *p == '/';
	while (*p) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 0)
			break;
		int r = check_component(p, n, "linux.cgroupsPath", err);
		if (r < 0)
			return r;
		if (!(n == 1 && *p == '.')) {
			if (o > 0 || absolute)
				buf[o++] = '/';
			memcpy(buf + o, p, n);
			o += n;
		}
		p += n;
	}
	buf[o] = '\0';
	if (o == 0)
		return hutch_fail(err, EINVAL,
				  "linux.cgroupsPath \"%s\": names no cgroup below the %s",
				  cgroups_path, absolute ? "root" : "current one");
	*out = steal_ptr(buf);
	return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *o = s;
	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*o++ = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
			p += 3;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
}

/* True if every item of the comma list `need` is an item of the comma list `have`. */
static bool list_covers(const char *have, const char *need)
{
	while (*need) {
		size_t n = strcspn(need, ",");
		bool found = false;
		for (const char *h = have; *h && !found;) {
			size_t m = strcspn(h, ",");
			found = m == n && strncmp(h, need, n) == 0;
			h += m + (h[m] == ',');
		}
		if (n && !found)
			return false;
		need += n + (need[n] == ',');
	}
	return true;
}

/* Does path lie at or under root? */
static const char *under(const char *path, const char *root)
{
	if (strcmp(root, "/") == 0)
		return path;
	size_t n = strlen(root);
	if (strncmp(path, root, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return NULL;
	return path + n;
}

struct mnt {
	char root[4096], point[4096], fstype[32], opts[1024];
};

static bool parse_mount_line(char *line, struct mnt *m)
{
	char *sep = strstr(line, " - ");
	if (!sep)
		return false;
	*sep = '\0';
	if (sscanf(line, "%*s %*s %*s %4095s %4095s", m->root, m->point) != 2)
		return false;
	if (sscanf(sep + 3, "%31s %*s %1023s", m->fstype, m->opts) != 2)
		return false;
	unescape(m->root);
	unescape(m->point);
	return true;
}

/* Finds the mount showing `own` for hierarchy `name` (v1) or the cgroup2 one (name NULL). */
static bool find_mount(const char *mountinfo, const char *name, const char *own, struct mnt *m)
{
	static const char tag[] = " - cgroup"; /* the fstype: cgroup or cgroup2 */
	for (const char *l = mountinfo; *l;) {
		size_t n = strcspn(l, "\n");
		const char *at = l;
		l += n + (l[n] == '\n');
		/* Most mounts are not cgroups: no copy and no parse for them (a host has hundreds,
		 * and every hierarchy looks through all of them). */
		if (!memmem(at, n, tag, sizeof(tag) - 1))
			continue;
		_cleanup_free_ char *line = strndup(at, n);
		if (!line || !parse_mount_line(line, m))
			continue;
		bool match = name ? strcmp(m->fstype, "cgroup") == 0 && list_covers(m->opts, name)
				  : strcmp(m->fstype, "cgroup2") == 0;
		if (match && under(own, m->root))
			return true;
	}
	return false;
}

static void add_hier(struct cg_hier **v, size_t *n, const char *name, const char *own,
		     const struct mnt *m)
{
	*v = hutch_xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (struct cg_hier){
		.name = hutch_xstrdup(name),
		.mount = hutch_xstrdup(m->point),
		.root = hutch_xstrdup(m->root),
		.own = hutch_xstrdup(own),
		.fd = -1,
	};
}

int cg_parse_hierarchies(const char *proc_cgroup, const char *mountinfo, bool v2,
			 struct cg_hier **out, size_t *n, struct hutch_err *err)
{
	struct cg_hier *v = NULL;
	size_t nv = 0;
	for (const char *l = proc_cgroup; *l;) {
		size_t len = strcspn(l, "\n");
		_cleanup_free_ char *line = hutch_xmalloc(len + 1);
		memcpy(line, l, len);
		line[len] = '\0';
		l += len + (l[len] == '\n');
		/* "hierarchy-id:controller-list:path"; the path may itself hold ':'. */
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || c2[1] != '/')
			continue;
		*c1 = *c2 = '\0';
		const char *name = c1 + 1, *own = c2 + 1;
		bool is_v2_line = strcmp(line, "0") == 0 && !*name;
		struct mnt m;
		if (is_v2_line != v2 || !*(v2 ? own : name))
			continue;
		if (find_mount(mountinfo, v2 ? NULL : name, own, &m))
			add_hier(&v, &nv, name, own, &m);
	}
	if (nv == 0)
		return hutch_fail(err, ENOENT, "no mounted cgroup%s hierarchy shows our own cgroup",
				  v2 ? "2" : " v1");
	*out = v;
	*n = nv;
	return 0;
}

int cg_hier_dir(const struct cg_hier *h, const char *path, char **out, struct hutch_err *err)
{
	const char *rel;
	if (*path == '/') {
		rel = under(path, h->root);
		if (!rel)
			return hutch_fail(err, EINVAL,
					  "cgroup %s is outside the part of hierarchy %s "
					  "mounted at %s",
					  path, h->name, h->mount);
		*out = hutch_xasprintf("%s%s", h->mount, rel);
		return 0;
	}
	rel = under(h->own, h->root);
	if (!rel)
		return hutch_fail(err, EINVAL, "our cgroup %s is not visible at %s", h->own,
				  h->mount);
	*out = hutch_xasprintf("%s%s/%s", h->mount, strcmp(rel, "/") == 0 ? "" : rel, path);
	return 0;
}

/* The cgroup path (as /proc/PID/cgroup shows it) of h->dir: the mount shows h->root. */
char *cg_hier_cgroup_path(const struct cg_hier *h)
{
	const char *rel = h->dir + strlen(h->mount); /* "" or "/a/b" */
	if (strcmp(h->root, "/") == 0)
		return hutch_xstrdup(*rel ? rel : "/");
	return hutch_xasprintf("%s%s", h->root, rel);
}

void cg_hier_clear(struct cg_hier *h)
{
	free(h->name);
	free(h->mount);
	free(h->root);
	free(h->own);
	free(h->dir);
	if (h->fd >= 0)
		close(h->fd);
	hutch_strv_free(h->created);
	*h = (struct cg_hier){ .fd = -1 };
}

void cg_hier_free(struct cg_hier *h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cg_hier_clear(&h[i]);
	free(h);
}

struct cg_hier *cg_find_hier(struct cg *cg, const char *controller)
{
	for (size_t i = 0; i < cg->n; i++)
		if (cg->v2 || list_covers(cg->h[i].name, controller))
			return &cg->h[i];
	return NULL;
}
