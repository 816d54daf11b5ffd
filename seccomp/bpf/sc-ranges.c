// SPDX-License-Identifier: Apache-2.0
/*
 * The allow ranges: most of a profile is "these syscalls, whatever the arguments: allow".
 * libseccomp turns that into one compare per syscall per ABI, ~1400 instructions for Docker's
 * profile on x86_64, and the kernel converts and JITs every instruction at each container
 * start (0.4 ms here). Sorted into ranges of syscall numbers and searched as a tree of
 * compares (sc-tree.c), the same decisions take at most one instruction per range boundary.
 * The tree also answers the numbers no rule names (the default action) and those above the
 * profile's highest (ENOSYS, as sc-compile.c's prologue would). libseccomp then compiles only
 * what is left: rules with arguments, the other actions, multiplexers.
 *
 * The tree uses only loads of nr/arch, JGE, JEQ, AND and returns, which the kernel's seccomp
 * action cache can evaluate: an always-allowed syscall skips the filter at run time. The
 * kernel fills that cache at load by running the program for each of ~470 numbers per arch
 * (~4 ns a step here), so the tree is weighed by how many of those numbers each segment
 * holds, and every answer is a "ret" within ~10 steps. This file plans the segments;
 * sc-ranges-emit.c writes the program, sc-tree.c shapes its trees.
 */
#include "sc-internal.h"
#include "sc-bpf.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

struct nr_vec {
	uint32_t *v;
	size_t n, cap;
};

static void push(struct nr_vec *s, uint32_t nr)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = hutch_xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = nr;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* bsearch and qsort must not be given NULL, even for no elements. */
static bool contains(const struct nr_vec *sorted, uint32_t nr)
{
	return sorted->n && bsearch(&nr, sorted->v, sorted->n, sizeof(nr), cmp_u32) != NULL;
}

static void sort(struct nr_vec *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(uint32_t), cmp_u32);
}

static uint32_t audit_of(uint32_t token)
{
	return token == SCMP_ARCH_X32 ? AUDIT_ARCH_X86_64 : token;
}

/* The action most argument-free rules share (not the default: those add nothing). */
static bool pick_action(const struct sc_config *cfg, uint32_t *out)
{
	uint32_t act[16];
	size_t count[16] = { 0 }, n = 0, best = 0;

	for (size_t i = 0; i < cfg->n_rules; i++) {
		const struct sc_rule *r = &cfg->rules[i];
		if (r->n_args || r->action == cfg->default_action || r->action == SCMP_ACT_NOTIFY)
			continue;
		size_t k = 0;
		while (k < n && act[k] != r->action)
			k++;
		if (k == n && n == ARRAY_SIZE(act))
			continue;
		if (k == n)
			act[n++] = r->action;
		count[k] += r->n_names;
		if (count[k] > count[best])
			best = k;
	}
	if (n == 0 || count[best] == 0)
		return false;
	*out = act[best];
	return true;
}

/* A rule the argument trees can take: one MASKED_EQ of a 32-bit mask of high ones, so it
 * tests an aligned range of the argument's low word and ignores its high word. libseccomp
 * compares (arg & mask) with (value & mask), masking the expected value too (the unit
 * tests hold us to its decisions), so the range is never empty. */
static bool arg_rangeable(const struct sc_rule *r, uint32_t *lo, uint32_t *hi)
{
	if (r->n_args != 1 || r->args[0].op != SC_OP_MASKED_EQ || r->args[0].value >> 32)
		return false;
	uint32_t mask = (uint32_t)r->args[0].value, low = ~mask;
	if (low & (low + 1)) /* ~mask must be 2^j - 1 */
		return false;
	*lo = (uint32_t)r->args[0].value_two & mask;
	*hi = *lo | low;
	return true;
}

/*
 * i386's socket and ipc calls. libseccomp names each with a pseudo number and writes a rule
 * on it twice: on its direct syscall (Linux 4.3+) and on the multiplexer (socketcall or ipc
 * with "a0 == call", whatever else the rule tests). The direct half can join the ranges;
 * sc-compile.c then gives libseccomp the multiplexer's half alone. Which direct number
 * belongs to which name is libseccomp's to say, so its table is read back once.
 */
static struct {
	char *name;
	int nr;
} mux_direct[64];
static size_t n_mux_direct;

