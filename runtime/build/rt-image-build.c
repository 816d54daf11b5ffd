// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch image build`: base image + packages + copies + steps -> a new image tagged by the
 * hash of those inputs (rt-image-build-inputs.c). The packages and steps run in a `hutch
 * sandbox --as-root` (in a child process, so its mount namespace stays its own) whose
 * overlay upper layer lives in the store, on disk; the copies are hutch's own, into that
 * same layer; afterwards images/ turns the upper directory into the new layer as it is.
 */
#include "rt.h"
#include "rt-image.h"
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"
#include "img.h"
#include "img-build.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Where the download cache is bound while the packages install (never while the steps run:
 * they could plant files there for the next build's package manager to meet). */
#define CACHE_MP "/.hutch-cache"

/* Which part of the work one sandbox run does: all of it when there is nothing to copy, else
 * the packages before the copies and the steps after them. */
enum phase { PHASE_ALL, PHASE_PACKAGES, PHASE_STEPS };

/* The shell script the sandbox runs: packages through the base's own manager, then the
 * steps, then the installed list for the image's metadata. */
static char *build_script(const struct rt_build *b, enum phase ph)
{
	bool pkgs = ph != PHASE_STEPS && b->packages.n, steps = ph != PHASE_PACKAGES;
	size_t cap = 4096;
	for (size_t i = 0; i < b->packages.n; i++)
		cap += strlen(b->packages.v[i]) + 1;
	for (size_t i = 0; i < b->steps.n; i++)
		cap += strlen(b->steps.v[i]) + 64;
	char *s = hutch_xcalloc(cap, 1);
	strcat(s, "set -e\n");
	if (pkgs) {
		strcat(s, "P='");
		for (size_t i = 0; i < b->packages.n; i++)
			strcat(strcat(s, b->packages.v[i]), " ");
		strcat(s,
		       "'\n"
		       "if command -v apt-get >/dev/null; then\n"
		       "  export DEBIAN_FRONTEND=noninteractive; C=\n"
		       /* The download cache (STORE/cache/<base>): apt checks each .deb there
			* against the signed lists before it uses it. clean empties the
			* image's own archives dir, not the cache. */
		       "  if [ -d " CACHE_MP " ]; then mkdir -p " CACHE_MP "/archives/partial\n"
		       "    C='-o Dir::Cache::Archives=" CACHE_MP "/archives/"
		       " -o APT::Keep-Downloaded-Packages=true'; fi\n"
		       "  apt-get update && apt-get $C install -y --no-install-recommends $P\n"
		       "  apt-get clean; rm -rf /var/lib/apt/lists/*\n"
		       "elif command -v apk >/dev/null; then apk add --no-cache $P\n"
		       "elif command -v dnf >/dev/null; then dnf install -y $P && dnf clean all\n"
		       "else echo 'hutch: no package manager (apt-get, apk, dnf) in the base' >&2;"
		       " exit 1; fi\n");
	}
	for (size_t i = 0; steps && i < b->steps.n; i++)
		strcat(strcat(strcat(s, "(\n"), b->steps.v[i]), "\n)\n");
	if (pkgs)
		strcat(s, "{ if command -v dpkg-query >/dev/null; then"
			  " dpkg-query -W -f '${Package}=${Version}\\n';"
			  " elif command -v apk >/dev/null; then apk info -v;"
			  " elif command -v rpm >/dev/null; then rpm -qa; fi; } "
			  ">/.hutch-out/packages\n");
	return s;
}

/*
 * The steps, and the base's package scripts, run as root inside: on the host's network they
 * reached its 127.0.0.1 services and abstract unix sockets (which belong to a network
 * namespace). So a build gets a namespace of its own by default: bridge, whose egress is the
 * internet and not the host or the private ranges (package mirrors work, through hutch's DNS
 * forwarder). Host networking only when asked for, and said every time.
 */
static int build_network(const struct rt_build *b, struct rt_sb_opts *o, struct hutch_err *err)
{
	TRY(rt_sb_parse_network(b->network ? b->network : "bridge", &o->network, err));
	o->network_set = true;
	return 0;
}

/* The build's sandbox: root in a user namespace, over the base, whose throw-away layer is
 * the build's upper dir on the store's disk, with the out dir bound for the package list. */
