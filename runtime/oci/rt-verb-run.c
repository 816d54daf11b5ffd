// SPDX-License-Identifier: Apache-2.0
/*
 * spec, create and run. `run` is create + start + wait in one process: the container's init
 * stays our child, so its exit code (or 128+signal) becomes ours, and with a terminal and no
 * console socket we relay between our own terminal and the container's pty.
 */
#include "rt.h"
#include "rt-json.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* runc's default capabilities (AUDIT_WRITE, KILL, NET_BIND_SERVICE): the default profile's
 * capability-conditional rules are resolved against them. */
#define SPEC_CAPS ((1ULL << 29) | (1ULL << 5) | (1ULL << 10))

RT_VERB_FN(spec)
{
	const char *bundle = rt_opt(opts, 3, "bundle");
	bool rootless = rt_opt(opts, 3, "rootless") != NULL;
	_cleanup_free_ char *sc_text = NULL;
	_cleanup_json_ yajl_val sc = NULL;
	if (rt_opt(opts, 3, "seccomp")) {
		TRY(sc_default_profile_oci(SPEC_CAPS, 0, &sc_text, err));
		TRY(hutch_json_parse(sc_text, "default seccomp profile", &sc, err));
	}
	if (argc - first != 0)
		return hutch_fail(err, EINVAL, "spec: takes no arguments");
	(void)g, (void)argv;
	_cleanup_close_ int dfd = open(bundle ? bundle : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return hutch_fail_errno(err, errno, "spec: bundle %s", bundle ? bundle : ".");
	if (faccessat(dfd, "config.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return hutch_fail(err, EEXIST, "spec: config.json already exists");
	_cleanup_free_ char *json = rt_spec_default_json(rootless, sc);
	return hutch_write_atomic_at(dfd, "config.json", json, strlen(json), 0644, err);
}

static int fill_create_opts(int argc, char **argv, int first, struct rt_opt *opts, size_t n,
			    struct rt_create_opts *o, struct hutch_err *err)
{
	TRY(rt_one_id(argc, argv, first, &o->id, err));
	o->bundle = rt_opt(opts, n, "bundle");
	if (!o->bundle)
		o->bundle = ".";
	o->pid_file = rt_opt(opts, n, "pid-file");
	o->console_socket = rt_opt(opts, n, "console-socket");
	o->no_pivot = rt_opt(opts, n, "no-pivot") != NULL;
	o->no_new_keyring = rt_opt(opts, n, "no-new-keyring") != NULL;
	return rt_parse_preserve_fds(rt_opt(opts, n, "preserve-fds"), &o->preserve_fds, err);
}

RT_VERB_FN(create)
{
	struct rt_create_opts o = { .init_fd = -1 };
	struct rt_created c = { .pidfd = -1, .pty_master = -1 };
	TRY(fill_create_opts(argc, argv, first, opts, 6, &o, err));
	TRY(rt_container_create(g, &o, &c, err));
	close(c.pidfd);
	return 0;
}

RT_VERB_FN(run)
{
	struct rt_create_opts o = { .init_fd = -1 };
	struct rt_created c = { .pidfd = -1, .pty_master = -1 };
	bool detach = rt_opt(opts, 8, "detach") != NULL;
	bool keep = rt_opt(opts, 8, "keep") != NULL;
	TRY(fill_create_opts(argc, argv, first, opts, 8, &o, err));
	if (detach && keep)
		return hutch_fail(err, EINVAL, "run: --keep cannot be used with --detach");
	o.foreground = !detach;
	TRY(rt_container_create(g, &o, &c, err));
	_cleanup_close_ int pidfd = c.pidfd;
	_cleanup_close_ int master = c.pty_master;
	int r = rt_container_start(g, o.id, err);
	if (r < 0 || detach) {
		struct hutch_err ignored = { 0 };
		if (r < 0)
			rt_container_delete(g, o.id, true, &ignored);
		return r;
	}
	int code = master >= 0 ? rt_relay_and_wait(master, pidfd, c.pid, err)
			       : rt_wait_forward(pidfd, c.pid, err);
	if (!keep) {
		struct hutch_err derr = { 0 };
		int d = rt_container_delete(g, o.id, true, &derr);
		if (d < 0 && code >= 0)
			hutch_warn("delete %s: %s", o.id, derr.msg);
	}
	return code;
}
