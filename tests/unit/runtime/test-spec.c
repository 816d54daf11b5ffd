// SPDX-License-Identifier: Apache-2.0
/*
 * The config.json parser: `hutch spec`'s default document (and its rootless variant) read
 * back field by field, errors that name their field, unknown fields ignored, and root.path
 * resolved against a bundle; and `hutch sandbox`'s options, which become such a document.
 * Pure parsing and temp dirs only: no root needed.
 */
#include "tap.h"
#include "rt-json.h"
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"
#include "rt-spec.h"
#include "rt-state.h"
#include "rt-spec-build.h"
#include "rt-process.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEAD "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
#define PROC "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"}"
/* A valid spec with extra top-level members x. */
#define SPEC(x) HEAD PROC "," x "}"
#define WITH_PROC(p) HEAD "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"," p "}}"
#define WITH_LINUX(l) SPEC("\"linux\":{" l "}")

static char bundle[PATH_MAX];

static struct rt_spec *parse(const char *json, const char *b, struct hutch_err *err)
{
	struct rt_spec *spec = NULL;
	hutch_err_clear(err);
	if (rt_spec_parse(json, b, &spec, err) < 0)
		return NULL;
	return spec;
}

static void make_bundle(void)
{
	char path[PATH_MAX + 16];
	strcpy(bundle, "/tmp/test-spec-XXXXXX");
	if (!mkdtemp(bundle))
		abort();
	snprintf(path, sizeof(path), "%s/rootfs", bundle);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/afile", bundle);
	close(open(path, O_CREAT | O_WRONLY, 0644));
}

static void remove_bundle(void)
{
	char path[PATH_MAX + 16];
	const char *names[] = { "rootfs", "afile", "config.json" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", bundle, names[i]);
		if (remove(path) < 0 && errno != ENOENT)
			printf("# cannot remove %s\n", path);
	}
	rmdir(bundle);
}

static const struct ns_mount *find_mount(const struct rt_spec *s, const char *dest)
{
	for (size_t i = 0; i < s->n_mounts; i++)
		if (strcmp(s->mounts[i].destination, dest) == 0)
			return &s->mounts[i];
	return NULL;
}

