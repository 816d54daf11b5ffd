// SPDX-License-Identifier: Apache-2.0
/*
 * seccomp/syscall-classes.txt against the profile. Every name seccomp/default.json allows (any
 * rule, any condition) has a class there. In the default sandbox's resolved profile (no
 * capability, SC_DEFAULT_NO_SETID), a filtered:N name has a rule on argument N and none that
 * allows it unconditionally, and a denied name is allowed by no rule. Every call that sets or
 * creates a mode is filtered on it, and its compiled filter (hutch's ranges, libseccomp's
 * program alone, and the OCI JSON handed to runc and crun, compiled back) refuses a setid mode
 * there on x86_64 and i386, by the kernel's numbers (seccomp/tables/), not the headers'.
 */
#include "sc-internal.h"
#include "sc-bpf.h"
#include "sc-tables.h"
#include "tap.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <yajl/yajl_tree.h>

struct cls {
	char name[48];
	char kind; /* 'n'one, 'f'iltered, 'd'enied */
	unsigned arg;
};

struct classes {
	struct cls *v;
	size_t n;
};

static const struct cls *cls_find(const struct classes *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

/* One line: NAME CLASS [REASON]; NULL, or why it is not one. */
static const char *parse_line(const char *line, struct cls *out)
{
	char kind[32];
	int end = 0;

	if (sscanf(line, "%47s %31s %n", out->name, kind, &end) != 2)
		return "expected NAME CLASS [REASON]";
	bool reason = line[end] && line[end] != '\n';
	if (!strcmp(kind, "none"))
		out->kind = 'n';
	else if (!strcmp(kind, "denied"))
		out->kind = 'd';
	else if (sscanf(kind, "filtered:%u", &out->arg) == 1 && out->arg <= 5)
		out->kind = 'f';
	else
		return "CLASS is none, filtered:0-5 or denied";
	if (out->kind != 'n' && !reason)
		return "a filtered or denied name needs its reason";
	return NULL;
}

static void read_classes(struct classes *c)
{
	char line[512];
	size_t bad = 0, lineno = 0;
	FILE *f = fopen(HUTCH_SECCOMP_DIR "/syscall-classes.txt", "re");

	ok(f != NULL, "seccomp/syscall-classes.txt is there");
	while (f && fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		struct cls e = { 0 };
		const char *why = parse_line(line, &e);
		if (!why && cls_find(c, e.name))
			why = "a second line for this name";
		if (why) {
			if (bad++ < 5)
				printf("# line %zu: %s\n", lineno, why);
			continue;
		}
		c->v = realloc(c->v, (c->n + 1) * sizeof(*c->v));
		c->v[c->n++] = e;
	}
	if (f)
		fclose(f);
	ok(bad == 0 && c->n > 0, "%zu classes read, %zu bad or repeated lines", c->n, bad);
}

static yajl_val get(yajl_val obj, const char *key)
{
	const char *path[] = { key, NULL };
	return yajl_tree_get(obj, path, yajl_t_any);
}

/* A rule whose action refuses: its names need no class. */
static bool refusing(const char *action)
{
	static const char *const deny[] = { "SCMP_ACT_ERRNO", "SCMP_ACT_KILL",
					    "SCMP_ACT_KILL_THREAD", "SCMP_ACT_KILL_PROCESS",
					    "SCMP_ACT_TRAP" };
	for (size_t i = 0; i < ARRAY_SIZE(deny); i++)
		if (!strcmp(action, deny[i]))
			return true;
	return false;
}

/* Every name of default.json's allowing rules, whatever their includes/excludes. */
static void test_every_name_classified(const struct classes *c)
{
	char buf[256] = "";
	yajl_val doc = yajl_tree_parse(sc_default_profile_json(), buf, sizeof(buf));
	yajl_val arr = get(doc, "syscalls");
	size_t names = 0, missing = 0;

	for (size_t i = 0; YAJL_IS_ARRAY(arr) && i < arr->u.array.len; i++) {
		yajl_val s = arr->u.array.values[i], act = get(s, "action"), n = get(s, "names");
		if (!YAJL_IS_STRING(act) || refusing(act->u.string) || !YAJL_IS_ARRAY(n))
			continue;
		for (size_t k = 0; k < n->u.array.len; k++) {
			const char *name = YAJL_GET_STRING(n->u.array.values[k]);
			names++;
			if (name && cls_find(c, name))
				continue;
			if (missing++ < 10)
				printf("# syscalls[%zu]: %s has no line in syscall-classes.txt\n",
				       i, name ? name : "(not a string)");
		}
	}
	ok(doc && names > 300 && missing == 0,
	   "every name default.json allows has a class: %zu names in its rules, %zu missing", names,
	   missing);
	yajl_tree_free(doc);
}

static bool names(const struct sc_rule *r, const char *name)
{
	for (size_t k = 0; k < r->n_names; k++)
		if (!strcmp(r->names[k], name))
			return true;
	return false;
}

/* A rule with this action lets the call through (LOG, TRACE, NOTIFY as well as ALLOW). */
static bool allows(uint32_t action)
{
	uint32_t a = action & SECCOMP_RET_ACTION_FULL;
	return a != SECCOMP_RET_ERRNO && a != SECCOMP_RET_KILL_PROCESS &&
	       a != SECCOMP_RET_KILL_THREAD && a != SECCOMP_RET_TRAP;
}

/* Checks one name's class against cfg; returns a complaint, or NULL. */
static const char *against(const struct sc_config *cfg, const struct cls *e)
{
	bool on_arg = false, bare = false, any = false;
	for (size_t i = 0; i < cfg->n_rules; i++) {
		const struct sc_rule *r = &cfg->rules[i];
		if (!allows(r->action) || !names(r, e->name))
			continue;
		any = true;
		bare |= r->n_args == 0;
		for (size_t k = 0; k < r->n_args; k++)
			on_arg |= r->args[k].index == e->arg;
	}
	if (e->kind == 'd' && any)
		return "denied, but a rule allows it";
	if (e->kind == 'f' && bare)
		return "filtered, but a rule allows it whatever its arguments";
	if (e->kind == 'f' && !on_arg)
		return "filtered, but no rule allows it on that argument";
	return NULL;
}

static void check_config(const char *what, const struct sc_config *cfg, const struct classes *c)
{
	size_t bad = 0, n = 0;
	for (size_t i = 0; i < c->n; i++) {
		const char *why = against(cfg, &c->v[i]);
		n += c->v[i].kind != 'n';
		if (why && bad++ < 10)
			printf("# %s: %s\n", c->v[i].name, why);
	}
	ok(bad == 0, "%s: %zu filtered and denied names as classified, %zu not", what, n, bad);
}

/* The calls that set a mode or create a file with one, and where the mode is. */
static const struct {
	const char *name;
	unsigned arg;
} mode_calls[] = {
	{ "chmod", 1 }, { "fchmod", 1 }, { "fchmodat", 2 }, { "fchmodat2", 2 }, { "creat", 1 },
	{ "open", 2 },	{ "openat", 3 }, { "mknod", 1 },    { "mknodat", 2 },
};

/* Each is filtered on its mode by exactly add_no_setid's rule: (mode & 06000) == 0. */
static void test_mode_calls(const struct sc_config *cfg, const struct classes *c)
{
	size_t bad = 0;
	for (size_t i = 0; i < ARRAY_SIZE(mode_calls); i++) {
		const struct cls *e = cls_find(c, mode_calls[i].name);
		bool rule = false;
		for (size_t k = 0; k < cfg->n_rules; k++) {
			const struct sc_rule *r = &cfg->rules[k];
			rule |= r->action == SCMP_ACT_ALLOW && names(r, mode_calls[i].name) &&
				r->n_args == 1 && r->args[0].index == mode_calls[i].arg &&
				r->args[0].op == SC_OP_MASKED_EQ && r->args[0].value == 06000 &&
				r->args[0].value_two == 0;
		}
		if (!e || e->kind != 'f' || e->arg != mode_calls[i].arg || !rule) {
			if (bad++ < 5)
				printf("# %s: not filtered:%u by the setid rule\n",
				       mode_calls[i].name, mode_calls[i].arg);
		}
	}
	const struct cls *o2 = cls_find(c, "openat2");
	ok(bad == 0 && o2 && o2->kind == 'd',
	   "the %zu calls that take a mode are filtered on it (mode & 06000) == 0; openat2 is "
	   "denied",
	   ARRAY_SIZE(mode_calls) - bad);
}

/* The filter's answer for call nr (of audit arch) with mode at arg. */
static uint32_t answer(const struct sc_filter *f, uint32_t arch, unsigned nr, unsigned arg,
		       uint64_t mode)
{
	struct seccomp_data d = { .nr = (int)nr, .arch = arch };
	uint32_t ret = 0;
	d.args[arg] = mode;
	if (arg != 1)
		d.args[1] = 0x1000; /* a path pointer; open's flags when the mode is a2 */
	return sc_bpf_run(f->insns, f->len, &d, &ret) ? ret : 0xdeadbeef;
}

/* By the kernel's numbers on both ABIs: a setid mode refused, a plain one allowed. */
static void check_filter(const char *what, const struct sc_filter *f, const struct tbl *t64,
			 const struct tbl *t32)
{
	static const uint64_t setid[] = { 06755, 04755, 02755, 04000, 02000, 0104755 };
	static const uint64_t plain[] = { 0755, 0644, 01777, 0 };
	size_t bad = 0, checked = 0;

	for (size_t i = 0; f && i < ARRAY_SIZE(mode_calls); i++)
		for (int abi = 0; abi < 2; abi++) {
			const struct tbl_row *row = tbl_find(abi ? t32 : t64, mode_calls[i].name);
			uint32_t arch = abi ? AUDIT_ARCH_I386 : AUDIT_ARCH_X86_64;
			unsigned arg = mode_calls[i].arg;
			if (!row) {
				bad++;
				continue;
			}
			for (size_t k = 0; k < ARRAY_SIZE(setid); k++, checked++)
				if (answer(f, arch, row->nr, arg, setid[k]) == SCMP_ACT_ALLOW &&
				    bad++ < 5)
					printf("# %s %s (%u): mode %#llo allowed\n", what,
					       row->name, row->nr, (unsigned long long)setid[k]);
			for (size_t k = 0; k < ARRAY_SIZE(plain); k++, checked++)
				if (answer(f, arch, row->nr, arg, plain[k]) != SCMP_ACT_ALLOW &&
				    bad++ < 5)
					printf("# %s %s (%u): mode %#llo refused\n", what,
					       row->name, row->nr, (unsigned long long)plain[k]);
		}
	ok(f && bad == 0, "%s: %zu modes through the mode calls on x86_64 and i386, %zu wrong",
	   what, checked, bad);
}

static void test_filters(const struct sc_config *cfg, const struct classes *c)
{
	struct hutch_err err = { 0 };
	struct sc_filter *ranges = NULL, *plain = NULL, *oci = NULL;
	struct sc_config back = { 0 };
	struct tbl t64, t32;
	char *json = NULL;

	ok(tbl_read(SCMP_ARCH_X86_64, &t64) == 0 && tbl_read(SCMP_ARCH_X86, &t32) == 0,
	   "the kernel's tables are read (seccomp/tables/)");
	const struct tbl_row *a = tbl_find(&t64, "fchmodat2"), *b = tbl_find(&t32, "fchmodat2");
	ok(a && b && a->nr == 452 && b->nr == 452 &&
		   seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, "fchmodat2") == 452 &&
		   seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, "fchmodat2") == 452,
	   "fchmodat2 is 452 on x86_64 and i386, for the kernel and for libseccomp");
	ok(sc_compile_bpf(cfg, true, &ranges, &err) == 0, "compiles with the ranges (%s)", err.msg);
	ok(sc_compile_bpf(cfg, false, &plain, &err) == 0, "compiles by libseccomp alone (%s)",
	   err.msg);
	/* What runc and crun are handed (rt-spec-write.c), back through hutch's parser. */
	ok(sc_default_profile_oci(0, SC_DEFAULT_NO_SETID, &json, &err) == 0 &&
		   sc_config_parse(json, "oci", &back, &err) == 0 &&
		   sc_compile_bpf(&back, true, &oci, &err) == 0,
	   "the OCI JSON parses and compiles (%s)", err.msg);
	check_config("the OCI JSON", &back, c);
	check_filter("ranges", ranges, &t64, &t32);
	check_filter("libseccomp alone", plain, &t64, &t32);
	check_filter("OCI JSON", oci, &t64, &t32);
	sc_filter_free(ranges);
	sc_filter_free(plain);
	sc_filter_free(oci);
	sc_config_free(&back);
	free(json);
	free(t64.v);
	free(t32.v);
}

int main(void)
{
	struct classes c = { 0 };
	struct sc_config cfg = { 0 };
	struct hutch_err err = { 0 };

	read_classes(&c);
	test_every_name_classified(&c);
	int r = sc_default_config(0, SC_DEFAULT_NO_SETID, &cfg, &err);
	ok(r == 0, "the default sandbox's profile resolves (%s)", err.msg);
	if (r == 0) {
		check_config("the default sandbox's profile", &cfg, &c);
		test_mode_calls(&cfg, &c);
		test_filters(&cfg, &c);
	}
	sc_config_free(&cfg);
	free(c.v);
	return tap_done();
}
