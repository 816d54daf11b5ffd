// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode (`hutch sandbox --isolation landlock|none`), parent side: resolving the policy's
 * paths, placeholders for denied paths that don't exist yet (and reclaiming a killed run's),
 * the cgroup, the set-up child's report, the wait with the timeout, and the report's
 * isolation object. The child's recipe is in rt-sandbox-view.c.
 */
#include "rt-host.h"
#include "hutch-ids.h"
#include "rt-process.h"
#include "rt-json.h"

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;

/* What the set-up child sends: once before execve (ready), once more if execve fails. */
struct child_msg {
	bool ready;
	struct hutch_err err;
	struct rt_sb_host h;
};

static void paths_add(struct rt_host_paths *p, char *s)
{
	p->v = hutch_xrealloc(p->v, (p->n + 2) * sizeof(char *));
	p->v[p->n++] = s;
	p->v[p->n] = NULL;
}

static void paths_free(struct rt_host_paths *p)
{
	hutch_strv_free(p->v);
	*p = (struct rt_host_paths){ 0 };
}

int rt_sb_check_host(const struct rt_sb_opts *o, struct hutch_err *err)
{
	const char *mode = o->isolation == RT_SB_ISO_NONE ? "none" : "landlock";
	const char *bad = o->image		      ? "--image"
			  : o->workspace	      ? "--workspace"
			  : o->n_binds		      ? "--bind and --ro-bind"
			  : o->hostname		      ? "--hostname"
			  : o->has_user || o->as_root ? "--user and --as-root (the caller's ids)"
			  : o->runtime && strcmp(o->runtime, "native") ? "--runtime"
								       : NULL;
	if (bad)
		return hutch_fail(err, EINVAL, "%s: not supported with --isolation %s", bad, mode);
	if (o->isolation == RT_SB_ISO_NONE &&
	    (o->n_allow_read || o->n_allow_rw || o->n_deny || o->home_dotfiles))
		return hutch_fail(err, EINVAL,
				  "--allow-read, --allow-rw, --deny and --allow-home-dotfiles: "
				  "nothing is enforced with --isolation none");
	return 0;
}

static int resolve_allowed(char *const *in, const char *flag, struct rt_host_paths *out,
			   struct hutch_err *err)
{
	for (; in && *in; in++) {
		char *real = realpath(*in, NULL);
		if (real)
			paths_add(out, real);
		else if (errno == ENOENT)
			hutch_warn("%s %s: does not exist, ignoring", flag, *in);
		else
			return hutch_fail_errno(err, errno, "%s %s", flag, *in);
	}
	return 0;
}

/* ~/.* as they are now: a dotfile made during the run is not readable. One that is a symlink
 * shows what it leads to, as an --allow-read of it would (the same denies cover it there),
 * unless the link lies in an rw tree, where a sandbox could have planted it. */
static void list_dotfiles(struct rt_host_paths *out, const struct rt_host_paths *rw)
{
	const char *home = getenv("HOME");
	_cleanup_(hutch_closedirp) DIR *d = home && *home == '/' ? opendir(home) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] != '.' || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p = hutch_xasprintf("%s/%s", strcmp(home, "/") ? home : "", e->d_name);
		_cleanup_free_ char *link = rt_host_planted_link(p, rw);
		if (link) {
			hutch_warn(
				"--allow-home-dotfiles: %s: through %s, a symlink in an rw tree, "
				"ignoring",
				p, link);
			free(p);
		} else
			paths_add(out, p);
	}
}

/* A run's registry: "dev ino path" lines for placeholders, "cgroup path" for its cgroup. A
 * killed run's placeholders are removed if still empty, and its cgroup with what is in it. */
/* The cgroup a host run of pid name makes (make_cgroup): the one its record may name. A
 * record is the run's own, but a sandbox that could write some root's host-runs could plant
 * one naming any cgroup, whose destroy would kill what is in it. */
