// SPDX-License-Identifier: Apache-2.0
/*
 * OCI mount options, both ways: the table of what each means (a flag to set or clear, a
 * propagation, a bind, an idmap; anything else is the filesystem's own data), the parser
 * that fills struct ns_mount, and its inverse for writing a spec back out. Pure.
 */
#include "ns-internal.h"

#include <string.h>
#include <sys/mount.h>

enum opt_kind {
	OPT_SET,
	OPT_CLEAR,
	OPT_PROPAGATION,
	OPT_BIND,
	OPT_RBIND,
	OPT_TMPCOPYUP,
	OPT_IDMAP,
	OPT_RIDMAP,
	OPT_IGNORE,
	OPT_REC_SET,
	OPT_REC_CLEAR,
	OPT_REC_ATIME,
};

struct mount_opt {
	const char *name;
	enum opt_kind kind;
	unsigned long flag;
};

static const struct mount_opt mount_opts[] = {
	{ "ro", OPT_SET, MS_RDONLY },
	{ "rw", OPT_CLEAR, MS_RDONLY },
	{ "nosuid", OPT_SET, MS_NOSUID },
	{ "suid", OPT_CLEAR, MS_NOSUID },
	{ "nodev", OPT_SET, MS_NODEV },
	{ "dev", OPT_CLEAR, MS_NODEV },
	{ "noexec", OPT_SET, MS_NOEXEC },
	{ "exec", OPT_CLEAR, MS_NOEXEC },
	{ "sync", OPT_SET, MS_SYNCHRONOUS },
	{ "async", OPT_CLEAR, MS_SYNCHRONOUS },
	{ "dirsync", OPT_SET, MS_DIRSYNC },
	{ "remount", OPT_SET, MS_REMOUNT },
	{ "mand", OPT_SET, MS_MANDLOCK },
	{ "nomand", OPT_CLEAR, MS_MANDLOCK },
	{ "noatime", OPT_SET, MS_NOATIME },
	{ "atime", OPT_CLEAR, MS_NOATIME },
	{ "nodiratime", OPT_SET, MS_NODIRATIME },
	{ "diratime", OPT_CLEAR, MS_NODIRATIME },
	{ "relatime", OPT_SET, MS_RELATIME },
	{ "norelatime", OPT_CLEAR, MS_RELATIME },
	{ "strictatime", OPT_SET, MS_STRICTATIME },
	{ "nostrictatime", OPT_CLEAR, MS_STRICTATIME },
	{ "nosymfollow", OPT_SET, MS_NOSYMFOLLOW },
	{ "symfollow", OPT_CLEAR, MS_NOSYMFOLLOW },
	{ "bind", OPT_BIND, 0 },
	{ "rbind", OPT_RBIND, 0 },
	{ "private", OPT_PROPAGATION, MS_PRIVATE },
	{ "rprivate", OPT_PROPAGATION, MS_PRIVATE | MS_REC },
	{ "shared", OPT_PROPAGATION, MS_SHARED },
	{ "rshared", OPT_PROPAGATION, MS_SHARED | MS_REC },
	{ "slave", OPT_PROPAGATION, MS_SLAVE },
	{ "rslave", OPT_PROPAGATION, MS_SLAVE | MS_REC },
	{ "unbindable", OPT_PROPAGATION, MS_UNBINDABLE },
	{ "runbindable", OPT_PROPAGATION, MS_UNBINDABLE | MS_REC },
	{ "tmpcopyup", OPT_TMPCOPYUP, 0 },
	{ "defaults", OPT_IGNORE, 0 },
	{ "idmap", OPT_IDMAP, 0 },
	{ "ridmap", OPT_RIDMAP, 0 },
	/* Recursive (mount_setattr AT_RECURSIVE): the mount and all its submounts. */
	{ "rro", OPT_REC_SET, MOUNT_ATTR_RDONLY },
	{ "rrw", OPT_REC_CLEAR, MOUNT_ATTR_RDONLY },
	{ "rnosuid", OPT_REC_SET, MOUNT_ATTR_NOSUID },
	{ "rsuid", OPT_REC_CLEAR, MOUNT_ATTR_NOSUID },
	{ "rnodev", OPT_REC_SET, MOUNT_ATTR_NODEV },
	{ "rdev", OPT_REC_CLEAR, MOUNT_ATTR_NODEV },
	{ "rnoexec", OPT_REC_SET, MOUNT_ATTR_NOEXEC },
	{ "rexec", OPT_REC_CLEAR, MOUNT_ATTR_NOEXEC },
	{ "rnodiratime", OPT_REC_SET, MOUNT_ATTR_NODIRATIME },
	{ "rdiratime", OPT_REC_CLEAR, MOUNT_ATTR_NODIRATIME },
	{ "rnosymfollow", OPT_REC_SET, MOUNT_ATTR_NOSYMFOLLOW },
	{ "rsymfollow", OPT_REC_CLEAR, MOUNT_ATTR_NOSYMFOLLOW },
	/* The access-time mode is one value, not bits (the kernel wants all of
	 * MOUNT_ATTR__ATIME cleared with it): "ratime" and "rnostrictatime" mean the kernel's
	 * default, relatime, as "atime" and "nostrictatime" do for mount(8); "rnorelatime"
	 * means strictatime. */
	{ "rrelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
	{ "rnoatime", OPT_REC_ATIME, MOUNT_ATTR_NOATIME },
	{ "rstrictatime", OPT_REC_ATIME, MOUNT_ATTR_STRICTATIME },
	{ "ratime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
	{ "rnostrictatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
	{ "rnorelatime", OPT_REC_ATIME, MOUNT_ATTR_STRICTATIME },
};

static const struct mount_opt *find_opt(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(mount_opts); i++)
		if (strcmp(mount_opts[i].name, name) == 0)
			return &mount_opts[i];
	return NULL;
}

static void append_data(struct ns_mount *m, const char *opt)
{
	char *old = m->data;
	m->data = old && *old ? hutch_xasprintf("%s,%s", old, opt) : hutch_xstrdup(opt);
	free(old);
}

int ns_mount_parse_options(struct ns_mount *m, char *const *options, size_t n,
			   struct hutch_err *err)
{
	(void)err; /* every option is known or the filesystem's own: none fails today */
	for (size_t i = 0; i < n; i++) {
		const char *o = options[i];
		if (!o || !*o)
			continue;
		const struct mount_opt *d = find_opt(o);
		if (!d) { /* "size=64m", "mode=755", "newinstance": the filesystem's own */
			append_data(m, o);
			continue;
		}
		switch (d->kind) {
		case OPT_SET: /* the last of "ro" / "rw" wins */
			m->flags |= d->flag;
			m->clear_flags &= ~d->flag;
			break;
		case OPT_CLEAR:
			m->flags &= ~d->flag;
			m->clear_flags |= d->flag;
			break;
		case OPT_PROPAGATION:
			m->propagation = d->flag;
			break;
		case OPT_RBIND:
			m->recursive = true;
			/* fallthrough */
		case OPT_BIND:
			m->bind = true;
			break;
		case OPT_TMPCOPYUP:
			m->tmpcopyup = true;
			break;
		case OPT_RIDMAP:
			m->idmap_recursive = true;
			/* fallthrough */
		case OPT_IDMAP:
			m->idmap = true;
			break;
		case OPT_IGNORE:
			break;
		case OPT_REC_SET: /* the last of "rro" / "rrw" wins */
			m->rec_set |= d->flag;
			m->rec_clear &= ~d->flag;
			break;
		case OPT_REC_CLEAR:
			m->rec_set &= ~d->flag;
			m->rec_clear |= d->flag;
			break;
		case OPT_REC_ATIME:
			m->rec_set = (m->rec_set & ~(uint64_t)MOUNT_ATTR__ATIME) | d->flag;
			m->rec_clear |= MOUNT_ATTR__ATIME;
			break;
		}
	}
	return 0;
}

/* The options that set m's flags, in the table's order (name_kind: OPT_SET or OPT_CLEAR). */
static void push_flags(char ***v, size_t *n, unsigned long flags, enum opt_kind kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(mount_opts); i++)
		if (mount_opts[i].kind == kind && (flags & mount_opts[i].flag))
			hutch_strv_push(v, n, mount_opts[i].name);
}

/* The recursive options that give m's rec_set and rec_clear, the atime mode as one. */
static void push_rec(char ***v, size_t *n, const struct ns_mount *m)
{
	for (size_t i = 0; i < ARRAY_SIZE(mount_opts); i++) {
		const struct mount_opt *o = &mount_opts[i];
		if ((o->kind == OPT_REC_SET && (m->rec_set & o->flag)) ||
		    (o->kind == OPT_REC_CLEAR && (m->rec_clear & o->flag)))
			hutch_strv_push(v, n, o->name);
	}
	if (!(m->rec_clear & MOUNT_ATTR__ATIME))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(mount_opts); i++)
		if (mount_opts[i].kind == OPT_REC_ATIME &&
		    mount_opts[i].flag == (m->rec_set & MOUNT_ATTR__ATIME)) {
			hutch_strv_push(v, n, mount_opts[i].name);
			return;
		}
}

