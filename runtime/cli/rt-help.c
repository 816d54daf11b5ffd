// SPDX-License-Identifier: Apache-2.0
/*
 * The verb table: names, flags, usage and help text for every verb, so that `hutch --help`,
 * `hutch help VERB` and `hutch VERB --help` all come from one place.
 */
#include "rt.h"
#include "rt-image.h"
#include "rt-sandbox.h"

#include <stdio.h>
#include <string.h>

static struct rt_opt create_opts[] = {
	{ "bundle", 'b', true, "path to the bundle directory (default: the current one)", NULL },
	{ "pid-file", 0, true, "write the container's pid to this file", NULL },
	{ "console-socket", 0, true, "unix socket that receives the pty master fd", NULL },
	{ "preserve-fds", 0, true, "pass N more fds (3..3+N-1) to the container", NULL },
	{ "no-pivot", 0, false, "use MS_MOVE and chroot instead of pivot_root", NULL },
	{ "no-new-keyring", 0, false, "keep the caller's session keyring", NULL },
};
static struct rt_opt run_opts[] = {
	{ "bundle", 'b', true, "path to the bundle directory (default: the current one)", NULL },
	{ "pid-file", 0, true, "write the container's pid to this file", NULL },
	{ "console-socket", 0, true, "unix socket that receives the pty master fd", NULL },
	{ "preserve-fds", 0, true, "pass N more fds (3..3+N-1) to the container", NULL },
	{ "no-pivot", 0, false, "use MS_MOVE and chroot instead of pivot_root", NULL },
	{ "no-new-keyring", 0, false, "keep the caller's session keyring", NULL },
	{ "detach", 'd', false, "return once the container runs", NULL },
	{ "keep", 0, false, "keep the container's state after it exits", NULL },
};
static struct rt_opt spec_opts[] = {
	{ "bundle", 'b', true, "write config.json into this directory", NULL },
	{ "rootless", 0, false, "a spec for running without root (user namespace)", NULL },
	{ "seccomp", 0, false, "include hutch's default seccomp profile", NULL },
};
static struct rt_opt kill_opts[] = {
	{ "all", 'a', false, "signal every process in the container's cgroup", NULL },
};
static struct rt_opt delete_opts[] = {
	{ "force", 'f', false, "kill a running container first", NULL },
};
static struct rt_opt ps_opts[] = {
	{ "format", 'f', true, "table (ps's own output, default) or json (the host pids)", NULL },
};
static struct rt_opt events_opts[] = {
	{ "stats", 0, false, "print the container's statistics once, then exit", NULL },
	{ "interval", 0, true, "how often to print statistics (default 5s)", NULL },
};
static struct rt_opt update_opts[] = {
	{ "resources", 'r', true, "linux.resources JSON from FILE, or - for stdin", NULL },
	{ "memory", 0, true, "memory limit in bytes (k, m, g suffixes; -1 = unlimited)", NULL },
	{ "memory-reservation", 0, true, "memory soft limit in bytes", NULL },
	{ "memory-swap", 0, true, "memory+swap limit in bytes (-1 = unlimited)", NULL },
	{ "kernel-memory", 0, true, "obsolete, ignored", NULL },
	{ "kernel-memory-tcp", 0, true, "obsolete, ignored", NULL },
	{ "cpu-share", 0, true, "CPU shares (relative weight)", NULL },
	{ "cpu-shares", 0, true, "the same as --cpu-share", NULL },
	{ "cpu-period", 0, true, "CFS period in microseconds", NULL },
	{ "cpu-quota", 0, true, "CFS quota in microseconds per period (-1 = none)", NULL },
	{ "cpu-burst", 0, true, "CFS burst in microseconds", NULL },
	{ "cpu-rt-period", 0, true, "realtime period in microseconds (cgroup v1)", NULL },
	{ "cpu-rt-runtime", 0, true, "realtime runtime in microseconds (cgroup v1)", NULL },
	{ "cpu-idle", 0, true, "1 = SCHED_IDLE for the cgroup, 0 = normal", NULL },
	{ "cpuset-cpus", 0, true, "CPUs the container may use (\"0-2,4\")", NULL },
	{ "cpuset-mems", 0, true, "memory nodes the container may use", NULL },
	{ "pids-limit", 0, true, "maximum number of pids (-1 = unlimited)", NULL },
	{ "blkio-weight", 0, true, "block I/O weight, 10 to 1000", NULL },
	{ "l3-cache-schema", 0, true, "Intel RDT L3 cache schema (not supported)", NULL },
	{ "mem-bw-schema", 0, true, "Intel RDT memory bandwidth schema (not supported)", NULL },
};
static struct rt_opt list_opts[] = {
	{ "format", 'f', true, "table or json", NULL },
	{ "quiet", 'q', false, "print only the ids", NULL },
};

