// SPDX-License-Identifier: Apache-2.0
/*
 * The verbs that act on a live container through its cgroup: pause and resume (the freezer)
 * and ps (the pids in the cgroup, as JSON or as the host's `ps` output filtered to them).
 * Also the container+cgroup handle that update and events share.
 */
#include "rt.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

int rt_ctr_open(struct rt_global *g, const char *id, struct rt_ctr *c, struct hutch_err *err)
{
	struct hutch_err ignored = { 0 };
	memset(c, 0, sizeof(*c));
	c->dirfd = -1;
	int r = rt_validate_id(id, err);
	if (r == 0)
		r = rt_state_open(g->root, id, &c->dirfd, err);
	if (r == 0)
		r = rt_state_load(c->dirfd, id, &c->st, err);
	if (r < 0)
		return r;
	c->status = rt_state_status(c->dirfd, &c->st);
	/* A stopped container's cgroup may already be gone: callers decide if that matters. */
	if (rt_state_cgroup(&c->st, &c->cg, &ignored) < 0)
		c->cg = NULL;
	return 0;
}

void rt_ctr_close(struct rt_ctr *c)
{
	cg_free(c->cg);
	c->cg = NULL;
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
	rt_state_clear(&c->st);
}

int rt_ctr_thaw_for_kill(const struct rt_state *st, struct hutch_err *err)
{
	struct cg *cg = NULL;
	struct hutch_err ignored = { 0 };
	if (rt_state_cgroup(st, &cg, &ignored) < 0)
		return 0;
	int r = cg_is_frozen(cg) ? cg_freeze(cg, false, err) : 0;
	cg_free(cg);
	return r;
}

/* runc's messages: pause needs a created or running container, resume a paused one. */
static RT_VERB_RUN(verb_pause)
{
	const char *id;
	_cleanup_(rt_ctr_close) struct rt_ctr c = { .dirfd = -1 };
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	(void)flags;
	TRY(rt_one_id(argc, argv, first, &id, err));
	TRY(rt_ctr_open(g, id, &c, err));
	if (c.status != RT_RUNNING && c.status != RT_CREATED)
		return hutch_fail(err, EINVAL, "container not running");
	if (!c.cg)
		return hutch_fail(err, ENOENT, "pause %s: its cgroup does not exist", id);
	TRY(cg_freeze(c.cg, true, err));
	/* The init may have exited between the status check and the freeze. */
	if (cg_pids(c.cg, &pids, &n, err) == 0 && n == 0) {
		struct hutch_err ignored = { 0 };
		(void)cg_freeze(c.cg, false, &ignored);
		return hutch_fail(err, ESRCH, "container process already exited");
	}
	return 0;
}

static RT_VERB_RUN(verb_resume)
{
	const char *id;
	_cleanup_(rt_ctr_close) struct rt_ctr c = { .dirfd = -1 };
	(void)flags;
	TRY(rt_one_id(argc, argv, first, &id, err));
	TRY(rt_ctr_open(g, id, &c, err));
	if (c.status != RT_PAUSED)
		return hutch_fail(err, EINVAL, "container not paused");
	return cg_freeze(c.cg, false, err);
}