static char *run_cgroup(const char *name)
{
	_cleanup_free_ char *base = NULL;
	struct hutch_err e = { 0 };
	int pid = 0, end = 0;
	if (sscanf(name, "%d%n", &pid, &end) != 1 || name[end] || pid <= 0)
		return NULL;
	int r = hutch_rootless() ? cg_delegated_base(&base, &e) : cg_own_common(&base, &e);
	return r < 0 ? NULL : hutch_xasprintf("%s/hutch-sb-%d", strcmp(base, "/") ? base : "", pid);
}

static void remove_listed(int fd, const char *name)
{
	_cleanup_free_ char *own_cg = run_cgroup(name);
	_cleanup_free_ char *text = NULL;
	struct hutch_err e = { 0 };
	char buf[HUTCH_FD_PATH_MAX];
	if (hutch_read_file_at(AT_FDCWD, hutch_fd_path(fd, buf), 1 << 20, &text, NULL, &e) < 0)
		return;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long dev, ino;
		int off = 0;
		struct stat st;
		struct cg *cg = NULL;
		if (hutch_str_has_prefix(l, "cgroup /") && own_cg && !strcmp(l + 7, own_cg) &&
		    cg_open(l + 7, &cg, &e) >= 0) {
			cg_destroy(cg, &e);
			cg_free(cg);
		} else if (sscanf(l, "%lu %lu %n", &dev, &ino, &off) == 2 && off > 0 &&
			   lstat(l + off, &st) == 0 && st.st_dev == dev && st.st_ino == ino &&
			   S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
			   !(st.st_mode & 077)) /* as make_placeholder makes them */
			rmdir(l + off); /* fails, as it should, when the directory is not empty */
	}
}

/* Registries whose flock is free belong to runs that died. */
static void reclaim(int dfd)
{
	_cleanup_(hutch_closedirp) DIR *d = fdopendir(dup(dfd));
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		/* O_NONBLOCK: a FIFO planted here must not hang every later run. */
		_cleanup_close_ int fd =
			openat(dfd, e->d_name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || !rt_regular(fd) || flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue;
		remove_listed(fd, e->d_name);
		unlinkat(dfd, e->d_name, 0);
	}
}

void rt_sb_host_reclaim(void)
{
	struct hutch_err e = { 0 };
	_cleanup_close_ int dfd = rt_sb_subdir("host-runs", false, &e);
	if (dfd >= 0)
		reclaim(dfd);
}

