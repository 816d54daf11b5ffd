// SPDX-License-Identifier: Apache-2.0
/*
 * What an image says about running it: the "config" object of its config blob (Env,
 * Entrypoint, Cmd, WorkingDir, User), and the user resolved to numeric ids through the
 * image's own /etc/passwd and /etc/group, read inside the rootfs (RESOLVE_IN_ROOT) so that
 * a hostile symlink there cannot make hutch read a host file.
 */
#include "img-internal.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define ID_FILE_MAX (4U << 20) /* an /etc/passwd larger than this is not one to trust */

void img_run_config_clear(struct img_run_config *c)
{
	hutch_strv_free(c->env);
	hutch_strv_free(c->entrypoint);
	hutch_strv_free(c->cmd);
	free(c->working_dir);
	free(c->user);
	memset(c, 0, sizeof(*c));
}

/* config.KEY: absent or null -> NULL; an array of strings -> strv; anything else fails. */
static int get_strv(yajl_val cfg, const char *key, char ***out, struct hutch_err *err)
{
	yajl_val v = hutch_json_get(cfg, key);
	*out = NULL;
	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_ARRAY(v))
		return hutch_fail(err, EINVAL, "image config: config.%s: expected an array", key);
	char **s = hutch_xcalloc(v->u.array.len + 1, sizeof(char *));
	for (size_t i = 0; i < v->u.array.len; i++) {
		yajl_val e = v->u.array.values[i];
		if (!YAJL_IS_STRING(e)) {
			hutch_strv_free(s);
			return hutch_fail(err, EINVAL,
					  "image config: config.%s[%zu]: expected a string", key,
					  i);
		}
		s[i] = hutch_xstrdup(e->u.string);
	}
	*out = s;
	return 0;
}

int img_run_config_parse(const char *config_json, struct img_run_config *out, struct hutch_err *err)
{
	_cleanup_json_ yajl_val root = NULL;
	memset(out, 0, sizeof(*out));
	TRY(hutch_json_parse(config_json, "image config", &root, err));
	yajl_val cfg = hutch_json_get(root, "config"); /* optional in the OCI image spec */
	int r = get_strv(cfg, "Env", &out->env, err);
	if (r >= 0)
		r = get_strv(cfg, "Entrypoint", &out->entrypoint, err);
	if (r >= 0)
		r = get_strv(cfg, "Cmd", &out->cmd, err);
	if (r < 0) {
		img_run_config_clear(out);
		return r;
	}
	const char *wd = img_json_str(cfg, "WorkingDir");
	const char *user = img_json_str(cfg, "User");
	out->working_dir = wd && *wd ? hutch_xstrdup(wd) : NULL;
	out->user = user && *user ? hutch_xstrdup(user) : NULL;
	return 0;
}

int img_run_config(struct img_store *s, const char *ref, struct img_run_config *out,
		   struct hutch_err *err)
{
	struct img_info i;
	TRY(img_inspect(s, ref, &i, err));
	int r = img_run_config_parse(i.config, out, err);
	img_info_clear(&i);
	return r;
}

static bool parse_id(const char *s, uint32_t *out)
{
	uint64_t v;
	if (!*s || hutch_parse_u64(s, &v) < 0 || v > UINT32_MAX - 1)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* The line of an /etc/passwd or /etc/group whose first field is name; *id gets field 3 and
 * *gid (passwd only, may be NULL) field 4. 1 when found, 0 when not. */
static int lookup(int rootfd, const char *file, const char *name, uint32_t *id, uint32_t *gid,
		  struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = hutch_open_in_root(rootfd, file, O_RDONLY | O_NOFOLLOW, 0, err);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return hutch_err_prefix(err, "image %s: ", file);
	struct stat st;
	char fdp[HUTCH_FD_PATH_MAX];
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) /* a FIFO would block the read */
		return hutch_fail(err, EINVAL, "image %s: not a regular file", file);
	TRY(hutch_read_file_at(AT_FDCWD, hutch_fd_path(fd, fdp), ID_FILE_MAX, &text, NULL, err));
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *f[4] = { 0 };
		char *p = l;
		for (size_t k = 0; k < ARRAY_SIZE(f) && p; k++)
			f[k] = strsep(&p, ":");
		if (!f[0] || strcmp(f[0], name) || !f[2])
			continue;
		if (!parse_id(f[2], id) || (gid && (!f[3] || !parse_id(f[3], gid))))
			return hutch_fail(err, EINVAL, "image %s: bad entry for %s", file, name);
		return 1;
	}
	return 0;
}

int img_resolve_user(int rootfd, const char *user, uint32_t *uid, uint32_t *gid,
		     struct hutch_err *err)
{
	_cleanup_free_ char *u = hutch_xstrdup(user ? user : "");
	char *g = strchr(u, ':');
	uint32_t pw_gid = 0; /* a numeric user without a group runs with gid 0, as in runc */
	if (g)
		*g++ = '\0';
	*uid = 0;
	*gid = 0;
	if (!*u)
		return g ? hutch_fail(err, EINVAL, "user %s: no user before ':'", user) : 0;
	if (!parse_id(u, uid)) {
		int r = lookup(rootfd, "/etc/passwd", u, uid, &pw_gid, err);
		if (r < 0)
			return r;
		if (r == 0)
			return hutch_fail(err, ENOENT, "user %s: not in the image's /etc/passwd",
					  u);
	}
	if (!g) {
		*gid = pw_gid;
		return 0;
	}
	if (parse_id(g, gid))
		return 0;
	int r = lookup(rootfd, "/etc/group", g, gid, NULL, err);
	if (r < 0)
		return r;
	if (r == 0)
		return hutch_fail(err, ENOENT, "group %s: not in the image's /etc/group", g);
	return 0;
}
