// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch image build` and `status`: their flags, the checks of what the flags give, and the
 * inputs they resolve to (the base, the trees --copy names, stdin, the config argv), whose
 * hash is the tag. Build and status go through the same code, so they agree on the tag.
 */
#include "rt.h"
#include "rt-image.h"
#include "img.h"
#include "img-build.h"
#include "hutch-json.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define FLAG(kind, field) kind, NULL, offsetof(struct rt_build, field), NULL
/* Listed by the usage line of build and status, not flag by flag. */
static const struct rt_flag build_flags[] = {
	{ "from", 0, FLAG(RT_FLAG_STR, from) },
	{ "package", 0, FLAG(RT_FLAG_STRV, packages) },
	{ "copy", 0, FLAG(RT_FLAG_STRV, copies) },
	{ "run", 0, FLAG(RT_FLAG_STRV, steps) },
	{ "env", 0, FLAG(RT_FLAG_STRV, env) },
	{ "workdir", 0, FLAG(RT_FLAG_STR, workdir) },
	{ "entrypoint", 0, FLAG(RT_FLAG_STR, entrypoint) },
	{ "cmd", 0, FLAG(RT_FLAG_STR, cmd) },
	{ "user", 0, FLAG(RT_FLAG_STR, user) },
	{ "tag", 0, FLAG(RT_FLAG_STR, tag) },
	{ "network", 0, FLAG(RT_FLAG_STR, network) },
	{ "store", 0, FLAG(RT_FLAG_STR, store) },
	{ "timeout", 0, FLAG(RT_FLAG_STR, timeout) },
	{ "no-cache", 0, FLAG(RT_FLAG_BOOL, no_cache) },
	{ "memory", 0, FLAG(RT_FLAG_STR, memory) },
	{ "progress", 0, FLAG(RT_FLAG_STR, progress) },
};
const struct rt_flags rt_build_flags = RT_FLAGS(build_flags, 0);

/* An absolute path without a ".." component (an image path: resolved inside the image). */
static bool image_path_ok(const char *p)
{
	if (p[0] != '/')
		return false;
	for (const char *c = p; (c = strstr(c, "..")); c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == '/' || !c[2]))
			return false;
	return true;
}

/* SRC:DST at the last ':' (DST is an image path, which we say holds no ':'). */
static int check_copy(const char *arg, struct hutch_err *err)
{
	const char *colon = strrchr(arg, ':');
	if (!colon || colon == arg || !colon[1])
		return hutch_fail(err, EINVAL, "--copy %s: expected SRC:DST", arg);
	if (!image_path_ok(colon + 1))
		return hutch_fail(
			err, EINVAL,
			"--copy %s: DST must be an absolute path in the image, without ..", arg);
	return 0;
}

/* USER[:GROUP], names or ids: the image's /etc/passwd resolves them when it runs. */
static int check_user(const char *u, struct hutch_err *err)
{
	const char *colon = strchr(u, ':');
	bool bad = !u[0] || colon == u || (colon && (!colon[1] || strchr(colon + 1, ':')));
	for (const char *c = u; *c && !bad; c++)
		bad = (unsigned char)*c <= ' ' || *c == '/';
	return bad ? hutch_fail(err, EINVAL, "--user %s: expected USER[:GROUP]", u) : 0;
}

static int check_config(const struct rt_build *b, struct hutch_err *err)
{
	if (b->workdir && !image_path_ok(b->workdir))
		return hutch_fail(err, EINVAL,
				  "--workdir %s: expected an absolute path, without ..",
				  b->workdir);
	if (b->user)
		TRY(check_user(b->user, err));
	if (b->network && strcmp(b->network, "bridge") && strcmp(b->network, "none") &&
	    strcmp(b->network, "host"))
		return hutch_fail(err, EINVAL, "--network %s: expected bridge, none or host",
				  b->network);
	return 0;
}

int rt_build_check(int argc, char **argv, int first, const struct rt_build *b,
		   struct hutch_err *err)
{
	if (first < argc)
		return hutch_fail(err, EINVAL, "%s: unexpected argument %s", argv[0], argv[first]);
	for (size_t i = 0; i < b->env.n; i++)
		if (!strchr(b->env.v[i], '=') || b->env.v[i][0] == '=')
			return hutch_fail(err, EINVAL, "--env %s: expected KEY=VALUE", b->env.v[i]);
	if (!b->from)
		return hutch_fail(err, EINVAL, "%s: --from BASE is required", argv[0]);
	for (size_t i = 0; i < b->packages.n; i++)
		if (b->packages.v[i][0] == '-' || strpbrk(b->packages.v[i], " \t\n'\"$`\\;&|<>()"))
			return hutch_fail(err, EINVAL, "--package %s: not a package name",
					  b->packages.v[i]);
	for (size_t i = 0; i < b->copies.n; i++)
		TRY(check_copy(b->copies.v[i], err));
	return check_config(b, err);
}

