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
	OPT_UNSUPPORTED
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
	/* Would need mount_setattr(2): refuse rather than hand them to the fs as data. */
	{ "rro", OPT_UNSUPPORTED, 0 },
	{ "rrw", OPT_UNSUPPORTED, 0 },
	{ "rnosuid", OPT_UNSUPPORTED, 0 },
	{ "rsuid", OPT_UNSUPPORTED, 0 },
	{ "rnodev", OPT_UNSUPPORTED, 0 },
	{ "rdev", OPT_UNSUPPORTED, 0 },
	{ "rnoexec", OPT_UNSUPPORTED, 0 },
	{ "rexec", OPT_UNSUPPORTED, 0 },
	{ "rnoatime", OPT_UNSUPPORTED, 0 },
	{ "ratime", OPT_UNSUPPORTED, 0 },
	{ "rnodiratime", OPT_UNSUPPORTED, 0 },
	{ "rdiratime", OPT_UNSUPPORTED, 0 },
	{ "rrelatime", OPT_UNSUPPORTED, 0 },
	{ "rnorelatime", OPT_UNSUPPORTED, 0 },
	{ "rstrictatime", OPT_UNSUPPORTED, 0 },
	{ "rnostrictatime", OPT_UNSUPPORTED, 0 },
	{ "rnosymfollow", OPT_UNSUPPORTED, 0 },
	{ "rsymfollow", OPT_UNSUPPORTED, 0 },
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
		case OPT_UNSUPPORTED:
			return hutch_fail(err, EOPNOTSUPP, "mount option %s is not supported", o);
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
