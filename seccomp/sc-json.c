// SPDX-License-Identifier: Apache-2.0
/*
 * OCI linux.seccomp JSON <-> struct sc_config. Every name (action, operator, architecture,
 * flag) is checked against sc-names.c's tables while parsing, so a typo fails `create` with
 * the field that holds it ("linux.seccomp.syscalls[3].args[0].op: unknown operator X"). The
 * writer is what `hutch spec --seccomp` prints.
 */
#include "sc-internal.h"
#include "hutch-json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#define ERRNO_MAX 65535 /* the 16 bits of SECCOMP_RET_DATA */

static const struct {
	const char *name;
	size_t offset; /* of the bool in struct sc_config */
} flag_table[] = {
	{ "SECCOMP_FILTER_FLAG_TSYNC", offsetof(struct sc_config, flag_tsync) },
	{ "SECCOMP_FILTER_FLAG_LOG", offsetof(struct sc_config, flag_log) },
	{ "SECCOMP_FILTER_FLAG_SPEC_ALLOW", offsetof(struct sc_config, flag_spec_allow) },
	{ "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
	  offsetof(struct sc_config, flag_wait_killable_recv) },
};

int sc_json_action(yajl_val obj, const char *action_key, const char *errno_key, const char *prefix,
		   uint32_t *out, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	_cleanup_free_ char *name = NULL;
	uint64_t errno_ret = 0;
	bool has_errno = false;

	hutch_json_field(field, "%s.%s", prefix, errno_key);
	int r = hutch_json_uint64(obj, errno_key, field, ERRNO_MAX, &has_errno, &errno_ret, err);
	if (r < 0)
		return r;
	hutch_json_field(field, "%s.%s", prefix, action_key);
	r = hutch_json_string(obj, action_key, field, true, &name, err);
	if (r < 0)
		return r;
	r = sc_action_from_name(name, has_errno ? (int64_t)errno_ret : -1, out, err);
	if (r < 0)
		return hutch_err_prefix(err, "%s: ", field);
	return 0;
}

static int parse_archs(yajl_val sc, const char *prefix, struct sc_config *out,
		       struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	hutch_json_field(field, "%s.architectures", prefix);
	int r = hutch_json_strv(sc, "architectures", field, false, &out->archs, &out->n_archs, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < out->n_archs; i++)
		if (!sc_arch_known(out->archs[i]))
			return hutch_fail(err, EINVAL, "%s[%zu]: unknown architecture %s", field, i,
					  out->archs[i]);
	return 0;
}

static int parse_flags(yajl_val sc, const char *prefix, struct sc_config *out,
		       struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	_cleanup_strv_ char **flags = NULL;
	size_t n = 0;

	hutch_json_field(field, "%s.flags", prefix);
	int r = hutch_json_strv(sc, "flags", field, false, &flags, &n, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < ARRAY_SIZE(flag_table) && strcmp(flags[i], flag_table[j].name) != 0)
			j++;
		if (j == ARRAY_SIZE(flag_table))
			return hutch_fail(err, EOPNOTSUPP, "%s[%zu]: %s: not supported", field, i,
					  flags[i]);
		*(bool *)((char *)out + flag_table[j].offset) = true;
	}
	return 0;
}

static int parse_arg(yajl_val a, const char *prefix, struct sc_arg *out, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	_cleanup_free_ char *op = NULL;
	uint64_t index = 0;
	bool present;

	if (!YAJL_IS_OBJECT(a))
		return hutch_fail(err, EINVAL, "%s: expected an object", prefix);
	hutch_json_field(field, "%s.index", prefix);
	int r = hutch_json_uint64(a, "index", field, 5, &present, &index, err);
	if (r < 0)
		return r;
	if (!present)
		return hutch_fail(err, EINVAL, "%s: required", field);
	out->index = (unsigned int)index;
	/* value may be left out (runc reads it as 0); valueTwo only matters to MASKED_EQ. */
	hutch_json_field(field, "%s.value", prefix);
	r = hutch_json_uint64(a, "value", field, UINT64_MAX, &present, &out->value, err);
	if (r < 0)
		return r;
	hutch_json_field(field, "%s.valueTwo", prefix);
	r = hutch_json_uint64(a, "valueTwo", field, UINT64_MAX, &present, &out->value_two, err);
	if (r < 0)
		return r;
	hutch_json_field(field, "%s.op", prefix);
	r = hutch_json_string(a, "op", field, true, &op, err);
	if (r < 0)
		return r;
	if (sc_op_from_name(op, &out->op) < 0)
		return hutch_fail(err, EINVAL, "%s: unknown operator %s", field, op);
	return 0;
}

int sc_json_rule(yajl_val s, const char *prefix, struct sc_rule *out, struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	struct hutch_json_items args;

	if (!YAJL_IS_OBJECT(s))
		return hutch_fail(err, EINVAL, "%s: expected an object", prefix);
	hutch_json_field(field, "%s.names", prefix);
	int r = hutch_json_strv(s, "names", field, false, &out->names, &out->n_names, err);
	if (r < 0)
		return r;
	if (out->n_names == 0)
		return hutch_fail(err, EINVAL, "%s: must not be empty", field);
	r = sc_json_action(s, "action", "errnoRet", prefix, &out->action, err);
	if (r < 0)
		return r;
	hutch_json_field(field, "%s.args", prefix);
	TRY(hutch_json_items(s, "args", field, &args, err));
	if (!args.arr)
		return 0;
	out->args = hutch_xcalloc(args.n + 1, sizeof(struct sc_arg));
	for (yajl_val v; hutch_json_next(&args, &v);) {
		TRY(parse_arg(v, args.field, &out->args[args.i], err));
		out->n_args = args.i + 1;
	}
	return 0;
}