static void open_registry(struct rt_host *hs)
{
	struct hutch_err e = { 0 };
	const char *dir = rt_sb_path("host-runs");
	_cleanup_close_ int dfd = rt_sb_subdir("host-runs", true, &e);
	if (dfd < 0)
		return; /* no registry: a killed run's cgroup is swept by the next root run */
	reclaim(dfd);
	char name[32];
	snprintf(name, sizeof(name), "%d", (int)getpid());
	hs->reg_fd = openat(dfd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (hs->reg_fd >= 0 && flock(hs->reg_fd, LOCK_EX) == 0)
		hs->reg_path = hutch_xasprintf("%s/%s", dir, name);
}

static int make_placeholder(struct rt_host *hs, const char *path)
{
	struct stat st;
	if (mkdir(path, 0700) < 0 || lstat(path, &st) < 0)
		return -errno;
	if (hs->reg_path)
		dprintf(hs->reg_fd, "%lu %lu %s\n", (unsigned long)st.st_dev,
			(unsigned long)st.st_ino, path);
	else if (!hs->placeholders.n)
		hutch_warn("no $XDG_RUNTIME_DIR: a killed run's placeholders stay behind");
	paths_add(&hs->placeholders, hutch_xstrdup(path));
	hs->h->n_placeholders++;
	return 0;
}

static void remove_placeholders(struct rt_host *hs)
{
	for (size_t i = 0; i < hs->placeholders.n; i++)
		rmdir(hs->placeholders.v[i]);
	if (hs->reg_path)
		unlink(hs->reg_path);
	if (hs->reg_fd >= 0)
		close(hs->reg_fd);
}

/* A path that doesn't exist yet is held by a placeholder directory under its real parent. */
static int deny_missing(struct rt_host *hs, const char *path, struct hutch_err *err)
{
	_cleanup_free_ char *copy = hutch_xstrdup(path), *copy2 = hutch_xstrdup(path);
	_cleanup_free_ char *parent = realpath(dirname(copy), NULL);
	if (!parent)
		return rt_host_weaken(hs, err,
				      "--deny %s: its parent doesn't exist (no placeholder)", path);
	char *real = hutch_xasprintf("%s/%s", strcmp(parent, "/") ? parent : "", basename(copy2));
	int r = make_placeholder(hs, real);
	if (r < 0) {
		free(real);
		return rt_host_weaken(hs, err, "--deny %s: placeholder: %s", path, strerror(-r));
	}
	paths_add(&hs->deny, real);
	return 0;
}

/* An allowed path that resolves through a symlink in an rw tree may have been pointed by an
 * earlier sandbox at what the policy never allowed. Refused even with --best-effort: that
 * would widen the policy, not run without a guarantee. */
static int refuse_planted(char *const *in, const char *flag, const struct rt_host_paths *rw,
			  struct hutch_err *err)
{
	for (; in && *in; in++) {
		_cleanup_free_ char *link = rt_host_planted_link(*in, rw);
		if (link)
			return hutch_fail(err, ELOOP,
					  "%s %s: resolves through %s, a symlink in an --allow-rw "
					  "tree that a sandbox could have made: give its target",
					  flag, *in, link);
	}
	return 0;
}

/* A denied path is resolved now. Through a symlink that an earlier sandbox could have
 * planted, it may name a decoy while the file the policy meant sits elsewhere: strict mode
 * refuses; --best-effort denies what the link leads to, and makes no placeholder there. */
static int resolve_denied(struct rt_host *hs, struct hutch_err *err)
{
	for (char **d = hs->o->deny; d && *d; d++) {
		_cleanup_free_ char *link = rt_host_planted_link(*d, &hs->rw);
		if (link)
			TRY(rt_host_weaken(
				hs, err,
				"--deny %s: through %s, a symlink in an rw tree (a later "
				"run may be pointed elsewhere): deny its target",
				*d, link));
		char *real = realpath(*d, NULL);
		struct stat st;
		if (!real && errno == ENOENT) {
			if (!link)
				TRY(deny_missing(hs, *d, err));
			continue;
		}
		if (!real)
			return hutch_fail_errno(err, errno, "--deny %s", *d);
		paths_add(&hs->deny, real);
		/* A mount covers one name: other hard links to the file stay open. */
		if (lstat(real, &st) == 0 && !S_ISDIR(st.st_mode) && st.st_nlink > 1)
			TRY(rt_host_weaken(hs, err,
					   "--deny %s: %lu other hard links are not covered", *d,
					   (unsigned long)st.st_nlink - 1));
	}
	return 0;
}

/* mkdir -p of path's parents (0755, as hutch makes them): a placeholder needs its parent. */
static void make_parents(const char *path)
{
	_cleanup_free_ char *p = hutch_xstrdup(path);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
}

/* An allowed path inside one of hutch's own directories would open it to the command. */
static int refuse_inside(struct rt_host *hs, const char *own, const char *real,
			 struct hutch_err *err)
{
	const struct rt_host_paths *allowed[] = { &hs->rw, &hs->read };
	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
		for (size_t j = 0; j < allowed[i]->n; j++)
			if (rt_path_under(allowed[i]->v[j], real))
				return hutch_fail(err, EPERM,
						  "%s %s: inside %s, one of hutch's own "
						  "directories, which no sandbox may reach",
						  i ? "--allow-read" : "--allow-rw",
						  allowed[i]->v[j], own);
	return 0;
}

/*
 * hutch's own directories (rt_own_dirs: state, image store, seccomp cache) are denied as
 * --deny paths are, whatever the policy: the command is the caller, root's is root without
 * capabilities, and either owns them, so --allow-rw /var/cache would hand it the compiled
 * filters every later sandbox loads. One still missing beneath an rw tree gets a placeholder,
 * or the command could make it; an allowed path inside one, or one reached through a link a
 * sandbox could have planted, is refused.
 */
static int deny_own(struct rt_host *hs, struct hutch_err *err)
{
	_cleanup_strv_ char **own = rt_own_dirs();
	for (char **d = own; *d; d++) {
		_cleanup_free_ char *link = rt_host_planted_link(*d, &hs->rw);
		if (link)
			return hutch_fail(err, ELOOP,
					  "%s, one of hutch's own directories: resolves through "
					  "%s, a symlink in an --allow-rw tree that a sandbox "
					  "could have made",
					  *d, link);
		_cleanup_free_ char *real = rt_path_resolve(*d);
		struct stat st;
		TRY(refuse_inside(hs, *d, real, err));
		if (rt_host_under_any(real, &hs->deny)) /* covered already */
			continue;
		if (lstat(real, &st) == 0)
			paths_add(&hs->deny, steal_ptr(real));
		else if (rt_host_under_any(real, &hs->rw)) {
			make_parents(real);
			TRY(deny_missing(hs, real, err));
		}
	}
	return 0;
}

/* Limits where cgroups allow: root must get them, an unprivileged caller may not. */
static int make_cgroup(struct rt_host *hs, struct hutch_err *err)
{
	const struct rt_sb_opts *o = hs->o;
	_cleanup_free_ char *base = NULL, *path = NULL;
	struct hutch_err e = { 0 };
	struct cg_resources res = { .mem_limit = { o->memory > 0, (int64_t)o->memory },
				    .pids_limit = { o->pids > 0, o->pids } };
	if (o->cpus > 0) {
		res.cpu_quota = (struct cg_i64){ true, (int64_t)(o->cpus * 100000) };
		res.cpu_period = (struct cg_i64){ true, 100000 };
	}
	/* Rootless: only a cgroup delegated to the caller (docs/rootless.md). */
	int r = hutch_rootless() ? cg_delegated_base(&base, &e) : cg_own_common(&base, &e);
	if (r >= 0) {
		path = hutch_xasprintf("%s/hutch-sb-%d", strcmp(base, "/") ? base : "",
				       (int)getpid());
		r = cg_create(path, &hs->cg, &e);
		hutch_fault_point("sandbox:host-cgroup");
	}
	if (r >= 0)
		r = cg_apply(hs->cg, &res, &e);
	if (r >= 0) {
		hs->h->cgroup = true;
		if (hs->reg_path)
			dprintf(hs->reg_fd, "cgroup %s\n", path);
		return 0;
	}
	if (hs->cg) {
		struct hutch_err e2 = { 0 };
		cg_destroy(hs->cg, &e2);
		cg_free(steal_ptr(hs->cg));
	}
	if (!hutch_rootless()) {
		*err = e;
		return hutch_err_prefix(err, "sandbox: cgroup: ");
	}
	if (!o->memory && !o->pids && o->cpus <= 0)
		return 0; /* nothing to enforce: no cgroup needed */
	/* Never dropped silently: refused, or (--best-effort) said on stderr and reported. */
	return rt_host_weaken(hs, err,
			      "no memory, pids or cpu limits (they need root or a cgroup "
			      "delegated to uid %u): %s",
			      (unsigned)geteuid(), e.msg);
}

/* Before the child joins the cgroup: its first socket is filtered. Rootless there is no
 * filter (rt_sb_check refuses it unless --best-effort). */
static int deny_loopback(struct rt_host *hs, struct hutch_err *err)
{
	struct hutch_err e = { 0 };
	int r = hs->cg ? cg_deny_loopback(hs->cg, &e)
		       : hutch_fail(&e, ENOTSUP, "--deny-host-loopback: the command has no cgroup");
	if (r >= 0)
		return 0;
	if (!hutch_rootless()) {
		*err = e;
		return r;
	}
	return rt_host_weaken(hs, err,
			      "--deny-host-loopback: the host's loopback stays "
			      "reachable (its filter needs root)");
}

static int compile_seccomp(struct rt_host *hs, struct hutch_err *err)
{
	/* The command holds no capability; files it makes are on the host: no setuid bits. */
	return sc_compile_default(0, SC_DEFAULT_NO_SETID, &hs->filter, err);
}

static int prepare(struct rt_host *hs, struct hutch_err *err)
{
	const struct rt_sb_opts *o = hs->o;
	struct rt_sb_host *h = hs->h;
	char cwd[PATH_MAX];
	hs->cwd = hutch_xstrdup(o->cwd ? o->cwd : getcwd(cwd, sizeof(cwd)) ? cwd : "/");
	open_registry(hs); /* first: it reclaims what killed runs left */
	if (o->isolation == RT_SB_ISO_NONE) {
		hutch_warn("--isolation none: the command runs on the host unrestricted");
		TRY(make_cgroup(hs, err));
		return o->deny_host_loopback ? deny_loopback(hs, err) : 0;
	}
	h->ll.abi = ll_abi(&h->ll.kernel_abi);
	if (h->ll.abi < 1)
		TRY(rt_host_weaken(hs, err, "Landlock is not available (ABI %d, kernel %d)",
				   h->ll.abi, h->ll.kernel_abi));
	TRY(resolve_allowed(o->allow_read, "--allow-read", &hs->read, err));
	TRY(resolve_allowed(o->allow_rw, "--allow-rw", &hs->rw, err));
	TRY(refuse_planted(o->allow_read, "--allow-read", &hs->rw, err)); /* against all rw */
	TRY(refuse_planted(o->allow_rw, "--allow-rw", &hs->rw, err));
	if (o->home_dotfiles)
		list_dotfiles(&hs->dotfiles, &hs->rw);
	for (size_t i = 0; i < hs->dotfiles.n; i++) /* read trees: in the view, in the rules */
		paths_add(&hs->read, hutch_xstrdup(hs->dotfiles.v[i]));
	if (rt_host_network(o) != RT_SB_NET_NONE)
		hs->resolv = realpath("/etc/resolv.conf", NULL); /* may live in /run */
	TRY(resolve_denied(hs, err));
	TRY(compile_seccomp(hs, err)); /* it may make the cache: before it is denied */
	TRY(deny_own(hs, err));
	TRY(make_cgroup(hs, err));
	if (o->deny_host_loopback)
		TRY(deny_loopback(hs, err));
	return rt_host_net_prepare(hs, err); /* last: its helpers are forked now */
}

/* The command's environment: a few of the caller's variables, then --env. */
static char **command_env(const struct rt_sb_opts *o)
{
	static const char *const keep[] = { "PATH", "HOME", "USER",   "LOGNAME",
					    "TERM", "LANG", "LC_ALL", "TZ" };
	char **env = hutch_xcalloc(ARRAY_SIZE(keep) + o->n_env + 2, sizeof(char *));
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++) {
		const char *v = getenv(keep[i]);
		if (v)
			env[n++] = hutch_xasprintf("%s=%s", keep[i], v);
		else if (!strcmp(keep[i], "PATH"))
			env[n++] =
				hutch_xstrdup("PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
	}
	for (size_t i = 0; i < o->n_env; i++) {
		size_t k = strcspn(o->env[i], "=");
		for (size_t j = 0; j < n; j++)
			if (!strncmp(env[j], o->env[i], k + 1)) {
				free(env[j]);
				env[j] = env[--n];
			}
		env[n++] = hutch_xstrdup(o->env[i]);
	}
	env[n] = NULL;
	return env;
}

__attribute__((noreturn)) static void child_main(struct rt_host *hs, int go, int msg)
{
	struct child_msg m = { 0 };
	char byte;
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* hutch's death ends the command */
	if (read(go, &byte, 1) != 1)	  /* the parent died, or failed to set up the cgroup */
		_exit(RT_SB_EXIT_FAIL);
	close(go);
	int keep[] = { msg, hs->netns_fd };
	/* --report-fd and the lock are hutch's, not the command's (the bridge's namespace is
	 * closed once joined) */
	hutch_close_fds_from(3, keep, hs->netns_fd >= 0 ? 2 : 1);
	char **env = command_env(hs->o);
	if (rt_host_child_setup(hs, &m.err) < 0) {
		(void)!write(msg, &m, sizeof(m));
		_exit(RT_SB_EXIT_FAIL);
	}
	m.ready = true;
	m.h = *hs->h;
	(void)!write(msg, &m, sizeof(m));
	rt_reset_signals();
	environ = env; /* execvp searches the command's PATH */
	execvp(hs->o->command[0], hs->o->command);
	int e = errno;
	hutch_fail_errno(&m.err, e, "exec %s", hs->o->command[0]);
	m.err.status = e == ENOENT ? 127 : 126;
	m.ready = false;
	(void)!write(msg, &m, sizeof(m));
	_exit(m.err.status);
}

/* Kills what is left: the cgroup, or else every descendant (orphans come to us, the
 * subreaper), until none is left; reap also reaps them. */
static void kill_rest(struct rt_host *hs, bool reap)
{
	struct hutch_err e = { 0 };
	if (hs->cg)
		cg_signal_all(hs->cg, SIGKILL, &e);
	for (int round = 0; round < 64; round++) {
		char path[64];
		_cleanup_free_ char *text = NULL;
		snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
		if (hutch_read_file_at(AT_FDCWD, path, 1 << 16, &text, NULL, &e) < 0 || !*text)
			break;
		char *save = NULL;
		bool any = false;
		for (char *t = strtok_r(text, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
			pid_t pid = (pid_t)atoi(t);
			if (rt_host_net_helper(hs, pid)) /* hutch's own: stopped in order later */
				continue;
			any = true;
			kill(pid, SIGKILL);
			if (reap)
				waitpid(pid, NULL, 0);
		}
		if (!reap || !any)
			break;
	}
}

static void kill_tree(void *arg)
{
	kill_rest(arg, false); /* the waiter reaps the command itself */
}

/* Reads the child's report: <0 when it failed before or at execve. */
static int await_exec(int msg, struct rt_sb_host *h, struct hutch_err *err)
{
	struct child_msg m;
	ssize_t n = hutch_read_all(msg, &m, sizeof(m));
	if (n != (ssize_t)sizeof(m))
		return hutch_fail(err, EIO, "sandbox: the set-up child died");
	if (!m.ready) {
		*err = m.err;
		return -err->code;
	}
	*h = m.h;
	if (hutch_read_all(msg, &m, sizeof(m)) == (ssize_t)sizeof(m)) { /* execve failed */
		*err = m.err;
		return -err->code;
	}
	return 0;
}

static void set_result(struct rt_sb_result *r, const struct rt_waiter *w)
{
	r->timed_out = w->timed_out;
	r->stopped = rt_sb_stop_signal(w->forwarded);
	r->signal = WIFSIGNALED(w->status) ? WTERMSIG(w->status) : 0;
	r->exit_code = WIFSIGNALED(w->status) ? 128 + WTERMSIG(w->status) : WEXITSTATUS(w->status);
	if (w->timed_out)
		r->exit_code = RT_SB_EXIT_TIMEOUT;
}

static int run(struct rt_host *hs, struct rt_sb_result *res, struct hutch_err *err)
{
	int go[2] = { -1, -1 }, msg[2] = { -1, -1 };
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(msg, O_CLOEXEC) < 0)
		return hutch_fail_errno(err, errno, "sandbox: pipe");
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* the command's orphans stay ours to kill */
	pid_t pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(msg[0]);
		child_main(hs, go[0], msg[1]);
	}
	close(go[0]);
	close(msg[1]);
	_cleanup_close_ int rd = msg[0], wr = go[1];
	_cleanup_close_ int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
	int r = pid < 0 || pidfd < 0 ? hutch_fail_errno(err, errno, "sandbox: fork") : 0;
	if (r >= 0 && hs->cg)
		r = cg_enter(hs->cg, pid, err);
	if (r >= 0 && write(wr, "g", 1) != 1)
		r = hutch_fail_errno(err, errno, "sandbox: start the child");
	if (r >= 0)
		r = await_exec(rd, hs->h, err);
	struct rt_waiter w = { .pidfd = pidfd,
			       .pid = pid,
			       .master = -1,
			       .timeout_ms = (int64_t)(hs->o->timeout * 1000),
			       .grace_ms = (int64_t)(hs->o->grace * 1000),
			       .kill_tree = kill_tree,
			       .kill_arg = hs };
	if (r >= 0)
		r = rt_wait_container(&w, err);
	else if (pid > 0)
		kill(pid, SIGKILL);
	if (hs->cg && cg_get_stats(hs->cg, &res->stats, &(struct hutch_err){ 0 }) >= 0) {
		res->has_stats = true;
		res->oom_killed = res->stats.oom_kills > 0;
		res->oom_kills = (int64_t)res->stats.oom_kills; /* the command is in it itself */
		res->mem_hits = (int64_t)res->stats.mem_failcnt;
		res->pids_refused = (int64_t)res->stats.pids_max_events;
	}
	kill_rest(hs, true);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	if (r < 0)
		return r;
	set_result(res, &w);
	return 0;
}