static bool strv_has(char **v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

static void check_default_process(const struct rt_process *p)
{
	const uint64_t caps = (UINT64_C(1) << CAP_AUDIT_WRITE) | (UINT64_C(1) << CAP_KILL) |
			      (UINT64_C(1) << CAP_NET_BIND_SERVICE);

	ok(p->terminal, "default: terminal");
	ok(p->user.uid == 0 && p->user.gid == 0 && !p->user.has_umask, "default: user 0:0");
	ok(p->args && strcmp(p->args[0], "sh") == 0 && !p->args[1], "default: args [sh]");
	ok(p->env && strv_has(p->env, "TERM=xterm") &&
		   strv_has(p->env,
			    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin") &&
		   !p->env[2],
	   "default: env PATH and TERM");
	is_str(p->cwd, "/", "default: cwd /");
	ok(p->has_caps, "default: has capabilities");
	ok(p->caps.bounding == caps && p->caps.effective == caps && p->caps.permitted == caps,
	   "default: bounding/effective/permitted = AUDIT_WRITE KILL NET_BIND_SERVICE");
	ok(p->caps.inheritable == 0 && p->caps.ambient == 0, "default: no inheritable/ambient");
	ok(p->n_rlimits == 1 && p->rlimits[0].resource == RLIMIT_NOFILE &&
		   p->rlimits[0].soft == 1024 && p->rlimits[0].hard == 1024,
	   "default: RLIMIT_NOFILE 1024/1024");
	ok(p->no_new_privs, "default: noNewPrivileges");
	ok(!p->has_oom_score_adj, "default: no oomScoreAdj");
}

static void check_default_mounts(const struct rt_spec *s, bool rootless)
{
	const struct ns_mount *m;

	ok(s->n_mounts == 7, "%s: 7 mounts (%zu)", rootless ? "rootless" : "default", s->n_mounts);
	m = find_mount(s, "/proc");
	ok(m && strcmp(m->type, "proc") == 0 && m->flags == 0 && !m->bind, "mount /proc");
	m = find_mount(s, "/dev");
	ok(m && strcmp(m->type, "tmpfs") == 0 && m->flags == (MS_NOSUID | MS_STRICTATIME) &&
		   m->data && strcmp(m->data, "mode=755,size=65536k") == 0,
	   "mount /dev: tmpfs nosuid,strictatime mode=755,size=65536k");
	m = find_mount(s, "/dev/pts");
	ok(m && m->flags == (MS_NOSUID | MS_NOEXEC) && m->data && strstr(m->data, "newinstance") &&
		   strstr(m->data, "ptmxmode=0666") && strstr(m->data, "mode=0620") &&
		   !strstr(m->data, "gid=5") == rootless,
	   "mount /dev/pts: devpts nosuid,noexec %s gid=5", rootless ? "without" : "with");
	m = find_mount(s, "/dev/shm");
	ok(m && m->flags == (MS_NOSUID | MS_NOEXEC | MS_NODEV) && strcmp(m->source, "shm") == 0,
	   "mount /dev/shm");
	m = find_mount(s, "/dev/mqueue");
	ok(m && strcmp(m->type, "mqueue") == 0 && m->flags == (MS_NOSUID | MS_NOEXEC | MS_NODEV),
	   "mount /dev/mqueue");
	m = find_mount(s, "/sys");
	if (rootless)
		ok(m && m->bind && m->recursive && strcmp(m->type, "bind") == 0 &&
			   strcmp(m->source, "/sys") == 0 &&
			   m->flags == (MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY),
		   "rootless: /sys is an rbind of /sys, ro");
	else
		ok(m && !m->bind && strcmp(m->type, "sysfs") == 0 &&
			   m->flags == (MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY),
		   "mount /sys: sysfs ro");
	m = find_mount(s, "/sys/fs/cgroup");
	ok(m && strcmp(m->type, "cgroup") == 0 &&
		   m->flags == (MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RELATIME | MS_RDONLY),
	   "mount /sys/fs/cgroup: cgroup ro,relatime");
}

static void check_default_linux(const struct rt_spec *s, bool rootless)
{
	const char *what = rootless ? "rootless" : "default";

	ok(s->n_masked_paths == 12 && strv_has(s->masked_paths, "/proc/kcore") &&
		   strv_has(s->masked_paths, "/proc/interrupts") &&
		   strv_has(s->masked_paths, "/sys/devices/virtual/powercap"),
	   "%s: 12 masked paths (runc's, with /proc/interrupts)", what);
	ok(s->n_readonly_paths == 5 && strv_has(s->readonly_paths, "/proc/sysrq-trigger"),
	   "%s: 5 read-only paths", what);
	ok(rt_spec_new_ns(s, CLONE_NEWPID) && rt_spec_new_ns(s, CLONE_NEWIPC) &&
		   rt_spec_new_ns(s, CLONE_NEWUTS) && rt_spec_new_ns(s, CLONE_NEWNS) &&
		   rt_spec_new_ns(s, CLONE_NEWCGROUP),
	   "%s: new pid ipc uts mount cgroup namespaces", what);
	ok(s->n_namespaces == 6, "%s: 6 namespaces", what);
	ok(rt_spec_new_ns(s, CLONE_NEWNET) == !rootless, "%s: network namespace %s", what,
	   rootless ? "absent" : "new");
	ok(rt_spec_new_ns(s, CLONE_NEWUSER) == rootless, "%s: user namespace %s", what,
	   rootless ? "new" : "absent");
	ok(s->n_devices == 0 && s->rootfs_propagation == 0 && !s->has_seccomp,
	   "%s: no devices, default propagation, no seccomp", what);
	is_str(s->hostname, "hutch", "%s: hostname hutch", what);
}

static void test_default(void)
{
	struct hutch_err err;
	_cleanup_free_ char *expect = hutch_xasprintf("%s/rootfs", bundle);
	_cleanup_free_ char *json = rt_spec_default_json(false, NULL);

	ok(json != NULL, "default spec generated");
	struct rt_spec *s = parse(json, bundle, &err);
	ok(s != NULL, "default spec parses: %s", err.msg);
	if (!s)
		return;
	is_str(s->oci_version, "1.0.2-dev", "default: ociVersion");
	is_str(s->rootfs, expect, "default: rootfs resolved in the bundle");
	ok(s->root_readonly, "default: root read-only");
	check_default_process(&s->process);
	check_default_mounts(s, false);
	check_default_linux(s, false);
	ok(s->has_resources, "default: has resources");
	ok(s->resources.n_devices > 1 && !s->resources.devices[0].allow &&
		   strcmp(s->resources.devices[0].access, "rwm") == 0 &&
		   s->resources.devices[0].type == 'a',
	   "default: device rule deny a *:* rwm");
	const struct cg_device_rule *last = &s->resources.devices[s->resources.n_devices - 1];
	ok(last->allow && last->type == 'c' && last->major == 136,
	   "default: runc's standard devices are allowed after the spec's rules");
	rt_spec_free(s);
}

static void test_rootless(void)
{
	struct hutch_err err;
	_cleanup_free_ char *json = rt_spec_default_json(true, NULL);

	struct rt_spec *s = parse(json, bundle, &err);
	ok(s != NULL, "rootless spec parses: %s", err.msg);
	if (!s)
		return;
	check_default_process(&s->process);
	check_default_mounts(s, true);
	check_default_linux(s, true);
	ok(s->n_uid_mappings == 1 && s->uid_mappings[0].container_id == 0 &&
		   s->uid_mappings[0].host_id == geteuid() && s->uid_mappings[0].size == 1,
	   "rootless: uid map 0 -> euid, size 1");
	ok(s->n_gid_mappings == 1 && s->gid_mappings[0].host_id == getegid(),
	   "rootless: gid map 0 -> egid");
	ok(!s->has_resources, "rootless: no resources");
	rt_spec_free(s);
}

static const struct {
	const char *json, *expect;
} errors[] = {
	{ "{", "config.json: invalid JSON: " },
	{ "[1]", "config.json: expected a JSON object" },
	{ "{\"root\":{\"path\":\"r\"}," PROC "}", "ociVersion: required" },
	{ "{\"ociVersion\":1,\"root\":{\"path\":\"r\"}," PROC "}",
	  "ociVersion: expected a string" },
	{ "{\"ociVersion\":\"1.2.0\"," PROC "}", "root: required" },
	{ "{\"ociVersion\":\"1.2.0\",\"root\":{}," PROC "}", "root.path: required" },
	{ "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\",\"readonly\":1}," PROC "}",
	  "root.readonly: expected true or false" },
	{ HEAD "\"hostname\":\"x\"}", "process: required" },
	{ HEAD "\"process\":{\"cwd\":\"/\"}}", "process.args: required" },
	{ HEAD "\"process\":{\"args\":[],\"cwd\":\"/\"}}", "process.args: " },
	{ HEAD "\"process\":{\"args\":[\"sh\",2],\"cwd\":\"/\"}}",
	  "process.args[1]: expected a string" },
	{ HEAD "\"process\":{\"args\":[\"sh\"]}}", "process.cwd: required" },
	{ HEAD "\"process\":{\"args\":[\"sh\"],\"cwd\":\"tmp\"}}", "process.cwd: tmp: must be" },
	{ WITH_PROC("\"env\":[\"A=1\",\"B\"]"), "process.env[1]: B: expected KEY=VALUE" },
	{ WITH_PROC("\"terminal\":\"yes\""), "process.terminal: expected true or false" },
	{ WITH_PROC("\"user\":{\"uid\":\"0\"}"), "process.user.uid: expected an integer" },
	{ WITH_PROC("\"user\":{\"uid\":-1}"), "process.user.uid: -1 out of range" },
	{ WITH_PROC("\"user\":{\"gid\":4294967295}"), "process.user.gid: 4294967295 out of range" },
	{ WITH_PROC("\"user\":{\"uid\":1.5}"), "process.user.uid: 1.5: expected an integer" },
	{ WITH_PROC("\"user\":{\"umask\":512}"), "process.user.umask: 512 out of range" },
	{ WITH_PROC("\"user\":{\"additionalGids\":[1,\"x\"]}"),
	  "process.user.additionalGids[1]: expected an integer" },
	{ WITH_PROC("\"consoleSize\":{\"height\":70000}"), "process.consoleSize.height: 70000" },
	{ WITH_PROC("\"capabilities\":{\"bounding\":[\"CAP_KILL\",\"CAP_FOO\"]}"),
	  "process.capabilities.bounding: unknown capability CAP_FOO" },
	{ WITH_PROC("\"capabilities\":{\"ambient\":\"CAP_KILL\"}"),
	  "process.capabilities.ambient: expected an array" },
	{ WITH_PROC("\"rlimits\":[{\"type\":\"RLIMIT_FOO\",\"soft\":1,\"hard\":1}]"),
	  "process.rlimits[0].type: unknown rlimit RLIMIT_FOO" },
	{ WITH_PROC("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":2,\"hard\":1}]"),
	  "process.rlimits[0]: soft limit 2 above hard limit 1" },
	{ WITH_PROC("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1}]"),
	  "process.rlimits[0].soft: required" },
	{ WITH_PROC("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":-1,\"hard\":1}]"),
	  "process.rlimits[0].soft: -1: expected an unsigned" },
	{ WITH_PROC("\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"soft\":1,\"hard\":1},"
		    "{\"type\":\"RLIMIT_CORE\",\"soft\":1,\"hard\":1}]"),
	  "process.rlimits[1].type: duplicate RLIMIT_CORE" },
	{ WITH_PROC("\"oomScoreAdj\":1001"), "process.oomScoreAdj: 1001 out of range" },
	{ WITH_PROC("\"ioPriority\":{\"class\":\"IOPRIO_CLASS_IDLE\"}"),
	  "process.ioPriority.priority: required" },
	{ WITH_PROC("\"ioPriority\":{\"priority\":1}"), "process.ioPriority.class: required" },
	{ WITH_PROC("\"ioPriority\":{\"class\":\"IOPRIO_CLASS_X\",\"priority\":1}"),
	  "process.ioPriority.class: unknown class IOPRIO_CLASS_X" },
	{ WITH_PROC("\"ioPriority\":{\"class\":\"IOPRIO_CLASS_RT\",\"priority\":8}"),
	  "process.ioPriority.priority: 8 out of range" },
	{ WITH_PROC("\"scheduler\":{\"nice\":1}"), "process.scheduler.policy: required" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_RT\"}"),
	  "process.scheduler.policy: unknown policy SCHED_RT" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_ISO\"}"),
	  "process.scheduler.policy: SCHED_ISO: not supported" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_FIFO\"}"),
	  "process.scheduler.priority: 0 out of range (1 to 99" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_RR\",\"priority\":100}"),
	  "process.scheduler.priority: 100 out of range" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"priority\":1}"),
	  "process.scheduler.priority: only SCHED_FIFO and SCHED_RR" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"nice\":20}"),
	  "process.scheduler.nice: 20 out of range" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"flags\":[\"X\"]}"),
	  "process.scheduler.flags: unknown flag X" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_OTHER\","
		    "\"flags\":[\"SCHED_FLAG_UTIL_CLAMP_MAX\"]}"),
	  "process.scheduler.flags: SCHED_FLAG_UTIL_CLAMP_MAX: not supported" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_BATCH\",\"runtime\":5000}"),
	  "process.scheduler: runtime, deadline and period are for SCHED_DEADLINE only" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"runtime\":1000,"
		    "\"deadline\":5000}"),
	  "process.scheduler.runtime: SCHED_DEADLINE needs at least 1024 ns" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"runtime\":5000,"
		    "\"deadline\":9000,\"period\":8000}"),
	  "SCHED_DEADLINE needs runtime <= deadline <= period" },
	{ WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"runtime\":5000}"),
	  "SCHED_DEADLINE needs runtime <= deadline <= period" },
	{ HEAD "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"scheduler\":{\"policy\":"
	       "\"SCHED_DEADLINE\",\"runtime\":5000,\"deadline\":9000}},"
	       "\"hooks\":{\"startContainer\":[{\"path\":\"/bin/true\"}]}}",
	  "process.scheduler: SCHED_DEADLINE with startContainer hooks: not supported" },
	{ WITH_PROC("\"execCPUAffinity\":{\"initial\":\"0\"}"),
	  "process.execCPUAffinity: not supported" },
	{ SPEC("\"mounts\":{}"), "mounts: expected an array" },
	{ SPEC("\"mounts\":[{\"type\":\"tmpfs\"}]"), "mounts[0].destination: required" },
	{ SPEC("\"mounts\":[{\"destination\":\"/a\",\"options\":[1]}]"),
	  "mounts[0].options[0]: expected a string" },
	{ SPEC("\"mounts\":[{\"destination\":\"/a\",\"uidMappings\":[{\"containerID\":0}]}]"),
	  "mounts[0].uidMappings[0].hostID: required" },
	{ SPEC("\"mounts\":[{\"destination\":\"/a\",\"type\":\"tmpfs\",\"uidMappings\":"
	       "[{\"containerID\":0,\"hostID\":1,\"size\":1}]}]"),
	  "mounts[0]: idmapped mounts must be binds" },
	{ SPEC("\"mounts\":[{\"destination\":\"/a\",\"type\":\"bind\",\"source\":\"/x\","
	       "\"uidMappings\":[{\"containerID\":0,\"hostID\":1,\"size\":1}]}]"),
	  "mounts[0]: uidMappings and gidMappings go together" },
	{ SPEC("\"mounts\":[{\"destination\":\"/a\",\"type\":\"bind\",\"source\":\"/x\","
	       "\"options\":[\"idmap\"]}]"),
	  "mounts[0]: idmap without uidMappings needs linux.uidMappings" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"foo\"}]"),
	  "linux.namespaces[1].type: unknown namespace type foo" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"pid\"}]"),
	  "linux.namespaces[1].type: duplicate namespace type pid" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"network\",\"path\":\"proc/1/ns/net\"}]"),
	  "linux.namespaces[0].path: proc/1/ns/net: must be" },
	{ WITH_LINUX("\"namespaces\":[{\"path\":\"/x\"}]"), "linux.namespaces[0].type: required" },
	{ WITH_LINUX("\"namespaces\":{}"), "linux.namespaces: expected an array" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"user\"}]"), "linux.uidMappings: required" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"user\"}],"
		     "\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}]"),
	  "linux.gidMappings: required" },
	{ WITH_LINUX("\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}]"),
	  "linux.uidMappings: given without a user namespace" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"user\"}],"
		     "\"uidMappings\":[{\"containerID\":0,\"hostID\":1000}]"),
	  "linux.uidMappings[0].size: required" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"user\"}],"
		     "\"gidMappings\":[{\"containerID\":0,\"hostID\":-5,\"size\":1}]"),
	  "linux.gidMappings[0].hostID: -5 out of range" },
	{ WITH_LINUX("\"sysctl\":{\"kernel.msgmax\":8192}"),
	  "linux.sysctl.kernel.msgmax: expected a string" },
	{ WITH_LINUX("\"sysctl\":{\"net.ipv4.ip_forward\":\"1\"}"), "linux.sysctl: " },
	{ WITH_LINUX("\"sysctl\":{\"user.max_inotify_instances\":\"16\"}"),
	  "linux.sysctl: sysctl user.max_inotify_instances needs a new user namespace" },
	{ WITH_LINUX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"x\",\"major\":1,\"minor\":1}]"),
	  "linux.devices[0].type: unknown device type x" },
	{ WITH_LINUX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\",\"minor\":1}]"),
	  "linux.devices[0].major: required" },
	{ WITH_LINUX("\"devices\":[{\"path\":\"dev/x\",\"type\":\"p\"}]"),
	  "linux.devices[0].path: dev/x: must be" },
	{ WITH_LINUX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"p\",\"fileMode\":65536}]"),
	  "linux.devices[0].fileMode: 65536 out of range" },
	{ WITH_LINUX("\"rootfsPropagation\":\"sideways\""),
	  "linux.rootfsPropagation: unknown propagation sideways" },
	{ WITH_LINUX("\"maskedPaths\":[\"/proc/kcore\",\"proc/keys\"]"),
	  "linux.maskedPaths[1]: proc/keys: must be" },
	{ WITH_LINUX("\"readonlyPaths\":\"/proc/sys\""), "linux.readonlyPaths: expected an array" },
	{ WITH_LINUX("\"cgroupsPath\":5"), "linux.cgroupsPath: expected a string" },
	{ WITH_LINUX("\"mountLabel\":\"system_u:object_r:container_file_t:s0\""),
	  "linux.mountLabel: not supported" },
	{ WITH_LINUX("\"intelRdt\":{\"closID\":\"x\"}"), "linux.intelRdt: not supported" },
	{ WITH_LINUX("\"personality\":{}"), "linux.personality.domain: required" },
	{ WITH_LINUX("\"personality\":{\"domain\":\"LINUX64\"}"),
	  "linux.personality.domain: unknown domain LINUX64" },
	{ WITH_LINUX("\"personality\":{\"domain\":\"LINUX\",\"flags\":[\"UNAME26\"]}"),
	  "linux.personality.flags: UNAME26: not supported" },
	{ WITH_LINUX("\"timeOffsets\":{\"monotonic\":{\"secs\":1}}"),
	  "linux.timeOffsets: needs a time namespace" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"time\",\"path\":\"/proc/1/ns/time\"}],"
		     "\"timeOffsets\":{\"monotonic\":{\"secs\":1}}"),
	  "linux.timeOffsets: not supported when joining a time namespace" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"time\"}],"
		     "\"timeOffsets\":{\"realtime\":{\"secs\":1}}"),
	  "linux.timeOffsets.realtime: unknown clock" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"time\"}],"
		     "\"timeOffsets\":{\"boottime\":{\"nanosecs\":1000000000}}"),
	  "linux.timeOffsets.boottime.nanosecs: 1000000000 out of range" },
	{ WITH_LINUX("\"namespaces\":[{\"type\":\"time\"}],"
		     "\"timeOffsets\":{\"boottime\":{\"secs\":\"1\"}}"),
	  "linux.timeOffsets.boottime.secs: expected an integer" },
	{ WITH_LINUX("\"memoryPolicy\":{\"nodes\":\"0\"}"), "linux.memoryPolicy.mode: required" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_X\"}"),
	  "linux.memoryPolicy.mode: unknown mode MPOL_X" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\"}"),
	  "linux.memoryPolicy.nodes: required by MPOL_BIND" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_LOCAL\",\"nodes\":\"0\"}"),
	  "linux.memoryPolicy.nodes: MPOL_LOCAL takes no nodes" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\"0\","
		     "\"flags\":[\"MPOL_F_STATIC_NODES\",\"MPOL_F_RELATIVE_NODES\"]}"),
	  "MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\"0\","
		     "\"flags\":[\"MPOL_F_X\"]}"),
	  "linux.memoryPolicy.flags: unknown flag MPOL_F_X" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\"3-1\"}"),
	  "linux.memoryPolicy.nodes: 3-1: a range must go upwards" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\"0,1024\"}"),
	  "linux.memoryPolicy.nodes: 1024: node 1024 out of range (0 to 1023)" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\"0,,1\"}"),
	  "linux.memoryPolicy.nodes: \"0,,1\": expected nodes" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\"1,\"}"),
	  "linux.memoryPolicy.nodes: \"1,\": ends with a comma" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\"-1\"}"),
	  "linux.memoryPolicy.nodes: -1: expected a node" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\"2-x\"}"),
	  "linux.memoryPolicy.nodes: 2-x: expected a node" },
	{ WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\" 1\"}"),
	  "linux.memoryPolicy.nodes:  1: expected a node" },
	{ WITH_LINUX("\"netDevices\":{\"eth0\":{}}"), "linux.netDevices: not supported" },
	{ WITH_LINUX("\"resources\":[]"), "linux.resources: expected an object" },
	{ WITH_LINUX("\"resources\":{\"memory\":{\"kernelTCP\":\"x\"}}"),
	  "linux.resources.memory.kernelTCP: expected" },
	{ SPEC("\"linux\":[]"), "linux: expected an object" },
	{ SPEC("\"hooks\":{\"prestart\":[{\"args\":[\"x\"]}]}"),
	  "hooks.prestart[0].path: required" },
	{ SPEC("\"hooks\":{\"createRuntime\":[{\"path\":\"bin/true\"}]}"),
	  "hooks.createRuntime[0].path: bin/true: must be" },
	{ SPEC("\"hooks\":{\"poststop\":[{\"path\":\"/a\"},{\"path\":\"/b\",\"timeout\":0}]}"),
	  "hooks.poststop[1].timeout: 0 out of range" },
	{ SPEC("\"hooks\":{\"startContainer\":[{\"path\":\"/a\",\"env\":[\"X\"]}]}"),
	  "hooks.startContainer[0].env[0]: X: expected KEY=VALUE" },
	{ SPEC("\"hooks\":{\"poststart\":{}}"), "hooks.poststart: expected an array" },
	{ SPEC("\"annotations\":{\"a\":\"1\",\"b\":2}"), "annotations.b: expected a string" },
	{ SPEC("\"hostname\":\"box\""), "hostname: needs a UTS namespace" },
	{ SPEC("\"domainname\":[]"), "domainname: expected a string" },
};

