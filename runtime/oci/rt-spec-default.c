// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch spec`: the default config.json, the one `runc spec` writes (and its --rootless
 * variant), so that a bundle made for runc and one made by hutch look the same. The
 * document is data below, written out through yajl_gen in Go's field order.
 */
#include "rt-spec-internal.h"
#include "hutch-json.h"

#include <string.h>

#define STRV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const char *const default_caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE",
					    NULL };

static const struct default_mount {
	const char *destination, *type, *source;
	const char *const *options;
} default_mounts[] = {
	{ "/proc", "proc", "proc", NULL },
	{ "/dev", "tmpfs", "tmpfs", STRV("nosuid", "strictatime", "mode=755", "size=65536k") },
	{ "/dev/pts", "devpts", "devpts",
	  STRV("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5") },
	{ "/dev/shm", "tmpfs", "shm",
	  STRV("nosuid", "noexec", "nodev", "mode=1777", "size=65536k") },
	{ "/dev/mqueue", "mqueue", "mqueue", STRV("nosuid", "noexec", "nodev") },
	{ "/sys", "sysfs", "sysfs", STRV("nosuid", "noexec", "nodev", "ro") },
	{ "/sys/fs/cgroup", "cgroup", "cgroup",
	  STRV("nosuid", "noexec", "nodev", "relatime", "ro") },
};

/* Without CAP_SYS_ADMIN over the network namespace a new sysfs cannot be mounted: bind it. */
static const struct default_mount rootless_sys = {
	"/sys", "none", "/sys", STRV("rbind", "nosuid", "noexec", "nodev", "ro")
};

/* Also the sandbox's (rt-sandbox-plan.c): NULL-terminated. runc's and moby's list:
 * /proc/interrupts tells which devices and CPUs the host has, and how busy each is. */
const char *const rt_default_masked[] = {
	"/proc/acpi",
	"/proc/asound",
	"/proc/interrupts",
	"/proc/kcore",
	"/proc/keys",
	"/proc/latency_stats",
	"/proc/timer_list",
	"/proc/timer_stats",
	"/proc/sched_debug",
	"/sys/firmware",
	"/proc/scsi",
	"/sys/devices/virtual/powercap",
	NULL,
};

const char *const rt_default_readonly[] = {
	"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

/* key: [strings]; a NULL skip drops entries with that prefix (rootless: "gid="). */
static void gen_strv(yajl_gen g, const char *key, const char *const *v, const char *skip)
{
	hutch_json_gen_str(g, key);
	yajl_gen_array_open(g);
	for (; *v; v++)
		if (!skip || !hutch_str_has_prefix(*v, skip))
			hutch_json_gen_str(g, *v);
	yajl_gen_array_close(g);
}

static void gen_process(yajl_gen g)
{
	hutch_json_gen_str(g, "process");
	yajl_gen_map_open(g);
	hutch_json_gen_bool(g, "terminal", true);
	hutch_json_gen_str(g, "user");
	yajl_gen_map_open(g);
	hutch_json_gen_int(g, "uid", 0);
	hutch_json_gen_int(g, "gid", 0);
	yajl_gen_map_close(g);
	gen_strv(g, "args", STRV("sh"), NULL);
	gen_strv(g, "env",
		 STRV("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		      "TERM=xterm"),
		 NULL);
	hutch_json_gen_kv(g, "cwd", "/");
	hutch_json_gen_str(g, "capabilities");
	yajl_gen_map_open(g);
	gen_strv(g, "bounding", default_caps, NULL);
	gen_strv(g, "effective", default_caps, NULL);
	gen_strv(g, "permitted", default_caps, NULL);
	yajl_gen_map_close(g);
	hutch_json_gen_str(g, "rlimits");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "type", "RLIMIT_NOFILE");
	hutch_json_gen_int(g, "hard", 1024);
	hutch_json_gen_int(g, "soft", 1024);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	hutch_json_gen_bool(g, "noNewPrivileges", true);
	yajl_gen_map_close(g);
}

static void gen_mount(yajl_gen g, const struct default_mount *m, bool rootless)
{
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "destination", m->destination);
	hutch_json_gen_kv(g, "type", m->type);
	hutch_json_gen_kv(g, "source", m->source);
	/* An unprivileged user maps only its own gid: "gid=5" could not be honoured. */
	if (m->options)
		gen_strv(g, "options", m->options, rootless ? "gid=" : NULL);
	yajl_gen_map_close(g);
}

static void gen_mounts(yajl_gen g, bool rootless)
{
	hutch_json_gen_str(g, "mounts");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ARRAY_SIZE(default_mounts); i++) {
		const struct default_mount *m = &default_mounts[i];
		if (rootless && strcmp(m->destination, "/sys") == 0)
			m = &rootless_sys;
		gen_mount(g, m, rootless);
	}
	yajl_gen_array_close(g);
}

static void gen_idmap(yajl_gen g, const char *key, unsigned int host_id)
{
	hutch_json_gen_str(g, key);
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	hutch_json_gen_int(g, "containerID", 0);
	hutch_json_gen_int(g, "hostID", host_id);
	hutch_json_gen_int(g, "size", 1);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
}

static void gen_resources(yajl_gen g)
{
	hutch_json_gen_str(g, "resources");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "devices");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	hutch_json_gen_bool(g, "allow", false);
	hutch_json_gen_kv(g, "access", "rwm");
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

static void gen_namespaces(yajl_gen g, bool rootless)
{
	static const char *const types[] = { "pid", "network", "ipc", "uts", "mount", "cgroup" };

	hutch_json_gen_str(g, "namespaces");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		/* Rootless: a network namespace of its own would have no way out. */
		if (rootless && strcmp(types[i], "network") == 0)
			continue;
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "type", types[i]);
		yajl_gen_map_close(g);
	}
	if (rootless) {
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "type", "user");
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void gen_linux(yajl_gen g, bool rootless, yajl_val seccomp)
{
	hutch_json_gen_str(g, "linux");
	yajl_gen_map_open(g);
	if (rootless) {
		gen_idmap(g, "uidMappings", geteuid());
		gen_idmap(g, "gidMappings", getegid());
	} else {
		/* Rootless has no cgroup it may write to, so runc drops resources there. */
		gen_resources(g);
	}
	gen_namespaces(g, rootless);
	gen_strv(g, "maskedPaths", rt_default_masked, NULL);
	gen_strv(g, "readonlyPaths", rt_default_readonly, NULL);
	if (seccomp) {
		hutch_json_gen_str(g, "seccomp");
		hutch_json_gen_value(g, seccomp);
	}
	yajl_gen_map_close(g);
}

char *rt_spec_default_json(bool rootless, yajl_val seccomp)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);

	if (!g)
		return NULL;
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "\t");
	yajl_gen_map_open(g);
	/* What runc 1.1 writes: crun 1.8 refuses newer versions, and bundles are shared. */
	hutch_json_gen_kv(g, "ociVersion", "1.0.2-dev");
	gen_process(g);
	hutch_json_gen_str(g, "root");
	yajl_gen_map_open(g);
	hutch_json_gen_kv(g, "path", "rootfs");
	hutch_json_gen_bool(g, "readonly", true);
	yajl_gen_map_close(g);
	hutch_json_gen_kv(g, "hostname", "hutch");
	gen_mounts(g, rootless);
	gen_linux(g, rootless, seccomp);
	yajl_gen_map_close(g);
	return hutch_json_gen_finish(g, NULL);
}
