// SPDX-License-Identifier: Apache-2.0
/*
 * `features`: the OCI features document. It lists only what this build really does, so a
 * client never sends a field hutch would refuse or ignore.
 */
#include "rt.h"
#include "rt-json.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void gen_enabled(yajl_gen g, const char *key, bool on)
{
	hutch_json_gen_str(g, key);
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "enabled");
	yajl_gen_bool(g, on);
	yajl_gen_map_close(g);
}

static void gen_caps(yajl_gen g)
{
	hutch_json_gen_str(g, "capabilities");
	yajl_gen_array_open(g);
	for (int c = 0; c <= ns_cap_last(); c++)
		if (ns_cap_name(c))
			hutch_json_gen_str(g, ns_cap_name(c));
	yajl_gen_array_close(g);
}

static void gen_seccomp(yajl_gen g)
{
	static const char *const actions[] = {
		"SCMP_ACT_ALLOW",	 "SCMP_ACT_ERRNO",	 "SCMP_ACT_KILL",
		"SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG",
		"SCMP_ACT_NOTIFY",	 "SCMP_ACT_TRACE",	 "SCMP_ACT_TRAP",
	};
	static const char *const ops[] = { "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT",
					   "SCMP_CMP_LE", "SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ",
					   "SCMP_CMP_NE" };
	static const char *const archs[] = { "SCMP_ARCH_X86", "SCMP_ARCH_X86_64", "SCMP_ARCH_X32" };
	static const char *const flags[] = { "SECCOMP_FILTER_FLAG_LOG",
					     "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
					     "SECCOMP_FILTER_FLAG_TSYNC",
					     "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV" };
	hutch_json_gen_str(g, "seccomp");
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "enabled");
	yajl_gen_bool(g, 1);
	hutch_json_gen_strv(g, "actions", actions, ARRAY_SIZE(actions));
	hutch_json_gen_strv(g, "operators", ops, ARRAY_SIZE(ops));
	hutch_json_gen_strv(g, "archs", archs, ARRAY_SIZE(archs));
	hutch_json_gen_strv(g, "knownFlags", flags, ARRAY_SIZE(flags));
	hutch_json_gen_strv(g, "supportedFlags", flags, ARRAY_SIZE(flags));
	yajl_gen_map_close(g);
}

/* key: {sub: [names]}, one list per table, leaving out the names refused as unsupported. */
static void gen_names(yajl_gen g, const char *key, const char *const *subs,
		      const struct ns_name_value *const *tables, size_t n)
{
	int64_t v;
	hutch_json_gen_str(g, key);
	yajl_gen_map_open(g);
	for (size_t i = 0; i < n; i++) {
		hutch_json_gen_str(g, subs[i]);
		yajl_gen_array_open(g);
		for (const struct ns_name_value *t = tables[i]; t->name; t++)
			if (ns_lookup(tables[i], t->name, &v) == 0)
				hutch_json_gen_str(g, t->name);
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
}

/* The kernel attributes of rt-spec-sched.c under their config.json names, in the shape
 * runtime-spec 1.3 gives memoryPolicy. */
static void gen_kernel_attrs(yajl_gen g)
{
	gen_names(g, "memoryPolicy", (const char *const[]){ "modes", "flags" },
		  (const struct ns_name_value *const[]){ ns_mpol_modes, ns_mpol_flags }, 2);
	gen_names(g, "personality", (const char *const[]){ "domains" },
		  (const struct ns_name_value *const[]){ ns_personality_domains }, 1);
	gen_names(g, "scheduler", (const char *const[]){ "policies", "flags" },
		  (const struct ns_name_value *const[]){ ns_sched_policies, ns_sched_flags }, 2);
	gen_names(g, "ioPriority", (const char *const[]){ "classes" },
		  (const struct ns_name_value *const[]){ ns_ioprio_classes }, 1);
	static const char *const clocks[] = { "monotonic", "boottime" };
	hutch_json_gen_str(g, "timeOffsets");
	yajl_gen_map_open(g);
	hutch_json_gen_strv(g, "clocks", clocks, ARRAY_SIZE(clocks));
	yajl_gen_map_close(g);
}

static void gen_linux(yajl_gen g)
{
	static const char *const ns[] = { "cgroup", "ipc",  "mount", "network",
					  "pid",    "time", "user",  "uts" };
	hutch_json_gen_str(g, "linux");
	yajl_gen_map_open(g);
	hutch_json_gen_strv(g, "namespaces", ns, ARRAY_SIZE(ns));
	gen_caps(g);
	hutch_json_gen_str(g, "cgroup");
	yajl_gen_map_open(g);
	const char *const keys[] = { "v1", "v2", "systemd", "systemdUser", "rdma" };
	const bool vals[] = { true, true, false, false, false };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		hutch_json_gen_str(g, keys[i]);
		yajl_gen_bool(g, vals[i]);
	}
	yajl_gen_map_close(g);
	gen_seccomp(g);
	gen_enabled(g, "apparmor", false);
	gen_enabled(g, "selinux", false);
	gen_enabled(g, "intelRdt", false);
	hutch_json_gen_str(g, "mountExtensions");
	yajl_gen_map_open(g);
	gen_enabled(g, "idmap", true);
	yajl_gen_map_close(g);
	gen_kernel_attrs(g);
	yajl_gen_map_close(g);
}