static int sandbox_opts(const struct rt_build *b, const char *store, const char *base,
			const char *work, const char *cache, enum phase ph, struct rt_sb_opts *o,
			struct hutch_err *err)
{
	o->as_root = true;
	o->image = hutch_xstrdup(base);
	o->store = store;
	TRY(build_network(b, o, err));
	if (rt_sb_parse_seconds(b->timeout ? b->timeout : "3600", &o->timeout) < 0)
		return hutch_fail(err, EINVAL, "--timeout %s: expected seconds", b->timeout);
	TRY(rt_sb_parse_memory(b->memory ? b->memory : "2g", &o->memory, err));
	o->binds = hutch_xcalloc(2, sizeof(*o->binds));
	o->binds[o->n_binds++] = (struct rt_sb_bind){ hutch_xasprintf("%s/out", work),
						      hutch_xstrdup("/.hutch-out"), false };
	if (cache && ph != PHASE_STEPS && (ph == PHASE_PACKAGES || !b->steps.n))
		o->binds[o->n_binds++] =
			(struct rt_sb_bind){ hutch_xstrdup(cache), hutch_xstrdup(CACHE_MP), false };
	o->env = hutch_xcalloc(b->env.n + 1, sizeof(char *));
	for (size_t i = 0; i < b->env.n; i++)
		o->env[o->n_env++] = hutch_xstrdup(b->env.v[i]);
	o->command = hutch_xcalloc(4, sizeof(char *));
	o->command[0] = hutch_xstrdup("/bin/sh");
	o->command[1] = hutch_xstrdup("-c");
	o->command[2] = build_script(b, ph);
	o->n_command = 3;
	o->has_entrypoint = true; /* the steps run as docker's RUN: not through the base's */
	return 0;
}

/* The steps read the stdin that was hashed (from its start), or /dev/null: never hutch's
 * own, whose bytes the tag would not cover. In the child, before the sandbox starts. */
static void steps_stdin(const struct rt_build_plan *p)
{
	int fd = p->stdin_fd >= 0 ? p->stdin_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (p->stdin_fd >= 0)
		lseek(fd, 0, SEEK_SET);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
}

static int wait_child(pid_t pid, const char *what, struct hutch_err *err)
{
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return hutch_fail_errno(err, errno, "build: wait");
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (code)
		return hutch_fail(err, EIO, "build: %s failed (exit status %d)", what, code);
	return 0;
}

/* In a child: the sandbox enters its own mount namespace and must not take ours along. */
static int run_sandbox(const struct rt_global *g, const struct rt_build *b,
		       const struct rt_build_plan *p, const char *store, const char *work,
		       const char *cache, enum phase ph, struct hutch_err *err)
{
	_cleanup_free_ char *upper = hutch_xasprintf("%s/upper", work);
	_cleanup_free_ char *ovl = hutch_xasprintf("%s/work", work);
	struct rt_sb_opts o;
	rt_sb_opts_init(&o);
	o.layer_upper = upper;
	o.layer_work = ovl;
	int r = sandbox_opts(b, store, p->base, work, cache, ph, &o, err);
	fflush(stdout);
	pid_t parent = getpid();
	pid_t pid = r < 0 ? 0 : fork();
	if (r >= 0 && pid < 0)
		r = hutch_fail_errno(err, errno, "build: fork");
	if (r >= 0 && pid == 0) {
		struct hutch_err e = { 0 };
		/* A build killed outright (SIGKILL, the OOM killer) takes its step along: it holds
		 * the build's locks (the store's, the tag's), which would keep an identical build
		 * waiting and prune refused for up to --timeout, for a result nobody collects. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
			_exit(RT_SB_EXIT_FAIL);
		dup2(STDERR_FILENO, STDOUT_FILENO); /* the steps' output is not the result */
		steps_stdin(p);
		r = rt_sandbox_run(g, &o, NULL, &e);
		if (r < 0)
			hutch_log(HUTCH_LOG_ERROR, "%s", e.msg);
		_exit(r < 0 ? RT_SB_EXIT_FAIL : r);
	}
	rt_sb_opts_free(&o);
	if (r < 0)
		return r;
	return wait_child(pid, "the build sandbox", err);
}

/* The copies, in a child with a mount namespace of its own: the base and the build's layer
 * mounted as one overlay (as the sandbox sees them), and the trees written into it. hutch
 * copies, not a step in the sandbox: the base may have no usable cp (distroless), and the
 * host's owners are unmapped in the build's user namespace, so a bind mount of SRC would
 * show files nobody inside may read. The overlay resolves DST as the image does (a /bin ->
 * usr/bin link, a directory of the base, copied up with its owner and mode). */