static int parse_syscalls(yajl_val sc, const char *prefix, struct sc_config *out,
			  struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	struct hutch_json_items it;

	TRY(hutch_json_items(sc, "syscalls", hutch_json_field(field, "%s.syscalls", prefix), &it,
			     err));
	if (!it.arr)
		return 0;
	out->rules = hutch_xcalloc(it.n + 1, sizeof(struct sc_rule));
	for (yajl_val v; hutch_json_next(&it, &v);) {
		/* Count the rule first, so that freeing the config covers a half-parsed one. */
		out->n_rules = it.i + 1;
		TRY(sc_json_rule(v, it.field, &out->rules[it.i], err));
	}
	return 0;
}

int sc_config_from_json(struct yajl_val_s *sc, const char *prefix, struct sc_config *out,
			struct hutch_err *err)
{
	char field[HUTCH_FIELD_MAX];
	int r;

	if (!YAJL_IS_OBJECT(sc))
		return hutch_fail(err, EINVAL, "%s: expected an object", prefix);
	r = sc_json_action(sc, "defaultAction", "defaultErrnoRet", prefix, &out->default_action,
			   err);
	if (r >= 0)
		r = parse_archs(sc, prefix, out, err);
	if (r >= 0)
		r = parse_flags(sc, prefix, out, err);
	if (r >= 0)
		r = hutch_json_string(sc, "listenerPath",
				      hutch_json_field(field, "%s.listenerPath", prefix), false,
				      &out->listener_path, err);
	if (r >= 0)
		r = hutch_json_string(sc, "listenerMetadata",
				      hutch_json_field(field, "%s.listenerMetadata", prefix), false,
				      &out->listener_metadata, err);
	if (r >= 0)
		r = parse_syscalls(sc, prefix, out, err);
	if (r < 0)
		return r;
	/* An empty listenerPath asks for nothing, as runc reads it. */
	if (out->listener_path && !*out->listener_path)
		free(steal_ptr(out->listener_path));
	r = sc_config_check(out, err);
	if (r < 0)
		return hutch_err_prefix(err, "%s.", prefix);
	return 0;
}

int sc_config_parse(const char *text, const char *prefix, struct sc_config *out,
		    struct hutch_err *err)
{
	char buf[256] = "";
	int d = hutch_json_check_depth(text, prefix, err);
	if (d < 0)
		return d;
	yajl_val v = yajl_tree_parse(text, buf, sizeof(buf));
	if (!v) {
		buf[strcspn(buf, "\n")] = '\0'; /* yajl adds the text and a caret: keep one line */
		return hutch_fail(err, EINVAL, "%s: invalid JSON: %s", prefix, buf);
	}
	int r = sc_config_from_json(v, prefix, out, err);
	yajl_tree_free(v);
	return r;
}

static void gen_action(yajl_gen g, const char *key, const char *errno_key, uint32_t action)
{
	int64_t errno_ret;
	const char *name = sc_action_name(action, &errno_ret);
	hutch_json_gen_str(g, key);
	hutch_json_gen_str(g, name ? name : "SCMP_ACT_KILL");
	if (errno_ret >= 0) {
		hutch_json_gen_str(g, errno_key);
		yajl_gen_integer(g, errno_ret);
	}
}

static void gen_rule(yajl_gen g, const struct sc_rule *rule)
{
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "names");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < rule->n_names; i++)
		hutch_json_gen_str(g, rule->names[i]);
	yajl_gen_array_close(g);
	gen_action(g, "action", "errnoRet", rule->action);
	if (rule->n_args > 0) {
		hutch_json_gen_str(g, "args");
		yajl_gen_array_open(g);
		for (size_t i = 0; i < rule->n_args; i++) {
			const struct sc_arg *a = &rule->args[i];
			yajl_gen_map_open(g);
			hutch_json_gen_u64(g, "index", a->index);
			hutch_json_gen_u64(g, "value", a->value);
			if (a->value_two)
				hutch_json_gen_u64(g, "valueTwo", a->value_two);
			hutch_json_gen_str(g, "op");
			hutch_json_gen_str(g,
					   sc_op_name(a->op) ? sc_op_name(a->op) : "SCMP_CMP_EQ");
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
}

char *sc_config_to_json(const struct sc_config *cfg, bool pretty)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf = NULL;
	size_t len = 0;

	yajl_gen_config(g, yajl_gen_beautify, pretty ? 1 : 0);
	yajl_gen_config(g, yajl_gen_indent_string, "\t");
	yajl_gen_map_open(g);
	gen_action(g, "defaultAction", "defaultErrnoRet", cfg->default_action);
	hutch_json_gen_strv(g, "architectures", (const char *const *)cfg->archs, cfg->n_archs);
	size_t n_flags = 0;
	const char *flags[ARRAY_SIZE(flag_table)];
	for (size_t i = 0; i < ARRAY_SIZE(flag_table); i++)
		if (*(const bool *)((const char *)cfg + flag_table[i].offset))
			flags[n_flags++] = flag_table[i].name;
	if (n_flags)
		hutch_json_gen_strv(g, "flags", flags, n_flags);
	if (cfg->listener_path) {
		hutch_json_gen_str(g, "listenerPath");
		hutch_json_gen_str(g, cfg->listener_path);
	}
	if (cfg->listener_metadata) {
		hutch_json_gen_str(g, "listenerMetadata");
		hutch_json_gen_str(g, cfg->listener_metadata);
	}
	hutch_json_gen_str(g, "syscalls");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < cfg->n_rules; i++)
		gen_rule(g, &cfg->rules[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	char *s = hutch_xmalloc(len + 1);
	memcpy(s, buf, len);
	s[len] = '\0';
	yajl_gen_free(g);
	return s;
}