static void test_errors(void)
{
	struct hutch_err err;

	for (size_t i = 0; i < ARRAY_SIZE(errors); i++) {
		struct rt_spec *s = parse(errors[i].json, NULL, &err);
		ok(!s && err.code > 0 && strstr(err.msg, errors[i].expect) &&
			   !strchr(err.msg, '\n'),
		   "error %zu: \"%s\" (got \"%s\")", i, errors[i].expect, err.msg);
		rt_spec_free(s);
	}
}

static void test_root_path(void)
{
	struct hutch_err err;
	_cleanup_free_ char *missing =
		hutch_xasprintf("root.path: %s/nope: No such file or directory", bundle);
	_cleanup_free_ char *expect = hutch_xasprintf("%s/rootfs", bundle);
	struct rt_spec *s;

	s = parse("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"nope\"}," PROC "}", bundle, &err);
	ok(!s && strcmp(err.msg, missing) == 0, "missing root.path named: %s", err.msg);
	rt_spec_free(s);
	s = parse("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"afile\"}," PROC "}", bundle,
		  &err);
	ok(!s && strstr(err.msg, "root.path: ") && strstr(err.msg, "Not a directory"),
	   "root.path that is a file: %s", err.msg);
	rt_spec_free(s);

	/* Relative: against the bundle, not the cwd; absolute: as is. */
	s = parse(SPEC("\"x\":1"), bundle, &err);
	ok(s && strcmp(s->rootfs, expect) == 0 && strcmp(s->root_path, "rootfs") == 0,
	   "relative root.path resolved against the bundle");
	ok(s && strcmp(s->bundle, bundle) == 0 && !s->root_readonly, "bundle kept absolute");
	rt_spec_free(s);
}

