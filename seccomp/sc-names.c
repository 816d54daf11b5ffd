// SPDX-License-Identifier: Apache-2.0
/*
 * The OCI spellings of seccomp actions, comparison operators, architectures and capabilities,
 * and their libseccomp (or kernel) values. Pure tables: the spec parser validates names here long before anything
 * is compiled, so a typo fails `create` with the field name instead of a libseccomp errno.
 */
#include "sc.h"
#include "hutch-ids.h"

#include <linux/capability.h>
#include <seccomp.h>
#include <string.h>

enum act_data { DATA_NONE, DATA_ERRNO, DATA_TRACE };

static const struct {
	const char *name;
	uint32_t action;
	enum act_data data;
} actions[] = {
	{ "SCMP_ACT_KILL", SCMP_ACT_KILL, DATA_NONE },
	{ "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, DATA_NONE },
	{ "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, DATA_NONE },
	{ "SCMP_ACT_TRAP", SCMP_ACT_TRAP, DATA_NONE },
	{ "SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0), DATA_ERRNO },
	{ "SCMP_ACT_TRACE", SCMP_ACT_TRACE(0), DATA_TRACE },
	{ "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, DATA_NONE },
	{ "SCMP_ACT_LOG", SCMP_ACT_LOG, DATA_NONE },
	{ "SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY, DATA_NONE },
};

static const struct {
	const char *name;
	enum sc_op op;
} ops[] = {
	{ "SCMP_CMP_NE", SC_OP_NE },
	{ "SCMP_CMP_LT", SC_OP_LT },
	{ "SCMP_CMP_LE", SC_OP_LE },
	{ "SCMP_CMP_EQ", SC_OP_EQ },
	{ "SCMP_CMP_GE", SC_OP_GE },
	{ "SCMP_CMP_GT", SC_OP_GT },
	{ "SCMP_CMP_MASKED_EQ", SC_OP_MASKED_EQ },
};

/* Every architecture the OCI spec names that libseccomp 2.5 can generate a filter for. */
static const struct {
	const char *name;
	uint32_t token;
} archs[] = {
	{ "SCMP_ARCH_X86", SCMP_ARCH_X86 },
	{ "SCMP_ARCH_X86_64", SCMP_ARCH_X86_64 },
	{ "SCMP_ARCH_X32", SCMP_ARCH_X32 },
	{ "SCMP_ARCH_ARM", SCMP_ARCH_ARM },
	{ "SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64 },
	{ "SCMP_ARCH_MIPS", SCMP_ARCH_MIPS },
	{ "SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64 },
	{ "SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32 },
	{ "SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL },
	{ "SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64 },
	{ "SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32 },
	{ "SCMP_ARCH_PPC", SCMP_ARCH_PPC },
	{ "SCMP_ARCH_PPC64", SCMP_ARCH_PPC64 },
	{ "SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE },
	{ "SCMP_ARCH_S390", SCMP_ARCH_S390 },
	{ "SCMP_ARCH_S390X", SCMP_ARCH_S390X },
	{ "SCMP_ARCH_PARISC", SCMP_ARCH_PARISC },
	{ "SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64 },
	{ "SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64 },
};

int sc_action_from_name(const char *name, int64_t errno_ret, uint32_t *out, struct hutch_err *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(actions); i++) {
		if (strcmp(name, actions[i].name) != 0)
			continue;
		if (actions[i].data == DATA_NONE) {
			/* As runc: errnoRet means nothing to these actions, so it is a mistake. */
			if (errno_ret >= 0)
				return hutch_fail(err, EINVAL,
						  "errnoRet is only valid with SCMP_ACT_ERRNO and "
						  "SCMP_ACT_TRACE, not %s",
						  name);
			*out = actions[i].action;
			return 0;
		}
		if (errno_ret > 0xffff)
			return hutch_fail(err, ERANGE, "errnoRet %lld out of range (0-65535)",
					  (long long)errno_ret);
		/* Absent errnoRet means EPERM for both, as runc (not libseccomp's 0). */
		uint32_t data = errno_ret < 0 ? EPERM : (uint32_t)errno_ret;
		*out = actions[i].action | data;
		return 0;
	}
	return hutch_fail(err, EINVAL, "unknown action %s", name);
}

const char *sc_action_name(uint32_t action, int64_t *errno_ret)
{
	*errno_ret = -1;
	for (size_t i = 0; i < ARRAY_SIZE(actions); i++) {
		if (actions[i].data == DATA_NONE && action == actions[i].action)
			return actions[i].name;
		if (actions[i].data != DATA_NONE && (action & ~0xffffu) == actions[i].action) {
			*errno_ret = action & 0xffff;
			return actions[i].name;
		}
	}
	return NULL;
}

int sc_op_from_name(const char *name, enum sc_op *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		if (strcmp(name, ops[i].name) == 0) {
			*out = ops[i].op;
			return 0;
		}
	}
	return -EINVAL;
}

const char *sc_op_name(enum sc_op op)
{
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (ops[i].op == op)
			return ops[i].name;
	return NULL;
}

int sc_arch_token(const char *name, uint32_t *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(archs); i++) {
		if (strcmp(name, archs[i].name) == 0) {
			*out = archs[i].token;
			return 0;
		}
	}
	return -EINVAL;
}

bool sc_arch_known(const char *name)
{
	uint32_t token;
	return sc_arch_token(name, &token) == 0;
}

int sc_cap_from_name(const char *name)
{
	return hutch_cap_from_name(name);
}
