// SPDX-License-Identifier: Apache-2.0
/*
 * linux.seccomp of config.json -> struct sc_config. Every name (action, operator,
 * architecture, flag) is checked against seccomp/'s tables here, so a typo fails `create`
 * with the field that holds it. Syscall names are not checked: unknown ones are skipped at
 * compile time, as runc does, because profiles list syscalls of newer kernels and other arches.
 */
#include "rt-spec-internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define SECCOMP "linux.seccomp"
#define ERRNO_MAX 65535 /* the 16 bits of SECCOMP_RET_DATA */

static const struct {
	const char *name;
	size_t offset; /* of the bool in struct sc_config */
} flag_table[] = {
	{ "SECCOMP_FILTER_FLAG_TSYNC", offsetof(struct sc_config, flag_tsync) },
	{ "SECCOMP_FILTER_FLAG_LOG", offsetof(struct sc_config, flag_log) },
	{ "SECCOMP_FILTER_FLAG_SPEC_ALLOW", offsetof(struct sc_config, flag_spec_allow) },
};

/* A field name into buf (RT_FIELD_MAX bytes); cutting one short only shortens a message. */
__attribute__((format(printf, 2, 3))) static const char *fieldf(char *buf, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, RT_FIELD_MAX, fmt, ap);
	va_end(ap);
	return buf;
}

/* "action" plus "errnoRet" (named by their own keys) of obj -> one action value. */
static int parse_action(yajl_val obj, const char *action_key, const char *errno_key,
			const char *prefix, uint32_t *out, struct hutch_err *err)
{
	char field[RT_FIELD_MAX];
	_cleanup_free_ char *name = NULL;
	int64_t errno_ret = -1;
	bool has_errno = false;

	fieldf(field, "%s.%s", prefix, errno_key);
	int r = rt_json_int(obj, errno_key, field, 0, ERRNO_MAX, &has_errno, &errno_ret, err);
	if (r < 0)
		return r;
	fieldf(field, "%s.%s", prefix, action_key);
	r = rt_json_string(obj, action_key, field, true, &name, err);
	if (r < 0)
		return r;
	r = sc_action_from_name(name, has_errno ? errno_ret : -1, out, err);
	if (r < 0)
		return hutch_err_prefix(err, "%s: ", field);
	return 0;
}

static int parse_archs(yajl_val sc, struct sc_config *out, struct hutch_err *err)
{
	int r = rt_json_strv(sc, "architectures", SECCOMP ".architectures", false, &out->archs,
			     &out->n_archs, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < out->n_archs; i++)
		if (!sc_arch_known(out->archs[i]))
			return hutch_fail(err, EINVAL,
					  SECCOMP ".architectures[%zu]: unknown "
						  "architecture %s",
					  i, out->archs[i]);
	return 0;
}

static int parse_flags(yajl_val sc, struct sc_config *out, struct hutch_err *err)
{
	_cleanup_strv_ char **flags = NULL;
	size_t n = 0;

	int r = rt_json_strv(sc, "flags", SECCOMP ".flags", false, &flags, &n, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < ARRAY_SIZE(flag_table) && strcmp(flags[i], flag_table[j].name) != 0)
			j++;
		if (j == ARRAY_SIZE(flag_table))
			return hutch_fail(err, EOPNOTSUPP, SECCOMP ".flags[%zu]: %s: not supported",
					  i, flags[i]);
		*(bool *)((char *)out + flag_table[j].offset) = true;
	}
	return 0;
}