static void read_mux_direct(void)
{
	for (int nr = 0; nr < 1024 && n_mux_direct < ARRAY_SIZE(mux_direct); nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86, nr);
		if (name && seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, name) < 0)
			mux_direct[n_mux_direct++] = (typeof(mux_direct[0])){ name, nr };
		else
			free(name);
	}
}

int sc_mux_direct(uint32_t token, const char *name)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (token != SCMP_ARCH_X86)
		return -1;
	pthread_once(&once, read_mux_direct);
	for (size_t i = 0; i < n_mux_direct; i++)
		if (strcmp(mux_direct[i].name, name) == 0)
			return mux_direct[i].nr;
	return -1;
}

struct arg_rule {
	uint32_t nr, action, lo, hi;
	unsigned int index;
};

struct arg_vec {
	struct arg_rule *v;
	size_t n;
};

/*
 * Sorts one ABI's numbers: simple (every rule naming it is argument-free, with the chosen
 * action), argument rules the trees may take (args), and complex. A name libseccomp maps onto
 * a multiplexer (i386's socketcall and ipc) is sorted by its direct syscall (sc_mux_direct);
 * the multiplexers themselves stay with libseccomp, which adds checks of their call number
 * to them (libseccomp 2.5 lets an argument-free rule on the multiplexer shadow those, but
 * that is its decision, not ours).
 */
static void classify(const struct sc_config *cfg, uint32_t token, const uint32_t *action,
		     struct nr_vec *simple, struct nr_vec *complex, struct arg_vec *args)
{
	static const char *const multiplexers[] = { "socketcall", "ipc" };

	for (size_t i = 0; i < cfg->n_rules; i++) {
		const struct sc_rule *r = &cfg->rules[i];
		uint32_t lo, hi;
		if (r->action == cfg->default_action)
			continue; /* sc_compile_bpf skips these too */
		for (size_t k = 0; k < r->n_names; k++) {
			if (seccomp_syscall_resolve_name(r->names[k]) == __NR_SCMP_ERROR)
				continue; /* unknown: skipped by the compiler as well */
			int nr = seccomp_syscall_resolve_name_arch(token, r->names[k]);
			if (nr == __NR_SCMP_ERROR)
				continue;
			if (nr < 0) {
				for (size_t m = 0; m < ARRAY_SIZE(multiplexers); m++) {
					int mx = seccomp_syscall_resolve_name_arch(token,
										   multiplexers[m]);
					if (mx >= 0)
						push(complex, (uint32_t)mx);
				}
				nr = sc_mux_direct(token, r->names[k]);
			}
			if (nr < 0)
				continue;
			if (r->n_args == 0 && action && r->action == *action) {
				push(simple, (uint32_t)nr);
			} else if (r->action != SCMP_ACT_NOTIFY && arg_rangeable(r, &lo, &hi)) {
				args->v = hutch_xrealloc(args->v, (args->n + 1) * sizeof(*args->v));
				args->v[args->n++] = (struct arg_rule){ (uint32_t)nr, r->action, lo,
									hi, r->args[0].index };
			} else {
				push(complex, (uint32_t)nr);
			}
		}
	}
}

static struct sc_ranges_group *group_for(struct sc_ranges *rg, uint32_t audit)
{
	for (size_t i = 0; i < rg->n_groups; i++)
		if (rg->groups[i].audit == audit)
			return &rg->groups[i];
	if (rg->n_groups == ARRAY_SIZE(rg->groups))
		return NULL;
	rg->groups[rg->n_groups] = (struct sc_ranges_group){ .audit = audit };
	return &rg->groups[rg->n_groups++];
}

