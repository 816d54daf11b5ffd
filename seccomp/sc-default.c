// SPDX-License-Identifier: Apache-2.0
/*
 * The built-in profile: seccomp/default.json, compiled into the binary, is resolved here into
 * a struct sc_config for one capability set and the native architecture, the way Docker's
 * engine resolves its profile before handing OCI JSON to the runtime. The data file uses
 * moby's format (archMap, includes/excludes) plus one key of ours, exceptValues32.
 */
#include "sc-internal.h"

#include <seccomp.h>

#include <stdio.h>
#include <string.h>

extern const char sc_default_json[]; /* embed.sh output */
extern const unsigned char sc_default_json_sha256[32];

/* The native architecture as the profile names it: OCI name, and moby's (Go) name. */
#if defined(__x86_64__) && defined(__ILP32__)
#define NATIVE_ARCH "SCMP_ARCH_X32", "x32"
#elif defined(__x86_64__)
#define NATIVE_ARCH "SCMP_ARCH_X86_64", "amd64"
#elif defined(__i386__)
#define NATIVE_ARCH "SCMP_ARCH_X86", "x86"
#elif defined(__aarch64__)
#define NATIVE_ARCH "SCMP_ARCH_AARCH64", "arm64"
#elif defined(__arm__)
#define NATIVE_ARCH "SCMP_ARCH_ARM", "arm"
#elif defined(__s390x__)
#define NATIVE_ARCH "SCMP_ARCH_S390X", "s390x"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_ARCH "SCMP_ARCH_PPC64LE", "ppc64le"
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH "SCMP_ARCH_RISCV64", "riscv64"
#else
#define NATIVE_ARCH NULL, NULL
#endif
static const char *const native[2] = { NATIVE_ARCH };

const char *sc_default_profile_json(void)
{
	return sc_default_json;
}

const uint8_t *sc_default_profile_sha256(void)
{
	return sc_default_json_sha256;
}

static yajl_val get(yajl_val obj, const char *key)
{
	const char *path[] = { key, NULL };
	return yajl_tree_get(obj, path, yajl_t_any);
}

static bool has_string(yajl_val arr, const char *s)
{
	for (size_t i = 0; YAJL_IS_ARRAY(arr) && s && i < arr->u.array.len; i++)
		if (YAJL_IS_STRING(arr->u.array.values[i]) &&
		    strcmp(arr->u.array.values[i]->u.string, s) == 0)
			return true;
	return false;
}

/* moby's rule: every cap of includes.caps held, none of excludes.caps; arches the same. */
static bool caps_match(yajl_val list, uint64_t caps, bool all)
{
	for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
		yajl_val c = list->u.array.values[i];
		int n = YAJL_IS_STRING(c) ? sc_cap_from_name(c->u.string) : -EINVAL;
		bool held = n >= 0 && n < 64 && (caps & (1ull << n));
		if (held != all)
			return !all;
	}
	return all;
}

static bool applies(yajl_val rule, uint64_t caps)
{
	yajl_val inc = get(rule, "includes"), exc = get(rule, "excludes");
	yajl_val inc_arches = get(inc, "arches"), exc_arches = get(exc, "arches");

	if (inc_arches && !has_string(inc_arches, native[1]))
		return false;
	if (has_string(exc_arches, native[1]))
		return false;
	if (!caps_match(get(inc, "caps"), caps, true))
		return false;
	return !caps_match(get(exc, "caps"), caps, false);
}

