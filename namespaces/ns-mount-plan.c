// SPDX-License-Identifier: Apache-2.0
/*
 * The OCI mounts planned as data: each spec mount becomes a short run of ops (mount point,
 * checks, the mount, the remounts and propagation it needs) for ns_mount_apply. Pure: what
 * depends on the live system (is a source a file, which cgroup hierarchies exist) comes in
 * as ns_mount_facts, and a problem found here becomes a FAIL op at the point it would have
 * stopped the mounting, so the error reads, and happens, as when mounting one by one.
 */
#include "ns-internal.h"

#include <string.h>
#include <sys/mount.h>

struct planner {
	struct ns_mount_plan *p;
	const struct ns_mount_facts *f;
	const struct ns_rootfs *cfg;
	const char *spec; /* the spec mount being planned */
	unsigned branch;  /* given to the ops added now */
};

struct ns_mount_op *ns_plan_add(struct ns_mount_plan *p, enum ns_mount_op_kind kind,
				const char *target)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 32;
		p->ops = hutch_xrealloc(p->ops, p->cap * sizeof(*p->ops));
	}
	struct ns_mount_op *op = &p->ops[p->n++];
	*op = (struct ns_mount_op){
		.kind = kind, .target = target, .tree = -1, .slot = -1, .slot2 = -1
	};
	return op;
}

const char *ns_plan_own(struct ns_mount_plan *p, char *s)
{
	if (p->n_owned == p->cap_owned) {
		p->cap_owned = p->cap_owned ? p->cap_owned * 2 : 16;
		p->owned = hutch_xrealloc(p->owned, p->cap_owned * sizeof(*p->owned));
	}
	p->owned[p->n_owned++] = s;
	return s;
}

static struct ns_mount_op *add(struct planner *pl, enum ns_mount_op_kind kind, const char *target)
{
	struct ns_mount_op *op = ns_plan_add(pl->p, kind, target);
	op->branch = pl->branch;
	op->spec = pl->spec;
	return op;
}

/* Keeps s (malloc'd) for as long as the plan. */
static const char *own(struct planner *pl, char *s)
{
	return ns_plan_own(pl->p, s);
}

static void fail(struct planner *pl, int error, bool with_errno, char *msg)
{
	struct ns_mount_op *op = add(pl, NS_OP_FAIL, NULL);
	op->error = error;
	op->with_errno = with_errno;
	op->label = own(pl, msg);
}

void ns_mount_plan_free(struct ns_mount_plan *p)
{
	for (size_t i = 0; i < p->n_owned; i++)
		free(p->owned[i]);
	free(p->owned);
	free(p->ops);
	*p = (struct ns_mount_plan){ 0 };
}

static bool is_bind(const struct ns_mount *m)
{
	return m->bind || (m->type && strcmp(m->type, "bind") == 0);
}

static bool type_is(const struct ns_mount *m, const char *type)
{
	return m->type && strcmp(m->type, type) == 0;
}

static void propagation(struct planner *pl, const char *dest, unsigned long flags)
{
	if (flags)
		add(pl, NS_OP_PROPAGATION, dest)->flags = flags;
}

/* source bound at dest; tree >= 0: the parent's copy of source (ns_make_tree), attached. */
static void bind_host(struct planner *pl, const char *source, int tree, const char *dest,
		      bool recursive, unsigned long flags, unsigned long clear)
{
	int kind = pl->f->source_kind(pl->f->ctx, source, tree);
	if (kind < 0) {
		fail(pl, -kind, true, hutch_xasprintf("stat %s", source));
		return;
	}
	add(pl, kind == NS_SOURCE_DIR ? NS_OP_MKDIR : NS_OP_MKFILE, dest);
	add(pl, NS_OP_CHECK_DEST, dest);
	struct ns_mount_op *b = add(pl, NS_OP_BIND, dest);
	b->source = source;
	b->tree = tree;
	b->recursive = recursive;
	/* A bind ignores every flag but MS_REC: ro, nosuid, ... need a remount of the new mount. */
	flags &= ~(MS_BIND | MS_REC | MS_REMOUNT);
	if (!flags)
		return;
	struct ns_mount_op *r = add(pl, NS_OP_REMOUNT_BIND, dest);
	r->flags = flags;
	r->clear = clear;
}

