// SPDX-License-Identifier: Apache-2.0
/*
 * struct sc_config as a value: checking one before it is compiled (the rules a config can
 * break whatever libseccomp says), what it asks of the load (flags, a listener, ENOSYS for
 * new syscalls), and freeing it. The checks name the rule, so the spec parser can put the
 * JSON path in front ("linux.seccomp.syscalls[3]: ...").
 */
#include "sc-internal.h"
#include "sc-bpf.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <string.h>

#define MAX_ARGS 6

static bool permissive(uint32_t action)
{
	return action == SCMP_ACT_ALLOW || action == SCMP_ACT_LOG;
}

static bool rule_names(const struct sc_rule *rule, const char *name)
{
	for (size_t i = 0; i < rule->n_names; i++)
		if (strcmp(rule->names[i], name) == 0)
			return true;
	return false;
}

/* Known on the native arch or any listed one (a pseudo-number means known elsewhere). */
static bool name_known(const struct sc_config *cfg, const char *name)
{
	if (seccomp_syscall_resolve_name(name) != __NR_SCMP_ERROR)
		return true;
	for (size_t i = 0; i < cfg->n_archs; i++) {
		uint32_t token;
		if (sc_arch_token(cfg->archs[i], &token) == 0 &&
		    seccomp_syscall_resolve_name_arch(token, name) != __NR_SCMP_ERROR)
			return true;
	}
	return false;
}

static int check_notify(const struct sc_config *cfg, const struct sc_rule *rule, size_t i,
			struct hutch_err *err)
{
	if (!cfg->listener_path)
		return hutch_fail(err, EINVAL,
				  "syscalls[%zu]: SCMP_ACT_NOTIFY needs listenerPath (nothing "
				  "would answer the notifications)",
				  i);
	/* The runtime reports its last steps over write, and passes the notify fd on with
	 * sendmsg, once the filter is in place: with nobody holding the notify fd yet, either
	 * call would wait forever. */
	static const char *const own[] = { "write", "sendmsg" };
	for (size_t k = 0; k < ARRAY_SIZE(own); k++)
		if (rule_names(rule, own[k]))
			return hutch_fail(
				err, EINVAL,
				"syscalls[%zu]: SCMP_ACT_NOTIFY on %s is not supported (the "
				"runtime's own %s after loading the filter would deadlock)",
				i, own[k], own[k]);
	return 0;
}

static int check_rule(const struct sc_config *cfg, const struct sc_rule *rule, size_t i,
		      struct hutch_err *err)
{
	for (size_t a = 0; a < rule->n_args; a++) {
		if (rule->args[a].index >= MAX_ARGS)
			return hutch_fail(err, EINVAL,
					  "syscalls[%zu].args[%zu].index: %u out of range 0..5", i,
					  a, rule->args[a].index);
		if (!sc_op_name(rule->args[a].op))
			return hutch_fail(err, EINVAL,
					  "syscalls[%zu].args[%zu].op: invalid operator %d", i, a,
					  (int)rule->args[a].op);
	}
	if (rule->action == SCMP_ACT_NOTIFY) {
		int r = check_notify(cfg, rule, i, err);
		if (r < 0)
			return r;
	}
	/*
	 * A name this libseccomp cannot resolve is skipped when compiling. That is right for
	 * an allow rule (nothing is opened), but a deny rule under an allowing default would
	 * then leave the syscall open: refuse it.
	 */
	if (permissive(rule->action) || !permissive(cfg->default_action))
		return 0;
	for (size_t n = 0; n < rule->n_names; n++)
		if (!name_known(cfg, rule->names[n]))
			return hutch_fail(err, EINVAL,
					  "syscalls[%zu].names[%zu]: unknown syscall %s in a rule "
					  "that denies while the default action allows (skipping "
					  "it would leave the syscall open)",
					  i, n, rule->names[n]);
	return 0;
}

/*
 * Every argument condition of a rule is at least one compare in the program, for every name
 * of the rule, so a profile with more of them than the kernel takes instructions cannot load.
 * Said before compiling: libseccomp takes time quadratic in the rules of one syscall (10^5
 * conditions: minutes) before the program's length is known.
 */
static int check_size(const struct sc_config *cfg, struct hutch_err *err)
{
	size_t conditions = 0;
	for (size_t i = 0; i < cfg->n_rules; i++)
		conditions += cfg->rules[i].n_names * cfg->rules[i].n_args;
	if (conditions > SC_MAX_INSNS)
		return hutch_fail(err, E2BIG,
				  "syscalls: %zu argument conditions (names times args) cannot fit "
				  "the kernel's limit of %d instructions",
				  conditions, SC_MAX_INSNS);
	return 0;
}

int sc_config_check(const struct sc_config *cfg, struct hutch_err *err)
{
	int r = check_size(cfg, err);
	if (r < 0)
		return r;
	if (cfg->default_action == SCMP_ACT_NOTIFY)
		return hutch_fail(
			err, EINVAL,
			"defaultAction: SCMP_ACT_NOTIFY is not supported (the runtime's "
			"own syscalls after loading the filter would wait on the listener)");
	for (size_t i = 0; i < cfg->n_archs; i++)
		if (!sc_arch_known(cfg->archs[i]))
			return hutch_fail(err, EINVAL,
					  "architectures[%zu]: unknown architecture %s", i,
					  cfg->archs[i]);
	for (size_t i = 0; i < cfg->n_rules && r >= 0; i++)
		r = check_rule(cfg, &cfg->rules[i], i, err);
	return r;
}

void sc_config_free(struct sc_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->n_rules; i++) {
		hutch_strv_free(cfg->rules[i].names);
		free(cfg->rules[i].args);
	}
	free(cfg->rules);
	hutch_strv_free(cfg->archs);
	free(cfg->listener_path);
	free(cfg->listener_metadata);
	memset(cfg, 0, sizeof(*cfg));
}

bool sc_config_notifies(const struct sc_config *cfg)
{
	for (size_t i = 0; i < cfg->n_rules; i++)
		if (cfg->rules[i].action == SCMP_ACT_NOTIFY)
			return true;
	return false;
}

/* WAIT_KILLABLE_RECV only means something to a listener; the kernel refuses it without. */
unsigned int sc_load_flags(const struct sc_config *cfg)
{
	unsigned int flags = 0;
	if (cfg->flag_tsync)
		flags |= SECCOMP_FILTER_FLAG_TSYNC;
	if (cfg->flag_log)
		flags |= SECCOMP_FILTER_FLAG_LOG;
	if (cfg->flag_spec_allow)
		flags |= SECCOMP_FILTER_FLAG_SPEC_ALLOW;
	if (cfg->flag_wait_killable_recv && sc_config_notifies(cfg))
		flags |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	return flags;
}

/* Only a denying default makes new syscalls fail; ERRNO(ENOSYS) already is the answer. */
bool sc_wants_enosys(uint32_t def)
{
	uint32_t kind = def & SECCOMP_RET_ACTION_FULL;
	if (kind == SECCOMP_RET_ERRNO)
		return (def & SECCOMP_RET_DATA) != ENOSYS;
	return kind == SECCOMP_RET_KILL_PROCESS || kind == SECCOMP_RET_KILL_THREAD ||
	       kind == SECCOMP_RET_TRAP;
}
