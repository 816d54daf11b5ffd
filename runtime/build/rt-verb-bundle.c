// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch bundle --image NAME DIR`: an OCI bundle from a stored image, for `hutch run` or any
 * other OCI runtime. DIR/rootfs is a plain copy of the layers (whiteouts applied), so the
 * bundle needs no overlayfs and outlives the store; DIR/config.json is hutch's default spec
 * with the process taken from the image config (Env, Entrypoint/Cmd, WorkingDir, User).
 */
#include "rt.h"
#include "rt-json.h"
#include "rt-spec.h"
#include "rt-spec-build.h"
#include "rt-image.h"
#include "img.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

struct bundle_flags {
	const char *image, *store;
	struct img_limits limits; /* on DIR's filesystem; 0: import's defaults */
};

struct bundle_proc {
	char **args, **env;
	const char *cwd;
	uint32_t uid, gid;
};

/* The default process with the image's fields in place of runc's placeholders. */
static void gen_process(yajl_gen g, yajl_val def, const struct bundle_proc *p)
{
	yajl_gen_map_open(g);
	for (size_t i = 0; YAJL_IS_OBJECT(def) && i < def->u.object.len; i++) {
		const char *k = def->u.object.keys[i];
		if (!strcmp(k, "terminal")) {
			hutch_json_gen_str(g, k);
			yajl_gen_bool(g, false); /* a bundle is run from scripts as often as not */
		} else if (!strcmp(k, "user")) {
			hutch_json_gen_str(g, k);
			yajl_gen_map_open(g);
			hutch_json_gen_str(g, "uid");
			yajl_gen_integer(g, p->uid);
			hutch_json_gen_str(g, "gid");
			yajl_gen_integer(g, p->gid);
			yajl_gen_map_close(g);
		} else if (!strcmp(k, "args")) {
			hutch_json_gen_strv(g, k, (const char *const *)p->args, SIZE_MAX);
		} else if (!strcmp(k, "env")) {
			hutch_json_gen_strv(g, k, (const char *const *)p->env, SIZE_MAX);
		} else if (!strcmp(k, "cwd")) {
			hutch_json_gen_kv(g, k, p->cwd);
		} else {
			hutch_json_gen_str(g, k);
			hutch_json_gen_value(g, def->u.object.values[i]);
		}
	}
	yajl_gen_map_close(g);
}

static char *config_json(const struct bundle_proc *p, struct hutch_err *err)
{
	_cleanup_free_ char *text = rt_spec_default_json(geteuid() != 0, NULL);
	_cleanup_json_ yajl_val def = NULL;
	if (!text || hutch_json_parse(text, "default spec", &def, err) < 0)
		return NULL;
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "\t");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < def->u.object.len; i++) {
		hutch_json_gen_str(g, def->u.object.keys[i]);
		if (!strcmp(def->u.object.keys[i], "process"))
			gen_process(g, def->u.object.values[i], p);
		else
			hutch_json_gen_value(g, def->u.object.values[i]);
	}
	yajl_gen_map_close(g);
	return hutch_json_gen_finish(g, NULL);
}

static void push(char ***v, size_t *n, const char *s)
{
	*v = hutch_xrealloc(*v, (*n + 2) * sizeof(char *));
	(*v)[(*n)++] = hutch_xstrdup(s);
	(*v)[*n] = NULL;
}

static bool has_key(char *const *env, const char *kv)
{
	size_t len = strcspn(kv, "=");
	for (; env && *env; env++)
		if (!strncmp(*env, kv, len) && (*env)[len] == '=')
			return true;
	return false;
}

/* Entrypoint + Cmd (runc's "sh" when the image names neither, as for a rootfs tar), and the
 * image's Env with the default PATH and TERM where it does not set them. */
static void fill_process(const struct img_run_config *c, struct bundle_proc *p)
{
	static const char *const def_env[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"
	};
	size_t na = 0, ne = 0;
	for (char **a = c->entrypoint; a && *a; a++)
		push(&p->args, &na, *a);
	for (char **a = c->cmd; a && *a; a++)
		push(&p->args, &na, *a);
	if (!na)
		push(&p->args, &na, "sh");
	for (char **e = c->env; e && *e; e++)
		push(&p->env, &ne, *e);
	for (size_t i = 0; i < ARRAY_SIZE(def_env); i++)
		if (!has_key(c->env, def_env[i]))
			push(&p->env, &ne, def_env[i]);
	p->cwd = c->working_dir ? c->working_dir : "/";
}

/* DIR must be missing (it is made, 0700) or an empty directory. *made says which. */
static int prepare_dir(const char *dir, bool *made, struct hutch_err *err)
{
	*made = mkdir(dir, 0700) == 0;
	if (*made)
		return 0;
	if (errno != EEXIST)
		return hutch_fail_errno(err, errno, "bundle: DIR %s", dir);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "bundle: DIR %s", dir);
	_cleanup_(hutch_closedirp) DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return hutch_fail_errno(err, errno, "bundle: DIR %s", dir);
	}
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			return hutch_fail(err, EEXIST, "bundle: DIR %s: exists and is not empty",
					  dir);
	return 0;
}

/*
 * The rootfs is the image's, setuid-root files and all: they are for the runtime that runs
 * the bundle, not for the host's other users, who would run them as root through DIR/rootfs.
 * So DIR is the caller's and nobody else's: one another user owns is refused (they could
 * open it up again), and group and other lose their access. A runtime that maps the
 * container's root to another host uid needs that uid given search access (containerd
 * chgrps its bundles to it, 0710).
 */
