// SPDX-License-Identifier: Apache-2.0
/*
 * The allow ranges: most of a profile is "these syscalls, whatever the arguments: allow".
 * libseccomp turns that into one compare per syscall per ABI, ~1400 instructions for Docker's
 * profile on x86_64, and the kernel converts and JITs every instruction at each container
 * start (0.4 ms here). Sorted into ranges of syscall numbers and searched as a balanced tree
 * of compares, the same decisions take one instruction per range boundary. libseccomp then
 * compiles only what is left: rules with arguments, the other actions, multiplexed calls.
 *
 * The tree uses only loads of nr/arch, JGE and returns, which the kernel's seccomp action
 * cache can evaluate at load: an always-allowed syscall still skips the filter at run time.
 */
#include "sc-internal.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

/* A group's tree must stay within the 8-bit jump offsets of classic BPF. */
#define MAX_BOUNDARIES 250

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

/* Appends the simple numbers that no complex rule names, as boundaries: [lo, hi] becomes
 * lo, hi + 1, so "how many boundaries are <= nr" is odd exactly inside a range. */
static void add_ranges(struct sc_ranges_group *g, struct nr_vec *simple, struct nr_vec *complex)
{
	sort(simple);
	sort(complex);
	for (size_t i = 0; i < simple->n; i++) {
		uint32_t nr = simple->v[i];
		if (contains(complex, nr) || (i > 0 && simple->v[i - 1] == nr))
			continue;
		if (g->n && g->bounds[g->n - 1] == nr) {
			g->bounds[g->n - 1] = nr + 1; /* extends the last range */
			continue;
		}
		g->bounds = hutch_xrealloc(g->bounds, (g->n + 2) * sizeof(uint32_t));
		g->bounds[g->n++] = nr;
		g->bounds[g->n++] = nr + 1;
	}
}

static int cmp_range(const void *a, const void *b)
{
	return cmp_u32(a, b);
}

/* x86_64 and x32 share an audit arch: their ranges (x32's carry bit 30) join in one group,
 * sorted by range; they never touch. */
static void sort_group(struct sc_ranges_group *g)
{
	if (g->n)
		qsort(g->bounds, g->n / 2, 2 * sizeof(uint32_t), cmp_range);
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
	if (args->n)
		qsort(args->v, args->n, sizeof(*args->v), cmp_arg_rule);
	for (size_t i = 0, j; i < args->n; i = j) {
		const struct arg_rule *r = args->v;
		bool same = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
		for (j = i; j < args->n && r[j].nr == r[i].nr; j++)
			same &= r[j].index == r[i].index && r[j].action == r[i].action;
		if (!same || contains(simple, r[i].nr) || contains(complex, r[i].nr) ||
		    g->n_args == SC_MAX_ARG_TREES) {
			push(complex, r[i].nr);
			continue;
		}
		struct sc_arg_ranges a = arg_tree(r, i, j);
		if (a.n > MAX_BOUNDARIES) {
			free(a.bounds);
			push(complex, r[i].nr);
			continue;
		}
		g->args[g->n_args++] = a;
	}
}

void sc_ranges_plan(const struct sc_config *cfg, const uint32_t *tokens, size_t n_tokens,
		    struct sc_ranges *out)
{
	*out = (struct sc_ranges){ 0 };
	bool have_action = pick_action(cfg, &out->action);
	for (size_t t = 0; t < n_tokens; t++) {
		struct nr_vec simple = { 0 }, complex = { 0 };
		struct arg_vec args = { 0 };
		struct sc_ranges_group *g = group_for(out, audit_of(tokens[t]));
		if (g) {
			classify(cfg, tokens[t], have_action ? &out->action : NULL, &simple,
				 &complex, &args);
			sort(&simple);
			sort(&complex);
			add_arg_trees(g, &args, &simple, &complex); /* may add to complex */
			sort(&complex);
			add_ranges(g, &simple, &complex);
		}
		free(simple.v);
		free(complex.v);
		free(args.v);
	}
	for (size_t i = 0; i < out->n_groups; i++) {
		struct sc_ranges_group *g = &out->groups[i];
		sort_group(g);
		if (g->n > MAX_BOUNDARIES) { /* too big for short jumps: libseccomp keeps it */
			free(g->bounds);
			g->bounds = NULL;
			g->n = 0;
		}
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
		for (size_t k = 0; k < g->n_args; k++)
			if (g->args[k].nr == (uint32_t)nr)
				return true;
		size_t le = 0; /* boundaries <= nr */
		while (le < g->n && g->bounds[le] <= (uint32_t)nr)
			le++;
		return le % 2 == 1;
	}
	return false;
}