static struct ns_mount_op *mount_op(struct planner *pl, const char *dest, const char *source,
				    const char *fstype, unsigned long flags, const char *data)
{
	struct ns_mount_op *op = add(pl, NS_OP_MOUNT, dest);
	op->source = source;
	op->fstype = fstype;
	op->flags = flags;
	op->data = data;
	return op;
}

/* Any mount with a filesystem type: tmpfs, proc, devpts, mqueue, overlay, ... A sysfs that
 * a user namespace without its own network namespace may not mount: the host's, bound. */
static void mount_fs(struct planner *pl, const struct ns_mount *m)
{
	const char *dest = m->destination;
	bool sysfs = type_is(m, "sysfs");
	add(pl, NS_OP_MKDIR, dest);
	add(pl, NS_OP_CHECK_DEST, dest)->is_proc = type_is(m, "proc");
	if (m->tmpcopyup) /* keep a handle on the image's directory before hiding it */
		add(pl, NS_OP_HOLD, dest);
	unsigned long flags = m->flags;
	if (m->tmpcopyup || ns_mount_deferred(m))
		flags &= ~MS_RDONLY; /* made read-only after the copy, or at the end */
	struct ns_mount_op *op =
		mount_op(pl, dest, m->source ? m->source : m->type, m->type, flags, m->data);
	op->label = own(pl, hutch_xasprintf("mount %s", m->type));
	op->fallback = sysfs ? NS_FALLBACK_EPERM : 0;
	pl->branch = sysfs ? NS_BRANCH_MOUNTED : NS_BRANCH_ALWAYS;
	if (type_is(m, "proc"))
		add(pl, NS_OP_CHECK_PROCFS, dest);
	if (m->tmpcopyup) {
		add(pl, NS_OP_COPYUP, dest);
		if (m->flags & MS_RDONLY) {
			op = add(pl, NS_OP_REMOUNT, dest);
			op->flags = m->flags;
			op->data = m->data;
			op->label = "remount read-only";
		}
	}
	propagation(pl, dest, m->propagation);
	if (!sysfs)
		return;
	pl->branch = NS_BRANCH_FELL_BACK;
	bind_host(pl, "/sys", -1, dest, true, m->flags | MS_RDONLY, m->clear_flags & ~MS_RDONLY);
	pl->branch = NS_BRANCH_ALWAYS;
}

/* cgroup2 at dest; without a cgroup namespace of our own the kernel refuses (EPERM in a user
 * namespace, EBUSY otherwise) and we bind the host's mount instead, as runc does. The cgroup
 * binds are recursive: in a user namespace every host mount beneath is locked, and a plain
 * bind of a tree with locked submounts is EINVAL. */
static void mount_cgroup2(struct planner *pl, const char *dest, const char *host,
			  unsigned long flags)
{
	add(pl, NS_OP_MKDIR, dest);
	struct ns_mount_op *op = mount_op(pl, dest, "cgroup2", "cgroup2", flags, NULL);
	op->label = "mount cgroup2";
	op->fallback = NS_FALLBACK_EPERM | NS_FALLBACK_EBUSY;
	pl->branch = NS_BRANCH_FELL_BACK;
	bind_host(pl, host, -1, dest, true, flags, 0);
	pl->branch = NS_BRANCH_ALWAYS;
}

static const char *own_dir(const struct ns_rootfs *cfg, const char *ctrls)
{
	for (size_t i = 0; cfg && i < cfg->n_cgroup_dirs; i++)
		if (!strcmp(cfg->cgroup_dirs[i].name, ctrls))
			return cfg->cgroup_dirs[i].host_dir;
	return NULL;
}