static void test_load(void)
{
	struct hutch_err err;
	struct rt_spec *s = NULL;
	char path[PATH_MAX + 16];
	_cleanup_free_ char *json = rt_spec_default_json(false, NULL);

	snprintf(path, sizeof(path), "%s/config.json", bundle);
	FILE *f = fopen(path, "w");
	ok(f && fputs(json, f) >= 0 && fclose(f) == 0, "config.json written");
	ok(rt_spec_load(bundle, &s, &err) == 0 && s && s->n_mounts == 7,
	   "rt_spec_load reads <bundle>/config.json: %s", err.msg);
	rt_spec_free(s);
	s = NULL;
	ok(rt_spec_load("/nonexistent-bundle", &s, &err) < 0 && strstr(err.msg, "config.json"),
	   "rt_spec_load of a missing bundle names config.json: %s", err.msg);
}

static void test_unknown_ignored(void)
{
	struct hutch_err err;
	struct rt_spec *s =
		parse("{\"ociVersion\":\"1.2.0\",\"future\":{\"a\":[1]},\"root\":{\"path\":\"r\","
		      "\"z\":1},"
		      "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"shiny\":true,"
		      "\"user\":{\"uid\":1,\"username\":\"w\"},\"commandLine\":\"x\"},"
		      "\"mounts\":[{\"destination\":\"/a\",\"type\":\"tmpfs\",\"extra\":2}],"
		      "\"linux\":{\"newThing\":{},\"namespaces\":[{\"type\":\"uts\",\"x\":1}],"
		      "\"personality\":null,\"intelRdt\":{},\"netDevices\":{},\"mountLabel\":\"\"},"
		      "\"windows\":{\"layerFolders\":[]},\"vm\":{}}",
		      NULL, &err);
	ok(s != NULL, "unknown fields ignored, null/empty unsupported ones pass: %s", err.msg);
	ok(s && s->process.user.uid == 1 && s->n_mounts == 1 && s->n_namespaces == 1 && !s->rootfs,
	   "known fields read beside unknown ones; no bundle, no rootfs resolution");
	rt_spec_free(s);
}

static void test_values(void)
{
	struct hutch_err err;
	struct rt_spec *s = parse(
		HEAD
		"\"process\":{\"args\":[\"sh\",\"-c\",\"x\"],\"cwd\":\"/w\",\"terminal\":false,"
		"\"consoleSize\":{\"height\":24,\"width\":80},\"oomScoreAdj\":-1000,"
		"\"user\":{\"uid\":1000,\"gid\":4294967294,\"umask\":18,"
		"\"additionalGids\":[5,6]},\"apparmorProfile\":\"p\",\"selinuxLabel\":\"\","
		"\"capabilities\":{\"ambient\":[\"CAP_SYS_ADMIN\"],\"inheritable\":[]},"
		"\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"soft\":18446744073709551615,"
		"\"hard\":18446744073709551615}]},"
		"\"hostname\":\"box\",\"domainname\":\"example\","
		"\"mounts\":[{\"destination\":\"data\",\"type\":\"none\",\"source\":\"src\","
		"\"options\":[\"rbind\",\"ro\"]},{\"destination\":\"/b\",\"type\":\"bind\","
		"\"source\":\"/tmp\"}],"
		"\"linux\":{\"namespaces\":[{\"type\":\"uts\"},{\"type\":\"network\","
		"\"path\":\"/proc/1/ns/net\"},{\"type\":\"user\",\"path\":\"\"}],"
		"\"uidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}],"
		"\"gidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}],"
		"\"devices\":[{\"path\":\"/dev/fuse\",\"type\":\"c\",\"major\":10,"
		"\"minor\":229,\"fileMode\":438,\"uid\":0,\"gid\":0},"
		"{\"path\":\"/dev/fifo\",\"type\":\"p\"}],"
		"\"rootfsPropagation\":\"rslave\",\"cgroupsPath\":\"/a/b\"},"
		"\"hooks\":{\"prestart\":[{\"path\":\"/bin/true\",\"args\":[\"true\"],"
		"\"env\":[\"A=b\"],\"timeout\":5}],\"poststop\":[{\"path\":\"/bin/x\"}]},"
		"\"annotations\":{\"org.example\":\"v\"}}",
		bundle, &err);
	ok(s != NULL, "full spec parses: %s", err.msg);
	if (!s)
		return;
	const struct rt_process *p = &s->process;
	ok(!p->terminal && p->console_height == 24 && p->console_width == 80, "console size");
	ok(p->user.uid == 1000 && p->user.gid == 4294967294u && p->user.has_umask &&
		   p->user.umask == 022,
	   "user uid/gid/umask");
	ok(p->user.n_additional_gids == 2 && p->user.additional_gids[1] == 6, "additionalGids");
	ok(p->has_oom_score_adj && p->oom_score_adj == -1000, "oomScoreAdj -1000");
	ok(p->caps.ambient == (UINT64_C(1) << CAP_SYS_ADMIN) && p->caps.bounding == 0,
	   "capabilities: ambient only");
	ok(p->n_rlimits == 1 && p->rlimits[0].soft == UINT64_MAX &&
		   p->rlimits[0].hard == UINT64_MAX,
	   "rlimit of 2^64-1 (RLIM_INFINITY)");
	is_str(p->apparmor_profile, "p", "apparmorProfile kept");
	is_str(s->mounts[0].destination, "/data", "relative mount destination made absolute");
	char src[PATH_MAX + 16];
	snprintf(src, sizeof(src), "%s/src", bundle);
	ok(s->mounts[0].bind && s->mounts[0].recursive && strcmp(s->mounts[0].type, "bind") == 0 &&
		   strcmp(s->mounts[0].source, src) == 0 && (s->mounts[0].flags & MS_RDONLY),
	   "rbind: type bind, relative source under the bundle");
	ok(s->mounts[1].bind && !s->mounts[1].recursive, "type bind alone is a bind mount");
	ok(rt_spec_new_ns(s, CLONE_NEWUTS) && !rt_spec_new_ns(s, CLONE_NEWNET) &&
		   rt_spec_ns(s, CLONE_NEWNET) &&
		   strcmp(rt_spec_ns(s, CLONE_NEWNET)->path, "/proc/1/ns/net") == 0 &&
		   rt_spec_new_ns(s, CLONE_NEWUSER),
	   "namespaces: new uts, joined net, empty path = new user");
	ok(s->n_uid_mappings == 1 && s->uid_mappings[0].host_id == 100000 &&
		   s->uid_mappings[0].size == 65536,
	   "uid mappings");
	ok(s->n_devices == 2 && s->devices[0].type == 'c' && s->devices[0].major == 10 &&
		   s->devices[0].minor == 229 && s->devices[0].file_mode == 0666 &&
		   s->devices[1].type == 'p' && s->devices[1].file_mode == 0666,
	   "devices (fifo without numbers, fileMode default 0666)");
	ok(s->rootfs_propagation == (MS_SLAVE | MS_REC), "rootfsPropagation rslave");
	is_str(s->cgroups_path, "/a/b", "cgroupsPath");
	const struct rt_hooks *h = &s->hooks[RT_HOOK_PRESTART];
	ok(h->n == 1 && strcmp(h->v[0].path, "/bin/true") == 0 && h->v[0].timeout == 5 &&
		   strcmp(h->v[0].env[0], "A=b") == 0 && strcmp(h->v[0].args[0], "true") == 0,
	   "prestart hook");
	ok(s->hooks[RT_HOOK_POSTSTOP].n == 1 && s->hooks[RT_HOOK_POSTSTOP].v[0].timeout == 0 &&
		   s->hooks[RT_HOOK_CREATE_RUNTIME].n == 0,
	   "poststop hook, no createRuntime");
	ok(s->n_annotations == 1 && strcmp(s->annotations[0].key, "org.example") == 0 &&
		   strcmp(s->annotations[0].value, "v") == 0,
	   "annotations");
	is_str(s->domainname, "example", "domainname");
	rt_spec_free(s);
}