static int parse_arg(yajl_val a, const char *prefix, struct sc_arg *out, struct hutch_err *err)
{
	char field[RT_FIELD_MAX];
	_cleanup_free_ char *op = NULL;
	int64_t index = 0;

	if (!YAJL_IS_OBJECT(a))
		return hutch_fail(err, EINVAL, "%s: expected an object", prefix);
	fieldf(field, "%s.index", prefix);
	int r = rt_json_req_int(a, "index", field, 0, 5, &index, err);
	if (r < 0)
		return r;
	out->index = (unsigned int)index;
	/* value may be left out (runc reads it as 0); valueTwo only matters to MASKED_EQ. */
	fieldf(field, "%s.value", prefix);
	r = rt_json_uint64(a, "value", field, NULL, &out->value, err);
	if (r < 0)
		return r;
	fieldf(field, "%s.valueTwo", prefix);
	r = rt_json_uint64(a, "valueTwo", field, NULL, &out->value_two, err);
	if (r < 0)
		return r;
	fieldf(field, "%s.op", prefix);
	r = rt_json_string(a, "op", field, true, &op, err);
	if (r < 0)
		return r;
	if (sc_op_from_name(op, &out->op) < 0)
		return hutch_fail(err, EINVAL, "%s: unknown operator %s", field, op);
	return 0;
}

static int parse_syscall(yajl_val s, const char *prefix, struct sc_rule *out, struct hutch_err *err)
{
	char field[RT_FIELD_MAX];
	yajl_val args;

	if (!YAJL_IS_OBJECT(s))
		return hutch_fail(err, EINVAL, "%s: expected an object", prefix);
	fieldf(field, "%s.names", prefix);
	int r = rt_json_strv(s, "names", field, true, &out->names, &out->n_names, err);
	if (r < 0)
		return r;
	if (out->n_names == 0)
		return hutch_fail(err, EINVAL, "%s: must not be empty", field);
	r = parse_action(s, "action", "errnoRet", prefix, &out->action, err);
	if (r < 0)
		return r;
	fieldf(field, "%s.args", prefix);
	r = rt_json_array(s, "args", field, &args, err);
	if (r < 0 || !args)
		return r;
	out->args = hutch_xcalloc(args->u.array.len, sizeof(struct sc_arg));
	for (size_t i = 0; i < args->u.array.len; i++) {
		fieldf(field, "%s.args[%zu]", prefix, i);
		r = parse_arg(args->u.array.values[i], field, &out->args[i], err);
		if (r < 0)
			return r;
		out->n_args = i + 1;
	}
	return 0;
}

static int parse_syscalls(yajl_val sc, struct sc_config *out, struct hutch_err *err)
{
	char field[RT_FIELD_MAX];
	yajl_val arr;

	int r = rt_json_array(sc, "syscalls", SECCOMP ".syscalls", &arr, err);
	if (r < 0 || !arr)
		return r;
	out->rules = hutch_xcalloc(arr->u.array.len, sizeof(struct sc_rule));
	for (size_t i = 0; i < arr->u.array.len; i++) {
		/* Count the rule first, so that freeing the config covers a half-parsed one. */
		out->n_rules = i + 1;
		fieldf(field, SECCOMP ".syscalls[%zu]", i);
		r = parse_syscall(arr->u.array.values[i], field, &out->rules[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* On failure *out may be partly filled; rt_spec_free_seccomp releases it either way. */
int rt_spec_parse_seccomp(yajl_val seccomp, struct sc_config *out, struct hutch_err *err)
{
	static const char *const unsupported[] = { "listenerPath", "listenerMetadata", NULL };

	if (!YAJL_IS_OBJECT(seccomp))
		return hutch_fail(err, EINVAL, SECCOMP ": expected an object");
	/* A listener would need SCMP_ACT_NOTIFY and passing the notify fd out: not yet. */
	int r = rt_json_refuse(seccomp, unsupported, SECCOMP, err);
	if (r < 0)
		return r;
	r = parse_action(seccomp, "defaultAction", "defaultErrnoRet", SECCOMP, &out->default_action,
			 err);
	if (r < 0)
		return r;
	r = parse_archs(seccomp, out, err);
	if (r < 0)
		return r;
	r = parse_flags(seccomp, out, err);
	if (r < 0)
		return r;
	return parse_syscalls(seccomp, out, err);
}

void rt_spec_free_seccomp(struct sc_config *cfg)
{
	sc_config_free(cfg);
}