static bool mount_hierarchy(struct planner *pl, const char *dest, const char *ctrls,
			    unsigned long flags)
{
	const char *dir = hutch_str_has_prefix(ctrls, "name=") ? ctrls + 5 : ctrls;
	if (!*dir || strchr(dir, '/') || strcmp(dir, "..") == 0 || strcmp(dir, ".") == 0) {
		fail(pl, EINVAL, false, hutch_xasprintf("bad cgroup hierarchy %s", ctrls));
		return false;
	}
	const char *sub = own(pl, hutch_xasprintf("%s/%s", dest, dir));
	add(pl, NS_OP_MKDIR, sub);
	const char *own_host = own_dir(pl->cfg, ctrls);
	if (own_host) {
		bind_host(pl, own_host, -1, sub, true, flags, 0);
	} else {
		struct ns_mount_op *op =
			mount_op(pl, sub, "cgroup", "cgroup", flags, own(pl, hutch_xstrdup(ctrls)));
		op->label = own(pl, hutch_xasprintf("mount cgroup %s", ctrls));
		op->fallback = NS_FALLBACK_EPERM | NS_FALLBACK_EBUSY;
		pl->branch = NS_BRANCH_FELL_BACK;
		bind_host(pl, own(pl, hutch_xasprintf("/sys/fs/cgroup/%s", dir)), -1, sub, true,
			  flags, 0);
		pl->branch = NS_BRANCH_ALWAYS;
	}
	/* "cpu,cpuacct" is also reachable as "cpu" and "cpuacct", as on the host. */
	if (strchr(dir, ',')) {
		const char *content = own(pl, hutch_xstrdup(dir));
		char *names = hutch_xstrdup(dir), *save = NULL;
		for (char *c = strtok_r(names, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
			struct ns_mount_op *op =
				add(pl, NS_OP_SYMLINK, own(pl, hutch_xasprintf("%s/%s", dest, c)));
			op->source = content;
			op->label = own(pl, hutch_xasprintf("symlink %s", c));
		}
		free(names);
	}
	return true;
}

/* v1 or hybrid host: a tmpfs with one cgroup mount per hierarchy this process belongs to. */
static void mount_cgroup1(struct planner *pl, const struct ns_mount *m)
{
	const char *dest = m->destination;
	add(pl, NS_OP_MKDIR, dest);
	mount_op(pl, dest, "tmpfs", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755")->label =
		"mount tmpfs";
	if (!pl->f->self_cgroup) {
		const struct hutch_err *e = &pl->f->self_cgroup_err;
		{
			fail(pl, e->code, false, hutch_xstrdup(e->msg));
			return;
		}
	}
	char *buf = (char *)own(pl, hutch_xstrdup(pl->f->self_cgroup)), *save = NULL;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *ctrls = strchr(l, ':'), *end = ctrls ? strchr(ctrls + 1, ':') : NULL;
		if (!end || end == ctrls + 1) /* "0::/path" is the unified hierarchy */
			continue;
		*end = '\0';
		if (!mount_hierarchy(pl, dest, ctrls + 1, m->flags))
			return;
	}
	/* The unified hierarchy as the v1 ones: the container's own directory when it has one
	 * there. A cgroup2 mount made without a cgroup namespace of the container's own would
	 * be rooted at the host's root and show every cgroup2 cgroup on the host. */
	const char *unified = own(pl, hutch_xasprintf("%s/unified", dest));
	const char *own_unified = own_dir(pl->cfg, "");
	if (pl->f->cgroup2_unified && own_unified) {
		add(pl, NS_OP_MKDIR, unified);
		bind_host(pl, own_unified, -1, unified, true, m->flags, 0);
	} else if (pl->f->cgroup2_unified) {
		mount_cgroup2(pl, unified, "/sys/fs/cgroup/unified", m->flags);
	}
	if (m->flags & MS_RDONLY)
		add(pl, NS_OP_REMOUNT_BIND, dest)->flags = MS_RDONLY;
	propagation(pl, dest, m->propagation);
}

static void mount_cgroup(struct planner *pl, const struct ns_mount *m)
{
	bool v2 = pl->f->cgroup2;
	if (!v2 && type_is(m, "cgroup")) {
		mount_cgroup1(pl, m);
		return;
	}
	/* Asked for cgroup2 explicitly on a hybrid host: its unified hierarchy. */
	mount_cgroup2(pl, m->destination, v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified",
		      m->flags);
	propagation(pl, m->destination, m->propagation);
}

static void plan_one(struct planner *pl, const struct ns_mount *m, int tree)
{
	const char *dest = m->destination;
	if (!dest || dest[0] != '/') {
		fail(pl, EINVAL, false, hutch_xstrdup("destination must be an absolute path"));
		return;
	}
	/* Under /proc, /sys and /dev a symlinked component could send procfs or sysfs somewhere
	 * the later masking does not look (CVE-2019-19921): refused instead of resolved. */
	if (ns_path_under(dest, "proc") || ns_path_under(dest, "sys") || ns_path_under(dest, "dev"))
		add(pl, NS_OP_REFUSE_SYMLINKS, dest);
	if (is_bind(m)) {
		if (!m->source) {
			fail(pl, EINVAL, false, hutch_xstrdup("bind mount without a source"));
			return;
		}
		if (m->idmap && tree < 0) {
			fail(pl, EINVAL, false,
			     hutch_xstrdup("an idmapped mount needs its tree made first"));
			return;
		}
		bind_host(pl, m->source, tree, dest, m->recursive, m->flags, m->clear_flags);
		{
			propagation(pl, dest, m->propagation);
			return;
		}
	}
	if (!m->type || !*m->type) {
		fail(pl, EINVAL, false, hutch_xstrdup("mount without a type"));
		return;
	}
	if (type_is(m, "cgroup") || type_is(m, "cgroup2")) {
		mount_cgroup(pl, m);
		return;
	}
	mount_fs(pl, m);
}

/* "rro", "rnosuid", ...: on the mount just made and everything beneath it. */
static void rec_attrs(struct planner *pl, const struct ns_mount *m)
{
	pl->branch = NS_BRANCH_ALWAYS;
	struct ns_mount_op *op = add(pl, NS_OP_SETATTR, m->destination);
	op->flags = m->rec_set;
	op->clear = m->rec_clear;
	op->label = "mount_setattr";
}

void ns_mount_plan_rootfs(const struct ns_rootfs *cfg, const struct ns_mount_facts *f,
			  struct ns_mount_plan *p)
{
	struct planner pl = { .p = p, .f = f, .cfg = cfg };
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct ns_mount *m = &cfg->mounts[i];
		pl.spec = m->destination ? m->destination : "(null)";
		plan_one(&pl, m, cfg->tree_fds ? cfg->tree_fds[i] : -1);
		if ((m->rec_set || m->rec_clear) && !ns_mount_deferred(m))
			rec_attrs(&pl, m);
		/* As runc: /dev is populated unless the spec bind-mounts one in whole. */
		if (is_bind(m) && m->destination && ns_path_is(m->destination, "dev"))
			p->dev_bound = true;
	}
}

void ns_mount_plan_finish(const struct ns_mount *mounts, size_t n, struct ns_mount_plan *p)
{
	struct planner pl = { .p = p };
	for (size_t i = 0; i < n; i++) {
		const struct ns_mount *m = &mounts[i];
		if (!ns_mount_deferred(m))
			continue;
		pl.spec = m->destination;
		if (m->flags & MS_RDONLY) {
			struct ns_mount_op *op = add(&pl, NS_OP_REMOUNT_BIND, m->destination);
			op->flags = MS_RDONLY;
			op->label = "remount read-only";
		}
		if (m->rec_set || m->rec_clear)
			rec_attrs(&pl, m);
	}
}