static int json_argv(const char *flag, const char *value, char ***out, struct hutch_err *err)
{
	_cleanup_json_ yajl_val v = NULL;
	TRY(hutch_json_parse(value, flag, &v, err));
	if (!YAJL_IS_ARRAY(v))
		return hutch_fail(err, EINVAL, "%s %s: expected a JSON array of strings", flag,
				  value);
	char **a = hutch_xcalloc(v->u.array.len + 1, sizeof(char *));
	for (size_t i = 0; i < v->u.array.len; i++) {
		if (!YAJL_IS_STRING(v->u.array.values[i])) {
			hutch_strv_free(a);
			return hutch_fail(err, EINVAL, "%s %s: element %zu is not a string", flag,
					  value, i);
		}
		a[i] = hutch_xstrdup(v->u.array.values[i]->u.string);
	}
	*out = a;
	return 0;
}

/* As Docker's exec form (a JSON array) and shell form (anything else: sh -c STRING). */
int rt_build_parse_argv(const char *flag, const char *value, char ***out, struct hutch_err *err)
{
	const char *c = value;
	*out = NULL;
	while (*c == ' ' || *c == '\t')
		c++;
	if (*c == '[')
		return json_argv(flag, value, out, err);
	if (!*c)
		return hutch_fail(err, EINVAL, "%s: empty (give [] for none)", flag);
	char **a = hutch_xcalloc(4, sizeof(char *));
	a[0] = hutch_xstrdup("/bin/sh");
	a[1] = hutch_xstrdup("-c");
	a[2] = hutch_xstrdup(value);
	*out = a;
	return 0;
}

/* key, then each value as LEN:VALUE: no value can end early or run into the next one, so
 * different inputs never make one line (a separator like \x1f is a character JSON carries). */
static char *line_of(const char *key, char *const *v, size_t n)
{
	char *s = hutch_xstrdup(key);
	for (size_t i = 0; i < n; i++) {
		char *t = hutch_xasprintf("%s %zu:%s", s, strlen(v[i]), v[i]);
		free(s);
		s = t;
	}
	return s;
}

static char *argv_line(const char *key, char *const *v)
{
	return line_of(key, v, hutch_strv_len((const char *const *)v));
}

/* Each --copy as a line of the inputs: its tree's digest, SRC's last name (a file goes into
 * a directory DST under it) and DST. The trees are read here, before anything is made, so
 * a missing SRC or a FIFO in it fails with nothing left behind. */
static int plan_copies(const struct rt_build *b, struct rt_build_plan *p, char ***lines, size_t *n,
		       struct hutch_err *err)
{
	p->copies = hutch_xcalloc(b->copies.n + 1, sizeof(*p->copies));
	for (size_t i = 0; i < b->copies.n; i++) {
		const char *arg = b->copies.v[i], *colon = strrchr(arg, ':');
		struct rt_build_copy *c = &p->copies[p->n_copies++];
		c->src = hutch_xasprintf("%.*s", (int)(colon - arg), arg);
		c->dst = hutch_xstrdup(colon + 1);
		if (img_tree_digest(c->src, c->digest, err) < 0)
			return hutch_err_prefix(err, "--copy %s: ", arg);
		const char *last = strrchr(c->src, '/');
		char *const parts[] = { c->digest, last && last[1] ? (char *)last + 1 : c->src,
					c->dst };
		_cleanup_free_ char *l = line_of("copy", parts, ARRAY_SIZE(parts));
		hutch_strv_push(lines, n, l);
	}
	return 0;
}

