// SPDX-License-Identifier: Apache-2.0
/*
 * spec, create and run. `run` is create + start + wait in one process: the container's init
 * stays our child, so its exit code (or 128+signal) becomes ours, and with a terminal and no
 * console socket we relay between our own terminal and the container's pty.
 */
#include "rt.h"
#include "rt-spec-build.h"
#include "rt-json.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* runc's default capabilities (AUDIT_WRITE, KILL, NET_BIND_SERVICE): the default profile's
 * capability-conditional rules are resolved against them. */
#define SPEC_CAPS ((1ULL << 29) | (1ULL << 5) | (1ULL << 10))

struct spec_flags {
	const char *bundle;
	bool rootless, seccomp;
};

static RT_VERB_RUN(verb_spec)
{
	const struct spec_flags *f = flags;
	const char *bundle = f->bundle;
	_cleanup_free_ char *sc_text = NULL;
	_cleanup_json_ yajl_val sc = NULL;
	if (f->seccomp) {
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
	_cleanup_free_ char *json = rt_spec_default_json(f->rootless, sc);
	return hutch_write_atomic_at(dfd, "config.json", json, strlen(json), 0644, err);
}

static const struct rt_flag spec_flags[] = {
	{ "bundle", 'b', RT_FLAG_STR, "write config.json into this directory",
	  offsetof(struct spec_flags, bundle), NULL },
	{ "rootless", 0, RT_FLAG_BOOL, "a spec for running without root (user namespace)",
	  offsetof(struct spec_flags, rootless), NULL },
	{ "seccomp", 0, RT_FLAG_BOOL, "include hutch's default seccomp profile",
	  offsetof(struct spec_flags, seccomp), NULL },
};

const struct rt_verb rt_spec_verb = {
	.name = "spec",
	.summary = "write a default config.json",
	.usage = "[--rootless] [--bundle DIR]",
	.flags = RT_FLAGS(spec_flags, 0),
	.flags_size = sizeof(struct spec_flags),
	.run = verb_spec,
};

/* create's flags are run's first seven: one struct and one table for both. */
struct run_flags {
	const char *bundle, *config, *pid_file, *console_socket, *preserve_fds;
	bool no_pivot, no_new_keyring;
	bool detach, keep; /* run's own */
};

#define RUN_FLAG(field) offsetof(struct run_flags, field), NULL
static const struct rt_flag run_flags[] = {
	{ "bundle", 'b', RT_FLAG_STR, "path to the bundle directory (default: the current one)",
	  RUN_FLAG(bundle) },
	{ "config", 'f', RT_FLAG_STR, "this config file instead of the bundle's config.json",
	  RUN_FLAG(config) },
	{ "pid-file", 0, RT_FLAG_STR, "write the container's pid to this file",
	  RUN_FLAG(pid_file) },
	{ "console-socket", 0, RT_FLAG_STR, "unix socket that receives the pty master fd",
	  RUN_FLAG(console_socket) },
	{ "preserve-fds", 0, RT_FLAG_STR, "pass N more fds (3..3+N-1) to the container",
	  RUN_FLAG(preserve_fds) },
	{ "no-pivot", 0, RT_FLAG_BOOL, "use MS_MOVE and chroot instead of pivot_root",
	  RUN_FLAG(no_pivot) },
	{ "no-new-keyring", 0, RT_FLAG_BOOL, "keep the caller's session keyring",
	  RUN_FLAG(no_new_keyring) },
	{ "detach", 'd', RT_FLAG_BOOL, "return once the container runs", RUN_FLAG(detach) },
	{ "keep", 0, RT_FLAG_BOOL, "keep the container's state after it exits", RUN_FLAG(keep) },
};
#define N_CREATE_FLAGS 7

static int fill_create_opts(int argc, char **argv, int first, const struct run_flags *f,
			    struct rt_create_opts *o, struct hutch_err *err)
{
	TRY(rt_one_id(argc, argv, first, &o->id, err));
	o->bundle = f->bundle ? f->bundle : ".";
	o->config = f->config;
	o->pid_file = f->pid_file;
	o->console_socket = f->console_socket;
	o->no_pivot = f->no_pivot;
	o->no_new_keyring = f->no_new_keyring;
	return rt_parse_preserve_fds(f->preserve_fds, &o->preserve_fds, err);
}

static RT_VERB_RUN(verb_create)
{
	struct rt_create_opts o = { .init_fd = -1 };
	struct rt_created c = { .pidfd = -1, .pty_master = -1 };
	TRY(fill_create_opts(argc, argv, first, flags, &o, err));
	TRY(rt_container_create(g, &o, &c, err));
	close(c.pidfd);
	return 0;
}

const struct rt_verb rt_create_verb = {
	.name = "create",
	.summary = "create a container from a bundle (it waits for start)",
	.usage = "[OPTIONS] ID",
	.flags = { run_flags, N_CREATE_FLAGS, RT_PARSE_ANYWHERE },
	.flags_size = sizeof(struct run_flags),
	.run = verb_create,
};

static RT_VERB_RUN(verb_run)
{
	const struct run_flags *f = flags;
	struct rt_create_opts o = { .init_fd = -1, .keep_lock = true };
	struct rt_created c = { .pidfd = -1, .pty_master = -1, .dirfd = -1 };
	bool detach = f->detach, keep = f->keep;
	TRY(fill_create_opts(argc, argv, first, f, &o, err));
	if (detach && keep)
		return hutch_fail(err, EINVAL, "run: --keep cannot be used with --detach");
	o.foreground = !detach;
	TRY(rt_container_create(g, &o, &c, err));
	_cleanup_close_ int pidfd = c.pidfd;
	_cleanup_close_ int master = c.pty_master;
	/* With create's lock held throughout: no other start, pause or delete comes between. */
	hutch_fault_point("run:created");
	int r = rt_container_start_held(o.id, c.dirfd, err);
	if (r < 0 || detach) {
		struct hutch_err ignored = { 0 };
		if (r < 0)
			rt_container_delete(g, o.id, true, &ignored);
		return r;
	}
	int code = master >= 0 ? rt_relay_and_wait(master, pidfd, c.pid, err)
			       : rt_wait_forward(pidfd, c.pid, err);
	hutch_phase("wait");
	if (!keep) {
		struct hutch_err derr = { 0 };
		int d = rt_container_delete(g, o.id, true, &derr);
		if (d < 0 && code >= 0)
			hutch_warn("delete %s: %s", o.id, derr.msg);
	}
	return code;
}

const struct rt_verb rt_run_verb = {
	.name = "run",
	.summary = "create and start a container; wait for it unless --detach",
	.usage = "[OPTIONS] ID",
	.flags = RT_FLAGS(run_flags, RT_PARSE_ANYWHERE),
	.flags_size = sizeof(struct run_flags),
	.run = verb_run,
};
