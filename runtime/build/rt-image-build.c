// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch image build`: base image + packages + steps -> a new image tagged by the hash of
 * those inputs. The work runs in a `hutch sandbox --as-root` (in a child process, so its
 * mount namespace stays its own) whose overlay upper layer lives in the store, on disk;
 * afterwards images/ turns that upper directory into the new layer without copying it.
 */
#include "rt.h"
#include "rt-image.h"
#include "rt-sandbox.h"
#include "img.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define FLAG(kind, field) kind, NULL, offsetof(struct rt_build, field), NULL
/* Listed by the usage line of build and status, not flag by flag. */
static const struct rt_flag build_flags[] = {
	{ "from", 0, FLAG(RT_FLAG_STR, from) },
	{ "package", 0, FLAG(RT_FLAG_STRV, packages) },
	{ "run", 0, FLAG(RT_FLAG_STRV, steps) },
	{ "env", 0, FLAG(RT_FLAG_STRV, env) },
	{ "tag", 0, FLAG(RT_FLAG_STR, tag) },
	{ "network", 0, FLAG(RT_FLAG_STR, network) },
	{ "store", 0, FLAG(RT_FLAG_STR, store) },
	{ "timeout", 0, FLAG(RT_FLAG_STR, timeout) },
	{ "no-cache", 0, FLAG(RT_FLAG_BOOL, no_cache) },
	{ "memory", 0, FLAG(RT_FLAG_STR, memory) },
};
const struct rt_flags rt_build_flags = RT_FLAGS(build_flags, 0);

int rt_build_check(int argc, char **argv, int first, const struct rt_build *b,
		   struct hutch_err *err)
{
	if (first < argc)
		return hutch_fail(err, EINVAL, "%s: unexpected argument %s", argv[0], argv[first]);
	for (size_t i = 0; i < b->env.n; i++)
		if (!strchr(b->env.v[i], '='))
			return hutch_fail(err, EINVAL, "--env %s: expected KEY=VALUE", b->env.v[i]);
	if (!b->from)
		return hutch_fail(err, EINVAL, "%s: --from BASE is required", argv[0]);
	for (size_t i = 0; i < b->packages.n; i++)
		if (b->packages.v[i][0] == '-' || strpbrk(b->packages.v[i], " \t\n'\"$`\\;&|<>()"))
			return hutch_fail(err, EINVAL, "--package %s: not a package name",
					  b->packages.v[i]);
	return 0;
}

/* NAME:<inputs hash>, NAME being --tag's name or the base's. */
int rt_build_target(struct img_store *s, const struct rt_build *b, char **name_tag,
		    char base[IMG_DIGEST_MAX], struct hutch_err *err)
{
	_cleanup_free_ char *base_name = NULL, *name = NULL, *tag = NULL;
	char hash[17];
	TRY(img_resolve(s, b->from, &base_name, base, err));
	TRY(img_parse_ref(b->tag ? b->tag : base_name ? base_name : "image", &name, &tag, err));
	if (b->tag && tag)
		return hutch_fail(err, EINVAL, "--tag %s: give a name; the tag is the inputs' hash",
				  b->tag);
	img_inputs_hash(base, b->packages.v, b->packages.n, b->steps.v, b->steps.n, b->env.v,
			b->env.n, hash);
	*name_tag = hutch_xasprintf("%s:%s", name, hash);
	return 0;
}

/* The shell script the sandbox runs: packages through the base's own manager, then the
 * steps, then the installed list for the image's metadata. */