int rt_sb_run_host(const struct rt_sb_opts *o, struct rt_sb_result *res, struct hutch_err *err)
{
	struct rt_host hs = {
		.o = o, .h = &res->host, .reg_fd = -1, .netns_fd = -1, .net = RT_SB_NET_INIT
	};
	res->runtime = "host";
	res->host.active = true;
	int r = prepare(&hs, err);
	if (r >= 0)
		r = run(&hs, res, err);
	rt_host_net_release(&hs, res); /* the command's tree is gone: final counters */
	remove_placeholders(&hs);
	if (hs.cg) {
		struct hutch_err e = { 0 };
		cg_destroy(hs.cg, &e);
		cg_free(hs.cg);
	}
	sc_filter_free(hs.filter);
	paths_free(&hs.read);
	paths_free(&hs.rw);
	paths_free(&hs.deny);
	paths_free(&hs.dotfiles);
	paths_free(&hs.placeholders);
	free(hs.cwd);
	free(hs.resolv);
	free(hs.reg_path);
	return r;
}

static void gen_rights(yajl_gen g, const char *key, uint64_t rights, char kind)
{
	const char *names[20];
	hutch_json_gen_strv(g, key, names, ll_names(rights, kind, names, ARRAY_SIZE(names)));
}

static void gen_landlock(yajl_gen g, const struct rt_sb_host *h)
{
	char summary[160];
	if (h->landlock)
		snprintf(summary, sizeof(summary), "ABI %d (kernel %d): %zu rules%s", h->ll.abi,
			 h->ll.kernel_abi, h->ll.n_rules,
			 h->tcp_rules ? "; TCP bind and connect denied, UDP not covered" : "");
	else
		snprintf(summary, sizeof(summary), "not applied");
	hutch_json_gen_kv(g, "landlock", summary);
	if (!h->landlock)
		return;
	hutch_json_gen_str(g, "landlock_rights");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "abi");
	yajl_gen_integer(g, h->ll.abi);
	hutch_json_gen_str(g, "kernel_abi");
	yajl_gen_integer(g, h->ll.kernel_abi);
	gen_rights(g, "handled_fs", h->ll.handled_fs, 'f');
	gen_rights(g, "handled_net", h->ll.handled_net, 'n');
	gen_rights(g, "scoped", h->ll.scoped, 's');
	yajl_gen_map_close(g);
}

