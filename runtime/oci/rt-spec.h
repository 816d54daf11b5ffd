/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OCI runtime spec (config.json) as hutch uses it. rt-spec*.c parse it from JSON with
 * tables, validate it, and fill the modules' plain structs directly, so the recipe passes
 * pieces of it to namespaces/, cgroups/ and seccomp/ without translation. A spec built in
 * memory, the writer and `hutch spec`'s default are in rt-spec-build.h.
 */
#ifndef HUTCH_RT_SPEC_H
#define HUTCH_RT_SPEC_H

#include "hutch-base.h"
#include "ns.h"
#include "cg.h"
#include "sc.h"

enum rt_hook_kind {
	RT_HOOK_PRESTART,
	RT_HOOK_CREATE_RUNTIME,
	RT_HOOK_CREATE_CONTAINER,
	RT_HOOK_START_CONTAINER,
	RT_HOOK_POSTSTART,
	RT_HOOK_POSTSTOP,
	RT_HOOK_COUNT
};

struct rt_hook {
	char *path;
	char **args; /* NULL-terminated, may be NULL */
	char **env;  /* NULL-terminated, may be NULL */
	int timeout; /* seconds, 0 = none */
};

struct rt_hooks {
	struct rt_hook *v;
	size_t n;
};

struct rt_namespace {
	int flag;   /* CLONE_NEW* */
	char *path; /* join this one; NULL = create new */
};

struct rt_process {
	bool terminal;
	unsigned short console_height, console_width;
	char **args; /* NULL-terminated, at least one */
	char **env;  /* NULL-terminated */
	char *cwd;
	struct ns_user user;
	gid_t *gids_storage;
	struct ns_rlimit *rlimits;
	size_t n_rlimits;
	bool has_caps;
	struct ns_caps caps;
	bool no_new_privs;
	bool has_oom_score_adj;
	int oom_score_adj;
	struct ns_ioprio ioprio; /* for exec'd processes too */
	struct ns_sched sched;
	char *apparmor_profile, *selinux_label;
};

struct rt_spec {
	char *oci_version;
	char *bundle;	 /* absolute */
	char *root_path; /* root.path as given */
	char *rootfs;	 /* absolute, resolved by images/ */
	bool root_readonly;
	char *hostname, *domainname;
	struct rt_process process;

	struct ns_mount *mounts;
	size_t n_mounts;
	struct rt_namespace *namespaces;
	size_t n_namespaces;
	struct ns_idmap *uid_mappings, *gid_mappings;
	size_t n_uid_mappings, n_gid_mappings;
	struct ns_sysctl *sysctls;
	size_t n_sysctls;
	struct ns_device *devices;
	size_t n_devices;
	char **masked_paths, **readonly_paths; /* NULL-terminated */
	size_t n_masked_paths, n_readonly_paths;
	unsigned long rootfs_propagation;
	char *cgroups_path;
	bool has_personality;
	unsigned long personality; /* PER_LINUX or PER_LINUX32 */
	struct ns_mempolicy mempolicy;
	bool has_time_offsets;
	struct ns_time_offsets time_offsets;

	bool has_resources;
	struct cg_resources resources;
	struct cg_device_rule *device_rules; /* resources.devices: these, then the defaults */
	size_t n_device_rules;		     /* the spec's own, before the defaults */
	struct cg_kv *unified;

	/* linux.seccomp: kept as its JSON text (seccomp_json) and compiled through a cache keyed
	 * on it, or built in memory (seccomp), or the built-in profile (seccomp_default, for
	 * process.caps.bounding). rt_spec_compile_seccomp handles all three. */
	bool has_seccomp, seccomp_default;
	unsigned seccomp_extras;  /* with seccomp_default: SC_DEFAULT_* rules on top */
	const char *seccomp_json; /* within seccomp_text, config.json's bytes as read */
	char *seccomp_text;
	struct sc_config seccomp;

	struct rt_hooks hooks[RT_HOOK_COUNT];
	struct cg_kv *annotations;
	size_t n_annotations;
};

/* Reads and validates <bundle>/config.json. Errors name the field ("process.args: ..."). */
int rt_spec_load(const char *bundle, struct rt_spec **out, struct hutch_err *err);
/* The same from path at dirfd (create --config FILE; the copy in a state dir), the root
 * still relative to bundle; *ret_text (unless NULL) gets the text as read. */
int rt_spec_load_at(int dirfd, const char *path, const char *bundle, char **ret_text,
		    struct rt_spec **out, struct hutch_err *err);
/* A created container's (rt_state_load_spec): the root is the one create resolved, as its
 * state keeps it (NULL: resolved as above), never looked up again. */
int rt_spec_load_created(int dirfd, const char *path, const char *bundle, const char *rootfs,
			 struct rt_spec **out, struct hutch_err *err);
/* The same from a JSON text (for unit tests and `exec --process`). */
int rt_spec_parse(const char *json, const char *bundle, struct rt_spec **out,
		  struct hutch_err *err);
void rt_spec_free(struct rt_spec *spec);

/* Parses a process object alone (exec --process FILE). */
int rt_process_parse(const char *json, struct rt_process *out, struct hutch_err *err);
void rt_process_free(struct rt_process *p);
/* The kernel makes a capability ambient only when it is permitted and inheritable; runc and
 * crun skip the others (runc's own `spec` asks for three such), so this drops them from
 * p's ambient set, with a warning naming them. Returns how many it dropped. */
int rt_process_skip_ambient(struct rt_process *p);

/* True if the spec asks for a new namespace of this type (and does not join one). */
bool rt_spec_new_ns(const struct rt_spec *spec, int clone_flag);
const struct rt_namespace *rt_spec_ns(const struct rt_spec *spec, int clone_flag);

/* The seccomp program of a spec with has_seccomp (see struct rt_spec). */
int rt_spec_compile_seccomp(struct rt_spec *spec, struct sc_filter **out, struct hutch_err *err);

#endif