void sc_ranges_free(struct sc_ranges *rg)
{
	for (size_t i = 0; i < rg->n_groups; i++) {
		free(rg->groups[i].bounds);
		for (size_t k = 0; k < rg->groups[i].n_args; k++)
			free(rg->groups[i].args[k].bounds);
	}
	rg->n_groups = 0;
}

/* ---- emitting ---- */

#define JUMP(i, to) ((uint8_t)((to) - (i)-1))

/*
 * The subtree over boundaries [lo, hi) at p[*at..]: one JGE per boundary. Reaching a leaf
 * means exactly lo boundaries are <= nr, so odd is inside a range (yes), even outside (no).
 */
static void emit_tree(struct sock_filter *p, size_t *at, const uint32_t *b, size_t lo, size_t hi,
		      size_t yes, size_t no)
{
	size_t mid = (lo + hi) / 2, i = (*at)++;
	size_t left = lo == mid ? (lo % 2 ? yes : no) : i + 1;
	size_t right = mid + 1 == hi ? (hi % 2 ? yes : no) : i + 1 + (mid - lo);

	p[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, b[mid], JUMP(i, right),
					    JUMP(i, left));
	if (lo < mid)
		emit_tree(p, at, b, lo, mid, yes, no);
	if (mid + 1 < hi)
		emit_tree(p, at, b, mid + 1, hi, yes, no);
}

/*
 * A group's block: load nr, the number tree with its "ret action" (the common case first:
 * the kernel runs the program for every syscall number at load to fill its action cache,
 * so the fewer steps to an answer, the cheaper the load), then each argument tree ("jeq nr"
 * or skip it; load the argument's low word; the tree; "ret action"; "ja rest"), "ja rest".
 */
static size_t block_len(const struct sc_ranges_group *g)
{
	if (!g->n && !g->n_args)
		return 0;
	size_t len = 1 + (g->n ? g->n + 1 : 0) + 1;
	for (size_t k = 0; k < g->n_args; k++)
		len += 4 + g->args[k].n;
	return len;
}

static struct sock_filter ja(size_t at, size_t to)
{
	return (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(to - at - 1));
}

static void emit_block(const struct sc_ranges *rg, const struct sc_ranges_group *g,
		       struct sock_filter *p, size_t *at, size_t rest)
{
	p[(*at)++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0); /* nr */
	if (g->n) {
		size_t yes = *at + g->n, no = yes + 1; /* no: on to the argument trees */
		emit_tree(p, at, g->bounds, 0, g->n, yes, no);
		p[(*at)++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, rg->action);
	}
	for (size_t k = 0; k < g->n_args; k++) {
		const struct sc_arg_ranges *a = &g->args[k];
		size_t i = (*at)++, yes = i + 2 + a->n, no = yes + 1;
		p[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a->nr, 0,
						    (uint8_t)(3 + a->n));
		p[(*at)++] = (struct sock_filter)BPF_STMT(
			BPF_LD | BPF_W | BPF_ABS,
			(uint32_t)offsetof(struct seccomp_data, args[a->index])); /* low word */
		emit_tree(p, at, a->bounds, 0, a->n, yes, no);
		p[(*at)++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, a->action);
		p[*at] = ja(*at, rest);
		(*at)++;
	}
	p[*at] = ja(*at, rest);
	(*at)++;
}

/*
 * Layout: load the arch; per group "jeq audit, next, skip; ja block"; "ja rest"; then the
 * groups' blocks. rest is the first instruction after the prefix (libseccomp's program);
 * conditional jumps stay within a block, so only the JAs are long.
 */
size_t sc_ranges_emit(const struct sc_ranges *rg, struct sock_filter *p)
{
	size_t groups = 0, len = 0;
	for (size_t i = 0; i < rg->n_groups; i++) {
		size_t b = block_len(&rg->groups[i]);
		groups += b > 0;
		len += b;
	}
	if (!groups)
		return 0;
	len += 2 + 2 * groups;
	if (!p)
		return len;
	size_t at = 0, block = 2 + 2 * groups, rest = len;
	p[at++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4); /* arch */
	for (size_t i = 0; i < rg->n_groups; i++) {
		const struct sc_ranges_group *g = &rg->groups[i];
		if (!block_len(g))
			continue;
		p[at] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, g->audit, 0, 1);
		at++;
		p[at] = ja(at, block);
		at++;
		block += block_len(g);
	}
	p[at] = ja(at, rest);
	at++;
	for (size_t i = 0; i < rg->n_groups; i++)
		if (block_len(&rg->groups[i]))
			emit_block(rg, &rg->groups[i], p, &at, rest);
	return len;
}