static int guard_dir(int dfd, const char *dir, struct hutch_err *err)
{
	struct stat st;
	if (fstat(dfd, &st) < 0)
		return hutch_fail_errno(err, errno, "bundle: DIR %s", dir);
	if (st.st_uid != geteuid())
		return hutch_fail(err, EPERM,
				  "bundle: DIR %s: owned by uid %u, not by the caller (%u): its "
				  "owner could reach the image's setuid files; let hutch make DIR",
				  dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if (!(st.st_mode & 077))
		return 0;
	if (fchmod(dfd, st.st_mode & 0700) < 0)
		return hutch_fail_errno(err, errno, "bundle: DIR %s: chmod", dir);
	hutch_warn("bundle: DIR %s was %04o, now %04o: the image's files (setuid ones too) "
		   "are for the runtime, not for other users",
		   dir, (unsigned)(st.st_mode & 07777), (unsigned)(st.st_mode & 0700));
	return 0;
}

static int write_bundle(struct img_store *s, const char *image, const struct img_limits *lim,
			int dfd, struct hutch_err *err)
{
	struct img_run_config c;
	struct bundle_proc p = { 0 };
	size_t skipped = 0;
	int r = img_run_config(s, image, &c, err);
	if (r < 0)
		return hutch_err_prefix(err, "--image %s: ", image);
	r = mkdirat(dfd, "rootfs", 0755) < 0 ? hutch_fail_errno(err, errno, "bundle: rootfs") : 0;
	_cleanup_close_ int rootfd = r < 0 ? -1 : openat(dfd, "rootfs", O_RDONLY | O_DIRECTORY);
	if (r >= 0 && rootfd < 0)
		r = hutch_fail_errno(err, errno, "bundle: rootfs");
	/* No device nodes: a runtime makes the container's /dev, and an image's 0666 node for
	 * the host's disk is no file to leave lying in a directory on the host. */
	if (r >= 0 && (r = img_copy_rootfs(s, image, rootfd, lim, &skipped, err)) < 0)
		hutch_err_prefix(err, "--image %s: ", image);
	if (r >= 0 && (r = img_resolve_user(rootfd, c.user, &p.uid, &p.gid, err)) < 0)
		hutch_err_prefix(err, "--image %s: config.User: ", image);
	if (r >= 0) {
		fill_process(&c, &p);
		_cleanup_free_ char *json = config_json(&p, err);
		r = json ? hutch_write_atomic_at(dfd, "config.json", json, strlen(json), 0644, err)
			 : -err->code;
	}
	if (skipped)
		hutch_warn("bundle: %zu device node(s) of the image not created (a bundle holds "
			   "none; the runtime makes /dev), ignoring",
			   skipped);
	hutch_strv_free(p.args);
	hutch_strv_free(p.env);
	img_run_config_clear(&c);
	return r;
}

static RT_VERB_RUN(verb_bundle)
{
	const struct bundle_flags *f = flags;
	_cleanup_(img_store_freep) struct img_store *s = NULL;
	const char *image = f->image;
	(void)g;
	if (!image || !*image)
		return hutch_fail(err, EINVAL, "bundle: --image NAME is required");
	if (argc - first != 1)
		return hutch_fail(err, EINVAL, "bundle: expected exactly one DIR");
	const char *dir = argv[first];
	TRY(img_store_open(img_store_default(f->store), false, false, &s, err));
	bool made = false;
	TRY(prepare_dir(dir, &made, err));
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return hutch_fail_errno(err, errno, "bundle: DIR %s", dir);
	int r = guard_dir(dfd, dir, err);
	if (r < 0 && !made)
		return r; /* nothing written, and a DIR that is not ours is not ours to clean */
	if (r >= 0)
		r = write_bundle(s, image, &f->limits, dfd, err);
	if (r < 0 && made) { /* nothing half-made is left behind */
		img_remove_tree_at(AT_FDCWD, dir);
	} else if (r < 0) {
		img_remove_tree_at(dfd, "rootfs");
		unlinkat(dfd, "config.json", 0);
	}
	return r;
}

static const struct rt_flag bundle_flags[] = {
	{ "image", 'i', RT_FLAG_STR, "the stored image NAME[:TAG] to make the bundle from",
	  offsetof(struct bundle_flags, image), NULL },
	{ "store", 0, RT_FLAG_STR, "image store (default $HUTCH_STORE or /var/lib/hutch)",
	  offsetof(struct bundle_flags, store), NULL },
	{ "max-size", 0, RT_FLAG_FN,
	  "disk DIR/rootfs may take (default: half the free space of DIR's filesystem, at most "
	  "64g; 0: no limit)",
	  offsetof(struct bundle_flags, limits.max_size), rt_image_set_max_size },
	{ "max-entries", 0, RT_FLAG_FN,
	  "entries DIR/rootfs may hold (default 2000000; 0: no limit)",
	  offsetof(struct bundle_flags, limits.max_entries), rt_image_set_max_entries },
};

const struct rt_verb rt_bundle_verb = {
	.name = "bundle",
	.summary = "write an OCI bundle (config.json + rootfs) from a stored image",
	.usage = "--image NAME[:TAG] [--store DIR] [--max-size SIZE] [--max-entries N] DIR",
	.flags = RT_FLAGS(bundle_flags, 0),
	.flags_size = sizeof(struct bundle_flags),
	.run = verb_bundle,
};