static void gen_limits(yajl_gen g, const struct rt_sb_opts *o, const struct rt_sb_host *h)
{
	hutch_json_gen_str(g, "limits");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "memory_bytes");
	h->cgroup && o->memory ? yajl_gen_integer(g, (long long)o->memory) : yajl_gen_null(g);
	hutch_json_gen_str(g, "cpus");
	h->cgroup && o->cpus > 0 ? yajl_gen_double(g, o->cpus) : yajl_gen_null(g);
	hutch_json_gen_str(g, "pids");
	h->cgroup && o->pids ? yajl_gen_integer(g, o->pids) : yajl_gen_null(g);
	hutch_json_gen_str(g, "timeout_s");
	o->timeout > 0 ? yajl_gen_integer(g, (long long)o->timeout) : yajl_gen_null(g);
	yajl_gen_map_close(g);
}

static const char *network_enforcement(const struct rt_sb_opts *o, const struct rt_sb_host *h)
{
	if (rt_host_network(o) == RT_SB_NET_HOST)
		return "none: the host's network";
	if (rt_host_network(o) == RT_SB_NET_BRIDGE)
		return "network namespace with a veth, NAT and hutch's egress rules";
	if (h->netns)
		return "network namespace with loopback only";
	if (h->tcp_rules)
		return "Landlock TCP rules: bind and connect denied; UDP is not covered";
	return "none: not enforceable here";
}

