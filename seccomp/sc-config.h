/* SPDX-License-Identifier: Apache-2.0 */
/* A seccomp profile as plain data (struct sc_config): its names, its OCI JSON and the built-in
 * default profile. Included through sc.h. */
#ifndef HUTCH_SC_CONFIG_H
#define HUTCH_SC_CONFIG_H

#include "hutch-base.h"

#include <stdint.h>

enum sc_op { SC_OP_NE = 1, SC_OP_LT, SC_OP_LE, SC_OP_EQ, SC_OP_GE, SC_OP_GT, SC_OP_MASKED_EQ };

struct sc_arg {
	unsigned int index;
	uint64_t value, value_two;
	enum sc_op op;
};

struct sc_rule {
	char **names; /* NULL-terminated; see sc_compile for unknown names */
	size_t n_names;
	uint32_t action; /* SCMP_ACT_* value, with errno/trace data folded in */
	struct sc_arg *args;
	size_t n_args;
};

struct sc_config {
	uint32_t default_action;
	char **archs; /* NULL-terminated, "SCMP_ARCH_X86_64", ...; the native one is implied */
	size_t n_archs;
	struct sc_rule *rules;
	size_t n_rules;
	bool flag_log, flag_spec_allow, flag_tsync, flag_wait_killable_recv;
	char *listener_path;	 /* listenerPath: where the notify fd goes (NOTIFY rules) */
	char *listener_metadata; /* listenerMetadata, passed on verbatim */
};

/* "SCMP_ACT_ERRNO" with errno_ret (or -1 for the default EPERM) -> action value. errno_ret
 * applies to ERRNO and TRACE only (>= 0 with another action fails, as runc). */
int sc_action_from_name(const char *name, int64_t errno_ret, uint32_t *out, struct hutch_err *err);
/* The reverse: action value -> OCI name, and the errnoRet it carries (-1 when none). */
const char *sc_action_name(uint32_t action, int64_t *errno_ret);
int sc_op_from_name(const char *name, enum sc_op *out);
const char *sc_op_name(enum sc_op op);
bool sc_arch_known(const char *name);
/* "SCMP_ARCH_X86_64" -> libseccomp's token (an AUDIT_ARCH_* value, except for X32). */
int sc_arch_token(const char *name, uint32_t *out);
/* "CAP_SYS_ADMIN" -> 21, -EINVAL when unknown (for the default profile's caps conditions). */
int sc_cap_from_name(const char *name);

/* Frees what a config owns (names, archs, rules, args, listener), not cfg itself; accepts
 * NULL. */
void sc_config_free(struct sc_config *cfg);
/* Checks what needs no libseccomp: a NOTIFY rule needs listenerPath and must not name write
 * (the runtime reports over write after loading), arg indexes 0-5, known ops and archs.
 * Errors name the rule: "syscalls[3]: ...". */
int sc_config_check(const struct sc_config *cfg, struct hutch_err *err);

/* The OCI linux.seccomp object (a yajl tree, from the runtime's config.json) -> *out. Errors
 * name the field under prefix ("linux.seccomp.syscalls[3].action: unknown action X"). On
 * failure *out may be partly filled: sc_config_free releases it either way. */
struct yajl_val_s;
int sc_config_from_json(struct yajl_val_s *seccomp, const char *prefix, struct sc_config *out,
			struct hutch_err *err);
/* The same from JSON text. */
int sc_config_parse(const char *text, const char *prefix, struct sc_config *out,
		    struct hutch_err *err);
/* cfg -> OCI linux.seccomp JSON text (malloc'd). */
char *sc_config_to_json(const struct sc_config *cfg, bool pretty);

/*
 * The built-in profile (seccomp/default.json, compiled into the binary): Docker's default,
 * hardened. caps (bit N = capability N, as struct ns_caps) resolves the rules that Docker
 * conditions on capabilities; the native architecture resolves the per-arch ones.
 */
int sc_default_config(uint64_t caps, unsigned extras, struct sc_config *out, struct hutch_err *err);
/* extras: rules on top of the profile. NO_SETID: no setuid/setgid bit by chmod or creation
 * (EPERM), openat2 ENOSYS (its mode is out of seccomp's reach): for sandboxes. */
#define SC_DEFAULT_NO_SETID 1u
/* NO_I386: without the i386 ABI (its syscalls take the bad-arch action): for a profile handed
 * to another runtime, whose libseccomp would allow socket() of any family through socketcall
 * (the family is behind a pointer; hutch's own filters refuse it, sc-mux.c). */
#define SC_DEFAULT_NO_I386 2u
/* The embedded source text (moby's profile format: includes/excludes are not OCI). */
const char *sc_default_profile_json(void);
/* sc_default_config as OCI linux.seccomp JSON, for `hutch spec --seccomp`. */
int sc_default_profile_oci(uint64_t caps, unsigned extras, char **out, struct hutch_err *err);

#endif