static RT_VERB_RUN(verb_features)
{
	static const char *const hooks[] = { "prestart",       "createRuntime", "createContainer",
					     "startContainer", "poststart",	"poststop" };
	static const char *const mount_opts[] = {
		"async",	 "atime",      "bind",	    "defaults",	  "dev",
		"diratime",	 "dirsync",    "exec",	    "mand",	  "noatime",
		"nodev",	 "nodiratime", "noexec",    "nomand",	  "norelatime",
		"nostrictatime", "nosuid",     "private",   "rbind",	  "relatime",
		"remount",	 "ro",	       "rprivate",  "rshared",	  "rslave",
		"runbindable",	 "rw",	       "shared",    "slave",	  "strictatime",
		"suid",		 "sync",       "tmpcopyup", "unbindable", "idmap",
		"ridmap",
	};
	/* Recursive: mount_setattr(AT_RECURSIVE) on the mount and all its submounts. */
	static const char *const rec_opts[] = {
		"rro",		"rrw",	      "rnosuid",      "rsuid",
		"rnodev",	"rdev",	      "rnoexec",      "rexec",
		"rnodiratime",	"rdiratime",  "rrelatime",    "rnorelatime",
		"rnoatime",	"ratime",     "rstrictatime", "rnostrictatime",
		"rnosymfollow", "rsymfollow",
	};
	const char *all_opts[ARRAY_SIZE(mount_opts) + ARRAY_SIZE(rec_opts)];
	memcpy(all_opts, mount_opts, sizeof(mount_opts));
	memcpy(all_opts + ARRAY_SIZE(mount_opts), rec_opts, sizeof(rec_opts));
	(void)g, (void)argv, (void)flags;
	if (argc - first != 0)
		return hutch_fail(err, EINVAL, "features: takes no arguments");
	_cleanup_gen_ yajl_gen j = yajl_gen_alloc(NULL);
	yajl_gen_config(j, yajl_gen_beautify, 1);
	yajl_gen_map_open(j);
	hutch_json_gen_kv(j, "ociVersionMin", "1.0.0");
	hutch_json_gen_kv(j, "ociVersionMax", "1.2.0");
	hutch_json_gen_strv(j, "hooks", hooks, ARRAY_SIZE(hooks));
	hutch_json_gen_strv(j, "mountOptions", all_opts, ARRAY_SIZE(all_opts));
	gen_linux(j);
	yajl_gen_map_close(j);
	size_t len;
	_cleanup_free_ char *out = hutch_json_gen_finish(j, &len);
	fwrite(out, 1, len, stdout);
	printf("\n");
	return 0;
}

const struct rt_verb rt_features_verb = {
	.name = "features",
	.summary = "print the OCI features document",
	.usage = "",
	.run = verb_features,
};