/* The kernel attributes, parsed to the values the syscalls take. */
static void test_personality(void)
{
	struct hutch_err err;
	struct rt_spec *s = parse(
		WITH_LINUX("\"personality\":{\"domain\":\"LINUX32\",\"flags\":[]}"), NULL, &err);
	ok(s && s->has_personality && s->personality == 0x0008,
	   "personality LINUX32 (PER_LINUX32), no flags: %s", err.msg);
	char *json = NULL;
	ok(s && rt_spec_write(s, &json, &err) == -EOPNOTSUPP && !json &&
		   strstr(err.msg, "spec writer: linux.personality: not supported"),
	   "the spec writer refuses what it cannot write: %s", err.msg);
	rt_spec_free(s);
	s = parse(SPEC("\"linux\":{}"), NULL, &err);
	ok(s && !s->has_personality, "no personality unless asked");
	rt_spec_free(s);
}

static void test_ioprio(void)
{
	struct hutch_err err;
	struct rt_spec *s =
		parse(WITH_PROC("\"ioPriority\":{\"class\":\"IOPRIO_CLASS_IDLE\",\"priority\":4}"),
		      NULL, &err);
	ok(s && s->process.ioprio.set && s->process.ioprio.class == 3 &&
		   s->process.ioprio.level == 4,
	   "ioPriority idle 4: %s", err.msg);
	rt_spec_free(s);
	struct rt_process p;
	ok(rt_process_parse("{\"args\":[\"ls\"],\"cwd\":\"/\",\"ioPriority\":{\"class\":"
			    "\"IOPRIO_CLASS_RT\",\"priority\":0}}",
			    &p, &err) == 0 &&
		   p.ioprio.set && p.ioprio.class == 1 && p.ioprio.level == 0,
	   "exec --process: its own ioPriority");
	rt_process_free(&p);
}

static void test_sched(void)
{
	struct hutch_err err;
	struct rt_spec *s =
		parse(WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_DEADLINE\","
				"\"runtime\":1024,\"deadline\":2048,\"flags\":["
				"\"SCHED_FLAG_RESET_ON_FORK\",\"SCHED_FLAG_DL_OVERRUN\"]}"),
		      NULL, &err);
	const struct ns_sched *sc = s ? &s->process.sched : NULL;
	ok(sc && sc->set && sc->policy == 6 && sc->runtime == 1024 && sc->deadline == 2048 &&
		   sc->period == 0 && sc->flags == 0x05,
	   "scheduler: deadline, its times, flags or'ed: %s", err.msg);
	rt_spec_free(s);
	s = parse(WITH_PROC("\"scheduler\":{\"policy\":\"SCHED_BATCH\",\"nice\":-20}"), NULL, &err);
	sc = s ? &s->process.sched : NULL;
	ok(sc && sc->set && sc->policy == 3 && sc->nice == -20 && sc->priority == 0,
	   "scheduler: batch, nice -20: %s", err.msg);
	rt_spec_free(s);
	s = parse(HEAD "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"scheduler\":{\"policy\":"
		       "\"SCHED_DEADLINE\",\"runtime\":5000,\"deadline\":9000,\"flags\":["
		       "\"SCHED_FLAG_RESET_ON_FORK\"]}},"
		       "\"hooks\":{\"startContainer\":[{\"path\":\"/bin/true\"}]}}",
		  NULL, &err);
	ok(s != NULL, "SCHED_DEADLINE reset on fork may fork startContainer hooks: %s", err.msg);
	rt_spec_free(s);
}

static void test_mempolicy(void)
{
	struct hutch_err err;
	struct rt_spec *s = parse(WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_INTERLEAVE\","
					     "\"nodes\":\"0-2,5,63-65,1023\","
					     "\"flags\":[\"MPOL_F_STATIC_NODES\"]}"),
				  NULL, &err);
	ok(s != NULL, "memoryPolicy parses: %s", err.msg);
	if (!s)
		return;
	const unsigned long *n = s->mempolicy.nodes;
	bool rest_empty = true;
	for (size_t i = 2; i < ARRAY_SIZE(s->mempolicy.nodes) - 1; i++)
		rest_empty = rest_empty && !n[i];
	ok(s->mempolicy.set && s->mempolicy.mode == (3 | 1 << 15) && n[0] == (0x27UL | 1UL << 63) &&
		   n[1] == 0x3 && rest_empty && n[ARRAY_SIZE(s->mempolicy.nodes) - 1] == 1UL << 63,
	   "memoryPolicy: mode with flags, nodes 0-2,5,63-65,1023 as a mask");
	rt_spec_free(s);
	s = parse(WITH_LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_PREFERRED\",\"nodes\":\"\"}"), NULL,
		  &err);
	ok(s && s->mempolicy.set && s->mempolicy.mode == 1 && !s->mempolicy.nodes[0],
	   "MPOL_PREFERRED without nodes (local allocation): %s", err.msg);
	rt_spec_free(s);
}

static void test_time_offsets(void)
{
	struct hutch_err err;
	struct rt_spec *s = parse(WITH_LINUX("\"namespaces\":[{\"type\":\"time\"}],"
					     "\"timeOffsets\":{\"monotonic\":{\"secs\":-5,"
					     "\"nanosecs\":7},\"boottime\":{\"secs\":86400}}"),
				  NULL, &err);
	ok(s && s->has_time_offsets && s->time_offsets.monotonic_secs == -5 &&
		   s->time_offsets.monotonic_nsecs == 7 && s->time_offsets.boottime_secs == 86400 &&
		   s->time_offsets.boottime_nsecs == 0 && rt_spec_new_ns(s, CLONE_NEWTIME),
	   "timeOffsets: both clocks, with a new time namespace: %s", err.msg);
	rt_spec_free(s);
	s = parse(WITH_LINUX("\"timeOffsets\":{}"), NULL, &err);
	ok(s && !s->has_time_offsets, "{} offsets ask for nothing: %s", err.msg);
	rt_spec_free(s);
}

static void test_process_alone(void)
{
	struct hutch_err err;
	struct rt_process p;

	hutch_err_clear(&err);
	ok(rt_process_parse("{\"args\":[\"ls\"],\"cwd\":\"/\",\"env\":[\"A=1\"]}", &p, &err) == 0 &&
		   strcmp(p.args[0], "ls") == 0 && strcmp(p.env[0], "A=1") == 0,
	   "rt_process_parse: %s", err.msg);
	rt_process_free(&p);
	ok(rt_process_parse("{\"args\":[\"ls\"],\"cwd\":\"/\"}", &p, &err) == 0 && p.env &&
		   !p.env[0],
	   "absent env is an empty list");
	rt_process_free(&p);
	ok(rt_process_parse("{\"args\":", &p, &err) < 0 &&
		   strstr(err.msg, "process: invalid JSON: "),
	   "rt_process_parse syntax error: %s", err.msg);
	ok(rt_process_parse("{\"args\":[\"ls\"]}", &p, &err) < 0 &&
		   strcmp(err.msg, "process.cwd: required") == 0,
	   "rt_process_parse names process.cwd");
}

