// SPDX-License-Identifier: Apache-2.0
/*
 * Entry point: global options (runc's, before the verb), logging setup, verb dispatch.
 * The only place that prints an error: one line, or a JSON object under --log-format json.
 */
#include "rt.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

/* Returns the value of --name=value / --name value at argv[*i], advancing *i. */
static const char *global_value(int argc, char **argv, int *i, const char *name, bool *bad)
{
	size_t n = strlen(name);
	const char *a = argv[*i] + 2;
	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*bad = true;
		return NULL;
	}
	return argv[++*i];
}

static int parse_globals(int argc, char **argv, struct rt_global *g, int *verb_at,
			 struct hutch_err *err)
{
	const char *v;
	int i;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-' && argv[i][2]; i++) {
		bool bad = false;
		if ((v = global_value(argc, argv, &i, "root", &bad)))
			g->root = v;
		else if ((v = global_value(argc, argv, &i, "log", &bad)))
			g->log = v;
		else if ((v = global_value(argc, argv, &i, "log-format", &bad))) {
			if (strcmp(v, "json") && strcmp(v, "text"))
				return hutch_fail(err, EINVAL,
						  "--log-format: expected text or json, got %s", v);
			g->log_json = strcmp(v, "json") == 0;
		} else if ((v = global_value(argc, argv, &i, "cgroup-manager", &bad))) {
			/* crun's and podman's spelling: systemd means --systemd-cgroup */
			if (strcmp(v, "cgroupfs") && strcmp(v, "systemd"))
				return hutch_fail(
					err, EINVAL,
					"--cgroup-manager: expected cgroupfs or systemd, got %s",
					v);
			if (!strcmp(v, "systemd"))
				g->systemd_cgroup =
					true; /* cgroupfs never undoes --systemd-cgroup */
		} else if ((v = global_value(argc, argv, &i, "criu", &bad)) ||
			   (v = global_value(argc, argv, &i, "rootless", &bad)))
			; /* accepted for runc compatibility; nothing of ours depends on them */
		else if (bad)
			return hutch_fail(err, EINVAL, "%s: requires a value", argv[i]);
		else if (!strcmp(argv[i], "--debug"))
			g->debug = true;
		else if (!strcmp(argv[i], "--systemd-cgroup"))
			g->systemd_cgroup = true;
		else if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "--help"))
			break;
		else
			return hutch_fail(err, EINVAL, "unknown global option %s", argv[i]);
	}
	*verb_at = i;
	return 0;
}

static void print_version(void)
{
	printf("hutch version %s\nspec: 1.2.0\n", HUTCH_VERSION);
}

int main(int argc, char **argv)
{
	struct rt_global g = { .root = NULL };
	struct hutch_err err = { 0 };
	int at = 0, log_fd = -1, fail_status = 1;

	rt_count_caller_fds(); /* before any fd of ours exists */
	hutch_proctitle_init(argc, argv);
	int r = parse_globals(argc, argv, &g, &at, &err);
	if (r >= 0 && g.log) {
		log_fd = open(g.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (log_fd < 0)
			r = hutch_fail_errno(&err, errno, "--log %s", g.log);
	}
	hutch_log_setup(log_fd, g.log_json, g.debug);
	hutch_phase_setup(log_fd, g.log_json, g.debug);
	if (r < 0)
		goto fail;
	if (at >= argc || !strcmp(argv[at], "--help") || !strcmp(argv[at], "-h")) {
		rt_main_help(at >= argc ? 2 : 1);
		return at >= argc ? 1 : 0;
	}
	if (!strcmp(argv[at], "--version") || !strcmp(argv[at], "-v") ||
	    !strcmp(argv[at], "version")) {
		print_version();
		return 0;
	}
	const struct rt_verb *v = rt_verb_find(argv[at]);
	if (!v) {
		r = hutch_fail(&err, EINVAL, "unknown command %s (see hutch --help)", argv[at]);
		goto fail;
	}
	fail_status = v->fail_status ? v->fail_status : 1;
	/* --root wins over HUTCH_ROOT, which wins over the default; a bad one fails as the
	 * verb's bad input does */
	r = rt_root_resolve(g.root, &g.root, &err);
	if (r >= 0)
		r = rt_verb_call(v, &g, argc - at, argv + at, &err);
	hutch_phase("total");
	if (r >= 0)
		return r;
fail:
	hutch_log(HUTCH_LOG_ERROR, "%s", err.msg[0] ? err.msg : strerror(-r));
	/* 126/127 (the command could not run / was not found) mean the same everywhere. */
	return fail_status != 1 && err.status ? err.status : fail_status;
}