static int set_archs(yajl_val doc, struct sc_config *cfg)
{
	yajl_val map = get(doc, "archMap");
	cfg->archs = hutch_xcalloc(8, sizeof(char *));
	if (!native[0])
		return 0;
	cfg->archs[cfg->n_archs++] = hutch_xstrdup(native[0]);
	for (size_t i = 0; YAJL_IS_ARRAY(map) && i < map->u.array.len; i++) {
		yajl_val e = map->u.array.values[i], a = get(e, "architecture");
		yajl_val subs = get(e, "subArchitectures");
		if (!YAJL_IS_STRING(a) || strcmp(a->u.string, native[0]) != 0 ||
		    !YAJL_IS_ARRAY(subs))
			continue;
		for (size_t j = 0; j < subs->u.array.len && cfg->n_archs < 7; j++)
			if (YAJL_IS_STRING(subs->u.array.values[j]))
				cfg->archs[cfg->n_archs++] =
					hutch_xstrdup(subs->u.array.values[j]->u.string);
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * The low 32 bits of an argument not in v[0..n) (sorted, sharing the top depth bits, which
 * are prefix), as masked compares: OCI's rules for one syscall are ORed and can only test
 * equality under a mask, so "not these values" becomes one rule per subtree of the binary
 * trie that holds none of them. Two values cost about 34 rules, each a few instructions.
 */
static void split(uint32_t prefix, unsigned int depth, const uint32_t *v, size_t n,
		  struct sc_arg *out, size_t *n_out)
{
	if (n == 0) {
		uint32_t mask = depth == 0 ? 0 : ~0u << (32 - depth);
		out[(*n_out)++] = (struct sc_arg){ .value = mask, .value_two = prefix };
		return;
	}
	if (depth == 32)
		return; /* exactly an excluded value */
	uint32_t bit = 1u << (31 - depth);
	size_t zeros = 0;
	while (zeros < n && !(v[zeros] & bit))
		zeros++;
	split(prefix, depth + 1, v, zeros, out, n_out);
	split(prefix | bit, depth + 1, v + zeros, n - zeros, out, n_out);
}

/* "exceptValues32": {"index": I, "values": [...]} -> the rule repeated with each mask. */
static int expand_except(yajl_val except, const struct sc_rule *base, struct sc_config *cfg,
			 size_t *cap, struct hutch_err *err)
{
	yajl_val idx = get(except, "index"), vals = get(except, "values");
	uint32_t v[16];
	size_t n = 0;

	if (!YAJL_IS_INTEGER(idx) || idx->u.number.i < 0 || idx->u.number.i > 5 ||
	    !YAJL_IS_ARRAY(vals) || vals->u.array.len > ARRAY_SIZE(v))
		return hutch_fail(err, EINVAL, "exceptValues32: expected an index and values");
	for (size_t i = 0; i < vals->u.array.len; i++) {
		yajl_val x = vals->u.array.values[i];
		if (!YAJL_IS_INTEGER(x) || x->u.number.i < 0 || x->u.number.i > UINT32_MAX)
			return hutch_fail(err, EINVAL, "exceptValues32: values[%zu]: not 32 bits",
					  i);
		v[n++] = (uint32_t)x->u.number.i;
	}
	qsort(v, n, sizeof(v[0]), cmp_u32);
	struct sc_arg args[32 * ARRAY_SIZE(v) + 1];
	size_t n_args = 0;
	split(0, 0, v, n, args, &n_args);
	*cap += n_args;
	cfg->rules = hutch_xrealloc(cfg->rules, *cap * sizeof(struct sc_rule));
	for (size_t i = 0; i < n_args; i++) {
		struct sc_rule *r = &cfg->rules[cfg->n_rules++];
		*r = (struct sc_rule){ .action = base->action,
				       .n_names = base->n_names,
				       .n_args = 1 };
		r->names = hutch_xcalloc(base->n_names + 1, sizeof(char *));
		for (size_t j = 0; j < base->n_names; j++)
			r->names[j] = hutch_xstrdup(base->names[j]);
		r->args = hutch_xmalloc(sizeof(struct sc_arg));
		r->args[0] = args[i];
		r->args[0].index = (unsigned int)idx->u.number.i;
		r->args[0].op = SC_OP_MASKED_EQ;
	}
	return 0;
}

static int add_rules(yajl_val doc, uint64_t caps, struct sc_config *cfg, struct hutch_err *err)
{
	yajl_val arr = get(doc, "syscalls");
	char field[64];
	size_t cap;

	if (!YAJL_IS_ARRAY(arr))
		return hutch_fail(err, EINVAL, "syscalls: expected an array");
	cap = arr->u.array.len;
	cfg->rules = hutch_xcalloc(cap, sizeof(struct sc_rule));
	for (size_t i = 0; i < arr->u.array.len; i++) {
		yajl_val s = arr->u.array.values[i], except = get(s, "exceptValues32");
		struct sc_rule rule = { 0 };
		if (!applies(s, caps))
			continue;
		snprintf(field, sizeof(field), "syscalls[%zu]", i);
		int r = sc_json_rule(s, field, &rule, err);
		if (r >= 0 && except)
			r = expand_except(except, &rule, cfg, &cap, err);
		if (r < 0 || except) {
			/* Expanded into copies, or failed: this one is not kept. */
			hutch_strv_free(rule.names);
			free(rule.args);
			if (r < 0)
				return r;
			continue;
		}
		cfg->rules[cfg->n_rules++] = rule;
	}
	return 0;
}

/* Takes name out of every argument-free rule that allows it; true if one did. */
static bool take_allowed(struct sc_config *cfg, const char *name)
{
	bool found = false;
	for (size_t i = 0; i < cfg->n_rules; i++) {
		struct sc_rule *r = &cfg->rules[i];
		if (r->action != SCMP_ACT_ALLOW || r->n_args)
			continue;
		for (size_t k = 0; k < r->n_names; k++)
			if (!strcmp(r->names[k], name)) {
				free(r->names[k]);
				memmove(&r->names[k], &r->names[k + 1],
					(r->n_names - k) * sizeof(char *)); /* the NULL too */
				r->n_names--;
				found = true;
				break;
			}
	}
	return found;
}

static struct sc_rule *new_rule(struct sc_config *cfg, uint32_t action)
{
	cfg->rules = hutch_xrealloc(cfg->rules, (cfg->n_rules + 1) * sizeof(struct sc_rule));
	struct sc_rule *r = &cfg->rules[cfg->n_rules++];
	*r = (struct sc_rule){ .names = hutch_xcalloc(1, sizeof(char *)), .action = action };
	return r;
}

static void add_name(struct sc_rule *r, const char *name)
{
	r->names = hutch_xrealloc(r->names, (r->n_names + 2) * sizeof(char *));
	r->names[r->n_names++] = hutch_xstrdup(name);
	r->names[r->n_names] = NULL;
}

/*
 * SC_DEFAULT_NO_SETID: no setuid or setgid bit can be set, by chmod or on creation. A sandbox
 * whose files reach the host (a workspace) could otherwise leave a setuid binary that gives
 * any local user the id it wrote as. The calls that take a mode are allowed only when the mode
 * has neither bit ((mode & 06000) == 0): the rest fall to the profile's default action,
 * EPERM. (An ERRNO rule beside the profile's unconditional ALLOW would never be reached.)
 * openat2 takes its mode in a struct that seccomp cannot read: ENOSYS, so that callers fall
 * back to openat. Every syscall that sets or creates a mode must be here: the class of each
 * one the profile allows is in seccomp/syscall-classes.txt, which a unit test holds to these
 * rules (test-sc-classes.c). Changing them must change SC_NO_SETID_KEY (sc-internal.h).
 */
static void add_no_setid(struct sc_config *cfg)
{
	static const struct {
		unsigned index; /* of the mode argument */
		const char *names[4];
	} calls[] = {
		{ 1, { "chmod", "fchmod", "creat", "mknod" } },
		{ 2, { "fchmodat", "fchmodat2", "open", "mknodat" } },
		{ 3, { "openat" } },
	};
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		struct sc_rule *r = NULL;
		for (size_t k = 0; k < ARRAY_SIZE(calls[i].names) && calls[i].names[k]; k++) {
			if (!take_allowed(cfg, calls[i].names[k]))
				continue; /* not allowed at all: the default denies it anyway */
			if (!r) {
				r = new_rule(cfg, SCMP_ACT_ALLOW);
				r->args = hutch_xcalloc(1, sizeof(struct sc_arg));
				r->n_args = 1;
				r->args[0] = (struct sc_arg){ .index = calls[i].index,
							      .value = 06000,
							      .value_two = 0,
							      .op = SC_OP_MASKED_EQ };
			}
			add_name(r, calls[i].names[k]);
		}
	}
	take_allowed(cfg, "openat2");
	add_name(new_rule(cfg, SCMP_ACT_ERRNO(ENOSYS)), "openat2");
}

static void drop_arch(struct sc_config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n_archs; i++)
		if (!strcmp(cfg->archs[i], name)) {
			free(cfg->archs[i]);
			memmove(&cfg->archs[i], &cfg->archs[i + 1],
				(cfg->n_archs - i) * sizeof(char *)); /* the NULL too */
			cfg->n_archs--;
			return;
		}
}