static char *build_script(const struct rt_build *b)
{
	size_t cap = 4096;
	for (size_t i = 0; i < b->packages.n; i++)
		cap += strlen(b->packages.v[i]) + 1;
	for (size_t i = 0; i < b->steps.n; i++)
		cap += strlen(b->steps.v[i]) + 64;
	char *s = hutch_xcalloc(cap, 1);
	strcat(s, "set -e\n");
	if (b->packages.n) {
		strcat(s, "P='");
		for (size_t i = 0; i < b->packages.n; i++)
			strcat(strcat(s, b->packages.v[i]), " ");
		strcat(s,
		       "'\n"
		       "if command -v apt-get >/dev/null; then\n"
		       "  export DEBIAN_FRONTEND=noninteractive\n"
		       "  apt-get update && apt-get install -y --no-install-recommends $P\n"
		       "  apt-get clean; rm -rf /var/lib/apt/lists/*\n"
		       "elif command -v apk >/dev/null; then apk add --no-cache $P\n"
		       "elif command -v dnf >/dev/null; then dnf install -y $P && dnf clean all\n"
		       "else echo 'hutch: no package manager (apt-get, apk, dnf) in the base' >&2;"
		       " exit 1; fi\n");
	}
	for (size_t i = 0; i < b->steps.n; i++)
		strcat(strcat(strcat(s, "(\n"), b->steps.v[i]), "\n)\n");
	if (b->packages.n)
		strcat(s, "{ if command -v dpkg-query >/dev/null; then"
			  " dpkg-query -W -f '${Package}=${Version}\\n';"
			  " elif command -v apk >/dev/null; then apk info -v;"
			  " elif command -v rpm >/dev/null; then rpm -qa; fi; } "
			  ">/.hutch-out/packages\n");
	return s;
}

/* The build's sandbox: root in a user namespace, over the base, whose throw-away layer is
 * the build's upper dir on the store's disk, with the out dir bound for the package list. */
static int sandbox_opts(const struct rt_build *b, const char *store, const char *base,
			const char *work, struct rt_sb_opts *o, struct hutch_err *err)
{
	o->as_root = true;
	o->image = hutch_xstrdup(base);
	o->store = store;
	TRY(rt_sb_parse_network(b->network ? b->network : "host", &o->network, err));
	o->network_set = true;
	if (rt_sb_parse_seconds(b->timeout ? b->timeout : "3600", &o->timeout) < 0)
		return hutch_fail(err, EINVAL, "--timeout %s: expected seconds", b->timeout);
	TRY(rt_sb_parse_memory(b->memory ? b->memory : "2g", &o->memory, err));
	o->binds = hutch_xcalloc(1, sizeof(*o->binds));
	o->binds[o->n_binds++] = (struct rt_sb_bind){ hutch_xasprintf("%s/out", work),
						      hutch_xstrdup("/.hutch-out"), false };
	o->env = hutch_xcalloc(b->env.n + 1, sizeof(char *));
	for (size_t i = 0; i < b->env.n; i++)
		o->env[o->n_env++] = hutch_xstrdup(b->env.v[i]);
	o->command = hutch_xcalloc(4, sizeof(char *));
	o->command[0] = hutch_xstrdup("/bin/sh");
	o->command[1] = hutch_xstrdup("-c");
	o->command[2] = build_script(b);
	o->n_command = 3;
	o->has_entrypoint = true; /* the steps run as docker's RUN: not through the base's */
	return 0;
}

/* In a child: the sandbox enters its own mount namespace and must not take ours along. */
static int run_sandbox(const struct rt_global *g, const struct rt_build *b, const char *store,
		       const char *base, const char *work, struct hutch_err *err)
{
	_cleanup_free_ char *upper = hutch_xasprintf("%s/upper", work);
	_cleanup_free_ char *ovl = hutch_xasprintf("%s/work", work);
	struct rt_sb_opts o;
	rt_sb_opts_init(&o);
	o.layer_upper = upper;
	o.layer_work = ovl;
	int r = sandbox_opts(b, store, base, work, &o, err);
	fflush(stdout);
	pid_t pid = r < 0 ? 0 : fork();
	if (r >= 0 && pid < 0)
		r = hutch_fail_errno(err, errno, "build: fork");
	if (r >= 0 && pid == 0) {
		struct hutch_err e = { 0 };
		dup2(STDERR_FILENO, STDOUT_FILENO); /* the steps' output is not the result */
		r = rt_sandbox_run(g, &o, &e);
		if (r < 0)
			hutch_log(HUTCH_LOG_ERROR, "%s", e.msg);
		_exit(r < 0 ? RT_SB_EXIT_FAIL : r);
	}
	rt_sb_opts_free(&o);
	if (r < 0)
		return r;
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return hutch_fail_errno(err, errno, "build: wait");
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (code)
		return hutch_fail(err, EIO, "build: the build sandbox failed (exit status %d)",
				  code);
	return 0;
}