/* The config the build sets, as lines of the inputs: a different config is a different tag. */
static int plan_config(const struct rt_build *b, struct rt_build_plan *p, char ***lines, size_t *n,
		       struct hutch_err *err)
{
	if (b->entrypoint &&
	    rt_build_parse_argv("--entrypoint", b->entrypoint, &p->entrypoint, err) < 0)
		return -EINVAL;
	if (b->cmd && rt_build_parse_argv("--cmd", b->cmd, &p->cmd, err) < 0)
		return -EINVAL;
	_cleanup_free_ char *wd = b->workdir ? hutch_xasprintf("WorkingDir=%s", b->workdir) : NULL;
	_cleanup_free_ char *user = b->user ? hutch_xasprintf("User=%s", b->user) : NULL;
	_cleanup_free_ char *ep = p->entrypoint ? argv_line("Entrypoint", p->entrypoint) : NULL;
	_cleanup_free_ char *cmd = p->cmd ? argv_line("Cmd", p->cmd) : NULL;
	const char *v[] = { b->env.n ? "Env" : NULL, wd, user, ep, cmd };
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) /* Env: the --env values are in config.Env */
		if (v[i])
			hutch_strv_push(lines, n, v[i]);
	return 0;
}

/* A step may read stdin (--run 'cat >/bin/x' <x), so stdin is an input: read to its end
 * first, into an unnamed file of the store's tmp/ (nothing to clean up, whatever happens),
 * and hashed. A tty, /dev/null, a closed or an empty stdin give nothing, and the steps then
 * read /dev/null: no byte reaches them that the tag does not cover. */
static int read_stdin(struct img_store *s, bool keep, struct rt_build_plan *p,
		      char digest[IMG_DIGEST_MAX], bool *given, struct hutch_err *err)
{
	struct stat st;
	*given = false;
	if (isatty(STDIN_FILENO) || fstat(STDIN_FILENO, &st) < 0)
		return 0;
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
		return 0;
	_cleanup_close_ int fd = -1;
	if (keep) {
		_cleanup_free_ char *tmp = hutch_xasprintf("%s/tmp", img_store_path(s));
		fd = open(tmp, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) /* no O_TMPFILE there */
			fd = memfd_create("hutch-build-stdin", MFD_CLOEXEC);
		if (fd < 0)
			return hutch_fail_errno(err, errno, "build: stdin: a file in %s", tmp);
	}
	uint64_t n = 0;
	if (img_digest_stream(STDIN_FILENO, fd, digest, &n, err) < 0)
		return hutch_err_prefix(err, "build: stdin: ");
	*given = n > 0;
	if (n > 0 && keep)
		p->stdin_fd = steal_fd(fd);
	return 0;
}

int rt_build_target(struct img_store *s, const struct rt_build *b, bool keep_stdin,
		    struct rt_build_plan *p, struct hutch_err *err)
{
	_cleanup_free_ char *base_name = NULL, *name = NULL, *tag = NULL;
	_cleanup_strv_ char **copies = NULL, **config = NULL;
	size_t n_copies = 0, n_config = 0;
	char hash[17], in_digest[IMG_DIGEST_MAX];
	bool given;
	memset(p, 0, sizeof(*p));
	p->stdin_fd = -1;
	TRY(img_resolve(s, b->from, &base_name, p->base, err));
	TRY(img_parse_ref(b->tag ? b->tag : base_name ? base_name : "image", &name, &tag, err));
	if (b->tag && tag)
		return hutch_fail(err, EINVAL, "--tag %s: give a name; the tag is the inputs' hash",
				  b->tag);
	TRY(plan_copies(b, p, &copies, &n_copies, err));
	TRY(plan_config(b, p, &config, &n_config, err));
	TRY(read_stdin(s, keep_stdin, p, in_digest, &given, err));
	const struct img_inputs in = {
		.base_digest = p->base,
		.stdin_digest = given ? in_digest : NULL,
		.packages = b->packages.v,
		.n_packages = b->packages.n,
		.steps = b->steps.v,
		.n_steps = b->steps.n,
		.env = b->env.v,
		.n_env = b->env.n,
		.copies = copies,
		.n_copies = n_copies,
		.config = config,
		.n_config = n_config,
	};
	img_inputs_hash(&in, hash);
	_cleanup_free_ char *shrt = img_short_name(name);
	p->name_tag = hutch_xasprintf("%s:%s", shrt, hash);
	return 0;
}

void rt_build_plan_clear(struct rt_build_plan *p)
{
	for (size_t i = 0; i < p->n_copies; i++) {
		free(p->copies[i].src);
		free(p->copies[i].dst);
	}
	free(p->copies);
	hutch_strv_free(p->entrypoint);
	hutch_strv_free(p->cmd);
	free(p->name_tag);
	if (p->stdin_fd >= 0)
		close(p->stdin_fd);
	memset(p, 0, sizeof(*p));
	p->stdin_fd = -1;
}