static struct rt_opt bundle_opts[] = {
	{ "image", 'i', true, "the stored image NAME[:TAG] to make the bundle from", NULL },
	{ "store", 0, true, "image store (default $HUTCH_STORE or /var/lib/hutch)", NULL },
};

static struct rt_opt exec_opts[] = {
	{ "process", 'p', true, "an OCI process JSON file to run instead of COMMAND", NULL },
	{ "cwd", 0, true, "working directory inside the container", NULL },
	{ "env", 'e', true, "set KEY=VALUE in the environment (repeatable)", NULL },
	{ "user", 'u', true, "run as UID[:GID] (numbers)", NULL },
	{ "additional-gids", 'g', true, "add a supplementary group id (repeatable)", NULL },
	{ "cap", 'c', true, "add a capability (repeatable)", NULL },
	{ "no-new-privs", 0, false, "set no_new_privs for the process", NULL },
	{ "tty", 't', false, "allocate a pseudo-terminal", NULL },
	{ "console-socket", 0, true, "unix socket that receives the pty master fd", NULL },
	{ "detach", 'd', false, "return once the process runs", NULL },
	{ "pid-file", 0, true, "write the process's pid to this file", NULL },
	{ "preserve-fds", 0, true, "pass N more fds (3..3+N-1) to the process", NULL },
	{ "apparmor", 0, true, "AppArmor profile (not supported)", NULL },
	{ "process-label", 0, true, "SELinux label (not supported)", NULL },
	{ "ignore-paused", 0, false, "allow exec in a paused container", NULL },
};

static int verb_unsupported(struct rt_global *g, int argc, char **argv, int first,
			    struct rt_opt *opts, struct hutch_err *err)
{
	(void)g, (void)argc, (void)first, (void)opts;
	return hutch_fail(err, ENOTSUP, "%s: not supported by this version of hutch", argv[0]);
}

static struct rt_opt no_opts[1];

const struct rt_verb rt_verbs[] = {
	{ "spec", "write a default config.json", "[--rootless] [--bundle DIR]", spec_opts,
	  ARRAY_SIZE(spec_opts), rt_verb_spec },
	{ "create", "create a container from a bundle (it waits for start)", "[OPTIONS] ID",
	  create_opts, ARRAY_SIZE(create_opts), rt_verb_create },
	{ "start", "start a created container's process", "ID", no_opts, 0, rt_verb_start },
	{ "run", "create and start a container; wait for it unless --detach", "[OPTIONS] ID",
	  run_opts, ARRAY_SIZE(run_opts), rt_verb_run },
	{ "state", "print a container's OCI state as JSON", "ID", no_opts, 0, rt_verb_state },
	{ "kill", "send a signal (default SIGTERM) to a container's init", "[--all] ID [SIGNAL]",
	  kill_opts, ARRAY_SIZE(kill_opts), rt_verb_kill },
	{ "delete", "delete a container and everything it holds", "[--force] ID", delete_opts,
	  ARRAY_SIZE(delete_opts), rt_verb_delete },
	{ "list", "list containers", "[--format table|json] [-q]", list_opts, ARRAY_SIZE(list_opts),
	  rt_verb_list },
	{ "features", "print the OCI features document", "", no_opts, 0, rt_verb_features },
	{ "exec", "run another process in a running container",
	  "[OPTIONS] ID COMMAND [ARGS...] | [OPTIONS] --process FILE ID", exec_opts,
	  ARRAY_SIZE(exec_opts), rt_verb_exec, 255 /* as runc; 126/127 from err.status */, false,
	  NULL },
	{ "ps", "list a container's processes", "[--format table|json] ID [PS ARGS]", ps_opts,
	  ARRAY_SIZE(ps_opts), rt_verb_ps },
	{ "pause", "freeze every process of a container", "ID", no_opts, 0, rt_verb_pause },
	{ "resume", "thaw a paused container", "ID", no_opts, 0, rt_verb_resume },
	{ "update", "change a running container's resource limits", "[OPTIONS] ID", update_opts,
	  ARRAY_SIZE(update_opts), rt_verb_update },
	{ "events", "print a container's statistics and OOM events as JSON",
	  "[--stats] [--interval DURATION] ID", events_opts, ARRAY_SIZE(events_opts),
	  rt_verb_events },
	{ "sandbox", "run one command in a short-lived, locked-down sandbox",
	  "[OPTIONS] -- COMMAND [ARGS...]", no_opts, 0, rt_verb_sandbox, RT_SB_EXIT_FAIL, true,
	  rt_sb_print_help },
	{ "image", "import, list, build and remove images (hutch image --help)",
	  "SUBCOMMAND [OPTIONS] [ARGS]", no_opts, 0, rt_verb_image, 0, true, rt_image_print_help },
	{ "bundle", "write an OCI bundle (config.json + rootfs) from a stored image",
	  "--image NAME[:TAG] [--store DIR] DIR", bundle_opts, ARRAY_SIZE(bundle_opts),
	  rt_verb_bundle },
	{ "checkpoint", "checkpoint with CRIU (not supported: built without CRIU)", "ID", no_opts,
	  0, verb_unsupported },
	{ "restore", "restore with CRIU (not supported: built without CRIU)", "ID", no_opts, 0,
	  verb_unsupported },
};
const size_t rt_n_verbs = ARRAY_SIZE(rt_verbs);

