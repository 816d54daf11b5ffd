/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp/: kernel-enforced syscall filters. The OCI linux.seccomp profile is compiled in the
 * parent (libseccomp) into a BPF program before clone, so the child only has to load it: one
 * syscall, after which nothing but the final execve has to be allowed.
 */
#ifndef HUTCH_SC_H
#define HUTCH_SC_H

#include "hutch-base.h"

#include <stdint.h>

enum sc_op { SC_OP_NE = 1, SC_OP_LT, SC_OP_LE, SC_OP_EQ, SC_OP_GE, SC_OP_GT, SC_OP_MASKED_EQ };

struct sc_arg {
	unsigned int index;
	uint64_t value, value_two;
	enum sc_op op;
};

struct sc_rule {
	char **names; /* NULL-terminated; unknown syscall names are skipped, as runc does */
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
	bool flag_log, flag_spec_allow, flag_tsync;
};

/* "SCMP_ACT_ERRNO" with errno_ret (or -1 for the default EPERM) -> action value. errno_ret
 * applies to ERRNO and TRACE only (>= 0 with another action fails, as runc); NOTIFY fails
 * with "not supported". */
int sc_action_from_name(const char *name, int64_t errno_ret, uint32_t *out, struct hutch_err *err);
int sc_op_from_name(const char *name, enum sc_op *out);
bool sc_arch_known(const char *name);
/* "SCMP_ARCH_X86_64" -> libseccomp's token (an AUDIT_ARCH_* value). */
int sc_arch_token(const char *name, uint32_t *out);

/* Frees what a config owns (names, archs, rules, args), not cfg itself; accepts NULL. */
void sc_config_free(struct sc_config *cfg);
/* The sandbox's hardened profile: Docker's default as its default capabilities see it (no
 * ptrace, mount, namespaces, ...), default ERRNO(EPERM), clone3 -> ENOSYS. */
int sc_default_config(struct sc_config *out, struct hutch_err *err);

struct sc_filter; /* a compiled BPF program */
int sc_compile(const struct sc_config *cfg, struct sc_filter **out, struct hutch_err *err);
size_t sc_filter_len(const struct sc_filter *f); /* in instructions */
void sc_filter_free(struct sc_filter *f);
/* In the child: seccomp(SECCOMP_SET_MODE_FILTER) with the compiled program. Needs
 * no_new_privs or CAP_SYS_ADMIN; every syscall the caller makes afterwards (up to and
 * including execve) must be allowed by the profile. */
int sc_load(const struct sc_filter *f, struct hutch_err *err);

#endif