/* linux.seccomp is cut out as text and compiled (and so checked) only at create. */
static void test_seccomp_text(void)
{
	struct hutch_err err = { 0 };
	struct sc_filter *f = NULL;
	static const char good[] = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":"
				   "[{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_ERRNO\"}]}";

	setenv("HUTCH_SECCOMP_CACHE", "off", 1);
	struct rt_spec *s = parse(WITH_LINUX("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\","
					     "\"syscalls\":[{\"names\":[\"getppid\"],"
					     "\"action\":\"SCMP_ACT_ERRNO\"}]}"),
				  bundle, &err);
	ok(s && s->has_seccomp && s->seccomp_json && !strcmp(s->seccomp_json, good),
	   "linux.seccomp kept as its own bytes");
	ok(s && rt_spec_compile_seccomp(s, &f, &err) == 0 && f, "and compiled from them (%s)",
	   err.msg);
	sc_filter_free(f);
	rt_spec_free(s);

	s = parse(WITH_LINUX("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_NOPE\"}"), bundle, &err);
	ok(s != NULL, "a bad profile parses as text");
	ok(s && rt_spec_compile_seccomp(s, &f, &err) < 0 &&
		   strstr(err.msg, "linux.seccomp.defaultAction") != NULL,
	   "compiling it names the field: %s", err.msg);
	rt_spec_free(s);

	s = parse(WITH_LINUX("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"},"
			     "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_KILL\"}"),
		  bundle, &err);
	ok(s && s->has_seccomp && !s->seccomp_json,
	   "a repeated key is not cut: the parser decides as before");
	rt_spec_free(s);

	s = parse(WITH_LINUX("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"],\"sysctl\":{}"),
		  bundle, &err);
	ok(!s && strstr(err.msg, "config.json: invalid JSON"),
	   "a profile closed by ']' is not JSON, and the spec says so (%s)", err.msg);
}

/* hutch_json_check_nul: where a NUL byte sits, named as the spec parsers name fields. */
static void test_nul(void)
{
	static const struct {
		const char *json, *want; /* want NULL: accepted */
	} cases[] = {
		{ "{\"process\": {\"args\": [\"a\", \"b\\u0000c\"]}}", "x: process.args[1]: " },
		{ "{\"mounts\": [{\"d\": 1}, {\"t\": true, \"destination\": \"\\u0000\"}]}",
		  "x: mounts[1].destination: " },
		{ "{\"a\": [[1, 2], [null, \"\\u0000\"]]}", "x: a[1][1]: " },
		{ "{\"k\\u0000\": 1}", "x: (a key): " },
		{ "[\"\\u0000\"]", "x: [0]: " },
		{ "{\"a\": \"\\\\u0000\"}", NULL },	  /* an escaped backslash, then text */
		{ "{\"a\": \"\\\\\\u0000\"}", "x: a: " }, /* \\ then a NUL */
		{ "{\"a\": \"u0000\", /* \\u0000 */ \"b\": 1}", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct hutch_err err = { 0 };
		int r = hutch_json_check_nul(cases[i].json, "x", &err);
		if (!cases[i].want)
			ok(r == 0, "no NUL in %s", cases[i].json);
		else
			ok(r == -EINVAL &&
				   strncmp(err.msg, cases[i].want, strlen(cases[i].want)) == 0,
			   "%s: %s", cases[i].json, err.msg);
	}
}

/* s at the very end of a page that an inaccessible one follows: a read past its NUL faults
 * in any build, not only under ASan. */
static char *at_page_end(const char *s)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p + pg, pg, PROT_NONE) < 0)
		abort();
	return memcpy(p + pg - strlen(s) - 1, s, strlen(s) + 1);
}

static void test_sandbox_args(void)
{
	struct hutch_err err = { 0 };
	struct rt_sb_opts o;
	char *dash[] = { "sandbox", at_page_end("-"), NULL };

	rt_sb_opts_init(&o);
	ok(rt_sb_parse_args(&o, 2, dash, &err) == -EINVAL && strstr(err.msg, "unknown flag -"),
	   "sandbox: a lone - is an unknown flag, read within its two bytes (%s)", err.msg);
	rt_sb_opts_free(&o);
}

/* A rootless run's plan on host uid 1000: the subordinate ranges at 100000, the workspace's
 * files owned by 7:8. */
static const struct rt_sb_plan sandbox_plan = { .rootfs = "/r",
						.host_uid = 1000,
						.host_gid = 1000,
						.sub_uid = 100000,
						.sub_gid = 100000,
						.write_uid = 7,
						.write_gid = 8,
						.cgroups_path = "/h" };

/* Options rt_sb_check accepts, as `hutch sandbox` turns them into a typed spec (rt_sb_spec):
 * one that config.json's parser takes as written for a delegate (rt_spec_write), and that
 * reads back as itself. idmapped: the workspace and rw binds are idmapped mounts. */
static int sandbox_spec(char **argv, bool idmapped, bool userns, struct hutch_err *err)
{
	struct rt_sb_plan plan = sandbox_plan;
	plan.userns = userns;
	struct rt_spec *typed = NULL, *parsed = NULL;
	_cleanup_free_ char *text = NULL, *again = NULL;
	struct rt_sb_opts o;
	int argc = 0, r;

	while (argv[argc])
		argc++;
	rt_sb_opts_init(&o);
	r = rt_sb_parse_args(&o, argc, argv, err);
	if (r >= 0)
		r = rt_sb_check(&o, err);
	if (r >= 0) {
		plan.binds = hutch_xcalloc(o.n_binds + 1, sizeof(*plan.binds));
		plan.srcs = hutch_xcalloc(o.n_binds + 1, sizeof(*plan.srcs));
		plan.n_srcs = o.n_binds;
		plan.ws.at = "/s/src/workspace";
		plan.ws_idmapped = idmapped && o.workspace;
		for (size_t i = 0; i < o.n_binds; i++)
			plan.srcs[i].at = "/s/src/bind";
		for (size_t i = 0; idmapped && i < o.n_binds; i++)
			plan.binds[i] = (struct rt_sb_bind_ids){ 5, 6, !o.binds[i].ro };
		r = rt_sb_plan_process(&o, &plan, err);
		if (r >= 0)
			r = rt_sb_spec(&o, &plan, "/b", &typed, err);
		free(plan.binds);
		free(plan.srcs);
		hutch_strv_free(plan.argv);
		free(plan.cwd);
	}
	if (r >= 0)
		r = rt_spec_write(typed, &text, err);
	if (r >= 0)
		r = rt_spec_parse(text, NULL, &parsed, err);
	if (r >= 0)
		r = rt_spec_write(parsed, &again, err);
	if (r >= 0 && strcmp(text, again))
		r = hutch_fail(err, EPROTO, "written, read back and written again:\n%s\n%s", text,
			       again);
	rt_spec_free(typed);
	rt_spec_free(parsed);
	rt_sb_opts_free(&o);
	return r;
}