static int verb_help(struct rt_global *g, int argc, char **argv, int first, struct rt_opt *o,
		     struct hutch_err *err);
static const struct rt_verb help_verb = { "help",   "show help for a verb", "[VERB]", no_opts, 0,
					  verb_help };

const struct rt_verb *rt_verb_find(const char *name)
{
	if (!strcmp(name, "help"))
		return &help_verb;
	for (size_t i = 0; i < rt_n_verbs; i++)
		if (!strcmp(rt_verbs[i].name, name))
			return &rt_verbs[i];
	return NULL;
}

void rt_verb_help(const struct rt_verb *v, int fd)
{
	if (v->help) {
		v->help(fd);
		return;
	}
	dprintf(fd, "usage: hutch [GLOBAL OPTIONS] %s %s\n\n%s\n", v->name, v->usage, v->summary);
	if (v->n_opts)
		dprintf(fd, "\noptions:\n");
	for (size_t i = 0; i < v->n_opts; i++) {
		const struct rt_opt *o = &v->opts[i];
		char flag[64];
		snprintf(flag, sizeof(flag), "%s%c%s--%s%s", o->short_name ? "-" : "",
			 o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ", o->name,
			 o->has_arg ? " VALUE" : "");
		dprintf(fd, "  %-30s %s\n", o->short_name ? flag : flag + 2, o->help);
	}
	dprintf(fd, "  %-30s %s\n", "-h, --help", "show this help");
}

void rt_main_help(int fd)
{
	dprintf(fd, "usage: hutch [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n\n"
		    "hutch runs OCI bundles in Linux namespaces, with runc's command line.\n\n"
		    "commands:\n");
	for (size_t i = 0; i < rt_n_verbs; i++)
		dprintf(fd, "  %-12s %s\n", rt_verbs[i].name, rt_verbs[i].summary);
	dprintf(fd, "  %-12s %s\n", "help", "show help for a command");
	dprintf(fd, "\nglobal options:\n"
		    "  --root DIR            state directory (default " RT_DEFAULT_ROOT ")\n"
		    "  --log FILE            also log to FILE\n"
		    "  --log-format FORMAT   text or json (for --log)\n"
		    "  --debug               log debug messages\n"
		    "  --systemd-cgroup      not supported: use cgroupfs paths\n"
		    "  --version             print the version\n"
		    "  --help                show this help\n");
}

static int verb_help(struct rt_global *g, int argc, char **argv, int first, struct rt_opt *o,
		     struct hutch_err *err)
{
	(void)g, (void)o;
	if (argc - first == 0) {
		rt_main_help(1);
		return 0;
	}
	const struct rt_verb *v = rt_verb_find(argv[first]);
	if (!v)
		return hutch_fail(err, EINVAL, "help: unknown command %s", argv[first]);
	rt_verb_help(v, 1);
	return 0;
}