void rt_sb_gen_host(struct yajl_gen_t *g, const struct rt_sb_opts *o, const struct rt_sb_host *h)
{
	bool none = o->isolation == RT_SB_ISO_NONE;
	hutch_json_gen_str(g, "isolation");
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "mode", none ? "none" : "landlock");
	const char *ns[3];
	size_t n = 0;
	if (h->mount_view)
		ns[n++] = "mount";
	if (h->userns)
		ns[n++] = "user";
	if (h->netns)
		ns[n++] = "network";
	hutch_json_gen_strv(g, "namespaces", ns, n);
	if (!none)
		hutch_json_gen_kv(g, "capabilities", "none");
	hutch_json_gen_str(g, "no_new_privs");
	yajl_gen_bool(g, !none && h->seccomp);
	hutch_json_gen_kv(g, "seccomp", h->seccomp ? "default" : "none");
	hutch_json_gen_str(g, "read_only_root");
	yajl_gen_bool(g, h->mount_view);
	static const char *const nets[] = { "none", "host", "bridge" };
	hutch_json_gen_kv(g, "network", nets[rt_host_network(o)]);
	hutch_json_gen_kv(g, "network_enforcement", network_enforcement(o, h));
	gen_limits(g, o, h);
	hutch_json_gen_kv(g, "pid1", "command");
	gen_landlock(g, h);
	hutch_json_gen_str(g, "policy");
	yajl_gen_map_open(g);
	hutch_json_gen_strv(g, "allow_read", (const char *const *)o->allow_read, o->n_allow_read);
	hutch_json_gen_strv(g, "allow_read_write", (const char *const *)o->allow_rw, o->n_allow_rw);
	hutch_json_gen_strv(g, "deny", (const char *const *)o->deny, o->n_deny);
	hutch_json_gen_str(g, "allow_home_dotfiles");
	yajl_gen_bool(g, o->home_dotfiles);
	hutch_json_gen_str(g, "placeholders");
	yajl_gen_integer(g, (long long)h->n_placeholders);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "weakened");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < h->n_weakened; i++)
		hutch_json_gen_str(g, h->weakened[i]);
	yajl_gen_array_close(g);
	if (none)
		hutch_json_gen_kv(g, "warning",
				  "unrestricted: no mount view, Landlock, seccomp or "
				  "capability drop; only the limits and the timeout apply");
	yajl_gen_map_close(g);
}