/* The same document, down to the id maps and mounts, as `hutch sandbox` builds it: */
static void test_sandbox_spec_fields(void)
{
	struct hutch_err err = { 0 };
	struct rt_sb_plan plan = sandbox_plan;
	plan.ws_idmapped = plan.userns = true;
	struct rt_sb_bind_ids ids[2] = { { 0 } };
	struct rt_spec *s = NULL;
	struct rt_sb_opts o;
	char *argv[] = { "sandbox", "-i",     "/r",  "--workspace", "/tmp", "--memory",
			 "8m",	    "--cpus", "0.5", "--pids",	    "9",    "-e",
			 "HOME=/h", "--",     "id",  NULL };

	plan.binds = ids;
	plan.ws.at = "/s/src/workspace"; /* its mount in scratch, made from the fd of /tmp */
	rt_sb_opts_init(&o);
	int r = rt_sb_parse_args(&o, ARRAY_SIZE(argv) - 1, argv, &err);
	if (r >= 0)
		r = rt_sb_plan_process(&o, &plan, &err);
	if (r >= 0)
		r = rt_sb_spec(&o, &plan, "/b", &s, &err);
	hutch_strv_free(plan.argv);
	free(plan.cwd);
	ok(r == 0, "sandbox spec: built (%s)", err.msg);
	if (r < 0) {
		rt_sb_opts_free(&o);
		return;
	}
	/* uid 1000 inside is host 1000; the rest goes to the subordinate range around it */
	ok(s->n_uid_mappings == 3 && s->uid_mappings[0].host_id == 100000 &&
		   s->uid_mappings[0].size == 1000 && s->uid_mappings[1].container_id == 1000 &&
		   s->uid_mappings[1].host_id == 1000 && s->uid_mappings[1].size == 1 &&
		   s->uid_mappings[2].container_id == 1001 &&
		   s->uid_mappings[2].size == RT_SB_ID_SPAN - 1001,
	   "sandbox spec: three uid map lines around the sandbox user");
	const struct ns_mount *ws = NULL;
	for (size_t i = 0; i < s->n_mounts; i++)
		if (!strcmp(s->mounts[i].destination, "/workspace"))
			ws = &s->mounts[i];
	ok(ws && ws->bind && ws->idmap && ws->n_uid_map == 1 && ws->uid_map[0].container_id == 7 &&
		   ws->uid_map[0].host_id == 1000 && ws->gid_map[0].container_id == 8,
	   "sandbox spec: the workspace is an idmapped bind, on-disk 7:8 seen as the user");
	ok(ws && !strcmp(ws->source, "/s/src/workspace"),
	   "sandbox spec: the workspace's source is its mount in scratch, never the path given");
	ok(s->resources.mem_limit.set && s->resources.mem_limit.v == 8 << 20 &&
		   s->resources.cpu_quota.v == 50000 && s->resources.cpu_period.v == 100000 &&
		   s->resources.pids_limit.v == 9 && s->n_device_rules == 1 &&
		   !s->resources.devices[0].allow,
	   "sandbox spec: the limits, and devices denied but the defaults");
	ok(cg_is_v2() ? !s->resources.mem_kernel_tcp.set
		      : s->resources.mem_kernel_tcp.v == s->resources.mem_limit.v,
	   "sandbox spec: on v1, TCP buffers capped at the memory limit (kernelTCP)");
	bool home = false;
	for (char **e = s->process.env; *e; e++)
		home |= !strcmp(*e, "HOME=/h");
	ok(home && !s->process.caps.bounding && s->process.no_new_privs && s->root_readonly &&
		   s->seccomp_default && s->seccomp_extras == SC_DEFAULT_NO_SETID,
	   "sandbox spec: HOME as given, no capability, no_new_privs, read-only root, no setid");
	rt_spec_free(s);
	rt_sb_opts_free(&o);
}

static void test_sandbox_check(void)
{
	struct hutch_err err = { 0 };
	char *good[] = { "sandbox", "-i", "/r", "--", "sh", "-c", "true", NULL };
	char *empty[] = { "sandbox", "-i", "/r", "--", "", "x", NULL };

	ok(sandbox_spec(good, false, true, &err) == 0,
	   "sandbox: options make a config that parses (%s)", err.msg);
	char *combos[][24] = {
		{ "sandbox", "-i", "/r", "--as-root", "--memory", "1g", "--cpus", "1.5", "--pids",
		  "64", "--", "id", NULL },
		{ "sandbox",	"-i",	  "/r",	     "--workspace", "/tmp",  "--bind",
		  "/etc:/x:ro", "--bind", "/var:/y", "--tmpfs",	    "/t:1m", "-e",
		  "HOME=/h",	"-e",	  "A=1",     "--network",   "host",  "--hostname",
		  "hh",		"--",	  "id",	     NULL },
		{ "sandbox", "-i", "/r", "--network", "none", "--cwd", "/tmp", "--", "id", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(combos) * 4; i++) {
		err = (struct hutch_err){ 0 };
		ok(sandbox_spec(combos[i / 4], i & 1, i & 2, &err) == 0,
		   "sandbox: options %zu (idmapped %d, userns %d) make a spec that is written, "
		   "read and written back the same (%s)",
		   i / 4, (int)(i & 1), !!(i & 2), err.msg);
	}
	ok(sandbox_spec(empty, false, true, &err) == -EINVAL &&
		   strstr(err.msg, "sandbox: no command"),
	   "sandbox: an empty program name is no command, refused by rt_sb_check (%s)", err.msg);

	/* Linux names are bytes; JSON is UTF-8 (runc would run U+FFFD instead) */
	char *latin1[][8] = {
		{ "sandbox", "-i", "/r", "--", "cat", "caf\xe9.txt", NULL },
		{ "sandbox", "-i", "/r", "-e", "A=\xff", "--", "true", NULL },
		{ "sandbox", "-i", "/r", "--bind", "/src\xc0\xaf:/dst", "--", "true", NULL },
		{ "sandbox", "-i", "/r\xff", "--", "true", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(latin1); i++)
		ok(sandbox_spec(latin1[i], false, true, &err) == -EILSEQ &&
			   strstr(err.msg, "not valid UTF-8"),
		   "sandbox: bytes that are not UTF-8 are refused by rt_sb_check (%s)", err.msg);
	char *utf8[] = { "sandbox", "-i", "/r", "-e", "CITY=M\xc3\xbcnchen", "--", "true", NULL };
	err = (struct hutch_err){ 0 };
	ok(sandbox_spec(utf8, false, true, &err) == 0, "sandbox: UTF-8 passes (%s)", err.msg);
	char *host[] = { "sandbox", "--isolation", "landlock", "--", "cat", "caf\xe9", NULL };
	struct rt_sb_opts o;
	rt_sb_opts_init(&o);
	ok(rt_sb_parse_args(&o, 6, host, &err) == 0 && rt_sb_check(&o, &err) == 0,
	   "sandbox: host mode builds no config, and takes any bytes (%s)", err.msg);
	rt_sb_opts_free(&o);
}

static void test_passwd_home(void)
{
	char h[64] = "";
	ok(rt_passwd_home("root:x:0:0:root:/root:/bin/sh\n", 0, h, sizeof(h)) &&
		   !strcmp(h, "/root"),
	   "passwd: uid 0's home (%s)", h);
	ok(!rt_passwd_home("root:x:0:0:root:/root:/bin/sh\n", 1000, h, sizeof(h)),
	   "passwd: another uid does not match");
	ok(!rt_passwd_home("u:x:10000:1:g:/h:/bin/sh", 1000, h, sizeof(h)) &&
		   !rt_passwd_home("u:x:100:1:g:/h:/bin/sh", 1000, h, sizeof(h)),
	   "passwd: the uid field is compared whole");
	ok(rt_passwd_home("user:x:1000:1000::/home/user", 1000, h, sizeof(h)) &&
		   !strcmp(h, "/home/user"),
	   "passwd: six fields, no shell, no newline (%s)", h);
	ok(!rt_passwd_home("user:x:1000:1000::", 1000, h, sizeof(h)) &&
		   !rt_passwd_home("user:x:1000:1000:::/bin/sh", 1000, h, sizeof(h)),
	   "passwd: an empty home is no home");
	ok(!rt_passwd_home("user:x:1000:1000", 1000, h, sizeof(h)) &&
		   !rt_passwd_home("user:x::1000::/h:/bin/sh", 0, h, sizeof(h)) &&
		   !rt_passwd_home("# comment", 0, h, sizeof(h)) &&
		   !rt_passwd_home("", 0, h, sizeof(h)),
	   "passwd: short, uid-less, comment and empty lines match nothing");
	ok(!rt_passwd_home(
		   "u:x:5:5::/a/very/long/home/directory/that/does/not/fit/in/the/buffer/at/all:/s",
		   5, h, 16),
	   "passwd: a home longer than the buffer is refused, not cut");
}

/* The first value of out whose key is k. */
static const char *kv(const struct cg_kv *v, size_t n, const char *k)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].key, k))
			return v[i].value;
	return NULL;
}