/* Runs `ps args...` on the host and returns its combined output. */
static int run_ps(char **args, int n, char **out, struct hutch_err *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return hutch_fail_errno(err, errno, "ps: pipe");
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return hutch_fail_errno(err, errno, "ps: fork");
	}
	if (pid == 0) {
		_cleanup_free_ char **argv = hutch_xcalloc((size_t)n + 2, sizeof(char *));
		argv[0] = "ps";
		memcpy(argv + 1, args, (size_t)n * sizeof(char *));
		if (dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		execvp("ps", argv);
		dprintf(2, "exec ps: %s\n", strerror(errno));
		_exit(127);
	}
	close(p[1]);
	char path[HUTCH_FD_PATH_MAX];
	int r = hutch_read_file_at(AT_FDCWD, hutch_fd_path(p[0], path), 16 << 20, out, NULL, err);
	close(p[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r < 0)
		return hutch_err_prefix(err, "ps: read output: ");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return hutch_fail(err, EIO, "ps failed (status %d): %s", WEXITSTATUS(status), *out);
	return 0;
}

/* The column whose header is PID, as runc finds it. */
static int pid_column(const char *header)
{
	int col = 0;
	for (const char *p = header;; col++) {
		p += strspn(p, " \t");
		size_t len = strcspn(p, " \t");
		if (!len)
			return -1;
		if (len == 3 && strncmp(p, "PID", 3) == 0)
			return col;
		p += len;
	}
}

static bool line_pid_in(const char *line, int col, const pid_t *pids, size_t n)
{
	const char *p = line;
	for (int i = 0; i <= col; i++) {
		p += strspn(p, " \t");
		if (i < col)
			p += strcspn(p, " \t");
	}
	long v = strtol(p, NULL, 10);
	for (size_t i = 0; i < n; i++)
		if (pids[i] == v)
			return true;
	return false;
}

static int print_table(char **args, int n, const pid_t *pids, size_t np, struct hutch_err *err)
{
	static char *def[] = { "-ef" };
	_cleanup_free_ char *out = NULL;
	if (n == 0) {
		args = def;
		n = 1;
	}
	TRY(run_ps(args, n, &out, err));
	size_t hl = strcspn(out, "\n");
	char *rest = out[hl] ? out + hl + 1 : out + hl;
	out[hl] = '\0';
	int col = pid_column(out);
	if (col < 0)
		return hutch_fail(err, EINVAL, "couldn't find PID field in ps output");
	printf("%s\n", out);
	for (char *l = rest; *l;) {
		size_t len = strcspn(l, "\n");
		char c = l[len];
		l[len] = '\0';
		if (len && line_pid_in(l, col, pids, np))
			printf("%s\n", l);
		l += len + (c == '\n');
	}
	return 0;
}

struct ps_flags {
	const char *format;
};

static RT_VERB_RUN(verb_ps)
{
	const char *format = ((const struct ps_flags *)flags)->format;
	_cleanup_(rt_ctr_close) struct rt_ctr c = { .dirfd = -1 };
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	if (argc - first < 1)
		return hutch_fail(err, EINVAL,
				  "ps: usage: hutch ps [--format table|json] ID [PS ARGS]");
	if (format && strcmp(format, "table") && strcmp(format, "json"))
		return hutch_fail(err, EINVAL, "ps: --format: expected table or json, got %s",
				  format);
	TRY(rt_ctr_open(g, argv[first], &c, err));
	if (!c.cg && c.status != RT_STOPPED)
		return hutch_fail(err, ENOENT, "ps %s: its cgroup does not exist", c.st.id);
	if (c.cg)
		TRY(cg_pids(c.cg, &pids, &n, err));
	if (format && !strcmp(format, "json")) {
		printf("[");
		for (size_t i = 0; i < n; i++)
			printf("%s%d", i ? "," : "", (int)pids[i]);
		printf("]\n");
		return 0;
	}
	int a = first + 1;
	if (a < argc && !strcmp(argv[a], "--"))
		a++;
	return print_table(argv + a, argc - a, pids, n, err);
}

static const struct rt_flag ps_flags[] = {
	{ "format", 'f', RT_FLAG_STR, "table (ps's own output, default) or json (the host pids)",
	  offsetof(struct ps_flags, format), NULL },
};

const struct rt_verb rt_ps_verb = {
	.name = "ps",
	.summary = "list a container's processes",
	.usage = "[--format table|json] ID [PS ARGS]",
	.flags = RT_FLAGS(ps_flags, 0),
	.flags_size = sizeof(struct ps_flags),
	.run = verb_ps,
};
const struct rt_verb rt_pause_verb = {
	.name = "pause",
	.summary = "freeze every process of a container",
	.usage = "ID",
	.run = verb_pause,
};
const struct rt_verb rt_resume_verb = {
	.name = "resume",
	.summary = "thaw a paused container",
	.usage = "ID",
	.run = verb_resume,
};
