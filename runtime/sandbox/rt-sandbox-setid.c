// SPDX-License-Identifier: Apache-2.0
/*
 * Setuid and setgid bits and file capabilities that a sandbox left on the host. --as-root and
 * --host-root may set them (dpkg sets them on what it installs into the throw-away layer);
 * any sandbox may change the content of a file that already has them without losing them (a
 * write through a shared mapping) or its permission bits (a POSIX ACL). So what is setid in
 * the workspace and the rw binds and was changed during the run is cleared by a walk
 * (base/base-setid.c) when the run ends, and after each `sandbox exec` of a named sandbox.
 * The same walk removes the device nodes made there (--host-root may mknod): nodev inside is
 * the sandbox's mount, not the host's. See docs/sandbox-ids.md.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"
#include "hutch-path.h"
#include "hutch-sys.h"
#include "hutch-setid.h"
#include "rt-json.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define EXEC_COUNTS "setid-cleared" /* in a named sandbox's state dir: what execs cleared */

static void add_path(struct rt_sb_setid *s, const char *flag, const char *path)
{
	s->paths = hutch_xrealloc(s->paths, (s->n + 1) * sizeof(*s->paths));
	s->paths[s->n++] = (struct rt_sb_setid_path){ hutch_xstrdup(flag), hutch_xstrdup(path) };
}

/* Without root inside the seccomp filter refuses every new bit (seccomp_extras in
 * rt-sandbox-plan.c), but not a changed file that had one: every run with a workspace or an
 * rw bind is walked. Host mode has neither. */
void rt_sb_setid_plan(const struct rt_sb_opts *o, struct rt_sb_setid *s)
{
	*s = (struct rt_sb_setid){ 0 };
	hutch_setid_now(&s->since); /* before anything of the sandbox exists */
	if (o->isolation != RT_SB_ISO_NAMESPACES)
		return;
	if (o->workspace)
		add_path(s, "--workspace", o->workspace);
	for (size_t i = 0; i < o->n_binds; i++)
		if (!o->binds[i].ro)
			add_path(s, "--bind", o->binds[i].src);
}

static void take_resolved(struct rt_sb_setid_path *sp, const struct rt_sb_src *src)
{
	struct stat st;
	if (src->fd < 0 || !src->real || src->real[0] != '/' || fstat(src->fd, &st) < 0)
		return; /* walked as typed, from the cwd: as good as it gets */
	free(sp->path);
	sp->path = hutch_xstrdup(src->real);
	sp->dev = st.st_dev;
	sp->ino = st.st_ino;
	sp->resolved = true;
	sp->fd = fcntl(src->fd, F_DUPFD_CLOEXEC, 3);
	sp->held = sp->fd >= 0;
}

void rt_sb_setid_resolved(const struct rt_sb_opts *o, const struct rt_sb_plan *p,
			  struct rt_sb_setid *s)
{
	size_t k = 0;
	if (!s->n)
		return;
	if (o->workspace)
		take_resolved(&s->paths[k++], &p->ws);
	for (size_t i = 0; i < o->n_binds && i < p->n_srcs && k < s->n; i++)
		if (!o->binds[i].ro)
			take_resolved(&s->paths[k++], &p->srcs[i]);
}

void rt_sb_setid_free(struct rt_sb_setid *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->paths[i].flag);
		free(s->paths[i].path);
		if (s->paths[i].held)
			close(s->paths[i].fd);
	}
	free(s->paths);
	*s = (struct rt_sb_setid){ 0 };
}

/*
 * The run's own hutch walks what it resolved at the start, through the fd it has held since:
 * the directory the sandbox wrote to, wherever it was renamed meanwhile. An exec's walk (another
 * process) opens the path as it was resolved again, following no symlink at all (it has none:
 * it is where the caller's path led), and walks it only if it is still the directory or file
 * the sandbox was given: one swapped in since is not ours to walk. A path never resolved (the
 * run failed before) is taken as given.
 */