static int copy_child(struct img_store *s, const struct rt_build *b, const struct rt_build_plan *p,
		      const char *work, const struct img_idshift *ids, struct hutch_err *err)
{
	_cleanup_free_ char *root = hutch_xasprintf("%s/merged", work);
	_cleanup_free_ char *upper = hutch_xasprintf("%s/upper", work);
	_cleanup_free_ char *ovl = hutch_xasprintf("%s/work", work);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return hutch_fail_errno(err, errno, "--copy: a mount namespace");
	const struct img_layered l = { .store = s,
				       .ref = p->base,
				       .root = root,
				       .upper = upper,
				       .work = ovl,
				       .upper_uid = ids->uid,
				       .upper_gid = ids->gid };
	if (img_mount_layered(&l, err) < 0)
		return hutch_err_prefix(err, "--copy: ");
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return hutch_fail_errno(err, errno, "--copy: %s", root);
	/* Owned by the image's root: the layer is shifted to the namespace's ids afterwards. */
	for (size_t i = 0; i < p->n_copies; i++)
		if (img_copy_in(rootfd, p->copies[i].src, p->copies[i].dst, 0, 0, err) < 0)
			return hutch_err_prefix(err, "--copy %s:%s: ", p->copies[i].src,
						p->copies[i].dst);
	/* As Docker's WORKDIR: the image has the directory it says to start in. */
	_cleanup_close_ int wd =
		b->workdir ? hutch_mkdir_in_root(rootfd, b->workdir, 0755, err) : -1;
	if (b->workdir && wd < 0)
		return hutch_err_prefix(err, "--workdir %s: ", b->workdir);
	return 0;
}

