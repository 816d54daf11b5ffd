// SPDX-License-Identifier: Apache-2.0
/*
 * Setuid and setgid bits and file capabilities that a sandbox left on the host. --as-root and
 * --host-root may set them (dpkg sets them on what it installs into the throw-away layer);
 * any sandbox may change the content of a file that already has them without losing them (a
 * write through a shared mapping) or its permission bits (a POSIX ACL). So what is setid in
 * the workspace and the rw binds and was changed during the run is cleared by a walk
 * (base/base-setid.c) when the run ends, and after each `sandbox exec` of a named sandbox.
 * See docs/sandbox-ids.md.
 */
#include "rt-sandbox.h"
#include "hutch-path.h"
#include "hutch-setid.h"
#include "rt-json.h"

#include <fcntl.h>
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

void rt_sb_setid_free(struct rt_sb_setid *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->paths[i].flag);
		free(s->paths[i].path);
	}
	free(s->paths);
	*s = (struct rt_sb_setid){ 0 };
}

/*
 * One path, resolved now (a held fd from the start will replace this): the workspace as a
 * directory that is no symlink, a bind as it was mounted (a directory, or a file). The walk is
 * skipped where the host mounts it nosuid: no bit there grants anything.
 */
static int walk_path(const struct rt_sb_setid_path *p, const struct timespec *since,
		     struct hutch_setid_walk *w, struct hutch_err *err)
{
	bool ws = !strcmp(p->flag, "--workspace");
	struct stat st;
	_cleanup_close_ int fd =
		ws ? hutch_chase_type(p->flag, p->path, HUTCH_CHASE_NOFOLLOW, S_IFDIR, &st, err)
		   : hutch_chase(p->flag, p->path, 0, NULL, err);
	if (fd < 0)
		return fd;
	if (!ws && fstat(fd, &st) < 0)
		return hutch_fail_errno(err, errno, "%s %s", p->flag, p->path);
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

static uint64_t clear_path(const struct rt_sb_setid_path *p, const struct timespec *since)
{
	struct hutch_setid_walk w = { 0 };
	struct hutch_err err = { 0 };
	double t0 = hutch_now_ms(), c0 = cpu_ms();
	if (walk_path(p, since, &w, &err) < 0) {
		hutch_warn("%s; setuid and setgid bits the sandbox left there were not looked for",
			   err.msg);
		return 0;
	}
	if (w.nosuid) {
		hutch_debug("%s %s: mounted nosuid on the host, where no setuid bit grants "
			    "anything: not walked",
			    p->flag, p->path);
		return 0;
	}
	hutch_debug("%s %s: setid walk: %llu files in %llu directories, %.1f ms (CPU %.1f ms)",
		    p->flag, p->path, (unsigned long long)w.files, (unsigned long long)w.dirs,
		    hutch_now_ms() - t0, cpu_ms() - c0);
	if (w.cleared)
		hutch_warn("%s %s: cleared setuid/setgid bits or file capabilities on %llu files "
			   "the sandbox left there",
			   p->flag, p->path, (unsigned long long)w.cleared);
	if (w.failed)
		hutch_warn("%s %s: %llu files or directories could not be cleared or read: %s",
			   p->flag, p->path, (unsigned long long)w.failed, strerror(w.error));
	if (w.incomplete)
		hutch_warn("%s %s: the tree moved under the setid walk, which stopped early",
			   p->flag, p->path);
	return w.cleared;
}

int64_t rt_sb_setid_clear(const struct rt_sb_setid *s)
{
	uint64_t n = 0;
	if (!s->n)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		n += clear_path(&s->paths[i], &s->since);
	return (int64_t)n;
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
		if (hutch_json_string(v, "flag", it.field, true, &flag, &e) >= 0 &&
		    hutch_json_string(v, "path", it.field, true, &path, &e) >= 0)
			add_path(s, flag, path);
	}
}

/* An exec's count, for the sandbox's report: a line appended (whole, O_APPEND) per exec. */
void rt_sb_setid_note(const char *state_dir, int64_t n)
{
	char line[32];
	if (n <= 0)
		return;
	_cleanup_free_ char *path = hutch_xasprintf("%s/" EXEC_COUNTS, state_dir);
	_cleanup_close_ int fd =
		open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	int len = snprintf(line, sizeof(line), "%lld\n", (long long)n);
	if (fd >= 0)
		(void)!hutch_write_all(fd, line, (size_t)len);
}

int64_t rt_sb_setid_noted(const char *state_dir)
{
	_cleanup_free_ char *path = hutch_xasprintf("%s/" EXEC_COUNTS, state_dir), *text = NULL;
	struct hutch_err e = { 0 };
	int64_t n = 0;
	if (hutch_read_file_at(AT_FDCWD, path, 1 << 20, &text, NULL, &e) < 0)
		return 0;
	for (char *l = text, *end; *l; l = end + strspn(end, "\n")) {
		long long v = strtoll(l, &end, 10);
		if (end == l)
			break;
		n += v > 0 ? v : 0;
	}
	return n;
}