static void test_exec_cgroup(void)
{
	struct hutch_err err = { 0 };
	const struct cg_kv v1[] = { { "cpu,cpuacct", "/c" },
				    { "pids", "/c" },
				    { "name=systemd", "/" } };
	const struct cg_kv v2[] = { { "", "/a/c" } };
	struct cg_kv *out = NULL;
	char *a1[] = { "pids:x/y" }, *a2[] = { "cpuacct,pids:/x/./z/" }, *a3[] = { "x" };
	char *a4[] = { "pids:x", "cpu:w" }, *a5[] = { "x", "pids:y" }, *a6[] = { "../x" };
	char *a7[] = { "pids:a/../../x" }, *a8[] = { "bogus:x" }, *a9[] = { "pids,:x" };
	char *a10[] = { "cpu:a", "cpuacct:b" }, *a11[] = { "pids:a:b" }, *a12[] = { "pids:a/.." };
	ok(rt_exec_cgroup_paths(v1, 3, false, a1, 1, &out, &err) == 0 &&
		   !strcmp(kv(out, 3, "pids"), "/c/x/y") &&
		   !strcmp(kv(out, 3, "cpu,cpuacct"), "/c"),
	   "exec --cgroup: one controller's sub-cgroup, the others unchanged");
	rt_kv_free(out, 3);
	ok(rt_exec_cgroup_paths(v1, 3, false, a2, 1, &out, &err) == 0 &&
		   !strcmp(kv(out, 3, "pids"), "/c/x/z") &&
		   !strcmp(kv(out, 3, "cpu,cpuacct"), "/c/x/z") &&
		   !strcmp(kv(out, 3, "name=systemd"), "/"),
	   "exec --cgroup: co-mounted controllers, a clean relative path");
	rt_kv_free(out, 3);
	ok(rt_exec_cgroup_paths(v1, 3, false, a3, 1, &out, &err) == 0 &&
		   !strcmp(kv(out, 3, "pids"), "/c/x") && !strcmp(kv(out, 3, "name=systemd"), "/x"),
	   "exec --cgroup: no controller is every hierarchy");
	rt_kv_free(out, 3);
	ok(rt_exec_cgroup_paths(v1, 3, false, a4, 2, &out, &err) == 0 &&
		   !strcmp(kv(out, 3, "pids"), "/c/x") &&
		   !strcmp(kv(out, 3, "cpu,cpuacct"), "/c/w"),
	   "exec --cgroup: repeated, one per controller");
	rt_kv_free(out, 3);
	ok(rt_exec_cgroup_paths(v1, 3, false, a12, 1, &out, &err) == 0 &&
		   !strcmp(kv(out, 3, "pids"), "/c"),
	   "exec --cgroup: a/.. is the container's own cgroup");
	rt_kv_free(out, 3);
	ok(rt_exec_cgroup_paths(v2, 1, true, a3, 1, &out, &err) == 0 &&
		   !strcmp(out[0].value, "/a/c/x"),
	   "exec --cgroup: v2");
	rt_kv_free(out, 1);
	out = NULL;
	ok(rt_exec_cgroup_paths(v1, 3, false, a5, 2, &out, &err) < 0 && strstr(err.msg, "only") &&
		   !out,
	   "exec --cgroup: PATH for all is alone (%s)", err.msg);
	ok(rt_exec_cgroup_paths(v1, 3, false, a6, 1, &out, &err) < 0 &&
		   strstr(err.msg, "not a sub-cgroup") &&
		   rt_exec_cgroup_paths(v1, 3, false, a7, 1, &out, &err) < 0 &&
		   strstr(err.msg, "not a sub-cgroup"),
	   "exec --cgroup: .. out of the container's cgroup is refused (%s)", err.msg);
	ok(rt_exec_cgroup_paths(v1, 3, false, a8, 1, &out, &err) < 0 && strstr(err.msg, "bogus") &&
		   rt_exec_cgroup_paths(v1, 3, false, a9, 1, &out, &err) < 0 &&
		   strstr(err.msg, "empty controller") &&
		   rt_exec_cgroup_paths(v1, 3, false, a11, 1, &out, &err) < 0,
	   "exec --cgroup: unknown, empty controllers and two colons are refused (%s)", err.msg);
	ok(rt_exec_cgroup_paths(v1, 3, false, a10, 2, &out, &err) < 0 &&
		   strstr(err.msg, "cpu,cpuacct"),
	   "exec --cgroup: one hierarchy, two sub-cgroups is refused (%s)", err.msg);
	ok(rt_exec_cgroup_paths(v2, 1, true, a1, 1, &out, &err) == -ENOTSUP &&
		   strstr(err.msg, "cgroup v1"),
	   "exec --cgroup: a controller prefix on v2 is not supported (%s)", err.msg);
	ok(rt_exec_cgroup_paths(v1, 0, false, a3, 1, &out, &err) < 0,
	   "exec --cgroup: no known cgroup is refused");
}

/* state.json: saved only as large as it is loaded back; annotations held to their share. */
static void test_state_size(void)
{
	struct hutch_err err = { 0 };
	char dir[] = "/tmp/hutch-test-state.XXXXXX";
	int dirfd = mkdtemp(dir) ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	size_t len = RT_ANNOTATIONS_MAX - strlen("{\"a\":\"\"}");
	char *value = hutch_xmalloc(RT_STATE_MAX + 1);
	memset(value, 'v', RT_STATE_MAX);
	value[len] = '\0';
	struct cg_kv a = { .key = "a", .value = value };
	ok(rt_state_check_annotations(&a, 1, &err) == 0, "annotations of exactly %d bytes pass",
	   RT_ANNOTATIONS_MAX);
	value[len] = 'v', value[len + 1] = '\0';
	ok(rt_state_check_annotations(&a, 1, &err) == -EFBIG &&
		   strstr(err.msg, "annotations: 983041 bytes as JSON, more than the 983040"),
	   "one more is refused: %s", err.msg);
	struct rt_state st = { .id = "c", .bundle = "/b", .annotations = &a, .n_annotations = 1 };
	struct rt_state back = { 0 };
	ok(dirfd >= 0 && rt_state_save(dirfd, &st, &err) == 0 &&
		   rt_state_load(dirfd, "c", &back, &err) == 0 && back.n_annotations == 1 &&
		   strlen(back.annotations[0].value) == len + 1,
	   "a state with them is saved and loaded back (%s)", err.msg);
	rt_state_clear(&back);
	value[len + 1] = 'v', value[RT_STATE_MAX] = '\0';
	ok(rt_state_save(dirfd, &st, &err) == -EFBIG && strstr(err.msg, "more than 1048576"),
	   "a state over %d bytes is not saved: %s", RT_STATE_MAX, err.msg);
	ok(rt_state_load(dirfd, "c", &back, &err) == 0, "the one before stays");
	rt_state_clear(&back);
	unlinkat(dirfd, "state.json", 0);
	rmdir(dir);
	if (dirfd >= 0)
		close(dirfd);
	free(value);
}

/* A created container's spec keeps the root its state names, never looked up again: a named
 * sandbox's is a mount in a namespace of its own, which `sandbox exec` cannot see. */
static void test_state_spec(void)
{
	struct hutch_err err = { 0 };
	struct rt_spec *s = NULL;
	char dir[] = "/tmp/hutch-test-state.XXXXXX";
	int dirfd = mkdtemp(dir) ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	const char *json = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"/no/such/root\"},"
			   "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"}}";
	struct rt_state st = { .id = "c", .bundle = dir, .rootfs = "/no/such/root" };
	ok(dirfd >= 0 &&
		   hutch_write_atomic_at(dirfd, "config.json", json, strlen(json), 0600, &err) == 0,
	   "a config.json whose root does not exist here (%s)", err.msg);
	for (int own = 0; own < 2; own++) {
		st.own_config = own;
		ok(rt_state_load_spec(dirfd, &st, &s, &err) == 0 && s &&
			   !strcmp(s->rootfs, "/no/such/root") && !strcmp(s->bundle, dir),
		   "loaded with the state's root (%s copy): %s",
		   own ? "the state's" : "the bundle's", err.msg);
		rt_spec_free(s);
		s = NULL;
	}
	st.rootfs = NULL; /* a state without one: resolved as at create */
	ok(rt_state_load_spec(dirfd, &st, &s, &err) < 0 && strstr(err.msg, "root.path"),
	   "without the state's, the root is looked up: %s", err.msg);
	unlinkat(dirfd, "config.json", 0);
	rmdir(dir);
	if (dirfd >= 0)
		close(dirfd);
}

int main(void)
{
	test_nul();
	make_bundle();
	test_seccomp_text();
	test_default();
	test_rootless();
	test_errors();
	test_root_path();
	test_load();
	test_unknown_ignored();
	test_values();
	test_personality();
	test_ioprio();
	test_sched();
	test_mempolicy();
	test_time_offsets();
	test_process_alone();
	test_sandbox_args();
	test_sandbox_check();
	test_sandbox_spec_fields();
	test_passwd_home();
	test_exec_cgroup();
	test_state_size();
	test_state_spec();
	remove_bundle();
	return tap_done();
}