int sc_default_config(uint64_t caps, unsigned extras, struct sc_config *out, struct hutch_err *err)
{
	struct sc_config cfg = { 0 };
	char buf[256] = "";
	int r;

	yajl_val doc = yajl_tree_parse(sc_default_json, buf, sizeof(buf));
	if (!doc)
		return hutch_fail(err, EINVAL, "default seccomp profile: invalid JSON: %s", buf);
	r = sc_json_action(doc, "defaultAction", "defaultErrnoRet", "", &cfg.default_action, err);
	if (r >= 0)
		r = set_archs(doc, &cfg);
	if (r >= 0)
		r = add_rules(doc, caps, &cfg, err);
	if (r >= 0 && (extras & SC_DEFAULT_NO_SETID))
		add_no_setid(&cfg);
	if (r >= 0 && (extras & SC_DEFAULT_NO_I386))
		drop_arch(&cfg, "SCMP_ARCH_X86");
	if (r >= 0)
		r = sc_config_check(&cfg, err);
	yajl_tree_free(doc);
	if (r < 0) {
		sc_config_free(&cfg);
		return hutch_err_prefix(err, "default seccomp profile: ");
	}
	*out = cfg;
	return 0;
}

int sc_default_profile_oci(uint64_t caps, unsigned extras, char **out, struct hutch_err *err)
{
	struct sc_config cfg = { 0 };
	int r = sc_default_config(caps, extras, &cfg, err);
	if (r < 0)
		return r;
	*out = sc_config_to_json(&cfg, true);
	sc_config_free(&cfg);
	return 0;
}