bool ns_mount_deferred(const struct ns_mount *m)
{
	bool bind = m->bind || (m->type && strcmp(m->type, "bind") == 0);
	bool tmpfs = m->type && strcmp(m->type, "tmpfs") == 0;
	bool dev = m->destination && ns_path_is(m->destination, "dev");
	return !bind && !m->tmpcopyup && (tmpfs || dev) &&
	       ((m->flags & MS_RDONLY) || m->rec_set || m->rec_clear);
}

char **ns_mount_format_options(const struct ns_mount *m, size_t *n)
{
	char **v = hutch_xcalloc(1, sizeof(char *));
	*n = 0;
	if (m->bind)
		hutch_strv_push(&v, n, m->recursive ? "rbind" : "bind");
	push_flags(&v, n, m->flags, OPT_SET);
	push_flags(&v, n, m->clear_flags, OPT_CLEAR);
	for (size_t i = 0; m->propagation && i < ARRAY_SIZE(mount_opts); i++)
		if (mount_opts[i].kind == OPT_PROPAGATION && mount_opts[i].flag == m->propagation)
			hutch_strv_push(&v, n, mount_opts[i].name);
	push_rec(&v, n, m);
	if (m->tmpcopyup)
		hutch_strv_push(&v, n, "tmpcopyup");
	if (m->idmap)
		hutch_strv_push(&v, n, m->idmap_recursive ? "ridmap" : "idmap");
	_cleanup_free_ char *data = hutch_xstrdup(m->data ? m->data : "");
	char *save = NULL;
	for (char *o = strtok_r(data, ",", &save); o; o = strtok_r(NULL, ",", &save))
		hutch_strv_push(&v, n, o);
	return v;
}