static int open_path(const struct rt_sb_setid_path *p, struct stat *st, struct hutch_err *err)
{
	if (p->held) {
		char link[HUTCH_FD_PATH_MAX];
		/* Only a directory or a regular file is opened: a bound FIFO or device is not
		 * walked, and an open of a device may do something. */
		int fd = fstat(p->fd, st) < 0 ? -1
			 : S_ISDIR(st->st_mode)
				 ? openat(p->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
			 : S_ISREG(st->st_mode) ? open(hutch_fd_path(p->fd, link),
						       O_RDONLY | O_NONBLOCK | O_CLOEXEC)
						: fcntl(p->fd, F_DUPFD_CLOEXEC, 3);
		return fd >= 0 ? fd : hutch_fail_errno(err, errno, "%s %s", p->flag, p->path);
	}
	if (!p->resolved && !strcmp(p->flag, "--workspace"))
		return hutch_chase_type(p->flag, p->path, HUTCH_CHASE_NOFOLLOW, S_IFDIR, st, err);
	if (!p->resolved) {
		int fd = hutch_chase(p->flag, p->path, 0, NULL, err);
		if (fd >= 0 && fstat(fd, st) < 0) {
			close(fd);
			return hutch_fail_errno(err, errno, "%s %s", p->flag, p->path);
		}
		return fd;
	}
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = hutch_sys->openat2(AT_FDCWD, p->path, &how, sizeof(how));
	if (fd < 0)
		return hutch_fail_errno(err, errno, "%s %s", p->flag, p->path);
	if (fstat(fd, st) < 0 || st->st_dev != p->dev || st->st_ino != p->ino) {
		close(fd);
		return hutch_fail(
			err, ESTALE,
			"%s %s: not the directory or file the sandbox was given (replaced "
			"since it started)",
			p->flag, p->path);
	}
	return fd;
}

/* The walk is skipped where the host mounts the path nosuid: no bit there grants anything. */
static int walk_path(const struct rt_sb_setid_path *p, const struct timespec *since,
		     struct hutch_setid_walk *w, struct hutch_err *err)
{
	struct stat st;
	_cleanup_close_ int fd = open_path(p, &st, err);
	if (fd < 0)
		return fd;
	int r = S_ISDIR(st.st_mode) ? hutch_setid_clear_tree(fd, since, w, err)
		: S_ISREG(st.st_mode)
			? hutch_setid_clear_file(fd, since, w, err)
			: 0; /* a FIFO or device bound: no bit on it grants anything */
	return r < 0 ? hutch_err_prefix(err, "%s %s: ", p->flag, p->path) : 0;
}

/* The process's CPU time so far, its threads' included, in ms. */
static double cpu_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void say(const struct rt_sb_setid_path *p, const struct hutch_setid_walk *w)
{
	if (w->cleared)
		hutch_warn("%s %s: cleared setuid/setgid bits or file capabilities on %llu files "
			   "the sandbox left there",
			   p->flag, p->path, (unsigned long long)w->cleared);
	if (w->devices)
		hutch_warn("%s %s: removed %llu device nodes the sandbox left there (whoever opens "
			   "one gets the device)",
			   p->flag, p->path, (unsigned long long)w->devices);
	if (w->failed)
		hutch_warn("%s %s: %llu files or directories could not be cleared or read: %s",
			   p->flag, p->path, (unsigned long long)w->failed, strerror(w->error));
	if (w->incomplete)
		hutch_warn("%s %s: the tree moved under the setid walk, which stopped early",
			   p->flag, p->path);
}

static void clear_path(const struct rt_sb_setid_path *p, const struct timespec *since,
		       struct rt_sb_setid_counts *c)
{
	struct hutch_setid_walk w = { 0 };
	struct hutch_err err = { 0 };
	double t0 = hutch_now_ms(), c0 = cpu_ms();
	if (walk_path(p, since, &w, &err) < 0) {
		hutch_warn("%s; setuid and setgid bits the sandbox left there were not looked for",
			   err.msg);
		return;
	}
	if (w.nosuid)
		hutch_debug("%s %s: mounted nosuid on the host, where no setuid bit grants "
			    "anything: only device nodes looked for",
			    p->flag, p->path);
	hutch_debug("%s %s: setid walk: %llu files in %llu directories, %.1f ms (CPU %.1f ms)",
		    p->flag, p->path, (unsigned long long)w.files, (unsigned long long)w.dirs,
		    hutch_now_ms() - t0, cpu_ms() - c0);
	say(p, &w);
	c->cleared += w.cleared;
	c->devices += w.devices;
}

bool rt_sb_setid_clear(const struct rt_sb_setid *s, struct rt_sb_setid_counts *c)
{
	if (!s->n)
		return false;
	for (size_t i = 0; i < s->n; i++)
		clear_path(&s->paths[i], &s->since, c);
	return true;
}

/* ---- a named sandbox: its record, and what its execs cleared ---- */

void rt_sb_setid_gen(yajl_gen g, const struct rt_sb_setid *s)
{
	if (!s->n)
		return;
	hutch_json_gen_int(g, "setid_since_sec", (long long)s->since.tv_sec);
	hutch_json_gen_int(g, "setid_since_nsec", s->since.tv_nsec);
	hutch_json_gen_str(g, "setid_paths");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < s->n; i++) {
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "flag", s->paths[i].flag);
		hutch_json_gen_kv(g, "path", s->paths[i].path);
		if (s->paths[i].resolved) {
			hutch_json_gen_int(g, "dev", (long long)s->paths[i].dev);
			hutch_json_gen_int(g, "ino", (long long)s->paths[i].ino);
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

void rt_sb_setid_parse(yajl_val doc, struct rt_sb_setid *s)
{
	struct hutch_json_items it;
	struct hutch_err e = { 0 };
	int64_t sec = 0, nsec = 0;
	*s = (struct rt_sb_setid){ 0 };
	if (hutch_json_req_int(doc, "setid_since_sec", "setid_since_sec", 0, INT64_MAX, &sec, &e) <
		    0 ||
	    hutch_json_req_int(doc, "setid_since_nsec", "setid_since_nsec", 0, 999999999, &nsec,
			       &e) < 0 ||
	    hutch_json_items(doc, "setid_paths", "setid_paths", &it, &e) < 0)
		return;
	s->since = (struct timespec){ .tv_sec = sec, .tv_nsec = nsec };
	for (yajl_val v; hutch_json_next(&it, &v);) {
		_cleanup_free_ char *flag = NULL, *path = NULL;
		int64_t dev = 0, ino = 0;
		if (hutch_json_string(v, "flag", it.field, true, &flag, &e) < 0 ||
		    hutch_json_string(v, "path", it.field, true, &path, &e) < 0)
			continue;
		add_path(s, flag, path);
		if (hutch_json_req_int(v, "dev", "dev", 0, INT64_MAX, &dev, &e) >= 0 &&
		    hutch_json_req_int(v, "ino", "ino", 0, INT64_MAX, &ino, &e) >= 0)
			s->paths[s->n - 1] = (struct rt_sb_setid_path){
				.flag = s->paths[s->n - 1].flag,
				.path = s->paths[s->n - 1].path,
				.dev = (dev_t)dev,
				.ino = (ino_t)ino,
				.resolved = true,
			};
	}
}

/* An exec's counts, for the sandbox's report: a line "CLEARED DEVICES" appended (whole,
 * O_APPEND) per exec. */
void rt_sb_setid_note(const char *state_dir, const struct rt_sb_setid_counts *c)
{
	char line[64];
	if (!c->cleared && !c->devices)
		return;
	_cleanup_free_ char *path = hutch_xasprintf("%s/" EXEC_COUNTS, state_dir);
	_cleanup_close_ int fd =
		open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	int len = snprintf(line, sizeof(line), "%llu %llu\n", (unsigned long long)c->cleared,
			   (unsigned long long)c->devices);
	if (fd >= 0)
		(void)!hutch_write_all(fd, line, (size_t)len);
}

void rt_sb_setid_noted(const char *state_dir, struct rt_sb_setid_counts *c)
{
	_cleanup_free_ char *path = hutch_xasprintf("%s/" EXEC_COUNTS, state_dir), *text = NULL;
	struct hutch_err e = { 0 };
	if (hutch_read_file_at(AT_FDCWD, path, 1 << 20, &text, NULL, &e) < 0)
		return;
	for (char *l = text, *end; *l; l = end + strspn(end, "\n")) {
		unsigned long long v = strtoull(l, &end, 10), d = 0;
		if (end == l)
			break;
		if (*end == ' ')
			d = strtoull(end + 1, &end, 10);
		c->cleared += v;
		c->devices += d;
	}
}