/* The child's error comes back through a pipe, as one struct (it is fixed-size). */
static int run_copies(struct img_store *s, const struct rt_build *b, const struct rt_build_plan *p,
		      const char *work, const struct img_idshift *ids, struct hutch_err *err)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return hutch_fail_errno(err, errno, "build: pipe");
	fflush(stdout);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		struct hutch_err e = { 0 };
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
			_exit(2); /* as the step's: the build's locks go with the build */
		close(fds[0]);
		int r = copy_child(s, b, p, work, ids, &e);
		if (r < 0 && hutch_write_all(fds[1], &e, sizeof(e)) < 0)
			_exit(2);
		_exit(r < 0);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return hutch_fail_errno(err, errno, "build: fork");
	}
	struct hutch_err e = { 0 };
	ssize_t n = read(fds[0], &e, sizeof(e));
	close(fds[0]);
	int r = wait_child(pid, "--copy", err);
	if (r < 0 && n == (ssize_t)sizeof(e)) {
		e.msg[sizeof(e.msg) - 1] = '\0';
		return hutch_fail(err, e.code ? e.code : EIO, "%s", e.msg);
	}
	if (r < 0)
		return r;
	/* The copy-ups and the copies carry the image's ids; the steps see the namespace's. */
	_cleanup_close_ int fd = open(work, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int up =
		fd < 0 ? -1 : openat(fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (up < 0)
		return hutch_fail_errno(err, errno, "build: %s/upper", work);
	return img_shift_ids(up, ids, err);
}

/* The base's download cache, locked for this build's package install: apt takes a lock of
 * its own in it and fails at once on a held one, so builds on one base install one at a
 * time (the one that waits says so). Returns the lock's fd; *cache: malloc'd. */
static int lock_cache(struct img_store *s, const struct rt_build_plan *p,
		      const struct img_idshift *ids, char **cache, struct hutch_err *err)
{
	_cleanup_free_ char *key = hutch_xasprintf("cache:%s", p->base);
	int fd = img_lock_key(s, key, false, err);
	if (fd == -EWOULDBLOCK) {
		if (p->progress)
			fprintf(stderr,
				"build: waiting for the download cache of the base (another "
				"build on it is installing packages)\n");
		fd = img_lock_key(s, key, true, err);
	}
	if (fd >= 0 && img_cache_dir(s, p->base, ids->uid, ids->gid, cache, err) < 0) {
		close(fd);
		return -EIO;
	}
	return fd;
}

static int run_packages(const struct rt_global *g, struct img_store *s, const struct rt_build *b,
			const struct rt_build_plan *p, const char *work,
			const struct img_idshift *ids, enum phase ph, struct hutch_err *err)
{
	_cleanup_free_ char *cache = NULL;
	_cleanup_close_ int lock = lock_cache(s, p, ids, &cache, err);
	if (lock < 0)
		return lock;
	if (p->progress)
		fprintf(stderr, "build: installing %zu package(s)\n", b->packages.n);
	int r = run_sandbox(g, b, p, img_store_path(s), work, cache, ph, err);
	/* Its mount point is the install's: the steps find no trace of it. */
	_cleanup_free_ char *mp = hutch_xasprintf("%s/upper" CACHE_MP, work);
	rmdir(mp);
	return r;
}

/* Packages, then copies (and the --workdir directory), then steps: the packages in a sandbox
 * of their own when there are steps (the download cache is theirs alone), one sandbox when
 * there is only one of them and hutch writes nothing itself, none when only copies are asked
 * for (a base without a shell can take them). */
static int run_work(const struct rt_global *g, struct img_store *s, const struct rt_build *b,
		    const struct rt_build_plan *p, const char *work, const struct img_idshift *ids,
		    struct hutch_err *err)
{
	const char *store = img_store_path(s);
	bool ours = p->n_copies || b->workdir;	       /* hutch writes into the layer itself */
	if (b->network && !strcmp(b->network, "host")) /* once, however many sandboxes run */
		hutch_warn("build: --network host: the steps and the packages' scripts run as root "
			   "on the host's network, with its 127.0.0.1 services and abstract unix "
			   "sockets");
	if (b->packages.n)
		TRY(run_packages(g, s, b, p, work, ids,
				 ours || b->steps.n ? PHASE_PACKAGES : PHASE_ALL, err));
	if (ours) {
		if (p->progress && p->n_copies)
			fprintf(stderr, "build: copying %zu tree(s) in\n", p->n_copies);
		TRY(run_copies(s, b, p, work, ids, err));
	}
	if (p->progress && b->steps.n)
		fprintf(stderr, "build: running %zu step(s)\n", b->steps.n);
	if (b->steps.n || (!b->packages.n && !ours))
		TRY(run_sandbox(g, b, p, store, work, NULL, b->packages.n ? PHASE_STEPS : PHASE_ALL,
				err));
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

/* The history, in the order the work was done: packages, copies, steps. */
static char **build_history(const struct rt_build *b, const struct rt_build_plan *p)
{
	char **v = NULL;
	size_t n = 0;
	for (size_t i = 0; i < b->packages.n; i++) {
		_cleanup_free_ char *h = hutch_xasprintf("install %s", b->packages.v[i]);
		hutch_strv_push(&v, &n, h);
	}
	for (size_t i = 0; i < p->n_copies; i++) {
		_cleanup_free_ char *h =
			hutch_xasprintf("copy %s %s", p->copies[i].src, p->copies[i].dst);
		hutch_strv_push(&v, &n, h);
	}
	for (size_t i = 0; i < b->steps.n; i++)
		hutch_strv_push(&v, &n, b->steps.v[i]);
	return v;
}

static int commit(struct img_store *s, const struct rt_build *b, const struct rt_build_plan *p,
		  const char *work, const struct img_idshift *ids, char digest[IMG_DIGEST_MAX],
		  struct hutch_err *err)
{
	_cleanup_free_ char *upper = hutch_xasprintf("%s/upper", work);
	/* The bind mount point of the package list is the build's, not the image's. */
	_cleanup_free_ char *mp = hutch_xasprintf("%s/.hutch-out", upper);
	_cleanup_free_ char *cache_mp = hutch_xasprintf("%s" CACHE_MP, upper);
	_cleanup_strv_ char **labels = NULL, **history = NULL;
	char layer[IMG_DIGEST_MAX];
	rmdir(mp);
	rmdir(cache_mp);
	labels = build_labels(b, p->base, work, strrchr(p->name_tag, ':') + 1);
	history = build_history(b, p);
	const struct img_config_edit edit = { .env = b->env.n ? b->env.v : NULL,
					      .entrypoint = p->entrypoint,
					      .cmd = p->cmd,
					      .working_dir = b->workdir,
					      .user = b->user };
	const struct img_commit c = { .ids = ids,
				      .base = p->base,
				      .name_tag = p->name_tag,
				      .upper = upper,
				      .labels = labels,
				      .history = history,
				      .edit = &edit };
	return img_commit_layer(s, &c, digest, layer, err);
}

int rt_build_run(const struct rt_global *g, struct img_store *s, const struct rt_build *b,
		 const struct rt_build_plan *p, char digest[IMG_DIGEST_MAX], struct hutch_err *err)
{
	_cleanup_free_ char *tmp = NULL, *work = NULL;
	/* A temp dir of the store's own: the upper dir must be on its filesystem to be moved
	 * into place, and a build that dies leaves it for prune. */
	int lockfd = -1;
	TRY(img_tmp_create(s, "build", &tmp, &lockfd, err));
	work = hutch_xasprintf("%s/%s", img_store_path(s), tmp);
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
		r = run_work(g, s, b, p, work, &ids, err);
	if (r >= 0)
		r = commit(s, b, p, work, &ids, digest, err);
	img_tmp_remove(s, tmp, lockfd);
	return r;
}