static char **build_labels(const struct rt_build *b, const char *base, const char *work,
			   const char *hash)
{
	_cleanup_free_ char *pkgs = NULL, *requested = NULL;
	_cleanup_free_ char *path = hutch_xasprintf("%s/out/packages", work);
	struct hutch_err e = { 0 };
	size_t len = 1, n = 0;
	char **v = NULL;
	for (size_t i = 0; i < b->packages.n; i++)
		len += strlen(b->packages.v[i]) + 1;
	requested = hutch_xcalloc(len, 1);
	for (size_t i = 0; i < b->packages.n; i++)
		strcat(strcat(requested, i ? " " : ""), b->packages.v[i]);
	_cleanup_free_ char *l1 = hutch_xasprintf("org.hutch.build.base=%s", base);
	_cleanup_free_ char *l2 = hutch_xasprintf("org.hutch.build.inputs=%s", hash);
	_cleanup_free_ char *l3 = hutch_xasprintf("org.hutch.build.requested=%s", requested);
	hutch_strv_push(&v, &n, l1);
	hutch_strv_push(&v, &n, l2);
	hutch_strv_push(&v, &n, l3);
	if (hutch_read_file_at(AT_FDCWD, path, 16 << 20, &pkgs, NULL, &e) >= 0) {
		_cleanup_free_ char *l4 = hutch_xasprintf("org.hutch.build.packages=%s", pkgs);
		hutch_strv_push(&v, &n, l4);
	}
	return v;
}

int rt_build_run(const struct rt_global *g, struct img_store *s, const struct rt_build *b,
		 const char *name_tag, const char *base, char digest[IMG_DIGEST_MAX],
		 struct hutch_err *err)
{
	_cleanup_free_ char *tmp = NULL, *work = NULL, *upper = NULL;
	_cleanup_strv_ char **labels = NULL, **history = NULL;
	char layer[IMG_DIGEST_MAX];
	const char *hash = strrchr(name_tag, ':') + 1;
	/* A temp dir of the store's own: the upper dir must be on its filesystem to be moved
	 * into place, and a build that dies leaves it for prune. */
	int lockfd = -1;
	TRY(img_tmp_create(s, "build", &tmp, &lockfd, err));
	work = hutch_xasprintf("%s/%s", img_store_path(s), tmp);
	upper = hutch_xasprintf("%s/upper", work);
	const char *sub[] = { "upper", "work", "out" };
	/* The build runs as root in a user namespace (--as-root): its root is the start of the
	 * subordinate ranges, who must own the package list's directory, and whose ids the
	 * layer's files then carry until the commit takes them back. */
	struct img_idshift ids = { rt_sb_sub_ids("/etc/subuid"), rt_sb_sub_ids("/etc/subgid"),
				   RT_SB_ID_SPAN };
	int r = 0;
	for (size_t i = 0; i < ARRAY_SIZE(sub) && r >= 0; i++) {
		_cleanup_free_ char *d = hutch_xasprintf("%s/%s", work, sub[i]);
		if (mkdir(d, 0755) < 0)
			r = hutch_fail_errno(err, errno, "build: mkdir %s", d);
		else if (!strcmp(sub[i], "out") && chown(d, ids.uid, ids.gid) < 0)
			r = hutch_fail_errno(err, errno, "build: chown %s", d);
	}
	if (r >= 0)
		r = run_sandbox(g, b, img_store_path(s), base, work, err);
	if (r >= 0) {
		/* The bind mount point of the package list is the build's, not the image's. */
		_cleanup_free_ char *mp = hutch_xasprintf("%s/.hutch-out", upper);
		rmdir(mp);
		labels = build_labels(b, base, work, hash);
		size_t n = 0;
		for (size_t i = 0; i < b->packages.n; i++) {
			_cleanup_free_ char *h = hutch_xasprintf("install %s", b->packages.v[i]);
			hutch_strv_push(&history, &n, h);
		}
		for (size_t i = 0; i < b->steps.n; i++)
			hutch_strv_push(&history, &n, b->steps.v[i]);
		struct img_commit c = { .ids = &ids,
					.base = base,
					.name_tag = name_tag,
					.upper = upper,
					.labels = labels,
					.history = history };
		r = img_commit_layer(s, &c, digest, layer, err);
	}
	img_tmp_remove(s, tmp, lockfd);
	return r;
}