static int cmp_arg_rule(const void *a, const void *b)
{
	const struct arg_rule *x = a, *y = b;
	if (x->nr != y->nr)
		return x->nr < y->nr ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The union of rules [from, to) (one syscall, sorted by lo) as boundaries; an open end at
 * 2^32 has no closing boundary, which the parity rule handles. */
static struct sc_arg_ranges arg_tree(const struct arg_rule *r, size_t from, size_t to)
{
	struct sc_arg_ranges a = { .nr = r[from].nr,
				   .action = r[from].action,
				   .index = r[from].index };
	a.bounds = hutch_xcalloc(2 * (to - from) + 1, sizeof(uint32_t));
	bool open_end = false;
	for (size_t i = from; i < to && !open_end; i++) {
		if (r[i].lo > r[i].hi)
			continue;			   /* matches nothing */
		if (a.n && r[i].lo <= a.bounds[a.n - 1]) { /* overlaps or touches the last */
			if (r[i].hi == UINT32_MAX)
				open_end = true, a.n--;
			else if (r[i].hi + 1 > a.bounds[a.n - 1])
				a.bounds[a.n - 1] = r[i].hi + 1;
			continue;
		}
		a.bounds[a.n++] = r[i].lo;
		if (r[i].hi == UINT32_MAX)
			open_end = true;
		else
			a.bounds[a.n++] = r[i].hi + 1;
	}
	return a;
}

/*
 * A syscall becomes an argument tree when all its rules are rangeable, test one argument and
 * share one action, and no argument-free rule names it; otherwise it is complex and
 * libseccomp keeps it whole. Little-endian only: the tree reads the argument's low word.
 */
static void add_arg_trees(struct sc_ranges_group *g, struct arg_vec *args, struct nr_vec *simple,
			  struct nr_vec *complex)
{
	/* complex is searched (bsearch) in the loop: what turns complex joins it afterwards,
	 * or a number pushed out of order would hide a later syscall's rules that need
	 * libseccomp, and its tree would drop them. */
	struct nr_vec demoted = { 0 };

	if (args->n)
		qsort(args->v, args->n, sizeof(*args->v), cmp_arg_rule);
	for (size_t i = 0, j; i < args->n; i = j) {
		const struct arg_rule *r = args->v;
		bool same = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
		for (j = i; j < args->n && r[j].nr == r[i].nr; j++)
			same &= r[j].index == r[i].index && r[j].action == r[i].action;
		if (!same || contains(simple, r[i].nr) || contains(complex, r[i].nr) ||
		    g->n_args == SC_MAX_ARG_TREES) {
			push(&demoted, r[i].nr);
			continue;
		}
		struct sc_arg_ranges a = arg_tree(r, i, j);
		if (a.n > MAX_BOUNDARIES) {
			free(a.bounds);
			push(&demoted, r[i].nr);
			continue;
		}
		g->args[g->n_args++] = a;
	}
	for (size_t i = 0; i < demoted.n; i++)
		push(complex, demoted.v[i]);
	free(demoted.v);
}

/* A run of numbers [lo, hi) (hi up to 2^32) and what the prefix answers for it. */
struct run {
	uint64_t lo, hi;
	uint8_t seg;
};

struct run_vec {
	struct run *v;
	size_t n;
};

static void add_run(struct run_vec *r, uint64_t lo, uint64_t hi, uint8_t seg)
{
	if (lo >= hi)
		return;
	if (r->n && r->v[r->n - 1].hi == lo && r->v[r->n - 1].seg == seg) {
		r->v[r->n - 1].hi = hi;
		return;
	}
	r->v = hutch_xrealloc(r->v, (r->n + 1) * sizeof(*r->v));
	r->v[r->n++] = (struct run){ lo, hi, seg };
}

/* The segment of nr: how many boundaries are <= nr. */
static uint8_t seg_of(const struct sc_ranges_group *g, uint64_t nr)
{
	size_t lo = 0, hi = g->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->bounds[mid] <= nr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return g->seg[lo];
}

static const struct sc_arg_ranges *arg_tree_of(const struct sc_ranges_group *g, uint64_t nr)
{
	for (size_t k = 0; k < g->n_args; k++)
		if (g->args[k].nr == nr)
			return &g->args[k];
	return NULL;
}

/*
 * The runs of ABI token within its part of the audit arch (x86_64's numbers have bit 30
 * clear, x32's set): up to the highest number the profile names, the simple numbers get the
 * action, the complex ones and argument trees go on, and the others get what libseccomp's
 * program gives a number no rule names (the default); above it, what the ENOSYS prologue
 * gives. all = false leaves everything but the action to the program, for fewer boundaries.
 */
static void abi_runs(const struct sc_config *cfg, uint32_t token, const struct sc_ranges_group *g,
		     const struct nr_vec *simple, const struct nr_vec *complex, bool all,
		     struct run_vec *out)
{
	uint64_t lo = 0, hi = 1ULL << 32;
	if (token == SCMP_ARCH_X32)
		lo = X32_BIT, hi = 2ULL * X32_BIT;
	else if (token == SCMP_ARCH_X86_64)
		hi = X32_BIT;
	int64_t max = sc_abi_max(cfg, token);
	if (max < (int64_t)lo)
		return;
	uint8_t other = all ? SC_SEG_DEFAULT : SC_SEG_REST;
	for (uint64_t nr = lo; nr <= (uint64_t)max; nr++) {
		uint8_t seg = other;
		if (contains(complex, (uint32_t)nr) || arg_tree_of(g, nr))
			seg = SC_SEG_REST;
		else if (contains(simple, (uint32_t)nr))
			seg = SC_SEG_ACTION;
		add_run(out, nr, nr + 1, seg);
	}
	uint8_t above = sc_wants_enosys(cfg->default_action) ? SC_SEG_ENOSYS : SC_SEG_DEFAULT;
	add_run(out, (uint64_t)max + 1, hi, all ? above : SC_SEG_REST);
}

static int cmp_run(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The group's segments from its ABIs' runs (which never overlap); the gaps go on. Returns
 * false when no number gets the action: then the program alone is as good. */
static bool set_segments(struct sc_ranges_group *g, struct run_vec *runs)
{
	struct run_vec segs = { 0 };
	uint64_t at = 0;
	bool action = false;

	if (runs->n)
		qsort(runs->v, runs->n, sizeof(*runs->v), cmp_run);
	for (size_t i = 0; i < runs->n; i++) {
		add_run(&segs, at, runs->v[i].lo, SC_SEG_REST);
		add_run(&segs, runs->v[i].lo, runs->v[i].hi, runs->v[i].seg);
		at = runs->v[i].hi;
		action |= runs->v[i].seg == SC_SEG_ACTION;
	}
	add_run(&segs, at, 1ULL << 32, SC_SEG_REST);
	free(g->bounds);
	free(g->seg);
	g->n = action ? segs.n - 1 : 0;
	g->bounds = hutch_xcalloc(g->n + 1, sizeof(uint32_t));
	g->seg = hutch_xcalloc(g->n + 1, 1);
	for (size_t i = 0; action && i < segs.n; i++) {
		g->seg[i] = segs.v[i].seg;
		if (i > 0)
			g->bounds[i - 1] = (uint32_t)segs.v[i].lo;
	}
	free(segs.v);
	return action;
}

/* ---- x32 through x86_64's tree ---- */

/* Can x32's number nr go on as x86_64's nr & ~X32_BIT? Alike when the prefix gives both the
 * same answer; for "go on" (REST) also the same argument tree, or none (libseccomp's
 * program, which loads the number again, then tells them apart). */
static bool shareable(const struct sc_ranges_group *g, uint64_t nr)
{
	if (nr >= 2ULL * X32_BIT || seg_of(g, nr) != seg_of(g, nr - X32_BIT))
		return false;
	const struct sc_arg_ranges *x = arg_tree_of(g, nr), *l = arg_tree_of(g, nr - X32_BIT);
	if (!x || !l)
		return !x && !l;
	return x->index == l->index && x->action == l->action && x->n == l->n &&
	       (!x->n || !memcmp(x->bounds, l->bounds, x->n * sizeof(uint32_t)));
}

static void push_point(struct nr_vec *v, uint64_t nr)
{
	if (nr > X32_BIT && nr < 1ULL << 32)
		push(v, (uint32_t)nr);
}

/*
 * x32's half [bit 30, 2^32) as runs, cut into pieces at every boundary of either half and
 * every argument tree's number; a piece can answer its own segment, or SHARED where
 * shareable, and consecutive pieces with a choice in common make one run.
 */
static void x32_runs(const struct sc_ranges_group *g, struct run_vec *runs)
{
	struct nr_vec pts = { 0 };
	uint8_t common = 0;

	for (size_t i = 0; i < g->n; i++)
		push_point(&pts, g->bounds[i] < X32_BIT ? g->bounds[i] + X32_BIT : g->bounds[i]);
	for (size_t k = 0; k < g->n_args; k++) {
		uint64_t nr = g->args[k].nr < X32_BIT ? g->args[k].nr + X32_BIT : g->args[k].nr;
		push_point(&pts, nr);
		push_point(&pts, nr + 1);
	}
	push_point(&pts, 2ULL * X32_BIT);
	sort(&pts);
	uint64_t at = X32_BIT;
	for (size_t i = 0; i <= pts.n; i++) {
		uint64_t end = i < pts.n ? pts.v[i] : 1ULL << 32;
		if (end == at)
			continue; /* a repeated point */
		uint8_t own = seg_of(g, at);
		uint8_t may = (uint8_t)(1u << own | (shareable(g, at) ? 1u << SC_SEG_SHARED : 0));
		if (runs->n && (common & may)) {
			common &= may;
			runs->v[runs->n - 1].hi = end;
		} else {
			runs->v = hutch_xrealloc(runs->v, (runs->n + 1) * sizeof(*runs->v));
			runs->v[runs->n++] = (struct run){ at, end, own };
			common = may;
		}
		/* A run's own answer when all its pieces share one, else SHARED. */
		runs->v[runs->n - 1].seg = common & (1u << own) ? own : SC_SEG_SHARED;
		at = end;
	}
	free(pts.v);
}

static void shape_numbers(const struct sc_ranges_group *g, struct sc_tree_shape *out)
{
	struct sc_tree t = { g->bounds, g->seg, g->n, true };
	sc_tree_shape(&t, out);
}

/*
 * x86_64 and x32 share an audit arch, and x32's allow list is x86_64's but for the
 * 64-bit-only calls and its own 512-547: ~100 boundaries of its own, where ~50 compares (a
 * JEQ per 64-bit-only hole) suffice when the rest goes on into x86_64's tree. Kept only when
 * shorter. x32's numbers are not in the
 * kernel's action cache, so this shortens the program (converted and JITed at each load)
 * for one more step per emulated number (the jge on bit 30).
 */
static void plan_x32(struct sc_ranges_group *g)
{
	struct run_vec runs = { 0 };

	while (g->n_low < g->n && g->bounds[g->n_low] < X32_BIT)
		g->n_low++;
	if (!g->n_low || g->n_low == g->n)
		return;
	x32_runs(g, &runs);
	if (runs.n - 1 > MAX_BOUNDARIES) { /* beyond a tree's 8-bit jumps */
		free(runs.v);
		return;
	}
	g->x32_n = runs.n - 1;
	g->x32_bounds = hutch_xcalloc(runs.n, sizeof(uint32_t));
	g->x32_seg = hutch_xcalloc(runs.n, 1);
	for (size_t i = 0; i < runs.n; i++) {
		g->x32_seg[i] = runs.v[i].seg;
		if (i > 0)
			g->x32_bounds[i - 1] = (uint32_t)runs.v[i].lo;
	}
	/* jge bit 30, x32's tree, and, x86_64's: kept only when shorter than the one tree */
	struct sc_tree x = { g->x32_bounds, g->x32_seg, g->x32_n, false },
		       low = { g->bounds, g->seg, g->n_low, true };
	struct sc_tree_shape all;
	if (g->x32_n)
		sc_tree_shape(&x, &g->x32_shape);
	sc_tree_shape(&low, &g->shape);
	shape_numbers(g, &all);
	size_t cost = 2 + g->x32_shape.n + g->shape.n;
	g->shared = cost < all.n && cost <= MAX_BOUNDARIES;
	for (size_t i = 0; g->shared && i < runs.n; i++)
		for (size_t k = 0; k < g->n_args; k++) /* now reached as x86_64's */
			g->args[k].shared |= runs.v[i].seg == SC_SEG_SHARED &&
					     g->args[k].nr >= runs.v[i].lo &&
					     g->args[k].nr < runs.v[i].hi;
	if (!g->shared) {
		free(g->x32_bounds);
		free(g->x32_seg);
		g->x32_bounds = NULL;
		g->x32_seg = NULL;
		g->x32_n = 0;
		sc_tree_shape_free(&g->x32_shape);
		sc_tree_shape_free(&g->shape);
		g->shape = all;
	} else {
		sc_tree_shape_free(&all);
	}
	free(runs.v);
}

/* The shapes of the trees to emit (sc-tree.c), x32's decided by plan_x32. */
static void shape_trees(struct sc_ranges_group *g)
{
	uint8_t parity[MAX_BOUNDARIES + 1];
	for (size_t i = 0; i < ARRAY_SIZE(parity); i++)
		parity[i] = i % 2; /* an odd count of boundaries below: inside */
	if (g->audit == AUDIT_ARCH_X86_64)
		plan_x32(g);
	if (g->n && !g->shape.v)
		shape_numbers(g, &g->shape);
	for (size_t k = 0; k < g->n_args; k++) {
		struct sc_arg_ranges *a = &g->args[k];
		struct sc_tree t = { a->bounds, parity, a->n, false };
		if (!a->shared)
			sc_tree_shape(&t, &a->shape);
	}
}

void sc_ranges_plan(const struct sc_config *cfg, const uint32_t *tokens, size_t n_tokens,
		    struct sc_ranges *out)
{
	struct run_vec all[ARRAY_SIZE(out->groups)] = { 0 }, some[ARRAY_SIZE(out->groups)] = { 0 };

	*out = (struct sc_ranges){ .default_action = cfg->default_action };
	bool have_action = pick_action(cfg, &out->action);
	for (size_t t = 0; t < n_tokens; t++) {
		struct nr_vec simple = { 0 }, complex = { 0 };
		struct arg_vec args = { 0 };
		struct sc_ranges_group *g = group_for(out, audit_of(tokens[t]));
		if (g) {
			size_t gi = (size_t)(g - out->groups);
			classify(cfg, tokens[t], have_action ? &out->action : NULL, &simple,
				 &complex, &args);
			sort(&simple);
			sort(&complex);
			add_arg_trees(g, &args, &simple, &complex); /* may add to complex */
			sort(&complex);
			abi_runs(cfg, tokens[t], g, &simple, &complex, true, &all[gi]);
			abi_runs(cfg, tokens[t], g, &simple, &complex, false, &some[gi]);
		}
		free(simple.v);
		free(complex.v);
		free(args.v);
	}
	/* Too many boundaries for short jumps: first leave the default and ENOSYS answers to
	 * the program, then everything. */
	for (size_t i = 0; i < out->n_groups; i++) {
		struct sc_ranges_group *g = &out->groups[i];
		if (set_segments(g, &all[i]) && g->n > MAX_BOUNDARIES)
			set_segments(g, &some[i]);
		if (g->n > MAX_BOUNDARIES)
			g->n = 0;
		shape_trees(g);
		free(all[i].v);
		free(some[i].v);
	}
}

bool sc_ranges_has(const struct sc_ranges *rg, uint32_t token, int nr)
{
	if (nr < 0)
		return false;
	for (size_t i = 0; i < rg->n_groups; i++) {
		const struct sc_ranges_group *g = &rg->groups[i];
		if (g->audit != audit_of(token))
			continue;
		if (arg_tree_of(g, (uint32_t)nr))
			return true;
		return g->n && seg_of(g, (uint32_t)nr) == SC_SEG_ACTION;
	}
	return false;
}

void sc_ranges_free(struct sc_ranges *rg)
{
	for (size_t i = 0; i < rg->n_groups; i++) {
		free(rg->groups[i].bounds);
		free(rg->groups[i].seg);
		free(rg->groups[i].x32_bounds);
		free(rg->groups[i].x32_seg);
		sc_tree_shape_free(&rg->groups[i].shape);
		sc_tree_shape_free(&rg->groups[i].x32_shape);
		for (size_t k = 0; k < rg->groups[i].n_args; k++) {
			free(rg->groups[i].args[k].bounds);
			sc_tree_shape_free(&rg->groups[i].args[k].shape);
		}
	}
	rg->n_groups = 0;
}

/* The highest syscall number per kernel arch that the profile names (-1: none). */
int64_t sc_abi_max(const struct sc_config *cfg, uint32_t token)
{
	int64_t max = -1;
	for (size_t r = 0; r < cfg->n_rules; r++)
		for (size_t k = 0; k < cfg->rules[r].n_names; k++) {
			const char *name = cfg->rules[r].names[k];
			int nr = seccomp_syscall_resolve_name_arch(token, name);
			if (nr < 0) /* i386's socket calls: libseccomp also allows the direct one */
				nr = sc_mux_direct(token, name);
			if (nr >= 0 && nr > max)
				max = nr;
		}
	return max;
}
